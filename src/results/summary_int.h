/* summary_int.h - the summary's state, shared by summary_check.c (a record
 * checked), summary.c (counting) and summary_json.c (deriving the
 * metrics). Not a public header: everyone else goes through summary.h. */
#ifndef EE_SUMMARY_INT_H
#define EE_SUMMARY_INT_H

#include <stddef.h>
#include <jansson.h>

#include "base/formula.h"
#include "base/strmap.h"
#include "results/summary.h"

#define SUM_OTHER "(other)"

enum { SUM_PASS, SUM_ASSERTION_FAIL, SUM_SYNTAX_ERROR, SUM_TIMEOUT, SUM_ERROR, SUM_N_STATUS };
extern const char *const ee_summary_status_names[SUM_N_STATUS];

/* The status syntax_error split by its detail (docs/summary.md,
 * "syntax_error_details"): the program did not parse ("syntax error: ..."),
 * it raised while being imported ("import error: ..."), or a record whose
 * detail is neither (written by hand or by another tool). */
enum { SUM_SYNTAX_PARSE, SUM_SYNTAX_IMPORT, SUM_SYNTAX_OTHER, SUM_N_SYNTAX };
extern const char *const ee_summary_syntax_names[SUM_N_SYNTAX];

#define SUM_N_VCLASS 9
extern const char *const sum_violation_classes[SUM_N_VCLASS];

struct sum_counts {
	unsigned long status[SUM_N_STATUS];
	unsigned long syntax[SUM_N_SYNTAX]; /* of status[SUM_SYNTAX_ERROR], by detail */
	struct ee_strmap details;           /* normalised detail -> count */
	unsigned long lint_pass, lint_fail; /* records whose lint ran (--lint) */
	struct ee_strmap lint_codes;        /* finding code -> count */
	unsigned long n_reward, n_infra;    /* records with a reward; with infra_error */
	double reward_sum, reward_sq;
	struct ee_strmap rewards; /* a reward's value ("%.6g") -> count */
	/* The records' "violations" (verdict/violations.h): attempts by class
	 * (sum_violation_classes' order), records with any, with an escape. */
	unsigned long violations[SUM_N_VCLASS];
	unsigned long violating, escaping;
};

struct sum_task {
	size_t cls; /* index into classes */
	unsigned long n, c;
	double score_sum;
	unsigned long c_canonical; /* samples that passed the canonical tier (summary_gen.c) */
	int gen_seen;              /* its generated tests are counted in gen */
};

/* Generated tests and tiers over the records (summary_gen.c). */
struct sum_gen {
	int other_tier;          /* a test of a tier other than canonical was seen */
	unsigned long seeds;     /* 0: no record had a seed; 1: one seed; 2: more */
	unsigned long long seed; /* the first */
	unsigned long tasks, tests, dropped;
	int calibrations;       /* records' "calibration": 0 none, 1 one rule, 2 more */
	double floor_s, factor; /* the first */
};

struct sum_class {
	char *name; /* "" for records without a class */
	struct sum_counts counts;
};

struct sum_tier {
	char *name;
	unsigned long tests, passed, samples, all_passed;
	unsigned long seen_at; /* serial of the last sample with a test of this tier */
	int failed;            /* that sample had a test of this tier not pass */
};

/* One model's share: its own counts, and per task (indexed as the
 * summary's tasks[], grown lazily up to n_tasks) its n, c and sum of
 * scores, so the memory is tasks x models, never samples. */
struct sum_model {
	char *name; /* "" for records without a model */
	struct sum_counts counts;
	struct sum_task *tasks; /* [0 .. n_tasks); cls unused */
	size_t n_tasks, cap_tasks;
};

struct sum_res {
	unsigned long n_wall, n_cpu, n_rss;
	double wall_sum, wall_max, cpu_sum, rss_max;
};

/* Who judged a test (the record's "judged_by", docs/record.md), in this order. */
enum { SUM_BY_SUPERVISOR, SUM_BY_JUDGE, SUM_BY_CANDIDATE, SUM_BY_SANDBOX, SUM_N_JUDGED_BY };
extern const char *const ee_summary_judged_by_names[SUM_N_JUDGED_BY];

struct ee_summary {
	unsigned long samples;
	unsigned long unattributed;   /* of samples: invalid ones without a task_id */
	unsigned long infra_excluded; /* infra_error records: in no count but this one */
	struct ee_strmap task_ix, class_ix, tier_ix;
	struct sum_task *tasks;
	size_t n_tasks, cap_tasks;
	struct sum_class *classes;
	size_t n_classes, cap_classes;
	struct sum_tier tiers[EE_SUMMARY_MAX_TIERS + 1]; /* + "(other)" */
	size_t n_tiers;
	struct ee_strmap model_ix;
	struct sum_model models[EE_SUMMARY_MAX_MODELS + 1]; /* + "(other)" */
	size_t n_models;
	struct sum_counts all;
	size_t n_details;                             /* distinct details in all.details but "(other)" */
	size_t n_lint_codes;                          /* distinct codes in all.lint_codes but "(other)" */
	size_t n_rewards;                             /* distinct values in all.rewards but "(other)" */
	char reward_formula[EE_FORMULA_MAX_TEXT + 1]; /* the records' ("": none seen yet) */
	int reward_mixed;                             /* records disagreed on it */
	struct sum_res res;
	unsigned long judged_by[SUM_N_JUDGED_BY]; /* tests per judge; a record without the key: none */
	double first_start, last_finish;          /* seconds since the epoch; 0: none */
	struct sum_gen gen;
};

/* task_ix's slots sorted by task id (bytewise): a new array of n_tasks
 * pointers (slot->value is the task's index), NULL when out of memory. A
 * canonical order for what must not depend on the order of the records
 * (eval -j N writes them in completion order): the bootstrap's draws. */
const struct ee_strmap_slot **sum_tasks_by_id(const struct ee_summary *s);

struct ee_jf;

/* A validated record: pointers into it, valid while it lives. */
struct sum_rec {
	const char *task_id, *cls, *detail; /* cls "" when none; detail NULL when none */
	const char *model;                  /* "" when none */
	int status;
	double score;
	const json_t *tests, *resources; /* NULL when absent */
	const json_t *lint_findings;     /* with lint_pass >= 0 */
	int lint_pass;                   /* 1 pass, 0 fail, -1 absent or not_run */
	const char *started, *finished;
	int has_reward, infra; /* a numeric "reward"; "infra_error": true */
	double reward;
	const char *reward_formula; /* NULL: the default, binary */
	const json_t *violations;   /* an object, or NULL */
};

/* The record rec checked whole (summary_check.c): every field the summary
 * counts, each with its type, and its class the same as its task's earlier
 * records'. Fills r; fails through c ("<where>: <path>: <message>"). */
int sum_check_record(const struct ee_summary *s, const json_t *rec, const struct ee_jf *c, struct sum_rec *r);

/* A record's "seed" and "generated", checked before anything is counted. */
int sum_gen_check(const json_t *rec, const struct ee_jf *c);
/* Counts them, and the canonical tier, into s, the task t and the model's mt. */
void sum_gen_count(struct ee_summary *s, const json_t *rec, int passed, struct sum_task *t,
                   struct sum_task *mt);
/* The summary's "generated" into *ret (NULL when no record had generated
 * tests, a seed or a tier other than canonical): pass@k on the canonical
 * tier for ks[0..nk), seed, tasks, tests, dropped. -1 out of memory. */
int sum_gen_json(const struct ee_summary *s, const unsigned long *ks, size_t nk, json_t **ret);

#endif
