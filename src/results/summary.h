/* summary.h - the metrics of a data set, accumulated one result record at a
 * time (the summary of `execeval eval` and `execeval metrics`).
 *
 * Memory is bounded by tasks x models, never by the number of samples:
 * per task the summary keeps a few counters (n, c, sum of scores, class),
 * and the same per model;
 * details are normalised into stable classes ("test 3 failed: ..." becomes
 * "test failed") and at most EE_SUMMARY_MAX_DETAILS distinct ones are kept,
 * the rest counted under "(other)"; likewise EE_SUMMARY_MAX_TIERS tiers.
 *
 * Definitions (docs in ee_summary_json below):
 *   pass@k      mean over tasks of ee_pass_at_k(n, c, k), c = samples with
 *               status "pass"; reported only when n >= k for every task.
 *   mean_score  mean over tasks of the task's mean score (tasks weigh
 *               equally, as in pass@k); median and p10 of the same.
 *   *_ci        95 % percentile bootstrap intervals of pass@k and
 *               mean_score over the tasks (see ee_summary_json).
 * A record's model is its "model" (a string or null). A task's class is
 * the first non-empty "class" of its records; records
 * without one join their task's class. A record with "infra_error": true
 * (the sandbox failed, not the model) counts in "infra_errors" only: not
 * in samples, n, statuses or any task. Records with "sandbox_error" or
 * "invalid": true otherwise count as status "error" with score 0 and detail "sandbox
 * error", or for an invalid sample its own detail (default "invalid
 * sample"); they need no other field, and an invalid sample without a
 * task_id counts in the totals (samples, statuses, details) but in no task
 * or class ("samples_without_task" in the JSON).
 *
 * Lifecycle: ee_summary_new, ee_summary_add per record, ee_summary_json any
 * time (it does not change the summary), ee_summary_free.
 * Ownership: the summary copies what it keeps; records are borrowed.
 * Errors: ee_summary_add rejects a record (code EE_ERR_USAGE, message
 * "<where>: <field>: <why>") and leaves the summary as it was; only after
 * "out of memory" is the summary unusable (free it).
 */
#ifndef EE_SUMMARY_H
#define EE_SUMMARY_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct ee_err;
struct ee_summary;

#define EE_SUMMARY_MAX_DETAILS    1000
#define EE_SUMMARY_MAX_TIERS      64
#define EE_SUMMARY_MAX_MODELS     64  /* distinct models kept; the rest "(other)" */
#define EE_SUMMARY_MAX_LINT_CODES 500 /* distinct lint codes kept; the rest "(other)" */
#define EE_SUMMARY_MAX_REWARDS    20  /* distinct reward values listed; the rest "(other)" */
#define EE_SUMMARY_DETAIL_BYTES   120 /* longer details are cut (UTF-8 safe) */

/* NULL when out of memory. */
struct ee_summary *ee_summary_new(void);
void ee_summary_free(struct ee_summary *s); /* accepts NULL */

/* Adds one result record; where ("results.jsonl:12") prefixes errors. */
int ee_summary_add(struct ee_summary *s, const json_t *record, const char *where, struct ee_err *err);

/* Seconds from the earliest "started_at" to the latest "finished_at" of the
 * records (ISO 8601 UTC as execeval writes them), or 0 when unknown. */
double ee_summary_span_s(const struct ee_summary *s);

/* One task's counters, as ee_summary_tasks lists them. */
struct ee_summary_task {
	const char *task_id, *class_name; /* borrowed from the summary; class "" = none */
	unsigned long n, c;               /* samples, samples with status "pass" */
	double score_sum;                 /* the sum of its samples' scores */
};

/* The tasks sorted by task_id (bytewise): a new array (free() it) of
 * *ret_n entries whose strings live as long as s. NULL when out of memory. */
struct ee_summary_task *ee_summary_tasks(const struct ee_summary *s, size_t *ret_n);

/* The same of the records of one model (its name as in summary.h: "" for
 * records without one), the tasks it attempted only: NULL with *ret_n 0
 * when no record names it (errno 0) or out of memory (errno ENOMEM). */
struct ee_summary_task *ee_summary_model_tasks(const struct ee_summary *s, const char *model, size_t *ret_n);

/* The stable class of a detail (the normalisation above) into out[0..size),
 * cut to EE_SUMMARY_DETAIL_BYTES. Exposed for tests. */
void ee_summary_detail_class(const char *detail, char *out, size_t size);

/* A new JSON object (NULL when out of memory):
 *   tasks, samples, pass_at_k {"k": value} for the kept ks,
 *   pass_at_k_ci {"k": [lo, hi]}, pass_at_k_dropped [{"k", "reason"}],
 *   mean_score, mean_score_ci [lo, hi] (null without tasks),
 *   median_task_score, p10_task_score (null without tasks),
 *   statuses {all five}, details {detail: count} (by count, descending),
 *   bootstrap {resamples, seed, level, unit: "task"},
 *   classes {name: the same keys from tasks to details} ("" = no class),
 *   models {name: the same keys, and pass_at_k_dropped, over the tasks the
 *           model attempted, with ks chosen over its own samples} ("" = no
 *           model; only when the records name more than one model; at most
 *           EE_SUMMARY_MAX_MODELS, the rest "(other)"),
 *   tiers {name: tests, tests_passed, pass_rate, samples, samples_all_passed,
 *          all_passed_rate},
 *   resources {wall_ms_mean, wall_ms_max, cpu_ms_mean, cpu_ms_total,
 *              peak_rss_kb_max} (over records that carry them),
 *   wall_s and throughput_per_s (samples / wall_s) when wall_s > 0.
 * ks[0..nk) are reported in their order; repeats are ignored.
 * The intervals (bootstrap.h): EE_BOOTSTRAP_RESAMPLES resamples of the
 * tasks (each keeps its own n and c), the percentile interval at
 * EE_BOOTSTRAP_LEVEL. Tasks are taken in task id order; the whole set draws
 * from seed EE_BOOTSTRAP_SEED, a class from ee_bootstrap_stream(seed, name),
 * a model from ee_bootstrap_stream(ee_bootstrap_stream(seed, "model"), name),
 * so the same records in any order give the same intervals. */
json_t *ee_summary_json(const struct ee_summary *s, const unsigned long *ks, size_t nk, double wall_s);

/* The summary's "environment" (docs/summary.md): execeval's version, the
 * interpreter that ran candidates (python: its path, NULL: unknown; its
 * version asked of it with -I -S -V, null when it does not answer within 5
 * s), the fingerprint of the packages candidates can import
 * (environment.h; null when the version is unknown), the isolation that
 * ran (warm: 1, cold: 0), whether --weak-limits stood in for a memory
 * cgroup, and the kernel release. NULL when out of memory. */
json_t *ee_summary_environment(const char *python, int warm, int weak_limits);

/* The ks any model of summary["models"] reports a pass@k for, ascending,
 * into ks[0..max); their number (0 for a summary of one model). With
 * several models the top level has no pass@k (it would pool them): each
 * model's own, at the ks its samples per task allow, are the figures. */
size_t ee_summary_models_ks(const json_t *summary, unsigned long *ks, size_t max);

/* The summary as an aligned, readable table. The optional key
 * "wall_from_timestamps": true says wall_s came from ee_summary_span_s. */
void ee_summary_print(const json_t *summary, FILE *out);

#endif
