/*
 * Call stacks and modules on Windows: what core/stack.c and modules.c are on Linux. The stack is
 * RtlCaptureStackBackTrace's (the unwind tables every x64 module has, as Windows' own exception dispatch
 * reads them), without this DLL's frames. Each frame's module is the one GetModuleHandleExW says holds the
 * address, named by its full path; its function is the export at the start of the unwind entry that holds
 * the address, read from the module's export directory as the loader mapped it (the same table a reader of the DLL file would name it
 * from: no debug information, no dbghelp, which is not safe to call from any thread at any time).
 * Records keep the same fields as on Linux: module, offset from the module's base, symbol.
 */
#include <windows.h>

#include "core.h"
#include "modules.h"
#include "stack.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_MAX 64

/* Module names, kept for the life of the process (spy_module.name stays valid): a small list, filled once each. */
#define NAMES_MAX 256
static struct {
	uintptr_t base;
	char *name;
} names[NAMES_MAX];
static int nnames;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *
module_name(HMODULE m)
{
	wchar_t w[MAX_PATH];
	char u[MAX_PATH * 3];
	const char *found = NULL;
	DWORD n;

	pthread_mutex_lock(&names_lock);
	for (int i = 0; i < nnames; i++)
		if (names[i].base == (uintptr_t)m) {
			found = names[i].name;
			break;
		}
	if (!found && nnames < NAMES_MAX) {
		n = GetModuleFileNameW(m, w, MAX_PATH);
		if (n && n < MAX_PATH && WideCharToMultiByte(CP_UTF8, 0, w, -1, u, sizeof(u), NULL, NULL) &&
		    (found = strdup(u))) {
			names[nnames].base = (uintptr_t)m;
			names[nnames++].name = (char *)found;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return found;
}

int
spy_modules_find(void *const *ips, int n, struct spy_module *out)
{
	for (int i = 0; i < n; i++) {
		HMODULE m;

		out[i].base = 0;
		out[i].name = NULL;
		if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
					GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, (LPCWSTR)ips[i], &m))
			continue;
		out[i].base = (uintptr_t)m;
		out[i].name = module_name(m);
	}
	return 0;
}

/* PE files carry no GNU build-id. */
size_t
spy_module_build_id(uintptr_t base, unsigned char *out, size_t max)
{
	(void)base;
	(void)out;
	(void)max;
	return 0;
}

/* 1 when `ip` lies inside the image mapped at `base` (its SizeOfImage). */
static int
in_image(uintptr_t base, const void *ip)
{
	const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
	const IMAGE_NT_HEADERS64 *nt = (const IMAGE_NT_HEADERS64 *)(base + (uintptr_t)dos->e_lfanew);

	return (uintptr_t)ip > base && (uintptr_t)ip - base < nt->OptionalHeader.SizeOfImage;
}

__attribute__((noinline)) int
spy_stack_capture(void **ips, int max)
{
	void *raw[RAW_MAX];
	struct spy_module mods[RAW_MAX];
	uintptr_t me = (uintptr_t)spy_self_base();
	int n, out = 0;

	if (max > SPY_STACK_MAX)
		max = SPY_STACK_MAX;
	n = RtlCaptureStackBackTrace(0, RAW_MAX, raw, NULL);
	spy_modules_find(raw, n, mods);
	for (int i = 0; i < n && out < max; i++) {
		/* The walk past the thread's first frame (Wine's goes on into what is no code): the stack ends there. */
		if (!mods[i].name || !in_image(mods[i].base, raw[i]))
			break;
		if (mods[i].base == me)
			continue;
		ips[out++] = raw[i];
	}
	return out;
}

/*
 * The file the command reads a module's exports from (recbin.c records it beside the module's name): under
 * Wine, the file's Unix path, which the command on Linux opens as it is; on Windows the module's own path.
 */
const char *
spy_stack_symbol_file(const char *name, char *buf, size_t size)
{
	typedef char *(__cdecl *unix_name_fn)(const wchar_t *);
	static unix_name_fn unix_name;
	static int looked;
	wchar_t w[MAX_PATH];
	char *u;

	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		HMODULE k = GetModuleHandleW(L"kernel32.dll");

		__atomic_store_n(&unix_name, k ? (unix_name_fn)(void *)GetProcAddress(k, "wine_get_unix_file_name") : NULL,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	if (!unix_name || !MultiByteToWideChar(CP_UTF8, 0, name, -1, w, MAX_PATH) || !(u = unix_name(w)))
		return name;
	snprintf(buf, size, "%s", u);
	HeapFree(GetProcessHeap(), 0, u);
	return buf;
}

/* The export at rva `at` in the module mapped at `base`: its name, or NULL. */
static const char *
export_name(uintptr_t base, uint32_t at)
{
	const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
	const IMAGE_NT_HEADERS64 *nt;
	const IMAGE_DATA_DIRECTORY *dd;
	const IMAGE_EXPORT_DIRECTORY *ed;
	const uint32_t *fns, *nms;
	const uint16_t *ords;
	const char *best = NULL;

	if (dos->e_magic != IMAGE_DOS_SIGNATURE)
		return NULL;
	nt = (const IMAGE_NT_HEADERS64 *)(base + (uintptr_t)dos->e_lfanew);
	if (nt->Signature != IMAGE_NT_SIGNATURE || nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC ||
	    nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_EXPORT)
		return NULL;
	dd = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
	if (!dd->VirtualAddress || !dd->Size)
		return NULL;
	ed = (const IMAGE_EXPORT_DIRECTORY *)(base + dd->VirtualAddress);
	fns = (const uint32_t *)(base + ed->AddressOfFunctions);
	nms = (const uint32_t *)(base + ed->AddressOfNames);
	ords = (const uint16_t *)(base + ed->AddressOfNameOrdinals);
	for (DWORD i = 0; i < ed->NumberOfNames; i++) {
		uint32_t rva;

		if (ords[i] >= ed->NumberOfFunctions)
			continue;
		rva = fns[ords[i]];
		/* A forwarder points into the export directory: not code here. */
		if (rva >= dd->VirtualAddress && rva < dd->VirtualAddress + dd->Size)
			continue;
		if (rva == at) {
			best = (const char *)(base + nms[i]);
			break;
		}
	}
	return best;
}

/*
 * The function holding a frame is the unwind table's entry for it (.pdata, which every x64 function that
 * calls has), and its name the export at that entry's start: a frame in a function that is not exported
 * stays unnamed rather than taking the name of an export before it.
 */
static const char *
frame_name(const struct spy_module *m, const void *ip)
{
	DWORD64 base = 0;
	PRUNTIME_FUNCTION f;

	if (!m->name)
		return NULL;
	/* A return address points after the call: one byte back is inside the caller. */
	f = RtlLookupFunctionEntry((DWORD64)(uintptr_t)ip - 1, &base, NULL);
	if (!f || base != m->base)
		return NULL;
	return export_name(m->base, f->BeginAddress);
}

static const char *
base_name(const char *path)
{
	const char *b = path;

	for (const char *p = path; *p; p++)
		if (*p == '\\' || *p == '/')
			b = p + 1;
	return b;
}

void
spy_stack_json(struct spy_line *l, void *const *ips, int n)
{
	struct spy_module mods[SPY_STACK_MAX];

	if (n > SPY_STACK_MAX)
		n = SPY_STACK_MAX;
	spy_modules_find(ips, n, mods);
	spy_line_char(l, '[');
	for (int i = 0; i < n; i++) {
		int ok = mods[i].name != NULL;

		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"module\":");
		spy_line_str(l, ok ? mods[i].name : NULL);
		spy_line_lit(l, ",\"offset\":");
		spy_line_hex(l, ok ? (uintptr_t)ips[i] - mods[i].base : (uintptr_t)ips[i]);
		spy_line_lit(l, ",\"symbol\":");
		spy_line_str(l, ok ? frame_name(&mods[i], ips[i]) : NULL);
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}

void
spy_stack_text(struct spy_line *l, void *const *ips, int n)
{
	struct spy_module mods[SPY_STACK_MAX];

	if (n > SPY_STACK_MAX)
		n = SPY_STACK_MAX;
	spy_modules_find(ips, n, mods);
	for (int i = 0; i < n; i++) {
		const char *fn;

		if (i)
			spy_line_lit(l, " < ");
		if (!mods[i].name) {
			spy_line_xdigits(l, (uintptr_t)ips[i]);
			continue;
		}
		fn = frame_name(&mods[i], ips[i]);
		spy_line_plain(l, fn ? fn : "?");
		spy_line_lit(l, " (");
		spy_line_plain(l, base_name(mods[i].name));
		spy_line_char(l, '+');
		spy_line_xdigits(l, (uintptr_t)ips[i] - mods[i].base);
		spy_line_char(l, ')');
	}
}
