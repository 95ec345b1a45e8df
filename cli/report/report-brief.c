/*
 * The job in a few lines, for `cudnnspy run` to say on stderr after the
 * program, as heaptrack's launcher prints its analysis: what only the
 * records of every process taken together show (processes that loaded
 * different copies, the findings and failures of the whole job once, the
 * processes that ended without a summary), each line prefixed as the
 * spy's own. Made from the model, as the full text is.
 */
#include "report-int.h"

#include <string.h>

/* At most this many processes, findings and failure groups are named; the full report has the rest. */
#define BRIEF_PROCS 8
#define BRIEF_FINDINGS 6
#define BRIEF_GROUPS 5
#define BRIEF_FRAMES 4

static const char prefix[] = "cudnnspy: ";
/* A failure group's line, under its heading. */
static const char group_prefix[] = "cudnnspy:     ";

static void
brief_stack(FILE *out, json_t *first)
{
	json_t *stack = json_object_get(first, "stack"), *x;
	size_t i;

	if (json_array_size(json_object_get(first, "python"))) {
		fprintf(out, "%s      python", prefix);
		report_print_python(out, json_object_get(first, "python"), BRIEF_FRAMES);
		fputc('\n', out);
	}
	if (!json_array_size(stack))
		return;
	fprintf(out, "%s      at", prefix);
	json_array_foreach(stack, i, x) {
		if (i >= BRIEF_FRAMES) {
			fputs(" < ...", out);
			break;
		}
		report_print_frame(out, x, i);
	}
	fputc('\n', out);
}

static void
brief_processes(struct rmodel *m, FILE *out)
{
	for (size_t i = 0; i < m->n; i++) {
		json_t *p;

		if (i >= BRIEF_PROCS) {
			fprintf(out, "%s  and %zu more process%s\n", prefix, m->n - i, m->n - i == 1 ? "" : "es");
			break;
		}
		p = report_model_process(m, i);
		fprintf(out, "%s  %s", prefix, report_jget_str(p, "label", "?"));
		if (json_is_string(json_object_get(p, "program")))
			fprintf(out, " (%s)", report_jget_str(p, "program", "?"));
		fputs(": ", out);
		report_print_library(out, json_object_get(p, "library"));
		fprintf(out, ", %lld call%s, %lld failure%s", report_jget_int(p, "calls"),
			report_jget_int(p, "calls") == 1 ? "" : "s", report_jget_int(p, "failures"),
			report_jget_int(p, "failures") == 1 ? "" : "s");
		if (!json_is_true(json_object_get(p, "summary")))
			fputs(", no summary", out);
		else if (!json_is_true(json_object_get(p, "exited")))
			fputs(", ended without exit (its summary from the counters it left)", out);
		fputc('\n', out);
		json_decref(p);
	}
}

static void
brief_cudnn(struct rmodel *m, FILE *out)
{
	json_t *c = json_object_get(m->j, "cudnn"), *v;
	size_t i;

	if (!json_is_true(json_object_get(c, "differ")))
		return;
	fprintf(out, "%s  DIFFERENT cuDNN builds across processes (library path or version):\n", prefix);
	json_array_foreach(json_object_get(c, "variants"), i, v)
		report_print_variant(m, out, prefix, v);
}

static void
brief_findings(struct rmodel *m, FILE *out)
{
	json_t *fs = json_object_get(m->j, "findings"), *f;
	size_t i, n = 0, shown = 0;

	json_array_foreach(fs, i, f)
		n += json_is_string(json_object_get(f, "id"));
	if (!n)
		return;
	fprintf(out, "%s  findings: %zu\n", prefix, n);
	json_array_foreach(fs, i, f) {
		long long np = report_jget_int(f, "processes"), of = report_jget_int(f, "of");

		if (!json_is_string(json_object_get(f, "id")))
			continue;
		if (shown++ >= BRIEF_FINDINGS) {
			fprintf(out, "%s    and %zu more\n", prefix, n - BRIEF_FINDINGS);
			break;
		}
		fprintf(out, "%s    %s %s: %s", prefix, report_jget_str(f, "severity", "?"), report_jget_str(f, "id", "?"),
			report_jget_str(f, "message", ""));
		if (of > 1 && np == of)
			fputs(of == 2 ? " (in both processes)" : " (in all processes)", out);
		else if (of > 1) {
			fputs(" (in ", out);
			report_print_who(m, out, json_object_get(f, "who"));
			fputc(')', out);
		}
		fputc('\n', out);
	}
}

/* The failures that are not probing, the first BRIEF_GROUPS groups with their stacks. */
static void
brief_failures(struct rmodel *m, FILE *out, const struct report_failure_counts *c)
{
	json_t *groups = json_object_get(json_object_get(m->j, "failures"), "groups"), *g;
	size_t i, shown = 0;

	if (!c->failures)
		return;
	fprintf(out, "%s  failures: %lld in %zu group%s\n", prefix, c->failures, c->groups, c->groups == 1 ? "" : "s");
	json_array_foreach(groups, i, g) {
		if (json_is_true(json_object_get(g, "probing")))
			continue;
		if (shown++ >= BRIEF_GROUPS) {
			fprintf(out, "%s    and %zu more group%s\n", prefix, c->groups - BRIEF_GROUPS,
				c->groups - BRIEF_GROUPS == 1 ? "" : "s");
			break;
		}
		report_print_group_line(out, group_prefix, g);
		if (json_is_true(json_object_get(g, "only_some"))) {
			fprintf(out, " on %lld of %lld processes: ", report_jget_int(g, "processes"), report_jget_int(g, "of"));
			report_print_who(m, out, json_object_get(g, "who"));
		}
		fputc('\n', out);
		brief_stack(out, json_object_get(g, "first"));
	}
}

/* The probing after them, a line and one per group: expected answers, said so that they are not taken for failures. */
static void
brief_probing(struct rmodel *m, FILE *out, const struct report_failure_counts *c)
{
	json_t *groups = json_object_get(json_object_get(m->j, "failures"), "groups"), *g;
	size_t i, shown = 0;

	if (!c->probing)
		return;
	fprintf(out, "%s  probing: ", prefix);
	report_print_probing_heading(out, c);
	fputc('\n', out);
	json_array_foreach(groups, i, g) {
		if (!json_is_true(json_object_get(g, "probing")))
			continue;
		if (shown++ >= BRIEF_GROUPS) {
			fprintf(out, "%s    and %zu more group%s\n", prefix, c->probing_groups - BRIEF_GROUPS,
				c->probing_groups - BRIEF_GROUPS == 1 ? "" : "s");
			break;
		}
		report_print_group_line(out, group_prefix, g);
		fputc('\n', out);
	}
}

int
report_write_brief(struct report *r, FILE *out, const char *where, int only_news)
{
	struct rmodel *m = report_model_new(r);
	size_t np = m->n, ended = report_model_unfinished(m);
	struct report_failure_counts c;
	int said = 0;

	/* One process that said its own summary at exit: the records hold nothing it did not say. */
	if (np && (!only_news || np > 1 || ended)) {
		fprintf(out, "%safter the program, from the records of %zu process%s", prefix, np, np == 1 ? "" : "es");
		if (ended)
			fprintf(out, " (%zu ended without exit: killed, _exit, or replaced by exec)", ended);
		fputs(":\n", out);
		brief_processes(m, out);
		brief_cudnn(m, out);
		brief_findings(m, out);
		report_failure_counts(json_object_get(m->j, "failures"), &c);
		brief_failures(m, out, &c);
		brief_probing(m, out, &c);
		fprintf(out, "%s  the whole report: cudnnspy report %s\n", prefix, where);
		said = 1;
	}
	report_model_free(m);
	fflush(out);
	return said;
}
