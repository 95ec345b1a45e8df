/*
 * Arguments as a person reads them, the way the spy's stderr line shows
 * them (descriptors by their id, pointers by what they point to), cut to a
 * size: the first occurrence of a failure and a Chrome event show the same
 * rendering, so the reader and the trace both take it from here.
 */
#include "report-int.h"

#include <string.h>

/* The longest rendering kept. */
#define ARGS_CAP 600

static void
render_clean(struct sbuf *b, const char *s, size_t len)
{
	char *c = report_clean_dup(s, len, ARGS_CAP);

	report_sb_puts(b, c);
	free(c);
}

/* A descriptor is its id and what it describes; a pointer is its address and value. */
static void
render_object(struct sbuf *b, json_t *v, int depth)
{
	json_t *id = json_object_get(v, "id"), *ptr = json_object_get(v, "ptr");
	const char *key;
	json_t *x;
	int n = 0;

	if (json_is_string(id)) {
		const char *desc = report_get_str(v, "desc");
		json_t *set = json_object_get(v, "set");

		render_clean(b, json_string_value(id), json_string_length(id));
		if (desc) {
			report_sb_puts(b, "[");
			render_clean(b, desc, strlen(desc));
			report_sb_puts(b, "]");
		} else if (json_is_object(set) && report_get_str(set, "fn")) {
			report_sb_puts(b, "[set by ");
			render_clean(b, report_get_str(set, "fn"), strlen(report_get_str(set, "fn")));
			report_sb_puts(b, "]");
		}
		return;
	}
	if (json_is_string(ptr)) {
		render_clean(b, json_string_value(ptr), json_string_length(ptr));
		if ((x = json_object_get(v, "value")) != NULL) {
			report_sb_puts(b, "->");
			report_render_value(b, x, depth + 1);
		} else if ((x = json_object_get(v, "values")) != NULL) {
			report_sb_puts(b, "->");
			report_render_value(b, x, depth + 1);
		}
		return;
	}
	if (depth >= 2) {
		report_sb_puts(b, "{...}");
		return;
	}
	report_sb_puts(b, "{");
	json_object_foreach(v, key, x) {
		if (n++)
			report_sb_puts(b, ", ");
		if (n > 8) {
			report_sb_puts(b, "...");
			break;
		}
		render_clean(b, key, strlen(key));
		report_sb_puts(b, "=");
		report_render_value(b, x, depth + 1);
	}
	report_sb_puts(b, "}");
}

void
report_render_value(struct sbuf *b, json_t *v, int depth)
{
	size_t i;
	json_t *x;

	switch (json_typeof(v)) {
	case JSON_NULL:
		report_sb_puts(b, "NULL");
		break;
	case JSON_TRUE:
		report_sb_puts(b, "true");
		break;
	case JSON_FALSE:
		report_sb_puts(b, "false");
		break;
	case JSON_INTEGER:
		report_sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		report_sb_printf(b, "%g", json_real_value(v));
		break;
	case JSON_STRING:
		render_clean(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_ARRAY:
		if (depth >= 2) {
			report_sb_puts(b, "[...]");
			break;
		}
		report_sb_puts(b, "[");
		json_array_foreach(v, i, x) {
			if (i)
				report_sb_puts(b, ",");
			if (i >= 16) {
				report_sb_puts(b, "...");
				break;
			}
			report_render_value(b, x, depth + 1);
		}
		report_sb_puts(b, "]");
		break;
	case JSON_OBJECT:
		render_object(b, v, depth);
		break;
	}
}

/* name=value, name=value: the arguments as the spy's stderr line shows them. */
char *
report_render_args(json_t *args, int max)
{
	struct sbuf b;
	const char *key;
	json_t *v;
	int n = 0;

	report_sb_init(&b, ARGS_CAP);
	if (!json_is_object(args))
		return b.p;
	json_object_foreach(args, key, v) {
		if (max && n >= max)
			break;
		if (n++)
			report_sb_puts(&b, ", ");
		render_clean(&b, key, strlen(key));
		report_sb_puts(&b, "=");
		report_render_value(&b, v, 0);
	}
	return b.p;
}
