/*
 * The loaded-copy audit: every mapped libcudnn*, libcudart*, libcuda.so*,
 * libcublas* and libnvrtc*, with its path, real path, SONAME, build-id,
 * size, time and version, and the conflict rules of docs/conflicts.md.
 * Versions are asked only of copies already mapped: the spy never loads a
 * library to ask it. Each finding is reported once per process, on stderr
 * and in the records.
 */
#include "core.h"
#include "audit.h"
#include "rules.h"
#include "libfile.h"
#include "requester.h"
#include "sink.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef SPY_DOCDIR
#define SPY_DOCDIR "/usr/local/share/doc/cudnnspy"	/* builds outside meson (the fuzz targets) */
#endif

#define MAX_ENTRIES 64
#define MAX_FINDINGS 64

enum kind { K_CUDNN, K_SUBLIB, K_CUDART, K_CUDA, K_CUBLAS, K_NVRTC };
static const char *const kind_names[] = { "cudnn", "cudnn-sublib", "cudart", "cuda", "cublas", "nvrtc" };

struct entry {
	void *base;
	enum kind kind;
	char path[PATH_MAX];
	char real[PATH_MAX];
	char soname[128];
	char build_id[41];
	long long size, mtime;
	long long version;	/* -1: not asked or not known */
	int check_status;	/* a sub-library's own version check: -1 when not asked */
	int reported;
	int copy_reported;	/* 1 + the copy id its last library record named, 0 for none */
};

#define MAX_LOADS 128

struct load {
	char name[256];
	char caller[512];
	char path[512];
	char error[512];
	int flags;
	enum spy_load_result result;
	int emitted;
	unsigned count;		/* the same attempt made again (cuDNN opens its sub-libraries often) */
	unsigned looked;	/* 1 + objects_gen when its name was last looked for among the entries */
};

/*
 * Recursive: asking a mapped cuDNN its version can make it dlopen a
 * sub-library, and the spy's dlopen hook then notes the load under this lock.
 */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct load loads[MAX_LOADS];
/* Bumped when the objects mapped changed (scan_cb): a pending load's name is looked for again only then. */
static unsigned objects_gen;
static int nloads, device_checked;
static struct entry entries[MAX_ENTRIES];
static int nentries;
/* Other builds of the spy mapped beside this one (drop_other_spies). */
#define MAX_SPIES 8
static void *spies[MAX_SPIES];
static int nspies;
static unsigned long long seen_adds, seen_subs;
static unsigned findings[MAX_FINDINGS];
static unsigned copies_seen;
static int nfindings;

static const char *
base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int
classify(const char *b, enum kind *k)
{
	if (spy_is_dispatcher_name(b))
		*k = K_CUDNN;
	else if (strncmp(b, "libcudnn_", 9) == 0)
		*k = K_SUBLIB;
	else if (strncmp(b, "libcudart.so", 12) == 0)
		*k = K_CUDART;
	else if (strncmp(b, "libcuda.so", 10) == 0)
		*k = K_CUDA;
	else if (strncmp(b, "libcublas", 9) == 0)
		*k = K_CUBLAS;
	else if (strncmp(b, "libnvrtc", 8) == 0)
		*k = K_NVRTC;
	else
		return 0;
	return 1;
}

/* SONAME and build-id from the mapped program headers: no file is read. */
static void
elf_facts(const struct dl_phdr_info *info, struct entry *e)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC) {
			const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
			const char *strtab = NULL;
			size_t soname = (size_t)-1;

			for (; d->d_tag != DT_NULL; d++) {
				if (d->d_tag == DT_STRTAB)
					strtab = (const char *)d->d_un.d_ptr;
				else if (d->d_tag == DT_SONAME)
					soname = d->d_un.d_val;
			}
			/* The loader relocates DT_STRTAB in place on glibc; guard against an unrelocated value. */
			if (strtab && (uintptr_t)strtab < info->dlpi_addr)
				strtab += info->dlpi_addr;
			if (strtab && soname != (size_t)-1)
				snprintf(e->soname, sizeof(e->soname), "%s", strtab + soname);
		} else if (ph->p_type == PT_NOTE) {
			const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
				const unsigned char *desc = (const unsigned char *)(n + 1) + ((n->n_namesz + 3) & ~3u);

				if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(n + 1, "GNU", 4) == 0) {
					for (unsigned k = 0; k < n->n_descsz && k < 20; k++)
						snprintf(e->build_id + 2 * k, 3, "%02x", desc[k]);
					break;
				}
				p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
			}
		}
	}
}

/* Asks a mapped library its version through its own symbols. */
static void
ask_version(struct entry *e)
{
	void *h = spy_dlopen(e->path, RTLD_NOW | RTLD_NOLOAD);
	const char *b = base_of(e->real[0] ? e->real : e->path);

	e->version = -1;
	e->check_status = -1;
	if (!h)
		return;
	if (e->kind == K_CUDNN || (e->kind == K_SUBLIB && strncmp(b, "libcudnn_graph", 14) == 0)) {
		size_t (*v)(void) = (size_t (*)(void))spy_dlsym(h, "cudnnGetVersion");

		if (v)
			e->version = (long long)v();
	} else if (e->kind == K_SUBLIB) {
		/* libcudnn_ops.so.9 → cudnnOpsVersionCheck; libcudnn_cnn_infer.so.8 → cudnnCnnInferVersionCheck. */
		char fn[64] = "cudnn";
		const char *p = b + 9;
		int up = 1;

		for (size_t n = 5; *p && *p != '.' && n < sizeof(fn) - 16; p++) {
			if (*p == '_') {
				up = 1;
				continue;
			}
			fn[n++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
			fn[n] = 0;
			up = 0;
		}
		strcat(fn, "VersionCheck");
		{
			int (*check)(void) = (int (*)(void))spy_dlsym(h, fn);

			if (check)
				e->check_status = check();
		}
	} else if (e->kind == K_CUDART) {
		int (*v)(int *) = (int (*)(int *))spy_dlsym(h, "cudaRuntimeGetVersion");
		int out = 0;

		if (v && v(&out) == 0)
			e->version = out;
	} else if (e->kind == K_CUDA) {
		int (*v)(int *) = (int (*)(int *))spy_dlsym(h, "cuDriverGetVersion");
		int out = 0;

		if (v && v(&out) == 0)
			e->version = out;
	}
	spy_dlclose(h);
}

struct scan {
	int changed;
};

static int
scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	struct entry *e;
	enum kind k;
	struct stat st;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		/* The same loads and unloads as last time: nothing to look at. */
		if (!sc->changed && info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs)
			return 1;
		sc->changed = 1;
		__atomic_store_n(&objects_gen, objects_gen + 1, __ATOMIC_RELEASE);
		seen_adds = info->dlpi_adds;
		seen_subs = info->dlpi_subs;
	}
	if (!info->dlpi_name || !info->dlpi_name[0] || !classify(base_of(info->dlpi_name), &k))
		return 0;
	if ((void *)info->dlpi_addr == spy_self_base())
		return 0;
	for (int i = 0; i < nspies; i++)
		if (spies[i] == (void *)info->dlpi_addr)
			return 0;
	for (int i = 0; i < nentries; i++)
		if (entries[i].base == (void *)info->dlpi_addr)
			return 0;
	if (nentries >= MAX_ENTRIES)
		return 0;
	e = &entries[nentries++];
	memset(e, 0, sizeof(*e));
	e->base = (void *)info->dlpi_addr;
	e->kind = k;
	snprintf(e->path, sizeof(e->path), "%s", info->dlpi_name);
	if (!realpath(e->path, e->real))
		memcpy(e->real, e->path, sizeof(e->real));
	if (stat(e->real, &st) == 0) {
		e->size = (long long)st.st_size;
		e->mtime = (long long)st.st_mtime;
	}
	elf_facts(info, e);
	e->version = -1;
	e->check_status = -1;
	return 0;
}

/* The copy id of a mapped dispatcher that answers calls, or -1. */
static int
copy_of(const struct entry *e)
{
	unsigned n = spy_copy_count();

	if (e->kind != K_CUDNN)
		return -1;
	for (unsigned k = 0; k < n; k++)
		if (spy_copies[k].handle && spy_copies[k].base == e->base)
			return (int)k;
	return -1;
}

static int
answers(const struct entry *e)
{
	return copy_of(e) >= 0;
}

static void
library_record(struct spy_thread *th, const struct entry *e)
{
	struct spy_buf *b = spy_thread_buf(th);
	struct spy_line *l;

	if (!b)
		return;
	l = &b->line;
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"library\",\"kind\":");
	spy_line_name(l, kind_names[e->kind]);
	spy_line_lit(l, ",\"path\":");
	spy_line_str(l, e->path);
	spy_line_lit(l, ",\"real_path\":");
	spy_line_str(l, e->real);
	spy_line_lit(l, ",\"soname\":");
	spy_line_str(l, e->soname[0] ? e->soname : NULL);
	spy_line_lit(l, ",\"build_id\":");
	spy_line_str(l, e->build_id[0] ? e->build_id : NULL);
	spy_line_lit(l, ",\"size\":");
	spy_line_i64(l, e->size);
	spy_line_lit(l, ",\"mtime\":");
	spy_line_i64(l, e->mtime);
	spy_line_lit(l, ",\"version\":");
	if (e->version >= 0)
		spy_line_i64(l, e->version);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"version_check\":");
	if (e->check_status >= 0)
		spy_line_i64(l, e->check_status);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"answers\":");
	spy_line_raw(l, answers(e) ? "true" : "false");
	spy_line_lit(l, ",\"copy\":");
	if (copy_of(e) >= 0) {
		const struct spy_real_lib *c = &spy_copies[copy_of(e)];

		spy_line_i64(l, copy_of(e));
		spy_line_lit(l, ",\"how\":");
		spy_line_str(l, c->how);
		spy_line_lit(l, ",\"loaded_by\":");
		spy_line_str(l, c->who[0] ? c->who : NULL);
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_char(l, '}');
	spy_sink_commit(th, l, 0);
}

static int
seen_finding(const char *id, const char *key)
{
	unsigned h = 2166136261u;

	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (const char *p = key; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (int i = 0; i < nfindings; i++)
		if (findings[i] == h)
			return 1;
	if (nfindings < MAX_FINDINGS)
		findings[nfindings++] = h;
	return 0;
}

static void
finding(const char *id, const char *severity, const char *key, const char *const *paths, int npaths,
	const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
finding(const char *id, const char *severity, const char *key, const char *const *paths, int npaths,
	const char *fmt, ...)
{
	char message[2048];
	va_list ap;
	struct spy_thread *th;
	struct spy_buf *b;

	if (seen_finding(id, key))
		return;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* The pointer names the installed page: the line must help where the source tree is not. */
	if (spy_config.stderr_mask & SPY_STDERR_FAILURES)
		spy_log("%s %s: %s%s%s (%s/conflicts.md#%s)", severity, id, message, spy_rule_fix(id) ? "; fix: " : "",
			spy_rule_fix(id) ? spy_rule_fix(id) : "", SPY_DOCDIR, id);
	if (!spy_sink_enabled())
		return;
	th = spy_thread_get();
	b = spy_thread_buf(th);
	if (!b)
		return;
	spy_audit_finding_json(&b->line, id, severity, message, paths, npaths);
	spy_sink_commit(th, &b->line, 1);
}

void
spy_audit_finding_json(struct spy_line *l, const char *id, const char *severity, const char *message,
		       const char *const *paths, int npaths)
{
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"finding\",\"id\":");
	spy_line_name(l, id);
	spy_line_lit(l, ",\"severity\":");
	spy_line_name(l, severity);
	spy_line_lit(l, ",\"message\":");
	spy_line_str(l, message);
	spy_line_lit(l, ",\"fix\":");
	spy_line_str(l, spy_rule_fix(id));
	spy_line_lit(l, ",\"paths\":[");
	for (int i = 0; i < npaths; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_line_str(l, paths[i]);
	}
	spy_line_lit(l, "]}");
}

void
spy_audit_finding(const char *id, const char *severity, const char *message, const char *path)
{
	pthread_mutex_lock(&lock);
	finding(id, severity, message, &path, path ? 1 : 0, "%s", message);
	pthread_mutex_unlock(&lock);
}

static const char *
dir_of(const char *path, char *out, size_t size)
{
	const char *s = strrchr(path, '/');

	snprintf(out, size, "%.*s", s ? (int)(s - path) : 0, path);
	return out;
}

static int
major_of(const struct entry *e)
{
	const char *s = strstr(e->soname[0] ? e->soname : base_of(e->path), ".so.");

	return s ? atoi(s + 4) : 0;
}

/* Who reaches a copy, in words: the exported names for copy 0, dlsym(handle) by whom for the others. */
static void
copy_words(int k, char *out, size_t size)
{
	if (k == 0)
		snprintf(out, size, "the program's calls by name (copy 0)");
	else if (k > 0 && spy_copies[k].how && strcmp(spy_copies[k].how, "linked") == 0)
		snprintf(out, size, "the calls by name of %s, which links it (copy %d)",
			 spy_copies[k].who[0] ? spy_copies[k].who : "?", k);
	else if (k > 0)
		snprintf(out, size, "calls through dlsym(handle) by %s (copy %d)",
			 spy_copies[k].who[0] ? spy_copies[k].who : "?", k);
	else
		snprintf(out, size, "no calls");
}

/*
 * Said again when another copy starts answering calls: the attribution is a
 * fact that changes while the program runs.
 */
static void
multiple_copies(void)
{
	const char *paths[MAX_ENTRIES];
	char message[1536], who[320], key[32];
	size_t len = 0;
	int n = 0;

	for (int i = 0; i < nentries; i++) {
		int dup = 0;

		if (entries[i].kind != K_CUDNN)
			continue;
		for (int j = 0; j < n; j++)
			dup |= strcmp(paths[j], entries[i].real) == 0;
		if (!dup)
			paths[n++] = entries[i].real;
	}
	if (n < 2)
		return;
	len += (size_t)snprintf(message + len, sizeof(message) - len, "%d cuDNN copies are mapped:", n);
	for (int i = 0, shown = 0; i < nentries && len < sizeof(message); i++) {
		const struct entry *e = &entries[i];
		int dup = 0;

		if (e->kind != K_CUDNN)
			continue;
		for (int j = 0; j < i; j++)
			dup |= entries[j].kind == K_CUDNN && strcmp(entries[j].real, e->real) == 0;
		if (dup)
			continue;
		copy_words(copy_of(e), who, sizeof(who));
		len += (size_t)snprintf(message + len, sizeof(message) - len, "%s %s (%lld) answers %s",
					shown++ ? ";" : "", e->real, e->version, who);
	}
	snprintf(key, sizeof(key), "%u:%d", spy_copy_count(), n);
	finding("runtime-multiple-copies", "error", key, paths, n, "%s", message);
}

/* A cuDNN version number in words: 91900 is 9.19.0, 8907 is 8.9.7. */
static void
version_words(long long v, char *out, size_t size)
{
	if (v < 0)
		snprintf(out, size, "a version not known");
	else if (v >= 90000)
		snprintf(out, size, "%lld.%lld.%lld", v / 10000, v % 10000 / 100, v % 100);
	else
		snprintf(out, size, "%lld.%lld.%lld", v / 1000, v % 1000 / 100, v % 100);
}

/* Its own sub-library of that name, mapped from the dispatcher's own directory. */
static int
has_twin(const struct entry *sub, const char *dispatcher_dir)
{
	char d[PATH_MAX];

	for (int j = 0; j < nentries; j++)
		if (entries[j].kind == K_SUBLIB && strcmp(base_of(entries[j].real), base_of(sub->real)) == 0 &&
		    strcmp(dir_of(entries[j].real, d, sizeof(d)), dispatcher_dir) == 0)
			return 1;
	return 0;
}

/*
 * The sub-libraries an answering dispatcher A runs from directory DIR, in
 * one finding: they are one conflict (the loader matched them by name from
 * the search path), not one per file. The graph library says its version;
 * the others pass or fail their own check against it. The same version is a
 * warning (the copy runs another install's code, of its own release); another
 * version, or a failed check, an error.
 */
static void
sublib_group(const struct entry *a, const char *dir)
{
	const char *paths[MAX_ENTRIES];
	char names[1024], d[PATH_MAX], key[2 * PATH_MAX + 8], va[32], vs[32];
	long long version = -1;
	int n = 1, failed = 0;
	size_t len = 0;

	paths[0] = a->real;
	names[0] = 0;
	for (int i = 0; i < nentries; i++) {
		const struct entry *e = &entries[i];

		if (e->kind != K_SUBLIB || major_of(e) != major_of(a) || strcmp(dir_of(e->real, d, sizeof(d)), dir) != 0)
			continue;
		if (has_twin(e, dir_of(a->real, d, sizeof(d))))
			continue;
		if (e->version >= 0)
			version = e->version;
		failed |= e->check_status > 0;
		paths[n++] = e->real;
		len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0, "%s%s",
					n > 2 ? ", " : "", base_of(e->real));
	}
	if (n == 1)
		return;
	version_words(a->version, va, sizeof(va));
	version_words(version, vs, sizeof(vs));
	dir_of(a->real, d, sizeof(d));
	if (version >= 0 && version == a->version && !failed) {
		snprintf(key, sizeof(key), "%s|%s|same", a->real, dir);
		finding("sublib-version-mismatch", "warning", key, paths, n,
			"%s (cuDNN %s) in %s runs sub-libraries from %s, of the same version: %s", base_of(a->real),
			va, d, dir, names);
	} else {
		snprintf(key, sizeof(key), "%s|%s|other", a->real, dir);
		finding("sublib-version-mismatch", "error", key, paths, n,
			"%s (cuDNN %s) in %s runs sub-libraries from %s of %s%s%s: %s", base_of(a->real), va, d, dir,
			version >= 0 ? "cuDNN " : "", vs, failed ? ", whose own version check fails" : "", names);
	}
}

/*
 * A sub-library serves every answering copy of its major: one from another
 * directory than a copy's own dispatcher is that copy running another
 * install's code (the loader matches sub-libraries by SONAME).
 */
static void
sublib_rules(void)
{
	char d1[PATH_MAX], d2[PATH_MAX];

	for (int i = 0; i < nentries; i++) {
		const struct entry *a = &entries[i];

		if (a->kind != K_CUDNN || !answers(a))
			continue;
		dir_of(a->real, d1, sizeof(d1));
		for (int j = 0; j < nentries; j++) {
			const struct entry *e = &entries[j];
			int first = 1;

			if (e->kind != K_SUBLIB || major_of(e) != major_of(a) ||
			    strcmp(dir_of(e->real, d2, sizeof(d2)), d1) == 0)
				continue;
			/* Each directory once: at its first sub-library. */
			for (int k = 0; k < j && first; k++) {
				char d3[PATH_MAX];

				first = !(entries[k].kind == K_SUBLIB && major_of(&entries[k]) == major_of(a) &&
					  strcmp(dir_of(entries[k].real, d3, sizeof(d3)), d2) == 0);
			}
			if (first)
				sublib_group(a, d2);
		}
	}
	for (int i = 0; i < nentries; i++) {
		const struct entry *e = &entries[i];

		if (e->kind != K_SUBLIB)
			continue;
		/* Beside its own dispatcher, of another version: an interrupted upgrade, a file copied over. */
		for (int j = 0; j < nentries; j++) {
			const struct entry *a = &entries[j];
			const char *paths[2] = { e->real, a->real };
			char v1[32], v2[32];

			if (!answers(a) || major_of(a) != major_of(e) ||
			    strcmp(dir_of(e->real, d1, sizeof(d1)), dir_of(a->real, d2, sizeof(d2))) != 0 ||
			    e->version < 0 || a->version < 0 || e->version == a->version)
				continue;
			version_words(e->version, v1, sizeof(v1));
			version_words(a->version, v2, sizeof(v2));
			finding("sublib-version-mismatch", "error", e->real, paths, 2, "%s is cuDNN %s, %s is %s",
				e->real, v1, a->real, v2);
		}
		if (e->check_status > 0) {
			const char *paths[1] = { e->real };

			finding("version-check-failed", "error", e->real, paths, 1,
				"the version check of %s failed with %s (%d)", e->real,
				spy_status_name(e->check_status) ? spy_status_name(e->check_status) : "?",
				e->check_status);
		}
	}
}

static void
rules(void)
{
	const struct entry *answer = NULL;
	int have8 = 0, have9 = 0;
	const struct entry *cudart = NULL, *cuda = NULL;

	for (int i = 0; i < nentries; i++) {
		const struct entry *e = &entries[i];

		if (copy_of(e) == 0)
			answer = e;
		if (e->kind == K_CUDNN || e->kind == K_SUBLIB) {
			have8 |= major_of(e) == 8;
			have9 |= major_of(e) == 9;
		}
		if (e->kind == K_CUDART)
			cudart = e;
		if (e->kind == K_CUDA)
			cuda = e;
	}
	multiple_copies();
	if (have8 && have9) {
		const char *paths[MAX_ENTRIES];
		int n = 0;

		for (int i = 0; i < nentries; i++)
			if (entries[i].kind == K_CUDNN || entries[i].kind == K_SUBLIB)
				paths[n++] = entries[i].real;
		finding("runtime-mixed-majors", "error", "", paths, n,
			"cuDNN 8 and cuDNN 9 libraries are both mapped in this process");
	}
	sublib_rules();
	if (answer && cudart && cudart->version > 0 && spy_lib.cudart > 0 &&
	    (long long)spy_lib.cudart / 1000 != cudart->version / 1000) {
		const char *paths[2] = { answer->real, cudart->real };

		finding("cuda-major-mismatch", "error", "", paths, 2,
			"cuDNN %s was built for CUDA %zu.%zu, but the process uses CUDA runtime %lld.%lld from %s",
			answer->real, spy_lib.cudart / 1000, spy_lib.cudart % 1000 / 10, cudart->version / 1000,
			cudart->version % 1000 / 10, cudart->real);
	}
	if (cudart && cuda && cudart->version > 0 && cuda->version > 0 && cuda->version < cudart->version) {
		const char *paths[2] = { cuda->real, cudart->real };

		finding("driver-older-than-runtime", "error", "", paths, 2,
			"the driver supports CUDA %lld.%lld (%s), older than the runtime's %lld.%lld (%s)",
			cuda->version / 1000, cuda->version % 1000 / 10, cuda->real, cudart->version / 1000,
			cudart->version % 1000 / 10, cudart->real);
	}
	if (spy_config.library[0] && answer && strcmp(spy_flavor.name, "preload") == 0) {
		for (int i = 0; i < nentries; i++) {
			const struct entry *e = &entries[i];
			const char *paths[2] = { e->real, answer->real };

			if (e->kind == K_CUDNN && e != answer && strcmp(e->real, answer->real) != 0)
				finding("library-not-requested", "warning", e->real, paths, 2,
					"the program's own copy %s stays loaded beside %s, which CUDNNSPY_LIBRARY names",
					e->real, answer->real);
		}
	}
	/* The drop-in sees only the calls made through it: a dispatcher the program mapped by path bypasses it. */
	if (answer && strcmp(spy_flavor.name, "drop-in") == 0) {
		for (int i = 0; i < nentries; i++) {
			const struct entry *e = &entries[i];
			const char *paths[2] = { e->real, answer->real };

			if (e->kind == K_CUDNN && e != answer && strcmp(e->real, answer->real) != 0)
				finding("dropin-bypassed", "warning", e->real, paths, 2,
					"%s is mapped beside the drop-in, which forwards to %s: calls made through %s "
					"bypass the spy and are neither counted nor recorded", e->real, answer->real, e->real);
		}
	}
}

void
spy_audit_load(const char *name, int flags, const char *caller, enum spy_load_result result, const char *error)
{
	struct load *l;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nloads; i++) {
		l = &loads[i];
		if (l->flags == flags && (l->result == result || (!l->emitted && l->result == SPY_LOAD_PENDING)) &&
		    strcmp(l->name, name) == 0 && strcmp(l->caller, caller ? caller : "") == 0 &&
		    (result != SPY_LOAD_FAILED || strcmp(l->error, error ? error : "") == 0)) {
			/* Counted only while not yet written: once written, a new record says it again. */
			if (!l->emitted) {
				l->count++;
				pthread_mutex_unlock(&lock);
				return;
			}
		}
	}
	if (nloads < MAX_LOADS) {
		l = &loads[nloads++];
		memset(l, 0, sizeof(*l));
		snprintf(l->name, sizeof(l->name), "%s", name);
		snprintf(l->caller, sizeof(l->caller), "%s", caller ? caller : "");
		snprintf(l->error, sizeof(l->error), "%s", error ? error : "");
		l->flags = flags;
		l->result = result;
		l->count = 1;
		if (result == SPY_LOAD_LOADED && !realpath(name, l->path))
			snprintf(l->path, sizeof(l->path), "%s", name);
	}
	pthread_mutex_unlock(&lock);
	if (result == SPY_LOAD_FAILED) {
		char message[1024];

		snprintf(message, sizeof(message), "%s could not be loaded%s%s: %s", name, caller ? " by " : "",
			 caller ? caller : "", error ? error : "no reason given");
		spy_audit_finding("sublib-load-failed", "error", message, name);
	}
}

/* A pending load (a name without a slash) came to something once an object of that name is mapped. Lock held. */
/*
 * A load by name that never got mapped: its dlerror text went to the
 * caller, and taking it would change what the caller reads. The loader's
 * search, repeated as the caller without loading anything, tells: nothing
 * found is glibc's own "cannot open shared object file" text; a file found
 * that is no library says what it is instead.
 */
static void
why_not_loaded(struct load *l)
{
	char path[PATH_MAX], why[PATH_MAX + 160];
	int rc = spy_loader_search_as(l->caller, l->name, path, sizeof(path));

	if (rc == 1) {
		l->result = SPY_LOAD_FAILED;
		snprintf(l->error, sizeof(l->error), "%s: cannot open shared object file: No such file or directory",
			 l->name);
	} else if (rc == 0 && spy_library_file_check(path, why, sizeof(why)) != 0) {
		l->result = SPY_LOAD_FAILED;
		/* Cut where the record's fields end: a path and its reason, as much as fits. */
		snprintf(l->path, sizeof(l->path), "%.*s", (int)sizeof(l->path) - 1, path);
		snprintf(l->error, sizeof(l->error), "%.*s: %.*s", 250, path, 250, why);
	}
}

static void
settle_loads(int final)
{
	/* 1 + objects_gen and nloads when the last look ended: the same again finds nothing new (every failure asks). */
	static unsigned settled_gen;
	static int settled_loads;
	struct spy_thread *th = NULL;
	struct spy_buf *b;

	if (!final && settled_gen == 1 + objects_gen && settled_loads == nloads)
		return;
	settled_gen = 1 + objects_gen;
	settled_loads = nloads;
	for (int i = 0; i < nloads; i++) {
		struct load *l = &loads[i];

		if (l->emitted)
			continue;
		if (l->result == SPY_LOAD_PENDING) {
			/* Not found before, and no object mapped since: not there now either. */
			if (!final && l->looked == 1 + objects_gen)
				continue;
			l->looked = 1 + objects_gen;
			for (int k = 0; k < nentries; k++) {
				if (strcmp(base_of(entries[k].path), l->name) == 0 || strcmp(entries[k].soname, l->name) == 0) {
					l->result = SPY_LOAD_LOADED;
					snprintf(l->path, sizeof(l->path), "%s", entries[k].real);
					break;
				}
			}
			if (l->result == SPY_LOAD_PENDING && !final)
				continue;
			if (l->result == SPY_LOAD_PENDING && !(l->flags & RTLD_NOLOAD))
				why_not_loaded(l);
		}
		l->emitted = 1;
		if (!spy_sink_enabled())
			continue;
		if (!th)
			th = spy_thread_get();
		b = spy_thread_buf(th);
		if (!b) {
			/* Looked at again next time. */
			settled_gen = 0;
			return;
		}
		spy_line_reset(&b->line);
		spy_line_lit(&b->line, "{\"event\":\"load\",\"name\":");
		spy_line_str(&b->line, l->name);
		spy_line_lit(&b->line, ",\"caller\":");
		spy_line_str(&b->line, l->caller[0] ? l->caller : NULL);
		spy_line_lit(&b->line, ",\"flags\":");
		spy_line_i64(&b->line, l->flags);
		spy_line_lit(&b->line, ",\"count\":");
		spy_line_u64(&b->line, l->count);
		spy_line_lit(&b->line, ",\"result\":");
		spy_line_raw(&b->line, l->result == SPY_LOAD_LOADED ? "\"loaded\"" :
					l->result == SPY_LOAD_FAILED ? "\"failed\"" : "\"not loaded\"");
		spy_line_lit(&b->line, ",\"path\":");
		spy_line_str(&b->line, l->path[0] ? l->path : NULL);
		spy_line_lit(&b->line, ",\"error\":");
		spy_line_str(&b->line, l->error[0] ? l->error : NULL);
		spy_line_char(&b->line, '}');
		spy_sink_commit(th, &b->line, 0);
	}
}

/*
 * The GPU against the newest architecture the answering cuDNN supports. Asked
 * only once the program has made a cuDNN handle, so the CUDA runtime is
 * already initialized and the spy starts nothing new. Lock held.
 */
static void
check_device(const struct entry *answer)
{
	const struct entry *cudart = NULL;
	int (*get_device)(int *), (*attribute)(int *, int, int), (*peek)(void), (*clear)(void);
	size_t (*max_device)(void);
	int dev = 0, major = 0, minor = 0, created = 0;
	void *h;

	/* Once: every failure comes here. */
	if (device_checked)
		return;
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
		const struct spy_counts *n = __atomic_load_n(&th->copy_n[0], __ATOMIC_ACQUIRE);

		created |= n && n[_SPY_FN_cudnnCreate].calls > n[_SPY_FN_cudnnCreate].fails;
	}
	for (int i = 0; i < nentries; i++)
		if (entries[i].kind == K_CUDART)
			cudart = &entries[i];
	if (device_checked || !created || !cudart || !answer)
		return;
	device_checked = 1;
	h = spy_dlopen(cudart->path, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&max_device = spy_real_fn(0, _SPY_FN_cudnnGetMaxDeviceVersion) ? (void *)spy_real_fn(0, _SPY_FN_cudnnGetMaxDeviceVersion)
									   : NULL;
	if (!h || !max_device)
		goto out;
	*(void **)&get_device = spy_dlsym(h, "cudaGetDevice");
	*(void **)&attribute = spy_dlsym(h, "cudaDeviceGetAttribute");
	*(void **)&peek = spy_dlsym(h, "cudaPeekAtLastError");
	*(void **)&clear = spy_dlsym(h, "cudaGetLastError");
	/* Only with the program's error state clear, and leaving it clear. */
	if (!get_device || !attribute || !peek || !clear || peek() != 0)
		goto out;
	/* cudaDevAttrComputeCapabilityMajor = 75, Minor = 76 */
	if (get_device(&dev) == 0 && attribute(&major, 75, dev) == 0 && attribute(&minor, 76, dev) == 0) {
		long have = major * 100 + minor * 10, max = (long)max_device();

		if (max > 0 && have > max) {
			const char *paths[1] = { answer->real };

			finding("gpu-too-new", "error", "", paths, 1,
				"the GPU (compute capability %d.%d) is newer than the newest architecture %s supports "
				"(cudnnGetMaxDeviceVersion %ld)", major, minor, answer->real, max);
		}
	}
	if (peek() != 0)
		clear();
out:
	if (h)
		spy_dlclose(h);
}

/*
 * Another build of the spy (both drop-ins, when one library links
 * libcudnn.so.8 and another libcudnn.so.9) is no copy: it watches its own.
 * Told apart after the scan, since asking needs the loader's lock.
 */
/* Forgets entry i; the records it had are written already. */
static void
entry_drop(int i)
{
	memmove(&entries[i], &entries[i + 1], (size_t)(nentries - i - 1) * sizeof(entries[0]));
	nentries--;
}

static void
drop_other_spies(int from)
{
	for (int i = from; i < nentries; i++) {
		if (entries[i].kind != K_CUDNN || !spy_in_a_spy(entries[i].base))
			continue;
		if (nspies < MAX_SPIES)
			spies[nspies++] = entries[i].base;
		entry_drop(i--);
	}
}

void
spy_audit_unmapped(void *base)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nentries; i++) {
		if (entries[i].base != base)
			continue;
		/* A library mapped later at this address is another. */
		entry_drop(i);
		break;
	}
	pthread_mutex_unlock(&lock);
}

unsigned
spy_audit_gen(void)
{
	return __atomic_load_n(&objects_gen, __ATOMIC_ACQUIRE);
}

void
spy_audit(void)
{
	struct scan sc = { 0 };
	struct spy_thread *th;
	int before;

	pthread_mutex_lock(&lock);
	before = nentries;
	dl_iterate_phdr(scan_cb, &sc);
	drop_other_spies(before);
	if (sc.changed || copies_seen != spy_copy_count()) {
		copies_seen = spy_copy_count();
		th = spy_thread_get();
		for (int i = 0; i < nentries; i++) {
			/* A copy that answers calls since its last record is declared again, with its id. */
			if (entries[i].reported && entries[i].copy_reported == 1 + copy_of(&entries[i]))
				continue;
			entries[i].copy_reported = 1 + copy_of(&entries[i]);
			if (entries[i].version < 0 && entries[i].check_status < 0)
				ask_version(&entries[i]);
			entries[i].reported = 1;
			if (spy_sink_enabled())
				library_record(th, &entries[i]);
		}
		rules();
	}
	for (int i = 0; i < nentries; i++) {
		if (copy_of(&entries[i]) == 0) {
			check_device(&entries[i]);
			break;
		}
	}
	settle_loads(spy_exiting());
	pthread_mutex_unlock(&lock);
}

/* What the spy sees that explains a CUDA that cannot start: the driver library, its device nodes, the GPUs. */
static size_t
device_nodes(void)
{
	static const char *const nodes[] = { "/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia-uvm" };
	size_t n = 0;
	struct stat st;

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		n += stat(nodes[i], &st) == 0 && S_ISCHR(st.st_mode);
	return n;
}

/* "-1", "", or a list whose first entry is not a device: CUDA then sees no GPU at all. */
static int
hides_every_gpu(const char *v)
{
	while (*v == ' ')
		v++;
	return !*v || *v == '-' || *v == ',';
}

#define WHY(...) \
	do { \
		if (len < size) \
			len += (size_t)snprintf(out + len, size - len, "%s", len ? "; " : ""); \
		if (len < size) \
			len += (size_t)snprintf(out + len, size - len, __VA_ARGS__); \
	} while (0)

size_t
spy_audit_why_not_initialized(char *out, size_t size, unsigned copy)
{
	const struct entry *cuda = NULL, *cudart = NULL;
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	size_t len = 0, cudnn_cuda = copy < spy_copy_count() ? spy_copies[copy].cudart : 0;
	struct scan sc = { 0 };

	out[0] = 0;
	pthread_mutex_lock(&lock);
	dl_iterate_phdr(scan_cb, &sc);
	for (int i = 0; i < nentries; i++) {
		struct entry *e = &entries[i];

		if ((e->kind == K_CUDA || e->kind == K_CUDART) && e->version < 0 && !e->reported)
			ask_version(e);
		if (e->kind == K_CUDA && !cuda)
			cuda = e;
		if (e->kind == K_CUDART && !cudart)
			cudart = e;
	}
	if (!cuda)
		WHY("no libcuda.so.1 is loaded: the NVIDIA driver is not installed, or its library is not on the "
		    "loader's path (ldconfig -p | grep libcuda)");
	else if (cuda->version > 0)
		WHY("the driver (%s) supports CUDA %lld.%lld", cuda->real, cuda->version / 1000,
		    cuda->version % 1000 / 10);
	if (device_nodes() == 0)
		WHY("no /dev/nvidia* device nodes: no GPU here, or a container started without one (docker --gpus all)");
	if (visible && hides_every_gpu(visible))
		WHY("CUDA_VISIBLE_DEVICES='%s' hides every GPU", visible);
	if (cuda && cuda->version > 0 && cudart && cudart->version > cuda->version)
		WHY("the CUDA runtime %s is %lld.%lld, newer than the driver's %lld.%lld: update the driver",
		    cudart->real, cudart->version / 1000, cudart->version % 1000 / 10, cuda->version / 1000,
		    cuda->version % 1000 / 10);
	if (cuda && cuda->version > 0 && cudnn_cuda > 0 && (long long)cudnn_cuda / 1000 > cuda->version / 1000)
		WHY("this cuDNN was built for CUDA %zu.%zu, a newer major than the driver's %lld.%lld", cudnn_cuda / 1000,
		    cudnn_cuda % 1000 / 10, cuda->version / 1000, cuda->version % 1000 / 10);
	pthread_mutex_unlock(&lock);
	return len;
}

void
spy_audit_fork_child(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&lock, &a);
	pthread_mutexattr_destroy(&a);
	for (int i = 0; i < nentries; i++)
		entries[i].reported = entries[i].copy_reported = 0;
	nfindings = 0;
	copies_seen = 0;
	seen_adds = seen_subs = 0;
	nloads = 0;
}
