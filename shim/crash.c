/*
 * The opt-in crash handler (CUDNNSPY_CRASH): on a fatal signal it writes
 * what the thread was doing in cuDNN (its flight recorder) and the call
 * counts, to stderr and to the record file, with async-signal-safe code
 * only (static buffers, write(2), no locks, no allocation). Then it hands
 * the signal on: to the handler that was there before, or to the default
 * action, so the program dies as it would have. Installed at the first
 * cuDNN call, so that a handler the program set up before chains behind it.
 */
#include "core.h"
#include "crash.h"
#include "sink.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction previous[sizeof(signals) / sizeof(signals[0])];
static struct spy_line line;	/* static: the handler must not allocate */
static int entered;

static const char *
signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	case SIGFPE:
		return "SIGFPE";
	case SIGABRT:
		return "SIGABRT";
	}
	return "signal";
}

static void
put(int fd, const struct spy_line *l)
{
	const char *p = l->data;
	size_t n = l->len;

	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* The crashing thread's recent calls, oldest first. */
static void
recent(struct spy_line *l, const struct spy_thread *th, int json)
{
	unsigned have = th->flight_pos, n = have < SPY_FLIGHT_MAX ? have : SPY_FLIGHT_MAX;

	if (n > (unsigned)spy_config.flight)
		n = (unsigned)spy_config.flight;
	for (unsigned i = 0; i < n; i++) {
		uint32_t e = th->flight[(have - n + i) % SPY_FLIGHT_MAX];
		unsigned id = e & 0xffff;

		if (id >= _SPY_FN_COUNT)
			continue;
		if (i)
			spy_line_raw(l, json ? "," : ", ");
		if (json) {
			spy_line_lit(l, "{\"fn\":");
			spy_line_name(l, spy_fn_info[id].name);
			spy_line_lit(l, ",\"status\":");
			spy_line_i64(l, (int16_t)(e >> 16));
			spy_line_char(l, '}');
		} else {
			spy_line_raw(l, spy_fn_info[id].name);
		}
	}
}

static void
handler(int sig, siginfo_t *info, void *context)
{
	struct spy_thread *th = spy_tls.thread;
	int fd = spy_sink_crash_fd();
	size_t i;

	if (!__atomic_exchange_n(&entered, 1, __ATOMIC_ACQ_REL)) {
		spy_line_reset(&line);
		spy_line_lit(&line, "cudnnspy: fatal signal ");
		spy_line_i64(&line, sig);
		spy_line_lit(&line, " (");
		spy_line_raw(&line, signal_name(sig));
		spy_line_lit(&line, ") in thread ");
		spy_line_i64(&line, (long)syscall(SYS_gettid));
		if (th && th->flight_pos) {
			spy_line_lit(&line, "; its last cuDNN calls: ");
			recent(&line, th, 0);
		}
		spy_line_char(&line, '\n');
		if (!spy_quiet)
			put(STDERR_FILENO, &line);
		if (fd >= 0) {
			/* What this thread had buffered: whole lines only, so no lock is needed to read it. */
			if (th && th->buf && th->buf->len <= sizeof(th->buf->out))
				spy_sink_crash_write(fd, th->buf->out, th->buf->len);
			spy_line_reset(&line);
			spy_line_lit(&line, "{\"event\":\"crash\",\"signal\":");
			spy_line_i64(&line, sig);
			spy_line_lit(&line, ",\"signal_name\":");
			spy_line_name(&line, signal_name(sig));
			spy_line_lit(&line, ",\"tid\":");
			spy_line_i64(&line, (long)syscall(SYS_gettid));
			spy_line_lit(&line, ",\"recent\":[");
			if (th)
				recent(&line, th, 1);
			spy_line_lit(&line, "]}\n");
			if (!line.overflow)
				spy_sink_crash_write(fd, line.data, line.len);
			spy_summary_crash(fd, sig);
		}
	}
	/* Hand the signal on as if the spy had never been there. */
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (signals[i] != sig)
			continue;
		sigaction(sig, &previous[i], NULL);
		if ((previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_sigaction) {
			previous[i].sa_sigaction(sig, info, context);
			return;
		}
		if (previous[i].sa_handler != SIG_DFL && previous[i].sa_handler != SIG_IGN) {
			previous[i].sa_handler(sig);
			return;
		}
		break;
	}
	/* Default action: pending now, delivered as soon as this handler returns. */
	raise(sig);
}

void
spy_crash_install(void)
{
	static int done;
	struct sigaction sa;

	if (!spy_config.crash || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaction(signals[i], &sa, &previous[i]);
}
