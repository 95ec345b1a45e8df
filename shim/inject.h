#ifndef SPY_INJECT_H
#define SPY_INJECT_H

/* Parses CUDNNSPY_INJECT and flags the matching functions. */
void spy_inject_init(const char *spec);
/* The status to inject into this call of function `id`, or 0 to call the real function. */
int spy_inject_decide(unsigned id, const char **rule_text);

#endif
