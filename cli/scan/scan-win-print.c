/*
 * The output of `cudnnspy scan --windows`: the table and details as the
 * Linux scan prints them, and one JSON document. File names go through
 * scan_human_str and scan_json_str, so a hostile name cannot drive the
 * terminal or break the JSON.
 */
#include "scan-win.h"
#include "rules.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * A name for the terminal: escaped as the Linux scan does, except the
 * backslash, which is Windows' separator here (a Windows name cannot hold one).
 */
static void
hs(FILE *f, const char *s)
{
	char *copy = scan_xstrdup(s ? s : ""), *part = copy, *bs;

	while ((bs = strchr(part, '\\')) != NULL) {
		*bs = '\0';
		scan_human_str(f, part);
		fputc('\\', f);
		part = bs + 1;
	}
	scan_human_str(f, part);
	free(copy);
}

static const char *
shown(const struct scan_win_copy *c)
{
	return c->win ? c->win : c->dir;
}

static void
human_dll(FILE *f, const struct scan_win_dll *d)
{
	hs(f, d->name);
	if (d->pe.status != SCAN_PE_OK) {
		fputs(" (unusable: ", f);
		hs(f, d->pe.why);
		fputs(")", f);
		return;
	}
	fprintf(f, " (%s, %s, %u exports", scan_pe_machine_name(d->pe.machine),
	    d->version[0] ? d->version : "no version resource", d->pe.nexports);
	if (d->pe.dll_name && strcasecmp(d->pe.dll_name, d->name) != 0) {
		fputs(", export name ", f);
		hs(f, d->pe.dll_name);
	}
	fprintf(f, ", %lld bytes)", d->pe.size);
	if (d->pe.version_problem || d->pe.export_problem || d->pe.import_problem) {
		fputs(" problem: ", f);
		hs(f, d->pe.why);
	}
}

static void
human_copy(FILE *f, const struct scan_win_copy *c)
{
	const char *const *subs = scan_win_subs(c->major);
	int any = 0;

	fprintf(f, "\n[%d] ", c->id);
	hs(f, shown(c));
	fputs("\n", f);
	if (c->win) {
		fputs("    here:        ", f);
		hs(f, c->dir);
		fputs("\n", f);
	}
	fprintf(f, "    cuDNN %d", c->major);
	if (c->version_from && strcmp(c->version_from, "FileVersion") == 0)
		fprintf(f, ", version %s, from the FileVersion of %s", c->version, c->main->name);
	else if (c->main)
		fputs(", version unknown (no version resource: the major is from the file name)", f);
	else
		fputs(", no main DLL", f);
	if (c->kind)
		fprintf(f, "; %s", c->kind);
	fputs("\n", f);
	if (c->main) {
		fputs("    main DLL:    ", f);
		human_dll(f, c->main);
		fputs("\n", f);
		if (c->main->pe.product_version || c->main->pe.description) {
			fputs("    resource:    ", f);
			if (c->main->pe.description) {
				fputs("\"", f);
				hs(f, c->main->pe.description);
				fputs("\"", f);
			}
			if (c->main->pe.product_version) {
				fputs(c->main->pe.description ? ", ProductVersion " : "ProductVersion ", f);
				hs(f, c->main->pe.product_version);
			}
			fputs("\n", f);
		}
	}
	fprintf(f, "    sub-libs:    %zu of %zu:", c->nsubs_present, c->nsubs);
	for (size_t k = 0; k < c->nsubs; k++) {
		const struct scan_win_dll *s = c->subs[k];

		if (!s)
			continue;
		fprintf(f, " %s", subs[k]);
		if (s->version[0] && (!c->main || strcmp(s->version, c->main->version) != 0))
			fprintf(f, " (%s)", s->version);
		if (s->pe.status != SCAN_PE_OK)
			fputs(" (unusable)", f);
	}
	fputs("\n", f);
	if (c->nsubs_present < c->nsubs) {
		fputs("    missing:    ", f);
		for (size_t k = 0; k < c->nsubs; k++)
			if (!c->subs[k])
				fprintf(f, " cudnn_%s64_%d.dll", subs[k], c->major);
		fputs("\n", f);
	}
	for (size_t i = 0; i < c->ndlls; i++)
		if (c->dlls[i]->sub[0] && !c->dlls[i]->known) {
			fputs(any ? ", " : "    other DLLs:  ", f);
			hs(f, c->dlls[i]->name);
			any = 1;
		}
	if (any)
		fputs("\n", f);
}

static void
human_res(FILE *f, const struct scan_win_res *r, const char *indent, int steps)
{
	fprintf(f, "%s%s -> ", indent, r->name);
	if (r->path) {
		hs(f, r->shown ? r->shown : r->path);
		if (r->copy)
			fprintf(f, " [copy %d]", r->copy);
		fprintf(f, " (%s), by %s\n", r->version[0] ? r->version : "version unknown", r->rule);
	} else if (r->error) {
		fputs("fails: ", f);
		hs(f, r->error);
		fputs("\n", f);
	} else {
		fputs("not found\n", f);
	}
	for (size_t i = 0; steps && i < r->nsteps; i++) {
		fprintf(f, "%s   %2zu. %-30s ", indent, i + 1, r->steps[i].rule);
		hs(f, r->steps[i].shown);
		fputs(": ", f);
		hs(f, r->steps[i].outcome);
		fputs("\n", f);
	}
}

static void
human_search(FILE *f, const struct scan_win *w)
{
	fputs("\nWhich copy Windows would load (its DLL search order, worked out from the files):\n", f);
	if (w->program) {
		fputs(w->python ? "  Python:  " : "  program: ", f);
		hs(f, w->program);
		fputs(w->python ? " (3.8 or later, importing torch)\n" : "\n", f);
	} else {
		fputs("  program: not given (--program): the application directory is left out\n", f);
	}
	fputs("  PATH:    ", f);
	hs(f, w->path ? w->path : "(not given)");
	fputs("\n", f);
	if (w->cwd) {
		fputs("  current directory: ", f);
		hs(f, w->cwd);
		fputs("\n", f);
	}
	if (w->python) {
		fputs("  os.add_dll_directory: ", f);
		hs(f, w->torch_lib.shown);
		if (w->conda_bin.local) {
			fputs(", ", f);
			hs(f, w->conda_bin.shown);
		}
		for (size_t i = 0; i < w->dll_dirs.n; i++) {
			fputs(", ", f);
			hs(f, w->dll_dirs.v[i]);
		}
		fputs("\n", f);
	}
	if (w->imports_from) {
		char *shown = scan_win_name_of(w, w->imports_from);

		fputs("  imports: ", f);
		if (w->imports_majors) {
			for (size_t i = 0, n = 0; i < w->imports.n; i++) {
				char sub[32];
				int major;

				if (scan_win_parse_name(w->imports.v[i], sub, sizeof(sub), &major) && !sub[0]) {
					fputs(n++ ? ", " : "", f);
					hs(f, w->imports.v[i]);
				}
			}
		} else {
			fputs("no cudnn64_N.dll (loaded at run time, or by another DLL): every major is searched", f);
		}
		fputs(", from the import table of ", f);
		hs(f, shown ? shown : w->imports_from);
		fputs("\n", f);
		free(shown);
	}
	if (!w->nloads)
		fputs("  no copy has a cudnn64_N.dll to load\n", f);
	for (size_t i = 0; i < w->nloads; i++) {
		const struct scan_win_load *l = &w->loads[i];

		fputs("\n", f);
		human_res(f, &l->main, "  ", 1);
		if (!l->main.path)
			continue;
		fprintf(f, "  its sub-libraries, each loaded by name%s:\n",
		    w->python ? " (torch\\lib's already loaded, the others in the standard order)" :
				" in the same order");
		for (size_t k = 0; k < l->nsubs; k++)
			human_res(f, &l->subs[k], "    ", 0);
		for (size_t k = 0; k < l->nothers; k++) {
			const struct scan_win_copy *c = NULL;

			for (size_t j = 0; j < w->ncopies; j++)
				if (w->copies[j]->id == l->others[k])
					c = w->copies[j];
			fprintf(f, "  %s [copy %d] ", k ? "       " : "others:", c->id);
			hs(f, shown(c));
			if (l->others_rule[k])
				fprintf(f, " (%s): shadowed, reached later by %s\n", c->version, l->others_rule[k]);
			else
				fprintf(f, " (%s): not on this search\n", c->version);
		}
		if (l->mixed)
			fputs("  => a mixed set: see windows-mixed-load above\n", f);
		else if (l->split)
			fprintf(f, "  => one version, %s, but from more than one copy: the same build, so it works; "
				   "removing the copies shadowed is still safer\n", l->main.version);
		else
			fprintf(f, "  => one copy, whole: [copy %d]\n", l->main.copy);
	}
	fputs("\n  Limits of this answer:\n", f);
	for (size_t i = 0; scan_win_limits[i]; i++)
		fprintf(f, "  - %s\n", scan_win_limits[i]);
}

void
scan_win_print_human(FILE *f, const struct scan_win *w)
{
	size_t nerr = 0, nwarn = 0, ninfo = 0;

	fprintf(f, "cuDNN copies in Windows trees: %zu, in %zu directories searched%s\n", w->ncopies, w->ndirs_walked,
	    w->walk_cut ? " (the walk stopped at its limit)" : "");
	for (size_t i = 0; i < w->ntrees; i++) {
		fputs("  tree: ", f);
		hs(f, w->trees[i].real);
		if (w->trees[i].letter)
			fprintf(f, " = drive %c:", w->trees[i].letter - 'a' + 'A');
		fputs("\n", f);
	}
	if (w->ncopies) {
		fprintf(f, "\n    #  major  version      sub-libs  directory\n");
		for (size_t i = 0; i < w->ncopies; i++) {
			const struct scan_win_copy *c = w->copies[i];

			fprintf(f, "  %3d  %-5d  %-11s  %zu/%zu       ", c->id, c->major,
			    c->main ? c->version : "-", c->nsubs_present, c->nsubs);
			hs(f, shown(c));
			if (c->kind)
				fprintf(f, " (%s)", c->kind);
			fputs("\n", f);
		}
	}
	for (size_t i = 0; i < w->ncopies; i++)
		human_copy(f, w->copies[i]);
	for (size_t i = 0; i < w->nfindings; i++) {
		const char *s = w->findings[i].severity;

		nerr += strcmp(s, "error") == 0;
		nwarn += strcmp(s, "warning") == 0;
		ninfo += strcmp(s, "info") == 0;
	}
	if (!w->nfindings)
		fputs("\nFindings: none\n", f);
	else
		fprintf(f, "\nFindings: %zu error%s, %zu warning%s, %zu info (causes and fixes: docs/conflicts.md)\n",
		    nerr, nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s", ninfo);
	for (size_t i = 0; i < w->nfindings; i++) {
		const char *fix = spy_rule_fix_windows(w->findings[i].id);

		fprintf(f, "  %-8s %-24s ", w->findings[i].severity, w->findings[i].id);
		hs(f, w->findings[i].message);
		fputs("\n", f);
		if (fix)
			fprintf(f, "  %-8s %-24s fix: %s\n", "", "", fix);
	}
	if (w->has_search)
		human_search(f, w);
}

/* ---- JSON ---- */

static void
js(FILE *f, const char *s)
{
	if (s)
		scan_json_str(f, s);
	else
		fputs("null", f);
}

static void
json_strv(FILE *f, const struct scan_strv *sv)
{
	fputc('[', f);
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			fputs(", ", f);
		js(f, sv->v[i]);
	}
	fputc(']', f);
}

static const char *
pe_status(enum scan_pe_status s)
{
	switch (s) {
	case SCAN_PE_OK: return "ok";
	case SCAN_PE_INVALID: return "invalid";
	case SCAN_PE_NOT_FILE: return "not-a-file";
	case SCAN_PE_MISSING: return "missing";
	case SCAN_PE_DENIED: return "denied";
	}
	return "invalid";
}

static void
json_dll(FILE *f, const struct scan_win_dll *d)
{
	const int ok = d->pe.status == SCAN_PE_OK;

	fputs("{\"name\": ", f);
	js(f, d->name);
	fputs(", \"path\": ", f);
	js(f, d->path);
	fputs(", \"sublibrary\": ", f);
	js(f, d->sub[0] ? d->sub : NULL);
	fprintf(f, ", \"known\": %s, \"pe\": \"%s\", \"problem\": ", d->sub[0] && !d->known ? "false" : "true",
	    pe_status(d->pe.status));
	js(f, !ok || d->pe.version_problem || d->pe.export_problem || d->pe.import_problem ? d->pe.why : NULL);
	fputs(", \"machine\": ", f);
	js(f, ok ? scan_pe_machine_name(d->pe.machine) : NULL);
	fputs(", \"file_version\": ", f);
	js(f, d->version[0] ? d->version : NULL);
	fputs(", \"product_version\": ", f);
	js(f, d->pe.product_version);
	fputs(", \"description\": ", f);
	js(f, d->pe.description);
	fputs(", \"export_name\": ", f);
	js(f, d->pe.dll_name);
	fprintf(f, ", \"size\": %lld, \"exports\": ", d->pe.size);
	json_strv(f, &d->pe.exports);
	fputs("}", f);
}

static void
json_copy(FILE *f, const struct scan_win_copy *c)
{
	const char *const *subs = scan_win_subs(c->major);

	fprintf(f, "    {\"id\": %d, \"directory\": ", c->id);
	js(f, c->dir);
	fputs(", \"windows_path\": ", f);
	js(f, c->win);
	fputs(", \"kind\": ", f);
	js(f, c->kind);
	fprintf(f, ", \"major\": %d, \"version\": ", c->major);
	js(f, c->version_from && strcmp(c->version_from, "FileVersion") == 0 ? c->version : NULL);
	fputs(", \"version_from\": ", f);
	js(f, c->version_from);
	fputs(", \"main\": ", f);
	js(f, c->main ? c->main->name : NULL);
	fprintf(f, ", \"complete\": %s,\n     \"sublibraries\": [", c->main && c->nsubs_present == c->nsubs ? "true" : "false");
	for (size_t k = 0; k < c->nsubs; k++) {
		fprintf(f, "%s{\"name\": \"%s\", \"file\": ", k ? ", " : "", subs[k]);
		js(f, c->subs[k] ? c->subs[k]->name : NULL);
		fputs(", \"version\": ", f);
		js(f, c->subs[k] && c->subs[k]->version[0] ? c->subs[k]->version : NULL);
		fputs("}", f);
	}
	fputs("],\n     \"files\": [", f);
	for (size_t i = 0; i < c->ndlls; i++) {
		fputs(i ? ",\n       " : "\n       ", f);
		json_dll(f, c->dlls[i]);
	}
	fputs("]}", f);
}

static void
json_res(FILE *f, const struct scan_win_res *r)
{
	fputs("{\"name\": ", f);
	js(f, r->name);
	fputs(", \"path\": ", f);
	js(f, r->path);
	fputs(", \"windows_path\": ", f);
	js(f, r->shown);
	fputs(", \"rule\": ", f);
	js(f, r->rule);
	fputs(", \"error\": ", f);
	js(f, r->error);
	fputs(", \"version\": ", f);
	js(f, r->version[0] ? r->version : NULL);
	if (r->copy)
		fprintf(f, ", \"copy\": %d", r->copy);
	else
		fputs(", \"copy\": null", f);
	fputs(", \"steps\": [", f);
	for (size_t i = 0; i < r->nsteps; i++) {
		fputs(i ? ", {\"rule\": " : "{\"rule\": ", f);
		js(f, r->steps[i].rule);
		fputs(", \"dir\": ", f);
		js(f, r->steps[i].shown);
		fputs(", \"outcome\": ", f);
		js(f, r->steps[i].outcome);
		fputs("}", f);
	}
	fputs("]}", f);
}

void
scan_win_print_json(FILE *f, const struct scan_win *w)
{
	fputs("{\n  \"tool\": \"cudnnspy scan\", \"mode\": \"windows\",\n  \"trees\": [", f);
	for (size_t i = 0; i < w->ntrees; i++) {
		fputs(i ? ", {\"path\": " : "{\"path\": ", f);
		js(f, w->trees[i].real);
		if (w->trees[i].letter)
			fprintf(f, ", \"drive\": \"%c:\"}", w->trees[i].letter - 'a' + 'A');
		else
			fputs(", \"drive\": null}", f);
	}
	fprintf(f, "],\n  \"directories_searched\": %zu, \"walk_cut\": %s,\n  \"copies\": [\n", w->ndirs_walked,
	    w->walk_cut ? "true" : "false");
	for (size_t i = 0; i < w->ncopies; i++) {
		json_copy(f, w->copies[i]);
		fputs(i + 1 < w->ncopies ? ",\n" : "\n", f);
	}
	fputs("  ],\n  \"findings\": [", f);
	for (size_t i = 0; i < w->nfindings; i++) {
		const struct scan_finding *fd = &w->findings[i];

		fputs(i ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
		js(f, fd->id);
		fputs(", \"severity\": ", f);
		js(f, fd->severity);
		fputs(", \"message\": ", f);
		js(f, fd->message);
		fputs(", \"paths\": ", f);
		json_strv(f, &fd->paths);
		fputs(", \"fix\": ", f);
		js(f, spy_rule_fix_windows(fd->id));
		fputs("}", f);
	}
	fputs("],\n  \"search\": ", f);
	if (!w->has_search) {
		fputs("null\n}\n", f);
		return;
	}
	fputs("{\"program\": ", f);
	js(f, w->program);
	fprintf(f, ", \"python\": %s, \"path\": ", w->python ? "true" : "false");
	js(f, w->path);
	fputs(", \"cwd\": ", f);
	js(f, w->cwd);
	fputs(", \"dll_directories\": ", f);
	json_strv(f, &w->dll_dirs);
	fputs(",\n    \"imports_from\": ", f);
	js(f, w->imports_from);
	fputs(", \"imports\": ", f);
	if (w->imports_from)
		json_strv(f, &w->imports);
	else
		fputs("null", f);
	fputs(",\n    \"loads\": [", f);
	for (size_t i = 0; i < w->nloads; i++) {
		const struct scan_win_load *l = &w->loads[i];

		fprintf(f, "%s\n      {\"major\": %d, \"mixed\": %s, \"split\": %s, \"others\": [", i ? "," : "",
		    l->major, l->mixed ? "true" : "false", l->split ? "true" : "false");
		for (size_t k = 0; k < l->nothers; k++) {
			fprintf(f, "%s{\"copy\": %d, \"shadowed_by_rule\": ", k ? ", " : "", l->others[k]);
			js(f, l->others_rule[k]);
			fputs("}", f);
		}
		fputs("], \"main\": ", f);
		json_res(f, &l->main);
		fputs(",\n       \"sublibraries\": [", f);
		for (size_t k = 0; k < l->nsubs; k++) {
			fputs(k ? ",\n         " : "\n         ", f);
			json_res(f, &l->subs[k]);
		}
		fputs("]}", f);
	}
	fputs("],\n    \"limits\": [", f);
	for (size_t i = 0; scan_win_limits[i]; i++) {
		fputs(i ? ", " : "", f);
		js(f, scan_win_limits[i]);
	}
	fputs("]}\n}\n", f);
}
