/* report.h - `execeval report`: a results file as one self-contained HTML
 * page with inline SVG charts (html.c writes it, report.c gathers it).
 *
 * The page holds: key figures, pass@k bars (with CI whiskers when the
 * summary carries "pass_at_k_ci"), per-class pass rates, per-model figures
 * (when the records name more than one model), the status and
 * detail breakdown, the histogram of per-task mean scores with the median
 * and p10 marked, the slowest and the most memory-hungry tasks, optional
 * trends over runs, a sortable table of tasks, and per task a section with
 * its failing samples (failing tests and their messages, detail, the tail
 * of stderr, and the program that ran, collapsed). It loads nothing: no external script, style, font or image,
 * and a Content-Security-Policy that forbids every network load and any
 * script or style but the page's own (pinned by hash).
 *
 * Untrusted input: every string from the results file is escaped (out.h).
 * Memory is bounded by the number of tasks: the summary's counters, a few
 * numbers per task, and per task at most EE_REPORT_SHOWN failing samples,
 * each cut (EE_REPORT_*_CHARS), all of them within EE_REPORT_KEEP_BYTES
 * (past it failures are counted, not kept, and the page says so).
 *
 * Lifecycle: ee_report_new, ee_report_add per record, ee_report_html (any
 * number of times; it does not change the report), ee_report_free.
 * Ownership: the report copies what it keeps; records are borrowed.
 * Errors: ee_report_add rejects a record as ee_summary_add does (code
 * EE_ERR_USAGE, "<where>: <field>: <why>") and then leaves the report as
 * it was; after "out of memory" the report is unusable (free it).
 */
#ifndef EE_REPORT_H
#define EE_REPORT_H

#include <jansson.h>
#include <stddef.h>

struct ee_err;
struct ee_out;
struct ee_report;
struct ee_summary;
struct ee_svg_point;

#define EE_REPORT_SHOWN         3    /* failing samples kept per task */
#define EE_REPORT_TESTS_SHOWN   8    /* failing tests kept per sample */
#define EE_REPORT_MESSAGE_CHARS 400  /* of a detail or test message */
#define EE_REPORT_STDERR_CHARS  1500 /* the last ones of stderr */
#define EE_REPORT_PROGRAM_CHARS 4000 /* the first ones of the program that ran */
#define EE_REPORT_KEEP_BYTES    (32u << 20)
#define EE_REPORT_TOP           10           /* tasks in the slowest / largest charts */
#define EE_REPORT_MAX_BYTES     (256u << 20) /* of the page */

/* One series over runs (from the history database). */
struct ee_report_trend {
	const char *label; /* "pass@1" (escaped) */
	const struct ee_svg_point *pts;
	size_t n;
	double max; /* the scale's top, e.g. 1 for a rate; <= 0: from the data */
};

struct ee_report_options {
	const char *title;        /* NULL: "execeval report" */
	const char *source;       /* the results file's name, shown; NULL: none */
	const char *generated_at; /* shown; NULL: now */
	const unsigned long *ks;  /* pass@k for these k (ee_summary_json) */
	size_t nk;
	const struct ee_report_trend *trends; /* NULL or n_trends series: a trend section */
	size_t n_trends;
	const char *trends_note; /* under the trends (execeval's own text, not escaped), or NULL */
	/* The summary to draw (borrowed), e.g. one with confidence intervals
	 * added to ee_summary_json's; NULL: ee_summary_json of the records
	 * with ks. Its optional keys (pass_at_k_ci, mean_score_ci, bootstrap,
	 * lint, composite, per class too) are drawn when present. */
	const json_t *summary;
};

/* NULL when out of memory. */
struct ee_report *ee_report_new(void);
void ee_report_free(struct ee_report *r); /* accepts NULL */

/* Adds one result record (where, "results.jsonl:12", prefixes errors). */
int ee_report_add(struct ee_report *r, const json_t *record, const char *where, struct ee_err *err);

/* The summary the records went into (borrowed; valid until
 * ee_report_free), for whoever adds to ee_summary_json's figures. */
const struct ee_summary *ee_report_summary(const struct ee_report *r);

/* Writes the page into o. Fails ("out of memory", or the page would pass
 * o's cap) with o's content unspecified. */
int ee_report_html(const struct ee_report *r, const struct ee_report_options *opt, struct ee_out *o,
                   struct ee_err *err);

#endif
