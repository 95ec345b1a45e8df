/*
 * The model for a person, and as one JSON document. The text is printed
 * from the model alone, never from the records, so that it cannot say
 * something --json does not.
 */
#include "report-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli-util.h"

/* What the text shows of a first occurrence. */
#define STACK_SHOW 6
#define RECENT_SHOW 8
#define LIST_SHOW 16

/* ---- the model as text ---- */

/* A duration for a person, in a unit that keeps 3 or 4 digits. */
void
report_fmt_ns(char *buf, size_t size, long long ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%lld ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
}

struct who_print {
	FILE *out;
	size_t n;
	int ranks;
};

static int
who_not_rank(const char *s, size_t i, void *arg)
{
	struct who_print *w = arg;
	char *end;

	if (strncmp(s, "rank ", 5) != 0)
		w->ranks = 0;
	else {
		strtoll(s + 5, &end, 10);
		if (*end)
			w->ranks = 0;
	}
	return !w->ranks;
}

static int
who_print_one(const char *s, size_t i, void *arg)
{
	struct who_print *w = arg;

	if (i >= LIST_SHOW) {
		fprintf(w->out, " and %zu more", w->n - i);
		return 1;
	}
	fprintf(w->out, "%s%s", i ? ", " : "", s + (w->ranks ? 5 : 0));
	return 0;
}

void
report_print_who(struct rmodel *m, FILE *out, json_t *who)
{
	struct who_print w = { out, report_who_count(m, who), 0 };

	/* "ranks 0, 2" when every label is a rank alone, which only all of them say. */
	w.ranks = w.n > 0;
	report_who_each(m, who, who_not_rank, &w);
	if (w.ranks)
		fputs(w.n == 1 ? "rank " : "ranks ", out);
	report_who_each(m, who, who_print_one, &w);
}

void
report_print_library(FILE *out, json_t *lib)
{
	if (!json_is_object(lib)) {
		fputs("no cuDNN found", out);
		return;
	}
	if (json_is_integer(json_object_get(lib, "version")))
		fprintf(out, "cuDNN %s (%lld)", report_jget_str(lib, "version_string", "?"), report_jget_int(lib, "version"));
	else
		fputs("cuDNN of unknown version", out);
	fprintf(out, " %s", report_jget_str(lib, "path", "(no path)"));
}

/* One process at a time, made from its row as it is printed: thousands of them cost one. */
static void
print_processes(struct rmodel *m, FILE *out)
{
	fprintf(out, "\nProcesses\n");
	for (size_t i = 0; i < m->n; i++) {
		json_t *p = report_model_process(m, i);
		json_t *lib = json_object_get(p, "library"), *rec = json_object_get(p, "records");
		json_t *sk = json_object_get(p, "skipped");

		fprintf(out, "  %s: ", report_jget_str(p, "label", "?"));
		if (json_is_true(json_object_get(p, "header"))) {
			fprintf(out, "%s", report_jget_str(p, "program", "?"));
			if (json_is_integer(json_object_get(p, "pid")))
				fprintf(out, ", pid %lld", report_jget_int(p, "pid"));
			fprintf(out, " on %s", report_jget_str(p, "host", "?"));
			if (!json_is_integer(json_object_get(p, "rank")))
				fputs(", no rank", out);
			if (json_integer_value(json_object_get(p, "schema")) > SCHEMA_KNOWN)
				fprintf(out, " (schema %lld)", report_jget_int(p, "schema"));
			fputs("\n    ", out);
			report_print_library(out, lib);
			if (json_is_object(lib)) {
				if (json_is_integer(json_object_get(lib, "cudart")))
					fprintf(out, ", cudart %lld", report_jget_int(lib, "cudart"));
				if (json_is_string(json_object_get(lib, "how")))
					fprintf(out, " [%s]", report_jget_str(lib, "how", ""));
			}
			fputc('\n', out);
		} else {
			fputs("no header: program, host and cuDNN unknown\n", out);
		}
		fprintf(out, "    %lld call%s, %lld failure%s", report_jget_int(p, "calls"), report_jget_int(p, "calls") == 1 ? "" : "s",
			report_jget_int(p, "failures"), report_jget_int(p, "failures") == 1 ? "" : "s");
		/* A framework's expected NOT_SUPPORTED probing is among them: said apart, as in Failures. */
		if (report_jget_int(p, "probing") > 0)
			fprintf(out, " (%lld of them probing)", report_jget_int(p, "probing"));
		if (json_is_true(json_object_get(p, "summary")))
			fprintf(out, ", %lld internal, %lld dropped%s\n", report_jget_int(p, "internal"),
				report_jget_int(p, "dropped"), json_is_true(json_object_get(p, "exited")) ? "" :
				" (no summary at exit: killed, _exit, exec, or still running; counts from the counters in "
				"its file)");
		else
			fputs(" (no summary: the process did not exit normally? counts from the records)\n",
			      out);
		fprintf(out, "    %s: %lld lines", report_jget_str(p, "file", "?"), report_jget_int(rec, "lines"));
		if (report_jget_int(sk, "total"))
			fprintf(out, ", %lld skipped", report_jget_int(sk, "total"));
		fputc('\n', out);
		json_decref(p);
	}
}

static void
print_cudnn(struct rmodel *m, FILE *out)
{
	json_t *c = json_object_get(m->j, "cudnn"), *vars = json_object_get(c, "variants"), *v;
	size_t nproc = m->n, i;

	fprintf(out, "\ncuDNN\n");
	if (json_array_size(vars) == 1 && json_is_true(json_object_get(json_array_get(vars, 0), "known"))) {
		fprintf(out, "  %s: ", nproc == 1 ? "the process" : nproc == 2 ? "both processes" : "all processes");
		report_print_library(out, json_object_get(json_array_get(vars, 0), "library"));
		fputc('\n', out);
		return;
	}
	if (json_is_true(json_object_get(c, "differ")))
		fprintf(out, "  DIFFERENT cuDNN builds across processes (library path or version):\n");
	json_array_foreach(vars, i, v)
		report_print_variant(m, out, "", v);
}

void
report_print_variant(struct rmodel *m, FILE *out, const char *prefix, json_t *v)
{
	long long np = report_jget_int(v, "processes");

	fprintf(out, "%s    %lld process%s: ", prefix, np, np == 1 ? "" : "es");
	if (json_is_true(json_object_get(v, "known")))
		report_print_library(out, json_object_get(v, "library"));
	else
		fputs("unknown (no header)", out);
	fputs(": ", out);
	report_print_who(m, out, json_object_get(v, "who"));
	fputc('\n', out);
}

void
report_print_frame(FILE *out, json_t *frame, size_t i)
{
	const char *sym = report_jget_str(frame, "symbol", NULL);

	fputs(i ? " <" : "", out);
	if (sym)
		fprintf(out, " %s (%s+%s)", sym, report_jget_str(frame, "module", "?"), report_jget_str(frame, "offset", "?"));
	else
		fprintf(out, " %s+%s", report_jget_str(frame, "module", "?"), report_jget_str(frame, "offset", "?"));
}

void
report_print_python(FILE *out, json_t *frames, size_t max)
{
	json_t *x;
	size_t i;

	json_array_foreach(frames, i, x) {
		if (i >= max) {
			fprintf(out, " < ... (%zu frames)", json_array_size(frames));
			break;
		}
		fprintf(out, "%s %s (%s:%lld)", i ? " <" : "", report_jget_str(x, "function", "?"),
			report_jget_str(x, "file", "?"), report_jget_int(x, "line"));
	}
}

static void
print_first(FILE *out, json_t *first)
{
	json_t *stack = json_object_get(first, "stack"), *recent = json_object_get(first, "recent"), *x;
	long long frames = report_jget_int(first, "stack_frames"), calls = report_jget_int(first, "recent_calls");
	size_t i, nr = json_array_size(recent);
	const char *args = report_jget_str(first, "args", "");

	fprintf(out, "     first: %s", report_jget_str(first, "process", "?"));
	if (json_is_integer(json_object_get(first, "tid")))
		fprintf(out, ", tid %lld", report_jget_int(first, "tid"));
	fprintf(out, " (%s:%lld)\n", report_jget_str(first, "file", "?"), report_jget_int(first, "line"));
	fprintf(out, "       args: %s\n", args[0] ? args : "(none)");
	if (json_array_size(stack)) {
		fputs("       stack:", out);
		json_array_foreach(stack, i, x) {
			if (i >= STACK_SHOW)
				break;
			report_print_frame(out, x, i);
		}
		if (frames > (long long)i)
			fprintf(out, " < ... (%lld frames)", frames);
		fputc('\n', out);
	}
	if (json_array_size(json_object_get(first, "python"))) {
		fputs("       python:", out);
		report_print_python(out, json_object_get(first, "python"), STACK_SHOW);
		fputc('\n', out);
	}
	if (nr) {
		size_t from = nr > RECENT_SHOW ? nr - RECENT_SHOW : 0;

		fputs("       recent:", out);
		if (calls > (long long)(nr - from))
			fprintf(out, " ... %lld earlier,", calls - (long long)(nr - from));
		for (i = from; i < nr; i++) {
			x = json_array_get(recent, i);
			fprintf(out, "%s %s", i > from ? "," : "", report_jget_str(x, "fn", "?"));
			if (report_jget_int(x, "status"))
				fprintf(out, "=%lld", report_jget_int(x, "status"));
		}
		fputc('\n', out);
	}
}

void
report_print_group_line(FILE *out, const char *prefix, json_t *g)
{
	const char *msg = report_jget_str(g, "message", NULL);

	fprintf(out, "%s%lldx %s: %s (%lld)", prefix, report_jget_int(g, "count"), report_jget_str(g, "fn", "?"),
		report_jget_str(g, "status_name", "status"), report_jget_int(g, "status"));
	if (msg)
		fprintf(out, " \"%s\"", msg);
}

void
report_failure_counts(json_t *failures, struct report_failure_counts *c)
{
	json_t *g;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->probing = report_jget_int(failures, "probing");
	c->failures = report_jget_int(failures, "total") - c->probing;
	if (c->failures < 0)
		c->failures = 0;
	json_array_foreach(json_object_get(failures, "groups"), i, g) {
		if (json_is_true(json_object_get(g, "probing")))
			c->probing_groups++;
		else
			c->groups++;
	}
}

/*
 * The probing apart from the failures, a line per group: NOT_SUPPORTED
 * from a framework finalizing configs until one works is an answer it
 * expects (cudnn-frontend asks every config the heuristics return).
 */
static void
print_probing(FILE *out, json_t *groups, const struct report_failure_counts *c)
{
	json_t *g;
	size_t i;

	if (!c->probing && !c->probing_groups)
		return;
	fputs("\nProbing: ", out);
	report_print_probing_heading(out, c);
	fputc('\n', out);
	json_array_foreach(groups, i, g) {
		if (!json_is_true(json_object_get(g, "probing")))
			continue;
		report_print_group_line(out, "  ", g);
		fputc('\n', out);
	}
}

void
report_print_probing_heading(FILE *out, const struct report_failure_counts *c)
{
	fprintf(out, "%lld expected NOT_SUPPORTED answer%s in %zu group%s (a framework trying engine configs until one "
		"works; not failures)", c->probing, c->probing == 1 ? "" : "s", c->probing_groups,
		c->probing_groups == 1 ? "" : "s");
}

/* The failures that are not probing, grouped; the probing after them, in a section of its own. */
static void
print_failures(struct rmodel *m, FILE *out)
{
	json_t *f = json_object_get(m->j, "failures"), *groups = json_object_get(f, "groups"), *g;
	struct report_failure_counts c;
	size_t i, some = 0;

	report_failure_counts(f, &c);
	fprintf(out, "\nFailures: %lld", c.failures);
	if (c.groups)
		fprintf(out, " in %zu group%s", c.groups, c.groups == 1 ? "" : "s");
	fputc('\n', out);
	if (report_jget_int(f, "not_grouped"))
		fprintf(out, "  (%lld failures of too many kinds are not grouped)\n", report_jget_int(f, "not_grouped"));
	json_array_foreach(groups, i, g) {
		if (json_is_true(json_object_get(g, "probing")))
			continue;
		report_print_group_line(out, "  ", g);
		fputc('\n', out);
		if (json_is_true(json_object_get(g, "only_some"))) {
			fprintf(out, "     on %lld of %lld processes: ", report_jget_int(g, "processes"), report_jget_int(g, "of"));
			report_print_who(m, out, json_object_get(g, "who"));
			fputc('\n', out);
			some++;
		} else if (report_jget_int(g, "of") > 1) {
			fprintf(out, report_jget_int(g, "of") == 2 ? "     on both processes\n" : "     on all %lld processes\n",
				report_jget_int(g, "of"));
		}
		print_first(out, json_object_get(g, "first"));
	}
	if (some) {
		fprintf(out, "\nFailures on some processes only\n");
		json_array_foreach(groups, i, g) {
			if (!json_is_true(json_object_get(g, "only_some")) || json_is_true(json_object_get(g, "probing")))
				continue;
			fprintf(out, "  %s: %s (%lld): ", report_jget_str(g, "fn", "?"),
				report_jget_str(g, "status_name", "status"), report_jget_int(g, "status"));
			report_print_who(m, out, json_object_get(g, "who"));
			fputs(" only\n", out);
		}
	}
	print_probing(out, groups, &c);
}

/* Each finding once, with where it came from and its fix. */
static void
print_findings(struct rmodel *m, FILE *out)
{
	json_t *fs = json_object_get(m->j, "findings"), *f;
	size_t i, n = 0;

	json_array_foreach(fs, i, f)
		n += json_is_string(json_object_get(f, "id"));
	if (!json_array_size(fs))
		return;
	fprintf(out, "\nFindings: %zu\n", n);
	json_array_foreach(fs, i, f) {
		long long np = report_jget_int(f, "processes"), of = report_jget_int(f, "of");

		if (!json_is_string(json_object_get(f, "id"))) {
			fprintf(out, "  (%lld more not kept)\n", report_jget_int(f, "not_kept"));
			continue;
		}
		fprintf(out, "  %s %s: %s\n", report_jget_str(f, "severity", "?"), report_jget_str(f, "id", "?"),
			report_jget_str(f, "message", ""));
		if (of > 1) {
			fputs(np == of ? (of == 2 ? "    in both processes" : "    in all processes") : "    in ", out);
			if (np != of)
				report_print_who(m, out, json_object_get(f, "who"));
			fputc('\n', out);
		}
		if (json_is_string(json_object_get(f, "fix")))
			fprintf(out, "    fix: %s\n", report_jget_str(f, "fix", ""));
	}
	fprintf(out, "  (causes and longer fixes: docs/conflicts.md, installed under share/doc/cudnnspy)\n");
}

/* The per-signature table: which algorithm or engine ran for each convolution, how often, how long. */
static void
print_signatures(struct rmodel *m, FILE *out)
{
	json_t *sigs = json_object_get(m->j, "signatures"), *g;
	size_t i, nproc = m->n;
	char host[32], gpu[32];

	if (!json_array_size(sigs))
		return;
	fprintf(out, "\nConvolutions and graphs: %zu (signature, choice) pair%s, by time\n", json_array_size(sigs),
		json_array_size(sigs) == 1 ? "" : "s");
	json_array_foreach(sigs, i, g) {
		report_fmt_ns(host, sizeof(host), report_jget_int(g, "host_ns"));
		if (report_jget_int(g, "gpu_timed"))
			report_fmt_ns(gpu, sizeof(gpu), report_jget_int(g, "gpu_ns"));
		else
			snprintf(gpu, sizeof(gpu), "-");
		/* The signature starts with its operation (fwd, bwd-data, graph ...). */
		fprintf(out, "  %s %s\n    %s: %lld call%s", report_jget_str(g, "api", "?"), report_jget_str(g, "signature", "?"),
			report_jget_str(g, "choice", "?"), report_jget_int(g, "calls"), report_jget_int(g, "calls") == 1 ? "" : "s");
		if (report_jget_int(g, "failures"))
			fprintf(out, ", %lld failed", report_jget_int(g, "failures"));
		fprintf(out, ", host %s, GPU %s", host, gpu);
		if (json_is_integer(json_object_get(g, "workspace_max"))) {
			long long lo = report_jget_int(g, "workspace_min"), hi = report_jget_int(g, "workspace_max");

			if (lo == hi)
				fprintf(out, ", workspace %lld", lo);
			else
				fprintf(out, ", workspace %lld..%lld", lo, hi);
		}
		if (json_is_true(json_object_get(g, "nondeterministic")))
			fputs(", non-deterministic", out);
		if (nproc > 1) {
			fputs(", in ", out);
			if ((size_t)report_jget_int(g, "processes") == nproc)
				fputs(nproc == 2 ? "both processes" : "all processes", out);
			else
				report_print_who(m, out, json_object_get(g, "who"));
		}
		fputc('\n', out);
		if (report_jget_str(g, "python", NULL))
			fprintf(out, "    first from Python: %s\n", report_jget_str(g, "python", ""));
	}
}

static const char *
plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* What ran of a signature: "engine 12 KNOB=1 (3 calls), engine 0 (1 call)", or "not executed". */
static void
print_executed(FILE *out, json_t *g)
{
	json_t *executed = json_object_get(g, "executed"), *e;
	size_t i;

	if (!json_array_size(executed)) {
		/* What ran is written at exit: a process killed before it says nothing either way. */
		fputs(json_is_true(json_object_get(g, "executed_unknown")) ?
		      "what ran is not known (a process ended without a summary, before its records of what ran)" :
		      "not executed",
		      out);
		return;
	}
	fputs("ran ", out);
	json_array_foreach(executed, i, e)
		fprintf(out, "%s%s (%lld %s)", i ? ", " : "", report_jget_str(e, "choice", "?"), report_jget_int(e, "calls"),
			plural(report_jget_int(e, "calls"), "call", "calls"));
}

/* Did any process execute a plan at all (cudnnBackendExecute, from the summaries)? */
static int
executed_any(struct rmodel *m)
{
	json_t *f;
	size_t i;

	json_array_foreach(json_object_get(m->j, "functions"), i, f)
		if (strcmp(report_jget_str(f, "fn", ""), "cudnnBackendExecute") == 0 && report_jget_int(f, "calls") > 0)
			return 1;
	return 0;
}

/*
 * What the graph API built per signature, whether or not it executed: a
 * host-only build (cudnn-frontend planning through a device-properties
 * descriptor, with no GPU) builds graphs, heuristics and plans and runs
 * nothing, which the table of what ran cannot show. Tuning (several configs
 * built, one of them executed) says how many candidates and which won.
 */
static void
print_graphs(struct rmodel *m, FILE *out)
{
	json_t *graphs = json_object_get(m->j, "graphs"), *g;
	size_t i, n = json_array_size(graphs), ran = 0, nproc = m->n;

	if (!n)
		return;
	json_array_foreach(graphs, i, g)
		ran += json_array_size(json_object_get(g, "executed")) > 0 || json_is_true(json_object_get(g, "executed_unknown"));
	fprintf(out, "\nGraphs built: %zu signature%s", n, n == 1 ? "" : "s");
	if (!ran)
		fprintf(out, ", none executed%s", executed_any(m) ? "" : " (a host-only build: planned, nothing ran)");
	fputc('\n', out);
	json_array_foreach(graphs, i, g) {
		long long graphs_n = report_jget_int(g, "graphs"), heur = report_jget_int(g, "heuristics");
		long long configs = report_jget_int(g, "configs_returned"), plans = report_jget_int(g, "plans");
		long long cands = report_jget_int(g, "candidates");
		const char *atleast = json_is_true(json_object_get(g, "candidates_capped")) ? "at least " : "";
		json_t *executed = json_object_get(g, "executed");

		fprintf(out, "  %s\n    %lld %s, %lld %s (%lld %s), %lld %s", report_jget_str(g, "signature", "?"), graphs_n,
			plural(graphs_n, "graph", "graphs"), heur, plural(heur, "heuristics query", "heuristics queries"), configs,
			plural(configs, "config", "configs"), plans, plural(plans, "plan", "plans"));
		if (plans)
			fprintf(out, " of %s%lld %s", atleast, cands, plural(cands, "config", "configs"));
		fputs("; ", out);
		print_executed(out, g);
		if (nproc > 1) {
			fputs("; in ", out);
			if ((size_t)report_jget_int(g, "processes") == nproc)
				fputs(nproc == 2 ? "both processes" : "all processes", out);
			else
				report_print_who(m, out, json_object_get(g, "who"));
		}
		fputc('\n', out);
		if (json_is_true(json_object_get(g, "tuning")))
			fprintf(out, "    tuning: %s%lld candidates built, %s kept\n", atleast, cands,
				report_jget_str(json_array_get(executed, 0), "choice", "?"));
	}
}

static void
print_functions(struct rmodel *m, FILE *out, int top)
{
	json_t *fns = json_object_get(m->j, "functions"), *f;
	int gpu = json_is_true(json_object_get(m->j, "gpu_times"));
	int first = json_is_true(json_object_get(m->j, "first_times"));
	size_t n = json_array_size(fns), i;
	char t[32], g[32], p50[32], p99[32];
	int probing = 0;

	/* Probing answers are no failures (the Failures section says so): a column of their own when there are any. */
	json_array_foreach(fns, i, f)
		probing |= report_jget_int(f, "probing") > 0;

	if (!n)
		return;
	/* The order's own words: with the first calls apart, the steady total orders the table. */
	fprintf(out, "\nTop functions by %s time", first ? "steady" : "total");
	if (top > 0 && (size_t)top < n)
		fprintf(out, " (%d of %zu)", top, n);
	fputc('\n', out);
	fprintf(out, "  %-44s %10s %9s", "function", "calls", "failures");
	if (probing)
		fprintf(out, " %9s", "probing");
	fprintf(out, " %12s", first ? "steady" : "total");
	if (first)
		fprintf(out, " %10s", "first");
	if (gpu)
		fprintf(out, " %12s", "gpu");
	fprintf(out, " %10s %10s\n", "p50", "p99");
	json_array_foreach(fns, i, f) {
		if (top > 0 && i >= (size_t)top)
			break;
		/* Only cuDNN's own internal calls: nothing the program spent time on. */
		if (report_jget_int(f, "calls") == 0)
			continue;
		/* With the first calls apart, the total is the steady state's and the first calls have a column. */
		if (!first)
			report_fmt_ns(t, sizeof(t), report_jget_int(f, "total_ns"));
		else if (json_is_integer(json_object_get(f, "steady_ns")))
			report_fmt_ns(t, sizeof(t), report_jget_int(f, "steady_ns"));
		else
			snprintf(t, sizeof(t), "-");
		report_fmt_ns(p50, sizeof(p50), report_jget_int(f, "p50_ns"));
		report_fmt_ns(p99, sizeof(p99), report_jget_int(f, "p99_ns"));
		fprintf(out, "  %-44s %10lld %9lld", report_jget_str(f, "fn", "?"), report_jget_int(f, "calls"),
			report_jget_int(f, "failures") - report_jget_int(f, "probing"));
		if (probing)
			fprintf(out, " %9lld", report_jget_int(f, "probing"));
		fprintf(out, " %12s", t);
		if (first) {
			char fs[32];

			if (json_is_integer(json_object_get(f, "first_ns")))
				report_fmt_ns(fs, sizeof(fs), report_jget_int(f, "first_ns"));
			else
				snprintf(fs, sizeof(fs), "-");
			fprintf(out, " %10s", fs);
		}
		if (gpu) {
			if (json_is_integer(json_object_get(f, "gpu_ns")))
				report_fmt_ns(g, sizeof(g), report_jget_int(f, "gpu_ns"));
			else
				snprintf(g, sizeof(g), "-");
			fprintf(out, " %12s", g);
		}
		fprintf(out, " %10s %10s\n", p50, p99);
	}
	if (m->n > 1)
		fprintf(out, "  (p50 and p99: the highest among the processes)\n");
}

int
report_finish_output(FILE *out)
{
	if (fflush(out) != 0 || ferror(out)) {
		complain("cannot write the report: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
report_write_text(struct report *r, FILE *out, int top)
{
	struct rmodel *m = report_model_new(r);

	fprintf(out, "cudnnspy report: %zu process%s", m->n, m->n == 1 ? "" : "es");
	if (report_jget_int(m->j, "hosts") > 1)
		fprintf(out, " on %lld hosts", report_jget_int(m->j, "hosts"));
	fputc('\n', out);
	print_processes(m, out);
	print_cudnn(m, out);
	print_findings(m, out);
	print_failures(m, out);
	print_signatures(m, out);
	print_graphs(m, out);
	print_functions(m, out, top);
	report_model_free(m);
	return report_finish_output(out);
}

int
report_write_json(struct report *r, FILE *out)
{
	struct rmodel *m = report_model_new(r);

	report_model_dump(m, out);
	fputc('\n', out);
	report_model_free(m);
	return report_finish_output(out);
}
