/*
 * The places `cudnnspy scan` looks in: without --root, this machine's
 * usual ones (LD_LIBRARY_PATH, the loader's cache and ld.so.conf, the
 * system and CUDA directories, conda, Python wheels, TensorRT); with it,
 * every directory below the roots that holds a libcudnn name. Each
 * directory is kept once, by its real path, with the spellings and the
 * sources it was reached by.
 */
#include "scan-int.h"

#include <dirent.h>
#include <glob.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli-util.h"

#define ROOT_DEPTH 12
#define CONF_DEPTH 8		/* nested "include" in ld.so.conf */

/* ---- the directories to look at ---- */

struct scan_dir *
scan_find_dir(struct scan_result *r, const char *real)
{
	for (size_t i = 0; i < r->ndirs; i++)
		if (strcmp(r->dirs[i].real, real) == 0)
			return &r->dirs[i];
	return NULL;
}

/* Adds a directory (any spelling) under a source label; missing ones are skipped. */
void
scan_add_dir(struct scan_result *r, const char *path, const char *source)
{
	struct scan_dir *d;
	struct stat st;
	char *abs = NULL, *real;

	if (!path || !path[0])
		return;
	if (path[0] != '/') {
		char *cwd = getcwd(NULL, 0);

		if (!cwd)
			return;
		abs = scan_xasprintf("%s/%s", cwd, path);
		free(cwd);
		path = abs;
	}
	real = realpath(path, NULL);
	if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		goto out;
	d = scan_find_dir(r, real);
	if (!d) {
		r->dirs = scan_xrealloc(r->dirs, (r->ndirs + 1) * sizeof(*r->dirs));
		d = &r->dirs[r->ndirs++];
		memset(d, 0, sizeof(*d));
		d->real = scan_xstrdup(real);
	}
	if (strcmp(path, real) != 0) {
		/* "/usr/local/cuda/lib64/" and "/usr/local/cuda/lib64" are one spelling. */
		char *trimmed = scan_xstrdup(path);
		size_t len = strlen(trimmed);

		while (len > 1 && trimmed[len - 1] == '/')
			trimmed[--len] = '\0';
		if (strcmp(trimmed, real) != 0)
			scan_strv_add_unique(&d->also, trimmed);
		free(trimmed);
	}
	scan_strv_add_unique(&d->sources, source);
out:
	free(real);
	free(abs);
}

static void
add_glob(struct scan_result *r, const char *pattern, const char *source)
{
	glob_t g;

	memset(&g, 0, sizeof(g));
	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			scan_add_dir(r, g.gl_pathv[i], source);
	globfree(&g);
}

static void
add_list(struct scan_result *r, const char *list, const char *source)
{
	const char *p = list;

	if (!list)
		return;
	for (;;) {
		size_t n = strcspn(p, ":;");
		char *entry = scan_xmalloc(n + 1);

		memcpy(entry, p, n);
		entry[n] = '\0';
		/* An empty entry is the current directory to the loader. */
		scan_add_dir(r, n ? entry : ".", source);
		free(entry);
		if (!p[n])
			break;
		p += n + 1;
	}
}

/* /etc/ld.so.conf and what it includes: one directory a line. */
static void
read_ld_so_conf(struct scan_result *r, const char *file, int depth)
{
	char line[4096];
	FILE *f;

	if (depth > CONF_DEPTH)
		return;
	f = fopen(file, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		p[strcspn(p, "#\n")] = '\0';
		p += strspn(p, " \t");
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*p)
			continue;
		if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			char *pattern = p + 8 + strspn(p + 8, " \t");
			char *full;
			glob_t g;

			/* A relative pattern counts from the including file's directory. */
			if (pattern[0] == '/') {
				full = scan_xstrdup(pattern);
			} else {
				char *dir = scan_xstrdup(file);
				char *slash = strrchr(dir, '/');

				if (slash)
					*slash = '\0';
				full = scan_xasprintf("%s/%s", dir, pattern);
				free(dir);
			}
			memset(&g, 0, sizeof(g));
			if (glob(full, 0, NULL, &g) == 0)
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_ld_so_conf(r, g.gl_pathv[i], depth + 1);
			globfree(&g);
			free(full);
			continue;
		}
		if (strncmp(p, "hwcap", 5) == 0 && (p[5] == ' ' || p[5] == '\t'))
			continue;
		/* Old ldconfig syntax: "DIR=TYPE". */
		p[strcspn(p, "=")] = '\0';
		scan_add_dir(r, p, "ld.so.conf");
	}
	fclose(f);
}

static char *
home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return scan_xstrdup(h);
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? scan_xstrdup(pw->pw_dir) : NULL;
}

/* nvidia/cudnn/lib and torch/lib in every site-packages below a glob of lib/python3* directories. */
static void
add_python(struct scan_result *r, const char *pydirs)
{
	static const char *const sites[] = { "site-packages", "dist-packages" };

	for (size_t i = 0; i < 2; i++) {
		char *p = scan_xasprintf("%s/%s/nvidia/cudnn/lib", pydirs, sites[i]);

		add_glob(r, p, "pip-nvidia-cudnn");
		free(p);
		p = scan_xasprintf("%s/%s/torch/lib", pydirs, sites[i]);
		add_glob(r, p, "pip-torch");
		free(p);
	}
}

static void
add_conda_env(struct scan_result *r, const char *prefix_glob)
{
	char *p = scan_xasprintf("%s/lib", prefix_glob);

	add_glob(r, p, "conda");
	free(p);
	p = scan_xasprintf("%s/lib/python3*", prefix_glob);
	add_python(r, p);
	free(p);
}

void
scan_gather_machine(struct scan_result *r)
{
	static const char *const conda_homes[] = { ".conda", "miniconda3", "anaconda3", "miniforge3", "mambaforge", NULL };
	const char *const *defaults = scan_default_dirs();
	const char *e;
	char *home = home_dir();
	char *p;

	add_list(r, getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
	for (size_t i = 0; i < r->cache.n; i++) {
		char *dir;
		char *slash;

		if (strncmp(r->cache.e[i].name, "libcudnn", 8) != 0)
			continue;
		dir = scan_xstrdup(r->cache.e[i].path);
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			scan_add_dir(r, dir, "ld.so.cache");
		}
		free(dir);
	}
	for (size_t i = 0; defaults[i]; i++)
		scan_add_dir(r, defaults[i], "system");
	{
		static const char *const system[] = {
			"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/lib/*-linux-gnu*",
			"/usr/lib/*-linux-gnu*", "/usr/local/lib/*-linux-gnu*", NULL
		};

		for (size_t i = 0; system[i]; i++)
			add_glob(r, system[i], "system");
	}
	read_ld_so_conf(r, "/etc/ld.so.conf", 0);
	if ((e = getenv("CUDA_HOME")) && e[0]) {
		p = scan_xasprintf("%s/lib64", e);
		scan_add_dir(r, p, "CUDA_HOME");
		free(p);
		p = scan_xasprintf("%s/lib", e);
		scan_add_dir(r, p, "CUDA_HOME");
		free(p);
	}
	if ((e = getenv("CUDA_PATH")) && e[0]) {
		p = scan_xasprintf("%s/lib64", e);
		scan_add_dir(r, p, "CUDA_PATH");
		free(p);
		p = scan_xasprintf("%s/lib", e);
		scan_add_dir(r, p, "CUDA_PATH");
		free(p);
	}
	add_glob(r, "/usr/local/cuda*/lib64", "cuda-toolkit");
	add_glob(r, "/usr/local/cuda*/lib", "cuda-toolkit");
	add_glob(r, "/usr/local/cuda*/targets/*/lib", "cuda-toolkit");
	if ((e = getenv("CONDA_PREFIX")) && e[0] == '/')
		add_conda_env(r, e);
	add_conda_env(r, "/opt/conda");
	add_conda_env(r, "/opt/conda/envs/*");
	if (home) {
		for (size_t i = 0; conda_homes[i]; i++) {
			p = scan_xasprintf("%s/%s", home, conda_homes[i]);
			add_conda_env(r, p);
			free(p);
			p = scan_xasprintf("%s/%s/envs/*", home, conda_homes[i]);
			add_conda_env(r, p);
			free(p);
		}
	}
	add_python(r, "/usr/lib/python3*");
	add_python(r, "/usr/local/lib/python3*");
	if ((e = getenv("VIRTUAL_ENV")) && e[0] == '/') {
		p = scan_xasprintf("%s/lib/python3*", e);
		add_python(r, p);
		free(p);
	}
	if (home) {
		p = scan_xasprintf("%s/.local/lib/python3*", home);
		add_python(r, p);
		free(p);
		p = scan_xasprintf("%s/.pyenv/versions/*/lib/python3*", home);
		add_python(r, p);
		free(p);
	}
	scan_add_dir(r, "/usr/src/tensorrt/lib", "tensorrt");
	scan_add_dir(r, "/usr/src/tensorrt", "tensorrt");
	add_glob(r, "/opt/tensorrt*/lib", "tensorrt");
	add_glob(r, "/opt/TensorRT*/lib", "tensorrt");
	if ((e = getenv("TENSORRT_ROOT")) && e[0]) {
		scan_add_dir(r, e, "TENSORRT_ROOT");
		p = scan_xasprintf("%s/lib", e);
		scan_add_dir(r, p, "TENSORRT_ROOT");
		free(p);
		p = scan_xasprintf("%s/targets/*/lib", e);
		add_glob(r, p, "TENSORRT_ROOT");
		free(p);
	}
	free(home);
}

/* Every directory below a root, without following links to directories. */
void
scan_walk_root(struct scan_result *r, const char *dir, int depth, size_t *budget, const char *label)
{
	struct scan_strv subdirs = { 0 };
	struct dirent *de;
	int has_cudnn = 0;
	DIR *d;

	if (*budget == 0)
		return;
	(*budget)--;
	if (*budget == 0)
		complain("scan: stopped walking the --root trees after %d directories", SCAN_ROOT_BUDGET);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *path;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strncmp(de->d_name, "libcudnn", 8) == 0)
			has_cudnn = 1;
		if (depth >= ROOT_DEPTH || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		path = scan_xasprintf("%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			scan_strv_add(&subdirs, path);
		free(path);
	}
	closedir(d);
	if (has_cudnn)
		scan_add_dir(r, dir, label);
	for (size_t i = 0; i < subdirs.n; i++)
		scan_walk_root(r, subdirs.v[i], depth + 1, budget, label);
	scan_strv_free(&subdirs);
}
