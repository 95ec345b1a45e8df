/*
 * spy_modules_find() and spy_symtab_name(), checked against what we did not
 * write: the loader's dladdr, for addresses in libc, in this program, in a
 * library opened after the map was first read, and in no object at all.
 */
#include "unit.h"

#include <check.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "symtab.h"

int unit_modules_marker(void);

__attribute__((noinline, visibility("default"))) int
unit_modules_marker(void)
{
	return 42;
}

/* The map and dladdr name the same object and base for ADDR. */
static void
same_as_dladdr(void *addr)
{
	struct spy_module m;
	Dl_info di;

	ck_assert_int_eq(spy_modules_find(&addr, 1, &m), 0);
	ck_assert_int_ne(dladdr(addr, &di), 0);
	ck_assert_ptr_nonnull(m.name);
	ck_assert_str_eq(m.name, di.dli_fname);
	ck_assert_uint_eq(m.base, (uintptr_t)di.dli_fbase);
}

START_TEST(test_libc_and_program)
{
	void *addrs[2] = { (void *)&printf, (void *)&unit_modules_marker };

	same_as_dladdr(addrs[0]);
	same_as_dladdr(addrs[1]);
	/* Inside a function, not only at its start. */
	same_as_dladdr((char *)(void *)&qsort + 1);
}
END_TEST

START_TEST(test_nowhere)
{
	void *addrs[2] = { (void *)(uintptr_t)0x10, (void *)(uintptr_t)~(uintptr_t)0 };
	struct spy_module m[2];

	ck_assert_int_eq(spy_modules_find(addrs, 2, m), 0);
	ck_assert_ptr_null(m[0].name);
	ck_assert_ptr_null(m[1].name);
}
END_TEST

/* A library loaded after the map was read: the loader's counts changed, so the map is read again. */
START_TEST(test_loaded_later)
{
	void *first = (void *)&printf, *h, *sym;
	struct spy_module m;

	ck_assert_int_eq(spy_modules_find(&first, 1, &m), 0);
	h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	ck_assert_ptr_nonnull(h);
	sym = dlsym(h, "cbrt");
	ck_assert_ptr_nonnull(sym);
	same_as_dladdr(sym);
}
END_TEST

/*
 * A stripped library's exported function: .dynsym names it as dladdr does.
 * gnu_get_libc_version: no sanitizer intercepts it and it has no alias.
 */
START_TEST(test_dynsym_names_like_dladdr)
{
	void *addr = (char *)(void *)&gnu_get_libc_version + 1;
	struct spy_module m;
	Dl_info di;
	char name[128];

	ck_assert_int_eq(spy_modules_find(&addr, 1, &m), 0);
	ck_assert_int_ne(dladdr(addr, &di), 0);
	ck_assert_ptr_nonnull(di.dli_sname);
	ck_assert_int_eq(spy_symtab_name(m.name, (uint64_t)((uintptr_t)addr - m.base), name, sizeof(name)), 1);
	ck_assert_str_eq(name, di.dli_sname);
}
END_TEST

START_TEST(test_no_table)
{
	char name[64];

	ck_assert_int_eq(spy_symtab_name("/nonexistent/libnothing.so", 16, name, sizeof(name)), -1);
	ck_assert_int_eq(spy_symtab_name("/proc/self/status", 16, name, sizeof(name)), -1);
}
END_TEST

UNIT_SUITE(modules)
{
	Suite *s = suite_create("modules");
	TCase *tc = unit_tcase(s, "map");

	tcase_add_test(tc, test_libc_and_program);
	tcase_add_test(tc, test_nowhere);
	tcase_add_test(tc, test_loaded_later);
	tcase_add_test(tc, test_dynsym_names_like_dladdr);
	tcase_add_test(tc, test_no_table);
	return s;
}
