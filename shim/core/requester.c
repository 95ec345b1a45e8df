/*
 * The drop-in stands where the program's own libcudnn.so.N would have been
 * found, so the copy it forwards to must be the one that would have been
 * found without it: the loader's search for that name, as the object that
 * needed it. glibc's order (elf/dl-load.c, _dl_map_object):
 *   1. DT_RPATH of the requester, then of the object that loaded it, and on
 *      up, then the executable's; all of it only when the requester has no
 *      DT_RUNPATH (an object with a DT_RUNPATH has its DT_RPATH ignored);
 *   2. LD_LIBRARY_PATH;
 *   3. DT_RUNPATH of the requester only;
 *   4. /etc/ld.so.cache;
 *   5. the default directories.
 * Steps 4 and 5 give no system-directory result to a requester marked
 * DF_1_NODEFLIB. Here the drop-in's own directory is left out of step 2,
 * the drop-in's own file is skipped everywhere, and relative entries are
 * never searched. Only the loaded objects are read: what the loader mapped,
 * never a file, except the ELF header of a candidate and the cache.
 */
#include "core.h"
#include "requester.h"
#include "stack.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the search needs of one loaded object, copied: another thread may dlclose it meanwhile. */
struct obj {
	char *name;		/* the loader's name for it; the program's is its /proc/self/exe */
	char *soname;
	char *rpath;
	char *runpath;
	char *needed;		/* the DT_NEEDED names, each ending in '\0', then an empty one */
	uintptr_t lo, hi;	/* where it is mapped */
	int nodeflib;
	int is_self;
};

struct objs {
	struct obj *v;
	int n, cap;
	int failed;
	ElfW(Addr) self;
};

static char *
dup_or_null(const char *s, int *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = 1;
	return d;
}

/* A string of the mapped string table, or NULL when it does not end inside it. */
static const char *
str_at(const char *strtab, size_t strsz, ElfW(Xword) off)
{
	if (!strtab || off >= strsz || !memchr(strtab + off, '\0', strsz - off))
		return NULL;
	return strtab + off;
}

/*
 * An address from the mapped dynamic section: glibc relocates DT_STRTAB in
 * place on most machines, but not where the section is read-only (RISC-V,
 * MIPS) nor in the vDSO. Whichever reading lands inside the object is it.
 */
static const char *
mapped_ptr(ElfW(Addr) v, ElfW(Addr) base, uintptr_t lo, uintptr_t hi)
{
	if (v >= lo && v < hi)
		return (const char *)v;
	if (base + v >= lo && base + v < hi)
		return (const char *)(base + v);
	return NULL;
}

static int
collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objs *o = arg;
	const ElfW(Dyn) *dyn = NULL;
	const char *strtab = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	size_t strsz = 0, needlen = 1;
	struct obj *ob;

	(void)size;
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 64;
		struct obj *v = realloc(o->v, (size_t)cap * sizeof(*v));

		if (!v) {
			o->failed = 1;
			return 1;
		}
		o->v = v;
		o->cap = cap;
	}
	ob = &o->v[o->n++];
	memset(ob, 0, sizeof(*ob));
	ob->is_self = info->dlpi_addr == o->self;
	ob->name = dup_or_null(info->dlpi_name ? info->dlpi_name : "", &o->failed);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		else if (ph->p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;

			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		}
	}
	ob->lo = lo;
	ob->hi = hi;
	if (!dyn)
		return 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = mapped_ptr(d->d_un.d_ptr, info->dlpi_addr, lo, hi);
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
		else if (d->d_tag == DT_FLAGS_1)
			ob->nodeflib = (d->d_un.d_val & DF_1_NODEFLIB) != 0;
	}
	if (strtab && (uintptr_t)strtab + strsz > hi)
		strsz = hi - (uintptr_t)strtab;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		const char *s = d->d_tag == DT_NEEDED || d->d_tag == DT_SONAME || d->d_tag == DT_RPATH ||
				d->d_tag == DT_RUNPATH ? str_at(strtab, strsz, d->d_un.d_val) : NULL;

		if (!s)
			continue;
		if (d->d_tag == DT_NEEDED)
			needlen += strlen(s) + 1;
		else if (d->d_tag == DT_SONAME && !ob->soname)
			ob->soname = dup_or_null(s, &o->failed);
		else if (d->d_tag == DT_RPATH && !ob->rpath)
			ob->rpath = dup_or_null(s, &o->failed);
		else if (d->d_tag == DT_RUNPATH && !ob->runpath)
			ob->runpath = dup_or_null(s, &o->failed);
	}
	ob->needed = malloc(needlen);
	if (!ob->needed) {
		o->failed = 1;
		return 1;
	}
	needlen = 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		const char *s = d->d_tag == DT_NEEDED ? str_at(strtab, strsz, d->d_un.d_val) : NULL;

		if (s) {
			memcpy(ob->needed + needlen, s, strlen(s) + 1);
			needlen += strlen(s) + 1;
		}
	}
	ob->needed[needlen] = 0;
	/* An object with a DT_RUNPATH has its DT_RPATH ignored by the loader (get-dynamic-info.h). */
	if (ob->runpath) {
		free(ob->rpath);
		ob->rpath = NULL;
	}
	return 0;
}

static void
free_objs(struct objs *o)
{
	for (int i = 0; i < o->n; i++) {
		free(o->v[i].name);
		free(o->v[i].soname);
		free(o->v[i].rpath);
		free(o->v[i].runpath);
		free(o->v[i].needed);
	}
	free(o->v);
}

/*
 * The loaded objects, the program first: the loader knows it by "", the
 * search by its file. -1 when they could not all be read.
 */
static int
collect_named(struct objs *o)
{
	char exe[PATH_MAX];
	ssize_t n;

	dl_iterate_phdr(collect_cb, o);
	if (o->failed || o->n == 0)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		free(o->v[0].name);
		o->v[0].name = strdup(exe);
		if (!o->v[0].name)
			return -1;
	}
	return 0;
}

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int
needs(const struct obj *ob, const char *name)
{
	if (!ob->needed || !name || !name[0])
		return 0;
	for (const char *p = ob->needed; *p; p += strlen(p) + 1)
		if (strcmp(p, name) == 0)
			return 1;
	return 0;
}

/*
 * The object that loaded object i: dependencies are mapped after the
 * object that needs them, so the first earlier one naming it. -1 when none
 * does (it was opened with dlopen, whose caller cannot be told here).
 */
static int
loader_of(const struct objs *o, int i)
{
	const struct obj *ob = &o->v[i];

	for (int j = 0; j < i; j++)
		if (needs(&o->v[j], ob->soname) || needs(&o->v[j], base_of(ob->name)))
			return j;
	return -1;
}

/* What a search needs besides the objects. */
struct search {
	const char *name;	/* libcudnn.so.9 */
	struct stat self, selfdir;
	int have_self, have_selfdir;
	unsigned char elf_class;
	ElfW(Half) machine;
	char lib[64];		/* $LIB */
	const char *platform;	/* $PLATFORM */
	int with_self;		/* the drop-in counts too: where would the loader have found it? */
	int any_file;		/* a file that is no ELF stops the search, as it stops the loader (with an error) */
	char *out;
	size_t outlen;
};

/* glibc's is_dst: $NAME or ${NAME}, not followed by more of a name. Returns the length after '$', or 0. */
static size_t
is_dst(const char *p, const char *name)
{
	size_t n = strlen(name);

	if (p[0] == '{')
		return strncmp(p + 1, name, n) == 0 && p[1 + n] == '}' ? n + 2 : 0;
	if (strncmp(p, name, n) != 0)
		return 0;
	p += n;
	return (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ? 0 : n;
}

/*
 * One search-list entry with $ORIGIN, $LIB and $PLATFORM replaced, as
 * _dl_dst_substitute does. 0 when it cannot be used: a known variable
 * without a value drops the entry, and so does a relative result.
 */
static int
expand(const struct search *s, const char *entry, size_t len, const char *origin, char *out, size_t outlen)
{
	size_t w = 0;

	for (size_t i = 0; i < len; i++) {
		const char *repl = NULL;
		size_t n = 0;

		if (entry[i] == '$') {
			const char *p = entry + i + 1;

			if ((n = is_dst(p, "ORIGIN")) != 0)
				repl = origin;
			else if ((n = is_dst(p, "PLATFORM")) != 0)
				repl = s->platform;
			else if ((n = is_dst(p, "LIB")) != 0)
				repl = s->lib[0] ? s->lib : NULL;
			if (n && (!repl || i + 1 + n > len))
				return 0;
		}
		if (repl) {
			size_t rl = strlen(repl);

			if (w + rl >= outlen)
				return 0;
			memcpy(out + w, repl, rl);
			w += rl;
			i += n;
		} else {
			if (w + 1 >= outlen)
				return 0;
			out[w++] = entry[i];
		}
	}
	out[w] = 0;
	return out[0] == '/';
}

/* 1 when path is a file the loader would map for this process, and not the drop-in. */
static int
candidate(const struct search *s, const char *path)
{
	struct stat st;
	ElfW(Ehdr) eh;
	int fd, ok;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (!s->with_self && s->have_self && st.st_dev == s->self.st_dev && st.st_ino == s->self.st_ino)
		return 0;
	/* A file of another class or machine is skipped by the loader too. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0;
	/* Only an ELF of another class or machine is passed over; any other file ends glibc's search with its error. */
	if (ok)
		ok = eh.e_ident[EI_CLASS] == s->elf_class && eh.e_machine == s->machine;
	else
		ok = s->any_file;
	close(fd);
	return ok;
}

static int
same_as_self(const struct search *s, const char *path)
{
	struct stat st;

	return s->have_self && stat(path, &st) == 0 && st.st_dev == s->self.st_dev && st.st_ino == s->self.st_ino;
}

static int
try_dir(struct search *s, const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, s->name) >= (int)sizeof(path) || !candidate(s, path))
		return 0;
	snprintf(s->out, s->outlen, "%s", path);
	return 1;
}

/* Each usable entry of a ':'-separated list (';' too for LD_LIBRARY_PATH, as glibc splits it). */
static int
try_list(struct search *s, const char *list, const char *seps, const char *origin, int skip_selfdir)
{
	char dir[PATH_MAX];

	while (list && *list) {
		size_t len = strcspn(list, seps);
		struct stat st;

		if (len > 0 && expand(s, list, len, origin, dir, sizeof(dir)) &&
		    !(skip_selfdir && !s->with_self && s->have_selfdir && stat(dir, &st) == 0 && st.st_dev == s->selfdir.st_dev &&
		      st.st_ino == s->selfdir.st_ino) &&
		    try_dir(s, dir))
			return 1;
		list += len;
		if (*list)
			list++;
	}
	return 0;
}

/* glibc's default directories, as its usual builds configure them. */
static const char *const system_dirs[] = {
#if defined(__x86_64__)
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
#if defined(__LP64__)
	"/lib64", "/usr/lib64",
#endif
	"/lib", "/usr/lib",
};
#define N_SYSTEM_DIRS (sizeof(system_dirs) / sizeof(system_dirs[0]))

static int
in_system_dir(const char *path)
{
	for (size_t i = 0; i < N_SYSTEM_DIRS; i++) {
		size_t n = strlen(system_dirs[i]);

		if (strncmp(path, system_dirs[i], n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/'))
			return 1;
	}
	return 0;
}

/* /etc/ld.so.cache, format glibc-ld.so.cache1.1 (maybe behind the old table): the first native entry. */
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"
#define CACHE_HEADER 48
#define CACHE_ENTRY 24
#if defined(__x86_64__)
#define CACHE_FLAGS 0x0303	/* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#define CACHE_FLAGS_MASK 0xffff
#elif defined(__aarch64__)
#define CACHE_FLAGS 0x0a03	/* FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64 */
#define CACHE_FLAGS_MASK 0xffff
#else
#define CACHE_FLAGS 0x0003	/* FLAG_ELF_LIBC6, any ABI */
#define CACHE_FLAGS_MASK 0x00ff
#endif

static uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int
cache_flags_native(uint32_t flags)
{
	return (flags & CACHE_FLAGS_MASK) == CACHE_FLAGS;
}

static int
cache_lookup(const char *name, char *out, size_t outlen)
{
	const unsigned char *data, *h;
	struct stat st;
	size_t size, base = 0, nlibs;
	int fd, found = 0;

	fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || st.st_size < CACHE_HEADER || st.st_size > (256 << 20)) {
		close(fd);
		return 0;
	}
	size = (size_t)st.st_size;
	data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return 0;
	if (memcmp(data, CACHE_MAGIC_OLD, sizeof(CACHE_MAGIC_OLD) - 1) == 0) {
		size_t old = get32(data + 12);

		base = old <= size / 12 ? (16 + old * 12 + 7) & ~(size_t)7 : size;
	}
	if (base > size || size - base < CACHE_HEADER || memcmp(data + base, CACHE_MAGIC_NEW, sizeof(CACHE_MAGIC_NEW) - 1) != 0)
		goto out;
	h = data + base;
	nlibs = get32(h + 20);
	if (nlibs > (size - base - CACHE_HEADER) / CACHE_ENTRY)
		goto out;
	for (size_t i = 0; i < nlibs && !found; i++) {
		const unsigned char *e = h + CACHE_HEADER + i * CACHE_ENTRY;
		uint32_t key = get32(e + 4), value = get32(e + 8), flags = get32(e);
		uint64_t hwcap;

		memcpy(&hwcap, e + 16, sizeof(hwcap));
		/* Entries of glibc-hwcaps subdirectories depend on the CPU: left out, as `cudnnspy scan` does. */
		if (hwcap != 0 || !cache_flags_native(flags))
			continue;
		if (key >= size - base || value >= size - base || !memchr(h + key, 0, size - base - key) ||
		    !memchr(h + value, 0, size - base - value) || strcmp((const char *)h + key, name) != 0)
			continue;
		found = snprintf(out, outlen, "%s", (const char *)h + value) < (int)outlen;
	}
out:
	munmap((void *)data, size);
	return found;
}

/* $LIB is the last component of glibc's own directory (DL_DST_LIB is notdir(slibdir)). */
static void
find_lib(const struct objs *o, char *lib, size_t len)
{
	lib[0] = 0;
	for (int i = 0; i < o->n; i++) {
		const char *n = o->v[i].name, *b = base_of(n);

		if (n[0] == '/' && strncmp(b, "libc.so.", 8) == 0 && b - n > 1) {
			const char *d = b - 1, *s = d;

			while (s > n && s[-1] != '/')
				s--;
			snprintf(lib, len, "%.*s", (int)(d - s), s);
			return;
		}
	}
}

/* The directory of an object, as the loader takes $ORIGIN from its name; NULL when unknown. */
static const char *
origin_of(const struct obj *ob, char *out, size_t len)
{
	const char *s = strrchr(ob->name, '/');

	/* A set-user-id program: the loader does not trust $ORIGIN; neither do we. */
	if (ob->name[0] != '/' || !s || getauxval(AT_SECURE))
		return NULL;
	snprintf(out, len, "%.*s", s == ob->name ? 1 : (int)(s - ob->name), ob->name);
	return out;
}

/*
 * glibc's search for s->name as object r, into s->out; the rule that found
 * it in `why`. 0 when found, 1 when not.
 */
static int
search_as(const struct objs *o, int r, struct search *s, char *why, size_t whylen)
{
	const struct obj *req = &o->v[r];
	const char *rname = base_of(req->name), *origin;
	char buf[PATH_MAX], cached[PATH_MAX];

	/* 1. DT_RPATH: the requester, its loaders up to the program, then the program. */
	if (!req->runpath) {
		int did_main = 0;

		for (int l = r; l >= 0; l = loader_of(o, l)) {
			origin = origin_of(&o->v[l], buf, sizeof(buf));
			if (o->v[l].rpath && try_list(s, o->v[l].rpath, ":", origin, 0)) {
				if (l == r)
					snprintf(why, whylen, "what %s's RPATH finds", rname);
				else
					snprintf(why, whylen, "what %s's RPATH finds for %s", base_of(o->v[l].name), rname);
				return 0;
			}
			did_main |= l == 0;
		}
		origin = origin_of(&o->v[0], buf, sizeof(buf));
		if (!did_main && o->v[0].rpath && try_list(s, o->v[0].rpath, ":", origin, 0)) {
			snprintf(why, whylen, "what %s's RPATH finds for %s", base_of(o->v[0].name), rname);
			return 0;
		}
	}
	/* 2. LD_LIBRARY_PATH, whose $ORIGIN is the program's directory, without the drop-in's own directory. */
	origin = origin_of(&o->v[0], buf, sizeof(buf));
	if (try_list(s, secure_getenv("LD_LIBRARY_PATH"), ":;", origin, 1)) {
		snprintf(why, whylen, "what LD_LIBRARY_PATH without the drop-in finds for %s", rname);
		return 0;
	}
	/* 3. The requester's own DT_RUNPATH. */
	origin = origin_of(req, buf, sizeof(buf));
	if (req->runpath && try_list(s, req->runpath, ":", origin, 0)) {
		snprintf(why, whylen, "what %s's RUNPATH finds", rname);
		return 0;
	}
	/* 4. The cache; 5. the default directories. */
	if (cache_lookup(s->name, cached, sizeof(cached)) && !(req->nodeflib && in_system_dir(cached)) &&
	    candidate(s, cached)) {
		snprintf(s->out, s->outlen, "%s", cached);
		snprintf(why, whylen, "what the loader's cache gives %s", rname);
		return 0;
	}
	for (size_t i = 0; i < N_SYSTEM_DIRS && !req->nodeflib; i++) {
		if (try_dir(s, system_dirs[i])) {
			snprintf(why, whylen, "what the default directories give %s", rname);
			return 0;
		}
	}
	return 1;
}

/*
 * Where the drop-in's own constructor was called from, when no loaded
 * object needed it: inside dlopen, so the first frame outside the loader,
 * libc and libdl is the code that opened it. 0 when not known.
 */
static uintptr_t opener_ip;

static int
in_object(const void *addr, uintptr_t base)
{
	Dl_info di;

	return base && dladdr(addr, &di) && (uintptr_t)di.dli_fbase == base;
}

static uintptr_t
object_base(const void *addr)
{
	Dl_info di;

	return dladdr(addr, &di) ? (uintptr_t)di.dli_fbase : 0;
}

/* 1 when an object mapped before the drop-in needs it by name; fills *r and s->name. */
static int
find_needer(const struct objs *o, int self, struct search *s, int *r)
{
	const struct obj *me = &o->v[self];

	/*
	 * Only an object mapped before the drop-in can have loaded it; a later
	 * one found it loaded already. The loader searches for the name the
	 * requester wrote, which is the drop-in's SONAME or its file name.
	 */
	for (int i = 0; i < self; i++) {
		if (needs(&o->v[i], me->soname)) {
			s->name = me->soname;
			*r = i;
			return 1;
		}
		if (needs(&o->v[i], base_of(me->name))) {
			s->name = base_of(me->name);
			*r = i;
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void
note_opener(void)
{
	struct objs o = { .self = (ElfW(Addr))spy_self_base() };
	struct search s = { .name = NULL };
	void *ips[SPY_STACK_MAX];
	uintptr_t ldso = (uintptr_t)getauxval(AT_BASE), libc = object_base((void *)gnu_get_libc_version);
	/* dlerror lives where dlopen does (libc, or libdl before glibc 2.34), and the spy exports no dlerror. */
	uintptr_t libdl = object_base((void *)dlerror);
	int self = -1, r = -1, n, needed = 0, saved = errno;

	if (strcmp(spy_flavor.name, "drop-in") != 0)
		return;
	/* Needed by name: certain, and no stack to take. */
	dl_iterate_phdr(collect_cb, &o);
	for (int i = 0; i < o.n && !o.failed; i++)
		if (o.v[i].is_self)
			self = i;
	if (self >= 0)
		needed = find_needer(&o, self, &s, &r);
	free_objs(&o);
	if (needed) {
		errno = saved;
		return;
	}
	n = spy_stack_capture(ips, SPY_STACK_MAX);
	for (int i = 0; i < n; i++) {
		if (in_object(ips[i], ldso) || in_object(ips[i], libc) || in_object(ips[i], libdl) ||
		    !object_base(ips[i]))
			continue;
		opener_ip = (uintptr_t)ips[i];
		break;
	}
	errno = saved;
}

int
spy_requester_search(char *out, size_t outlen, char *why, size_t whylen)
{
	struct objs o = { .self = (ElfW(Addr))spy_self_base() };
	struct search s = { .out = out, .outlen = outlen };
	const ElfW(Ehdr) *self_eh = spy_self_base();
	char buf[PATH_MAX];
	const struct obj *me;
	const char *origin, *verb = "needs";
	int self = -1, r = -1, rc = -1;

	if (!self_eh)
		return -1;
	if (collect_named(&o) < 0)
		goto done;
	for (int i = 0; i < o.n; i++)
		if (o.v[i].is_self)
			self = i;
	if (self < 0)
		goto done;
	me = &o.v[self];
	s.have_self = stat(me->name, &s.self) == 0;
	origin = origin_of(me, buf, sizeof(buf));
	s.have_selfdir = origin && stat(origin, &s.selfdir) == 0;
	s.elf_class = self_eh->e_ident[EI_CLASS];
	s.machine = self_eh->e_machine;
	s.platform = (const char *)getauxval(AT_PLATFORM);
	find_lib(&o, s.lib, sizeof(s.lib));

	if (!find_needer(&o, self, &s, &r) && opener_ip) {
		/*
		 * Opened with dlopen: the loader searched as the caller. Only a
		 * name was searched (glibc names the file dir/NAME); a path was
		 * not, and then the caller's search would not find the drop-in
		 * first: nothing to repeat.
		 */
		for (int i = 0; i < o.n && r < 0; i++)
			if (i != self && opener_ip >= o.v[i].lo && opener_ip < o.v[i].hi)
				r = i;
		s.name = base_of(me->name);
		s.with_self = 1;
		if (r >= 0 && (search_as(&o, r, &s, buf, sizeof(buf)) != 0 || !same_as_self(&s, out)))
			r = -1;
		s.with_self = 0;
		verb = "opens";
	}
	if (r < 0)
		goto done;
	rc = search_as(&o, r, &s, why, whylen);
	if (rc != 0)
		snprintf(why, whylen, "%s %s %s, but without the drop-in the loader would find no other copy "
			 "(its RPATH, LD_LIBRARY_PATH, its RUNPATH, the cache and the default directories searched)",
			 base_of(o.v[r].name), verb, s.name);
done:
	free_objs(&o);
	return rc;
}

int
spy_loader_search_as(const char *caller, const char *name, char *out, size_t outlen)
{
	struct objs o = { .self = (ElfW(Addr))spy_self_base() };
	struct search s = { .name = name, .out = out, .outlen = outlen, .with_self = 1, .any_file = 1 };
	const ElfW(Ehdr) *self_eh = spy_self_base();
	char why[PATH_MAX + 64];
	int r = -1, rc = -1;

	if (!self_eh || !caller || !caller[0] || !name || strchr(name, '/'))
		return -1;
	if (collect_named(&o) < 0)
		goto done;
	/* The caller as dladdr named it: the loader's name for the object, or the program's file. */
	for (int i = 0; i < o.n && r < 0; i++)
		if (o.v[i].name && strcmp(o.v[i].name, caller) == 0)
			r = i;
	if (r < 0)
		goto done;
	s.elf_class = self_eh->e_ident[EI_CLASS];
	s.machine = self_eh->e_machine;
	s.platform = (const char *)getauxval(AT_PLATFORM);
	find_lib(&o, s.lib, sizeof(s.lib));
	rc = search_as(&o, r, &s, why, sizeof(why));
done:
	free_objs(&o);
	return rc;
}
