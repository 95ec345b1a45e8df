/*
 * The loaded-module audit on Windows: what watch/audit.c is on Linux, reduced to what a Windows process
 * shows. Every loaded cudnn*64_*.dll, cudart64_*.dll, nvcuda.dll and cublas*64_*.dll (EnumProcessModules)
 * becomes a "library" record with its full path, so that the records say which directory each came from;
 * the one that answers calls is marked with its copy. Findings are said on stderr and recorded as on Linux.
 * Left out, with why: the conflict rules of docs/conflicts.md read ELF facts (SONAME, build-id, the
 * loader's scopes) that PE files do not have (cudnnspy scan --windows checks a Windows tree's layout
 * instead), and the load attempts come from dlopen interposition, which a drop-in DLL does not do.
 */
#include <windows.h>
#include <psapi.h>

#include "core.h"
#include "audit.h"
#include "rules.h"
#include "sink.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifndef SPY_DOCDIR
#define SPY_DOCDIR "docs"
#endif

#define MAX_SEEN 64
static HMODULE seen[MAX_SEEN];
static int nseen;
static unsigned findings[64];
static int nfindings;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The kind of a module by its file name (lower case), as audit.c's kinds; NULL for none of them. */
static const char *
kind_of(const char *b)
{
	if (strncmp(b, "cudnn64_", 8) == 0)
		return "cudnn";
	if (strncmp(b, "cudnn_", 6) == 0 && strstr(b, "64_"))
		return "cudnn-sublib";
	if (strncmp(b, "cudart64_", 9) == 0)
		return "cudart";
	if (strcmp(b, "nvcuda.dll") == 0)
		return "cuda";
	if (strncmp(b, "cublas", 6) == 0 && strstr(b, "64_"))
		return "cublas";
	if (strncmp(b, "nvrtc64_", 8) == 0)
		return "nvrtc";
	return NULL;
}

static void
library_record(struct spy_thread *th, HMODULE m, const char *kind, const char *path)
{
	struct spy_buf *b = spy_thread_buf(th);
	struct spy_line *l;
	struct stat st;
	int answers = spy_lib.handle && (HMODULE)spy_lib.handle == m;
	int have = stat(path, &st) == 0;

	if (!b)
		return;
	l = &b->line;
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"library\",\"kind\":");
	spy_line_name(l, kind);
	spy_line_lit(l, ",\"path\":");
	spy_line_str(l, path);
	spy_line_lit(l, ",\"real_path\":");
	spy_line_str(l, path);
	spy_line_lit(l, ",\"soname\":null,\"build_id\":null,\"size\":");
	spy_line_i64(l, have ? (long long)st.st_size : -1);
	spy_line_lit(l, ",\"mtime\":");
	spy_line_i64(l, have ? (long long)st.st_mtime : -1);
	spy_line_lit(l, ",\"version\":");
	if (answers && spy_lib.version)
		spy_line_i64(l, (long long)spy_lib.version);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"version_check\":null,\"answers\":");
	spy_line_raw(l, answers ? "true" : "false");
	spy_line_lit(l, ",\"copy\":");
	if (answers) {
		spy_line_i64(l, 0);
		spy_line_lit(l, ",\"how\":");
		spy_line_str(l, spy_lib.how);
		spy_line_lit(l, ",\"loaded_by\":null");
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_char(l, '}');
	spy_sink_commit(th, l, 0);
}

/*
 * Bumped by every look: Windows tells no load or unload apart from the module list, and a DLL loaded again at
 * the address of one unloaded has the same handle, so a failure's stack modules are looked up every time.
 */
static unsigned looks;

unsigned
spy_audit_gen(void)
{
	return __atomic_load_n(&looks, __ATOMIC_ACQUIRE);
}

void
spy_audit(void)
{
	HMODULE mods[1024];
	DWORD need = 0;
	struct spy_thread *th = NULL;

	__atomic_add_fetch(&looks, 1, __ATOMIC_ACQ_REL);
	if (!EnumProcessModules(GetCurrentProcess(), mods, sizeof(mods), &need))
		return;
	pthread_mutex_lock(&lock);
	for (DWORD i = 0; i < need / sizeof(HMODULE) && i < 1024; i++) {
		wchar_t w[MAX_PATH];
		char path[MAX_PATH * 3], lower[MAX_PATH];
		const char *b, *kind;
		int known = 0;
		DWORD n;

		if (mods[i] == (HMODULE)spy_self_base())
			continue;
		for (int k = 0; k < nseen; k++)
			known |= seen[k] == mods[i];
		n = GetModuleFileNameW(mods[i], w, MAX_PATH);
		if (known || !n || n >= MAX_PATH || !WideCharToMultiByte(CP_UTF8, 0, w, -1, path, sizeof(path), NULL, NULL))
			continue;
		b = path;
		for (const char *p = path; *p; p++)
			if (*p == '\\' || *p == '/')
				b = p + 1;
		snprintf(lower, sizeof(lower), "%s", b);
		for (char *p = lower; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		/* Another build of the spy (the other major's drop-in) is no library of cuDNN's. */
		if (!(kind = kind_of(lower)) || GetProcAddress(mods[i], "cudnnspy_is_loaded"))
			continue;
		if (nseen < MAX_SEEN)
			seen[nseen++] = mods[i];
		if (!spy_sink_enabled())
			continue;
		if (!th)
			th = spy_thread_get();
		library_record(th, mods[i], kind, path);
	}
	pthread_mutex_unlock(&lock);
}

void
spy_audit_finding_json(struct spy_line *l, const char *id, const char *severity, const char *message,
		       const char *const *paths, int npaths)
{
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"finding\",\"id\":");
	spy_line_name(l, id);
	spy_line_lit(l, ",\"severity\":");
	spy_line_name(l, severity);
	spy_line_lit(l, ",\"message\":");
	spy_line_str(l, message);
	spy_line_lit(l, ",\"fix\":");
	spy_line_str(l, spy_rule_fix(id));
	spy_line_lit(l, ",\"paths\":[");
	for (int i = 0; i < npaths; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_line_str(l, paths[i]);
	}
	spy_line_lit(l, "]}");
}

/* Said once per id and message, on stderr and in the records, as audit.c's findings. */
void
spy_audit_finding(const char *id, const char *severity, const char *message, const char *path)
{
	unsigned h = 2166136261u;
	struct spy_thread *th;
	struct spy_buf *b;
	int seen_before = 0;

	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (const char *p = message; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nfindings; i++)
		seen_before |= findings[i] == h;
	if (!seen_before && nfindings < 64)
		findings[nfindings++] = h;
	pthread_mutex_unlock(&lock);
	if (seen_before)
		return;
	if (spy_config.stderr_mask & SPY_STDERR_FAILURES)
		spy_log("%s %s: %s (%s/conflicts.md#%s)", severity, id, message, SPY_DOCDIR, id);
	if (!spy_sink_enabled())
		return;
	th = spy_thread_get();
	b = spy_thread_buf(th);
	if (!b)
		return;
	spy_audit_finding_json(&b->line, id, severity, message, &path, path ? 1 : 0);
	spy_sink_commit(th, &b->line, 1);
}

/* No dlopen interposition on Windows: no load attempts to report. */
void
spy_audit_load(const char *name, int flags, const char *caller, enum spy_load_result result, const char *error)
{
	(void)name;
	(void)flags;
	(void)caller;
	(void)result;
	(void)error;
}

void
spy_audit_unmapped(void *base)
{
	(void)base;
}

/* The Linux explanations (device nodes, CUDA_VISIBLE_DEVICES, the driver library) are not read here. */
size_t
spy_audit_why_not_initialized(char *out, size_t size, unsigned copy)
{
	(void)copy;
	if (size)
		out[0] = 0;
	return 0;
}

void
spy_audit_fork_child(void)
{
}
