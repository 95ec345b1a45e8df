/* process_vm_readv on oneself, for spy_safe_copy: ReadProcessMemory, which fails where a load would fault. */
#ifndef SPY_WIN_UIO_H
#define SPY_WIN_UIO_H
#include <stddef.h>
#include <sys/types.h>
struct iovec { void *iov_base; size_t iov_len; };
ssize_t process_vm_readv(int pid, const struct iovec *local, unsigned long nl, const struct iovec *remote,
			 unsigned long nr, unsigned long flags);
#endif
