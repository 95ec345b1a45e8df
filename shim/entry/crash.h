#ifndef SPY_CRASH_H
#define SPY_CRASH_H

/* Installs the fatal-signal handler when CUDNNSPY_CRASH is on; once. */
void spy_crash_install(void);

#endif
