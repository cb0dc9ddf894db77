/* figures.h - the headline figures of one summary JSON, overall or of one
 * task class: what `execeval history` lists per run.
 *
 *   pass@k          at the smallest k the summary reports (pass@1 normally)
 *   mean score      the mean of per-task scores
 *   lint pass rate  when the summary has "lint" (older summaries do not)
 *   timeout rate    statuses.timeout / samples
 *
 * Summaries come from the history database, which may hold summaries of
 * older or newer execevals: every key is optional, and a missing or
 * mistyped one leaves its figure absent (NAN, or k = 0) instead of failing.
 * Ownership: the summary is borrowed for the call; nothing is kept.
 */
#ifndef EE_FIGURES_H
#define EE_FIGURES_H

#include <jansson.h>

struct ee_err;

struct ee_figures {
	long long tasks, samples; /* -1 when absent */
	unsigned long k;          /* the smallest k with a pass@k value; 0: none */
	double pass_at_k;         /* NAN when k is 0 */
	double mean_score;        /* NAN when absent */
	double lint_pass_rate;    /* NAN when absent */
	double timeout_rate;      /* NAN when statuses or samples are absent, or samples is 0 */
};

/* Fills ret from summary, or from summary.classes[task_class] when
 * task_class is not NULL. -1 (err) when summary is not an object or has no
 * such class. */
int ee_figures_of(const json_t *summary, const char *task_class, struct ee_figures *ret, struct ee_err *err);

#endif
