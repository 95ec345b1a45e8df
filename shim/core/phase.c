/*
 * Where the process stands: the real libraries resolved, the exit begun,
 * and the cudnnspy run markers that say so to the launcher. init.c moves
 * the process on; every part may ask. A leaf, so that asking leads into no
 * circle.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int resolve_done;
static int exit_done;

int
spy_exiting(void)
{
	return __atomic_load_n(&exit_done, __ATOMIC_ACQUIRE);
}

int
spy_resolved(void)
{
	return __atomic_load_n(&resolve_done, __ATOMIC_ACQUIRE);
}

void
spy_phase_resolved_set(void)
{
	__atomic_store_n(&resolve_done, 1, __ATOMIC_RELEASE);
}

int
spy_phase_exit_begin(void)
{
	return __atomic_exchange_n(&exit_done, 1, __ATOMIC_ACQ_REL);
}

void
spy_run_marker(const char *what, const char *text)
{
	char path[PATH_MAX + 48];
	int saved = errno, fd;

	if (spy_config.run_dir[0] != '/')
		return;
	snprintf(path, sizeof(path), "%s/%d.%s", spy_config.run_dir, (int)getpid(), what);
	/* Never through a link, never over a file: the directory is the launcher's own. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* A short write leaves a name the launcher cannot open: it then says nothing of that file. */
		if (text)
			(void)!write(fd, text, strlen(text));
		close(fd);
	}
	errno = saved;
}
