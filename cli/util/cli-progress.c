/*
 * The progress line (cli-progress.h). It stays away the first second, so
 * that a report of a few files never flickers one, and afterwards only
 * when there is more than a moment left; then it is redrawn four times a
 * second at most, in one write, with spaces over what the last one left
 * (no escape sequences: any terminal, TERM=dumb included).
 */
#include "cli-progress.h"
#include "cli-util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* How many bytes between looks at the clock: at 1 GB/s, 4,000 looks a second of about 20 ns each. */
#define CHECK_BYTES (256u << 10)
#define REDRAW_S 0.25

/* The one line on the terminal now, for complain() to wipe before it writes. */
static struct cli_progress *showing;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
put(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Spaces over the line, and the cursor back at its start. */
static void
wipe(struct cli_progress *p)
{
	char buf[512];
	size_t n = (size_t)p->shown < sizeof(buf) - 2 ? (size_t)p->shown : sizeof(buf) - 2;

	if (!p->shown)
		return;
	buf[0] = '\r';
	memset(buf + 1, ' ', n);
	buf[n + 1] = '\r';
	put(buf, n + 2);
	p->shown = 0;
	if (showing == p)
		showing = NULL;
}

static void
before_complaint(void)
{
	if (showing)
		wipe(showing);
}

/* 1.2 GB, 340 MB, 12 kB: decimal, as rates are given, three figures at most. */
static void
human(char *buf, size_t size, double v)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB" };
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0 || v >= 10)
		snprintf(buf, size, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
}

static void
duration(char *buf, size_t size, double s)
{
	long t = (long)(s + 0.5);

	if (t < 60)
		snprintf(buf, size, "%ld s", t);
	else if (t < 3600)
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

static int
columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
	return 80;
}

static void
draw(struct cli_progress *p, double t, double left)
{
	char line[400], done[32], total[32], rate[32], eta[32];
	unsigned long long bytes = p->done + p->at;
	double elapsed = t - p->start;
	int n, width = columns() - 1, old = p->shown;

	human(done, sizeof(done), (double)bytes);
	human(total, sizeof(total), (double)p->total);
	human(rate, sizeof(rate), elapsed > 0 ? (double)bytes / elapsed : 0);
	duration(eta, sizeof(eta), left);
	line[0] = '\r';
	if (p->sizes_known)
		n = snprintf(line + 1, sizeof(line) - 1, "cudnnspy: %s: %zu of %zu files, %s of %s, %s/s, %s left",
			     p->what, p->files_done, p->files, done, total, rate, left >= 0 ? eta : "?");
	else
		n = snprintf(line + 1, sizeof(line) - 1, "cudnnspy: %s: %zu of %zu files, %s, %s/s", p->what,
			     p->files_done, p->files, done, rate);
	if (n < 0)
		return;
	/* A line wider than the terminal would wrap, and \r would then redraw only its last row. */
	if (n > width)
		n = width;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	/* Spaces over the tail of a longer line before. */
	while (n < old && (size_t)n < sizeof(line) - 2)
		line[1 + n++] = ' ';
	put(line, (size_t)n + 1);
	p->shown = n;
	p->last = t;
	showing = p;
	cli_before_complain = before_complaint;
}

void
cli_progress_begin(struct cli_progress *p, const char *what, int allowed)
{
	const char *after = getenv("CUDNNSPY_TEST_PROGRESS_AFTER");

	memset(p, 0, sizeof(*p));
	p->what = what;
	p->on = allowed && isatty(STDERR_FILENO);
	p->sizes_known = 1;
	/* For the tests only (docs/cudnnspy.md): a run of a few files is over before the first second. */
	p->after = after && after[0] ? strtod(after, NULL) : 1.0;
	if (!(p->after >= 0))
		p->after = 1.0;
	p->start = p->last = p->on ? now() : 0;
	p->next = CHECK_BYTES;
}

void
cli_progress_add(struct cli_progress *p, unsigned long long size, int known)
{
	p->files++;
	p->total += size;
	if (!known)
		p->sizes_known = 0;
}

void
cli_progress_tick(struct cli_progress *p)
{
	unsigned long long bytes = p->done + p->at;
	double t, elapsed, left = -1;

	if (!p->on)
		return;
	p->next = bytes + CHECK_BYTES;
	t = now();
	elapsed = t - p->start;
	if (elapsed < p->after || (p->shown && t - p->last < REDRAW_S))
		return;
	/* What is left at the rate so far: by bytes, else (empty files) by files. */
	if (p->sizes_known && bytes > 0 && p->total >= bytes)
		left = elapsed * (double)(p->total - bytes) / (double)bytes;
	else if (p->sizes_known && p->total == 0 && p->files_done > 0)
		left = elapsed * (double)(p->files - p->files_done) / (double)p->files_done;
	/* Almost done after the first second: no line for the moment that is left. */
	if (!p->shown && left >= 0 && left < p->after && elapsed < 2 * p->after)
		return;
	draw(p, t, left);
}

void
cli_progress_file_done(struct cli_progress *p, unsigned long long size)
{
	if (!p)
		return;
	p->files_done++;
	p->done += size ? size : p->at;
	p->at = 0;
	/* A file is slow enough to open and read that the clock is read after each. */
	if (p->on)
		cli_progress_tick(p);
}

void
cli_progress_end(struct cli_progress *p)
{
	if (!p)
		return;
	wipe(p);
	p->on = 0;
}
