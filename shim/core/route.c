/*
 * Which copy answers a call made through an exported name, once several
 * copies are mapped (docs/architecture.md, "Several copies"). The preload
 * defines every name under each version the real libraries give it
 * (g_exports_preload.c), so a linked reference binds to the spy only where
 * the loader would have bound it to a real definition of that version. The
 * copy is then what that reference reaches without the spy: the global
 * scope first, then the caller's own dependencies, searched for the
 * versions the caller asks of cuDNN libraries. Python importing two
 * frameworks, one linked to libcudnn.so.8 and one to libcudnn.so.9, each in
 * its own RTLD_LOCAL scope, is the case this exists for.
 *
 * With one copy mapped nothing here runs: the exported slot's flags stay
 * clear and the wrappers' fast path is unchanged.
 */
#include "core.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#define MAX_VERSIONS 8


static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}


struct count_arg {
	void *self;
	void *first;
	int n;
};

static int
count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct count_arg *a = arg;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || (void *)info->dlpi_addr == a->self ||
	    !spy_is_dispatcher_name(base_of(info->dlpi_name)))
		return 0;
	a->n++;
	return 0;
}

void
spy_route_recheck(void)
{
	struct count_arg a = { .self = spy_self_base() };

	/* Cleared first: an object that binds during the count sets it again, and the next call looks again. */
	__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_RECHECK], 0, __ATOMIC_SEQ_CST);
	dl_iterate_phdr(count_cb, &a);
	if (a.n >= 2)
		__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_ROUTE], 1, __ATOMIC_RELEASE);
}

/* A pointer of the dynamic section: relocated in place by glibc where the section is writable, else not. */
static const void *
dyn_ptr(const struct link_map *lm, ElfW(Addr) v)
{
	return (const void *)(v < lm->l_addr ? v + lm->l_addr : v);
}

/*
 * The versions the object asks of cuDNN libraries (its verneed entries for
 * files named libcudnn*) and, for a cuDNN library, its own (a library's
 * references to names it defines carry its own version).
 */
static int
cudnn_versions(const struct link_map *lm, const char *out[], int max)
{
	const ElfW(Dyn) *d = lm->l_ld;
	const char *strtab = NULL;
	const ElfW(Verneed) *vn = NULL;
	const ElfW(Verdef) *vd = NULL;
	long nvn = 0, nvd = 0;
	int n = 0;

	for (int i = 0; d && d[i].d_tag != DT_NULL && i < 4096; i++) {
		if (d[i].d_tag == DT_STRTAB)
			strtab = dyn_ptr(lm, d[i].d_un.d_ptr);
		else if (d[i].d_tag == DT_VERNEED)
			vn = dyn_ptr(lm, d[i].d_un.d_ptr);
		else if (d[i].d_tag == DT_VERNEEDNUM)
			nvn = (long)d[i].d_un.d_val;
		else if (d[i].d_tag == DT_VERDEF)
			vd = dyn_ptr(lm, d[i].d_un.d_ptr);
		else if (d[i].d_tag == DT_VERDEFNUM)
			nvd = (long)d[i].d_un.d_val;
	}
	if (!strtab)
		return 0;
	for (long i = 0; vn && i < nvn && i < 256 && n < max; i++) {
		const ElfW(Vernaux) *a = (const void *)((const char *)vn + vn->vn_aux);

		if (strncmp(strtab + vn->vn_file, "libcudnn", 8) == 0)
			for (unsigned j = 0; j < vn->vn_cnt && j < 64 && n < max; j++) {
				out[n++] = strtab + a->vna_name;
				a = (const void *)((const char *)a + a->vna_next);
			}
		if (!vn->vn_next)
			break;
		vn = (const void *)((const char *)vn + vn->vn_next);
	}
	for (long i = 0; vd && i < nvd && i < 256 && n < max; i++) {
		const ElfW(Verdaux) *a = (const void *)((const char *)vd + vd->vd_aux);

		if (!(vd->vd_flags & VER_FLG_BASE) && strncmp(strtab + a->vda_name, "libcudnn", 8) == 0)
			out[n++] = strtab + a->vda_name;
		if (!vd->vd_next)
			break;
		vd = (const void *)((const char *)vd + vd->vd_next);
	}
	return n;
}

/* The first definition of `name` in `scope` under one of the versions, or unversioned when there are none. */
static void *
find_in(void *scope, const char *name, const char *vers[], int nv)
{
	for (int i = 0; i < (nv ? nv : 1); i++) {
		void *p = nv ? dlvsym(scope, name, vers[i]) : spy_dlsym(scope, name);

		if (p && !spy_in_a_spy(p))
			return p;
	}
	return NULL;
}

/* What the caller's reference reaches without the spy: the copy, or -1 and the function of a copy without a slot. */
static int route_in(struct link_map *lm, const char *name, spy_fnptr *raw, const void *ra);

static int
route_find(const void *ra, unsigned id, spy_fnptr *raw)
{
	const char *name = spy_fn_info[id].name;
	struct link_map *lm = NULL;
	Dl_info di;
	int k;

	if (!ra || !dladdr1(ra, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm || di.dli_fbase == spy_self_base())
		return 0;
	k = route_in(lm, name, raw, ra);
	if (k >= 0)
		spy_copy_note_caller(k, di.dli_fname && di.dli_fname[0] ? base_of(di.dli_fname)
									 : program_invocation_short_name);
	return k;
}

/* route_find's search from the caller's link map. */
static int
route_in(struct link_map *lm, const char *name, spy_fnptr *raw, const void *ra)
{
	const char *vers[MAX_VERSIONS];
	Dl_info found;
	void *p, *h;
	int nv, k;

	nv = cudnn_versions(lm, vers, MAX_VERSIONS);
	/* The global scope: what stands after the spy there is what the program's own names reach. */
	p = find_in(RTLD_NEXT, name, vers, nv);
	/* The caller's own dependencies: its handle's search list, made by dlopen when it has none yet. */
	if (!p && lm->l_name && lm->l_name[0]) {
		p = find_in(lm, name, vers, nv);
		if (!p && (h = spy_dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
			p = find_in(h, name, vers, nv);
			spy_dlclose(h);
		}
	}
	if (!p || !dladdr(p, &found) || !found.dli_fname)
		return 0;
	if (spy_lib.handle && found.dli_fbase == spy_lib.base)
		return 0;
	if (!spy_is_dispatcher_name(base_of(found.dli_fname))) {
		/* A sub-library linked directly: answered by it, as without the spy, not recorded. */
		*raw = (spy_fnptr)p;
		return -1;
	}
	k = spy_copy_for(found.dli_fbase, found.dli_fname, ra, "linked");
	if (k >= 0)
		return k;
	*raw = (spy_fnptr)p;
	return -1;
}

int
spy_route(const void *ra, unsigned id, spy_fnptr *raw)
{
	struct spy_thread *th = spy_tls.thread;
	unsigned gen = __atomic_load_n(&spy_copy_gen, __ATOMIC_ACQUIRE);
	struct spy_route_entry *e;
	int k;

	if (spy_route_known(ra, id, &k, raw))
		return k;
	*raw = NULL;
	k = route_find(ra, id, raw);
	if (!th)
		return k;
	e = spy_route_slot(th, ra, id);
	e->ra = ra;
	e->id = (unsigned short)id;
	e->copy = (short)k;
	e->raw = *raw;
	e->gen = gen;
	return k;
}
