/*
 * Fuzz target: the record reader of `cudnnspy report` (cli/report/report-read.c,
 * report_read_buffer), fed records that stay records. The bytes are one
 * process's record file, as for fuzz-report, but the mutator works on the
 * JSON: it picks a line, parses it, picks one value anywhere in it (a field,
 * an element, a field of a nested object) and gives it another type or a
 * hostile value of its own (numbers past 64 bits, negative and fractional,
 * strings with invalid UTF-8, control characters and NUL, null, an array
 * where an object was and the reverse, nesting past the parser's limit, a
 * value taken from elsewhere in the record), renames or drops a field, or
 * moves whole lines. So each field of each event reaches the reader's code
 * for it with the wrong thing in it, which byte mutations rarely manage.
 * The seeds (corpus/records) come from docs/output-format.md's field tables:
 * tests/fuzz/make-records-seeds.py.
 *
 * Each input is read as fuzz-report reads it (the default two passes, then
 * every line parsed with a Chrome trace), and the JSON report must be JSON.
 */
#include "fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t *out,
				 size_t max_out, unsigned int seed);

static FILE *
null_out(void)
{
	static FILE *out;

	/* Opened once: a fuzzer runs millions of inputs in one process. */
	if (!out)
		out = fopen("/dev/null", "w");
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *out = null_out(), *js;
	struct report *r;
	long long base = 0;
	char *text = NULL;
	size_t len = 0;

	if (!out)
		return 0;
	r = report_new();
	if (!r)
		return 0;
	report_set_warnings(r, out);
	report_read_buffer(r, "fuzz.jsonl", data, size);
	report_write_text(r, out, 0);
	/* What --json writes is JSON, whatever the records held. */
	js = open_memstream(&text, &len);
	if (js) {
		json_error_t err;
		json_t *back;

		report_write_json(r, js);
		fclose(js);
		back = json_loadb(text, len, JSON_ALLOW_NUL, &err);
		if (!back && getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "not JSON: %s at %d: %.*s\n", err.text, err.position, (int)(len < 4000 ? len : 4000),
				text);
		FUZZ_ASSERT(back != NULL);
		json_decref(back);
		free(text);
	}
	report_free(r);

	r = report_new();
	if (!r)
		return 0;
	report_set_warnings(r, out);
	report_chrome_begin(r, out, report_header_start(data, size, &base), base);
	report_read_buffer(r, "fuzz.jsonl", data, size);
	report_chrome_end(r);
	report_write_text(r, out, 3);
	report_free(r);
	return 0;
}

/* The mutator's own generator: libFuzzer hands it a seed per call. */
static unsigned int
rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Text that replaces the placeholder string after json_dumps: what jansson cannot build. */
static const char *const raw_texts[] = {
	"18446744073709551616", "-18446744073709551617", "1e400", "-1e400", "1e-400", "-0",
	"123456789012345678901234567890", "0.1e1", "3.0", "-9223372036854775809",
};
#define PLACEHOLDER "\001fuzz-raw\001"
#define PLACEHOLDER_DUMPED "\"\\u0001fuzz-raw\\u0001\""

/* Every value of the tree, as the slot that holds it: an object and key, or an array and index. */
struct slot {
	json_t *parent;
	const char *key;
	size_t index;
};

static size_t
collect(json_t *v, struct slot *slots, size_t n, size_t cap, int depth)
{
	const char *key;
	json_t *child;
	size_t i;

	if (depth > 64)
		return n;
	if (json_is_object(v)) {
		json_object_foreach(v, key, child) {
			if (n < cap)
				slots[n++] = (struct slot){ v, key, 0 };
			n = collect(child, slots, n, cap, depth + 1);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			if (n < cap)
				slots[n++] = (struct slot){ v, NULL, i };
			n = collect(child, slots, n, cap, depth + 1);
		}
	}
	return n;
}

static json_t *
slot_get(const struct slot *s)
{
	return s->key ? json_object_get(s->parent, s->key) : json_array_get(s->parent, s->index);
}

static void
slot_set(const struct slot *s, json_t *v)
{
	if (!v)
		return;
	if (s->key)
		json_object_set_new(s->parent, s->key, v);
	else
		json_array_set_new(s->parent, s->index, v);
}

static json_t *
nest(json_t *v, int depth, int as_object)
{
	for (int i = 0; i < depth && v; i++) {
		json_t *c = as_object ? json_object() : json_array();

		if (!c) {
			json_decref(v);
			return NULL;
		}
		if (as_object)
			json_object_set_new(c, "a", v);
		else
			json_array_append_new(c, v);
		v = c;
	}
	return v;
}

/* Keys the reader looks for, so that a renamed field is often one it knows. */
static const char *const keys[] = {
	"event", "fn", "status", "status_name", "copy", "tid", "t_ns", "dur_ns", "args", "message", "stack", "recent",
	"calls", "failures", "internal", "functions", "copies", "path", "version", "signature", "op", "api", "algo",
	"engine", "knobs", "workspace", "search", "heuristics", "id", "severity", "paths", "fix", "kind", "rank", "pid",
	"start_unix_ns", "start_mono_ns", "library", "gpu_ns", "timed", "total_ns", "first_ns", "steady_ns", "p50_ns",
	"p99_ns", "min_ns", "max_ns", "how", "loaded_by", "build_id", "real_path", "results", "returned", "host_ns",
};
static const char *const events[] = {
	"header", "call", "failure", "summary", "library", "finding", "algo", "load", "gpu", "mark", "crash",
	"search", "graph", "plan", "heuristics",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A value of another type, or a hostile one; OLD is the value it replaces (borrowed). */
static json_t *
hostile(unsigned int *s, json_t *old, json_t *root)
{
	static const char bad_utf8[][6] = { "\xff", "\xc3", "\xed\xa0\x80", "\xc0\x80", "\xf8\x88\x80\x80\x80" };
	char buf[5000];

	switch (rnd(s) % 16) {
	case 0:
		return json_string(PLACEHOLDER);
	case 1: {
		static const json_int_t ints[] = { INT64_MAX, INT64_MIN, -1, 0, 2147483648LL, -2147483649LL, 4294967296LL,
						   1LL << 53, 65536 };

		return json_integer(ints[rnd(s) % COUNT(ints)]);
	}
	case 2: {
		static const double reals[] = { 0.5, -0.0, 1e308, -1e308, 3.0, 1e-320, 2.5e18, 9.3e18 };

		return json_real(reals[rnd(s) % COUNT(reals)]);
	}
	case 3: {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "x%sy", bad_utf8[rnd(s) % COUNT(bad_utf8)]);

		return json_stringn_nocheck(buf, n);
	}
	case 4:
		return json_stringn("\0\001\033[2J\n\t\177\r", 9);
	case 5:
		return json_null();
	case 6:
		return json_boolean(rnd(s) & 1);
	case 7:
		return rnd(s) & 1 ? json_array() : json_pack("[O]", old);
	case 8:
		return rnd(s) & 1 ? json_object() : json_pack("{sO}", keys[rnd(s) % COUNT(keys)], old);
	case 9:
		return nest(json_deep_copy(old), 1 + (int)(rnd(s) % (rnd(s) & 1 ? 40 : 2100)), rnd(s) & 1);
	case 10:
		if (json_is_integer(old))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(old));
		else
			snprintf(buf, sizeof(buf), "%u", rnd(s) % 100000);
		return json_string(buf);
	case 11: {
		size_t n = 1 + rnd(s) % (sizeof(buf) - 1);

		memset(buf, 'A' + (int)(rnd(s) % 26), n);
		return json_stringn(buf, n);
	}
	case 12: {
		/* A real value of the record, in the wrong place. */
		struct slot slots[256];
		size_t n = collect(root, slots, 0, COUNT(slots), 0);

		return n ? json_deep_copy(slot_get(&slots[rnd(s) % n])) : json_null();
	}
	case 13:
		return json_string(events[rnd(s) % COUNT(events)]);
	case 14:
		return json_string(keys[rnd(s) % COUNT(keys)]);
	default:
		if (json_is_integer(old))
			/* Wrapping, not overflowing: the value may be INT64_MAX already. */
			return json_integer((json_int_t)((uint64_t)json_integer_value(old) + (uint64_t)((int)(rnd(s) % 7) - 3)));
		return json_integer((json_int_t)(rnd(s) % 20) - 5);
	}
}

/* One line changed in place in the tree; 0 when it is not a JSON value. */
static char *
mutate_line(const char *line, size_t len, unsigned int *s)
{
	json_error_t err;
	json_t *root = json_loadb(line, len, JSON_ALLOW_NUL, &err);
	struct slot slots[1024];
	size_t n;
	char *text, *ph;

	if (!root)
		return NULL;
	n = collect(root, slots, 0, COUNT(slots), 0);
	if (n == 0) {
		json_decref(root);
		return NULL;
	}
	for (int rounds = 1 + (int)(rnd(s) % 3); rounds > 0; rounds--) {
		struct slot *sl = &slots[rnd(s) % n];
		json_t *old = slot_get(sl);

		if (!old)
			continue;
		if (sl->key && rnd(s) % 5 == 0) {
			/* A field dropped, or the same value under another name. */
			json_t *keep = json_incref(old);
			const char *to = keys[rnd(s) % COUNT(keys)];

			json_object_del(sl->parent, sl->key);
			if (rnd(s) & 1)
				json_object_set(sl->parent, to, keep);
			json_decref(keep);
			break;	/* the slots below it are gone */
		}
		slot_set(sl, hostile(s, old, root));
		break;	/* a replaced value takes its slots with it */
	}
	text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(root);
	if (!text)
		return NULL;
	ph = strstr(text, PLACEHOLDER_DUMPED);
	if (ph) {
		const char *raw = raw_texts[rnd(s) % COUNT(raw_texts)];
		size_t before = (size_t)(ph - text), after = strlen(ph + strlen(PLACEHOLDER_DUMPED));
		char *t = malloc(before + strlen(raw) + after + 1);

		if (t) {
			memcpy(t, text, before);
			memcpy(t + before, raw, strlen(raw));
			memcpy(t + before + strlen(raw), ph + strlen(PLACEHOLDER_DUMPED), after + 1);
		}
		free(text);
		text = t;
	}
	return text;
}

/* The lines of DATA: starts and lengths, without their newlines. */
static size_t
split(const uint8_t *data, size_t size, size_t *start, size_t *len, size_t cap)
{
	size_t n = 0, i = 0;

	while (i < size && n < cap) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - data) : size;

		start[n] = i;
		len[n] = end - i;
		n++;
		i = end + 1;
	}
	return n;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static size_t start[4096], len[4096];
	unsigned int s = seed ? seed : 1;
	size_t n, pick, out_len, tail;
	char *line;
	uint8_t *copy;

	if (size == 0 || rnd(&s) % 8 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	n = split(data, size, start, len, COUNT(start));
	pick = rnd(&s) % n;
	if (rnd(&s) % 6 == 0 && n > 1) {
		/* Lines moved: a duplicate, a swap or a line gone (two summaries, calls after one, no header). */
		size_t other = rnd(&s) % n, a = pick < other ? pick : other, b = pick < other ? other : pick;

		/* The line again, and a newline each for it and for a last line without one. */
		copy = malloc(size + len[pick] + 2);
		if (!copy)
			return size;
		out_len = 0;
		for (size_t i = 0; i < n; i++) {
			size_t k = i == a ? b : i == b ? a : i;	/* swapped */
			int op = (int)(seed % 3);

			if (op == 2 && i == pick)
				continue;	/* dropped */
			if (op != 1)
				k = i;
			memcpy(copy + out_len, data + start[k], len[k]);
			out_len += len[k];
			copy[out_len++] = '\n';
			if (op == 0 && i == pick) {
				memcpy(copy + out_len, data + start[k], len[k]);
				out_len += len[k];
				copy[out_len++] = '\n';
			}
		}
		if (out_len > max_size) {
			free(copy);
			return LLVMFuzzerMutate(data, size, max_size);
		}
		memcpy(data, copy, out_len);
		free(copy);
		return out_len;
	}
	line = mutate_line((const char *)data + start[pick], len[pick], &s);
	if (!line)
		return LLVMFuzzerMutate(data, size, max_size);
	tail = start[pick] + len[pick] < size ? size - (start[pick] + len[pick]) : 0;
	out_len = start[pick] + strlen(line) + tail;
	if (out_len > max_size) {
		free(line);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	memmove(data + start[pick] + strlen(line), data + start[pick] + len[pick], tail);
	memcpy(data + start[pick], line, strlen(line));
	free(line);
	return out_len;
}

/* Lines of A and B interleaved: records of two processes, or of two kinds, in one file. */
size_t
LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t *out, size_t max_out,
			  unsigned int seed)
{
	static size_t sa[1024], la[1024], sb[1024], lb[1024];
	size_t ca = split(a, na, sa, la, COUNT(sa)), cb = split(b, nb, sb, lb, COUNT(sb));
	size_t i = 0, j = 0, n = 0;
	unsigned int s = seed ? seed : 1;

	while (i < ca || j < cb) {
		int from_a = j >= cb || (i < ca && (rnd(&s) & 1));
		const uint8_t *p = from_a ? a + sa[i] : b + sb[j];
		size_t l = from_a ? la[i] : lb[j];

		if (from_a)
			i++;
		else
			j++;
		if (rnd(&s) % 3 == 0)
			continue;
		if (n + l + 1 > max_out)
			break;
		memcpy(out + n, p, l);
		n += l;
		out[n++] = '\n';
	}
	return n;
}

#ifdef FUZZ_REPLAY_MAIN
/* The replay runner links no libFuzzer: the mutators are never called there. */
size_t
LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
	(void)data;
	(void)max_size;
	return size;
}
#endif
