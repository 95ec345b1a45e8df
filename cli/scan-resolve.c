/*
 * Which file the loader would take for a name such as libcudnn.so.9,
 * worked out the way glibc's ld.so does it for a DT_NEEDED entry or a
 * dlopen() by name, without loading anything:
 *
 *   1. the object's DT_RPATH, only when it has no DT_RUNPATH;
 *   2. LD_LIBRARY_PATH (not for set-uid/set-gid programs);
 *   3. the object's DT_RUNPATH;
 *   4. the ld.so cache;
 *   5. the default directories;
 *
 * the last two skipped for objects marked DF_1_NODEFLIB. In a directory,
 * a missing file, a dangling link, a symlink loop, a file we may not open,
 * or an ELF of another class or machine is passed over; a file that is
 * not ELF, a truncated one or a directory stops the load with an error
 * (glibc 2.36 checked by hand: "file too short", "cannot read file
 * data"), and a FIFO would make it wait for ever.
 *
 * Not modelled: the glibc-hwcaps and legacy hwcap subdirectories of each
 * directory, and the DT_RPATH of the objects that loaded this one.
 */
#include "scan-int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MULTIARCH "powerpc64le-linux-gnu"
#else
#define MULTIARCH ""
#endif

/* Debian and Ubuntu build their loader with these; other distributions with lib64 (glibc's own choice). */
static const char *const multiarch_dirs[] = {
	"/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib", "/usr/lib", NULL
};
static const char *const lib64_dirs[] = { "/lib64", "/usr/lib64", NULL };

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *const *
scan_default_dirs(void)
{
	static int multiarch = -1;

	if (multiarch < 0)
		multiarch = MULTIARCH[0] && is_dir("/usr/lib/" MULTIARCH);
	return multiarch ? multiarch_dirs : lib64_dirs;
}

static void
add_step(struct scan_resolution *r, const char *dir, const char *rule, const char *path, const char *outcome)
{
	struct scan_step *s;

	r->steps = scan_xrealloc(r->steps, (r->nsteps + 1) * sizeof(*r->steps));
	s = &r->steps[r->nsteps++];
	s->dir = scan_xstrdup(dir ? dir : "");
	s->rule = rule;
	s->path = scan_xstrdup(path ? path : "");
	s->outcome = scan_xstrdup(outcome);
}

/* What try_file() tells the search. */
enum { GO_ON, DONE, NEXT_RULE };

/*
 * Tries dir/name: DONE when the search ends here (found, or the load
 * fails), GO_ON when the loader would try the next directory, NEXT_RULE
 * when it gives up on the rest of this list. glibc's open_path() does the
 * last for any error but "no such file" and "permission denied" in a
 * directory that exists: a symlink loop in one LD_LIBRARY_PATH entry
 * hides every entry after it (checked with glibc 2.36).
 */
static int
try_file(struct scan_resolution *r, const char *dir, const char *file, const char *rule)
{
	struct scan_elf e;
	char outcome[320];
	int done = GO_ON;

	scan_elf_read(file, &e);
	if ((e.status == SCAN_ELF_MISSING || e.status == SCAN_ELF_DENIED) && e.err != 0 && e.err != ENOENT &&
	    e.err != EACCES && is_dir(dir)) {
		snprintf(outcome, sizeof(outcome), "%s: the loader gives up on the rest of %s here",
		    e.err == ELOOP ? "a symlink loop" : e.why, rule);
		add_step(r, dir, rule, file, outcome);
		scan_elf_free(&e);
		return NEXT_RULE;
	}
	switch (e.status) {
	case SCAN_ELF_OK:
		snprintf(outcome, sizeof(outcome), "found");
		r->path = scan_xstrdup(file);
		r->real = realpath(file, NULL);
		if (!r->real)
			r->real = scan_xstrdup(file);
		r->rule = rule;
		done = DONE;
		break;
	case SCAN_ELF_MISSING: {
		struct stat st;

		if (strcmp(e.why, "a symlink loop") == 0)
			snprintf(outcome, sizeof(outcome), "skipped: a symlink loop");
		else if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode))
			snprintf(outcome, sizeof(outcome), "skipped: a dangling symlink");
		else
			snprintf(outcome, sizeof(outcome), "not there");
		break;
	}
	case SCAN_ELF_DENIED:
		snprintf(outcome, sizeof(outcome), "skipped: cannot be opened (%s)", e.why);
		break;
	case SCAN_ELF_FOREIGN:
		snprintf(outcome, sizeof(outcome), "skipped: %s", e.why);
		break;
	case SCAN_ELF_NOT_FILE:
		if (strcmp(e.why, "a FIFO") == 0)
			snprintf(outcome, sizeof(outcome), "the loader would block opening it (a FIFO)");
		else
			snprintf(outcome, sizeof(outcome), "the loader stops with an error: %s", e.why);
		r->error = scan_xasprintf("%s: %s", file, outcome);
		done = DONE;
		break;
	case SCAN_ELF_INVALID:
		snprintf(outcome, sizeof(outcome), "the loader stops with an error: %s", e.why);
		r->error = scan_xasprintf("%s: %s", file, e.why);
		done = DONE;
		break;
	}
	add_step(r, dir, rule, file, outcome);
	scan_elf_free(&e);
	return done;
}

/*
 * The length of the dynamic string token NAME at p ("$NAME" or "${NAME}"),
 * or 0. Like glibc, "$NAME" counts only when a '/' or the end follows.
 */
static size_t
token(const char *p, const char *name)
{
	size_t n = strlen(name);

	if (p[1] == '{')
		return strncmp(p + 2, name, n) == 0 && p[2 + n] == '}' ? n + 3 : 0;
	if (strncmp(p + 1, name, n) != 0 || (p[1 + n] != '\0' && p[1 + n] != '/'))
		return 0;
	return n + 1;
}

/*
 * Replaces $ORIGIN and $LIB; NULL when $PLATFORM is there (its value
 * depends on the CPU). Any other '$' stays as written, as in glibc.
 */
static char *
expand_tokens(const char *entry, const char *origin)
{
	const char *lib = scan_default_dirs() == multiarch_dirs ? "lib/" MULTIARCH : "lib64";
	size_t cap = strlen(entry) + 1, len = 0;
	char *out = scan_xmalloc(cap);

	for (const char *p = entry; *p;) {
		const char *with = NULL;
		size_t skip = 0;

		if (*p == '$') {
			if ((skip = token(p, "ORIGIN")))
				with = origin;
			else if ((skip = token(p, "LIB")))
				with = lib;
			else if (token(p, "PLATFORM")) {
				free(out);
				return NULL;
			}
		}
		if (!with) {
			with = p;
			skip = 1;
		}
		if (len + (with == p ? 1 : strlen(with)) + 1 > cap) {
			cap = (len + (with == p ? 1 : strlen(with)) + 1) * 2;
			out = scan_xrealloc(out, cap);
		}
		if (with == p) {
			out[len++] = *p;
		} else {
			memcpy(out + len, with, strlen(with));
			len += strlen(with);
		}
		p += skip;
	}
	out[len] = '\0';
	return out;
}

/*
 * Searches each entry of a ':'-separated list. An empty entry is the
 * current directory for the loader, and so it is here.
 */
static int
search_list(struct scan_resolution *r, const char *list, const char *seps, const char *origin,
	    const char *name, const char *rule)
{
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, seps);
		char *entry = scan_xmalloc(n + 1);
		char *dir, *file;
		int done;

		memcpy(entry, p, n);
		entry[n] = '\0';
		dir = expand_tokens(entry, origin);
		if (!dir) {
			add_step(r, entry, rule, NULL, "skipped: a token this tool does not expand ($PLATFORM)");
			free(entry);
		} else {
			char *cwd = NULL;

			if (dir[0] == '\0' || dir[0] != '/') {
				/* Relative entries count from the process's directory: ours stands in for it. */
				cwd = getcwd(NULL, 0);
				if (cwd) {
					char *abs = dir[0] ? scan_xasprintf("%s/%s", cwd, dir) : scan_xstrdup(cwd);

					free(dir);
					dir = abs;
				}
			}
			file = scan_xasprintf("%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
			done = try_file(r, dir, file, rule);
			free(cwd);
			free(file);
			free(dir);
			free(entry);
			if (done == DONE)
				return 1;
			if (done == NEXT_RULE)
				return 0;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

struct object {
	const char *rpath, *runpath, *origin;
	int nodeflib, secure;
};

static void
resolve(struct scan_resolution *r, const char *name, const struct object *o, const struct scan_cache *cache)
{
	const char *llp = getenv("LD_LIBRARY_PATH");
	const char *cached;
	const char *const *defaults;

	memset(r, 0, sizeof(*r));
	r->name = scan_xstrdup(name);
	if (o->rpath && !o->runpath && search_list(r, o->rpath, ":", o->origin, name, "DT_RPATH"))
		return;
	if (llp && llp[0]) {
		if (o->secure)
			add_step(r, NULL, "LD_LIBRARY_PATH", NULL, "ignored: the program is set-uid or set-gid");
		else if (search_list(r, llp, ":;", o->origin, name, "LD_LIBRARY_PATH"))
			return;
	}
	if (o->runpath && search_list(r, o->runpath, ":", o->origin, name, "DT_RUNPATH"))
		return;
	if (o->nodeflib) {
		add_step(r, NULL, "ld.so.cache", NULL, "skipped: the object is marked DF_1_NODEFLIB");
		return;
	}
	cached = cache ? scan_cache_lookup(cache, name) : NULL;
	if (cached) {
		char *dir = scan_xstrdup(cached);
		char *slash = strrchr(dir, '/');

		if (slash)
			*slash = '\0';
		if (try_file(r, dir, cached, "ld.so.cache") == DONE) {
			free(dir);
			return;
		}
		free(dir);
	} else {
		add_step(r, NULL, "ld.so.cache", NULL, cache && cache->loaded ? "no entry" : "the cache could not be read");
	}
	defaults = scan_default_dirs();
	for (size_t i = 0; defaults[i]; i++) {
		char *file = scan_xasprintf("%s/%s", defaults[i], name);
		int done = try_file(r, defaults[i], file, "default directories");

		free(file);
		if (done != GO_ON)
			return;
	}
}

void
scan_resolve_plain(struct scan_resolution *r, const char *name, const struct scan_cache *cache)
{
	struct object o = { NULL, NULL, "", 0, 0 };
	char *cwd = getcwd(NULL, 0);

	o.origin = cwd ? cwd : "/";
	resolve(r, name, &o, cache);
	free(cwd);
}

void
scan_resolve_from(struct scan_resolution *r, const char *name, const char *object_path,
		  const struct scan_elf *elf, const struct scan_cache *cache)
{
	struct object o = { elf->rpath, elf->runpath, NULL, elf->nodeflib, 0 };
	char *origin = scan_xstrdup(object_path);
	char *slash = strrchr(origin, '/');

	if (slash)
		*(slash == origin ? slash + 1 : slash) = '\0';
	o.origin = origin;
	resolve(r, name, &o, cache);
	free(origin);
}

void
scan_resolution_free(struct scan_resolution *r)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		free(r->steps[i].dir);
		free(r->steps[i].path);
		free(r->steps[i].outcome);
	}
	free(r->steps);
	for (size_t i = 0; i < r->nsubs; i++)
		scan_resolution_free(&r->subs[i].r);
	free(r->subs);
	free(r->name);
	free(r->path);
	free(r->real);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

static int
is_cudnn_soname(const char *s)
{
	const char *p;

	if (strncmp(s, "libcudnn", 8) != 0)
		return 0;
	p = strstr(s, ".so.");
	if (!p || p[4] < '0' || p[4] > '9')
		return 0;
	for (const char *q = s + 8; q < p; q++)
		if (!(*q == '_' || (*q >= 'a' && *q <= 'z')))
			return 0;
	for (p += 4; *p; p++)
		if (!(*p == '.' || (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

int
scan_for_resolve(struct scan_for *f, const char *target, const struct scan_cache *cache)
{
	struct object o;
	struct stat st;
	char *cwd;

	memset(f, 0, sizeof(*f));
	f->target = scan_xstrdup(target);
	if (target[0] == '/') {
		f->abs = scan_xstrdup(target);
	} else {
		/* "./prog" is written the way the loader would write it: no "./" left. */
		while (target[0] == '.' && target[1] == '/')
			for (target += 2; *target == '/'; target++)
				;
		cwd = getcwd(NULL, 0);
		f->abs = scan_xasprintf("%s/%s", cwd && strcmp(cwd, "/") != 0 ? cwd : "", target);
		free(cwd);
	}
	scan_elf_read(f->abs, &f->elf);
	if (f->elf.status != SCAN_ELF_OK && f->elf.status != SCAN_ELF_FOREIGN)
		return -1;
	/*
	 * $ORIGIN: for a program, the directory of the real file (the
	 * kernel's /proc/self/exe); for a library, of the path it was
	 * loaded by, symlinks and all.
	 */
	if (f->elf.is_program) {
		char *real = realpath(f->abs, NULL);

		f->origin = real ? real : scan_xstrdup(f->abs);
	} else {
		f->origin = scan_xstrdup(f->abs);
	}
	{
		char *slash = strrchr(f->origin, '/');

		if (slash)
			*(slash == f->origin ? slash + 1 : slash) = '\0';
	}
	/* The kernel sets AT_SECURE when the program changes the user or group it runs as. */
	f->secure = f->elf.is_program && stat(f->abs, &st) == 0 &&
	    (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	     ((st.st_mode & S_ISGID) && st.st_gid != getgid()));
	o.rpath = f->elf.rpath;
	o.runpath = f->elf.runpath;
	o.origin = f->origin;
	o.nodeflib = f->elf.nodeflib;
	o.secure = f->secure;
	for (size_t i = 0; i < f->elf.needed.n; i++) {
		const char *n = f->elf.needed.v[i];

		if (!is_cudnn_soname(n))
			continue;
		f->links_cudnn = 1;
		f->res = scan_xrealloc(f->res, (f->nres + 1) * sizeof(*f->res));
		resolve(&f->res[f->nres++], n, &o, cache);
	}
	if (!f->links_cudnn) {
		/* As a dlopen() from this object would go, for both majors in use. */
		static const char *const names[] = { "libcudnn.so.9", "libcudnn.so.8" };

		for (size_t i = 0; i < 2; i++) {
			f->res = scan_xrealloc(f->res, (f->nres + 1) * sizeof(*f->res));
			resolve(&f->res[f->nres++], names[i], &o, cache);
		}
	}
	return 0;
}

void
scan_for_free(struct scan_for *f)
{
	for (size_t i = 0; i < f->nres; i++)
		scan_resolution_free(&f->res[i]);
	free(f->res);
	free(f->target);
	free(f->abs);
	free(f->origin);
	scan_elf_free(&f->elf);
	memset(f, 0, sizeof(*f));
}
