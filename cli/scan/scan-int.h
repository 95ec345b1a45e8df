/*
 * What the files of `cudnnspy scan` share. Every name outside a file is
 * prefixed scan_, because the command links the spy's core as well.
 */
#ifndef CUDNNSPY_SCAN_INT_H
#define CUDNNSPY_SCAN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* Unaligned native-endian reads from file bytes (ELF headers, the loader cache). */
static inline uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Longest string taken from a file (SONAME, RPATH): hostile files are not trusted to end theirs. */
#define SCAN_STR_MAX 4096

/* scan-util.c: memory, or a clean exit when there is none (scan_out_of_memory says so, exit 1). */
void scan_out_of_memory(void) __attribute__((noreturn));
void *scan_xmalloc(size_t n);
void *scan_xrealloc(void *p, size_t n);
char *scan_xstrdup(const char *s);
char *scan_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable list of owned strings. */
struct scan_strv {
	char **v;
	size_t n, cap;
};

void scan_strv_add(struct scan_strv *sv, const char *s);
/* Adds s unless an equal string is there already; returns 1 when added. */
int scan_strv_add_unique(struct scan_strv *sv, const char *s);
int scan_strv_has(const struct scan_strv *sv, const char *s);
void scan_strv_free(struct scan_strv *sv);

/* scan-elf.c: the headers and dynamic section of a file, read with bounds, never executed. */
enum scan_elf_status {
	SCAN_ELF_OK,		/* an ELF for this machine */
	SCAN_ELF_FOREIGN,	/* a valid ELF for another class or machine: the loader skips it */
	SCAN_ELF_INVALID,	/* not ELF, truncated, or inconsistent: the loader fails on it */
	SCAN_ELF_NOT_FILE,	/* a directory, FIFO, device: the loader fails or blocks on it */
	SCAN_ELF_MISSING,	/* nothing there, or a dangling link or a loop: the loader skips it */
	SCAN_ELF_DENIED,	/* exists but cannot be opened by us: the loader skips it */
};

struct scan_elf {
	enum scan_elf_status status;
	char why[192];		/* a few words when status is not OK */
	int err;		/* errno when stat() or open() failed, else 0 */
	int elf_class;		/* 32 or 64 */
	int machine;		/* e_machine */
	int is_program;		/* has PT_INTERP or is ET_EXEC */
	int has_dynamic;
	int nodeflib;		/* DF_1_NODEFLIB: no cache, no default directories */
	char *interp;		/* PT_INTERP, NULL when there is none */
	char *soname;		/* NULL when there is none */
	char *rpath;		/* DT_RPATH, NULL when there is none */
	char *runpath;		/* DT_RUNPATH, NULL when there is none */
	struct scan_strv needed;
};

void scan_elf_read(const char *path, struct scan_elf *e);
void scan_elf_free(struct scan_elf *e);
int scan_elf_symbols(const char *path, const char *prefix, struct scan_strv *defined, struct scan_strv *undefined);
const char *scan_elf_status_name(enum scan_elf_status s);

/* scan-pe.c: a Windows DLL's headers, export names and version resource, read with bounds. */
enum scan_pe_status {
	SCAN_PE_OK,
	SCAN_PE_INVALID,	/* not PE, truncated, or inconsistent headers */
	SCAN_PE_NOT_FILE,	/* a directory, FIFO, device */
	SCAN_PE_MISSING,	/* a dangling link or a loop */
	SCAN_PE_DENIED,		/* cannot be opened */
};

struct scan_pe {
	enum scan_pe_status status;
	char why[192];		/* the first problem: the file's (status not OK), or its exports' or version's */
	long long size;
	unsigned machine;	/* IMAGE_FILE_MACHINE_*: 0x8664 x64, 0x14c x86, 0xaa64 arm64 */
	unsigned nsections;
	int pe32plus;
	int is_dll;
	char *dll_name;		/* the export directory's name, NULL when none */
	struct scan_strv exports;	/* export names, in the table's (sorted) order */
	unsigned nexports;	/* as the export directory says */
	int export_problem;	/* the export table could not be read whole (why says how) */
	struct scan_strv imports;	/* DLLs named by the import and delay-load directories, in order */
	int import_problem;	/* those could not be read whole */
	int has_version;	/* VS_FIXEDFILEINFO was read */
	unsigned file_version[4];
	unsigned product_version_fixed[4];
	int version_problem;	/* the version resource is damaged (why says how) */
	char *product_version;	/* StringFileInfo ProductVersion, NULL when none */
	char *file_version_text;	/* StringFileInfo FileVersion */
	char *description;	/* StringFileInfo FileDescription */
};

void scan_pe_read(const char *path, struct scan_pe *pe);
void scan_pe_free(struct scan_pe *pe);
const char *scan_pe_machine_name(unsigned machine);

/* scan-ldcache.c: the loader's cache. */
struct scan_cache_entry {
	char *name;		/* libcudnn.so.9 */
	char *path;		/* where the cache says it is */
};

struct scan_cache {
	int loaded;		/* 0: neither the file nor ldconfig -p could be read */
	const char *how;	/* the file read, or "ldconfig -p" */
	char why[192];		/* why the file could not be used, when it could not */
	struct scan_cache_entry *e;	/* entries for this machine, in the cache's order */
	size_t n;
};

/*
 * Reads the cache at path; with path NULL, /etc/ld.so.cache and, when that
 * cannot be used, `ldconfig -p`.
 */
void scan_cache_load(struct scan_cache *c, const char *path);
/* The path the loader would take for name, or NULL. */
const char *scan_cache_lookup(const struct scan_cache *c, const char *name);
void scan_cache_free(struct scan_cache *c);

/* scan-probe.c: cudnnGetVersion in a forked helper process. */
struct scan_probe {
	int ok;			/* version is valid */
	size_t version;
	char why[256];		/* what went wrong, when not ok */
};

void scan_probe_version(const char *path, int timeout_ms, struct scan_probe *p);

/* scan-resolve.c: the loader's search, without loading. */
struct scan_subload;

struct scan_step {
	char *dir;		/* searched directory, $ORIGIN expanded */
	const char *rule;	/* "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache", "default directories" */
	char *path;		/* the file tried */
	char *outcome;		/* "not there", "skipped: ...", "loaded", "fails: ..." */
};

struct scan_resolution {
	char *name;		/* libcudnn.so.9 */
	char *path;		/* what would be loaded, or NULL */
	char *real;		/* its real path */
	const char *rule;	/* which rule found it, or NULL */
	char *error;		/* the loader would stop with this error, or NULL */
	const char *needed_by;	/* the object whose DT_NEEDED (or dlopen) asked, NULL when not known */
	int object;		/* with --for: the loaded object it is, -1 when none */
	int already;		/* the name matched an object loaded already: nothing was searched */
	struct scan_strv denied;	/* files passed over because the user cannot read them */
	struct scan_step *steps;
	size_t nsteps;
	/* Filled by scan-copies.c (what was found) and scan-findings.c (for a dispatcher, where its sub-libraries come from). */
	char version[32];
	int copy;		/* id of the scanned copy it is part of, 0 when none */
	struct scan_subload *subs;
	size_t nsubs;
};

/* A sub-library as the dispatcher found by a resolution would load it. */
struct scan_subload {
	const char *sub;	/* "ops" */
	struct scan_resolution r;
	int mismatch;		/* another version than the dispatcher, or unknown beside a known one */
};

/* One object of the process, in the order the loader maps them (breadth-first over DT_NEEDED). */
struct scan_object {
	char *path;		/* as the loader names it: the directory searched and the name */
	char *real;
	struct scan_strv names;	/* the names it answers to: those it was asked by, and its SONAME */
	int loader;		/* the object whose DT_NEEDED brought it in; -1 for the target and ld.so */
	const char *rule;	/* which rule found it; NULL for the target */
	char *origin;		/* $ORIGIN in its paths */
	struct scan_elf elf;
	dev_t dev;
	ino_t ino;
};

/* One DT_NEEDED entry of one object. */
struct scan_need {
	int object;		/* whose entry */
	char *name;
	int found;		/* the object it gives, -1 when the loader finds nothing or fails */
	struct scan_resolution *r;	/* the search, NULL when the name matched a loaded object */
};

struct scan_for {
	char *target;		/* as given */
	char *abs;		/* absolute */
	struct scan_elf elf;
	int links_cudnn;	/* has a DT_NEEDED libcudnn.so.N */
	int loads_cudnn;	/* it or one of its dependencies has one */
	int secure;		/* set-uid or set-gid: LD_LIBRARY_PATH ignored */
	char *origin;		/* $ORIGIN */
	struct scan_object *obj;	/* [0] is the target */
	size_t nobj;
	struct scan_need *needs;
	size_t nneeds;
	struct scan_resolution **res;	/* the cuDNN dispatchers searched for (owned by needs, or here) */
	size_t nres;
	struct scan_resolution *own;	/* dlopen() resolutions when nothing in the tree links cuDNN */
	size_t nown;
	struct scan_strv imports;	/* cudnn* symbols the objects other than cuDNN's need */
	struct scan_strv exports;	/* cudnn* symbols the loaded objects define */
	int symbols_read;	/* both lists could be read */
};

/* Who runs the program: readability is checked for them. Without a call, the scan's own user. */
int scan_resolve_set_user(const char *name, char *why, size_t whylen);
const char *scan_resolve_user(void);
/* 1 when the user may open path for reading (every directory searchable, the file readable). */
int scan_user_may_read(const char *path);

/* Fills f for the file at target; the cache must be loaded. 0, or -1 when target cannot be read. */
int scan_for_resolve(struct scan_for *f, const char *target, const struct scan_cache *cache);
/* name as a dlopen() from object obj of f would find it (a dispatcher's sub-libraries). */
void scan_for_dlopen(const struct scan_for *f, int obj, struct scan_resolution *r, const char *name,
		     const struct scan_cache *cache);
void scan_for_free(struct scan_for *f);
/* Resolution of name for an object with no RPATH or RUNPATH (what a plain program gets). */
void scan_resolve_plain(struct scan_resolution *r, const char *name, const struct scan_cache *cache);
/* Resolution of name as object_path (described by elf) would load it: a dispatcher's sub-libraries. */
void scan_resolve_from(struct scan_resolution *r, const char *name, const char *object_path,
		       const struct scan_elf *elf, const struct scan_cache *cache);
void scan_resolution_free(struct scan_resolution *r);
/* The loader's default directories, in its order, NULL-terminated. */
const char *const *scan_default_dirs(void);

/* What was found: the directories (scan-places.c), the copies (scan-copies.c), the findings (scan-findings.c). */
enum scan_link {
	SCAN_LINK_NONE,		/* not a symlink */
	SCAN_LINK_OK,
	SCAN_LINK_DANGLING,
	SCAN_LINK_LOOP,		/* a loop, or too many links */
};

/* One libcudnn*.so* entry of a directory. */
struct scan_file {
	char *name;
	char *path;
	char *sub;		/* sub-library ("ops", "cnn_infer"); NULL for libcudnn.so* */
	int major;		/* from the name or the names it links to; 0 when unknown */
	enum scan_link link;
	struct scan_strv chain;	/* the link's targets as written, in order */
	char *real;		/* realpath, NULL when it does not resolve */
	char version[32];	/* "9.1.0" from the names, "" when they carry none */
	int has_stat;		/* the fields below are the target's */
	unsigned mode;
	long long size, mtime;
	int is_reg;
	struct scan_elf elf;
};

struct scan_sub {
	const char *name;	/* "ops" */
	struct scan_file *file;	/* libcudnn_ops.so.9, NULL when absent */
	int ok;			/* present and loadable */
	char *note;		/* why it is missing or unusable */
};

/* The files of one cuDNN major in one directory. */
struct scan_copy {
	int id;			/* 1-based, in output order */
	char *dir;		/* real path */
	struct scan_strv also;	/* other spellings it was reached by */
	struct scan_strv sources;	/* where it was found */
	int major;
	struct scan_file **files;
	size_t nfiles;
	struct scan_file *dispatcher;	/* libcudnn.so.MAJOR, NULL when there is none */
	int dispatcher_ok;
	char version[32];
	unsigned long version_number;	/* 0 when unknown */
	const char *version_from;	/* "file name", "cudnnGetVersion", "sub-library file names" */
	char *version_error;
	struct scan_sub subs[8];
	size_t nsubs;
	size_t nsubs_ok;
	char *farm_of;		/* every file is a link into this directory (a "symlink farm"), else NULL */
	int farm_copy;		/* id of the copy there, 0 when none */
};

struct scan_finding {
	const char *id;
	const char *severity;	/* "error", "warning", "info" */
	char *message;
	struct scan_strv paths;
};

struct scan_dir {
	char *real;
	struct scan_strv also;
	struct scan_strv sources;
};

/* Where /usr/local/cuda, CUDA_HOME and CUDA_PATH point, and which toolkit is there. */
struct scan_toolkit {
	const char *what;	/* "/usr/local/cuda", "CUDA_HOME", "CUDA_PATH" */
	char *path;		/* as written */
	char *real;		/* its real path, NULL when it does not resolve */
	char version[32];	/* "13.0.96", "" when unknown */
	char *version_from;	/* the file the version was read from */
	int copy;		/* id of a cuDNN copy in its lib64 or lib, 0 when none */
};

struct scan_result {
	int json;
	int machine;		/* no --root: this machine's usual places */
	struct scan_strv roots;
	struct scan_cache cache;
	struct scan_dir *dirs;
	size_t ndirs;
	struct scan_copy **copies;
	size_t ncopies;
	struct scan_finding *findings;
	size_t nfindings;
	struct scan_resolution plain[2];	/* libcudnn.so.9 and .8 for a program without paths */
	size_t nplain;
	struct scan_for *for_;	/* NULL without --for */
	struct scan_toolkit toolkits[3];
	size_t ntoolkits;
};

/* scan-places.c: the directories to look at. */
/* Directories walked below all --root together. */
#define SCAN_ROOT_BUDGET 200000

struct scan_dir *scan_find_dir(struct scan_result *r, const char *real);
/* Adds a directory (any spelling) under a source label; missing ones are skipped. */
void scan_add_dir(struct scan_result *r, const char *path, const char *source);
/* This machine's usual places. */
void scan_gather_machine(struct scan_result *r);
/* Every directory below dir that holds a libcudnn name, without following links to directories. */
void scan_walk_root(struct scan_result *r, const char *dir, int depth, size_t *budget, const char *label);

/* scan-copies.c: what the directories hold, grouped into copies. */
extern int scan_no_probe;	/* --no-probe */

/* libcudnn.so[.N...] or libcudnn_SUB.so[...]: 1, with sub ("" for the dispatcher) and the numbers after ".so". */
int scan_parse_name(const char *name, char *sub, size_t subsz, int ver[4], int *nver);
const char *scan_base_name(const char *path);
/* The sub-libraries a dispatcher of that major asks for, NULL-terminated. */
const char *const *scan_subs_of_major(int major);
/* The major of a dispatcher's name (libcudnn.so.9), 0 for other names. */
int scan_dispatcher_major(const char *name);
/* Reads d's libcudnn files into the copies of r (one per major). */
void scan_read_dir(struct scan_result *r, const struct scan_dir *d);
void scan_free_file(struct scan_file *f);
struct scan_file *scan_file_named(const struct scan_copy *c, const char *name);
/* The dispatcher, the sub-libraries and the version of c. */
void scan_analyze_copy(struct scan_copy *c);
/* A dispatcher or a usable sub-library. */
int scan_copy_has_content(const struct scan_copy *c);
/* Reads the directories every file of a copy links into (symlink farms), then, after the ids, names their copies. */
void scan_find_farms(struct scan_result *r);
void scan_farm_ids(struct scan_result *r);
/* The version and the copy of what res found. */
void scan_describe(struct scan_result *r, struct scan_resolution *res, int dispatcher_major);
/* Forgets the helper's answers. */
void scan_forget_probes(void);

/* scan-toolkits.c: the CUDA toolkits. */
void scan_add_toolkit(struct scan_result *r, const char *what, const char *path);
/* The copy in each toolkit's library directories; the copies must have their ids. */
void scan_toolkit_copies(struct scan_result *r);

/* scan-findings.c: the findings (docs/conflicts.md). */
/* Links, kinds of file, permissions: once per file (seen), whichever names reach it. */
void scan_file_findings(struct scan_result *r, const struct scan_copy *c, struct scan_strv *seen);
void scan_copy_findings(struct scan_result *r, const struct scan_copy *c);
/* Two majors in one directory; different copies. */
void scan_global_findings(struct scan_result *r);
void scan_toolkit_findings(struct scan_result *r);
/* The sub-libraries the dispatcher res found would take, and what is wrong with them (context starts the message). */
void scan_resolve_subs(struct scan_result *r, struct scan_resolution *res, int major, const char *context);
/* libcudnn.so.9 and .8 for a program without paths. */
void scan_search_path_findings(struct scan_result *r);
void scan_for_findings(struct scan_result *r);

/* scan-print.c: the human table and the JSON document. */
void scan_json_str(FILE *f, const char *s);	/* a JSON string, valid UTF-8 whatever the bytes */
void scan_human_str(FILE *f, const char *s);	/* bytes a terminal would misread are escaped */
void scan_print_human(FILE *f, const struct scan_result *r);
void scan_print_json(FILE *f, const struct scan_result *r);

#endif
