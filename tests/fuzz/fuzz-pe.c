/*
 * Fuzz target: scan_pe_read (cli/scan/scan-pe.c), the PE reader of
 * `cudnnspy scan --windows`, which takes DLLs from other machines' disks.
 * The bytes are the file (written to a memfd, since the reader reads
 * with pread). Whatever they hold, the reader ends with a status and,
 * when it is not OK, a reason; what it keeps stays within its limits.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scan-int.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-pe", MFD_CLOEXEC);
	char path[64];
	struct scan_pe pe;

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	scan_pe_read(path, &pe);
	FUZZ_ASSERT(pe.status == SCAN_PE_OK || pe.why[0]);
	FUZZ_ASSERT(pe.exports.n <= pe.nexports);
	FUZZ_ASSERT(pe.nsections <= 96 || pe.status != SCAN_PE_OK);
	FUZZ_ASSERT(!pe.has_version || pe.status == SCAN_PE_OK);
	scan_pe_free(&pe);
	close(fd);
	return 0;
}
