/*
 * The findings of a scan, one id each (docs/conflicts.md has a section
 * per id, and tests/scan checks that every add_finding here has one):
 * per file, per copy, across copies, the loader's search path and the
 * sub-libraries its dispatcher would take, what --for's program would
 * fail on, and toolkits that disagree.
 */
#include "scan-int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- findings ---- */

static void
add_finding(struct scan_result *r, const char *id, const char *severity, const char *const *paths,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
add_finding(struct scan_result *r, const char *id, const char *severity, const char *const *paths,
	    const char *fmt, ...)
{
	struct scan_finding *f;
	va_list ap;

	r->findings = scan_xrealloc(r->findings, (r->nfindings + 1) * sizeof(*r->findings));
	f = &r->findings[r->nfindings++];
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

static const char *
link_words(enum scan_link l)
{
	return l == SCAN_LINK_LOOP ? "a symlink loop" : "a dangling symlink";
}

/* Links, kinds of file, permissions: once per file, whichever names reach it. */
void
scan_file_findings(struct scan_result *r, const struct scan_copy *c, struct scan_strv *seen)
{
	struct stat st;

	if (stat(c->dir, &st) == 0 && !(st.st_mode & S_IXOTH) && scan_strv_add_unique(seen, c->dir)) {
		const char *paths[] = { c->dir, NULL };

		add_finding(r, "unreadable", "warning", paths,
		    "directory %s has mode %04o: users other than its owner%s cannot load anything in it",
		    c->dir, (unsigned)(st.st_mode & 07777), st.st_mode & S_IXGRP ? " and group" : "");
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		const struct scan_file *f = c->files[i];
		const char *key = f->real ? f->real : f->path;
		const char *paths[] = { f->path, f->real, NULL };

		if (f->link == SCAN_LINK_DANGLING || f->link == SCAN_LINK_LOOP) {
			const char *last = f->chain.n ? f->chain.v[f->chain.n - 1] : "?";

			add_finding(r, "dangling-link", "warning", paths, "%s -> %s is %s%s", f->path, last,
			    link_words(f->link),
			    f->link == SCAN_LINK_DANGLING ? " (the target does not exist)" : "");
			continue;
		}
		if (!scan_strv_add_unique(seen, key))
			continue;
		switch (f->elf.status) {
		case SCAN_ELF_OK:
			break;
		case SCAN_ELF_NOT_FILE:
			if (strcmp(f->elf.why, "a FIFO") == 0)
				add_finding(r, "not-a-library", "error", paths,
				    "%s is a FIFO: a program that searches this directory for it waits for ever",
				    f->path);
			else
				add_finding(r, "not-a-library", "error", paths,
				    "%s is %s: a program that searches this directory for it fails to start",
				    f->path, f->elf.why);
			break;
		case SCAN_ELF_INVALID:
			add_finding(r, "not-a-library", "error", paths,
			    "%s is not a usable library (%s): a program that searches this directory for it fails to start",
			    f->path, f->elf.why);
			break;
		case SCAN_ELF_FOREIGN:
			add_finding(r, "not-a-library", "warning", paths,
			    "%s is %s: the loader passes over it", f->path, f->elf.why);
			break;
		case SCAN_ELF_DENIED:
			add_finding(r, "unreadable", "warning", paths, "%s cannot be opened: %s", f->path,
			    f->elf.why);
			break;
		case SCAN_ELF_MISSING:
			break;
		}
		/* Root reads everything: the mode bits say what other users get. */
		if (f->elf.status != SCAN_ELF_DENIED && f->has_stat && f->is_reg && !(f->mode & S_IROTH))
			add_finding(r, "unreadable", "warning", paths,
			    "%s has mode %04o: users other than its owner%s cannot load it",
			    f->real ? f->real : f->path, f->mode, f->mode & S_IRGRP ? " and group" : "");
	}
}

void
scan_copy_findings(struct scan_result *r, const struct scan_copy *c)
{
	const char *dirpaths[] = { c->dir, NULL };
	char buf[4096];
	size_t len;

	if (c->dispatcher_ok && c->dispatcher->elf.soname && c->major > 0) {
		char want[32];

		snprintf(want, sizeof(want), "libcudnn.so.%d", c->major);
		if (strcmp(c->dispatcher->elf.soname, want) != 0) {
			const char *paths[] = { c->dispatcher->path, NULL };

			add_finding(r, "soname-mismatch", "warning", paths,
			    "%s has SONAME %s: programs linked against it ask for %s, not %s", c->dispatcher->path,
			    c->dispatcher->elf.soname, c->dispatcher->elf.soname, want);
		}
	}
	if (c->dispatcher_ok && !c->version[0]) {
		const char *paths[] = { c->dispatcher->path, NULL };

		add_finding(r, "version-unknown", "warning", paths, "%s: version unknown: %s", c->dispatcher->path,
		    c->version_error ? c->version_error : "no version in its name");
	}
	if (c->nsubs == 0)
		return;
	/* Sub-libraries of another version than the dispatcher (or than each other, without one). */
	len = 0;
	buf[0] = '\0';
	{
		struct scan_strv paths = { 0 };
		const char *ref = c->dispatcher_ok && c->version[0] ? c->version : NULL;
		const char *first = NULL;
		int mixed = 0;

		for (size_t i = 0; i < c->nsubs; i++) {
			const struct scan_file *f = c->subs[i].file;

			if (!c->subs[i].ok || !f->version[0])
				continue;
			if (!first)
				first = f->version;
			if ((ref && strcmp(f->version, ref) != 0) || (!ref && strcmp(f->version, first) != 0))
				mixed = 1;
		}
		if (mixed) {
			for (size_t i = 0; i < c->nsubs; i++) {
				const struct scan_file *f = c->subs[i].file;
				const char *shown;
				int n;

				/* Against a dispatcher, only those that differ; among themselves, all of them. */
				if (!c->subs[i].ok || !f->version[0] || (ref && strcmp(f->version, ref) == 0))
					continue;
				shown = f->chain.n ? scan_base_name(f->chain.v[f->chain.n - 1]) : f->name;
				n = snprintf(buf + len, sizeof(buf) - len, "%s%s %s (%s)", len ? ", " : "", f->name,
				    f->version, shown);
				if (n > 0 && (size_t)n < sizeof(buf) - len)
					len += (size_t)n;
				scan_strv_add(&paths, f->path);
			}
			if (ref)
				add_finding(r, "sublib-version-mismatch", "error", (const char *const *)paths.v,
				    "%s: %s is %s but its sub-libraries are %s", c->dir, c->dispatcher->name, ref, buf);
			else
				add_finding(r, "sublib-version-mismatch", "error", (const char *const *)paths.v,
				    "%s: sub-libraries of different versions: %s", c->dir, buf);
		}
		scan_strv_free(&paths);
	}
	/* Completeness. */
	len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < c->nsubs; i++) {
		int n;

		if (c->subs[i].ok)
			continue;
		n = snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "; " : "", c->subs[i].note);
		if (n > 0 && (size_t)n < sizeof(buf) - len)
			len += (size_t)n;
	}
	if (c->dispatcher_ok && c->nsubs_ok == 0) {
		add_finding(r, "no-sublibraries", "error", dirpaths,
		    "%s has the cuDNN %d dispatcher %s but none of its sub-libraries: every call that needs one fails (libcudnn_%s.so.%d and %zu more are missing)",
		    c->dir, c->major, c->dispatcher->name, c->subs[0].name, c->major, c->nsubs - 1);
	} else if (c->dispatcher_ok && c->nsubs_ok < c->nsubs) {
		add_finding(r, "incomplete-copy", "error", dirpaths, "%s: cuDNN %d copy without %zu of its %zu sub-libraries: %s",
		    c->dir, c->major, c->nsubs - c->nsubs_ok, c->nsubs, buf);
	} else if (!c->dispatcher_ok && c->nsubs_ok > 0) {
		int on_llp = scan_strv_has(&c->sources, "LD_LIBRARY_PATH");

		add_finding(r, "no-dispatcher", "warning", dirpaths,
		    "%s has %zu cuDNN %d sub-libraries but no usable libcudnn.so.%d%s", c->dir, c->nsubs_ok, c->major,
		    c->major,
		    on_llp ? ": it is on LD_LIBRARY_PATH, so a dispatcher from elsewhere loads these sub-libraries first"
			   : ": programs cannot load this copy, only a dispatcher from elsewhere can pick them up");
	}
	/* Versioned files that no name in the directory leads to. */
	for (size_t i = 0; i < c->nfiles; i++) {
		const struct scan_file *f = c->files[i];
		const char *ref = NULL, *so;
		int reached = 0;
		char sname[128];
		const struct scan_file *sf;

		if (f->link != SCAN_LINK_NONE || !f->is_reg || !f->version[0] || !f->real)
			continue;
		/* Its own name must be longer than the SONAME: libcudnn.so.9.1.0, not libcudnn.so.9. */
		so = strstr(f->name, ".so.");
		if (!so || !strchr(so + 4, '.'))
			continue;
		for (size_t j = 0; j < c->nfiles; j++)
			if (c->files[j] != f && c->files[j]->real && strcmp(c->files[j]->real, f->real) == 0)
				reached = 1;
		if (reached)
			continue;
		if (f->sub)
			snprintf(sname, sizeof(sname), "libcudnn_%s.so.%d", f->sub, c->major);
		else
			snprintf(sname, sizeof(sname), "libcudnn.so.%d", c->major);
		sf = scan_file_named(c, sname);
		ref = sf && sf->version[0] ? sf->version : (!f->sub ? c->version : NULL);
		if (ref && ref[0] && strcmp(ref, f->version) != 0) {
			const char *paths[] = { f->path, NULL };

			add_finding(r, "stale-files", "info", paths,
			    "%s (%s) is not used: %s is %s; running ldconfig on this directory relinks %s to the highest version",
			    f->path, f->version, sname, ref, sname);
		}
	}
}

void
scan_global_findings(struct scan_result *r)
{
	/* Two majors in one directory. */
	for (size_t i = 0; i < r->ncopies; i++) {
		const struct scan_copy *a = r->copies[i];

		for (size_t j = i + 1; j < r->ncopies; j++) {
			const struct scan_copy *b = r->copies[j];
			const char *paths[] = { a->dir, NULL };

			if (strcmp(a->dir, b->dir) != 0 || !a->major || !b->major || a->major == b->major ||
			    !scan_copy_has_content(a) || !scan_copy_has_content(b))
				continue;
			add_finding(r, "mixed-majors", "warning", paths,
			    "%s holds cuDNN %d (%s) and cuDNN %d (%s) side by side: one process can end up with both",
			    a->dir, a->major, a->version[0] ? a->version : "version unknown", b->major,
			    b->version[0] ? b->version : "version unknown");
		}
	}
	/* Different copies: different directories, unless one's dispatcher is the other's file. */
	{
		struct scan_strv paths = { 0 };
		char buf[8192];
		size_t len = 0, distinct = 0;
		const char *v0 = NULL;
		int differ = 0;

		buf[0] = '\0';
		for (size_t i = 0; i < r->ncopies; i++) {
			const struct scan_copy *c = r->copies[i];
			int dup = 0;
			int n;

			if (!scan_copy_has_content(c) || c->farm_copy)
				continue;
			for (size_t j = 0; j < i && c->dispatcher && c->dispatcher->real; j++) {
				const struct scan_copy *o = r->copies[j];

				if (scan_copy_has_content(o) && !o->farm_copy && o->dispatcher && o->dispatcher->real &&
				    strcmp(o->dispatcher->real, c->dispatcher->real) == 0)
					dup = 1;
			}
			if (dup)
				continue;
			distinct++;
			if (!v0)
				v0 = c->version;
			if (!c->version[0] || strcmp(v0, c->version) != 0)
				differ = 1;
			n = snprintf(buf + len, sizeof(buf) - len, "%s[%d] %s (%s)", len ? ", " : "", c->id, c->dir,
			    c->version[0] ? c->version : "version unknown");
			if (n > 0 && (size_t)n < sizeof(buf) - len)
				len += (size_t)n;
			scan_strv_add(&paths, c->dir);
		}
		if (distinct >= 2)
			add_finding(r, "multiple-copies", differ ? "warning" : "info", (const char *const *)paths.v,
			    "%zu different cuDNN copies%s: %s", distinct, differ ? "" : " of one version", buf);
		scan_strv_free(&paths);
	}
}

/* ---- the sub-libraries a resolution's dispatcher would take ---- */

/*
 * The sub-libraries as the dispatcher at res->path would dlopen them:
 * cuDNN 9.19 asks for libcudnn_ops.so.9.19.0, then .so.9.19, then .so.9
 * (seen with LD_DEBUG=libs), each with its own RUNPATH ($ORIGIN) after
 * LD_LIBRARY_PATH.
 */
void
scan_resolve_subs(struct scan_result *r, struct scan_resolution *res, int major, const char *context)
{
	const char *const *expected = scan_subs_of_major(major);
	struct scan_strv paths = { 0 };
	struct scan_elf elf;
	char buf[4096], missing[2048];
	size_t len = 0, mlen = 0, nmissing = 0;
	int a = 0, b = 0, p = 0;
	int have_version = res->version[0] && sscanf(res->version, "%d.%d.%d", &a, &b, &p) == 3;
	char *ddir, *rd, *slash;

	if (!res->path)
		return;
	scan_elf_read(res->path, &elf);
	if (elf.status != SCAN_ELF_OK) {
		scan_elf_free(&elf);
		return;
	}
	ddir = scan_xstrdup(res->path);
	slash = strrchr(ddir, '/');
	if (slash)
		*slash = '\0';
	rd = realpath(ddir, NULL);
	buf[0] = '\0';
	missing[0] = '\0';
	scan_strv_add(&paths, res->path);
	for (size_t i = 0; expected[i]; i++) {
		struct scan_subload *s;
		char names[3][128];
		int nnames = 0;
		char *sdir, *rs;

		res->subs = scan_xrealloc(res->subs, (res->nsubs + 1) * sizeof(*res->subs));
		s = &res->subs[res->nsubs++];
		memset(s, 0, sizeof(*s));
		s->sub = expected[i];
		if (have_version) {
			snprintf(names[nnames++], sizeof(names[0]), "libcudnn_%s.so.%d.%d.%d", expected[i], a, b, p);
			snprintf(names[nnames++], sizeof(names[0]), "libcudnn_%s.so.%d.%d", expected[i], a, b);
		}
		snprintf(names[nnames++], sizeof(names[0]), "libcudnn_%s.so.%d", expected[i], major);
		for (int k = 0; k < nnames; k++) {
			if (r->for_ && res->object >= 0)
				scan_for_dlopen(r->for_, res->object, &s->r, names[k], &r->cache);
			else
				scan_resolve_from(&s->r, names[k], res->path, &elf, &r->cache);
			if (s->r.path || s->r.error || k == nnames - 1)
				break;
			scan_resolution_free(&s->r);
		}
		scan_describe(r, &s->r, 0);
		if (!s->r.path && !s->r.denied.n && r->for_) {
			/* Found nowhere by any name the dispatcher asks for: what this program's calls need is missing. */
			int n = snprintf(missing + mlen, sizeof(missing) - mlen, "%s%s", mlen ? ", " : "", s->r.name);

			if (n > 0 && (size_t)n < sizeof(missing) - mlen)
				mlen += (size_t)n;
			nmissing++;
		}
		if (!s->r.path || !res->version[0] || !s->r.version[0] || strcmp(s->r.version, res->version) == 0)
			continue;
		/* Next to the dispatcher, the copy's own check has spoken; here, what comes from elsewhere. */
		sdir = scan_xstrdup(s->r.path);
		slash = strrchr(sdir, '/');
		if (slash)
			*slash = '\0';
		rs = realpath(sdir, NULL);
		if (rs && rd && strcmp(rs, rd) != 0) {
			int n = snprintf(buf + len, sizeof(buf) - len, "%s%s from %s (%s, by %s)", len ? ", " : "",
			    scan_base_name(s->r.path), sdir, s->r.version, s->r.rule);

			if (n > 0 && (size_t)n < sizeof(buf) - len)
				len += (size_t)n;
			s->mismatch = 1;
			scan_strv_add(&paths, s->r.path);
		}
		free(rs);
		free(sdir);
	}
	if (len)
		add_finding(r, "sublib-version-mismatch", "error", (const char *const *)paths.v,
		    "%s: %s (%s) would load sub-libraries of another version: %s", context, res->path, res->version,
		    buf);
	if (nmissing) {
		const char *dpaths[] = { res->path, NULL };

		add_finding(r, "incomplete-copy", "error", dpaths,
		    "%s: %s (%s) finds %zu of its %zu sub-libraries nowhere (%s, by every name it asks for): every call that needs one fails",
		    context, res->path, res->version[0] ? res->version : "version unknown", nmissing, res->nsubs, missing);
	}
	scan_strv_free(&paths);
	free(rd);
	free(ddir);
	scan_elf_free(&elf);
}

void
scan_search_path_findings(struct scan_result *r)
{
	static const char *const names[] = { "libcudnn.so.9", "libcudnn.so.8" };

	for (size_t i = 0; i < 2; i++) {
		scan_resolve_plain(&r->plain[i], names[i], &r->cache);
		scan_describe(r, &r->plain[i], scan_dispatcher_major(names[i]));
		scan_resolve_subs(r, &r->plain[i], scan_dispatcher_major(names[i]),
		    "the loader's search path (LD_LIBRARY_PATH, ld.so.cache, default directories)");
	}
	r->nplain = 2;
	if (r->plain[0].path && r->plain[1].path) {
		char *d9 = scan_xstrdup(r->plain[0].real), *d8 = scan_xstrdup(r->plain[1].real);
		char *s9 = strrchr(d9, '/'), *s8 = strrchr(d8, '/');

		if (s9)
			*s9 = '\0';
		if (s8)
			*s8 = '\0';
		/* In one directory, the per-directory rule has said it already. */
		if (strcmp(d9, d8) != 0) {
			const char *paths[] = { r->plain[1].path, r->plain[0].path, NULL };

			add_finding(r, "mixed-majors", "warning", paths,
			    "the loader's search path gives libcudnn.so.8 from %s (%s, by %s) and libcudnn.so.9 from %s (%s, by %s): a process that loads both gets two cuDNN majors",
			    d8, r->plain[1].version[0] ? r->plain[1].version : "version unknown", r->plain[1].rule,
			    d9, r->plain[0].version[0] ? r->plain[0].version : "version unknown", r->plain[0].rule);
		}
		free(d9);
		free(d8);
	}
}

/* ---- --for: what the loader would fail on ---- */

static void
unreadable_finding(struct scan_result *r, const char *context, const struct scan_resolution *res,
		   const char *what)
{
	const char *user = scan_resolve_user();
	struct scan_strv paths = { 0 };
	char buf[4096];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < res->denied.n; i++) {
		int n = snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? ", " : "", res->denied.v[i]);

		if (n > 0 && (size_t)n < sizeof(buf) - len)
			len += (size_t)n;
		scan_strv_add(&paths, res->denied.v[i]);
	}
	if (res->path) {
		scan_strv_add(&paths, res->path);
		add_finding(r, "unreadable", "error", (const char *const *)paths.v,
		    "%s: user %s cannot read %s: the loader passes over it and takes %s (%s, by %s) instead",
		    context, user, buf, res->path, res->version[0] ? res->version : "version unknown", res->rule);
	} else {
		add_finding(r, "unreadable", "error", (const char *const *)paths.v,
		    "%s: user %s cannot read %s: the loader passes over it and finds no other %s, so %s",
		    context, user, buf, res->name, what);
	}
	scan_strv_free(&paths);
}

void
scan_for_findings(struct scan_result *r)
{
	struct scan_for *fo = r->for_;
	char *context = scan_xasprintf("for %s", fo->abs);
	const char *fails = fo->elf.is_program ? "the program does not start" : "loading it fails";

	/* Every DT_NEEDED found nowhere: the loader stops at the first one. */
	for (size_t i = 0; i < fo->nneeds; i++) {
		const struct scan_need *nd = &fo->needs[i];
		const char *paths[] = { fo->obj[nd->object].path, NULL };

		if (!nd->r || nd->r->path)
			continue;
		if (nd->r->error) {
			add_finding(r, "not-a-library", "error", paths, "%s: %s, needed by %s, stops the load: %s: %s",
			    context, nd->name, fo->obj[nd->object].path, nd->r->error, fails);
			continue;
		}
		if (nd->r->denied.n) {
			unreadable_finding(r, context, nd->r, fails);
			continue;
		}
		add_finding(r, "missing-library", "error", paths,
		    "%s: %s, needed by %s, is found nowhere (%sLD_LIBRARY_PATH, %sthe cache and the default directories searched): %s (\"error while loading shared libraries: %s: cannot open shared object file\")",
		    context, nd->name, fo->obj[nd->object].path, nd->r->nsteps && strcmp(nd->r->steps[0].rule, "DT_RPATH") == 0 ?
		    "DT_RPATH, " : "", fo->obj[nd->object].elf.runpath ? "DT_RUNPATH, " : "", fails, nd->name);
	}
	/* A dispatcher the user cannot read, found after all or not. */
	for (size_t k = 0; k < fo->nres; k++) {
		const struct scan_resolution *res = fo->res[k];

		if (res->denied.n && res->path)
			unreadable_finding(r, context, res, fails);
		else if (res->denied.n && !res->path && fo->nown)
			unreadable_finding(r, context, res, "its dlopen() fails");
		for (size_t i = 0; i < res->nsubs; i++) {
			const struct scan_resolution *sr = &res->subs[i].r;

			if (sr->denied.n)
				unreadable_finding(r, context, sr, "every cuDNN call that needs it fails");
		}
	}
	/* The cudnn* functions the program calls that the copy it gets does not have. */
	if (fo->symbols_read && fo->exports.n) {
		struct scan_strv missing = { 0 };
		char buf[4096];
		size_t len = 0;
		const char *copy = NULL;
		const char *version = NULL;

		buf[0] = '\0';
		for (size_t k = 0; k < fo->nres; k++)
			if (fo->res[k]->path && !copy) {
				copy = fo->res[k]->path;
				version = fo->res[k]->version;
			}
		for (size_t i = 0; i < fo->imports.n; i++) {
			int n;

			if (scan_strv_has(&fo->exports, fo->imports.v[i]))
				continue;
			scan_strv_add(&missing, fo->imports.v[i]);
			if (missing.n > 12)
				continue;
			n = snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? ", " : "", fo->imports.v[i]);
			if (n > 0 && (size_t)n < sizeof(buf) - len)
				len += (size_t)n;
		}
		if (missing.n && copy) {
			const char *paths[] = { copy, NULL };

			add_finding(r, "missing-symbols", "error", paths,
			    "%s: %s (%s) does not export %zu cudnn function%s the program imports: %s%s; a call to one stops the program (\"symbol lookup error: undefined symbol: %s\"), at start when it is linked with -z now",
			    context, copy, version && version[0] ? version : "version unknown", missing.n,
			    missing.n == 1 ? "" : "s", buf, missing.n > 12 ? ", ..." : "", missing.v[0]);
		}
		scan_strv_free(&missing);
	}
	free(context);
}

/* ---- toolkits ---- */

/* 1 when path is one of the --root trees or below one. */
static int
under_roots(const struct scan_result *r, const char *path)
{
	for (size_t i = 0; i < r->roots.n; i++) {
		char *root = realpath(r->roots.v[i], NULL);
		size_t n = root ? strlen(root) : 0;
		int in = root && strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);

		free(root);
		if (in)
			return 1;
	}
	return 0;
}

/*
 * /usr/local/cuda, CUDA_HOME and CUDA_PATH naming different toolkits:
 * builds and runs disagree. With --root, only between toolkits inside the
 * roots, so that the answer does not depend on the machine.
 */
void
scan_toolkit_findings(struct scan_result *r)
{
	for (size_t i = 0; i < r->ntoolkits; i++) {
		const struct scan_toolkit *a = &r->toolkits[i];

		for (size_t j = i + 1; j < r->ntoolkits; j++) {
			const struct scan_toolkit *b = &r->toolkits[j];
			const char *paths[] = { a->path, b->path, NULL };

			if (!a->real || !b->real || strcmp(a->real, b->real) == 0 ||
			    (!r->machine && (!under_roots(r, a->real) || !under_roots(r, b->real))))
				continue;
			add_finding(r, "toolkits-differ", "warning", paths,
			    "%s is %s (CUDA %s) but %s is %s (CUDA %s): a build that takes one and a program that loads from the other get different toolkits",
			    a->what, a->real, a->version[0] ? a->version : "version unknown", b->what, b->real,
			    b->version[0] ? b->version : "version unknown");
		}
	}
}
