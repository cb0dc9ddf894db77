/* progress.c - eval's progress line on stderr (cli.h).
 *
 * A terminal gets one line redrawn (\r) five times a second; anything else
 * (a CI log, nohup.out) a whole line every PROGRESS_LOG_INTERVAL seconds,
 * so a log neither fills with \r nor stays silent for a long run.
 * EXECEVAL_PROGRESS_INTERVAL overrides that interval, for the tests only
 * (docs). */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_TTY_INTERVAL 0.2
#define PROGRESS_LOG_INTERVAL 10.0

enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LOG };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(struct cli_progress *p, int quiet, unsigned long total)
{
	const char *test_interval = getenv("EXECEVAL_PROGRESS_INTERVAL");
	char *end;

	p->mode = quiet ? PROGRESS_OFF : isatty(2) ? PROGRESS_TTY : PROGRESS_LOG;
	p->interval = p->mode == PROGRESS_TTY ? PROGRESS_TTY_INTERVAL : PROGRESS_LOG_INTERVAL;
	if (p->mode == PROGRESS_LOG && test_interval) {
		double s = strtod(test_interval, &end);
		if (end != test_interval && *end == '\0' && s > 0)
			p->interval = s;
	}
	p->total = total;
	p->t0 = now_s();
	p->last = 0;
}

double cli_progress_elapsed(const struct cli_progress *p)
{
	return now_s() - p->t0;
}

void cli_progress_show(struct cli_progress *p, unsigned long evaluated, unsigned long skipped,
                       unsigned long passed, int final)
{
	double t = now_s();
	if (p->mode == PROGRESS_OFF || (!final && t - p->last < p->interval))
		return;
	p->last = t;
	unsigned long done = evaluated + skipped;
	double rate = evaluated / (t - p->t0 > 1e-9 ? t - p->t0 : 1e-9);
	unsigned long left = p->total > done ? p->total - done : 0;
	double pass = evaluated ? 100.0 * passed / evaluated : 0.0;
	const char *start = p->mode == PROGRESS_TTY ? "\r" : "execeval eval: ";
	const char *end = p->mode == PROGRESS_TTY ? (final ? "   \n" : "   ") : "\n";
	if (p->total) /* a regular file: the total is known */
		fprintf(stderr, "%s%lu/%lu done, pass %.1f%%, %.1f/s, ETA %.0fs%s", start, done, p->total,
		        pass, rate, rate > 0 ? left / rate : 0.0, end);
	else
		fprintf(stderr, "%s%lu done, pass %.1f%%, %.1f/s%s", start, done, pass, rate, end);
}
