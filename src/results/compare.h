/* compare.h - two runs side by side: metric deltas, the gate, and the
 * tasks that changed (`execeval compare`).
 *
 * A side is what compare knows of one run: its summary (the JSON object of
 * summary.h, from eval --summary-json, metrics --json, or computed here from
 * a results file) and, when it came from a results file, its per-task
 * counters, which allow a paired comparison. ee_compare_side_from_file
 * tells the two kinds of file apart; ee_compare_side_from_summary takes a
 * summary from any other source (a history database, say).
 *
 * Metrics (struct ee_metric), read from the summary and from each entry of
 * its "classes"; all are higher-is-better except timeout_rate:
 *   pass@K          pass_at_k["K"], interval pass_at_k_ci["K"]
 *   mean_score      mean_score, interval mean_score_ci
 *   lint_pass_rate  lint.pass_rate
 *   composite       composite.value
 *   timeout_rate    statuses.timeout / samples
 * Every one of these keys is optional (older summaries lack the intervals,
 * runs without lint lack "lint"); a present key of the wrong type or range
 * is an input error.
 *
 * The gate: a gated metric regresses when it got worse by more than
 * epsilon: base - new > epsilon + EE_COMPARE_SLACK (new - base for
 * timeout_rate). The slack absorbs rounding in the summaries, so that
 * 0.60 -> 0.59 passes --epsilon 0.01. Classes are reported, never gated. A
 * gated metric missing (or null) in either side is an input error.
 *
 * Paired tasks, when both sides came from results files: a task's pass rate
 * is c/n (samples with status pass / samples); the task passes when its
 * rate is at least 0.5. Tasks of both sides that crossed are listed as
 * pass_to_fail and fail_to_pass; every task whose rate moved is listed under
 * "changed", worst first.
 *
 * One data set: ee_compare_pair checks that the two sides ran on the same
 * data before anything is compared. Its evidence, the best both sides
 * have: the tasks file's sha256 (a results file's run file, a history
 * row), else the task ids (two results files), else the summaries' task
 * counts. Different data is an error naming what differs, unless allowed;
 * allowed, two results sides get their summaries recomputed over the tasks
 * both have (paired_only), so the gated metrics, the deltas and the verdict
 * speak of the same tasks. Summaries cannot be paired: allowed, each keeps
 * its own tasks (the report says so).
 *
 * The report (ee_compare's JSON, printed by `compare --json`):
 *   {"base": {"source", "kind", "tasks"}, "new": {...}, "epsilon",
 *    "gated": ["pass@1"], "ci_level": 0.95 or null,
 *    "metrics": [{"metric", "gated", "base", "new", "delta" (new - base),
 *                 "base_ci", "new_ci", "ci_overlap", "regressed"}],
 *    "classes": {"name": [the same rows without "gated"/"regressed"]},
 *    "tasks": null or {"paired", "only_base": [ids], "only_new": [ids],
 *              "pass_to_fail": [ids], "fail_to_pass": [ids],
 *              "changed": [{"task_id", "base", "new", "delta"}]},
 *    "data_set": {"same": bool or null (cannot tell), "base_tasks_sha256",
 *                 "new_tasks_sha256" (null: unknown), "paired_only": bool},
 *    "regressions": ["pass@1"]}
 * A value missing in a side is null there (and in delta); ci_overlap is
 * null unless both sides have an interval.
 *
 * Lifecycle: zero a side, fill it with a ee_compare_side_from_* (and its
 * tasks_sha256 when the caller knows it), ee_compare_pair the two sides,
 * ee_compare; free each with ee_compare_side_free (also after a failed
 * fill). Ownership: a side
 * owns everything in it; the report belongs to the caller.
 * Errors: EE_ERR_USAGE; messages name the file, the line for results
 * files, and the field (also in err->field for summaries).
 */
#ifndef EE_COMPARE_H
#define EE_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct ee_err;
struct ee_summary;
struct ee_summary_task;

#define EE_COMPARE_SLACK          1e-9
#define EE_COMPARE_MAX_SUMMARY    (64u << 20) /* bytes of a summary file */
#define EE_COMPARE_MAX_K          1000000000ul
#define EE_COMPARE_NAME_MAX       32 /* bytes of a metric's name, NUL included */
#define EE_COMPARE_PASS_THRESHOLD 0.5
#define EE_COMPARE_SHA256_HEX     65 /* 64 hex digits and a NUL */

enum ee_metric_kind {
	EE_METRIC_PASS_AT_K,
	EE_METRIC_MEAN_SCORE,
	EE_METRIC_LINT_PASS_RATE,
	EE_METRIC_COMPOSITE,
	EE_METRIC_TIMEOUT_RATE,
};

struct ee_metric {
	enum ee_metric_kind kind;
	unsigned long k; /* pass@K only */
};

/* "pass@K" (K a positive integer up to EE_COMPARE_MAX_K), "mean_score",
 * "lint_pass_rate", "composite" or "timeout_rate". */
int ee_metric_parse(const char *name, struct ee_metric *ret, struct ee_err *err);
/* The metric's name into out[0..size). */
void ee_metric_name(const struct ee_metric *m, char *out, size_t size);

struct ee_compare_side {
	char *source;                  /* the file (or other source) named in messages */
	const char *kind;              /* "summary" or "results" (static) */
	json_t *summary;               /* checked by ee_compare_check_summary */
	struct ee_summary *counts;     /* results only: the accumulated records */
	struct ee_summary_task *tasks; /* results only: per task, by id */
	size_t n_tasks;
	int torn;                                 /* results only: a torn last line was skipped */
	char tasks_sha256[EE_COMPARE_SHA256_HEX]; /* of the tasks file the run read; "": unknown */
	int paired_only; /* summary recomputed over the tasks both sides have (ee_compare_pair) */
};

/* Reads path: a results file (JSONL whose first non-blank line is an object
 * with a "task_id") or else a summary (one JSON document). From results,
 * the summary is computed with pass@k for ks[0..nk). */
int ee_compare_side_from_file(const char *path, const unsigned long *ks, size_t nk,
                              struct ee_compare_side *ret, struct ee_err *err);

/* A side from a summary already parsed (stolen, also on failure); source
 * names it in messages. */
int ee_compare_side_from_summary(json_t *summary, const char *source, struct ee_compare_side *ret,
                                 struct ee_err *err);

/* One model's share of side (a summary of several models, summary.h): its
 * block of "models" as the summary, with the side's bootstrap and tasks
 * sha256, and from a results file its own per-task counters; source says
 * "FILE (model M)". -1 when the side has no such model. */
int ee_compare_side_of_model(const struct ee_compare_side *side, const char *model,
                             struct ee_compare_side *ret, struct ee_err *err);

void ee_compare_side_free(struct ee_compare_side *side); /* accepts a zeroed side */

/* Checks the keys compare reads (above): 0, or -1 naming source and field. */
int ee_compare_check_summary(const json_t *summary, const char *source, struct ee_err *err);

/* One data set or not (above): 0 when the sides' evidence agrees (or there
 * is none); different data is -1 naming what differs (the two sha256, or
 * the tasks only in each side with the first ids), unless allow: then two
 * results sides are restricted to their paired tasks, with pass@k for
 * ks[0..nk) (-1 when no task is in both). */
int ee_compare_pair(struct ee_compare_side *base, struct ee_compare_side *new_side, int allow,
                    const unsigned long *ks, size_t nk, struct ee_err *err);

/* 1 same data set, 0 different, -1 cannot tell (the evidence above). */
int ee_compare_same_data(const struct ee_compare_side *base, const struct ee_compare_side *new_side);

struct ee_compare_options {
	double epsilon; /* finite, >= 0 */
	const struct ee_metric *gated;
	size_t n_gated;
};

/* The report (above) in *ret. Fails when a gated metric is missing in a
 * side, or memory runs out. */
int ee_compare(const struct ee_compare_side *base, const struct ee_compare_side *new_side,
               const struct ee_compare_options *o, json_t **ret, struct ee_err *err);

/* The report as tables for people; rows of "changed" beyond max_changed are
 * counted, not printed. */
void ee_compare_print(const json_t *report, size_t max_changed, FILE *out);

#endif
