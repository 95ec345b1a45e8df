/*
 * The findings of `cudnnspy scan --windows` (docs/conflicts.md has a
 * section per id, and tests/scan/test_scan_windows.py checks that every
 * add here has one): per DLL, per copy, across the copies of a major,
 * and what the search loads. The ids are the Linux scan's where the idea
 * is the same; their Windows fixes are in shim/common/rules.c.
 */
#include "scan-win.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void
add(struct scan_win *w, const char *id, const char *severity, const char *const *paths, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void
add(struct scan_win *w, const char *id, const char *severity, const char *const *paths, const char *fmt, ...)
{
	struct scan_finding *f;
	va_list ap;

	w->findings = scan_xrealloc(w->findings, (w->nfindings + 1) * sizeof(*w->findings));
	f = &w->findings[w->nfindings++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = severity;
	va_start(ap, fmt);
	if (vasprintf(&f->message, fmt, ap) < 0)
		scan_out_of_memory();
	va_end(ap);
	for (size_t i = 0; paths && paths[i]; i++)
		scan_strv_add_unique(&f->paths, paths[i]);
}

/* Appends to a bounded buffer; what does not fit is cut. */
static void
cat(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
cat(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static const char *
shown(const struct scan_win_copy *c)
{
	return c->win ? c->win : c->dir;
}

static void
dll_findings(struct scan_win *w, const struct scan_win_dll *d)
{
	const char *paths[] = { d->path, NULL };

	switch (d->pe.status) {
	case SCAN_PE_OK:
		break;
	case SCAN_PE_MISSING:
		add(w, "dangling-link", "warning", paths, "%s is a dangling link or a loop (%s)", d->path, d->pe.why);
		return;
	case SCAN_PE_DENIED:
		add(w, "unreadable", "warning", paths, "%s cannot be opened: %s", d->path, d->pe.why);
		return;
	default:
		add(w, "not-a-library", "error", paths,
		    "%s is not a usable DLL (%s): a process that finds it first fails to load it", d->path, d->pe.why);
		return;
	}
	if (d->pe.machine != 0x8664)
		add(w, "not-a-library", "warning", paths,
		    "%s is a DLL for %s, not x64: a 64-bit process that finds it first fails to load it (error 193)",
		    d->path, scan_pe_machine_name(d->pe.machine));
	else if (d->pe.version_problem || d->pe.export_problem || d->pe.import_problem)
		add(w, "not-a-library", "warning", paths, "%s: %s", d->path, d->pe.why);
	/* The name's major is what programs ask for; the version resource says what the file is. */
	if (d->pe.has_version && d->pe.file_version[0] != (unsigned)d->major)
		add(w, "soname-mismatch", "warning", paths,
		    "%s has FileVersion %s: a cuDNN %u file under a cuDNN %d name, so a program that asks for %s gets cuDNN %u",
		    d->path, d->version, d->pe.file_version[0], d->major, d->name, d->pe.file_version[0]);
	if (!d->sub[0] && !d->pe.has_version && !d->pe.version_problem)
		add(w, "version-unknown", "warning", paths,
		    "%s has no version resource: only its major (%d) is known, from its name", d->path, d->major);
}

static void
copy_findings(struct scan_win *w, const struct scan_win_copy *c)
{
	const char *dirpaths[] = { c->dir, NULL };
	char buf[2048];
	struct scan_strv paths = { 0 };
	const char *const *subs = scan_win_subs(c->major);

	for (size_t i = 0; i < c->ndlls; i++)
		dll_findings(w, c->dlls[i]);
	buf[0] = '\0';
	if (c->main && c->main->version[0]) {
		for (size_t k = 0; k < c->nsubs; k++) {
			const struct scan_win_dll *s = c->subs[k];

			if (s && s->version[0] && strcmp(s->version, c->main->version) != 0) {
				cat(buf, sizeof(buf), "%s%s %s", buf[0] ? ", " : "", s->name, s->version);
				scan_strv_add(&paths, s->path);
			}
		}
		if (buf[0])
			add(w, "sublib-version-mismatch", "error", (const char *const *)paths.v,
			    "%s: %s is %s but its sub-libraries are %s", shown(c), c->main->name, c->main->version, buf);
	}
	scan_strv_free(&paths);
	buf[0] = '\0';
	for (size_t k = 0; k < c->nsubs; k++)
		if (!c->subs[k])
			cat(buf, sizeof(buf), "%scudnn_%s64_%d.dll", buf[0] ? ", " : "", subs[k], c->major);
	if (c->main && c->nsubs && c->nsubs_present == 0)
		add(w, "no-sublibraries", "error", dirpaths,
		    "%s has %s but none of its sub-libraries: Windows takes them from wherever its search finds them first (%s)",
		    shown(c), c->main->name, buf);
	else if (c->main && c->nsubs_present < c->nsubs)
		add(w, "incomplete-copy", "error", dirpaths,
		    "%s: cuDNN %d copy without %zu of its %zu sub-libraries: %s", shown(c), c->major,
		    c->nsubs - c->nsubs_present, c->nsubs, buf);
	if (!c->main)
		add(w, "no-dispatcher", "warning", dirpaths,
		    "%s has cuDNN %d sub-libraries but no cudnn64_%d.dll: a process that loads cudnn64_%d.dll elsewhere may take these",
		    shown(c), c->major, c->major, c->major);
	buf[0] = '\0';
	for (size_t i = 0; i < c->ndlls; i++)
		if (c->dlls[i]->sub[0] && !c->dlls[i]->known)
			cat(buf, sizeof(buf), "%s%s", buf[0] ? ", " : "", c->dlls[i]->name);
	if (buf[0])
		add(w, "stale-files", "info", dirpaths, "%s: DLLs cuDNN %d does not load: %s", shown(c), c->major, buf);
}

/* Where the copy is on the search, in a few words: "conda", "PATH entry 2", "CUDA toolkit, PATH entry 3". */
static void
where(const struct scan_win *w, const struct scan_win_copy *c, char *buf, size_t size)
{
	struct scan_strv entries = { 0 };

	buf[0] = '\0';
	if (c->kind)
		cat(buf, size, "%s", c->kind);
	scan_win_path_entries(w->path, &entries);
	for (size_t i = 0; i < entries.n; i++) {
		char *why = NULL;
		char *local = scan_win_map(w, entries.v[i], &why);
		char real[PATH_MAX];
		int here = local && realpath(local, real) && strcmp(real, c->dir) == 0;

		free(local);
		free(why);
		if (here) {
			cat(buf, size, "%sPATH entry %zu", buf[0] ? ", " : "", i + 1);
			break;
		}
	}
	scan_strv_free(&entries);
}

/* The directory a resolution's file is in, as Windows names it when it can. */
static char *
parent_of_shown(const struct scan_win_res *r)
{
	const char *p = r->shown ? r->shown : r->path;
	const char *cut = strrchr(p, r->shown ? '\\' : '/');

	return cut ? scan_xasprintf("%.*s", (int)(cut - p), p) : scan_xstrdup(p);
}

void
scan_win_findings(struct scan_win *w)
{
	for (size_t i = 0; i < w->ncopies; i++)
		copy_findings(w, w->copies[i]);
	/* Two majors in one directory. */
	for (size_t i = 0; i < w->ncopies; i++)
		for (size_t j = i + 1; j < w->ncopies; j++)
			if (strcmp(w->copies[i]->dir, w->copies[j]->dir) == 0) {
				const char *paths[] = { w->copies[i]->dir, NULL };

				add(w, "mixed-majors", "warning", paths, "%s holds cuDNN %d and cuDNN %d",
				    shown(w->copies[i]), w->copies[i]->major, w->copies[j]->major);
			}
	/* Per major: copies with a main DLL, and how many versions among them. */
	for (int major = 1; major < 100; major++) {
		struct scan_strv versions = { 0 }, paths = { 0 };
		char buf[4096], one[256];
		size_t n = 0;

		buf[0] = '\0';
		for (size_t i = 0; i < w->ncopies; i++) {
			const struct scan_win_copy *c = w->copies[i];

			if (c->major != major || !c->main)
				continue;
			n++;
			/* A main DLL without a version resource says only its major: no version to count. */
			if (strcmp(c->version_from, "FileVersion") == 0)
				scan_strv_add_unique(&versions, c->version);
			scan_strv_add(&paths, c->dir);
			where(w, c, one, sizeof(one));
			cat(buf, sizeof(buf), "%s[%d] %s (%s%s%s)", buf[0] ? ", " : "", c->id, shown(c), one,
			    one[0] ? ", " : "", c->version);
		}
		if (n >= 2 && versions.n >= 2)
			add(w, "windows-copies-conflict", "error", (const char *const *)paths.v,
			    "%zu cuDNN %d copies of %zu versions: %s; a process takes cudnn64_%d.dll from the first that its "
			    "search reaches and each sub-library by name from the first directory that has it, so it can mix them",
			    n, major, versions.n, buf, major);
		else if (n >= 2)
			add(w, "multiple-copies", "info", (const char *const *)paths.v, "%zu cuDNN %d copies of one version: %s",
			    n, major, buf);
		scan_strv_free(&versions);
		scan_strv_free(&paths);
	}
	/* What the search loads: the sub-libraries that are not the main DLL's, by the directory they come from. */
	for (size_t i = 0; i < w->nloads; i++) {
		const struct scan_win_load *l = &w->loads[i];
		char buf[4096];
		struct scan_strv paths = { 0 }, dirs = { 0 };

		if (!l->main.path || !l->mixed)
			continue;
		buf[0] = '\0';
		scan_strv_add(&paths, l->main.path);
		for (size_t k = 0; k < l->nsubs; k++) {
			const struct scan_win_res *s = &l->subs[k];

			if (!s->path)
				cat(buf, sizeof(buf), "%s%s found nowhere", buf[0] ? ", " : "", s->name);
			else if (strcmp(s->version, l->main.version) != 0 ||
				 (s->copy != l->main.copy && (!s->version[0] || !l->main.version[0]))) {
				const char *slash = strrchr(s->path, '/');
				char *dir = scan_xasprintf("%.*s", (int)(slash ? slash - s->path : 0), s->path);

				scan_strv_add_unique(&dirs, dir);
				free(dir);
			}
		}
		for (size_t d = 0; d < dirs.n; d++) {
			size_t dlen = strlen(dirs.v[d]);
			const struct scan_win_res *first = NULL;
			size_t count = 0;
			char names[2048];

			names[0] = '\0';
			for (size_t k = 0; k < l->nsubs; k++) {
				const struct scan_win_res *s = &l->subs[k];

				if (!s->path || strncmp(s->path, dirs.v[d], dlen) != 0 || s->path[dlen] != '/' ||
				    strchr(s->path + dlen + 1, '/'))
					continue;
				if (strcmp(s->version, l->main.version) == 0 &&
				    (s->copy == l->main.copy || (s->version[0] && l->main.version[0])))
					continue;
				if (!first)
					first = s;
				count++;
				cat(names, sizeof(names), "%s%s", names[0] ? ", " : "", s->name);
				scan_strv_add_unique(&paths, s->path);
			}
			if (!first)
				continue;
			{
				char *dir = parent_of_shown(first);

				if (count == l->nsubs)
					cat(buf, sizeof(buf), "%sall %zu sub-libraries from %s", buf[0] ? ", " : "", count, dir);
				else
					cat(buf, sizeof(buf), "%s%s from %s", buf[0] ? ", " : "", names, dir);
				if (first->copy)
					cat(buf, sizeof(buf), " [copy %d]", first->copy);
				cat(buf, sizeof(buf), " (%s)", first->version[0] ? first->version : "version unknown");
				free(dir);
			}
		}
		add(w, "windows-mixed-load", "error", (const char *const *)paths.v,
		    "%s loads %s from %s [copy %d] (%s) but %s: a mixed cuDNN fails at run time "
		    "(CUDNN_STATUS_EXECUTION_FAILED, CUDNN_STATUS_VERSION_MISMATCH)",
		    w->python ? "this Python process" : w->program ? w->program : "a program", l->main.name,
		    l->main.shown ? l->main.shown : l->main.path, l->main.copy,
		    l->main.version[0] ? l->main.version : "version unknown", buf);
		scan_strv_free(&paths);
		scan_strv_free(&dirs);
	}
}
