/*
 * Start and fork (init.c): the first call resolves the real library and
 * starts each part once the configuration is read.
 */
#ifndef SPY_INIT_H
#define SPY_INIT_H

/* Resolves once; 0 when the real library is there. */
int spy_init(void);
/* In a child forked while other threads were inside cuDNN: says so, once. */
void spy_fork_hazard_check(void);

#endif
