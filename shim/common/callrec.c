#include "callrec.h"
#include "spy-api.h"

void
spy_call_fields(struct spy_line *l, const char *event, unsigned fn, long long status, unsigned copy,
		long long tid, uint64_t t_ns, int timed, uint64_t dur_ns)
{
	const char *name = spy_fn_info[fn].ret == SPY_RET_STATUS ? spy_status_name(status) : NULL;

	spy_line_lit(l, "{\"event\":\"");
	spy_line_raw(l, event);
	spy_line_lit(l, "\",\"fn\":");
	spy_line_name(l, spy_fn_info[fn].name);
	spy_line_lit(l, ",\"status\":");
	spy_line_i64(l, status);
	spy_line_lit(l, ",\"status_name\":");
	spy_line_name(l, name);
	spy_line_lit(l, ",\"copy\":");
	spy_line_u64(l, copy);
	spy_line_lit(l, ",\"tid\":");
	spy_line_i64(l, tid);
	spy_line_lit(l, ",\"t_ns\":");
	spy_line_u64(l, t_ns);
	spy_line_lit(l, ",\"dur_ns\":");
	if (timed)
		spy_line_u64(l, dur_ns);
	else
		spy_line_lit(l, "null");
}

void
spy_recent_json(struct spy_line *l, unsigned fn, long long status, int *first)
{
	if (fn >= _SPY_FN_COUNT)
		return;
	if (!*first)
		spy_line_char(l, ',');
	*first = 0;
	spy_line_lit(l, "{\"fn\":");
	spy_line_name(l, spy_fn_info[fn].name);
	spy_line_lit(l, ",\"status\":");
	spy_line_i64(l, status);
	spy_line_char(l, '}');
}
