/*
 * The Windows side of `cudnnspy scan`: the trees given to --windows,
 * Windows paths and where they are in them, and the cuDNN DLLs below
 * them, grouped into copies (one directory, one major); what is wrong
 * with those is scan-win-findings.c's. Names are matched in any case, as
 * Windows reads them: a tree copied to Linux may say CUDNN64_8.DLL.
 */
#include "scan-win.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Levels below a tree, and directories in all: a whole disk fits, a hostile tree ends. */
#define WIN_MAX_DEPTH 24
#define WIN_DIR_BUDGET 400000

static const char *const subs8[] = { "ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train", NULL };
static const char *const subs9[] = { "graph", "ops", "cnn", "adv", "engines_precompiled",
				     "engines_runtime_compiled", "heuristic", NULL };
static const char *const subs_none[] = { NULL };

const char *const *
scan_win_subs(int major)
{
	return major == 8 ? subs8 : major >= 9 ? subs9 : subs_none;
}

int
scan_win_parse_name(const char *name, char *sub, size_t subsz, int *major)
{
	size_t n = strlen(name), i;
	const char *tail;
	int m = 0;

	/* cudnn[_SUB]64_N.dll */
	if (n < 13 || strncasecmp(name, "cudnn", 5) != 0 || strcasecmp(name + n - 4, ".dll") != 0)
		return 0;
	i = n - 4;
	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i == n - 4 || n - 4 - i > 3 || i < 8 || strncmp(name + i - 3, "64_", 3) != 0)
		return 0;
	for (size_t k = i; k < n - 4; k++)
		m = m * 10 + (name[k] - '0');
	tail = name + i - 3;
	if (tail == name + 5) {
		sub[0] = '\0';
	} else {
		size_t len = (size_t)(tail - (name + 6));

		if (name[5] != '_' || len == 0 || len >= subsz)
			return 0;
		for (size_t k = 0; k < len; k++)
			sub[k] = (char)tolower((unsigned char)name[6 + k]);
		sub[len] = '\0';
	}
	*major = m;
	return 1;
}

/* C:=DIR, or DIR. */
int
scan_win_parse_tree(const char *arg, struct scan_win_tree *t, char *why, size_t whylen)
{
	const char *dir = arg;
	struct stat st;
	char real[PATH_MAX];

	memset(t, 0, sizeof(*t));
	if (isalpha((unsigned char)arg[0]) && arg[1] == ':' && arg[2] == '=') {
		t->letter = tolower((unsigned char)arg[0]);
		dir = arg + 3;
	}
	if (!dir[0]) {
		snprintf(why, whylen, "needs a directory");
		return -1;
	}
	if (stat(dir, &st) != 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || !realpath(dir, real)) {
		snprintf(why, whylen, "not a directory");
		return -1;
	}
	t->dir = scan_xstrdup(dir);
	t->real = scan_xstrdup(real);
	return 0;
}

/* ---- paths: Windows names and where they are here ---- */

char *
scan_win_find_in(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL;

	if (!d)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		/* An exact match wins over another case (a case-sensitive tree may hold both). */
		if (strcmp(e->d_name, name) == 0) {
			free(found);
			found = scan_xasprintf("%s/%s", dir, e->d_name);
			break;
		}
		if (!found && strcasecmp(e->d_name, name) == 0)
			found = scan_xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	return found;
}

/* Absolute, so that a path inside a drive's tree is named as Windows names it. */
static char *
local_real(const char *path)
{
	char real[PATH_MAX];

	return scan_xstrdup(realpath(path, real) ? real : path);
}

char *
scan_win_map(const struct scan_win *w, const char *win, char **why)
{
	const struct scan_win_tree *t = NULL;
	char *cur, *copy, *part, *save = NULL;
	int letter;

	*why = NULL;
	if (win[0] == '/') {
		struct stat st;

		/* A path on this machine already (a tree given without its drive). */
		if (stat(win, &st) == 0)
			return local_real(win);
		*why = scan_xasprintf("%s does not exist", win);
		return NULL;
	}
	if (!isalpha((unsigned char)win[0]) || win[1] != ':' || (win[2] != '\\' && win[2] != '/' && win[2])) {
		struct stat st;

		/* A relative path on this machine (./app.exe), not a Windows one. */
		if (!strchr(win, '\\') && stat(win, &st) == 0)
			return local_real(win);
		*why = scan_xasprintf("not an absolute Windows path (C:\\...)");
		return NULL;
	}
	letter = tolower((unsigned char)win[0]);
	for (size_t i = 0; i < w->ntrees; i++)
		if (w->trees[i].letter == letter)
			t = &w->trees[i];
	if (!t) {
		*why = scan_xasprintf("drive %c: is not one of the trees (give --windows %c:=DIR)", toupper(letter),
		    toupper(letter));
		return NULL;
	}
	cur = scan_xstrdup(t->real);
	copy = scan_xstrdup(win + 2);
	for (char *p = copy; *p; p++)
		if (*p == '\\')
			*p = '/';
	for (part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		char *next;

		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			char *slash = strrchr(cur, '/');

			/* Windows stops .. at the drive's root. */
			if (slash && strlen(cur) > strlen(t->real))
				*slash = '\0';
			continue;
		}
		next = scan_win_find_in(cur, part);
		if (!next) {
			*why = scan_xasprintf("%s is not in %s", part, cur);
			free(cur);
			free(copy);
			return NULL;
		}
		free(cur);
		cur = next;
	}
	free(copy);
	return cur;
}

int
scan_win_on_drive(const struct scan_win *w, const char *win)
{
	if (!isalpha((unsigned char)win[0]) || win[1] != ':')
		return 0;
	for (size_t i = 0; i < w->ntrees; i++)
		if (w->trees[i].letter == tolower((unsigned char)win[0]))
			return 1;
	return 0;
}

char *
scan_win_name_of(const struct scan_win *w, const char *local)
{
	for (size_t i = 0; i < w->ntrees; i++) {
		const struct scan_win_tree *t = &w->trees[i];
		size_t n = strlen(t->real);
		char *s;

		if (!t->letter || strncmp(local, t->real, n) != 0 || (local[n] != '/' && local[n] != '\0'))
			continue;
		s = scan_xasprintf("%c:%s", toupper(t->letter), local[n] ? local + n : "\\");
		for (char *p = s; *p; p++)
			if (*p == '/')
				*p = '\\';
		return s;
	}
	return NULL;
}

/*
 * %SystemRoot%, %windir% and %SystemDrive% as a Windows process has them
 * (PATH copied from the registry may still hold them); other variables
 * are left as written, and such an entry is then not in the trees.
 */
static char *
expand(const char *entry)
{
	static const char *const vars[][2] = {
		{ "%SystemRoot%", "C:\\Windows" }, { "%windir%", "C:\\Windows" }, { "%SystemDrive%", "C:" },
	};
	char *out = scan_xstrdup(entry);

	for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
		size_t len = strlen(vars[v][0]);

		for (char *at = out; (at = strcasestr(at, vars[v][0])) != NULL;) {
			char *next = scan_xasprintf("%.*s%s%s", (int)(at - out), out, vars[v][1], at + len);
			size_t pos = (size_t)(at - out) + strlen(vars[v][1]);

			free(out);
			out = next;
			at = out + pos;
		}
	}
	return out;
}

void
scan_win_path_entries(const char *path, struct scan_strv *out)
{
	const char *p = path;

	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len >= 2 && p[0] == '"' && p[len - 1] == '"') {
			p++;
			len -= 2;
		}
		if (len) {
			char *raw = scan_xasprintf("%.*s", (int)len, p);
			char *one = expand(raw);

			scan_strv_add(out, one);
			free(one);
			free(raw);
		}
		p = end ? end + 1 : NULL;
	}
}

/* ---- the walk and the copies ---- */

struct scan_win_copy *
scan_win_copy_at(const struct scan_win *w, const char *real)
{
	for (size_t i = 0; i < w->ncopies; i++)
		if (strcmp(w->copies[i]->dir, real) == 0)
			return w->copies[i];
	return NULL;
}

static struct scan_win_copy *
copy_for(struct scan_win *w, const char *dir, int major)
{
	struct scan_win_copy *c;

	for (size_t i = 0; i < w->ncopies; i++)
		if (w->copies[i]->major == major && strcmp(w->copies[i]->dir, dir) == 0)
			return w->copies[i];
	c = scan_xmalloc(sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->dir = scan_xstrdup(dir);
	c->major = major;
	w->copies = scan_xrealloc(w->copies, (w->ncopies + 1) * sizeof(*w->copies));
	w->copies[w->ncopies++] = c;
	return c;
}

static void
read_dll(struct scan_win *w, const char *dir, const char *name, const char *sub, int major)
{
	struct scan_win_dll *d = scan_xmalloc(sizeof(*d));
	struct scan_win_copy *c;
	const char *const *subs = scan_win_subs(major);

	memset(d, 0, sizeof(*d));
	d->name = scan_xstrdup(name);
	d->path = scan_xasprintf("%s/%s", dir, name);
	snprintf(d->sub, sizeof(d->sub), "%s", sub);
	d->major = major;
	for (size_t i = 0; subs[i]; i++)
		if (strcmp(subs[i], sub) == 0)
			d->known = 1;
	scan_pe_read(d->path, &d->pe);
	if (d->pe.status == SCAN_PE_OK && d->pe.has_version)
		snprintf(d->version, sizeof(d->version), "%u.%u.%u.%u", d->pe.file_version[0], d->pe.file_version[1],
		    d->pe.file_version[2], d->pe.file_version[3]);
	c = copy_for(w, dir, major);
	c->dlls = scan_xrealloc(c->dlls, (c->ndlls + 1) * sizeof(*c->dlls));
	c->dlls[c->ndlls++] = d;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
walk(struct scan_win *w, const char *dir, int depth)
{
	DIR *d;
	struct dirent *e;
	struct scan_strv names = { 0 };

	if (w->ndirs_walked >= WIN_DIR_BUDGET) {
		w->walk_cut = 1;
		return;
	}
	w->ndirs_walked++;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			scan_strv_add(&names, e->d_name);
	closedir(d);
	/* Sorted, so that the output does not depend on the file system's order. */
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), cmp_name);
	for (size_t i = 0; i < names.n; i++) {
		char *p = scan_xasprintf("%s/%s", dir, names.v[i]);
		char sub[32];
		int major;
		struct stat st;

		if (scan_win_parse_name(names.v[i], sub, sizeof(sub), &major)) {
			read_dll(w, dir, names.v[i], sub, major);
		} else if (depth < WIN_MAX_DEPTH && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* Links to directories are not followed: no loops, and a copy is found where it is. */
			walk(w, p, depth + 1);
		}
		free(p);
	}
	scan_strv_free(&names);
}

static const char *
kind_of(const char *dir)
{
	size_t n = strlen(dir);

	if (n >= 12 && strcasecmp(dir + n - 12, "/Library/bin") == 0)
		return "conda";
	if (n >= 10 && strcasecmp(dir + n - 10, "/torch/lib") == 0)
		return "torch";
	if (n >= 17 && strcasecmp(dir + n - 17, "/nvidia/cudnn/bin") == 0)
		return "pip nvidia-cudnn";
	for (const char *p = dir; (p = strchr(p, '/')) != NULL; p++)
		if (strncasecmp(p, "/NVIDIA GPU Computing Toolkit/CUDA/", 35) == 0)
			return "CUDA toolkit";
	return NULL;
}

static void
analyze(struct scan_win *w, struct scan_win_copy *c)
{
	const char *const *subs = scan_win_subs(c->major);

	c->win = scan_win_name_of(w, c->dir);
	c->kind = kind_of(c->dir);
	for (c->nsubs = 0; subs[c->nsubs]; c->nsubs++)
		;
	for (size_t i = 0; i < c->ndlls; i++) {
		struct scan_win_dll *d = c->dlls[i];

		if (!d->sub[0] && !c->main)
			c->main = d;
		for (size_t k = 0; k < c->nsubs; k++)
			if (strcmp(subs[k], d->sub) == 0 && !c->subs[k]) {
				c->subs[k] = d;
				c->nsubs_present++;
			}
	}
	if (c->main && c->main->version[0]) {
		snprintf(c->version, sizeof(c->version), "%s", c->main->version);
		c->version_from = "FileVersion";
	} else if (c->main) {
		snprintf(c->version, sizeof(c->version), "%d.x", c->major);
		c->version_from = "file name";
	}
}

void
scan_win_gather(struct scan_win *w)
{
	for (size_t i = 0; i < w->ntrees; i++)
		walk(w, w->trees[i].real, 0);
	for (size_t i = 0; i < w->ncopies; i++) {
		w->copies[i]->id = (int)i + 1;
		analyze(w, w->copies[i]);
	}
}

/* ---- the command ---- */

static void
free_res(struct scan_win_res *r)
{
	free(r->path);
	free(r->shown);
	free(r->error);
	for (size_t i = 0; i < r->nsteps; i++) {
		free(r->steps[i].shown);
		free(r->steps[i].outcome);
	}
	free(r->steps);
}

static void
free_dir(struct scan_win_dir *d)
{
	free(d->shown);
	free(d->local);
	free(d->why);
}

void
scan_win_free(struct scan_win *w)
{
	for (size_t i = 0; i < w->ntrees; i++) {
		free(w->trees[i].dir);
		free(w->trees[i].real);
	}
	free(w->trees);
	for (size_t i = 0; i < w->ncopies; i++) {
		struct scan_win_copy *c = w->copies[i];

		for (size_t k = 0; k < c->ndlls; k++) {
			scan_pe_free(&c->dlls[k]->pe);
			free(c->dlls[k]->name);
			free(c->dlls[k]->path);
			free(c->dlls[k]);
		}
		free(c->dlls);
		free(c->dir);
		free(c->win);
		free(c);
	}
	free(w->copies);
	for (size_t i = 0; i < w->nfindings; i++) {
		free(w->findings[i].message);
		scan_strv_free(&w->findings[i].paths);
	}
	free(w->findings);
	for (size_t i = 0; i < w->nloads; i++) {
		free_res(&w->loads[i].main);
		for (size_t k = 0; k < w->loads[i].nsubs; k++)
			free_res(&w->loads[i].subs[k]);
	}
	free(w->loads);
	free_dir(&w->app);
	free_dir(&w->torch_lib);
	free_dir(&w->conda_bin);
	scan_strv_free(&w->dll_dirs);
	free(w->imports_from);
	scan_strv_free(&w->imports);
}
