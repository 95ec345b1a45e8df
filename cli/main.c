/*
 * cudnnspy: runs a command with the spy in place, so that nobody has to
 * spell LD_PRELOAD, LD_LIBRARY_PATH and the CUDNNSPY_* variables by hand.
 * It only prepares the environment and waits: everything else happens in
 * the library. Nothing here writes to stdout except --help, --version and
 * --help-env, so that a command's own output stays untouched; `report`
 * (report.c) is the other command, and its report goes to stdout.
 */
#include "options.h"
#include "cli-options.h"
#include "dump.h"
#include "report.h"
#include "repro.h"
#include "run-after.h"
#include "run-check.h"
#include "run-library.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli-util.h"

#ifndef CUDNNSPY_VERSION
#error "CUDNNSPY_VERSION and CUDNNSPY_LIBDIR_FROM_BINDIR come from the build"
#endif

/* Exit status for our own failures: usage, a missing library. */
#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: cudnnspy run [OPTIONS] -- COMMAND [ARGS...]\n"
	"       cudnnspy report [--json] [--chrome FILE] [--top N] [--full] [--quiet] FILE_OR_DIR...\n"
	"       cudnnspy report --compare [--json] RUN_A RUN_B\n"
	"       cudnnspy repro [--call N | --failure N | --signature TEXT] [-o FILE] [--fill MODE] [--time]\n"
	"                      [--cudnn DIR] [--list] RECORDS\n"
	"       cudnnspy dump [--quiet] FILE_OR_DIR...\n"
	"       cudnnspy scan [--json] [--for PROGRAM_OR_LIBRARY [--user NAME]] [--root DIR]... [--no-probe]\n"
	"       cudnnspy scan --windows [C:=]DIR... [--program EXE | --python PYTHON_EXE] [--path LIST]\n"
	"                     [--cwd DIR] [--dll-dir DIR]... [--json]\n"
	"       cudnnspy help [run|report|repro|dump|scan|env]\n"
	"       cudnnspy --help | --version | --help-env\n"
	"\n"
	"Runs COMMAND with the cuDNN spy loaded and exits with COMMAND's exit status.\n"
	"report reads the records the spy wrote (see cudnnspy help report).\n"
	"dump prints the records of either format as JSON Lines (see cudnnspy help dump).\n"
	"repro writes a standalone C program that replays one recorded call (see cudnnspy help repro).\n"
	"scan lists the cuDNN copies on this machine and their conflicts (see cudnnspy help scan);\n"
	"with --windows, those of a Windows tree and which copy Windows would load.\n"
	"\n"
	"run options:\n";

/* The options, from the table (cli-options.def). */
static const char usage_tail[] =
	"\n"
	"Relative paths given to --output and --library are made absolute.\n";


static int
print_usage(void)
{
	fputs(usage_text, stdout);
	cli_print_options(stdout, "run", 24);
	putchar('\n');
	cli_print_options(stdout, "cudnnspy", 24);
	fputs(usage_tail, stdout);
	return 0;
}

static int
usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cudnnspy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ncudnnspy: usage: cudnnspy run [OPTIONS] -- COMMAND [ARGS...]"
	      " (see cudnnspy --help)\n", stderr);
	return EXIT_USAGE;
}

/* Prints text indented, with lines broken between words before column 78. */
static void
print_wrapped(const char *text, int indent)
{
	const int width = 78;
	int col = 0;
	const char *p = text;

	while (*p) {
		size_t len;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		len = strcspn(p, " ");
		if (col > indent && col + 1 + (int)len > width) {
			putchar('\n');
			col = 0;
		}
		if (col == 0)
			col = printf("%*s", indent, "");
		else
			col += printf(" ");
		col += printf("%.*s", (int)len, p);
		p += len;
	}
	if (col)
		putchar('\n');
}

static int
help_env(void)
{
	printf("Variables the cudnnspy library reads when it is loaded\n"
	       "(cudnnspy run sets some of them from its options):\n");
	for (const struct spy_option *o = spy_options; o->name; o++) {
		printf("\n%s\n", o->name);
		/* An empty list of globs selects nothing: "none"; any other empty value is not set at all. */
		printf("    default: %s\n", o->def && o->def[0] ? o->def : o->type == SPY_OPT_GLOBS ? "none" : "unset");
		/* The accepted words, or a range: the table's own spelling of either. */
		if (o->values && o->values[0])
			printf("    values: %s\n", o->values);
		if (o->help)
			print_wrapped(o->help, 4);
	}
	return 0;
}

/*
 * --name VALUE or --name=VALUE. Returns 0 when argv[*i] is another
 * option, 1 when it is this one (*value NULL when the value is missing).
 */
static int
option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	size_t len = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, len) != 0)
		return 0;
	if (a[len] == '=') {
		*value = a + len + 1;
		return 1;
	}
	if (a[len] != '\0')
		return 0;
	/* "--output -- cmd" is a forgotten value, not an output named "--". */
	if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0) {
		*value = NULL;
		return 1;
	}
	*value = argv[++*i];
	return 1;
}

/*
 * The library refuses relative paths, and the command may chdir: anchor
 * them to where the user typed them. Only "./" prefixes are cleaned up;
 * the rest may not exist yet or be a pattern, so it is left as written.
 */
static char *
absolute(const char *path)
{
	char *cwd, *out;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		while (*path == '/')
			path++;
	}
	if (path[0] == '\0' || strcmp(path, ".") == 0)
		return cwd;
	if (asprintf(&out, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path) < 0)
		out = NULL;
	free(cwd);
	return out;
}

/* The directory this executable is in, from /proc/self/exe. */
static char *
exe_dir(void)
{
	size_t size = 256;
	char *buf = NULL;

	for (;;) {
		char *bigger = realloc(buf, size);
		ssize_t n;

		if (!bigger)
			goto fail;
		buf = bigger;
		n = readlink("/proc/self/exe", buf, size);
		if (n < 0)
			goto fail;
		if ((size_t)n < size) {
			char *slash;

			buf[n] = '\0';
			slash = strrchr(buf, '/');
			if (!slash)
				goto fail;
			*(slash == buf ? slash + 1 : slash) = '\0';
			return buf;
		}
		if (size > 1 << 20)
			goto fail;
		size *= 2;
	}
fail:
	free(buf);
	return NULL;
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Finds FILE in the build tree or the installed layout around this
 * executable. Returns the canonical directory that holds it, or NULL after
 * saying what was looked for.
 */
static char *
find_dir(const char *build_sub, const char *install_sub, const char *file)
{
	char *dir = exe_dir();
	char *cand[2] = { NULL, NULL };
	char *found = NULL;
	const char *base;
	int n = 0;

	if (!dir) {
		complain("cannot tell where this program is (/proc/self/exe): %s", strerror(errno));
		return NULL;
	}
	/* Build tree: <builddir>/cli/cudnnspy; elsewhere ../shim is someone else's. */
	base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	if (strcmp(base, "cli") == 0 &&
	    asprintf(&cand[n], "%s/../shim%s%s", dir, build_sub[0] ? "/" : "", build_sub) >= 0)
		n++;
	/* Installed: <prefix>/<bindir>/cudnnspy next to <prefix>/<libdir>. */
	if (CUDNNSPY_LIBDIR_FROM_BINDIR[0] == '/') {
		if (asprintf(&cand[n], "%s%s%s", CUDNNSPY_LIBDIR_FROM_BINDIR,
			     install_sub[0] ? "/" : "", install_sub) >= 0)
			n++;
	} else if (asprintf(&cand[n], "%s/%s%s%s", dir, CUDNNSPY_LIBDIR_FROM_BINDIR,
			    install_sub[0] ? "/" : "", install_sub) >= 0) {
		n++;
	}
	for (int i = 0; i < n && !found; i++) {
		char *path;

		if (asprintf(&path, "%s/%s", cand[i], file) < 0)
			continue;
		if (is_file(path))
			found = realpath(cand[i], NULL);
		free(path);
	}
	if (!found) {
		if (n == 0)
			complain("cannot find %s: out of memory", file);
		else if (n == 1)
			complain("cannot find %s: looked for %s/%s", file, cand[0], file);
		else
			complain("cannot find %s: looked for %s/%s and %s/%s", file,
			    cand[0], file, cand[1], file);
	}
	for (int i = 0; i < n; i++)
		free(cand[i]);
	free(dir);
	return found;
}

/* NAME=first:previous, or NAME=first when there was nothing before. */
static int
prepend_env(const char *name, const char *first)
{
	const char *prev = getenv(name);
	char *value;
	int rc;

	/* An empty entry would mean the current directory to the loader. */
	if (!prev || !prev[0])
		return setenv(name, first, 1);
	if (asprintf(&value, "%s:%s", first, prev) < 0)
		return -1;
	rc = setenv(name, value, 1);
	free(value);
	return rc;
}

/*
 * Runs the command and returns what a shell would: its exit status,
 * 128 + the signal that killed it, 127 when it is not found, 126 when it
 * cannot be executed. *ran says whether the command started at all.
 */
static int
run_command(char **cmd, int *ran)
{
	struct sigaction ign, old_int, old_quit;
	int pipefd[2];
	int exec_errno = 0, status = 0, rc;
	ssize_t n;
	pid_t pid;

	*ran = 0;
	/* Tells the parent why exec failed; closed by a successful exec. */
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		complain("pipe: %s", strerror(errno));
		return EXIT_USAGE;
	}
	/*
	 * Ignored before the fork, so that a ^C cannot slip in between: the
	 * terminal sends it to the command too, and the command decides.
	 */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		complain("fork: %s", strerror(errno));
		rc = EXIT_USAGE;
		close(pipefd[0]);
		close(pipefd[1]);
		goto out;
	}
	if (pid == 0) {
		/* The command gets the dispositions we were given, like from a shell. */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(pipefd[0]);
		execvp(cmd[0], cmd);
		exec_errno = errno;
		if (write(pipefd[1], &exec_errno, sizeof(exec_errno)) < 0)
			(void)0;
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			complain("waitpid: %s", strerror(errno));
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (n == (ssize_t)sizeof(exec_errno)) {
		if (exec_errno == ENOENT && !strchr(cmd[0], '/'))
			complain("%s: command not found", cmd[0]);
		else
			complain("%s: %s", cmd[0], strerror(exec_errno));
		rc = exec_errno == ENOENT ? 127 : 126;
		goto out;
	}
	*ran = 1;
	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = 1;
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return rc;
}

/* Sets NAME to an absolute form of VALUE; 0 on success. */
static int
set_absolute(const char *name, const char *option, const char *value)
{
	char *abs;
	int rc;

	if (!value[0]) {
		usage_error("%s needs a non-empty value", option);
		return -1;
	}
	abs = absolute(value);
	if (!abs) {
		complain("cannot make %s absolute: %s", value, strerror(errno));
		return -1;
	}
	rc = setenv(name, abs, 1);
	if (rc != 0)
		complain("cannot set %s: %s", name, strerror(errno));
	free(abs);
	return rc;
}

/*
 * Once, at the end, and only what is true: a process writes its own file's
 * name in its summary line, so one file needs no word more.
 */
static void
say_where_records_are(int files)
{
	const char *out = getenv("CUDNNSPY_OUTPUT");

	if (!out)
		return;
	if (files == 0)
		complain("no record file was written (see the lines above)");
	else if (files > 1)
		complain("records of %d processes in %s", files, out);
}

/* --output DIR: a name without a % pattern that does not exist yet is a directory to make. */
static int
make_output_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (strchr(dir, '%') || lstat(dir, &st) == 0 || errno != ENOENT)
		return 0;
	if (strlen(dir) >= sizeof(path)) {
		complain("--output %s: too long", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s", dir);
	/* Each missing parent too, as mkdir -p does. */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			complain("--output %s: cannot create %s: %s", dir, path, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		complain("--output %s: cannot create it: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * --library: checked before anything runs, then given to the spy. Under the
 * preload the program's own copy would still load beside it; only the
 * drop-in, standing where the program finds libcudnn.so.N, gives the
 * program that copy alone, so it is the mode unless --drop-in chose one.
 */
static int
use_library(const char *library, int *dropin)
{
	char file[PATH_MAX + 32];
	char *abs;
	int major, rc;

	if (!library[0]) {
		usage_error("--library needs a non-empty value");
		return -1;
	}
	abs = absolute(library);
	if (!abs) {
		complain("cannot make %s absolute: %s", library, strerror(errno));
		return -1;
	}
	rc = cli_check_library(abs, file, sizeof(file), &major);
	if (rc == 0 && !*dropin && major != 8 && major != 9) {
		complain("--library %s: its name says no cuDNN major; give --drop-in=9 or --drop-in=8 for it", abs);
		rc = -1;
	}
	if (rc == 0 && !*dropin) {
		*dropin = major;
		complain("--library: using the drop-in libcudnn.so.%d, so that the program gets only %s", major, file);
	}
	if (rc == 0 && setenv("CUDNNSPY_LIBRARY", abs, 1) != 0) {
		complain("cannot set CUDNNSPY_LIBRARY: %s", strerror(errno));
		rc = -1;
	}
	free(abs);
	return rc;
}

/* CUDNNSPY_STDERR's row of the option table: the library would only warn and keep its default. */
static const struct spy_option *
stderr_option(void)
{
	for (const struct spy_option *o = spy_options; o->name; o++)
		if (o->target == &spy_config.stderr_mask)
			return o;
	return NULL;
}

static int
stderr_words(const char *list)
{
	const struct spy_option *o = stderr_option();

	return !o || spy_option_set(o, list) == 0;
}

static const char *
stderr_expected(void)
{
	const struct spy_option *o = stderr_option();

	return o ? spy_option_expected(o) : "";
}

static int
cmd_run(int argc, char **argv)
{
	const char *output = NULL, *trace = NULL, *library = NULL, *stderr_list = NULL, *format = NULL;
	int dropin = 0, i, rc, ran, files = -1;	/* record files written, -1 when not known */
	struct cli_run_files written = { NULL, 0 };
	char *dir, *run_dir;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v;

		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			return print_usage();
		}
		if (strcmp(a, "--drop-in") == 0 || strcmp(a, "--drop-in=9") == 0) {
			dropin = 9;
			continue;
		}
		if (strcmp(a, "--drop-in=8") == 0) {
			dropin = 8;
			continue;
		}
		if (strncmp(a, "--drop-in=", 10) == 0)
			return usage_error("--drop-in takes 8 or 9, not '%s'", a + 10);
		if (option_value(argc, argv, &i, "--output", &v))
			output = v;
		else if (option_value(argc, argv, &i, "--trace", &v))
			trace = v;
		else if (option_value(argc, argv, &i, "--library", &v))
			library = v;
		else if (option_value(argc, argv, &i, "--stderr", &v))
			stderr_list = v;
		else if (option_value(argc, argv, &i, "--format", &v))
			format = v;
		else if (a[0] == '-')
			return usage_error("run: unknown option '%s'", a);
		else
			return usage_error("run: put '--' before the command ('%s')", a);
		if (!v)
			return usage_error("%s needs a value", a);
	}
	if (format && strcmp(format, "json") != 0 && strcmp(format, "binary") != 0)
		return usage_error("--format takes json or binary, not '%s'", format);
	if (stderr_list && !stderr_words(stderr_list))
		return usage_error("--stderr takes %s, not '%s'", stderr_expected(), stderr_list);
	if (i >= argc)
		return usage_error("run: no '--' and command");
	if (i + 1 >= argc)
		return usage_error("run: no command after '--'");

	if (output && set_absolute("CUDNNSPY_OUTPUT", "--output", output) != 0)
		return EXIT_USAGE;
	if (output && make_output_dir(getenv("CUDNNSPY_OUTPUT")) != 0)
		return EXIT_USAGE;
	if (library && use_library(library, &dropin) != 0)
		return EXIT_USAGE;
	if ((trace && setenv("CUDNNSPY_TRACE", trace, 1) != 0) ||
	    (stderr_list && setenv("CUDNNSPY_STDERR", stderr_list, 1) != 0) ||
	    (format && setenv("CUDNNSPY_FORMAT", format, 1) != 0)) {
		complain("cannot set the environment: %s", strerror(errno));
		return EXIT_USAGE;
	}

	if (dropin) {
		char sub[16], inst[32], file[32];

		snprintf(sub, sizeof(sub), "dropin%d", dropin);
		snprintf(inst, sizeof(inst), "cudnnspy/dropin%d", dropin);
		snprintf(file, sizeof(file), "libcudnn.so.%d", dropin);
		dir = find_dir(sub, inst, file);
		if (!dir)
			return EXIT_USAGE;
		rc = prepend_env("LD_LIBRARY_PATH", dir);
	} else {
		char *lib = NULL;

		dir = find_dir("", "", "libcudnnspy.so");
		if (!dir)
			return EXIT_USAGE;
		if (asprintf(&lib, "%s/libcudnnspy.so", dir) < 0)
			rc = -1;
		else
			rc = prepend_env("LD_PRELOAD", lib);
		free(lib);
	}
	free(dir);
	if (rc != 0) {
		complain("cannot set the environment: %s", strerror(errno));
		return EXIT_USAGE;
	}

	/* The spy's markers say afterwards whether it got in at all (run-check.c). */
	run_dir = cli_run_dir_make();
	if (run_dir && setenv("CUDNNSPY_RUN_DIR", run_dir, 1) != 0) {
		free(run_dir);
		run_dir = NULL;
	}
	rc = run_command(argv + i + 1, &ran);
	if (run_dir) {
		if (ran)
			files = cli_run_explain(run_dir, argv[i + 1], dropin, rc > 128 && rc < 128 + 65 ? rc - 128 : 0,
						&written);
		else
			cli_run_explain_discard(run_dir);
		free(run_dir);
	}
	/* The job's analysis from its records; else, where they are. */
	if (ran && files > 0 && cli_run_after(&written))
		files = -1;
	if (ran && output && files >= 0)
		say_where_records_are(files);
	cli_run_files_free(&written);
	return rc;
}

static int
help_command(int argc, char **argv)
{
	static char scan_word[] = "scan", help_word[] = "--help";
	const char *what = argc > 0 ? argv[0] : "";

	if (argc > 1)
		return usage_error("help takes one command");
	if (!what[0] || strcmp(what, "run") == 0) {
		return print_usage();
	}
	if (strcmp(what, "env") == 0)
		return help_env();
	if (strcmp(what, "repro") == 0) {
#ifdef CUDNNSPY_HAVE_REPORT
		char *sub[] = { help_word, NULL };

		return cudnnspy_repro_main(1, sub);
#else
		complain("'repro' is not available in this build: cudnnspy was built without jansson");
		return EXIT_USAGE;
#endif
	}
	if (strcmp(what, "dump") == 0) {
		char *sub[] = { help_word, NULL };

		return cudnnspy_dump_main(1, sub);
	}
	if (strcmp(what, "scan") == 0) {
		char *sub[] = { scan_word, help_word, NULL };

		return cudnnspy_scan_main(2, sub);
	}
	if (strcmp(what, "report") == 0) {
#ifdef CUDNNSPY_HAVE_REPORT
		char *sub[] = { help_word, NULL };

		return cudnnspy_report_main(1, sub);
#else
		complain("'report' is not available in this build: cudnnspy was built without jansson");
		return EXIT_USAGE;
#endif
	}
	return usage_error("help: no command '%s' (run, report, repro, dump, scan, env)", what);
}

int
main(int argc, char **argv)
{
	const char *a;

	if (argc < 2)
		return usage_error("no command given");
	a = argv[1];
	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
		return print_usage();
	}
	if (strcmp(a, "--version") == 0) {
		printf("cudnnspy %s\n", CUDNNSPY_VERSION);
		return 0;
	}
	if (strcmp(a, "--help-env") == 0)
		return help_env();
	/* `help COMMAND` says what `COMMAND --help` says: one text each. */
	if (strcmp(a, "help") == 0)
		return help_command(argc - 2, argv + 2);
	if (strcmp(a, "run") == 0)
		return cmd_run(argc - 2, argv + 2);
	if (strcmp(a, "report") == 0) {
#ifdef CUDNNSPY_HAVE_REPORT
		return cudnnspy_report_main(argc - 2, argv + 2);
#else
		complain("'report' is not available in this build: cudnnspy was built without jansson"
			 " (install libjansson-dev and reconfigure)");
		return EXIT_USAGE;
#endif
	}
	if (strcmp(a, "repro") == 0) {
#ifdef CUDNNSPY_HAVE_REPORT
		return cudnnspy_repro_main(argc - 2, argv + 2);
#else
		complain("'repro' is not available in this build: cudnnspy was built without jansson"
			 " (install libjansson-dev and reconfigure)");
		return EXIT_USAGE;
#endif
	}
	if (strcmp(a, "scan") == 0)
		return cudnnspy_scan_main(argc - 1, argv + 1);
	if (strcmp(a, "dump") == 0)
		return cudnnspy_dump_main(argc - 2, argv + 2);
	if (a[0] == '-')
		return usage_error("unknown option '%s'", a);
	return usage_error("unknown command '%s'", a);
}
