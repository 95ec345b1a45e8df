/* Enum value names, from the generated tables. */
#include "spy-api.h"

#include <stddef.h>

__thread int spy_names_major;

const char *
spy_enum_name(int enum_id, long long value, int major)
{
	const struct spy_enum_info *e;
	const char *any = NULL;
	unsigned want;
	int lo, hi;

	if (enum_id < 0 || enum_id >= _SPY_ENUM_COUNT)
		return NULL;
	e = &spy_enum_info[enum_id];
	if (!major)
		major = spy_names_major;
	want = major == 8 ? SPY_MAJOR_8 : major == 9 ? SPY_MAJOR_9 : 0;
	lo = 0;
	hi = (int)e->count - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (e->values[mid].value < value)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	/*
	 * Several names can share a value (aliases kept for old spellings);
	 * the first one of the wanted major wins, any other is the fallback.
	 */
	for (int i = lo; i < (int)e->count && e->values[i].value == value; i++) {
		if (!want || (e->values[i].majors & want))
			return e->values[i].name;
		if (!any)
			any = e->values[i].name;
	}
	return any;
}

const char *
spy_status_name(long long status)
{
	/* 8.x numbers statuses 0..14 and 9.x 0 and 1001..5004: no overlap. */
	return spy_enum_name(_SPY_ENUM_cudnnStatus_t, status, status > 0 && status < 1000 ? 8 : 9);
}
