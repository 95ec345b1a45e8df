/*
 * Which cuDNN copy a Windows process would load, from the files alone:
 * the documented search order for desktop applications (SafeDllSearchMode
 * on, the default), and, with --python, what Python 3.8 and later and
 * torch's __init__.py do instead. cuDNN's main DLL loads its sub-libraries
 * by name, so each is searched on its own, from the application's view
 * (not from the main DLL's directory): a directory that holds only some
 * of them, or the main DLL found where PATH does not count, gives a
 * process a mixed set.
 */
#include "scan-win.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const scan_win_limits[] = {
	"the search order is Windows' documented one for desktop applications with SafeDllSearchMode on (the default): "
	"the application's directory, C:\\Windows\\System32, C:\\Windows\\System, C:\\Windows, the current directory "
	"(--cwd), then PATH in order; KnownDLLs hold no cuDNN",
	"not modelled: SetDllDirectory, SetDefaultDllDirectories, AddDllDirectory and LoadLibraryEx flags of the program "
	"itself (only --python's and --dll-dir's), side-by-side manifests and .local redirection, DLLs a process has "
	"loaded already by other means, the order among several AddDllDirectory directories (Windows leaves it "
	"unspecified: taken as given)",
	"--python: Python 3.8 and later load extension modules and their imports with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, "
	"so PATH is not searched for them; torch\\lib and conda's Library\\bin count through os.add_dll_directory; "
	"cuDNN's own loads of its sub-libraries are taken as plain LoadLibrary calls (the standard order, PATH "
	"included), which was not checked on Windows",
	"a damaged DLL, or one for another machine, found first is taken to stop the search (the load fails, error 193)",
	"the major searched is the cudnn64_N.dll the program (or torch_cuda.dll) imports, else every major a copy has; "
	"the dependencies of the DLLs found are not followed",
	NULL,
};

static void
set_dir(const struct scan_win *w, struct scan_win_dir *d, const char *rule, const char *win)
{
	d->rule = rule;
	d->shown = scan_xstrdup(win);
	d->local = scan_win_map(w, win, &d->why);
}

/* C:\a\b.exe -> C:\a; a local path -> its directory. */
static char *
parent_of(const char *p)
{
	const char *a = strrchr(p, '\\'), *b = strrchr(p, '/');
	const char *cut = a > b ? a : b;

	if (!cut)
		return scan_xstrdup(".");
	if (cut == p + 2 && p[1] == ':')
		cut++;
	return scan_xasprintf("%.*s", (int)(cut - p), p);
}

static char *
join(const char *dir, const char *name)
{
	int win = strchr(dir, '\\') != NULL || (dir[0] && dir[1] == ':');
	size_t n = strlen(dir);

	if (n && (dir[n - 1] == '\\' || dir[n - 1] == '/'))
		return scan_xasprintf("%s%s", dir, name);
	return scan_xasprintf("%s%c%s", dir, win ? '\\' : '/', name);
}

/* A search order: the directories are borrowed. */
struct order {
	struct scan_win_dir *d;
	size_t n, cap;
};

static void
push(struct order *o, struct scan_win_dir *d)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 16;
		o->d = scan_xrealloc(o->d, o->cap * sizeof(*o->d));
	}
	o->d[o->n++] = *d;
}

/* The directories PATH names, in order. */
static void
path_dirs(const struct scan_win *w, struct scan_win_dir **out, size_t *nout)
{
	struct scan_strv entries = { 0 };

	scan_win_path_entries(w->path, &entries);
	*out = scan_xmalloc((entries.n ? entries.n : 1) * sizeof(**out));
	memset(*out, 0, (entries.n ? entries.n : 1) * sizeof(**out));
	for (size_t i = 0; i < entries.n; i++)
		set_dir(w, &(*out)[i], "PATH", entries.v[i]);
	*nout = entries.n;
	scan_strv_free(&entries);
}

static void
add_step(struct scan_win_res *r, const char *rule, const char *shown, char *outcome)
{
	r->steps = scan_xrealloc(r->steps, (r->nsteps + 1) * sizeof(*r->steps));
	r->steps[r->nsteps].rule = rule;
	r->steps[r->nsteps].shown = scan_xstrdup(shown);
	r->steps[r->nsteps].outcome = outcome;
	r->nsteps++;
}

/* The copy and version of the file at path (found as name). */
static void
describe(const struct scan_win *w, struct scan_win_res *r, int major)
{
	char real[PATH_MAX];
	char *dir = parent_of(r->path);
	const struct scan_win_copy *c = realpath(dir, real) ? scan_win_copy_at(w, real) : NULL;

	free(dir);
	for (size_t i = 0; c && i < w->ncopies; i++)
		if (strcmp(w->copies[i]->dir, real) == 0 && w->copies[i]->major == major)
			c = w->copies[i];
	if (!c)
		return;
	r->copy = c->id;
	for (size_t i = 0; i < c->ndlls; i++)
		if (strcasecmp(c->dlls[i]->name, r->name) == 0)
			snprintf(r->version, sizeof(r->version), "%s", c->dlls[i]->version);
}

static void
resolve(const struct scan_win *w, struct scan_win_res *r, const char *name, int major, const struct order *o)
{
	snprintf(r->name, sizeof(r->name), "%s", name);
	for (size_t i = 0; i < o->n; i++) {
		const struct scan_win_dir *d = &o->d[i];
		char *p;
		struct scan_pe pe;

		if (!d->local) {
			/* On a drive of the trees, a directory that is not there is what Windows would find: nothing. */
			add_step(r, d->rule, d->shown, scan_win_on_drive(w, d->shown) ?
			    scan_xstrdup("no such directory") : scan_xasprintf("not in the scanned trees (%s)", d->why));
			continue;
		}
		p = scan_win_find_in(d->local, name);
		if (!p) {
			add_step(r, d->rule, d->shown, scan_xstrdup("not there"));
			continue;
		}
		scan_pe_read(p, &pe);
		if (pe.status != SCAN_PE_OK || pe.machine != 0x8664) {
			r->error = pe.status != SCAN_PE_OK ? scan_xasprintf("%s: %s", p, pe.why) :
				   scan_xasprintf("%s is a DLL for %s, not x64 (error 193)", p,
				       scan_pe_machine_name(pe.machine));
			add_step(r, d->rule, d->shown, scan_xasprintf("fails: %s", r->error));
			scan_pe_free(&pe);
			free(p);
			return;
		}
		scan_pe_free(&pe);
		add_step(r, d->rule, d->shown, scan_xstrdup("found"));
		r->path = p;
		r->rule = d->rule;
		r->shown = scan_win_name_of(w, p);
		if (!r->shown && strchr(d->shown, '\\'))
			r->shown = join(d->shown, scan_base_name(p));
		describe(w, r, major);
		return;
	}
}

/* The copy of that major in the directory d, or NULL. */
static const struct scan_win_copy *
copy_in(const struct scan_win *w, const struct scan_win_dir *d, int major)
{
	char real[PATH_MAX];

	if (!d->local || !realpath(d->local, real))
		return NULL;
	for (size_t i = 0; i < w->ncopies; i++)
		if (w->copies[i]->major == major && strcmp(w->copies[i]->dir, real) == 0)
			return w->copies[i];
	return NULL;
}

/* Loaded by path from torch\lib before anything else: the name then answers without a search. */
static int
preloaded(const struct scan_win *w, struct scan_win_res *r, const char *name, int major)
{
	const struct scan_win_copy *c = w->python ? copy_in(w, &w->torch_lib, major) : NULL;

	if (!c)
		return 0;
	for (size_t i = 0; i < c->ndlls; i++) {
		const struct scan_win_dll *d = c->dlls[i];

		if (strcasecmp(d->name, name) != 0 || d->pe.status != SCAN_PE_OK || d->pe.machine != 0x8664)
			continue;
		snprintf(r->name, sizeof(r->name), "%s", name);
		r->path = scan_xstrdup(d->path);
		r->shown = scan_win_name_of(w, d->path);
		r->rule = "torch\\lib, loaded by path";
		add_step(r, r->rule, w->torch_lib.shown,
		    scan_xstrdup("loaded already: torch/__init__.py loads every DLL in torch\\lib by its path"));
		describe(w, r, major);
		return 1;
	}
	return 0;
}

/* The rule under which the order reaches the directory real, or NULL. */
static const char *
rule_reaching(const struct order *o, const char *real)
{
	char r[PATH_MAX];

	for (size_t i = 0; o && i < o->n; i++)
		if (o->d[i].local && realpath(o->d[i].local, r) && strcmp(r, real) == 0)
			return o->d[i].rule;
	return NULL;
}

static void
load_major(struct scan_win *w, struct scan_win_load *l, int major, const struct order *standard,
	   const struct order *extension)
{
	const char *const *subs = scan_win_subs(major);
	char name[64];

	l->major = major;
	snprintf(name, sizeof(name), "cudnn64_%d.dll", major);
	if (!preloaded(w, &l->main, name, major))
		resolve(w, &l->main, name, major, w->python ? extension : standard);
	for (size_t i = 0; i < w->ncopies && l->nothers < 16; i++) {
		const struct scan_win_copy *c = w->copies[i];

		if (c->major != major || !c->main || c->id == l->main.copy)
			continue;
		l->others[l->nothers] = c->id;
		l->others_rule[l->nothers] = rule_reaching(w->python ? extension : standard, c->dir);
		l->nothers++;
	}
	if (!l->main.path)
		return;
	for (l->nsubs = 0; subs[l->nsubs]; l->nsubs++) {
		struct scan_win_res *s = &l->subs[l->nsubs];

		snprintf(name, sizeof(name), "cudnn_%s64_%d.dll", subs[l->nsubs], major);
		if (!preloaded(w, s, name, major))
			resolve(w, s, name, major, standard);
		/* Another copy of the same known version is the same build: split, not mixed. */
		if (!s->path || (s->copy != l->main.copy && (!s->version[0] || !l->main.version[0])) ||
		    strcmp(s->version, l->main.version) != 0)
			l->mixed = 1;
		else if (s->copy != l->main.copy)
			l->split = 1;
	}
}

/*
 * The cuDNN majors the file at local imports (cudnn64_N.dll in its import
 * or delay-load directory): the program's own, or torch_cuda.dll's with
 * --python. 0 when the file cannot be read; its imports are kept in w.
 */
static int
imported_majors(struct scan_win *w, const char *local, int *majors, int max)
{
	struct scan_pe pe;
	int n = 0;

	scan_pe_read(local, &pe);
	if (pe.status != SCAN_PE_OK) {
		scan_pe_free(&pe);
		return -1;
	}
	w->imports_from = scan_xstrdup(local);
	for (size_t i = 0; i < pe.imports.n; i++) {
		char sub[32];
		int major;

		scan_strv_add(&w->imports, pe.imports.v[i]);
		if (scan_win_parse_name(pe.imports.v[i], sub, sizeof(sub), &major) && !sub[0] && n < max)
			majors[n++] = major;
	}
	scan_pe_free(&pe);
	return n;
}

static void
order_free(struct order *o)
{
	free(o->d);
}

void
scan_win_search(struct scan_win *w)
{
	struct scan_win_dir sys[3], cwd, *pathv = NULL, *user = NULL;
	size_t npath = 0, nuser = 0;
	struct order standard = { 0 }, extension = { 0 };
	int majors[2], nmajors = 0;
	char *why = NULL;

	memset(sys, 0, sizeof(sys));
	memset(&cwd, 0, sizeof(cwd));
	if (w->program) {
		char *dir = parent_of(w->program);

		set_dir(w, &w->app, "application directory", dir);
		free(dir);
	}
	if (w->python && w->app.shown) {
		/* A venv's python.exe is in Scripts\, its site-packages beside it. */
		size_t n = strlen(w->app.shown);
		char *prefix = n > 8 && strcasecmp(w->app.shown + n - 8, "\\Scripts") == 0 ?
			       scan_xasprintf("%.*s", (int)(n - 8), w->app.shown) : scan_xstrdup(w->app.shown);
		char *t = join(prefix, "Lib\\site-packages\\torch\\lib");
		char *c = join(prefix, "Library\\bin");

		free(prefix);

		set_dir(w, &w->torch_lib, "os.add_dll_directory (torch)", t);
		set_dir(w, &w->conda_bin, "os.add_dll_directory (conda)", c);
		free(t);
		free(c);
	}
	set_dir(w, &sys[0], "system directory", "C:\\Windows\\System32");
	set_dir(w, &sys[1], "16-bit system directory", "C:\\Windows\\System");
	set_dir(w, &sys[2], "Windows directory", "C:\\Windows");
	if (w->cwd)
		set_dir(w, &cwd, "current directory", w->cwd);
	path_dirs(w, &pathv, &npath);
	for (size_t i = 0; i < w->dll_dirs.n; i++) {
		user = scan_xrealloc(user, (nuser + 1) * sizeof(*user));
		memset(&user[nuser], 0, sizeof(*user));
		set_dir(w, &user[nuser++], "os.add_dll_directory", w->dll_dirs.v[i]);
	}
	/* The standard order: what a plain LoadLibrary, or a program's own imports, search. */
	if (w->app.shown)
		push(&standard, &w->app);
	for (int i = 0; i < 3; i++)
		push(&standard, &sys[i]);
	if (w->cwd)
		push(&standard, &cwd);
	for (size_t i = 0; i < npath; i++)
		push(&standard, &pathv[i]);
	/* torch_cuda.dll's import of cudnn64_N.dll: LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | _DEFAULT_DIRS. */
	if (w->python) {
		struct scan_win_dir load_dir = w->torch_lib;

		load_dir.rule = "directory of torch_cuda.dll";
		push(&extension, &load_dir);
		if (w->app.shown)
			push(&extension, &w->app);
		push(&extension, &w->torch_lib);
		if (w->conda_bin.local)
			push(&extension, &w->conda_bin);
		for (size_t i = 0; i < nuser; i++)
			push(&extension, &user[i]);
		push(&extension, &sys[0]);
	}
	/* The majors the program (or torch_cuda.dll) imports; when it imports none, every major a copy has, newest first. */
	{
		char *importer = NULL;

		if (w->python && w->torch_lib.local)
			importer = scan_win_find_in(w->torch_lib.local, "torch_cuda.dll");
		else if (!w->python && w->app.local)
			importer = scan_win_map(w, w->program, &why);
		free(why);
		if (importer)
			nmajors = imported_majors(w, importer, majors, 2);
		if (nmajors < 0)
			nmajors = 0;
		free(importer);
	}
	w->imports_majors = nmajors;
	for (int major = 99; major > 0 && !w->imports_majors; major--)
		for (size_t i = 0; i < w->ncopies; i++)
			if (w->copies[i]->major == major && w->copies[i]->main && nmajors < 2 &&
			    (nmajors == 0 || majors[nmajors - 1] != major))
				majors[nmajors++] = major;
	w->loads = scan_xmalloc((size_t)(nmajors ? nmajors : 1) * sizeof(*w->loads));
	memset(w->loads, 0, (size_t)(nmajors ? nmajors : 1) * sizeof(*w->loads));
	for (int i = 0; i < nmajors; i++)
		load_major(w, &w->loads[w->nloads++], majors[i], &standard, &extension);
	order_free(&standard);
	order_free(&extension);
	for (int i = 0; i < 3; i++) {
		free(sys[i].shown);
		free(sys[i].local);
		free(sys[i].why);
	}
	free(cwd.shown);
	free(cwd.local);
	free(cwd.why);
	for (size_t i = 0; i < npath; i++) {
		free(pathv[i].shown);
		free(pathv[i].local);
		free(pathv[i].why);
	}
	free(pathv);
	for (size_t i = 0; i < nuser; i++) {
		free(user[i].shown);
		free(user[i].local);
		free(user[i].why);
	}
	free(user);
}
