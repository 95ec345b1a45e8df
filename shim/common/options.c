/*
 * The option table: one row per CUDNNSPY_* variable, and the configuration
 * it fills (with the per-function flags and the quiet switch it sets). It drives parsing (config.c), `cudnnspy --help-env` and
 * docs/configuration.md (a test compares them). Data only: the command
 * links it, through the common library, without the library's core.
 */
#include "options.h"

struct spy_config spy_config;
unsigned char spy_fn_flags[_SPY_FN_COUNT];
int spy_quiet;

#define FIELD(f) &spy_config.f, sizeof(spy_config.f)

const struct spy_option spy_options[] = {
	{ "CUDNNSPY_LIBRARY", SPY_OPT_PATH, "", NULL,
	  "Absolute path of the real libcudnn.so.N, or of a directory holding one. "
	  "When set but unusable, cuDNN calls fail rather than reach another copy.",
	  FIELD(library) },
	{ "CUDNNSPY_OUTPUT", SPY_OPT_STRING, "", NULL,
	  "Where records go, in format 2 or as JSON Lines (CUDNNSPY_FORMAT): a directory (one file per process) "
	  "or a file name pattern "
	  "with %p (pid), %h (host), %r (rank), %e (program). Unset: no file, stderr only.",
	  FIELD(output) },
	{ "CUDNNSPY_TRACE", SPY_OPT_GLOBS, "", NULL,
	  "Functions whose every call is recorded, as globs separated by spaces or commas "
	  "(`*` for all, `cudnnConvolution*`). Failures are always recorded.",
	  FIELD(trace) },
	{ "CUDNNSPY_BACKTRACE", SPY_OPT_GLOBS, "", NULL,
	  "Traced functions whose records carry the call stack, as globs. Failures always carry one.",
	  FIELD(backtrace) },
	{ "CUDNNSPY_STDERR", SPY_OPT_FLAGS, "banner,failures,summary", "banner,failures,summary,probing",
	  "What the spy writes to stderr: a comma-separated list of banner, failures, "
	  "summary, probing (the lines of a framework's expected NOT_SUPPORTED probing, off by default); `all`, "
	  "or `none` to keep stderr silent.",
	  FIELD(stderr_mask) },
	{ "CUDNNSPY_FLIGHT", SPY_OPT_INT, "32", "0..256",
	  "How many of a thread's recent calls a failure record lists.",
	  FIELD(flight) },
	{ "CUDNNSPY_RATE_LIMIT", SPY_OPT_INT, "10", "1..1000000",
	  "Failure lines on stderr for one function and status before one `suppressing` line; "
	  "the records keep every failure.",
	  FIELD(rate_limit) },
	{ "CUDNNSPY_LAST_ERROR", SPY_OPT_BOOL, "on", NULL,
	  "Read cuDNN's own message (cudnnGetLastErrorString, 9.x) at each failure; the program still "
	  "gets the same text when it asks.",
	  FIELD(last_error) },
	{ "CUDNNSPY_GPU_TIME", SPY_OPT_BOOL, "off", NULL,
	  "Time the GPU work of each call that enqueues some, with CUDA events on the handle's stream, through "
	  "the CUDA runtime the process already loaded.",
	  FIELD(gpu_time) },
	{ "CUDNNSPY_SYNC", SPY_OPT_STRING, "", NULL,
	  "Synchronize the stream after each call that enqueues GPU work (1/on), or after the functions matching "
	  "these globs, so that an asynchronous fault is blamed on the call that caused it.",
	  FIELD(sync) },
	{ "CUDNNSPY_INJECT", SPY_OPT_STRING, "", NULL,
	  "Fault injection rules, comma-separated: FUNCTION=STATUS (every call), FUNCTION=STATUS@N (the Nth "
	  "call), FUNCTION=STATUS%P (P percent of calls); FUNCTION may be a glob, STATUS a name or number.",
	  FIELD(inject) },
	{ "CUDNNSPY_CRASH", SPY_OPT_BOOL, "off", NULL,
	  "On a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), write the thread's recent cuDNN calls and "
	  "the call counts to stderr and the records, then let the program die as it would have.",
	  FIELD(crash) },
	{ "CUDNNSPY_RUN_DIR", SPY_OPT_STRING, "", NULL,
	  "Set by `cudnnspy run`: an absolute directory where each process leaves an empty file saying that the spy "
	  "was loaded in it and whether it called cuDNN, so that run can say afterwards when it was not.",
	  FIELD(run_dir) },
	{ "CUDNNSPY_FORMAT", SPY_OPT_CHOICE, "auto", "auto,json,binary",
	  "How records are written: `binary` (format 2: traced calls as packed frames among JSON lines, a "
	  "fifteenth of the bytes; read with `cudnnspy dump`, `report` or `repro`) or `json` (JSON Lines, format 1). "
	  "`auto`: `binary`, unless CUDNNSPY_OUTPUT is a file name pattern ending in `.jsonl`.",
	  FIELD(format) },
	{ "CUDNNSPY_PYTHON", SPY_OPT_CHOICE, "failures", "off,failures,traced",
	  "Which records name the calling thread's innermost Python frames (file, line, function; up to 8), when it "
	  "runs Python: `failures` (and their lines on stderr), `traced` (also every traced call, and the first "
	  "call of each convolution or graph signature), `off`.",
	  FIELD(python) },
	{ NULL, 0, NULL, NULL, NULL, NULL, 0 },
};
