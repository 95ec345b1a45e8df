/*
 * Fuzz target: spy_config_parse (shim/core/config.c), the CUDNNSPY_* variables.
 * The first byte chooses the variable (an index into spy_options), the
 * other bytes are its value; every other variable is unset. After the
 * parse, whatever the value was, the configuration keeps its promises:
 * strings end inside their fields, numbers inside their documented ranges,
 * CUDNNSPY_LIBRARY empty or absolute, booleans 0 or 1.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *chosen_name;
static const char *chosen_value;

static const char *
fuzz_get(const char *name)
{
	return chosen_name && strcmp(name, chosen_name) == 0 ? chosen_value : NULL;
}

static size_t
option_count(void)
{
	size_t n = 0;

	while (spy_options[n].name)
		n++;
	return n;
}

static void
check_promises(void)
{
	for (const struct spy_option *o = spy_options; o->name; o++) {
		switch (o->type) {
		case SPY_OPT_PATH:
		case SPY_OPT_STRING:
		case SPY_OPT_GLOBS:
			FUZZ_ASSERT(memchr(o->target, 0, o->size) != NULL);
			break;
		case SPY_OPT_INT: {
			long v = *(long *)o->target;
			long min = strtol(o->values, NULL, 10);
			long max = strtol(strstr(o->values, "..") + 2, NULL, 10);

			FUZZ_ASSERT(v >= min && v <= max);
			break;
		}
		case SPY_OPT_BOOL:
			FUZZ_ASSERT(*(long *)o->target == 0 || *(long *)o->target == 1);
			break;
		case SPY_OPT_CHOICE: {
			long v = *(long *)o->target, words = 1;

			for (const char *c = o->values; *c; c++)
				words += *c == ',';
			FUZZ_ASSERT(v >= 0 && v < words);
			/* `auto` is settled as the configuration is read: the writer sees a format. */
			FUZZ_ASSERT(o->target != &spy_config.format || v != SPY_FORMAT_AUTO);
			break;
		}
		case SPY_OPT_FLAGS: {
			unsigned m = *(unsigned *)o->target;

			FUZZ_ASSERT(m == ~0u || (m & ~(unsigned)(SPY_STDERR_BANNER | SPY_STDERR_FAILURES |
								 SPY_STDERR_SUMMARY | SPY_STDERR_PROBING)) == 0);
			break;
		}
		}
	}
	FUZZ_ASSERT(spy_config.library[0] == 0 || spy_config.library[0] == '/');
	FUZZ_ASSERT(!spy_config.library_refused || spy_config.library[0] == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value;

	if (size < 1)
		return 0;
	chosen_name = spy_options[data[0] % option_count()].name;
	value = fuzz_string(data + 1, size - 1);
	chosen_value = value;
	spy_config_parse(fuzz_get);
	check_promises();
	chosen_value = NULL;
	free(value);
	return 0;
}
