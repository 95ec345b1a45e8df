/*
 * Finding the real cuDNN, in the documented order:
 *   a) CUDNNSPY_LIBRARY (a file or a directory); no fallback when unusable;
 *   b) dlsym(RTLD_NEXT): the first cuDNN in the global scope, which the
 *      program's own references reach without the spy;
 *   c) a cuDNN the process already has mapped (dl_iterate_phdr): covers
 *      programs that opened it with dlopen(RTLD_LOCAL), such as ctypes;
 *   d) the loader's directories, searched for another file than the spy.
 * Never the spy itself: objects are compared by address and inode, since a
 * drop-in has the very name it searches for.
 */
#include "core.h"
#include "libfile.h"
#include "requester.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static int
self_file(struct stat *st)
{
	Dl_info di;

	if (!dladdr((void *)spy_self_base, &di) || !di.dli_fname)
		return -1;
	return stat(di.dli_fname, st);
}

static const char *
basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A handle is usable if it is a cuDNN and not the spy. */
static int
usable(void *h)
{
	void *v;
	Dl_info di;

	if (!h)
		return 0;
	v = spy_dlsym(h, "cudnnGetVersion");
	if (!v || !dladdr(v, &di))
		return 0;
	return di.dli_fbase != spy_self_base();
}

/* Every build of the spy exports its public API: a library that defines it is not a real cuDNN. */
static int
is_a_spy(void *h)
{
	return spy_dlsym(h, "cudnnspy_is_loaded") != NULL;
}

static int
take(void *h, const char *path, const char *how)
{
	Dl_info di;
	void *v = spy_dlsym(h, "cudnnGetVersion");

	spy_lib.handle = h;
	spy_lib.how = how;
	if (v && dladdr(v, &di)) {
		spy_lib.base = di.dli_fbase;
		if (di.dli_fname && di.dli_fname[0] == '/')
			path = di.dli_fname;
	}
	/* A library found through a relative LD_LIBRARY_PATH entry is named absolutely. */
	if (path[0] == '/' || !realpath(path, spy_lib.path))
		snprintf(spy_lib.path, sizeof(spy_lib.path), "%s", path);
	return 0;
}

static int
same_file_as_self(const char *path)
{
	struct stat a, b;

	return stat(path, &a) == 0 && self_file(&b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int
open_path(const char *path, const char *how, char *why, size_t whylen)
{
	void *h;

	if (same_file_as_self(path)) {
		snprintf(why, whylen, "%s is the spy itself", path);
		return -2;
	}
	/* The loader hangs on a FIFO and dies of SIGBUS on a truncated file: look first. */
	if (spy_library_file_check(path, why, whylen) != 0) {
		char what[PATH_MAX + 160];

		snprintf(what, sizeof(what), "%s %s", path, why);
		snprintf(why, whylen, "%s", what);
		return -1;
	}
	h = spy_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, whylen, "%s", e ? e : "dlopen failed");
		return -1;
	}
	if (is_a_spy(h)) {
		/* Another build of the spy (a drop-in directory named by mistake): it would forward back to a copy of its own. */
		snprintf(why, whylen, "%s is a cudnnspy library (a drop-in or the preload), not a real cuDNN", path);
		spy_dlclose(h);
		return -2;
	}
	if (!usable(h)) {
		snprintf(why, whylen, "%s has no cudnnGetVersion of its own", path);
		spy_dlclose(h);
		return -1;
	}
	return take(h, path, how);
}

/* a) */
static int
from_setting(void)
{
	const char *set = spy_config.library;
	char path[PATH_MAX + 32], why[PATH_MAX + 160];
	struct stat st;

	if (stat(set, &st) != 0) {
		spy_log("CUDNNSPY_LIBRARY=%s: %s; not trying any other copy; cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED", set, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		static const char *names[] = { "libcudnn.so.9", "libcudnn.so.8", "libcudnn.so" };

		for (size_t i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", set, names[i]);
			if (access(path, F_OK) == 0)
				break;
			path[0] = 0;
		}
		if (!path[0]) {
			spy_log("CUDNNSPY_LIBRARY=%s: no libcudnn.so.9, libcudnn.so.8 or libcudnn.so in "
				"that directory; not trying any other copy; cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED", set);
			return -1;
		}
	} else {
		snprintf(path, sizeof(path), "%s", set);
	}
	if (open_path(path, "CUDNNSPY_LIBRARY", why, sizeof(why)) >= 0)
		return 0;
	spy_log("CUDNNSPY_LIBRARY=%s: cannot use it: %s; not trying any other copy; cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED", set, why);
	return -1;
}

/* c) */
struct mapped {
	char path[PATH_MAX];
	void *self;
};

static int
mapped_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mapped *m = arg;

	(void)size;
	if (!info->dlpi_name || info->dlpi_name[0] != '/')
		return 0;
	if ((void *)info->dlpi_addr == m->self)
		return 0;
	if (!spy_is_dispatcher_name(basename_of(info->dlpi_name)))
		return 0;
	snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	return 1;
}

static int
from_mapped(void)
{
	struct mapped m = { .self = spy_self_base() };
	void *h;

	if (!dl_iterate_phdr(mapped_cb, &m))
		return -1;
	h = spy_dlopen(m.path, RTLD_NOW | RTLD_NOLOAD);
	if (!usable(h)) {
		if (h)
			spy_dlclose(h);
		return -1;
	}
	return take(h, m.path, "opened by the program (dlopen)");
}

/* b) */
static int
from_next(void)
{
	void *v = spy_dlsym(RTLD_NEXT, "cudnnGetVersion");
	Dl_info di;
	void *h;

	if (!v || !dladdr(v, &di) || !di.dli_fname || di.dli_fbase == spy_self_base())
		return -1;
	h = spy_dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!usable(h)) {
		if (h)
			spy_dlclose(h);
		return -1;
	}
	return take(h, di.dli_fname, "loaded by the program");
}

/* d) */
#define MAX_DIRS 96

struct dirlist {
	char *dirs[MAX_DIRS];
	int n;
};

static void
add_dir(const char *dir, void *arg)
{
	struct dirlist *l = arg;

	if (l->n >= MAX_DIRS)
		return;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->dirs[i], dir) == 0)
			return;
	l->dirs[l->n] = strdup(dir);
	if (l->dirs[l->n])
		l->n++;
}

void
spy_foreach_dir(const char *list, void (*fn)(const char *dir, void *arg), void *arg)
{
	char dir[PATH_MAX];

	while (list && *list) {
		size_t len = strcspn(list, ":;");

		/* Relative entries and the empty entry (the current directory) are never searched. */
		if (len > 0 && len < sizeof(dir) && list[0] == '/') {
			memcpy(dir, list, len);
			dir[len] = 0;
			fn(dir, arg);
		}
		list += len;
		if (*list)
			list++;
	}
}

static void
read_ld_conf(const char *file, struct dirlist *l, int depth)
{
	FILE *f;
	char line[PATH_MAX];

	if (depth > 4)
		return;
	f = fopen(file, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;

		p[strcspn(p, "#\n")] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			glob_t g;

			p += 8;
			while (*p == ' ' || *p == '\t')
				p++;
			if (glob(p, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_ld_conf(g.gl_pathv[i], l, depth + 1);
				globfree(&g);
			}
		} else if (p[0] == '/') {
			add_dir(p, l);
		}
	}
	fclose(f);
}

static void
add_cuda_home(const char *root, struct dirlist *l)
{
	char d[PATH_MAX];

	if (!root || root[0] != '/')
		return;
	snprintf(d, sizeof(d), "%s/lib64", root);
	add_dir(d, l);
	snprintf(d, sizeof(d), "%s/lib", root);
	add_dir(d, l);
}

static int
from_search(char *tried, size_t triedlen)
{
	static const char *system_dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	};
	struct dirlist l = { .n = 0 };
	char names[2][32], path[PATH_MAX], why[PATH_MAX + 128];
	int rc = -1;

	spy_foreach_dir(secure_getenv("LD_LIBRARY_PATH"), add_dir, &l);
	read_ld_conf("/etc/ld.so.conf", &l, 0);
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		add_dir(system_dirs[i], &l);
	add_cuda_home(secure_getenv("CUDA_HOME"), &l);
	add_cuda_home(secure_getenv("CUDA_PATH"), &l);
	add_cuda_home("/usr/local/cuda", &l);

	/* The major the spy stands for first, then the other one. */
	snprintf(names[0], sizeof(names[0]), "libcudnn.so.%d", spy_flavor.major);
	snprintf(names[1], sizeof(names[1]), "libcudnn.so.%d", spy_flavor.major == 8 ? 9 : 8);
	for (int k = 0; k < 2 && rc != 0; k++) {
		for (int i = 0; i < l.n && rc != 0; i++) {
			snprintf(path, sizeof(path), "%s/%s", l.dirs[i], names[k]);
			if (access(path, R_OK) != 0)
				continue;
			rc = open_path(path, "searched the loader's directories", why, sizeof(why));
			if (rc == -1)
				spy_log("skipping %s: %s", path, why);
		}
	}
	snprintf(tried, triedlen, "%d directories for %s and %s", l.n, names[0], names[1]);
	for (int i = 0; i < l.n; i++)
		free(l.dirs[i]);
	return rc;
}

/* The drop-in: the copy the object that needed libcudnn.so.N would have loaded without it (requester.c). */
static int
from_requester(void)
{
	static char how[PATH_MAX + 128];
	char path[PATH_MAX], why[PATH_MAX + 160];
	int rc = spy_requester_search(path, sizeof(path), how, sizeof(how));

	if (rc == 1)
		spy_log("%s; searching the usual directories instead", how);
	if (rc != 0)
		return -1;
	if (open_path(path, how, why, sizeof(why)) == 0)
		return 0;
	spy_log("%s is %s, but cannot be used: %s; searching the usual directories instead", how, path, why);
	return -1;
}

int
spy_resolve(void)
{
	char tried[128] = "";
	int rc;

	if (spy_config.library_refused) {
		spy_log("CUDNNSPY_LIBRARY is set but unusable (see above): not trying any other copy; "
			"cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED");
		rc = -1;
	} else if (spy_config.library[0]) {
		rc = from_setting();
	} else {
		/* The first cuDNN in the global scope is what the program's own names reach without the spy. */
		rc = strcmp(spy_flavor.name, "drop-in") == 0 ? from_requester() : -1;
		if (rc != 0)
			rc = from_next();
		if (rc != 0)
			rc = from_mapped();
		if (rc != 0)
			rc = from_search(tried, sizeof(tried));
		if (rc != 0)
			spy_log("no real cuDNN found (CUDNNSPY_LIBRARY unset; none loaded in the process; "
				"none next in the loader's order; searched %s); cuDNN calls will return "
				"CUDNN_STATUS_NOT_INITIALIZED", tried);
	}
	if (rc != 0)
		return -1;
	spy_copy_fill(0);
	return 0;
}
