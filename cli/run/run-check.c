/*
 * `cudnnspy run`, after the program: never silent when the spy saw nothing.
 * Each process the spy is loaded in leaves PID.loaded in CUDNNSPY_RUN_DIR,
 * and PID.called at its first cuDNN call (shim/entry/init.c). No marker at all
 * means the spy never got in: the program is read (never run) for why.
 */
#include "run-check.h"
#include "cli-util.h"
#include "scan-int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *
cli_run_dir_make(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/cudnnspy-run.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

void
cli_run_files_free(struct cli_run_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	f->paths = NULL;
	f->n = 0;
}

/* A records marker's text: the absolute path of the file the process wrote, kept in `files`. */
static void
keep_record_path(const char *marker, struct cli_run_files *files)
{
	char text[PATH_MAX];
	int fd = open(marker, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	char **grown;

	if (fd >= 0)
		close(fd);
	if (!files || n <= 0 || text[0] != '/')
		return;
	text[n] = 0;
	if (strlen(text) != (size_t)n || !(grown = realloc(files->paths, (files->n + 1) * sizeof(*grown))))
		return;
	files->paths = grown;
	if ((files->paths[files->n] = strdup(text)))
		files->n++;
}

/* Counts the markers, keeps the record files' paths (when `files`), and removes them with the directory. */
static void
count_and_remove(const char *dir, int *loaded, int *resolving, int *called, int *records, struct cli_run_files *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	*loaded = *resolving = *called = *records = 0;
	while (d && (e = readdir(d))) {
		const char *dot = strchr(e->d_name, '.');
		char path[PATH_MAX];

		if (e->d_name[0] == '.' || !dot)
			continue;
		*loaded += strcmp(dot, ".loaded") == 0;
		*resolving += strcmp(dot, ".resolving") == 0;
		*called += strcmp(dot, ".called") == 0;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (strcmp(dot, ".records") == 0) {
			(*records)++;
			keep_record_path(path, files);
		}
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The file execvp ran: cmd itself with a slash, else the first in PATH. */
static char *
program_path(const char *cmd)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return scan_xstrdup(cmd);
	while (path && *path) {
		size_t len = strcspn(path, ":");
		char *f = scan_xasprintf("%.*s/%s", (int)len, len ? path : ".", cmd);

		if (access(f, X_OK) == 0)
			return f;
		free(f);
		path += len;
		if (*path)
			path++;
	}
	return NULL;
}

/* A DT_RPATH entry of the program holding libcudnn.so.N: the loader takes it before LD_LIBRARY_PATH. */
static char *
rpath_copy(const char *prog, const struct scan_elf *e, int major)
{
	char origin[PATH_MAX], *real = realpath(prog, NULL), *slash;
	const char *p = e->rpath;

	if (!p || e->runpath || !real)
		goto none;
	snprintf(origin, sizeof(origin), "%s", real);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	while (*p) {
		size_t len = strcspn(p, ":");
		char *dir = scan_xasprintf("%.*s", (int)len, p), *file;

		if (strncmp(dir, "$ORIGIN", 7) == 0 || strncmp(dir, "${ORIGIN}", 9) == 0) {
			char *x = scan_xasprintf("%s%s", origin, dir + (dir[1] == '{' ? 9 : 7));

			free(dir);
			dir = x;
		}
		file = scan_xasprintf("%s/libcudnn.so.%d", dir, major);
		if (dir[0] == '/' && access(file, F_OK) == 0) {
			free(dir);
			free(real);
			return file;
		}
		free(dir);
		free(file);
		p += len;
		if (*p)
			p++;
	}
none:
	free(real);
	return NULL;
}

static void
why_not_loaded(const char *cmd, int dropin)
{
	char *prog = program_path(cmd), *copy = NULL;
	struct scan_elf e;
	struct stat st;
	const char *how = dropin ? "the drop-in" : "the preloaded spy";

	if (!prog || stat(prog, &st) != 0) {
		complain("%s was not loaded in %s or any process it started", how, cmd);
		free(prog);
		return;
	}
	memset(&e, 0, sizeof(e));
	scan_elf_read(prog, &e);
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		complain("%s was never loaded: %s is set-%s-ID, and the loader ignores LD_PRELOAD and LD_LIBRARY_PATH "
			 "for such programs", how, prog, st.st_mode & S_ISUID ? "user" : "group");
	} else if (e.status == SCAN_ELF_OK && !e.has_dynamic) {
		complain("%s was never loaded: %s is statically linked, so no dynamic loader runs in it and neither "
			 "LD_PRELOAD nor the drop-in can reach it", how, prog);
	} else if (e.status == SCAN_ELF_OK && dropin && (copy = rpath_copy(prog, &e, dropin))) {
		complain("the drop-in was never loaded: the DT_RPATH of %s finds %s before LD_LIBRARY_PATH; run without "
			 "--drop-in (the preload works there), or remove the RPATH (patchelf --remove-rpath)", prog, copy);
	} else if (dropin) {
		complain("the drop-in libcudnn.so.%d was not loaded in %s or any process it started: it does not use "
			 "cuDNN, or finds it another way (a library's DT_RPATH, dlopen of a path); the preload (run "
			 "without --drop-in) sees those too", dropin, cmd);
	} else {
		complain("the preloaded spy was not loaded in %s or any process it started: something cleared "
			 "LD_PRELOAD before the process that uses cuDNN, or no process uses the dynamic loader", cmd);
	}
	free(copy);
	scan_elf_free(&e);
	free(prog);
}

void
cli_run_explain_discard(const char *dir)
{
	int loaded, resolving, called, records;

	count_and_remove(dir, &loaded, &resolving, &called, &records, NULL);
}

int
cli_run_explain(const char *dir, const char *cmd, int dropin, int signal, struct cli_run_files *files)
{
	int loaded, resolving, called, records;

	count_and_remove(dir, &loaded, &resolving, &called, &records, files);
	/* A process that began its first cuDNN call and never came back from cuDNN's answer. */
	if (resolving > called) {
		const char *name = signal ? sigabbrev_np(signal) : NULL;

		complain("%s ended%s%s inside its first cuDNN call, while cuDNN loaded: a dispatcher that cannot load "
			 "its sub-libraries aborts so (\"Invalid handle. Cannot load symbol ...\"); cudnnspy scan --for %s "
			 "shows what it loads", cmd, name ? " by SIG" : "", name ? name : "", cmd);
		return called ? records : -1;
	}
	if (!loaded)
		why_not_loaded(cmd, dropin);
	else if (!called)
		complain("the spy was loaded in %d process%s of %s, and none called cuDNN", loaded,
			 loaded == 1 ? "" : "es", cmd);
	/* No call, no record: already said above, nothing more to say of files. */
	return called ? records : -1;
}
