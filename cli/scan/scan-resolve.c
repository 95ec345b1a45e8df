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
 * For a DT_NEEDED entry or a dlopen() of an object without DT_RUNPATH,
 * step 1 is the DT_RPATH of that object, then of the object that loaded
 * it, and so on up to the program, then the program's own (glibc's
 * _dl_map_object); an object with a DT_RUNPATH has its DT_RPATH ignored.
 * A name that an object loaded already answers to (the name it was asked
 * by, or its SONAME) is that object, searched for no more; so is a file
 * found that is one loaded already (same device and inode).
 *
 * In each directory of those lists (not for the cache's answer), the
 * glibc-hwcaps and legacy hwcap subdirectories come first (hwcap_subdirs).
 *
 * Not modelled: LD_PRELOAD, the cache's hwcap entries.
 */
#include "scan-int.h"

#include <errno.h>
#include <gnu/libc-version.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
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

/* ---- who runs the program ---- */

static struct {
	int set;
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int ngroups;
	char name[64];
} user;

int
scan_resolve_set_user(const char *name, char *why, size_t whylen)
{
	struct passwd *pw = getpwnam(name);
	int n = (int)(sizeof(user.groups) / sizeof(user.groups[0]));

	/* A number is a user id, as for chown. */
	if (!pw && name[0] && strspn(name, "0123456789") == strlen(name) && strlen(name) < 10)
		pw = getpwuid((uid_t)strtoul(name, NULL, 10));
	if (!pw) {
		snprintf(why, whylen, "no such user");
		return -1;
	}
	user.set = 1;
	user.uid = pw->pw_uid;
	user.gid = pw->pw_gid;
	if (getgrouplist(pw->pw_name, pw->pw_gid, user.groups, &n) < 0) {
		/* More groups than we keep: the primary one is enough to decide most cases. */
		user.groups[0] = pw->pw_gid;
		n = 1;
	}
	user.ngroups = n;
	snprintf(user.name, sizeof(user.name), "%s", pw->pw_name);
	return 0;
}

const char *
scan_resolve_user(void)
{
	static char self[64];
	struct passwd *pw;

	if (user.set)
		return user.name;
	if (!self[0]) {
		pw = getpwuid(getuid());
		if (pw)
			snprintf(self, sizeof(self), "%s", pw->pw_name);
		else
			snprintf(self, sizeof(self), "uid %u", (unsigned)getuid());
	}
	return self;
}

/* The permission bit (4 read, 1 search) for the user, from the mode, as the kernel decides it. */
static int
allowed(const struct stat *st, unsigned bit)
{
	if (st->st_uid == user.uid)
		return (st->st_mode >> 6) & bit;
	for (int i = 0; i < user.ngroups; i++)
		if (user.groups[i] == st->st_gid)
			return (st->st_mode >> 3) & bit;
	return st->st_mode & bit;
}

static int
dirs_searchable(const char *path)
{
	char *p = scan_xstrdup(path);
	int ok = 1;

	for (char *slash = strchr(p + 1, '/'); ok && slash; slash = strchr(slash + 1, '/')) {
		struct stat st;

		*slash = '\0';
		ok = stat(p[0] ? p : "/", &st) != 0 || !S_ISDIR(st.st_mode) || allowed(&st, 1);
		*slash = '/';
	}
	free(p);
	return ok;
}

int
scan_user_may_read(const char *path)
{
	struct stat st;
	char *real;
	int ok;

	if (!user.set)
		return access(path, R_OK) == 0;
	/* Root reads whatever the mode bits say (CAP_DAC_OVERRIDE). */
	if (user.uid == 0)
		return 1;
	if (stat(path, &st) != 0 || !dirs_searchable(path))
		return 0;
	real = realpath(path, NULL);
	ok = allowed(&st, 4) && (!real || dirs_searchable(real));
	free(real);
	return ok;
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
	/*
	 * The file the program's user may not open is passed over, as one
	 * that is not there: glibc's open_path() goes on after EACCES.
	 */
	if (e.status != SCAN_ELF_MISSING && e.status != SCAN_ELF_DENIED && e.status != SCAN_ELF_NOT_FILE &&
	    user.set && !scan_user_may_read(file)) {
		struct stat st;

		snprintf(outcome, sizeof(outcome), "skipped: user %s cannot read it (mode %04o)", user.name,
		    stat(file, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0u);
		scan_strv_add_unique(&r->denied, file);
		add_step(r, dir, rule, file, outcome);
		scan_elf_free(&e);
		return GO_ON;
	}
	if (e.status == SCAN_ELF_DENIED)
		scan_strv_add_unique(&r->denied, file);
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
 * The subdirectories the loader tries in each directory before the
 * directory itself: glibc-hwcaps/x86-64-vN for each level this CPU
 * supports (glibc 2.33 and later), then the legacy hwcap directories of
 * the x86_64 platform (up to glibc 2.36), as LD_DEBUG=libs lists them.
 * A "haswell" or "xeon_phi" platform is not modelled.
 */
static const char *const *
hwcap_subdirs(void)
{
	static const char *subs[16];
	static int done;
	size_t n = 0;

	if (done)
		return subs;
	done = 1;
#if defined(__x86_64__)
	{
		int major = 0, minor = 0;

		sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor);
		if (major > 2 || (major == 2 && minor >= 33)) {
			__builtin_cpu_init();
			if (__builtin_cpu_supports("x86-64-v4"))
				subs[n++] = "glibc-hwcaps/x86-64-v4";
			if (__builtin_cpu_supports("x86-64-v3"))
				subs[n++] = "glibc-hwcaps/x86-64-v3";
			if (__builtin_cpu_supports("x86-64-v2"))
				subs[n++] = "glibc-hwcaps/x86-64-v2";
		}
		if (major == 2 && minor < 37) {
			subs[n++] = "tls/x86_64/x86_64";
			subs[n++] = "tls/x86_64";
			subs[n++] = "tls";
			subs[n++] = "x86_64/x86_64";
			subs[n++] = "x86_64";
		}
	}
#endif
	subs[n] = NULL;
	return subs;
}

/*
 * Tries the hwcap subdirectories of dir, then dir/name (file). Only
 * subdirectories that hold something under that name make a step: the
 * rest would be a column of "not there".
 */
static int
try_dir(struct scan_resolution *r, const char *dir, const char *file, const char *name, const char *rule)
{
	const char *const *subs = hwcap_subdirs();
	struct stat st;

	for (size_t i = 0; subs[i]; i++) {
		char *sdir = scan_xasprintf("%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", subs[i]);
		char *sfile = scan_xasprintf("%s/%s", sdir, name);
		int done = GO_ON;

		if (lstat(sfile, &st) == 0)
			done = try_file(r, sdir, sfile, rule);
		free(sfile);
		free(sdir);
		if (done != GO_ON)
			return done;
	}
	return try_file(r, dir, file, rule);
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

/* How $ORIGIN is judged under AT_SECURE: not at all, for a library's paths, for the program's. */
enum { SECURE_NO, SECURE_LIBRARY, SECURE_PROGRAM };

static int
has_origin(const char *entry)
{
	for (const char *p = strchr(entry, '$'); p; p = strchr(p + 1, '$'))
		if (token(p, "ORIGIN"))
			return 1;
	return 0;
}

/* dir is one of the default directories or below one (is_trusted_path_normalize). */
static int
in_system_dir(const char *dir)
{
	const char *const *defaults = scan_default_dirs();
	char *real = realpath(dir, NULL);
	const char *d = real ? real : dir;
	int in = 0;

	for (size_t i = 0; defaults[i] && !in; i++) {
		size_t n = strlen(defaults[i]);

		in = strncmp(d, defaults[i], n) == 0 && (d[n] == '/' || d[n] == '\0');
	}
	free(real);
	return in;
}

/*
 * Searches each entry of a ':'-separated list. An empty entry is the
 * current directory for the loader, and so it is here.
 */
static int
search_list(struct scan_resolution *r, const char *list, const char *seps, const char *origin,
	    const char *name, const char *rule, int secure)
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
		if (dir && secure && has_origin(entry)) {
			/*
			 * AT_SECURE (glibc's _dl_dst_substitute): $ORIGIN counts only
			 * at the start of an entry, and in the program's own paths
			 * only when it leads into a system directory.
			 */
			const char *why = NULL;

			if (entry[0] != '$' || !token(entry, "ORIGIN"))
				why = "skipped: $ORIGIN after the start of an entry is ignored in a set-uid or set-gid program";
			else if (secure == SECURE_PROGRAM && !in_system_dir(dir))
				why = "skipped: the program is set-uid or set-gid and $ORIGIN leads outside the system directories";
			if (why) {
				add_step(r, entry, rule, NULL, why);
				free(dir);
				dir = NULL;
				free(entry);
				goto next;
			}
		}
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
			done = try_dir(r, dir, file, name, rule);
			free(cwd);
			free(file);
			free(dir);
			free(entry);
			if (done == DONE)
				return 1;
			if (done == NEXT_RULE)
				return 0;
		}
next:
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

/* Where one search looks, in the loader's order. */
#define MAX_RPATHS 64

struct search {
	const char *rpath[MAX_RPATHS], *rpath_origin[MAX_RPATHS], *rpath_of[MAX_RPATHS];
	int rpath_secure[MAX_RPATHS];	/* SECURE_* for each */
	size_t nrpath;
	int runpath_secure;
	const char *self;	/* the object that asks, when known */
	const char *llp_origin;	/* $ORIGIN in LD_LIBRARY_PATH: the program's */
	const char *runpath, *origin;
	int nodeflib, secure;
};

static char *
origin_of(const char *path)
{
	char *origin = scan_xstrdup(path);
	char *slash = strrchr(origin, '/');

	if (slash)
		*(slash == origin ? slash + 1 : slash) = '\0';
	return origin;
}

static void
resolve(struct scan_resolution *r, const char *name, const struct search *o, const struct scan_cache *cache)
{
	const char *llp = getenv("LD_LIBRARY_PATH");
	const char *cached;
	const char *const *defaults;

	memset(r, 0, sizeof(*r));
	r->name = scan_xstrdup(name);
	r->object = -1;
	/* A name with a slash is a path: opened as it is (from the current directory), never searched. */
	if (strchr(name, '/')) {
		char *cwd = name[0] == '/' ? NULL : getcwd(NULL, 0);
		char *file = cwd ? scan_xasprintf("%s/%s", strcmp(cwd, "/") ? cwd : "", name) : scan_xstrdup(name);
		char *dir = origin_of(file);

		if (try_file(r, dir, file, "a path") != DONE)
			r->error = scan_xasprintf("%s: cannot open shared object file", file);
		free(dir);
		free(file);
		free(cwd);
		return;
	}
	for (size_t i = 0; i < o->nrpath; i++) {
		if (search_list(r, o->rpath[i], ":", o->rpath_origin[i], name, "DT_RPATH", o->rpath_secure[i])) {
			/* Say whose: an inherited DT_RPATH is what surprises. */
			if (o->rpath_of[i] && (!o->self || strcmp(o->rpath_of[i], o->self) != 0) && r->nsteps) {
				char *w = scan_xasprintf("found (the DT_RPATH of %s, which loaded it)", o->rpath_of[i]);

				free(r->steps[r->nsteps - 1].outcome);
				r->steps[r->nsteps - 1].outcome = w;
			}
			return;
		}
	}
	if (llp && llp[0]) {
		if (o->secure)
			add_step(r, NULL, "LD_LIBRARY_PATH", NULL, "ignored: the program is set-uid or set-gid");
		else if (search_list(r, llp, ":;", o->llp_origin, name, "LD_LIBRARY_PATH", SECURE_NO))
			return;
	}
	if (o->runpath && search_list(r, o->runpath, ":", o->origin, name, "DT_RUNPATH", o->runpath_secure))
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
		int done = try_dir(r, defaults[i], file, name, "default directories");

		free(file);
		if (done != GO_ON)
			return;
	}
}

void
scan_resolve_plain(struct scan_resolution *r, const char *name, const struct scan_cache *cache)
{
	struct search o;
	char *cwd = getcwd(NULL, 0);

	memset(&o, 0, sizeof(o));
	o.origin = o.llp_origin = cwd ? cwd : "/";
	resolve(r, name, &o, cache);
	free(cwd);
}

void
scan_resolve_from(struct scan_resolution *r, const char *name, const char *object_path,
		  const struct scan_elf *elf, const struct scan_cache *cache)
{
	struct search o;
	char *origin = origin_of(object_path);

	memset(&o, 0, sizeof(o));
	if (elf->rpath && !elf->runpath) {
		o.rpath[0] = elf->rpath;
		o.rpath_origin[0] = origin;
		o.nrpath = 1;
	}
	o.runpath = elf->runpath;
	o.origin = o.llp_origin = origin;
	o.nodeflib = elf->nodeflib;
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
	scan_strv_free(&r->denied);
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

/* The object already loaded that answers to name, or -1. */
static int
loaded_as(const struct scan_for *f, const char *name)
{
	for (size_t i = 0; i < f->nobj; i++)
		if (scan_strv_has(&f->obj[i].names, name) || strcmp(f->obj[i].path, name) == 0)
			return (int)i;
	return -1;
}

static int
add_object(struct scan_for *f, const char *path, const char *name, int loader, const char *rule, int program)
{
	struct scan_object *o;
	struct stat st;

	f->obj = scan_xrealloc(f->obj, (f->nobj + 1) * sizeof(*f->obj));
	o = &f->obj[f->nobj];
	memset(o, 0, sizeof(*o));
	o->path = scan_xstrdup(path);
	o->real = realpath(path, NULL);
	o->loader = loader;
	o->rule = rule;
	scan_elf_read(path, &o->elf);
	if (name)
		scan_strv_add_unique(&o->names, name);
	if (o->elf.soname)
		scan_strv_add_unique(&o->names, o->elf.soname);
	/*
	 * $ORIGIN: for a program, the directory of the real file (the
	 * kernel's /proc/self/exe); for a library, of the path it was
	 * loaded by, symlinks and all.
	 */
	o->origin = origin_of(program && o->real ? o->real : path);
	if (stat(path, &st) == 0) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	return (int)f->nobj++;
}

/* The loaded object that is this file (same device and inode), or -1. */
static int
same_file(const struct scan_for *f, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	for (size_t i = 0; i < f->nobj; i++)
		if (f->obj[i].dev == st.st_dev && f->obj[i].ino == st.st_ino && (f->obj[i].dev || f->obj[i].ino))
			return (int)i;
	return -1;
}

static int
secure_of(const struct scan_for *f, int obj)
{
	if (!f->secure)
		return SECURE_NO;
	return obj == 0 && f->elf.is_program ? SECURE_PROGRAM : SECURE_LIBRARY;
}

/* The search for a name that object obj asks for, as _dl_map_object() does it. */
static void
search_for(const struct scan_for *f, int obj, struct search *s)
{
	const struct scan_object *o = &f->obj[obj];

	memset(s, 0, sizeof(*s));
	if (!o->elf.runpath) {
		int did_main = 0;

		for (int l = obj; l >= 0 && s->nrpath < MAX_RPATHS; l = f->obj[l].loader) {
			/* get-dynamic-info.h drops the DT_RPATH of an object that has a DT_RUNPATH. */
			if (f->obj[l].elf.rpath && !f->obj[l].elf.runpath) {
				s->rpath[s->nrpath] = f->obj[l].elf.rpath;
				s->rpath_origin[s->nrpath] = f->obj[l].origin;
				s->rpath_of[s->nrpath] = f->obj[l].path;
				s->rpath_secure[s->nrpath] = secure_of(f, l);
				s->nrpath++;
			}
			if (l == 0)
				did_main = 1;
			if (f->obj[l].loader >= l)
				break;
		}
		if (!did_main && f->obj[0].elf.rpath && !f->obj[0].elf.runpath && s->nrpath < MAX_RPATHS) {
			s->rpath[s->nrpath] = f->obj[0].elf.rpath;
			s->rpath_origin[s->nrpath] = f->obj[0].origin;
			s->rpath_of[s->nrpath] = f->obj[0].path;
			s->rpath_secure[s->nrpath] = secure_of(f, 0);
			s->nrpath++;
		}
	}
	s->self = o->path;
	s->runpath_secure = secure_of(f, obj);
	s->llp_origin = f->obj[0].origin;
	s->runpath = o->elf.runpath;
	s->origin = o->origin;
	s->nodeflib = o->elf.nodeflib;
	s->secure = f->secure;
}

void
scan_for_dlopen(const struct scan_for *f, int obj, struct scan_resolution *r, const char *name,
		const struct scan_cache *cache)
{
	struct search s;
	int k = loaded_as(f, name);

	if (k >= 0) {
		memset(r, 0, sizeof(*r));
		r->name = scan_xstrdup(name);
		r->path = scan_xstrdup(f->obj[k].path);
		r->real = scan_xstrdup(f->obj[k].real ? f->obj[k].real : f->obj[k].path);
		r->rule = "already loaded";
		r->object = k;
		r->already = 1;
		r->needed_by = f->obj[obj].path;
		return;
	}
	search_for(f, obj, &s);
	resolve(r, name, &s, cache);
	r->needed_by = f->obj[obj].path;
}

static int
base_is_cudnn(const char *path)
{
	const char *b = strrchr(path, '/');

	return strncmp(b ? b + 1 : path, "libcudnn", 8) == 0;
}

/* The cudnn* symbols the objects import and export: what the loader binds at the calls. */
static void
read_symbols(struct scan_for *f)
{
	struct scan_strv none = { 0 };

	f->symbols_read = 1;
	for (size_t i = 0; i < f->nobj; i++) {
		const struct scan_object *o = &f->obj[i];
		int cudnn = base_is_cudnn(o->real ? o->real : o->path) || base_is_cudnn(o->path);

		if (o->elf.status != SCAN_ELF_OK)
			continue;
		/* cuDNN's own libraries leave names to each other; the program's needs are what count. */
		if (scan_elf_symbols(o->path, "cudnn", &f->exports, cudnn ? &none : &f->imports) != 0 && cudnn)
			f->symbols_read = 0;
	}
	scan_strv_free(&none);
}

int
scan_for_resolve(struct scan_for *f, const char *target, const struct scan_cache *cache)
{
	struct stat st;
	char *cwd;
	int program;

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
	program = f->elf.is_program;
	add_object(f, f->abs, NULL, -1, NULL, program);
	f->origin = scan_xstrdup(f->obj[0].origin);
	/* The kernel sets AT_SECURE when the program changes the user or group it runs as (for --user, theirs). */
	f->secure = program && stat(f->abs, &st) == 0 &&
	    (((st.st_mode & S_ISUID) && st.st_uid != (user.set ? user.uid : getuid())) ||
	     ((st.st_mode & S_ISGID) && st.st_gid != (user.set ? user.gid : getgid())));
	/* ld.so is loaded before anything else, under its SONAME: a DT_NEEDED on it is no search. */
	{
		struct scan_elf self;
		const char *interp = f->elf.interp;

		memset(&self, 0, sizeof(self));
		if (!interp) {
			/* A library is loaded by some program: ours has the loader of this machine. */
			scan_elf_read("/proc/self/exe", &self);
			interp = self.interp;
		}
		if (interp)
			add_object(f, interp, NULL, -1, "the program's interpreter (PT_INTERP)", 0);
		scan_elf_free(&self);
	}
	/* Breadth first, each object's DT_NEEDED in order: _dl_map_object_deps(). */
	for (size_t i = 0; i < f->nobj; i++) {
		for (size_t k = 0; k < f->obj[i].elf.needed.n; k++) {
			const char *n = f->obj[i].elf.needed.v[k];
			struct scan_need *nd;
			struct scan_resolution *r = NULL;
			int found = loaded_as(f, n);

			if (found < 0) {
				struct search s;

				r = scan_xmalloc(sizeof(*r));
				search_for(f, (int)i, &s);
				resolve(r, n, &s, cache);
				r->needed_by = f->obj[i].path;
				if (r->path) {
					found = same_file(f, r->path);
					if (found >= 0)
						scan_strv_add_unique(&f->obj[found].names, n);
					else
						found = add_object(f, r->path, n, (int)i, r->rule, 0);
				}
				r->object = found;
			}
			f->needs = scan_xrealloc(f->needs, (f->nneeds + 1) * sizeof(*f->needs));
			nd = &f->needs[f->nneeds++];
			nd->object = (int)i;
			nd->name = scan_xstrdup(n);
			nd->found = found;
			nd->r = r;
			if (is_cudnn_soname(n)) {
				f->loads_cudnn = 1;
				if (i == 0)
					f->links_cudnn = 1;
			}
		}
	}
	/* The dispatchers searched for, libcudnn.so.N: the sub-libraries come from them. */
	for (size_t i = 0; i < f->nneeds; i++) {
		struct scan_need *nd = &f->needs[i];

		if (nd->r && strncmp(nd->name, "libcudnn.so.", 12) == 0 && is_cudnn_soname(nd->name)) {
			f->res = scan_xrealloc(f->res, (f->nres + 1) * sizeof(*f->res));
			f->res[f->nres++] = nd->r;
		}
	}
	if (!f->loads_cudnn) {
		/* As a dlopen() from this object would go, for both majors in use. */
		static const char *const names[] = { "libcudnn.so.9", "libcudnn.so.8" };

		f->own = scan_xmalloc(2 * sizeof(*f->own));
		for (size_t i = 0; i < 2; i++) {
			scan_for_dlopen(f, 0, &f->own[f->nown], names[i], cache);
			f->res = scan_xrealloc(f->res, (f->nres + 1) * sizeof(*f->res));
			f->res[f->nres++] = &f->own[f->nown++];
		}
	}
	read_symbols(f);
	return 0;
}

void
scan_for_free(struct scan_for *f)
{
	for (size_t i = 0; i < f->nneeds; i++) {
		if (f->needs[i].r) {
			scan_resolution_free(f->needs[i].r);
			free(f->needs[i].r);
		}
		free(f->needs[i].name);
	}
	free(f->needs);
	for (size_t i = 0; i < f->nown; i++)
		scan_resolution_free(&f->own[i]);
	free(f->own);
	for (size_t i = 0; i < f->nobj; i++) {
		free(f->obj[i].path);
		free(f->obj[i].real);
		free(f->obj[i].origin);
		scan_strv_free(&f->obj[i].names);
		scan_elf_free(&f->obj[i].elf);
	}
	free(f->obj);
	free(f->res);
	scan_strv_free(&f->imports);
	scan_strv_free(&f->exports);
	free(f->target);
	free(f->abs);
	free(f->origin);
	scan_elf_free(&f->elf);
	memset(f, 0, sizeof(*f));
}
