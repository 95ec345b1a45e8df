/*
 * The loaded objects' address ranges, read once with dl_iterate_phdr and
 * read again only when the loader's counts of objects added and removed
 * (dlpi_adds, dlpi_subs) say that something was loaded or unloaded since.
 * A failure record names each frame's module; dladdr did it frame by frame
 * and also searched the object's whole symbol table each time, which in a
 * process with large libraries cost most of a failure's time. Where glibc
 * has _dl_find_object (2.35), each address is asked of it instead, with no
 * lock and no walk. Below everything but the real dlsym (realdl.c).
 */
#include "core.h"
#include "modules.h"
#include "symtab.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RANGES 2048
#define POOL_SIZE (512u << 10)	/* bytes of object names kept, all told */

struct range {
	uintptr_t start, end;
	const char *name;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct range ranges[MAX_RANGES];
static int nranges, built, broken;
static unsigned long long seen_adds, seen_subs;
static char pool[POOL_SIZE];
static size_t pool_used;

struct counts {
	unsigned long long adds, subs;
	int ok;
};

static int
counts_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct counts *c = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
		c->ok = 1;
	}
	return 1;	/* the first object says it all */
}

/* A name kept for good: an object unloaded later leaves its link map's name dangling. */
static const char *
keep_name(const char *s)
{
	size_t n = strlen(s) + 1;

	for (size_t at = 0; at < pool_used; at += strlen(pool + at) + 1)
		if (strcmp(pool + at, s) == 0)
			return pool + at;
	if (pool_used + n > sizeof(pool))
		return NULL;
	memcpy(pool + pool_used, s, n);
	pool_used += n;
	return pool + pool_used - n;
}

struct build {
	int first, failed;
	uintptr_t page;
};

static int
build_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build *b = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const char *name = info->dlpi_name;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		/* As the loader maps it: l_map_start is the first segment's page. */
		if (info->dlpi_addr + (ph->p_vaddr & ~(b->page - 1)) < lo)
			lo = info->dlpi_addr + (ph->p_vaddr & ~(b->page - 1));
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	/* The program's own entry has no name; dladdr gives argv[0] for it. */
	if (b->first && (!name || !name[0]))
		name = program_invocation_name;
	b->first = 0;
	if (lo >= hi)
		return 0;
	if (nranges == MAX_RANGES || !(name = keep_name(name ? name : ""))) {
		b->failed = 1;
		return 1;
	}
	ranges[nranges].start = lo;
	ranges[nranges].end = hi;
	ranges[nranges].name = name;
	nranges++;
	return 0;
}

static int
by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Reads the map again when the loader's counts changed (lock held); 0, or -1 when it cannot be used. */
static int
refresh(void)
{
	struct counts c = { 0, 0, 0 };
	struct build b = { 1, 0, 0 };
	long page;

	dl_iterate_phdr(counts_cb, &c);
	if (!c.ok || broken)
		return -1;
	if (built && c.adds == seen_adds && c.subs == seen_subs)
		return 0;
	page = sysconf(_SC_PAGESIZE);
	b.page = page > 0 ? (uintptr_t)page : 4096;
	nranges = 0;
	dl_iterate_phdr(build_cb, &b);
	if (b.failed) {
		/* More objects or names than there is room for: dladdr from now on. */
		broken = 1;
		return -1;
	}
	qsort(ranges, (size_t)nranges, sizeof(ranges[0]), by_start);
	seen_adds = c.adds;
	seen_subs = c.subs;
	built = 1;
	return 0;
}

static void
find_one(uintptr_t ip, struct spy_module *out)
{
	int lo = 0, hi = nranges;

	out->base = 0;
	out->name = NULL;
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ranges[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && ip < ranges[lo - 1].end) {
		out->base = ranges[lo - 1].start;
		out->name = ranges[lo - 1].name;
	}
}

/* A fork while another thread reads the map would leave it held in the child: it is held across the fork. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void
fork_done(void)
{
	pthread_mutex_unlock(&lock);
}

static void
register_fork(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

struct build_id {
	uintptr_t base, page;
	unsigned char *out;
	size_t max, len;
};

/* The object mapped from `base` (as build_cb() takes its start): its GNU build-id note, in memory. */
static int
build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *f = data;
	uintptr_t lo = UINTPTR_MAX;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + (info->dlpi_phdr[i].p_vaddr & ~(f->page - 1)) < lo)
			lo = info->dlpi_addr + (info->dlpi_phdr[i].p_vaddr & ~(f->page - 1));
	if (lo != f->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && !f->len; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			f->len = spy_note_build_id((const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, f->out, f->max);
	}
	return 1;
}

size_t
spy_module_build_id(uintptr_t base, unsigned char *out, size_t max)
{
	long page = sysconf(_SC_PAGESIZE);
	struct build_id f = { base, page > 0 ? (uintptr_t)page : 4096, out, max, 0 };
	int saved = errno;

	dl_iterate_phdr(build_id_cb, &f);
	errno = saved;
	return f.len;
}

/*
 * glibc 2.35's _dl_find_object, when the process's glibc has it (asked at run time, so that the spy still
 * loads with an older one): the object of an address, with no lock and no walk of the objects. The link map
 * it gives stays while the object is loaded, and an object with a frame on the asking thread's stack is.
 */
typedef int (*find_object_fn)(void *, struct dl_find_object *);
static find_object_fn find_object;

static void
setup(void)
{
	register_fork();
	find_object = (find_object_fn)spy_dlsym(RTLD_DEFAULT, "_dl_find_object");
}

int
spy_modules_find(void *const *ips, int n, struct spy_module *out)
{
	int saved = errno, rc;

	pthread_once(&once, setup);
	if (find_object) {
		for (int i = 0; i < n; i++) {
			struct dl_find_object r;

			out[i].base = 0;
			out[i].name = NULL;
			if (find_object(ips[i], &r) != 0 || !r.dlfo_link_map)
				continue;
			out[i].base = (uintptr_t)r.dlfo_map_start;
			out[i].name = r.dlfo_link_map->l_name;
			/* The program's own map comes first and has no name; dladdr gives argv[0] for it. */
			if (!r.dlfo_link_map->l_prev && (!out[i].name || !out[i].name[0]))
				out[i].name = program_invocation_name;
			if (!out[i].name)
				out[i].name = "";
		}
		errno = saved;
		return 0;
	}
	pthread_mutex_lock(&lock);
	rc = refresh();
	for (int i = 0; rc == 0 && i < n; i++)
		find_one((uintptr_t)ips[i], &out[i]);
	pthread_mutex_unlock(&lock);
	errno = saved;
	return rc;
}
