/* The conflict rules' fixes (rules.c), shared by the library and the command. */
#ifndef SPY_RULES_H
#define SPY_RULES_H

#include <stddef.h>

struct spy_rule {
	const char *id;		/* docs/conflicts.md#id */
	const char *fix;	/* one line, for a finding's stderr line and the report */
};

/* The fix of a rule, or NULL for an id the table does not know. */
const char *spy_rule_fix(const char *id);
/* The fix as `cudnnspy scan --windows` says it (DLLs and Windows' search), else the rule's own. */
const char *spy_rule_fix_windows(const char *id);
/* The whole table, for a test that holds it against docs/conflicts.md. */
const struct spy_rule *spy_rule_table(size_t *n);

#endif
