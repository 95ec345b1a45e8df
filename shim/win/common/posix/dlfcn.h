/*
 * The part of <dlfcn.h> that init.c uses: dladdr for "is this symbol the spy's own", over
 * GetModuleHandleExW (shim/win/posix.c). The real library is loaded by shim/win/resolve.c with
 * LoadLibraryExW, not through here.
 */
#ifndef SPY_WIN_DLFCN_H
#define SPY_WIN_DLFCN_H
#define RTLD_LAZY 1
#define RTLD_NOW 2
#define RTLD_NOLOAD 4
#define RTLD_LOCAL 0
#define RTLD_GLOBAL 0x100
#define RTLD_DEFAULT ((void *)0)
/* RTLD_DEFAULT: the program's own exports (the fake cuDNN looks for the fake CUDA runtime's hook so). */
void *dlsym(void *handle, const char *name);
typedef struct {
	const char *dli_fname;
	void *dli_fbase;
	const char *dli_sname;
	void *dli_saddr;
} Dl_info;
int dladdr(const void *addr, Dl_info *info);
#endif
