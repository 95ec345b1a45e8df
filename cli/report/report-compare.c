/*
 * --compare: two runs, each read and modelled on its own, side by side,
 * for the question a second run asks of the first: per function, the time
 * in each, and per convolution signature, whether the other cuDNN chose
 * another algorithm or engine.
 */
#include "report-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comparing two runs ---- */

static long long
algo_records(struct report *r)
{
	return r->algo_rec;
}

/* One run's choices per signature: {api signature: {"choices": [...], "calls", "time_ns"}}. */
static json_t *
signature_rows(struct report *r)
{
	struct rmodel *model = report_model_new(r);
	json_t *rows = report_must(json_object()), *g;
	size_t i;

	json_array_foreach(json_object_get(model->j, "signatures"), i, g) {
		char *key;
		json_t *row;
		long long t = report_jget_int(g, "gpu_timed") ? report_jget_int(g, "gpu_ns") : report_jget_int(g, "host_ns");

		if (asprintf(&key, "%s %s", report_jget_str(g, "api", "?"), report_jget_str(g, "signature", "?")) < 0)
			report_out_of_memory();
		row = json_object_get(rows, key);
		if (!row) {
			row = report_must(json_object());
			report_jset(row, "choices", report_must(json_array()));
			report_jset(row, "calls", json_integer(0));
			report_jset(row, "time_ns", json_integer(0));
			report_jset(rows, key, row);
		}
		report_jpush(json_object_get(row, "choices"), json_string(report_jget_str(g, "choice", "?")));
		report_jset(row, "calls", json_integer(report_sat_add(report_jget_int(row, "calls"), report_jget_int(g, "calls"))));
		report_jset(row, "time_ns", json_integer(report_sat_add(report_jget_int(row, "time_ns"), t)));
		free(key);
	}
	report_model_free(model);
	return rows;
}

/*
 * Per convolution signature, what each run chose and how long it took: the
 * "did the other cuDNN pick another algorithm for this layer" question. Null
 * when neither run holds algo records.
 */
static json_t *
compare_signatures(struct report *a, struct report *b)
{
	long long na = algo_records(a), nb = algo_records(b);
	json_t *s, *ra, *rb, *table, *v;
	const char *key;

	if (!na && !nb)
		return json_null();
	s = report_must(json_object());
	report_jset(s, "algo_records_a", json_integer(na));
	report_jset(s, "algo_records_b", json_integer(nb));
	ra = signature_rows(a);
	rb = signature_rows(b);
	table = report_must(json_array());
	json_object_foreach(ra, key, v) {
		json_t *row = report_must(json_object()), *w = json_object_get(rb, key);

		report_jset(row, "signature", json_string(key));
		report_jset(row, "a", json_incref(v));
		report_jset(row, "b", w ? json_incref(w) : json_null());
		report_jset(row, "changed", json_boolean(!w || !json_equal(json_object_get(v, "choices"),
								       json_object_get(w, "choices"))));
		report_jpush(table, row);
	}
	json_object_foreach(rb, key, v) {
		json_t *row;

		if (json_object_get(ra, key))
			continue;
		row = report_must(json_object());
		report_jset(row, "signature", json_string(key));
		report_jset(row, "a", json_null());
		report_jset(row, "b", json_incref(v));
		report_jset(row, "changed", json_true());
		report_jpush(table, row);
	}
	report_jset(s, "table", table);
	json_decref(ra);
	json_decref(rb);
	return s;
}

static void
print_choices(FILE *out, json_t *side)
{
	json_t *c;
	size_t i;
	char t[32];

	if (!json_is_object(side)) {
		fputs("not run", out);
		return;
	}
	json_array_foreach(json_object_get(side, "choices"), i, c)
		fprintf(out, "%s%s", i ? " + " : "", json_string_value(c));
	report_fmt_ns(t, sizeof(t), report_jget_int(side, "time_ns"));
	fprintf(out, " (%lld call%s, %s)", report_jget_int(side, "calls"), report_jget_int(side, "calls") == 1 ? "" : "s", t);
}

static json_t *
run_json(struct rmodel *model, const char *name)
{
	json_t *o = report_must(json_object()), *vars, *v, *p, *versions = report_must(json_array());
	long long total = 0;
	size_t i;

	report_jset(o, "input", json_string(name));
	report_jset(o, "processes", json_integer((json_int_t)model->n));
	json_array_foreach(json_object_get(model->j, "functions"), i, p)
		total = report_sat_add(total, report_jget_int(p, "total_ns"));
	/* The sum of the processes' calls, as their entries say them (report_model_add). */
	report_jset(o, "calls", json_integer(model->r->calls));
	report_jset(o, "total_ns", json_integer(total));
	vars = json_object_get(json_object_get(model->j, "cudnn"), "variants");
	json_array_foreach(vars, i, v) {
		json_t *e = report_must(json_object());

		report_jset(e, "library", json_deep_copy(json_object_get(v, "library")));
		report_jset(e, "processes", json_integer(report_jget_int(v, "processes")));
		report_jpush(versions, e);
	}
	report_jset(o, "cudnn", versions);
	return o;
}

struct cmp_row {
	const char *fn;
	json_t *a, *b;
	long long key;
};

static int
cmp_row_cmp(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return strcmp(a->fn, b->fn);
}

static json_t *
compare_model(struct report *ra, const char *name_a, struct report *rb, const char *name_b)
{
	struct rmodel *ma = report_model_new(ra), *mb = report_model_new(rb);
	json_t *c = report_must(json_object()), *arr, *f;
	json_t *fa = json_object_get(ma->j, "functions"), *fb = json_object_get(mb->j, "functions");
	size_t na = json_array_size(fa), nb = json_array_size(fb), n = 0, i;
	struct cmp_row *rows = report_xcalloc(na + nb, sizeof(*rows));
	struct map seen = { 0 };

	report_jset(c, "cudnnspy_compare", json_integer(1));
	report_jset(c, "a", run_json(ma, name_a));
	report_jset(c, "b", run_json(mb, name_b));
	json_array_foreach(fa, i, f) {
		const char *fn = report_jget_str(f, "fn", "?");

		rows[n].fn = fn;
		rows[n].a = f;
		report_map_put(&seen, fn, strlen(fn), &rows[n]);
		n++;
	}
	json_array_foreach(fb, i, f) {
		const char *fn = report_jget_str(f, "fn", "?");
		struct cmp_row *row = report_map_get(&seen, fn, strlen(fn));

		if (!row) {
			row = &rows[n++];
			row->fn = fn;
			report_map_put(&seen, fn, strlen(fn), row);
		}
		row->b = f;
	}
	for (i = 0; i < n; i++) {
		long long ta = rows[i].a ? report_jget_int(rows[i].a, "total_ns") : 0;
		long long tb = rows[i].b ? report_jget_int(rows[i].b, "total_ns") : 0;

		rows[i].key = ta > tb ? ta : tb;
	}
	qsort(rows, n, sizeof(*rows), cmp_row_cmp);
	arr = report_must(json_array());
	for (i = 0; i < n; i++) {
		json_t *row = report_must(json_object()), *sa, *sb;
		long long ta = rows[i].a ? report_jget_int(rows[i].a, "total_ns") : 0;
		long long tb = rows[i].b ? report_jget_int(rows[i].b, "total_ns") : 0;

		report_jset(row, "fn", json_string(rows[i].fn));
		sa = report_must(json_object());
		report_jset(sa, "calls", json_integer(rows[i].a ? report_jget_int(rows[i].a, "calls") : 0));
		report_jset(sa, "total_ns", json_integer(ta));
		sb = report_must(json_object());
		report_jset(sb, "calls", json_integer(rows[i].b ? report_jget_int(rows[i].b, "calls") : 0));
		report_jset(sb, "total_ns", json_integer(tb));
		report_jset(row, "a", sa);
		report_jset(row, "b", sb);
		report_jset(row, "ratio", ta > 0 ? json_real((double)tb / (double)ta) : json_null());
		report_jpush(arr, row);
	}
	report_jset(c, "functions", arr);
	report_jset(c, "signatures", compare_signatures(ra, rb));
	report_map_free(&seen, NULL);
	free(rows);
	report_model_free(ma);
	report_model_free(mb);
	return c;
}

static void
print_run_versions(FILE *out, json_t *run)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(run, "cudnn"), i, v) {
		long long np = report_jget_int(v, "processes");

		fputs(i ? "\n     " : " ", out);
		report_print_library(out, json_object_get(v, "library"));
		if (json_array_size(json_object_get(run, "cudnn")) > 1)
			fprintf(out, " (%lld process%s)", np, np == 1 ? "" : "es");
	}
	fputc('\n', out);
}

int
report_write_compare(struct report *a, const char *name_a, struct report *b, const char *name_b,
		     FILE *out, int json)
{
	json_t *c = compare_model(a, name_a, b, name_b), *f, *sig;
	size_t i;

	if (json) {
		json_dumpf(c, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
		fputc('\n', out);
		json_decref(c);
		return report_finish_output(out);
	}
	fprintf(out, "cudnnspy report --compare\n");
	fprintf(out, "  A: %s (%lld process%s, %lld calls):", report_jget_str(json_object_get(c, "a"), "input", "?"),
		report_jget_int(json_object_get(c, "a"), "processes"), report_jget_int(json_object_get(c, "a"), "processes") == 1 ? "" : "es",
		report_jget_int(json_object_get(c, "a"), "calls"));
	print_run_versions(out, json_object_get(c, "a"));
	fprintf(out, "  B: %s (%lld process%s, %lld calls):", report_jget_str(json_object_get(c, "b"), "input", "?"),
		report_jget_int(json_object_get(c, "b"), "processes"), report_jget_int(json_object_get(c, "b"), "processes") == 1 ? "" : "es",
		report_jget_int(json_object_get(c, "b"), "calls"));
	print_run_versions(out, json_object_get(c, "b"));
	fprintf(out, "\nFunctions by total time\n");
	fprintf(out, "  %-44s %10s %10s %12s %12s %8s\n", "function", "calls A", "calls B", "total A",
		"total B", "B/A");
	json_array_foreach(json_object_get(c, "functions"), i, f) {
		json_t *sa = json_object_get(f, "a"), *sb = json_object_get(f, "b"), *ratio;
		char ta[32], tb[32], rs[32];

		report_fmt_ns(ta, sizeof(ta), report_jget_int(sa, "total_ns"));
		report_fmt_ns(tb, sizeof(tb), report_jget_int(sb, "total_ns"));
		ratio = json_object_get(f, "ratio");
		if (json_is_real(ratio))
			snprintf(rs, sizeof(rs), "%.2f", json_real_value(ratio));
		else
			snprintf(rs, sizeof(rs), "-");
		fprintf(out, "  %-44s %10lld %10lld %12s %12s %8s\n", report_jget_str(f, "fn", "?"),
			report_jget_int(sa, "calls"), report_jget_int(sb, "calls"), ta, tb, rs);
	}
	sig = json_object_get(c, "signatures");
	if (json_is_object(sig)) {
		json_t *row, *table = json_object_get(sig, "table");
		size_t changed = 0;

		json_array_foreach(table, i, row)
			changed += json_is_true(json_object_get(row, "changed"));
		fprintf(out, "\nConvolution and graph signatures: %zu, %zu with another choice in B\n", json_array_size(table),
			changed);
		if (!json_array_size(table))
			fprintf(out, "  (%lld algo records in A, %lld in B, none of them usable)\n",
				report_jget_int(sig, "algo_records_a"), report_jget_int(sig, "algo_records_b"));
		json_array_foreach(table, i, row) {
			fprintf(out, "  %s%s\n    A: ", json_is_true(json_object_get(row, "changed")) ? "CHANGED " : "",
				report_jget_str(row, "signature", "?"));
			print_choices(out, json_object_get(row, "a"));
			fputs("\n    B: ", out);
			print_choices(out, json_object_get(row, "b"));
			fputc('\n', out);
		}
	}
	json_decref(c);
	return report_finish_output(out);
}
