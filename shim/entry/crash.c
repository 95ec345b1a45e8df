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
#include "summary.h"
#include "crash.h"
#include "sink.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
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

/* The program's own handler for the signal, if it has one (not SIG_DFL or SIG_IGN). */
static int
has_handler(const struct sigaction *sa)
{
	if (sa->sa_flags & SA_SIGINFO)
		return sa->sa_sigaction != NULL;
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

/*
 * Runs the program's handler as the kernel would have: with the mask of
 * the interrupted code, plus its sa_mask, plus the signal itself unless
 * SA_NODEFER; SA_RESETHAND puts back the default action first.
 */
static void
chain(int sig, siginfo_t *info, void *context, struct sigaction *prev)
{
	const ucontext_t *uc = context;
	struct sigaction sa = *prev;
	sigset_t mask;

	if (uc)
		mask = uc->uc_sigmask;
	else
		pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&sa.sa_mask, s) == 1)
			sigaddset(&mask, s);
	if (sa.sa_flags & SA_NODEFER)
		sigdelset(&mask, sig);
	else
		sigaddset(&mask, sig);
	if (sa.sa_flags & SA_RESETHAND) {
		memset(prev, 0, sizeof(*prev));
		prev->sa_handler = SIG_DFL;
		sigaction(sig, prev, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (sa.sa_flags & SA_SIGINFO)
		sa.sa_sigaction(sig, info, context);
	else
		sa.sa_handler(sig);
}

static void
handler(int sig, siginfo_t *info, void *context)
{
	struct spy_thread *th = spy_tls.thread;
	int fd = spy_sink_crash_fd();
	size_t i;

	/*
	 * A program with its own handler decides what the signal means: it may
	 * recover (siglongjmp, a fault it repairs). The spy reports a crash only
	 * where the signal's default action ends the program.
	 */
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (signals[i] == sig && has_handler(&previous[i])) {
			chain(sig, info, context, &previous[i]);
			return;
		}
	}
	if (!__atomic_exchange_n(&entered, 1, __ATOMIC_ACQ_REL)) {
		spy_line_reset(&line);
		/* Written out in pieces when longer than the static block (256 recent calls). */
		line.spill_fd = spy_quiet ? 0 : STDERR_FILENO + 1;	/* 0: nowhere, CUDNNSPY_STDERR=none */
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
		if (spy_tls.resolving)
			spy_line_lit(&line, "; while the spy asked cuDNN its version, at the first cuDNN call: a dispatcher "
				     "that cannot load its sub-libraries aborts so (cudnnspy scan --for the program shows "
				     "what it loads)");
		spy_line_char(&line, '\n');
		spy_line_spill(&line);
		if (fd >= 0) {
			spy_sink_crash_flush(fd, th);
			spy_line_reset(&line);
			line.spill_fd = fd + 1;
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
			/* Through the sink's check that the number is still its file; the pieces before it went out as it filled. */
			spy_sink_crash_write(fd, line.data, line.len);
			spy_summary_crash(fd, sig);
		}
	}
	/* The default action, as if the spy had never been there: pending now, delivered when this returns. */
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i] == sig)
			sigaction(sig, &previous[i], NULL);
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
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		/* An ignored signal stays ignored: the program meant it not to end anything. */
		if (sigaction(signals[i], NULL, &previous[i]) != 0 || previous[i].sa_handler == SIG_IGN)
			continue;
		sigaction(signals[i], &sa, &previous[i]);
	}
}
