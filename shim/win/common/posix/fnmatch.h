/* fnmatch for the configuration's function-name globs (* ? [...]): shim/win/fnmatch.c. */
#ifndef SPY_WIN_FNMATCH_H
#define SPY_WIN_FNMATCH_H
#define FNM_NOMATCH 1
int fnmatch(const char *pattern, const char *string, int flags);
#endif
