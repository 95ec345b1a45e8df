/*
 * spy_library_file_check(): what a CUDNNSPY_LIBRARY path is, before dlopen.
 * The files are made from a real shared object (libc, as this process maps
 * it), copied and then cut or patched.
 */
#include "unit.h"

#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfile.h"

static char dir[64];
static char why[512];

static void
make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cudnnspy-libfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		(void)0;
}

/* The path of the libc this process runs with: a shared object of this machine. */
static const char *
libc_path(void)
{
	static Dl_info di;

	ck_assert_int_ne(dladdr((void *)&printf, &di), 0);
	ck_assert_ptr_nonnull(di.dli_fname);
	return di.dli_fname;
}

static char *
slurp(const char *path, size_t *len)
{
	struct stat st;
	char *data;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	data = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(read(fd, data, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return data;
}

/* A copy of libc's first `len` bytes under `name`, after `patch` has had its way with them. */
static const char *
copy(const char *name, size_t len, void (*patch)(char *data))
{
	static char path[128];
	size_t have;
	char *data = slurp(libc_path(), &have);
	int fd;

	if (len > have)
		len = have;
	if (patch)
		patch(data);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);
	return path;
}

static void
expect_refused(const char *path, const char *phrase)
{
	why[0] = 0;
	ck_assert_int_eq(spy_library_file_check(path, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, phrase) != NULL, "%s: expected \"%s\" in \"%s\"", path, phrase, why);
}

START_TEST(test_real_library_accepted)
{
	ck_assert_int_eq(spy_library_file_check(libc_path(), why, sizeof(why)), 0);
	ck_assert_int_eq(spy_library_file_check(copy("whole.so", (size_t)-1, NULL), why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_not_regular_files)
{
	char fifo[128];

	expect_refused(dir, "is a directory, not a library");
	expect_refused("/dev/null", "is a character device");
	/* A FIFO would block the open (and the loader) forever: refused without opening it. */
	snprintf(fifo, sizeof(fifo), "%s/libcudnn.so.9", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	expect_refused(fifo, "is a FIFO, not a library");
	expect_refused("/nonexistent/libcudnn.so.9", "cannot be read: No such file or directory");
}
END_TEST

START_TEST(test_not_elf)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/text.so", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a library\n", f);
	fclose(f);
	expect_refused(path, "is not an ELF file");
	expect_refused(copy("empty.so", 0, NULL), "is not an ELF file");
	expect_refused(copy("three.so", 3, NULL), "is not an ELF file");
}
END_TEST

START_TEST(test_truncated)
{
	size_t have;
	char *data = slurp(libc_path(), &have);

	free(data);
	expect_refused(copy("header-cut.so", 20, NULL), "its ELF header is cut short");
	expect_refused(copy("header-only.so", sizeof(ElfW(Ehdr)), NULL), "its program headers end past");
	expect_refused(copy("half.so", have / 2, NULL), "is truncated");
	expect_refused(copy("all-but-one.so", have - 1, NULL), "is truncated");
}
END_TEST

static void
to_32_bit(char *data)
{
	data[EI_CLASS] = ELFCLASS32;
}

static void
other_byte_order(char *data)
{
	data[EI_DATA] = data[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
}

static void
other_machine(char *data)
{
	ElfW(Ehdr) *eh = (ElfW(Ehdr) *)data;

	eh->e_machine = eh->e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
}

static void
executable(char *data)
{
	((ElfW(Ehdr) *)data)->e_type = ET_EXEC;
}

static void
bad_phentsize(char *data)
{
	((ElfW(Ehdr) *)data)->e_phentsize = 7;
}

static void
sections_far(char *data)
{
	((ElfW(Ehdr) *)data)->e_shoff = (ElfW(Off))1 << 40;
}

START_TEST(test_wrong_kind)
{
	expect_refused(copy("32.so", (size_t)-1, to_32_bit), "is a 32-bit ELF file");
	expect_refused(copy("be.so", (size_t)-1, other_byte_order), "the other byte order");
	expect_refused(copy("arch.so", (size_t)-1, other_machine), "is built for another machine");
	expect_refused(copy("exec.so", (size_t)-1, executable), "is not a shared object (ELF type 2)");
	expect_refused(copy("phent.so", (size_t)-1, bad_phentsize), "malformed ELF file");
	expect_refused(copy("shoff.so", (size_t)-1, sections_far), "its section headers end past");
}
END_TEST

START_TEST(test_errno_kept_and_small_buffers)
{
	char tiny[8];

	errno = 1234;
	ck_assert_int_eq(spy_library_file_check("/nonexistent", tiny, sizeof(tiny)), -1);
	ck_assert_int_eq(errno, 1234);
	ck_assert_uint_lt(strlen(tiny), sizeof(tiny));
	ck_assert_int_eq(spy_library_file_check("/nonexistent", NULL, 0), -1);
	ck_assert_int_eq(spy_library_file_check(libc_path(), NULL, 0), 0);
	ck_assert_int_eq(errno, 1234);
}
END_TEST

UNIT_SUITE(libfile)
{
	Suite *s = suite_create("libfile");
	TCase *tc = unit_tcase(s, "check");

	tcase_add_checked_fixture(tc, make_dir, remove_dir);
	tcase_add_test(tc, test_real_library_accepted);
	tcase_add_test(tc, test_not_regular_files);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_wrong_kind);
	tcase_add_test(tc, test_errno_kept_and_small_buffers);
	return s;
}
