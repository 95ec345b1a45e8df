/*
 * `cudnnspy scan --windows`: the cuDNN DLLs of Windows trees (a mounted
 * disk, a copied conda environment, an unpacked archive), their copies,
 * which copy Windows would load, and the findings. Its own data, since
 * a Windows copy is a set of DLLs found by name in a search order, not
 * ELF files linked by SONAME; the findings and their fixes are shared
 * with the Linux scan (struct scan_finding, shim/common/rules.c).
 */
#ifndef CUDNNSPY_SCAN_WIN_H
#define CUDNNSPY_SCAN_WIN_H

#include "scan-int.h"

/* A tree given to --windows; letter is the drive it is ('c'), 0 for none. */
struct scan_win_tree {
	char *dir;		/* as given */
	char *real;
	int letter;
};

struct scan_win_dll {
	char *name;		/* as on disk, any case */
	char *path;
	char sub[32];		/* "" for cudnn64_N.dll, else "ops_infer" (lower case) */
	int major;
	int known;		/* a sub-library the major's cudnn64_N.dll loads */
	struct scan_pe pe;
	char version[48];	/* FileVersion "8.9.7.29", "" when there is none */
};

struct scan_win_copy {
	int id;
	char *dir;		/* real path */
	char *win;		/* as Windows names it (C:\...), NULL outside a drive */
	const char *kind;	/* "conda", "torch", "CUDA toolkit", "pip nvidia-cudnn", NULL */
	int major;
	struct scan_win_dll **dlls;
	size_t ndlls;
	struct scan_win_dll *main;	/* cudnn64_N.dll, NULL when absent */
	struct scan_win_dll *subs[8];	/* by scan_win_subs order, NULL when absent */
	size_t nsubs, nsubs_present;
	char version[48];
	const char *version_from;	/* "FileVersion", "file name", NULL */
};

/* One directory tried by the search. */
struct scan_win_step {
	const char *rule;	/* "application directory", "PATH", ... */
	char *shown;		/* as Windows names it, or the local path */
	char *outcome;		/* "not there", "found", "fails: ...", "not in the scanned trees" */
};

struct scan_win_res {
	char name[64];		/* cudnn64_8.dll */
	char *path;		/* local path of what loads, NULL when nothing */
	char *shown;		/* its Windows name when known */
	const char *rule;
	char *error;		/* the load fails with this, NULL otherwise */
	int copy;
	char version[48];
	struct scan_win_step *steps;
	size_t nsteps;
};

struct scan_win_load {
	int major;
	struct scan_win_res main;
	struct scan_win_res subs[8];
	size_t nsubs;
	int mixed;		/* sub-libraries of another version than the main DLL (or of none known, or found nowhere) */
	int split;		/* not mixed, but some from another copy of the same version */
	/* The other copies of this major: shadowed by the one found (rule: where the search would reach them), or not searched (rule NULL). */
	int others[16];
	const char *others_rule[16];
	size_t nothers;
};

/* A directory of a search order: as Windows names it and where it is here (NULL: not in the trees). */
struct scan_win_dir {
	const char *rule;
	char *shown;
	char *local;
	char *why;		/* why local is NULL */
};

struct scan_win {
	int json;
	struct scan_win_tree *trees;
	size_t ntrees;
	size_t ndirs_walked;
	int walk_cut;		/* the directory budget ran out */
	struct scan_win_copy **copies;
	size_t ncopies;
	struct scan_finding *findings;
	size_t nfindings;
	/* The search (--program, --python, --path, --cwd, --dll-dir); has_search when any was given. */
	int has_search;
	const char *program;	/* as given */
	int python;
	const char *path;	/* PATH, ;-separated */
	const char *cwd;
	struct scan_strv dll_dirs;	/* --dll-dir: os.add_dll_directory */
	struct scan_win_dir app;	/* the application directory */
	struct scan_win_dir torch_lib, conda_bin;	/* --python: torch\lib, <prefix>\Library\bin */
	char *imports_from;	/* the program, or torch_cuda.dll, whose imports were read; NULL when none could be */
	struct scan_strv imports;	/* its imported DLLs */
	int imports_majors;	/* how many cudnn64_N.dll among them (0: every major is searched) */
	struct scan_win_load *loads;
	size_t nloads;
};

/* The sub-libraries cudnn64_N.dll loads, NULL-terminated (empty for an unknown major). */
const char *const *scan_win_subs(int major);
/* cudnn64_8.dll, cudnn_ops_infer64_8.dll (any case): 1 with sub ("" for the main DLL) and the major. */
int scan_win_parse_name(const char *name, char *sub, size_t subsz, int *major);

/* scan-win.c: the trees, the paths, the copies. */
int scan_win_parse_tree(const char *arg, struct scan_win_tree *t, char *why, size_t whylen);
void scan_win_gather(struct scan_win *w);
void scan_win_free(struct scan_win *w);
/* The copy whose directory is real, or NULL. */
struct scan_win_copy *scan_win_copy_at(const struct scan_win *w, const char *real);
/* Where the Windows path win is in the trees (case-insensitive, as Windows reads names), or NULL with why. */
char *scan_win_map(const struct scan_win *w, const char *win, char **why);
/* 1 when win (C:\...) is on the drive of a tree: what is not there is not on that machine either. */
int scan_win_on_drive(const struct scan_win *w, const char *win);
/* A local path as Windows names it (C:\...), or NULL outside the drives. */
char *scan_win_name_of(const struct scan_win *w, const char *local);
/* PATH's directories (;-separated), as a process has them: quotes off, empty entries skipped, %SystemRoot% expanded. */
void scan_win_path_entries(const char *path, struct scan_strv *out);
/* The entry of dir named name in any case, or NULL. */
char *scan_win_find_in(const char *dir, const char *name);

/* scan-win-findings.c: the findings, after the search (they say where each copy is on PATH, and what loads). */
void scan_win_findings(struct scan_win *w);

/* scan-win-search.c: which copy Windows would load (w->loads). */
void scan_win_search(struct scan_win *w);
/* The limits of the model, one line each, NULL-terminated. */
extern const char *const scan_win_limits[];

/* scan-win-print.c */
void scan_win_print_human(FILE *f, const struct scan_win *w);
void scan_win_print_json(FILE *f, const struct scan_win *w);

#endif
