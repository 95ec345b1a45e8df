/*
 * The two faces of a scan: a table for people and one JSON document for
 * programs. Paths come from the disk and may hold any byte: JSON gets
 * valid UTF-8 whatever they hold, a terminal gets no control characters.
 */
#include "scan-int.h"
#include "rules.h"

#include <string.h>
#include <time.h>

/* Length of the valid UTF-8 sequence at s, or 0 (overlong forms and surrogates are invalid too). */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void
scan_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		size_t n = utf8_len(s);

		if (n == 0) {
			/* A byte that is not UTF-8: kept visible as the Latin-1 character of that value. */
			fprintf(f, "\\u%04x", *s);
			s++;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		switch (*s) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*s < 0x20 || *s == 0x7f)
				fprintf(f, "\\u%04x", *s);
			else
				fputc(*s, f);
		}
		s++;
	}
	fputc('"', f);
}

void
scan_human_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!str)
		return;
	while (*s) {
		size_t n = utf8_len(s);

		if (n > 1) {
			fwrite(s, 1, n, f);
			s += n;
		} else if (n == 0 || *s < 0x20 || *s == 0x7f || *s == '\\') {
			/* An escape sequence or a newline in a file name must not reach the terminal as such. */
			fprintf(f, "\\x%02x", *s++);
		} else {
			fputc(*s++, f);
		}
	}
}

static void
hs(FILE *f, const char *s)
{
	scan_human_str(f, s);
}

static void
human_list(FILE *f, const struct scan_strv *sv, const char *sep)
{
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			fputs(sep, f);
		hs(f, sv->v[i]);
	}
}

static void
human_time(FILE *f, long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[64];

	if (!localtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, sizeof(buf), "%lld", t);
	fputs(buf, f);
}

static void
human_copy(FILE *f, const struct scan_copy *c)
{
	int links = 0;

	fprintf(f, "\n[%d] ", c->id);
	hs(f, c->dir);
	fputc('\n', f);
	if (c->major)
		fprintf(f, "    cuDNN %d", c->major);
	else
		fputs("    cuDNN of unknown major (only names that lead nowhere)", f);
	if (c->version[0])
		fprintf(f, ", version %s (%lu), from %s", c->version, c->version_number,
		    strcmp(c->version_from, "cudnnGetVersion") == 0 ? "cudnnGetVersion() in a helper process"
								     : c->version_from);
	else if (c->major)
		fputs(", version unknown", f);
	fputc('\n', f);
	if (c->version_error) {
		fputs("    version:     ", f);
		hs(f, c->version_error);
		fputc('\n', f);
	}
	fputs("    found via:   ", f);
	human_list(f, &c->sources, ", ");
	fputc('\n', f);
	if (c->also.n) {
		fputs("    also as:     ", f);
		human_list(f, &c->also, ", ");
		fputc('\n', f);
	}
	if (c->farm_of) {
		fputs("    links into:  ", f);
		hs(f, c->farm_of);
		if (c->farm_copy)
			fprintf(f, " [copy %d]", c->farm_copy);
		fputs(": every file here is a link there, so this is that copy, not a second one\n", f);
	}
	if (c->dispatcher) {
		const struct scan_file *d = c->dispatcher;

		fputs("    dispatcher:  ", f);
		hs(f, d->name);
		if (d->elf.soname) {
			fputs(" (SONAME ", f);
			hs(f, d->elf.soname);
		} else {
			fputs(" (no SONAME", f);
		}
		if (d->has_stat) {
			fprintf(f, ", %lld bytes, mode %04o, modified ", d->size, d->mode);
			human_time(f, d->mtime);
		}
		fputs(")\n", f);
	} else if (c->major) {
		fprintf(f, "    dispatcher:  none (no libcudnn.so.%d)\n", c->major);
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		const struct scan_file *fl = c->files[i];

		if (fl->link == SCAN_LINK_NONE)
			continue;
		fputs(links++ ? "                 " : "    links:       ", f);
		hs(f, fl->name);
		for (size_t j = 0; j < fl->chain.n; j++) {
			fputs(" -> ", f);
			hs(f, fl->chain.v[j]);
		}
		if (fl->link == SCAN_LINK_DANGLING)
			fputs(" (dangling)", f);
		else if (fl->link == SCAN_LINK_LOOP)
			fputs(" (loop)", f);
		fputc('\n', f);
	}
	if (c->nsubs) {
		fprintf(f, "    sub-libs:    %zu of %zu%s", c->nsubs_ok, c->nsubs, c->nsubs_ok ? ":" : "");
		for (size_t i = 0; i < c->nsubs; i++) {
			if (!c->subs[i].ok)
				continue;
			fprintf(f, " %s", c->subs[i].name);
			if (c->subs[i].file->version[0])
				fprintf(f, " %s", c->subs[i].file->version);
		}
		fputc('\n', f);
		for (size_t i = 0; i < c->nsubs; i++) {
			if (c->subs[i].ok)
				continue;
			fputs("    missing:     ", f);
			hs(f, c->subs[i].note);
			fputc('\n', f);
		}
	}
}

static void
human_resolution(FILE *f, const struct scan_resolution *res, int steps)
{
	fputs("  ", f);
	hs(f, res->name);
	if (res->path) {
		fputs(" -> ", f);
		hs(f, res->path);
		if (res->real && strcmp(res->real, res->path) != 0) {
			fputs(" = ", f);
			hs(f, res->real);
		}
		if (res->copy)
			fprintf(f, " [copy %d]", res->copy);
		if (res->version[0])
			fprintf(f, " (%s)", res->version);
		fprintf(f, ", found by %s\n", res->rule);
	} else if (res->error) {
		fputs(": the load fails: ", f);
		hs(f, res->error);
		fputc('\n', f);
	} else {
		fputs(": not found\n", f);
	}
	for (size_t i = 0; steps && i < res->nsteps; i++) {
		const struct scan_step *s = &res->steps[i];

		fprintf(f, "      %2zu. %-19s ", i + 1, s->rule);
		hs(f, s->path[0] ? s->path : s->dir);
		fputs(": ", f);
		hs(f, s->outcome);
		fputc('\n', f);
	}
	for (size_t i = 0; i < res->nsubs; i++) {
		const struct scan_resolution *sr = &res->subs[i].r;

		fprintf(f, "      %s ", res->subs[i].mismatch ? "!!" : "  ");
		hs(f, sr->name);
		if (sr->path) {
			fputs(" -> ", f);
			hs(f, sr->path);
			if (sr->version[0])
				fprintf(f, " (%s)", sr->version);
			fprintf(f, ", by %s", sr->rule);
		} else if (sr->error) {
			fputs(": fails: ", f);
			hs(f, sr->error);
		} else {
			fputs(": not found", f);
		}
		fputc('\n', f);
	}
}

void
scan_print_human(FILE *f, const struct scan_result *r)
{
	size_t nerr = 0, nwarn = 0, ninfo = 0;

	fprintf(f, "cuDNN copies: %zu, in %zu director%s searched (", r->ncopies, r->ndirs,
	    r->ndirs == 1 ? "y" : "ies");
	if (r->machine) {
		fputs("this machine's usual places", f);
	} else {
		fputs("--root ", f);
		human_list(f, &r->roots, ", ");
	}
	fputs(")\n", f);
	if (r->ncopies) {
		fprintf(f, "\n  %3s  %-5s  %-9s  %-16s  %-8s  %s\n", "#", "major", "version", "version from",
		    "sub-libs", "directory");
		for (size_t i = 0; i < r->ncopies; i++) {
			const struct scan_copy *c = r->copies[i];
			char subs[32], major[16];

			snprintf(subs, sizeof(subs), "%zu/%zu", c->nsubs_ok, c->nsubs);
			snprintf(major, sizeof(major), "%d", c->major);
			fprintf(f, "  %3d  %-5s  %-9s  %-16s  %-8s  ", c->id, c->major ? major : "?",
			    c->version[0] ? c->version : "?", c->version_from ? c->version_from : "-",
			    c->nsubs ? subs : "-");
			hs(f, c->dir);
			fputc('\n', f);
		}
		for (size_t i = 0; i < r->ncopies; i++)
			human_copy(f, r->copies[i]);
	}
	for (size_t i = 0; i < r->nfindings; i++) {
		const char *s = r->findings[i].severity;

		if (strcmp(s, "error") == 0)
			nerr++;
		else if (strcmp(s, "warning") == 0)
			nwarn++;
		else
			ninfo++;
	}
	if (r->nfindings == 0) {
		fputs("\nFindings: none\n", f);
	} else {
		fprintf(f, "\nFindings: %zu error%s, %zu warning%s, %zu info (causes and fixes: docs/conflicts.md)\n",
		    nerr, nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s", ninfo);
		for (size_t i = 0; i < r->nfindings; i++) {
			const char *fix = spy_rule_fix(r->findings[i].id);

			fprintf(f, "  %-8s %-24s ", r->findings[i].severity, r->findings[i].id);
			hs(f, r->findings[i].message);
			fputc('\n', f);
			if (fix)
				fprintf(f, "  %-8s %-24s fix: %s\n", "", "", fix);
		}
	}
	if (r->ntoolkits) {
		fputs("\nCUDA toolkits:\n", f);
		for (size_t i = 0; i < r->ntoolkits; i++) {
			const struct scan_toolkit *t = &r->toolkits[i];

			fprintf(f, "  %-16s ", t->what);
			hs(f, t->path);
			if (!t->real) {
				fputs(": does not exist\n", f);
				continue;
			}
			if (strcmp(t->real, t->path) != 0) {
				fputs(" -> ", f);
				hs(f, t->real);
			}
			if (t->version[0]) {
				fprintf(f, ": CUDA %s (from ", t->version);
				hs(f, t->version_from);
				fputc(')', f);
			} else {
				fputs(": CUDA version unknown (no version.json, version.txt, libcudart.so.X.Y.Z or cuda_runtime_api.h)", f);
			}
			if (t->copy)
				fprintf(f, ", cuDNN copy [%d]", t->copy);
			fputc('\n', f);
		}
	}
	if (!r->cache.loaded) {
		fputs("\nThe loader cache could not be read", f);
		if (r->cache.why[0]) {
			fputs(": ", f);
			hs(f, r->cache.why);
		}
		fputc('\n', f);
	}
	if (r->nplain) {
		fputs("\nA program without RPATH or RUNPATH, run from here, gets:\n", f);
		for (size_t i = 0; i < r->nplain; i++)
			human_resolution(f, &r->plain[i], 0);
	}
	if (r->for_) {
		const struct scan_for *fo = r->for_;
		const struct scan_resolution *first = NULL;

		fputs("\nFor ", f);
		hs(f, fo->abs);
		fprintf(f, " (%s", fo->elf.is_program ? "a program" : "a library");
		if (fo->links_cudnn) {
			fputs(" that links", f);
			for (size_t i = 0; i < fo->nres; i++) {
				if (strcmp(fo->res[i]->needed_by, fo->abs) != 0)
					continue;
				fputs(first ? ", " : " ", f);
				hs(f, fo->res[i]->name);
				first = fo->res[i];
			}
		}
		for (size_t i = 0; i < fo->nres; i++) {
			if (!fo->loads_cudnn || strcmp(fo->res[i]->needed_by, fo->abs) == 0)
				continue;
			fputs(first ? ", and loads " : " that loads ", f);
			hs(f, fo->res[i]->name);
			fputs(" through ", f);
			hs(f, fo->res[i]->needed_by);
			first = fo->res[i];
		}
		if (!fo->loads_cudnn)
			fputs(" that does not link cuDNN, nor do its dependencies: a dlopen() from it would go like this", f);
		fputs(")\n", f);
		if (fo->elf.rpath) {
			fputs("  DT_RPATH:   ", f);
			hs(f, fo->elf.rpath);
			fputs(fo->elf.runpath ? " (ignored: there is a DT_RUNPATH)\n" : "\n", f);
		}
		if (fo->elf.runpath) {
			fputs("  DT_RUNPATH: ", f);
			hs(f, fo->elf.runpath);
			fputc('\n', f);
		}
		if (fo->elf.rpath || fo->elf.runpath) {
			fputs("  $ORIGIN:    ", f);
			hs(f, fo->origin);
			fputc('\n', f);
		}
		fprintf(f, "  Loads, in the loader's order (run by %s):\n", scan_resolve_user());
		for (size_t i = 1; i < fo->nobj; i++) {
			const struct scan_object *o = &fo->obj[i];

			fputs("    ", f);
			hs(f, o->names.n ? o->names.v[0] : o->path);
			fputs(" -> ", f);
			hs(f, o->path);
			if (o->loader >= 0) {
				fputs(", needed by ", f);
				hs(f, fo->obj[o->loader].path);
			}
			fputs(", ", f);
			fputs(o->loader >= 0 ? "found by " : "", f);
			hs(f, o->rule);
			fputc('\n', f);
		}
		for (size_t i = 0; i < fo->nneeds; i++) {
			const struct scan_need *nd = &fo->needs[i];

			if (nd->found >= 0)
				continue;
			fputs("    ", f);
			hs(f, nd->name);
			fputs(", needed by ", f);
			hs(f, fo->obj[nd->object].path);
			fputs(nd->r && nd->r->error ? ": the load fails: " : ": NOT FOUND\n", f);
			if (nd->r && nd->r->error) {
				hs(f, nd->r->error);
				fputc('\n', f);
			}
		}
		fputs("  cuDNN:\n", f);
		for (size_t i = 0; i < fo->nres; i++)
			human_resolution(f, fo->res[i], 1);
	}
}

/* ---- JSON ---- */

static void
js(FILE *f, const char *s)
{
	scan_json_str(f, s);
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
link_name(enum scan_link l)
{
	switch (l) {
	case SCAN_LINK_NONE: return NULL;
	case SCAN_LINK_OK: return "ok";
	case SCAN_LINK_DANGLING: return "dangling";
	case SCAN_LINK_LOOP: return "loop";
	}
	return NULL;
}

static void
json_file(FILE *f, const struct scan_file *fl)
{
	fputs("{\"name\": ", f);
	js(f, fl->name);
	fputs(", \"path\": ", f);
	js(f, fl->path);
	fputs(", \"sublibrary\": ", f);
	js(f, fl->sub);
	fputs(", \"link\": ", f);
	js(f, link_name(fl->link));
	fputs(", \"chain\": ", f);
	json_strv(f, &fl->chain);
	fputs(", \"real_path\": ", f);
	js(f, fl->real);
	fputs(", \"version\": ", f);
	js(f, fl->version[0] ? fl->version : NULL);
	if (fl->has_stat)
		fprintf(f, ", \"size\": %lld, \"mtime\": %lld, \"mode\": \"%04o\", \"regular\": %s", fl->size, fl->mtime,
		    fl->mode, fl->is_reg ? "true" : "false");
	else
		fputs(", \"size\": null, \"mtime\": null, \"mode\": null, \"regular\": false", f);
	fputs(", \"elf\": ", f);
	js(f, scan_elf_status_name(fl->elf.status));
	fputs(", \"elf_problem\": ", f);
	js(f, fl->elf.status == SCAN_ELF_OK ? NULL : fl->elf.why);
	fputs(", \"soname\": ", f);
	js(f, fl->elf.soname);
	fputc('}', f);
}

static void
json_copy(FILE *f, const struct scan_copy *c)
{
	fprintf(f, "    {\"id\": %d, \"directory\": ", c->id);
	js(f, c->dir);
	fputs(", \"also\": ", f);
	json_strv(f, &c->also);
	fputs(", \"sources\": ", f);
	json_strv(f, &c->sources);
	fprintf(f, ", \"major\": %d, \"version\": ", c->major);
	js(f, c->version[0] ? c->version : NULL);
	if (c->version_number)
		fprintf(f, ", \"version_number\": %lu", c->version_number);
	else
		fputs(", \"version_number\": null", f);
	fputs(", \"version_from\": ", f);
	js(f, c->version_from);
	fputs(", \"version_error\": ", f);
	js(f, c->version_error);
	fputs(", \"links_into\": ", f);
	js(f, c->farm_of);
	if (c->farm_copy)
		fprintf(f, ", \"same_as\": %d", c->farm_copy);
	else
		fputs(", \"same_as\": null", f);
	fputs(",\n     \"dispatcher\": ", f);
	js(f, c->dispatcher ? c->dispatcher->name : NULL);
	fprintf(f, ", \"complete\": %s, \"sublibraries\": [",
	    c->dispatcher_ok && c->nsubs_ok == c->nsubs ? "true" : "false");
	for (size_t i = 0; i < c->nsubs; i++) {
		const struct scan_sub *s = &c->subs[i];

		fputs(i ? ", " : "", f);
		fputs("{\"name\": ", f);
		js(f, s->name);
		fputs(", \"file\": ", f);
		js(f, s->file ? s->file->name : NULL);
		fprintf(f, ", \"present\": %s, \"version\": ", s->ok ? "true" : "false");
		js(f, s->ok && s->file->version[0] ? s->file->version : NULL);
		fputs(", \"problem\": ", f);
		js(f, s->note);
		fputc('}', f);
	}
	fputs("],\n     \"files\": [", f);
	for (size_t i = 0; i < c->nfiles; i++) {
		fputs(i ? ",\n       " : "\n       ", f);
		json_file(f, c->files[i]);
	}
	fputs("]}", f);
}

static void
json_resolution(FILE *f, const struct scan_resolution *res, const char *indent)
{
	fputs("{\"name\": ", f);
	js(f, res->name);
	fputs(", \"path\": ", f);
	js(f, res->path);
	fputs(", \"real_path\": ", f);
	js(f, res->real);
	fputs(", \"rule\": ", f);
	js(f, res->rule);
	fputs(", \"error\": ", f);
	js(f, res->error);
	fputs(", \"version\": ", f);
	js(f, res->version[0] ? res->version : NULL);
	if (res->copy)
		fprintf(f, ", \"copy\": %d", res->copy);
	else
		fputs(", \"copy\": null", f);
	fputs(", \"needed_by\": ", f);
	js(f, res->needed_by);
	fputs(", \"unreadable\": ", f);
	json_strv(f, &res->denied);
	fprintf(f, ",\n%s \"steps\": [", indent);
	for (size_t i = 0; i < res->nsteps; i++) {
		const struct scan_step *s = &res->steps[i];

		fputs(i ? ", " : "", f);
		fputs("{\"rule\": ", f);
		js(f, s->rule);
		fputs(", \"dir\": ", f);
		js(f, s->dir[0] ? s->dir : NULL);
		fputs(", \"path\": ", f);
		js(f, s->path[0] ? s->path : NULL);
		fputs(", \"outcome\": ", f);
		js(f, s->outcome);
		fputc('}', f);
	}
	fputs("]", f);
	if (res->nsubs) {
		fprintf(f, ",\n%s \"sublibraries\": [", indent);
		for (size_t i = 0; i < res->nsubs; i++) {
			const struct scan_resolution *sr = &res->subs[i].r;

			fputs(i ? ",\n" : "\n", f);
			fprintf(f, "%s   {\"sublibrary\": ", indent);
			js(f, res->subs[i].sub);
			fputs(", \"name\": ", f);
			js(f, sr->name);
			fputs(", \"path\": ", f);
			js(f, sr->path);
			fputs(", \"real_path\": ", f);
			js(f, sr->real);
			fputs(", \"rule\": ", f);
			js(f, sr->rule);
			fputs(", \"error\": ", f);
			js(f, sr->error);
			fputs(", \"version\": ", f);
			js(f, sr->version[0] ? sr->version : NULL);
			if (sr->copy)
				fprintf(f, ", \"copy\": %d", sr->copy);
			else
				fputs(", \"copy\": null", f);
			fputs(", \"unreadable\": ", f);
			json_strv(f, &sr->denied);
			fprintf(f, ", \"mismatch\": %s}", res->subs[i].mismatch ? "true" : "false");
		}
		fputs("]", f);
	}
	fputc('}', f);
}

void
scan_print_json(FILE *f, const struct scan_result *r)
{
	fputs("{\n  \"tool\": \"cudnnspy scan\",\n  \"version\": ", f);
#ifdef CUDNNSPY_VERSION
	js(f, CUDNNSPY_VERSION);
#else
	js(f, NULL);
#endif
	fprintf(f, ",\n  \"mode\": \"%s\",\n  \"roots\": ", r->machine ? "machine" : "roots");
	json_strv(f, &r->roots);
	fputs(",\n  \"loader_cache\": {\"read\": ", f);
	fputs(r->cache.loaded ? "true" : "false", f);
	fputs(", \"from\": ", f);
	js(f, r->cache.loaded ? r->cache.how : NULL);
	fputs(", \"problem\": ", f);
	js(f, r->cache.why[0] ? r->cache.why : NULL);
	fputs("},\n  \"directories\": [", f);
	for (size_t i = 0; i < r->ndirs; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		fputs("{\"path\": ", f);
		js(f, r->dirs[i].real);
		fputs(", \"also\": ", f);
		json_strv(f, &r->dirs[i].also);
		fputs(", \"sources\": ", f);
		json_strv(f, &r->dirs[i].sources);
		fputc('}', f);
	}
	fputs("],\n  \"copies\": [", f);
	for (size_t i = 0; i < r->ncopies; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_copy(f, r->copies[i]);
	}
	fputs("],\n  \"findings\": [", f);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct scan_finding *fd = &r->findings[i];

		fputs(i ? ",\n    " : "\n    ", f);
		fputs("{\"id\": ", f);
		js(f, fd->id);
		fputs(", \"severity\": ", f);
		js(f, fd->severity);
		fputs(", \"message\": ", f);
		js(f, fd->message);
		fputs(", \"paths\": ", f);
		json_strv(f, &fd->paths);
		fputs(", \"fix\": ", f);
		js(f, spy_rule_fix(fd->id));
		fputc('}', f);
	}
	fputs("],\n  \"cuda_toolkits\": [", f);
	for (size_t i = 0; i < r->ntoolkits; i++) {
		const struct scan_toolkit *t = &r->toolkits[i];

		fputs(i ? ",\n    " : "\n    ", f);
		fputs("{\"what\": ", f);
		js(f, t->what);
		fputs(", \"path\": ", f);
		js(f, t->path);
		fputs(", \"real_path\": ", f);
		js(f, t->real);
		fputs(", \"version\": ", f);
		js(f, t->version[0] ? t->version : NULL);
		fputs(", \"version_from\": ", f);
		js(f, t->version_from);
		if (t->copy)
			fprintf(f, ", \"copy\": %d}", t->copy);
		else
			fputs(", \"copy\": null}", f);
	}
	fputs("],\n  \"default_resolution\": ", f);
	if (r->nplain) {
		fputc('[', f);
		for (size_t i = 0; i < r->nplain; i++) {
			fputs(i ? ",\n    " : "\n    ", f);
			json_resolution(f, &r->plain[i], "    ");
		}
		fputc(']', f);
	} else {
		fputs("null", f);
	}
	fputs(",\n  \"for\": ", f);
	if (r->for_) {
		const struct scan_for *fo = r->for_;

		fputs("{\"target\": ", f);
		js(f, fo->abs);
		fprintf(f, ", \"kind\": \"%s\", \"links_cudnn\": %s, \"rpath\": ", fo->elf.is_program ? "program" : "library",
		    fo->links_cudnn ? "true" : "false");
		js(f, fo->elf.rpath);
		fputs(", \"runpath\": ", f);
		js(f, fo->elf.runpath);
		fputs(", \"origin\": ", f);
		js(f, fo->origin);
		fprintf(f, ", \"secure\": %s, \"nodeflib\": %s, \"needed\": ", fo->secure ? "true" : "false",
		    fo->elf.nodeflib ? "true" : "false");
		json_strv(f, &fo->elf.needed);
		fprintf(f, ", \"loads_cudnn\": %s, \"user\": ", fo->loads_cudnn ? "true" : "false");
		js(f, scan_resolve_user());
		fputs(",\n    \"objects\": [", f);
		for (size_t i = 0; i < fo->nobj; i++) {
			const struct scan_object *o = &fo->obj[i];

			fputs(i ? ",\n      " : "\n      ", f);
			fputs("{\"path\": ", f);
			js(f, o->path);
			fputs(", \"real_path\": ", f);
			js(f, o->real);
			fputs(", \"names\": ", f);
			json_strv(f, &o->names);
			fputs(", \"needed_by\": ", f);
			js(f, o->loader >= 0 ? fo->obj[o->loader].path : NULL);
			fputs(", \"rule\": ", f);
			js(f, o->rule);
			fputs(", \"rpath\": ", f);
			js(f, o->elf.rpath);
			fputs(", \"runpath\": ", f);
			js(f, o->elf.runpath);
			fputc('}', f);
		}
		fputs("],\n    \"not_found\": [", f);
		{
			int n = 0;

			for (size_t i = 0; i < fo->nneeds; i++) {
				const struct scan_need *nd = &fo->needs[i];

				if (nd->found >= 0)
					continue;
				fputs(n++ ? ", " : "", f);
				fputs("{\"name\": ", f);
				js(f, nd->name);
				fputs(", \"needed_by\": ", f);
				js(f, fo->obj[nd->object].path);
				fputs(", \"error\": ", f);
				js(f, nd->r ? nd->r->error : NULL);
				fputc('}', f);
			}
		}
		fputs("],\n    \"imports\": ", f);
		json_strv(f, &fo->imports);
		fputs(",\n    \"resolutions\": [", f);
		for (size_t i = 0; i < fo->nres; i++) {
			fputs(i ? ",\n      " : "\n      ", f);
			json_resolution(f, fo->res[i], "      ");
		}
		fputs("]}", f);
	} else {
		fputs("null", f);
	}
	fputs("\n}\n", f);
}
