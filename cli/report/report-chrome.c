/*
 * The Chrome trace (--chrome) is streamed while the records are read, one
 * event per call and failure record, so that a trace of any length costs
 * no more memory than one event: the reader hands each record here, and
 * nothing here reads or keeps records of its own.
 */
#include "report-int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Threads of one process that get a track of their own (a cap, like the reader's). */
#define MAX_TIDS 4096

/* Chrome: timestamps count from this long before the earliest file opened. */
#define CHROME_LEAD_NS 10000000000LL
#define CHROME_ARGS 8

/* ---- Chrome trace events, streamed as the records are read ---- */

static void
chrome_emit(struct report *r, json_t *ev)
{
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
	size_t n;

	/* One write per event: json_dumpf writes every token on its own. */
	if (r->chrome_cap < 4096) {
		r->chrome_cap = 65536;
		r->chrome_buf = report_xrealloc(r->chrome_buf, r->chrome_cap);
	}
	n = json_dumpb(ev, r->chrome_buf + 2, r->chrome_cap - 2, flags);
	if (n + 2 > r->chrome_cap) {
		r->chrome_cap = n + 2 + 4096;
		r->chrome_buf = report_xrealloc(r->chrome_buf, r->chrome_cap);
		n = json_dumpb(ev, r->chrome_buf + 2, r->chrome_cap - 2, flags);
	}
	json_decref(ev);
	if (n == 0 || n + 2 > r->chrome_cap)
		return;
	memcpy(r->chrome_buf, ",\n", 2);
	if (r->chrome_first)
		fwrite(r->chrome_buf + 1, 1, n + 1, r->chrome);
	else
		fwrite(r->chrome_buf, 1, n + 2, r->chrome);
	r->chrome_first = 0;
	r->chrome_events++;
}

static json_t *
chrome_meta(const char *name, long long pid, long long tid, json_t *args)
{
	json_t *ev = report_must(json_object());

	report_jset(ev, "name", json_string(name));
	report_jset(ev, "ph", json_string("M"));
	report_jset(ev, "pid", json_integer(pid));
	if (tid >= 0)
		report_jset(ev, "tid", json_integer(tid));
	report_jset(ev, "args", args);
	return ev;
}

/* The process's track: its name, order and labels, once, before its first event. */
static void
chrome_process_meta(struct report *r, struct proc *p)
{
	struct sbuf name;
	json_t *args;

	if (p->chrome_meta)
		return;
	p->chrome_meta = 1;
	/* Two hosts can have the same pid: the second gets a made-up one. */
	if (!p->have_pid || p->pid <= 0 || p->pid > INT_MAX ||
	    report_llset_add(&r->chrome_pids, p->pid, (size_t)-1) != 1) {
		do
			p->chrome_pid = ++r->chrome_next_pid + 10000000;
		while (report_llset_add(&r->chrome_pids, p->chrome_pid, (size_t)-1) != 1);
	} else {
		p->chrome_pid = p->pid;
	}
	report_sb_init(&name, 512);
	if (p->have_header) {
		report_sb_puts(&name, p->program ? p->program : "?");
		if (p->have_pid)
			report_sb_printf(&name, " pid %lld", p->pid);
		if (p->have_rank)
			report_sb_printf(&name, " rank %lld", p->rank);
		else
			report_sb_puts(&name, " norank");
	} else {
		char *b = report_clean_str(report_base_name(p->path), STR_CAP);

		report_sb_puts(&name, b);
		free(b);
	}
	args = report_must(json_object());
	report_jset(args, "name", json_string(name.p));
	chrome_emit(r, chrome_meta("process_name", p->chrome_pid, -1, args));
	free(name.p);
	args = report_must(json_object());
	report_jset(args, "sort_index", json_integer(p->have_rank && p->rank >= 0 && p->rank < INT_MAX ?
					       p->rank : (long long)INT_MAX / 2 + (long long)p->order));
	chrome_emit(r, chrome_meta("process_sort_index", p->chrome_pid, -1, args));
	report_sb_init(&name, 512);
	if (p->host)
		report_sb_puts(&name, p->host);
	if (p->have_library && p->have_lib_version) {
		char *v = report_version_string(p->lib_version);

		report_sb_printf(&name, "%scuDNN %s", name.len ? ", " : "", v);
		free(v);
	}
	if (name.len) {
		args = report_must(json_object());
		report_jset(args, "labels", json_string(name.p));
		chrome_emit(r, chrome_meta("process_labels", p->chrome_pid, -1, args));
	}
	free(name.p);
}

/* A file without records still gets its track, so that every process shows. */
void
report_chrome_process(struct report *r, struct proc *p)
{
	chrome_process_meta(r, p);
}

void
report_chrome_record(struct report *r, struct proc *p, json_t *rec, const char *fn, int failure)
{
	long long t, tid = 0, dur = -1, rel, ts_ns;
	json_t *ev, *args, *x;
	const char *sname, *key;
	char *name;
	int n = 0;

	chrome_process_meta(r, p);
	if (!report_get_int(rec, "t_ns", &t)) {
		p->chrome_skipped++;
		return;
	}
	report_get_int(rec, "tid", &tid);
	report_get_count(rec, "dur_ns", &dur);
	/*
	 * Each file's own clock, placed on the wall clock by its header. Without a base read ahead (only pipes
	 * were given), the first header read is the base: counted from the epoch, a µs ts keeps a quarter of a µs.
	 */
	if (p->have_clock && !r->chrome_have_base) {
		r->chrome_base = report_sat_add(p->start_unix_ns, -CHROME_LEAD_NS);
		r->chrome_have_base = 1;
	}
	if (p->have_clock) {
		if (__builtin_sub_overflow(t, p->start_mono_ns, &rel) ||
		    __builtin_sub_overflow(p->start_unix_ns, r->chrome_base, &ts_ns) ||
		    __builtin_add_overflow(ts_ns, rel, &ts_ns)) {
			p->chrome_skipped++;
			return;
		}
	} else {
		if (!p->chrome_have_first_t) {
			p->chrome_have_first_t = 1;
			p->chrome_first_t = t;
		}
		if (__builtin_sub_overflow(t, p->chrome_first_t, &ts_ns)) {
			p->chrome_skipped++;
			return;
		}
		ts_ns = report_sat_add(ts_ns, CHROME_LEAD_NS);
	}
	if (ts_ns < 0) {
		/* Before the base: Perfetto drops negative times, so it starts at 0. */
		if (dur > 0)
			dur = report_sat_add(dur, ts_ns) > 0 ? report_sat_add(dur, ts_ns) : 0;
		ts_ns = 0;
	}
	if (report_llset_add(&p->tids, tid, MAX_TIDS) == 1) {
		struct sbuf tn;

		report_sb_init(&tn, 64);
		if (p->have_pid && tid == p->pid)
			report_sb_printf(&tn, "main thread (tid %lld)", tid);
		else
			report_sb_printf(&tn, "tid %lld", tid);
		args = report_must(json_object());
		report_jset(args, "name", json_string(tn.p));
		chrome_emit(r, chrome_meta("thread_name", p->chrome_pid, tid, args));
		free(tn.p);
	}
	name = report_clean_str(fn, STR_CAP);
	args = report_must(json_object());
	sname = report_get_str(rec, "status_name");
	if (sname) {
		char *s = report_clean_str(sname, STR_CAP);

		report_jset(args, "status_name", json_string(s));
		free(s);
	} else {
		report_jset(args, "status_name", json_null());
	}
	if ((x = json_object_get(rec, "status")) && json_is_integer(x))
		report_jset(args, "status", json_integer(json_integer_value(x)));
	if (failure && report_get_str(rec, "message")) {
		char *m = report_clean_str(report_get_str(rec, "message"), MSG_CAP);

		report_jset(args, "message", json_string(m));
		free(m);
	}
	if (json_is_object(x = json_object_get(rec, "args"))) {
		json_t *v;

		json_object_foreach(x, key, v) {
			struct sbuf b;
			char *k;

			if (n++ >= CHROME_ARGS)
				break;
			report_sb_init(&b, 200);
			report_render_value(&b, v, 0);
			k = report_clean_str(key, 64);
			/* Our own fields win over an argument of the same name. */
			if (!json_object_get(args, k))
				report_jset(args, k, json_string(b.p));
			free(k);
			free(b.p);
		}
	}
	ev = report_must(json_object());
	report_jset(ev, "name", json_string(name));
	report_jset(ev, "cat", json_string(failure ? "failure" : "call"));
	report_jset(ev, "ph", json_string("X"));
	report_jset(ev, "ts", json_real((double)ts_ns / 1000.0));
	report_jset(ev, "dur", json_real(dur >= 0 ? (double)dur / 1000.0 : 1.0));
	report_jset(ev, "pid", json_integer(p->chrome_pid));
	report_jset(ev, "tid", json_integer(tid));
	/* The instant event below shares the same args object. */
	json_incref(args);
	report_jset(ev, "args", args);
	chrome_emit(r, ev);
	if (failure) {
		ev = report_must(json_object());
		report_jset(ev, "name", json_string(name));
		report_jset(ev, "cat", json_string("failure"));
		report_jset(ev, "ph", json_string("i"));
		report_jset(ev, "s", json_string("t"));
		report_jset(ev, "ts", json_real((double)ts_ns / 1000.0));
		report_jset(ev, "pid", json_integer(p->chrome_pid));
		report_jset(ev, "tid", json_integer(tid));
		json_incref(args);
		report_jset(ev, "args", args);
		chrome_emit(r, ev);
	}
	json_decref(args);
	free(name);
}

void
report_chrome_begin(struct report *r, FILE *out, int have_base, long long base_unix_ns)
{
	r->chrome = out;
	r->full = 1;
	r->chrome_first = 1;
	/* A call can start before its file is opened (the file comes with the first record). */
	r->chrome_base = report_sat_add(base_unix_ns, -CHROME_LEAD_NS);
	r->chrome_have_base = have_base;
	fputs("{\"traceEvents\":[", out);
}

int
report_chrome_end(struct report *r)
{
	FILE *out = r->chrome;

	if (!out)
		return 0;
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"cudnnspy report\"}}\n", out);
	r->chrome = NULL;
	return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
