/*
 * What the directories hold: their libcudnn files read without running
 * them (links, modes, ELF headers), grouped into copies (one cuDNN major
 * in one directory), each copy's dispatcher, sub-libraries and version,
 * the copies a symlink farm shows again, and which copy and version a
 * resolution's path is. The one exception to "nothing is run", the
 * version of a dispatcher whose name carries none, asks the helper in
 * scan-probe.c, once per file.
 */
#include "scan-int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 5000
#define MAX_LINKS 40		/* the kernel's own limit on links followed */
#define MAX_ENTRIES 4096	/* cuDNN names in one directory; more is someone's experiment */

/* --no-probe: never load a library, not even in the helper. */
int scan_no_probe;

static const char *const subs9[] = {
	"graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic", NULL
};
static const char *const subs8[] = { "ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train", NULL };

/* ---- names ---- */

/*
 * libcudnn.so[.N[.N[.N]]] or libcudnn_SUB.so[...]: returns 1 and fills
 * sub (empty for the dispatcher) and the numbers after ".so".
 * libcudnn.so.9.bak and libcudnn_static.a are not libraries the loader
 * would take, and are not ours.
 */
int
scan_parse_name(const char *name, char *sub, size_t subsz, int ver[4], int *nver)
{
	const char *p = name, *so;
	size_t sublen;

	*nver = 0;
	if (strncmp(p, "libcudnn", 8) != 0)
		return 0;
	p += 8;
	so = strstr(p, ".so");
	if (!so)
		return 0;
	if (so == p) {
		sublen = 0;
	} else {
		if (*p != '_')
			return 0;
		p++;
		sublen = (size_t)(so - p);
		if (sublen == 0 || sublen >= subsz)
			return 0;
		for (const char *q = p; q < so; q++)
			if (!(*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
				return 0;
	}
	memcpy(sub, p, sublen);
	sub[sublen] = '\0';
	p = so + 3;
	while (*p == '.') {
		long v = 0;
		int digits = 0;

		p++;
		while (*p >= '0' && *p <= '9' && digits < 7) {
			v = v * 10 + (*p - '0');
			p++;
			digits++;
		}
		if (digits == 0 || *nver >= 4)
			return 0;
		ver[(*nver)++] = (int)v;
	}
	return *p == '\0';
}

const char *
scan_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int
in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

const char *const *
scan_subs_of_major(int major)
{
	static const char *const none[] = { NULL };

	if (major >= 9)
		return subs9;
	if (major == 8)
		return subs8;
	return none;
}

static unsigned long
version_number(int major, int minor, int patch)
{
	/* 8.x and older: M*1000+m*100+p; 9.x: M*10000+m*100+p. */
	return major >= 9 ? (unsigned long)major * 10000 + minor * 100 + patch
			  : (unsigned long)major * 1000 + minor * 100 + patch;
}

static void
version_from_number(unsigned long v, char *out, size_t n)
{
	if (v >= 10000)
		snprintf(out, n, "%lu.%lu.%lu", v / 10000, v % 10000 / 100, v % 100);
	else
		snprintf(out, n, "%lu.%lu.%lu", v / 1000, v % 1000 / 100, v % 100);
}

/* ---- what a directory holds ---- */

static void
read_chain(struct scan_file *f)
{
	struct scan_strv visited = { 0 };
	char *cur = scan_xstrdup(f->path);
	struct stat st;

	f->link = SCAN_LINK_OK;
	for (int hops = 0;; hops++) {
		char target[PATH_MAX];
		ssize_t n;
		char *next;

		/* A name seen before is a loop; the chain stops there rather than going round. */
		if (hops >= MAX_LINKS || !scan_strv_add_unique(&visited, cur)) {
			f->link = SCAN_LINK_LOOP;
			break;
		}
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0)
			break;
		target[n] = '\0';
		scan_strv_add(&f->chain, target);
		if (target[0] == '/') {
			next = scan_xstrdup(target);
		} else {
			char *slash = strrchr(cur, '/');

			next = scan_xasprintf("%.*s/%s", slash ? (int)(slash - cur) : 1, slash ? cur : ".", target);
		}
		free(cur);
		cur = next;
		if (lstat(cur, &st) != 0) {
			f->link = errno == ELOOP ? SCAN_LINK_LOOP : SCAN_LINK_DANGLING;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
	}
	free(cur);
	scan_strv_free(&visited);
}

static struct scan_file *
read_file(const char *dir, const char *name, const char *sub, const int ver[4], int nver)
{
	struct scan_file *f = scan_xmalloc(sizeof(*f));
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->name = scan_xstrdup(name);
	f->path = scan_xasprintf("%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
	f->sub = sub[0] ? scan_xstrdup(sub) : NULL;
	if (lstat(f->path, &st) == 0 && S_ISLNK(st.st_mode))
		read_chain(f);
	f->real = realpath(f->path, NULL);
	if (stat(f->path, &st) == 0) {
		f->has_stat = 1;
		f->mode = st.st_mode & 07777;
		f->size = (long long)st.st_size;
		f->mtime = (long long)st.st_mtime;
		f->is_reg = S_ISREG(st.st_mode);
	}
	scan_elf_read(f->path, &f->elf);
	/* The version and major: the file's own name, or those of the files it links to (last first). */
	f->major = nver ? ver[0] : 0;
	if (nver >= 3)
		snprintf(f->version, sizeof(f->version), "%d.%d.%d", ver[0], ver[1], ver[2]);
	for (size_t i = f->chain.n; i-- > 0;) {
		char csub[64];
		int cver[4], cn;

		if (!scan_parse_name(scan_base_name(f->chain.v[i]), csub, sizeof(csub), cver, &cn) || cn == 0)
			continue;
		if (!f->major)
			f->major = cver[0];
		if (!f->version[0] && cn >= 3 && cver[0] == f->major)
			snprintf(f->version, sizeof(f->version), "%d.%d.%d", cver[0], cver[1], cver[2]);
	}
	if (!f->major && f->sub) {
		if (in_list(subs9, f->sub) && !in_list(subs8, f->sub))
			f->major = 9;
		else if (in_list(subs8, f->sub))
			f->major = 8;
	}
	return f;
}

void
scan_free_file(struct scan_file *f)
{
	free(f->name);
	free(f->path);
	free(f->sub);
	free(f->real);
	scan_strv_free(&f->chain);
	scan_elf_free(&f->elf);
	free(f);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct scan_copy *
copy_for(struct scan_result *r, const struct scan_dir *d, int major)
{
	struct scan_copy *c;

	for (size_t i = 0; i < r->ncopies; i++)
		if (r->copies[i]->major == major && strcmp(r->copies[i]->dir, d->real) == 0)
			return r->copies[i];
	c = scan_xmalloc(sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->dir = scan_xstrdup(d->real);
	c->major = major;
	for (size_t i = 0; i < d->also.n; i++)
		scan_strv_add(&c->also, d->also.v[i]);
	for (size_t i = 0; i < d->sources.n; i++)
		scan_strv_add(&c->sources, d->sources.v[i]);
	r->copies = scan_xrealloc(r->copies, (r->ncopies + 1) * sizeof(*r->copies));
	r->copies[r->ncopies++] = c;
	return c;
}

void
scan_read_dir(struct scan_result *r, const struct scan_dir *d)
{
	struct scan_strv names = { 0 };
	struct dirent *de;
	DIR *dp = opendir(d->real);

	if (!dp)
		return;
	while ((de = readdir(dp)) && names.n < MAX_ENTRIES) {
		char sub[64];
		int ver[4], nver;

		if (scan_parse_name(de->d_name, sub, sizeof(sub), ver, &nver))
			scan_strv_add(&names, de->d_name);
	}
	closedir(dp);
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	for (size_t i = 0; i < names.n; i++) {
		char sub[64];
		int ver[4], nver;
		struct scan_file *f;
		struct scan_copy *c;

		scan_parse_name(names.v[i], sub, sizeof(sub), ver, &nver);
		f = read_file(d->real, names.v[i], sub, ver, nver);
		c = copy_for(r, d, f->major);
		c->files = scan_xrealloc(c->files, (c->nfiles + 1) * sizeof(*c->files));
		c->files[c->nfiles++] = f;
	}
	scan_strv_free(&names);
}

struct scan_file *
scan_file_named(const struct scan_copy *c, const char *name)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (strcmp(c->files[i]->name, name) == 0)
			return c->files[i];
	return NULL;
}

/* ---- versions: file names first, then the helper, each file asked once ---- */

struct probe_memo {
	char *real;
	struct scan_probe p;
};

static struct probe_memo *memo;
static size_t nmemo;

static const struct scan_probe *
probe(const char *path)
{
	char *real = realpath(path, NULL);

	if (!real)
		real = scan_xstrdup(path);
	for (size_t i = 0; i < nmemo; i++) {
		if (strcmp(memo[i].real, real) == 0) {
			free(real);
			return &memo[i].p;
		}
	}
	memo = scan_xrealloc(memo, (nmemo + 1) * sizeof(*memo));
	memo[nmemo].real = real;
	scan_probe_version(path, PROBE_TIMEOUT_MS, &memo[nmemo].p);
	return &memo[nmemo++].p;
}

void
scan_forget_probes(void)
{
	for (size_t i = 0; i < nmemo; i++)
		free(memo[i].real);
	free(memo);
	memo = NULL;
	nmemo = 0;
}

static void
copy_version(struct scan_copy *c)
{
	if (c->dispatcher_ok && c->dispatcher->version[0]) {
		int a, b, p;

		snprintf(c->version, sizeof(c->version), "%s", c->dispatcher->version);
		if (sscanf(c->version, "%d.%d.%d", &a, &b, &p) == 3)
			c->version_number = version_number(a, b, p);
		c->version_from = "file name";
		return;
	}
	if (c->dispatcher_ok) {
		const struct scan_probe *p;

		if (scan_no_probe) {
			c->version_error = scan_xstrdup("not read: --no-probe, and the file name carries no version");
			return;
		}
		p = probe(c->dispatcher->path);
		if (p->ok) {
			c->version_number = p->version;
			version_from_number(p->version, c->version, sizeof(c->version));
			c->version_from = "cudnnGetVersion";
		} else {
			c->version_error = scan_xstrdup(p->why);
		}
		return;
	}
	/* No dispatcher: the sub-libraries' names, when they agree. */
	for (size_t i = 0; i < c->nsubs; i++) {
		const struct scan_file *f = c->subs[i].file;

		if (!c->subs[i].ok || !f->version[0])
			continue;
		if (!c->version[0]) {
			snprintf(c->version, sizeof(c->version), "%s", f->version);
		} else if (strcmp(c->version, f->version) != 0) {
			c->version[0] = '\0';
			return;
		}
	}
	if (c->version[0]) {
		int a, b, p;

		if (sscanf(c->version, "%d.%d.%d", &a, &b, &p) == 3)
			c->version_number = version_number(a, b, p);
		c->version_from = "sub-library file names";
	}
}

void
scan_analyze_copy(struct scan_copy *c)
{
	const char *const *expected = scan_subs_of_major(c->major);
	char name[128];

	if (c->major > 0) {
		snprintf(name, sizeof(name), "libcudnn.so.%d", c->major);
		c->dispatcher = scan_file_named(c, name);
	}
	c->dispatcher_ok = c->dispatcher && c->dispatcher->elf.status == SCAN_ELF_OK;
	/* The dispatcher's version first: it decides the names it asks for. */
	if (c->dispatcher_ok)
		copy_version(c);
	for (size_t i = 0; expected[i] && c->nsubs < sizeof(c->subs) / sizeof(c->subs[0]); i++) {
		struct scan_sub *s = &c->subs[c->nsubs++];
		struct scan_file *by_version = NULL;
		int a, b, p;

		s->name = expected[i];
		/*
		 * cuDNN 9.19 asks for libcudnn_ops.so.9.19.0, then .so.9.19,
		 * then .so.9 (LD_DEBUG=libs on the real library): a copy with
		 * the full-version names alone is complete for its dispatcher.
		 */
		if (c->dispatcher_ok && sscanf(c->version, "%d.%d.%d", &a, &b, &p) == 3) {
			snprintf(name, sizeof(name), "libcudnn_%s.so.%d.%d.%d", expected[i], a, b, p);
			by_version = scan_file_named(c, name);
			if (!by_version || by_version->elf.status != SCAN_ELF_OK) {
				snprintf(name, sizeof(name), "libcudnn_%s.so.%d.%d", expected[i], a, b);
				by_version = scan_file_named(c, name);
			}
		}
		snprintf(name, sizeof(name), "libcudnn_%s.so.%d", expected[i], c->major);
		s->file = by_version && by_version->elf.status == SCAN_ELF_OK ? by_version : scan_file_named(c, name);
		if (s->file && s->file->elf.status == SCAN_ELF_OK) {
			s->ok = 1;
			c->nsubs_ok++;
			continue;
		}
		if (s->file) {
			s->note = scan_xasprintf("%s is unusable: %s", name,
			    s->file->link == SCAN_LINK_DANGLING ? "a dangling symlink" :
			    s->file->link == SCAN_LINK_LOOP ? "a symlink loop" : s->file->elf.why);
			continue;
		}
		/* A versioned file without the SONAME link that dlopen() asks for. */
		for (size_t j = 0; j < c->nfiles; j++) {
			const struct scan_file *f = c->files[j];

			if (f->sub && strcmp(f->sub, expected[i]) == 0 && f->version[0]) {
				s->note = scan_xasprintf("only %s is there, no %s link to it", f->name, name);
				break;
			}
		}
		if (!s->note)
			s->note = scan_xasprintf("%s is missing", name);
	}
	if (!c->dispatcher_ok)
		copy_version(c);
}

int
scan_copy_has_content(const struct scan_copy *c)
{
	return c->dispatcher || c->nsubs_ok > 0;
}

/* ---- what a resolution found: its version and its copy ---- */

static struct scan_copy *
copy_of_path(struct scan_result *r, const char *path, int major)
{
	char *dir = scan_xstrdup(path);
	char *slash = strrchr(dir, '/');
	char *real;
	struct scan_copy *found = NULL;

	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	real = realpath(dir, NULL);
	for (size_t i = 0; real && i < r->ncopies; i++)
		if (strcmp(r->copies[i]->dir, real) == 0 && (!major || r->copies[i]->major == major))
			found = r->copies[i];
	free(real);
	free(dir);
	return found;
}

/* The version a file's names carry, or the helper's answer for a dispatcher. */
static void
path_version(struct scan_result *r, const char *path, int dispatcher, char *out, size_t n)
{
	char sub[64];
	int ver[4], nver;
	struct scan_file *f;
	struct scan_copy *c;
	char *dir, *slash;

	out[0] = '\0';
	if (!scan_parse_name(scan_base_name(path), sub, sizeof(sub), ver, &nver))
		return;
	c = copy_of_path(r, path, nver ? ver[0] : 0);
	if (c) {
		const struct scan_file *cf = scan_file_named(c, scan_base_name(path));

		if (dispatcher && cf == c->dispatcher && c->version[0]) {
			snprintf(out, n, "%s", c->version);
			return;
		}
		if (cf && cf->version[0]) {
			snprintf(out, n, "%s", cf->version);
			return;
		}
		if (cf && !dispatcher)
			return;
	}
	dir = scan_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	f = read_file(dir, scan_base_name(path), sub, ver, nver);
	free(dir);
	if (f->version[0]) {
		snprintf(out, n, "%s", f->version);
	} else if (dispatcher && !scan_no_probe && f->elf.status == SCAN_ELF_OK) {
		const struct scan_probe *p = probe(path);

		if (p->ok)
			version_from_number(p->version, out, n);
	}
	scan_free_file(f);
}

void
scan_describe(struct scan_result *r, struct scan_resolution *res, int dispatcher_major)
{
	char sub[64];
	int ver[4], nver;
	struct scan_copy *c;

	if (!res->path)
		return;
	path_version(r, res->path, dispatcher_major > 0, res->version, sizeof(res->version));
	nver = 0;
	scan_parse_name(scan_base_name(res->path), sub, sizeof(sub), ver, &nver);
	c = copy_of_path(r, res->path, nver ? ver[0] : 0);
	res->copy = c ? c->id : 0;
}

int
scan_dispatcher_major(const char *name)
{
	char sub[64];
	int ver[4], nver;

	if (!scan_parse_name(name, sub, sizeof(sub), ver, &nver) || sub[0] || nver < 1)
		return 0;
	return ver[0];
}

/* ---- symlink farms ---- */

static char *
dir_of(const char *path)
{
	char *d = scan_xstrdup(path);
	char *slash = strrchr(d, '/');

	if (slash)
		*(slash == d ? slash + 1 : slash) = '\0';
	return d;
}

/*
 * The one directory every file of c links into, when it is not c's own:
 * a "symlink farm" (a conda environment or a module tree that links a
 * toolkit's files) is that copy seen again, not a second one.
 */
static char *
farm_target(const struct scan_copy *c)
{
	char *dir = NULL;

	for (size_t i = 0; i < c->nfiles; i++) {
		const struct scan_file *f = c->files[i];
		char *d;

		if (f->link != SCAN_LINK_OK || !f->real) {
			free(dir);
			return NULL;
		}
		d = dir_of(f->real);
		if (!dir) {
			dir = d;
		} else if (strcmp(dir, d) != 0) {
			free(d);
			free(dir);
			return NULL;
		} else {
			free(d);
		}
	}
	if (dir && strcmp(dir, c->dir) == 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

void
scan_find_farms(struct scan_result *r)
{
	/* The loop sees the copies a farm's target adds as well. */
	for (size_t k = 0; k < r->ncopies; k++) {
		struct scan_copy *c = r->copies[k];

		c->farm_of = farm_target(c);
		if (c->farm_of && !scan_find_dir(r, c->farm_of)) {
			size_t before = r->ndirs;

			scan_add_dir(r, c->farm_of, "symlink farm target");
			if (r->ndirs > before)
				scan_read_dir(r, &r->dirs[r->ndirs - 1]);
		}
	}
}

void
scan_farm_ids(struct scan_result *r)
{
	for (size_t k = 0; k < r->ncopies; k++) {
		struct scan_copy *c = r->copies[k];

		for (size_t j = 0; c->farm_of && j < r->ncopies; j++)
			if (r->copies[j] != c && r->copies[j]->major == c->major &&
			    strcmp(r->copies[j]->dir, c->farm_of) == 0)
				c->farm_copy = r->copies[j]->id;
	}
}
