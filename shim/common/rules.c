/*
 * The conflict rules' one-line fixes, written once for the library's
 * run-time findings and the command's report (docs/conflicts.md has each
 * rule's cause and the longer fix). No I/O: the command links it too.
 */
#include "rules.h"

#include <string.h>

static const struct spy_rule rules[] = {
	/* Found on disk by `cudnnspy scan`. */
	{ "multiple-copies", "keep the copy your framework was built for and take the others off the search path" },
	{ "mixed-majors", "give each framework its own environment, so that each process sees one cuDNN major" },
	{ "sublib-version-mismatch", "reinstall the copy whole and take stray sub-libraries off LD_LIBRARY_PATH" },
	{ "incomplete-copy", "reinstall the copy (for a missing link alone: ldconfig -n DIR)" },
	{ "no-sublibraries", "install the whole set of libraries, links included, or point the program at a complete copy" },
	{ "no-dispatcher", "remove the stray sub-libraries or take their directory off LD_LIBRARY_PATH" },
	{ "stale-files", "remove the old files or move them out of the directory" },
	{ "dangling-link", "point the link at the file that is there, or remove it" },
	{ "unreadable", "make the files readable by the user who runs the program (chmod a+r)" },
	{ "not-a-library", "replace the file with the real library, or remove it" },
	{ "soname-mismatch", "install the major the program needs and undo the renaming" },
	{ "version-unknown", "check the copy's dependencies with ldd; a crash or hang means a damaged file: reinstall it" },
	{ "missing-library", "install the cuDNN major the program was built for, or add its directory to LD_LIBRARY_PATH" },
	{ "toolkits-differ", "point CUDA_HOME (and CUDA_PATH) at the toolkit /usr/local/cuda names, or the other way round" },
	{ "missing-symbols", "run the program with the cuDNN version it was built against, or rebuild it against this copy" },
	{ "windows-copies-conflict", "keep one copy: remove the others' cudnn*64_N.dll (the archive copied into CUDA's "
				     "bin included) or take their directories off PATH; in Python, os.add_dll_directory() "
				     "the one you keep before importing torch" },
	{ "windows-mixed-load", "make the first directory the search reaches hold the whole set of one version: "
				"reorder PATH, or remove the stray DLLs; cudnnspy scan --windows --python shows the result" },
	/* Said by the library while the program runs. */
	{ "runtime-multiple-copies", "make every part of the program find the same copy (one LD_LIBRARY_PATH, or "
				     "remove one copy); cudnnspy run --library DIR tries one copy for the whole program" },
	{ "runtime-mixed-majors", "one cuDNN major per process: one environment per framework" },
	{ "sublib-load-failed", "run cudnnspy scan --for on the program, then reinstall the copy whole" },
	{ "version-check-failed", "reinstall the copy whole: its sub-libraries are not its own" },
	{ "cuda-major-mismatch", "install the cuDNN build for the CUDA major the process runs" },
	{ "driver-older-than-runtime", "update the driver, or use a CUDA runtime no newer than the driver supports" },
	{ "gpu-too-new", "install a newer cuDNN that supports this GPU" },
	{ "library-not-requested", "to give the program only the copy CUDNNSPY_LIBRARY names, run it through the "
				   "drop-in: cudnnspy run --library PATH" },
	{ "dropin-bypassed", "the program opens that copy by path itself: point it at the drop-in's copy, or use the "
			     "preload, which watches every copy" },
	{ "fork-inside-cudnn", "fork before other threads use cuDNN, or start children with spawn" },
	{ "algo-not-fastest", "use the first search result with status SUCCESS, unless the choice is on purpose" },
	{ "workspace-too-small", "allocate the workspace the search or the size query gives for the algorithm used" },
	{ "untuned-graph", "turn the framework's tuning on: torch.backends.cudnn.benchmark = True (PyTorch), "
			   "TF_CUDNN_USE_AUTOTUNE=1 (TensorFlow), --xla_gpu_autotune_level=4 in XLA_FLAGS (JAX)" },
	{ "replanning", "keep each shape's plan (a plan cache), pad or bucket dynamic shapes, or raise the framework's "
			"plan cache size" },
	{ "fallback-engine", "make the graph one the fast engines support: the data types, layouts (channels-last), "
			     "alignment and shapes cuDNN's support matrix lists, or a newer cuDNN for this GPU" },
	{ "nondeterministic-engine", "ask the framework for deterministic algorithms "
				     "(torch.use_deterministic_algorithms(True), TF_DETERMINISTIC_OPS=1, XLA's "
				     "--xla_gpu_deterministic_ops=true), or exclude engines with that note "
				     "(cudnn-frontend's deselect_numeric_notes)" },
	{ "engine-changed", "pin the cuDNN version and the framework's tuning across ranks and runs, or use "
			    "deterministic algorithms where the choice matters" },
	{ "algo-changed", "search once per problem and keep the choice (torch.backends.cudnn.benchmark does)" },
};

/*
 * The same rules as `cudnnspy scan --windows` says them: DLLs that Windows
 * finds by its search, where the table's fixes name the Linux loader. Ids
 * not here take the table's fix. Written as .id = so that each id is in
 * the table above once (tests/abi/check-rules-doc.py reads both).
 */
static const struct spy_rule windows_rules[] = {
	{ .id = "multiple-copies", .fix = "keep one copy per major: remove the other directories' cudnn*64_N.dll or take them off PATH" },
	{ .id = "mixed-majors", .fix = "keep one major per directory: move the other major's cudnn*64_N.dll into a directory of their own" },
	{ .id = "sublib-version-mismatch", .fix = "replace the copy's DLLs with the whole bin\\ of one cuDNN archive, all seven (or eight) of the same version" },
	{ .id = "incomplete-copy", .fix = "copy the missing cudnn_*64_N.dll from the same cuDNN archive into that directory" },
	{ .id = "no-sublibraries", .fix = "copy every cudnn_*64_N.dll of the same archive beside cudnn64_N.dll, or remove it" },
	{ .id = "no-dispatcher", .fix = "remove the stray cudnn_*64_N.dll, or take their directory off PATH and out of the application's directory" },
	{ .id = "unreadable", .fix = "give the user who runs the program read access to the DLLs (Properties, Security)" },
	{ .id = "version-unknown", .fix = "install the DLLs from NVIDIA's archive, whose DLLs carry a version resource" },
	{ .id = "stale-files", .fix = "remove the DLLs the copy's cudnn64_N.dll does not load, or move them out of the directory" },
};

const char *
spy_rule_fix(const char *id)
{
	for (size_t i = 0; id && i < sizeof(rules) / sizeof(rules[0]); i++)
		if (strcmp(rules[i].id, id) == 0)
			return rules[i].fix;
	return NULL;
}

const char *
spy_rule_fix_windows(const char *id)
{
	for (size_t i = 0; id && i < sizeof(windows_rules) / sizeof(windows_rules[0]); i++)
		if (strcmp(windows_rules[i].id, id) == 0)
			return windows_rules[i].fix;
	return spy_rule_fix(id);
}

const struct spy_rule *
spy_rule_table(size_t *n)
{
	*n = sizeof(rules) / sizeof(rules[0]);
	return rules;
}
