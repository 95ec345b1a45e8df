/*
 * The optional API of include/cudnnspy.h: marks in the records, a flush on
 * demand, and a way to ask whether the spy is there. Programs reach these
 * through weak references, so they are exported from every flavour (the
 * version scripts export cudnnspy_*). A mark goes through the calling
 * thread's buffer like any record, so it lands in order with that thread's
 * calls; it never allocates beyond that buffer and never resolves cuDNN.
 */
#define CUDNNSPY_BUILDING
#include "../../include/cudnnspy.h"

#include "core.h"
#include "sink.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The same cache as slowpath.c's: a system call costs more than the record. */
static long
thread_id(void)
{
	if (!spy_tls.tid)
		spy_tls.tid = (int)syscall(SYS_gettid);
	return spy_tls.tid;
}

/*
 * Copies at most CUDNNSPY_LABEL_MAX bytes, and never the first bytes of a
 * cut UTF-8 sequence: a label cut in the middle of a character would end
 * in a stray byte.
 */
static void
copy_label(char *out, const char *label)
{
	size_t n = strnlen(label, CUDNNSPY_LABEL_MAX + 1);

	if (n > CUDNNSPY_LABEL_MAX) {
		n = CUDNNSPY_LABEL_MAX;
		/*
		 * label[n] is the first byte left out: while it continues a
		 * character, leave that one out whole. A character has at most
		 * 3 continuation bytes; bytes that are no UTF-8 are cut as they are.
		 */
		for (int i = 0; i < 3 && ((unsigned char)label[n] & 0xc0) == 0x80; i++)
			n--;
	}
	memcpy(out, label, n);
	out[n] = 0;
}

SPY_EXPORT void
cudnnspy_mark(const char *label)
{
	char cut[CUDNNSPY_LABEL_MAX + 1];
	struct spy_thread *th;
	struct spy_buf *b;
	struct spy_line *l;
	int saved = errno;

	if (!spy_sink_enabled())
		goto out;
	th = spy_thread_get();
	b = th ? spy_thread_buf(th) : NULL;
	if (!b)
		goto out;	/* out of memory: like any record, this one is lost */
	copy_label(cut, label ? label : "");
	l = &b->line;
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"mark\",\"label\":");
	spy_line_str(l, cut);
	spy_line_lit(l, ",\"tid\":");
	spy_line_i64(l, thread_id());
	spy_line_lit(l, ",\"t_ns\":");
	spy_line_u64(l, spy_now_ns());
	spy_line_char(l, '}');
	spy_sink_commit(th, l, 0);
out:
	errno = saved;
}

SPY_EXPORT void
cudnnspy_flush(void)
{
	int saved = errno;

	/* Other threads' buffers too: each is taken under its own lock, as at exit. */
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next)
		spy_sink_flush(th);
	errno = saved;
}

SPY_EXPORT int
cudnnspy_is_loaded(void)
{
	return 1;
}
