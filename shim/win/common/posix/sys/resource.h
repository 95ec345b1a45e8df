/* Windows has no descriptor or file-size limits of this kind: every limit is infinite. */
#ifndef SPY_WIN_RESOURCE_H
#define SPY_WIN_RESOURCE_H
typedef unsigned long long rlim_t;
struct rlimit { rlim_t rlim_cur, rlim_max; };
#define RLIM_INFINITY (~0ull)
#define RLIMIT_NOFILE 7
#define RLIMIT_FSIZE 1
static inline int getrlimit(int what, struct rlimit *rl)
{
	(void)what;
	rl->rlim_cur = rl->rlim_max = RLIM_INFINITY;
	return 0;
}
#endif
