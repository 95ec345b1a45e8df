/*
 * Writes the repro program from a plan (repro.c). The program is meant to
 * be read by whoever gets the bug report: one function per step, each line
 * that replays a recorded call preceded by a comment naming it, and nothing
 * of the spy in it. Everything taken from the records is checked before it
 * lands in C: enum names must be identifiers, numbers numbers, and text in
 * comments and strings is escaped.
 */
#include "repro.h"
#include "spy-api.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli-util.h"

static const char *
jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Text for a C string literal inside printf's format: escaped, and % doubled. */
static void
string_text(FILE *out, const char *s)
{
	for (const char *c = s ? s : "?"; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c == '%')
			fputs("%%", out);
		else if (*c < 0x20 || *c > 0x7e)
			fputc('?', out);
		else if (c[0] == '?' && c[1] == '?')
			fputs("?\\", out);	/* no trigraphs */
		else
			fputc(*c, out);
	}
}

static const struct repro_desc *
desc_by_id(const struct repro_plan *p, const char *id)
{
	for (int i = 0; id && i < p->ndescs; i++)
		if (strcmp(p->descs[i].id, id) == 0)
			return &p->descs[i];
	return NULL;
}

static const struct repro_buffer *
buf_by_addr(const struct repro_plan *p, json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	unsigned long long addr = s ? strtoull(s + 2, NULL, 16) : 0;

	for (int i = 0; addr && i < p->nbufs; i++)
		if (p->bufs[i].addr == addr)
			return &p->bufs[i];
	return NULL;
}

/* A value of the records as C; -1 (after a message) when it is not what the parameter takes. */
static int
c_value(FILE *out, const struct repro_param *q, json_t *v, const char *fn)
{
	switch (q->role) {
	case RP_ENUM:
		/* A value's name goes into the code: only one of that enum's (issue 27). */
		if (json_is_string(v) && repro_enum_word(q->ctype, json_string_value(v))) {
			fputs(json_string_value(v), out);
			return 0;
		}
		if (json_is_integer(v)) {
			fprintf(out, "(%s)", q->ctype);
			repro_int(out, (long long)json_integer_value(v));
			return 0;
		}
		break;
	case RP_INT:
		if (json_is_integer(v) && json_integer_value(v) >= -2147483647LL - 1 &&
		    json_integer_value(v) <= 2147483647LL) {
			fprintf(out, "%lld", (long long)json_integer_value(v));
			return 0;
		}
		break;
	case RP_SIZE:
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			fprintf(out, "%lluu", (unsigned long long)json_integer_value(v));
			return 0;
		}
		break;
	case RP_DOUBLE:
		if (json_is_number(v)) {
			fprintf(out, "%.17g", json_number_value(v));
			return 0;
		}
		if (json_is_string(v)) {
			const char *s = json_string_value(v);

			if (strcmp(s, "nan") == 0 || strcmp(s, "inf") == 0 || strcmp(s, "-inf") == 0) {
				fputs(s[0] == 'n' ? "NAN" : s[0] == '-' ? "-INFINITY" : "INFINITY", out);
				return 0;
			}
		}
		break;
	default:
		break;
	}
	complain("repro: %s: argument %s is not what cuDNN takes there", fn, q->name);
	return -1;
}

/* The recorded call, as a comment: fn(arg, arg, ...) with the records' own spelling. */
static void
comment_call(FILE *out, const char *indent, const struct repro_fn *f, json_t *args)
{
	fprintf(out, "%s/* recorded: %s(", indent, f->name);
	for (int i = 0; i < f->nparams; i++) {
		json_t *v = json_object_get(args, f->params[i].name);
		char *text;
		const char *id = json_is_object(v) ? jstr(v, "id") : NULL;

		if (i)
			fputs(", ", out);
		if (f->params[i].role == RP_OUT_INT || f->params[i].role == RP_OUT_SIZE ||
		    f->params[i].role == RP_PERF) {
			fprintf(out, "%s%s", f->params[i].role == RP_PERF ? "" : "&", f->params[i].name);
			continue;
		}
		if (id) {
			repro_comment(out, id);
			continue;
		}
		if (json_is_object(v) && json_object_get(v, "values")) {
			v = json_object_get(v, "values");
		} else if (json_is_object(v) && json_object_get(v, "ptr")) {
			fputs("&", out);
			repro_comment(out, f->params[i].name);
			continue;
		}
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		if (text && json_is_string(v)) {
			repro_comment(out, json_string_value(v));
		} else {
			for (char *c = text; c && *c; c++)
				if (*c == '[')
					*c = '{';
				else if (*c == ']')
					*c = '}';
			repro_comment(out, text);
		}
		free(text);
	}
	fputs(") */\n", out);
}

/* One Set call on a descriptor, in its own block when it needs arrays. */
static int
write_set(FILE *out, const struct repro_desc *d, json_t *entry)
{
	const struct repro_fn *f = repro_fn_find(jstr(entry, "fn"));
	json_t *args = json_object_get(entry, "args"), *failed;
	int arrays = 0;

	for (int i = 0; i < f->nparams; i++)
		arrays += f->params[i].role == RP_INT_ARRAY;
	if (arrays)
		fputs("\t{\n", out);
	for (int i = 0; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];
		json_t *vals;
		long long n;

		if (q->role != RP_INT_ARRAY)
			continue;
		n = json_integer_value(json_object_get(args, f->params[q->ref].name));
		vals = json_object_get(args, q->name);
		if (!json_is_array(vals))
			vals = json_object_get(vals, "values");
		if (n < 1 || n > 8 || !json_is_array(vals) || (long long)json_array_size(vals) < n) {
			complain("repro: %s: %s without its %s values in the records", d->id, f->name, q->name);
			return -1;
		}
		fprintf(out, "\t\tconst int %s[%lld] = { ", q->name, n);
		for (long long k = 0; k < n; k++) {
			json_t *x = json_array_get(vals, (size_t)k);

			if (!json_is_integer(x) || json_integer_value(x) > INT_MAX || json_integer_value(x) < INT_MIN) {
				complain("repro: %s: %s: a value of %s is not an int", d->id, f->name, q->name);
				return -1;
			}
			fprintf(out, "%s%lld", k ? ", " : "", (long long)json_integer_value(x));
		}
		fputs(" };\n", out);
	}
	fputs(arrays ? "\n" : "", out);
	if (jstr(entry, "desc")) {
		/* Not a recorded call: say where it comes from, and what had to be assumed. */
		fprintf(out, "%s/* rebuilt from the spy's summary \"", arrays ? "\t\t" : "\t");
		repro_comment(out, jstr(entry, "desc"));
		fputs("\" (its Set call was not traced)", out);
		if (jstr(entry, "guess")) {
			fputs("; ", out);
			repro_comment(out, jstr(entry, "guess"));
		}
		fputs(" */\n", out);
	} else {
		comment_call(out, arrays ? "\t\t" : "\t", f, args);
	}
	failed = json_object_get(entry, "status");
	if (json_is_integer(failed))
		fprintf(out, "%s/* It failed in the program, with %lld: so it must here. */\n", arrays ? "\t\t" : "\t",
			(long long)json_integer_value(failed));
	fprintf(out, "%s%s(%s(%s", arrays ? "\t\t" : "\t", json_is_integer(failed) ? "check_failed" : "check_cudnn",
		f->name, d->var);
	for (int i = 1; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];

		fputs(", ", out);
		if (q->role == RP_INT_ARRAY)
			fputs(q->name, out);
		else if (c_value(out, q, json_object_get(args, q->name), f->name) != 0)
			return -1;
	}
	if (json_is_integer(failed))
		fprintf(out, "), %lld", (long long)json_integer_value(failed));
	else
		fputs(")", out);
	fprintf(out, ", \"%s (%s)\");\n", f->name, d->id);
	if (arrays)
		fputs("\t}\n", out);
	return 0;
}

static int
write_descriptor(FILE *out, const struct repro_desc *d)
{
	const struct repro_kind_info *k = &repro_kinds[d->kind];

	fprintf(out, "/* %s", d->id);
	if (d->dtype) {
		fputs(": ", out);
		repro_comment(out, d->dtype);
		fprintf(out, " %s, %llu bytes", d->shape, d->bytes);
	}
	fputs(", with the Set calls the program made. */\n", out);
	fprintf(out, "static void\ncreate_%s(void)\n{\n", d->var);
	fprintf(out, "\tcheck_cudnn(%s(&%s), \"%s (%s)\");\n", k->create, d->var, k->create, d->id);
	for (size_t i = 0; i < json_array_size(d->sets); i++)
		if (write_set(out, d, json_array_get(d->sets, i)) != 0)
			return -1;
	fputs("}\n\n", out);
	return 0;
}

/* Whether the call's scaling factors are doubles: so when its output is. */
static int
double_scales(const struct repro_plan *p)
{
	for (int i = 0; i < p->ndescs; i++)
		if (p->descs[i].dtype && strcmp(p->descs[i].dtype, "CUDNN_DATA_DOUBLE") == 0)
			return 1;
	return 0;
}

/* The arguments of the replayed call, as C. */
static int
write_args(FILE *out, const struct repro_plan *p, const struct repro_fn *f, json_t *args, const char *indent,
	   const char *prefix)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];
		json_t *v = json_object_get(args, q->name);
		const struct repro_desc *d;
		const struct repro_buffer *b;

		fprintf(out, "%s\n%s", i ? "," : "", indent);
		switch (q->role) {
		case RP_HANDLE:
			fputs("handle", out);
			break;
		case RP_DESC:
			d = desc_by_id(p, json_is_object(v) ? jstr(v, "id") : NULL);
			fputs(d ? d->var : "NULL", out);
			break;
		case RP_DATA_IN:
		case RP_DATA_OUT:
		case RP_WORKSPACE:
			b = buf_by_addr(p, v);
			if (b)
				fprintf(out, "%s.ptr", b->var);
			else
				fputs("NULL", out);
			break;
		case RP_ALPHA:
			fputs("&one", out);
			break;
		case RP_BETA:
			fputs("&zero", out);
			break;
		case RP_OUT_INT:
			fprintf(out, "&%sreturned", prefix);
			break;
		case RP_OUT_SIZE:
			fprintf(out, "&%ssize", prefix);
			break;
		case RP_PERF:
			fprintf(out, "%sperf", prefix);
			break;
		default:
			if (c_value(out, q, v, f->name) != 0)
				return -1;
		}
		fprintf(out, "\t/* %s */", q->name);
	}
	return 0;
}

static long long
requested(const struct repro_fn *f, json_t *args)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].role == RP_PERF)
			return json_integer_value(json_object_get(args, f->params[f->params[i].ref].name));
	return 0;
}

static const char *
perf_type(const struct repro_fn *f)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].role == RP_PERF)
			return f->params[i].ctype;
	return NULL;
}

/* The recorded ranking, as a comment. */
static void
comment_perf(FILE *out, json_t *rec)
{
	json_t *vals = json_object_get(json_object_get(json_object_get(rec, "args"), "perfResults"), "values");
	size_t i;
	json_t *v;

	if (!json_is_array(vals) || !json_array_size(vals))
		return;
	fputs("\t/* the program got:\n", out);
	json_array_foreach(vals, i, v) {
		fprintf(out, "\t *   %zu: ", i);
		repro_comment(out, jstr(v, "algo"));
		fputs(" ", out);
		repro_comment(out, jstr(v, "status"));
		fprintf(out, " %.3f ms, %lld bytes\n", json_number_value(json_object_get(v, "time")),
			(long long)json_integer_value(json_object_get(v, "memory")));
	}
	fputs("\t */\n", out);
}

static int
write_search(FILE *out, const struct repro_plan *p)
{
	const struct repro_fn *s = repro_fn_find(jstr(p->search, "fn"));
	json_t *args = json_object_get(p->search, "args");
	long long n = requested(s, args);

	if (n < 1 || n > 1000) {
		complain("repro: %s: a requestedAlgoCount out of 1..1000", s->name);
		return -1;
	}
	fprintf(out, "/* Step 5: the algorithm search the program made before the call. */\n"
		"static void\nrun_search(void)\n{\n"
		"\tstatic %s search_perf[%lld];\n\tint search_returned = 0;\n\tcudnnStatus_t status;\n\n",
		perf_type(s), n);
	comment_perf(out, p->search);
	comment_call(out, "\t", s, args);
	fprintf(out, "\tstatus = %s(", s->name);
	if (write_args(out, p, s, args, "\t    ", "search_") != 0)
		return -1;
	fprintf(out, ");\n"
		"\tprintf(\"search %s: %%s (%%d), %%d results\\n\", cudnnGetErrorString(status), (int)status,\n"
		"\t       search_returned);\n"
		"\tfor (int i = 0; status == CUDNN_STATUS_SUCCESS && i < search_returned; i++)\n"
		"\t\tprintf(\"  %%d: algo %%d, %%s, %%.3f ms, %%zu bytes of workspace\\n\", i, (int)search_perf[i].algo,\n"
		"\t\t       cudnnGetErrorString(search_perf[i].status), search_perf[i].time, search_perf[i].memory);\n"
		"}\n\n", s->name);
	return 0;
}

/* The calls of the replayed function that this program makes before it: descriptor Set calls, graph calls. */
static int
calls_before(const struct repro_plan *p)
{
	const char *fn = jstr(p->record, "fn");
	json_t *c;
	size_t i;
	int n = 0;

	for (int d = 0; fn && d < p->ndescs; d++)
		json_array_foreach((json_t *)p->descs[d].sets, i, c)
			n += jstr(c, "fn") && strcmp(jstr(c, "fn"), fn) == 0;
	json_array_foreach((json_t *)p->graph_calls, i, c) {
		if (c == p->record || json_equal(c, p->record))
			break;
		n += fn && jstr(c, "fn") && strcmp(jstr(c, "fn"), fn) == 0;
	}
	return n;
}

void
repro_write_message(FILE *out, const struct repro_plan *p, int before)
{
	/*
	 * The spy's own status (CUDNNSPY_INJECT): the message is the spy's, with the rule that matched. The
	 * program's rule may pick its Nth call or a share of them (@N, %P), which this program's one call is
	 * not: the rule for this program picks its call of the function by number.
	 */
	if (json_is_true(json_object_get(p->record, "injected"))) {
		const char *fn = jstr(p->record, "fn");

		fputs(" * Its status was injected by cudnnspy (CUDNNSPY_INJECT): cuDNN never saw the call, and\n"
		      " * this program makes it of cuDNN. The spy said: ", out);
		repro_comment(out, p->message && p->message[0] ? p->message : "(no message recorded)");
		fputs("\n", out);
		/* The status by number, as recorded: a rule's name may be another major's numbering of it. */
		if (fn && spy_fn_lookup(fn) >= 0)
			fprintf(out, " * For the injected status, run it under the spy with the rule for this program's\n"
				" * call: CUDNNSPY_INJECT='%s=%lld@%d'\n", fn, p->status, before + 1);
		return;
	}
	/* The spy's fallback answered: the copy had no such function (a cuDNN 8 one against 9), or no copy. */
	if (json_is_true(json_object_get(p->record, "no_function"))) {
		fputs(" * Its status was the spy's: the cuDNN the call reached had no such function (or the spy had\n"
		      " * found no cuDNN at all), and the spy answers such a call with NOT_INITIALIZED. This program\n"
		      " * makes the call of the cuDNN it runs against.\n", out);
		return;
	}
	if (p->message && p->message[0]) {
		fputs(" * cuDNN's message: ", out);
		repro_comment(out, p->message);
		fputs("\n", out);
	}
}

/* The Python lines the call came from, innermost first, one a line: the records' strings, escaped. */
void
repro_write_python(FILE *out, void *frames_v)
{
	json_t *frames = frames_v;
	json_t *f;
	size_t i;

	json_array_foreach(frames, i, f) {
		json_t *line = json_object_get(f, "line");

		if (i >= 8)
			break;
		if (!json_is_string(json_object_get(f, "file")) || !json_is_string(json_object_get(f, "function")) ||
		    !json_is_integer(line))
			continue;
		fputs(i ? " *         " : " * Called from Python: ", out);
		repro_comment(out, jstr(f, "function"));
		fputs(" (", out);
		repro_comment(out, jstr(f, "file"));
		fprintf(out, ":%lld)\n", (long long)json_integer_value(line));
	}
}

static void
write_header_comment(FILE *out, const struct repro_plan *p)
{
	json_t *args = json_object_get(p->record, "args");

	fputs("/*\n * A standalone reproduction of one recorded cuDNN call: ", out);
	repro_comment(out, p->fn->name);
	fputs(",\n * which returned ", out);
	repro_comment(out, p->status_name ? p->status_name : "status");
	fprintf(out, " (%lld) in the recorded program.\n *\n", p->status);
	fputs(" * Written by cudnnspy repro from ", out);
	repro_comment(out, p->file);
	fprintf(out, ",\n * line %lld (call %lld", p->record_no, p->call_no);
	if (p->failure)
		fprintf(out, ", failure %lld", p->failure_no);
	fputs("): the records of ", out);
	repro_comment(out, p->program);
	fprintf(out, " (pid %lld) on ", p->pid);
	repro_comment(out, p->host);
	fprintf(out, ",\n * which ran cuDNN %lld from ", p->lib_version);
	repro_comment(out, p->lib_path);
	fputs(".\n", out);
	{
		char sig[2048];

		if (repro_signature(p, sig, sizeof(sig)) == 0) {
			fputs(" * Signature: ", out);
			repro_comment(out, sig);
			fputs("\n", out);
		}
	}
	repro_write_message(out, p, calls_before(p));
	repro_write_python(out, json_object_get(p->record, "python"));
	fputs(" *\n * The records hold what the program set, not its data. What this program\n"
	      " * replays from them:\n", out);
	for (int i = 0; i < p->ndescs; i++) {
		const struct repro_desc *d = &p->descs[i];

		fprintf(out, " *   %s: ", d->id);
		for (size_t k = 0; k < json_array_size(d->sets); k++) {
			fputs(k ? ", " : "", out);
			repro_comment(out, jstr(json_array_get(d->sets, k), "fn"));
		}
		if (d->dtype) {
			fputs(" (", out);
			repro_comment(out, d->dtype);
			fprintf(out, " %s)", d->shape);
		}
		fputs("\n", out);
	}
	for (int i = 0; i < p->fn->nparams; i++) {
		const struct repro_param *q = &p->fn->params[i];
		json_t *v = json_object_get(args, q->name);

		if (q->role == RP_ENUM || q->role == RP_SIZE || q->role == RP_INT) {
			char *t = json_dumps(v, JSON_ENCODE_ANY);

			fprintf(out, " *   %s: ", q->name);
			repro_comment(out, json_is_string(v) ? json_string_value(v) : t);
			fputs("\n", out);
			free(t);
		}
	}
	for (int i = 0; i < p->nbufs; i++) {
		const struct repro_buffer *b = &p->bufs[i];

		fputs(" *   ", out);
		repro_comment(out, b->users);
		fprintf(out, ": %llu bytes at 0x%llx, %u bytes past a 256-byte boundary\n", b->bytes, b->addr,
			b->offset);
	}
	if (p->search)
		fprintf(out, " *   the search before the call: %s%s\n", jstr(p->search, "fn"),
			json_is_true(json_object_get(p->search, "from_search_record")) ?
			" (from its search record: the search\n *   itself was not traced)" : "");
	if (p->graph_calls && !p->graph_rebuilt)
		fprintf(out, " *   the graph: %zu backend calls on %zu descriptors (create, set, get,\n"
			" *   finalize), in the program's order\n", json_array_size(p->graph_calls),
			json_object_size(p->graph_types));
	if (p->graph_rebuilt == 2)
		fprintf(out, " *   the descriptor: its type and attributes as the failure record holds them,\n"
			" *   finalized if it was: %zu backend calls. The calls that built it were not\n"
			" *   traced, so their order is the record's (trace cudnnBackend* for theirs)\n",
			json_array_size(p->graph_calls));
	if (p->graph_rebuilt == 1)
		fprintf(out, " *   the graph: the operations, their tensors and descriptors with their\n"
			" *   attributes (the graph record), and the plan's engine and knobs (the\n"
			" *   failure record): %zu backend calls on %zu descriptors, each built after\n"
			" *   those it names. The calls that built them were not traced, so their order, a\n"
			" *   heuristics query and the variant pack's pointers are not in the records\n"
			" *   (trace cudnnBackend* for them): each tensor that is not virtual gets a\n"
			" *   buffer of its own, at a 256-byte boundary\n", json_array_size(p->graph_calls),
			json_object_size(p->graph_types));
	if (p->handle_null)
		fputs(" *   the handle: NULL (the program's cudnnCreate had failed)\n", out);
	fputs(" * What it makes up:\n", out);
	fputs(" *   the data: inputs are filled with a pattern (see fill_host; --fill\n"
	      " *   pattern|nan|zero|random), outputs and workspaces with zeros\n", out);
	for (int i = 0; i < p->fn->nparams; i++)
		if (p->fn->params[i].role == RP_ALPHA) {
			fputs(" *   the scaling factors (the records keep only their addresses):", out);
			for (int k = 0; k < p->fn->nparams; k++)
				if (p->fn->params[k].role == RP_ALPHA || p->fn->params[k].role == RP_BETA)
					fprintf(out, " %s=%d", p->fn->params[k].name, p->fn->params[k].role == RP_ALPHA);
			fputs("\n", out);
			break;
		}
	if (p->stream) {
		fputs(" *   the stream: the program had set ", out);
		repro_comment(out, p->stream);
		fputs("; this program uses the default one\n", out);
	}
	fputs(" *\n * Build:\n *   ", out);
	repro_comment(out, p->build);
	fputs(strchr(p->exe, '/') ? "\n * Run:\n *   " : "\n * Run:\n *   ./", out);
	repro_comment(out, p->exe);
	fputs(" [--time] [--fill pattern|nan|zero|random]\n"
	      " * Exit status: 0 when the call returns the recorded status, 1 when it\n"
	      " * returns another, 2 when the setup failed (no GPU, out of memory, a\n"
	      " * descriptor cuDNN refused).\n */\n", out);
}

static const char prelude[] =
	"#include <math.h>\n"
	"#include <stdbool.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"\n"
	"/* cudnn.h brings cuda_runtime_api.h: cudaMalloc, cudaMemcpy, cudaMemset, cudaFree. */\n"
	"#include <cudnn.h>\n"
	"\n"
	"enum elem { ELEM_F32, ELEM_F64, ELEM_F16, ELEM_BF16, ELEM_I8, ELEM_U8, ELEM_I32, ELEM_I64 };\n"
	"enum fill { FILL_PATTERN, FILL_NAN, FILL_ZERO, FILL_RANDOM };\n"
	"static const char *const fill_names[] = { \"pattern\", \"nan\", \"zero\", \"random\" };\n"
	"\n"
	"/* Device memory: ptr, what the call gets, lies offset bytes past what cudaMalloc gave. */\n"
	"struct buffer {\n"
	"\tconst char *name;\n"
	"\tsize_t bytes, offset;\n"
	"\tint input;\n"
	"\tenum elem elem;\n"
	"\tsize_t count;\n"
	"\tvoid *base, *ptr;\n"
	"};\n"
	"\n"
	"";

/* Both programs' (repro-host.c's too): a status in words, with cuDNN's own message. */
const char repro_print_status[] =
	"#if CUDNN_MAJOR >= 9\n"
	"/* cuDNN 9's own: weak, so that the program links against the cuDNN 8 a call may have reached too. */\n"
	"#pragma weak cudnnGetLastErrorString\n"
	"#endif\n"
	"\n"
	"/* \"what: NAME (number): cuDNN's message\", without a newline. */\n"
	"static void\n"
	"print_status(FILE *to, const char *what, cudnnStatus_t status)\n"
	"{\n"
	"\tchar message[512] = \"\";\n"
	"\n"
	"#if CUDNN_MAJOR >= 9\n"
	"\tif (status != CUDNN_STATUS_SUCCESS && cudnnGetLastErrorString)\n"
	"\t\tcudnnGetLastErrorString(message, sizeof(message));\n"
	"#endif\n"
	"\tfprintf(to, \"%s: %s (%d)%s%s\", what, cudnnGetErrorString(status), (int)status,\n"
	"\t\tmessage[0] ? \": \" : \"\", message);\n"
	"}\n"
	"\n";

/* What every step but the handle's needs. */
static const char prelude_data[] =
	"static void\n"
	"print_cudnn_error(const char *what, cudnnStatus_t status)\n"
	"{\n"
	"\tfflush(stdout);\n"
	"\tfputs(\"repro: \", stderr);\n"
	"\tprint_status(stderr, what, status);\n"
	"\tfputc('\\n', stderr);\n"
	"}\n"
	"\n"
	"/* A step that worked in the recorded program: when it fails here, nothing after it means anything. */\n"
	"static void\n"
	"check_cudnn(cudnnStatus_t status, const char *what)\n"
	"{\n"
	"\tif (status == CUDNN_STATUS_SUCCESS)\n"
	"\t\treturn;\n"
	"\tprint_cudnn_error(what, status);\n"
	"\tfprintf(stderr, \"repro: this worked in the recorded program; stopping\\n\");\n"
	"\texit(2);\n"
	"}\n"
	"\n"
	"/* A Set that failed in the recorded program (cuDNN may still have changed the descriptor): the same here. */\n"
	"static __attribute__((unused)) void\n"
	"check_failed(cudnnStatus_t status, int recorded, const char *what)\n"
	"{\n"
	"\tif ((int)status == recorded)\n"
	"\t\treturn;\n"
	"\tprint_cudnn_error(what, status);\n"
	"\tfprintf(stderr, \"repro: this failed with %%d in the recorded program; stopping\\n\", recorded);\n"
	"\texit(2);\n"
	"}\n"
	"\n"
	"static void\n"
	"check_cuda(cudaError_t err, const char *what, const char *name)\n"
	"{\n"
	"\tif (err == cudaSuccess)\n"
	"\t\treturn;\n"
	"\tfflush(stdout);\n"
	"\tfprintf(stderr, \"repro: %s%s%s: %s (%d)\\n\", what, name ? \" of \" : \"\", name ? name : \"\",\n"
	"\t\tcudaGetErrorString(err), (int)err);\n"
	"\texit(2);\n"
	"}\n"
	"\n"
	"static uint16_t\n"
	"to_half(float f)\n"
	"{\n"
	"\tuint32_t x, sign;\n"
	"\tint exp;\n"
	"\n"
	"\tmemcpy(&x, &f, sizeof(x));\n"
	"\tsign = (x >> 16) & 0x8000u;\n"
	"\tif ((x & 0x7fffffffu) > 0x7f800000u)\n"
	"\t\treturn (uint16_t)(sign | 0x7e00u);\n"
	"\texp = (int)((x >> 23) & 0xffu) - 127;\n"
	"\tif (exp > 15)\n"
	"\t\treturn (uint16_t)(sign | 0x7c00u);\n"
	"\tif (exp < -14)\n"
	"\t\treturn (uint16_t)sign;\t/* below the normal halves: zero */\n"
	"\treturn (uint16_t)(sign | (uint32_t)(exp + 15) << 10 | (x & 0x7fffffu) >> 13);\n"
	"}\n"
	"\n"
	"static uint16_t\n"
	"to_bf16(float f)\n"
	"{\n"
	"\tuint32_t x;\n"
	"\n"
	"\tmemcpy(&x, &f, sizeof(x));\n"
	"\treturn (uint16_t)(x >> 16);\n"
	"}\n"
	"\n"
	"/*\n"
	" * The inputs' data, which the records do not hold. pattern: element i is\n"
	" * ((i * 7919) %% 251 - 125) / 128, in [-0.98, 0.98], repeating every 251\n"
	" * elements (integer types: (i * 7919) %% 251 - 125, unsigned ones without the\n"
	" * - 125). random: xorshift32 from seed 12345, uniform in [-1, 1). nan: every\n"
	" * floating-point element is NaN; integer elements get the pattern. zero: 0.\n"
	" */\n"
	"static void\n"
	"fill_host(unsigned char *p, enum elem elem, size_t count, enum fill fill)\n"
	"{\n"
	"\tuint32_t state = 12345;\n"
	"\n"
	"\tfor (size_t i = 0; i < count; i++) {\n"
	"\t\tint step = (int)((i * 7919u) %% 251u);\n"
	"\t\tdouble v = (step - 125) / 128.0;\n"
	"\n"
	"\t\tif (fill == FILL_RANDOM) {\n"
	"\t\t\tstate ^= state << 13;\n"
	"\t\t\tstate ^= state >> 17;\n"
	"\t\t\tstate ^= state << 5;\n"
	"\t\t\tv = state / 2147483648.0 - 1.0;\n"
	"\t\t\tstep = (int)(state %% 251u);\n"
	"\t\t} else if (fill == FILL_NAN) {\n"
	"\t\t\tv = NAN;\n"
	"\t\t} else if (fill == FILL_ZERO) {\n"
	"\t\t\tv = 0;\n"
	"\t\t\tstep = 125;\n"
	"\t\t}\n"
	"\t\tswitch (elem) {\n"
	"\t\tcase ELEM_F32: {\n"
	"\t\t\tfloat f = (float)v;\n"
	"\n"
	"\t\t\tmemcpy(p + i * 4, &f, 4);\n"
	"\t\t\tbreak;\n"
	"\t\t}\n"
	"\t\tcase ELEM_F64:\n"
	"\t\t\tmemcpy(p + i * 8, &v, 8);\n"
	"\t\t\tbreak;\n"
	"\t\tcase ELEM_F16:\n"
	"\t\tcase ELEM_BF16: {\n"
	"\t\t\tuint16_t h = elem == ELEM_F16 ? to_half((float)v) : to_bf16((float)v);\n"
	"\n"
	"\t\t\tmemcpy(p + i * 2, &h, 2);\n"
	"\t\t\tbreak;\n"
	"\t\t}\n"
	"\t\tcase ELEM_I8:\n"
	"\t\t\tp[i] = (unsigned char)(signed char)(step - 125);\n"
	"\t\t\tbreak;\n"
	"\t\tcase ELEM_U8:\n"
	"\t\t\tp[i] = (unsigned char)(fill == FILL_ZERO ? 0 : step);\n"
	"\t\t\tbreak;\n"
	"\t\tcase ELEM_I32: {\n"
	"\t\t\tint32_t n = step - 125;\n"
	"\n"
	"\t\t\tmemcpy(p + i * 4, &n, 4);\n"
	"\t\t\tbreak;\n"
	"\t\t}\n"
	"\t\tcase ELEM_I64: {\n"
	"\t\t\tint64_t n = step - 125;\n"
	"\n"
	"\t\t\tmemcpy(p + i * 8, &n, 8);\n"
	"\t\t\tbreak;\n"
	"\t\t}\n"
	"\t\t}\n"
	"\t}\n"
	"}\n"
	"\n";

static const char buffer_steps[] =
	"/* Step 3: the device buffers, each at the recorded offset from a 256-byte boundary. */\n"
	"static void\n"
	"allocate_buffers(void)\n"
	"{\n"
	"\tfor (int i = 0; buffers[i]; i++) {\n"
	"\t\tstruct buffer *b = buffers[i];\n"
	"\n"
	"\t\tcheck_cuda(cudaMalloc(&b->base, b->bytes + b->offset + 1), \"cudaMalloc\", b->name);\n"
	"\t\tb->ptr = (char *)b->base + b->offset;\n"
	"\t}\n"
	"}\n"
	"\n"
	"/* Step 4: the inputs get the fill, the rest zeros. */\n"
	"static void\n"
	"fill_buffers(enum fill fill)\n"
	"{\n"
	"\tfor (int i = 0; buffers[i]; i++) {\n"
	"\t\tstruct buffer *b = buffers[i];\n"
	"\t\tunsigned char *host;\n"
	"\n"
	"\t\tcheck_cuda(cudaMemset(b->base, 0, b->bytes + b->offset + 1), \"cudaMemset\", b->name);\n"
	"\t\tif (!b->input || fill == FILL_ZERO || !b->count)\n"
	"\t\t\tcontinue;\n"
	"\t\thost = calloc(1, b->bytes);\n"
	"\t\tif (!host) {\n"
	"\t\t\tfprintf(stderr, \"repro: %s: out of memory\\n\", b->name);\n"
	"\t\t\texit(2);\n"
	"\t\t}\n"
	"\t\tfill_host(host, b->elem, b->count, fill);\n"
	"\t\tcheck_cuda(cudaMemcpy(b->ptr, host, b->bytes, cudaMemcpyHostToDevice), \"cudaMemcpy\", b->name);\n"
	"\t\tfree(host);\n"
	"\t}\n"
	"}\n"
	"\n"
	"\n";

static const char print_output_step[] =
	"/* What an output holds: for floating-point data sum, min, max and NaNs; else a hash of the bytes. */\n"
	"static void\n"
	"print_output(const struct buffer *b)\n"
	"{\n"
	"\tunsigned char *host = malloc(b->bytes ? b->bytes : 1);\n"
	"\tdouble sum = 0, lo = INFINITY, hi = -INFINITY;\n"
	"\tsize_t nans = 0;\n"
	"\tuint64_t hash = 1469598103934665603u;\n"
	"\n"
	"\tif (!host)\n"
	"\t\treturn;\n"
	"\tcheck_cuda(cudaMemcpy(host, b->ptr, b->bytes, cudaMemcpyDeviceToHost), \"cudaMemcpy\", b->name);\n"
	"\tif (b->elem == ELEM_F32 || b->elem == ELEM_F64) {\n"
	"\t\tfor (size_t i = 0; i < b->count; i++) {\n"
	"\t\t\tdouble v;\n"
	"\n"
	"\t\t\tif (b->elem == ELEM_F32) {\n"
	"\t\t\t\tfloat f;\n"
	"\n"
	"\t\t\t\tmemcpy(&f, host + i * 4, 4);\n"
	"\t\t\t\tv = f;\n"
	"\t\t\t} else {\n"
	"\t\t\t\tmemcpy(&v, host + i * 8, 8);\n"
	"\t\t\t}\n"
	"\t\t\tif (isnan(v)) {\n"
	"\t\t\t\tnans++;\n"
	"\t\t\t\tcontinue;\n"
	"\t\t\t}\n"
	"\t\t\tsum += v;\n"
	"\t\t\tlo = v < lo ? v : lo;\n"
	"\t\t\thi = v > hi ? v : hi;\n"
	"\t\t}\n"
	"\t\tprintf(\"%s: %zu values, sum %.6g, min %.6g, max %.6g, %zu NaN\\n\", b->name, b->count, sum,\n"
	"\t\t       b->count > nans ? lo : 0, b->count > nans ? hi : 0, nans);\n"
	"\t} else {\n"
	"\t\tfor (size_t i = 0; i < b->bytes; i++)\n"
	"\t\t\thash = (hash ^ host[i]) * 1099511628211u;\n"
	"\t\tprintf(\"%s: %zu bytes, FNV-1a %016llx\\n\", b->name, b->bytes, (unsigned long long)hash);\n"
	"\t}\n"
	"\tfree(host);\n"
	"}\n"
	"\n";

static int
write_call(FILE *out, const struct repro_plan *p)
{
	const struct repro_fn *f = p->fn;
	json_t *args = json_object_get(p->record, "args");
	const char *perf = perf_type(f);
	long long n = requested(f, args);

	if (perf && (n < 1 || n > 1000)) {
		complain("repro: %s: a requestedAlgoCount out of 1..1000", f->name);
		return -1;
	}
	for (int i = 0; i < f->nparams; i++) {
		if (f->params[i].role == RP_OUT_INT)
			fputs("static int returned;\n", out);
		else if (f->params[i].role == RP_OUT_SIZE)
			fputs("static size_t size;\n", out);
		else if (f->params[i].role == RP_PERF)
			fprintf(out, "static %s perf[%lld];\n", perf, n);
	}
	fprintf(out, "\n/* Step 6: the call. */\nstatic cudnnStatus_t\nrun_call(void)\n{\n");
	if (perf)
		comment_perf(out, p->record);
	comment_call(out, "\t", f, args);
	fprintf(out, "\treturn %s(", f->name);
	if (write_args(out, p, f, args, "\t    ", "") != 0)
		return -1;
	fputs(");\n}\n\n", out);
	return 0;
}

/* What the call gave back, beside its status. */
static void
write_results(FILE *out, const struct repro_plan *p)
{
	const struct repro_fn *f = p->fn;
	json_t *args = json_object_get(p->record, "args");

	fputs("/* Step 7: what the call gave back. */\nstatic void\nprint_results(void)\n{\n", out);
	for (int i = 0; p->graph_calls && i < p->nbufs; i++)
		if (!p->bufs[i].input && strcmp(p->bufs[i].users, "workspace") != 0)
			fprintf(out, "\tprint_output(&%s);\n", p->bufs[i].var);
	for (int i = 0; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];
		json_t *rec = json_object_get(json_object_get(args, q->name), "value");

		if (q->role == RP_OUT_SIZE) {
			fprintf(out, "\tprintf(\"%s: %%zu", q->name);
			if (json_is_integer(rec))
				fprintf(out, " (recorded: %lld)", (long long)json_integer_value(rec));
			fputs("\\n\", size);\n", out);
		} else if (q->role == RP_OUT_INT) {
			fprintf(out, "\tprintf(\"%s: %%d", q->name);
			if (json_is_integer(rec))
				fprintf(out, " (recorded: %lld)", (long long)json_integer_value(rec));
			fputs("\\n\", returned);\n", out);
		} else if (q->role == RP_PERF) {
			fputs("\tfor (int i = 0; i < returned; i++)\n"
			      "\t\tprintf(\"  %d: algo %d, %s, %.3f ms, %zu bytes of workspace\\n\", i, (int)perf[i].algo,\n"
			      "\t\t       cudnnGetErrorString(perf[i].status), perf[i].time, perf[i].memory);\n", out);
		}
	}
	for (int i = 0; i < p->nbufs; i++)
		for (int k = 0; k < f->nparams; k++)
			if (f->params[k].role == RP_DATA_OUT &&
			    buf_by_addr(p, json_object_get(args, f->params[k].name)) == &p->bufs[i]) {
				fprintf(out, "\tprint_output(&%s);\n", p->bufs[i].var);
				break;
			}
	fputs("}\n\n", out);
}

static const char timing[] =
	"/* --time: the call again, 10 times, timed with CUDA events. */\n"
	"static void\n"
	"time_call(void)\n"
	"{\n"
	"\tcudaEvent_t start, stop;\n"
	"\tfloat ms = 0;\n"
	"\tint runs = 10;\n"
	"\n"
	"\tcheck_cuda(cudaEventCreate(&start), \"cudaEventCreate\", NULL);\n"
	"\tcheck_cuda(cudaEventCreate(&stop), \"cudaEventCreate\", NULL);\n"
	"\tcheck_cuda(cudaEventRecord(start, 0), \"cudaEventRecord\", NULL);\n"
	"\tfor (int i = 0; i < runs; i++)\n"
	"\t\tcheck_cudnn(run_call(), \"the call, timed\");\n"
	"\tcheck_cuda(cudaEventRecord(stop, 0), \"cudaEventRecord\", NULL);\n"
	"\tcheck_cuda(cudaEventSynchronize(stop), \"cudaEventSynchronize\", NULL);\n"
	"\tcheck_cuda(cudaEventElapsedTime(&ms, start, stop), \"cudaEventElapsedTime\", NULL);\n"
	"\tprintf(\"time: %.3f ms per call over %d runs\\n\", ms / runs, runs);\n"
	"\tcudaEventDestroy(start);\n"
	"\tcudaEventDestroy(stop);\n"
	"}\n"
	"\n";

static void
write_main(FILE *out, const struct repro_plan *p)
{
	int create = strcmp(p->fn->name, "cudnnCreate") == 0;
	json_t *cuda_error = json_object_get(p->record, "cuda_error");

	fprintf(out, "int\nmain(int argc, char **argv)\n{\n"
		"\tenum fill fill = FILL_%s;\n\tint timing = %d, cuda_same = 1;\n\tcudnnStatus_t status;\n\n",
		p->fill == FILL_NAN ? "NAN" : p->fill == FILL_ZERO ? "ZERO" : p->fill == FILL_RANDOM ? "RANDOM" :
		"PATTERN", p->time_default);
	fputs("\tfor (int i = 1; i < argc; i++) {\n"
	      "\t\tif (strcmp(argv[i], \"--time\") == 0) {\n"
	      "\t\t\ttiming = 1;\n"
	      "\t\t\tcontinue;\n"
	      "\t\t}\n"
	      "\t\tif (strcmp(argv[i], \"--fill\") == 0 && i + 1 < argc) {\n"
	      "\t\t\tint k = 0;\n"
	      "\n"
	      "\t\t\twhile (k < 4 && strcmp(argv[i + 1], fill_names[k]) != 0)\n"
	      "\t\t\t\tk++;\n"
	      "\t\t\tif (k < 4) {\n"
	      "\t\t\t\tfill = (enum fill)k;\n"
	      "\t\t\t\ti++;\n"
	      "\t\t\t\tcontinue;\n"
	      "\t\t\t}\n"
	      "\t\t}\n"
	      "\t\tfprintf(stderr, \"usage: %s [--time] [--fill pattern|nan|zero|random]\\n\", argv[0]);\n"
	      "\t\treturn 2;\n"
	      "\t}\n", out);
	fputs("\tprintf(\"replaying ", out);
	string_text(out, p->fn->name);
	fputs(" (recorded: ", out);
	string_text(out, p->status_name ? p->status_name : "status");
	fprintf(out, ", %lld), cuDNN %%zu, inputs: %%s\\n\", cudnnGetVersion(), fill_names[fill]);\n", p->status);
	if (create) {
		fputs("\t/* recorded: cudnnCreate(&handle) */\n"
		      "\tstatus = cudnnCreate(&handle);\n", out);
	} else {
		fputs("\tcreate_handle();\n", out);
		for (int i = 0; i < p->ndescs; i++)
			fprintf(out, "\tcreate_%s();\n", p->descs[i].var);
		fputs("\tallocate_buffers();\n\tfill_buffers(fill);\n", out);
		if (p->graph_calls)
			repro_graph_write_main(p, out);
		if (p->search)
			fputs("\trun_search();\n", out);
		fputs("\tstatus = run_call();\n", out);
		if (json_is_integer(cuda_error) && p->status == 0)
			/* The program's GPU failed after the call: the error it gave is part of what is replayed. */
			fprintf(out, "\tif (status == CUDNN_STATUS_SUCCESS) {\n"
				"\t\tcudaError_t err = cudaDeviceSynchronize();\n\n"
				"\t\tprintf(\"cudaDeviceSynchronize after the call: %%s (%%d)%%s\\n\", cudaGetErrorString(err),"
				" (int)err,\n\t\t       (int)err == %lld ? \", the same CUDA error as recorded\" :"
				" \", NOT the recorded CUDA error, %lld\");\n"
				"\t\tcuda_same = (int)err == %lld;\n\t}\n",
				(long long)json_integer_value(cuda_error), (long long)json_integer_value(cuda_error),
				(long long)json_integer_value(cuda_error));
		else
			fputs("\tif (status == CUDNN_STATUS_SUCCESS)\n"
			      "\t\tcheck_cuda(cudaDeviceSynchronize(), \"cudaDeviceSynchronize after the call\", NULL);\n",
			      out);
	}
	fprintf(out, "\tprint_status(stdout, \"%s\", status);\n"
		"\tif ((int)status == RECORDED_STATUS)\n"
		"\t\tprintf(\", the same status as recorded\\n\");\n"
		"\telse\n"
		"\t\tprintf(\", NOT the recorded status, %%d\\n\", RECORDED_STATUS);\n", p->fn->name);
	if (!create) {
		fputs("\tif (status == CUDNN_STATUS_SUCCESS) {\n\t\tprint_results();\n"
		      "\t\tif (timing)\n\t\t\ttime_call();\n\t}\n", out);
		for (int i = p->ndescs - 1; i >= 0; i--)
			fprintf(out, "\t%s(%s);\n", repro_kinds[p->descs[i].kind].destroy, p->descs[i].var);
		fputs("\tfor (int i = 0; buffers[i]; i++)\n\t\tcudaFree(buffers[i]->base);\n", out);
	} else {
		fputs("\t(void)fill;\n\t(void)timing;\n", out);
	}
	fputs("\tif (handle)\n\t\tcudnnDestroy(handle);\n", out);
	fputs("\treturn (int)status == RECORDED_STATUS && cuda_same ? 0 : 1;\n}\n", out);
}

int
repro_write(const struct repro_plan *p, FILE *out)
{
	int create = strcmp(p->fn->name, "cudnnCreate") == 0;

	write_header_comment(out, p);
	fputs(prelude, out);
	fputs(repro_print_status, out);
	fputs("\n", out);
	/* Written with %% where the program has %, so that its text reads as C does. */
	for (const char *c = prelude_data; !create && *c; c++) {
		if (c[0] == '%' && c[1] == '%')
			c++;
		fputc(*c, out);
	}
	fprintf(out, "#define RECORDED_STATUS %lld\t/* ", p->status);
	repro_comment(out, p->status_name);
	fputs(" */\n\n", out);
	fputs("/* The handle and the descriptors, named after their ids in the records. */\n"
	      "static cudnnHandle_t handle;\n", out);
	for (int i = 0; i < p->ndescs; i++)
		fprintf(out, "static %s %s;\t/* %s */\n", repro_kinds[p->descs[i].kind].ctype, p->descs[i].var,
			p->descs[i].id);
	if (!create) {
		int scales = 0, outputs = 0;

		for (int i = 0; p->graph_calls && i < p->nbufs; i++)
			outputs |= !p->bufs[i].input && strcmp(p->bufs[i].users, "workspace") != 0;
		for (int i = 0; i < p->fn->nparams; i++) {
			scales |= p->fn->params[i].role == RP_ALPHA;
			outputs |= p->fn->params[i].role == RP_DATA_OUT &&
				   buf_by_addr(p, json_object_get(json_object_get(p->record, "args"),
								  p->fn->params[i].name));
		}
		if (scales)
			fputs(double_scales(p) ? "static const double one = 1.0, zero = 0.0;\n" :
			      "static const float one = 1.0f, zero = 0.0f;\n", out);
		fputs("\n/* The buffers, named after the first argument that uses each. */\n", out);
		for (int i = 0; i < p->nbufs; i++) {
			const struct repro_buffer *b = &p->bufs[i];

			fprintf(out, "static struct buffer %s = { \"", b->var);
			string_text(out, b->users);
			fprintf(out, "\", %lluu, %uu, %d, %s, %lluu, NULL, NULL };\n", b->bytes, b->offset, b->input,
				repro_elem_kind(b->dtype), b->dtype && repro_elem_size(b->dtype) ? b->elems : 0);
		}
		fputs("static struct buffer *const buffers[] = { ", out);
		for (int i = 0; i < p->nbufs; i++)
			fprintf(out, "&%s, ", p->bufs[i].var);
		fputs("NULL };\n\n", out);
		fputs("/* Step 1: the handle. */\nstatic void\ncreate_handle(void)\n{\n", out);
		if (p->graph_calls && p->graph_no_handle) {
			fputs("\t/* None of the calls below takes a handle. */\n\thandle = NULL;\n", out);
		} else if (p->handle_null) {
			fputs("\t/* The program passed a NULL handle (its cudnnCreate had failed): so does this one. */\n"
			      "\thandle = NULL;\n", out);
		} else {
			fputs("\tcudnnStatus_t status = cudnnCreate(&handle);\n\n"
			      "\tif (status == CUDNN_STATUS_SUCCESS)\n\t\treturn;\n"
			      "\tprint_cudnn_error(\"cudnnCreate\", status);\n"
			      "\tfprintf(stderr, \"repro: the recorded call ran on a handle, and cuDNN gives none here:"
			      " is there a GPU, and its driver?\\n\");\n"
			      "\texit(2);\n", out);
		}
		fputs("}\n\n", out);
		fputs("/* Step 2: the descriptors. */\n", out);
		for (int i = 0; i < p->ndescs; i++)
			if (write_descriptor(out, &p->descs[i]) != 0)
				return -1;
		fputs(buffer_steps, out);
		if (outputs)
			fputs(print_output_step, out);
		if (p->search && write_search(out, p) != 0)
			return -1;
		if (p->graph_calls ? repro_graph_write(p, out) != 0 : write_call(out, p) != 0)
			return -1;
		write_results(out, p);
		fputs(timing, out);
	}
	write_main(out, p);
	return 0;
}
