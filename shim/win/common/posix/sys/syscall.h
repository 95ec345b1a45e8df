/* The one system call the portable files make, gettid: Windows' thread id. */
#ifndef SPY_WIN_SYSCALL_H
#define SPY_WIN_SYSCALL_H
#define SYS_gettid 186
__declspec(dllimport) unsigned long __stdcall GetCurrentThreadId(void);
static inline long syscall(long n, ...) { (void)n; return (long)GetCurrentThreadId(); }
#endif
