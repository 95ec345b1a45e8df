#ifndef SPY_INJECT_H
#define SPY_INJECT_H

/* Parses CUDNNSPY_INJECT and flags the matching functions. */
void spy_inject_init(const char *spec);
/* The status to inject into this call of function `id`, or 0 to call the real function. */
/* `major`: the numbering of the copy that the call goes to. */
int spy_inject_decide(unsigned id, int major, const char **rule_text);

#endif
