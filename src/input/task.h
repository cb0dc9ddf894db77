/* task.h - tasks (a program's tests and limits) and samples, in the formats
 * of docs/contract.md, detected by their fields: native, HumanEval and MBPP, and
 * the RL code data sets' rows (APPS/TACO, CodeContests, verl, LiveCodeBench,
 * open-r1, Prime Intellect; docs/formats.md).
 *
 * Parsing never crashes on bad input and never guesses: an error names the
 * file, line and field ("tasks.jsonl:3: tests[2].kind: expected one of
 * assert, io, call, program, unittest"). A task owns every string and JSON
 * value it holds; ee_task_free releases them and accepts a zeroed task.
 */
#ifndef EE_TASK_H
#define EE_TASK_H

#include <stddef.h>
#include <jansson.h>

#include "pyvalue/judge.h"

struct ee_err;

enum ee_test_kind { EE_TEST_ASSERT, EE_TEST_IO, EE_TEST_CALL, EE_TEST_PROGRAM, EE_TEST_UNITTEST };
enum ee_tier { EE_TIER_CANONICAL, EE_TIER_EDGE, EE_TIER_PROPERTY };
enum ee_task_format {
	EE_FORMAT_AUTO,
	EE_FORMAT_NATIVE,
	EE_FORMAT_HUMANEVAL,
	EE_FORMAT_MBPP,
	EE_FORMAT_APPS,         /* APPS, TACO: input_output */
	EE_FORMAT_CODECONTESTS, /* public_tests, private_tests, generated_tests */
	EE_FORMAT_VERL,         /* reward_model.ground_truth */
	EE_FORMAT_LCB,          /* LiveCodeBench: public_test_cases, private_test_cases */
	EE_FORMAT_OPENR1,       /* verification_info.test_cases */
	EE_FORMAT_PRIME,        /* verification_info.test_case_inputs */
	EE_FORMAT_EVALPLUS,     /* HumanEval+, MBPP+: base_input, plus_input (evalplus.c) */
	EE_FORMAT_COUNT
};

/* Parse options, OR'd into the format argument of ee_task_from_json and
 * ee_dataset_load. MBPP_CHALLENGE (--mbpp-challenge): MBPP's
 * challenge_test_list becomes hidden tests; without it only test_list is
 * scored, as in the standard MBPP protocol. */
#define EE_TASK_FORMAT_MASK    0xffu
#define EE_TASK_MBPP_CHALLENGE 0x100u

struct ee_test {
	int kind;                  /* enum ee_test_kind */
	int hidden;                /* visibility "hidden" */
	int tier;                  /* enum ee_tier */
	double weight;             /* > 0, default 1.0 */
	char *code;                /* assert, program, unittest */
	char *stdin_text;          /* io ("" when absent) */
	char *stdout_text;         /* io: expected output */
	char *fn;                  /* call: function name */
	char *method_of;           /* call: fn is a method of a fresh instance of this class
	                    * (LeetCode's Solution().fn(...)); NULL: a global function */
	json_t *args;              /* call: JSON array (owned reference) */
	json_t *expected;          /* call: expected value (owned reference); strict: canonical */
	double float_tol;          /* io and call: -1 = exact (default) */
	struct ee_compare compare; /* io: its rule (judge.h); zeroed: lines */
	size_t task_index;         /* its index in the task as loaded, before a --max-tests cut */
	int strict;                /* an assert judged by the supervisor (--strict-asserts):
	                    * fn, args, kwargs and expected hold its call, args and
	                    * expected in canonical form; code is kept */
	json_t *kwargs;            /* strict: array of [name, canonical value] */
	json_t *calls;             /* strict program (kind stays program): fn is the entry
	                    * name and calls its calls in order, each
	                    * {"args", "kwargs", "expected"} in canonical form */
	json_t *script;            /* io run as a plain script (serve's /run_code), or NULL:
	                    * {"files", "fetch", "fetch_cap"} as the job carries it */
	double reference_ms;       /* a generated or given input's call: the reference's wall
	                    * time on it in its sandbox (ms); 0: not measured */
};

/* Calibrated time limits (--time-floor, --time-factor; docs/generated.md):
 * a test the reference was timed on gets max(floor, factor x its time),
 * at most cap (the candidate's timeout). factor 0: off. */
struct ee_calibration {
	double floor_ms, factor, cap_ms;
};

/* --max-tests N --test-pick P as applied to a task (ee_task_apply_rules):
 * max 0 when no budget was asked for. */
enum ee_test_pick { EE_PICK_FIRST, EE_PICK_LONGEST };

struct ee_test_budget {
	unsigned max; /* N */
	int pick;     /* enum ee_test_pick */
	size_t total; /* tests the task had before */
};

/* A native task's generated tests (generated.c; docs/generated.md): a
 * trusted reference solution and a trusted generator of inputs. The engine
 * (engine/reference.c) runs both in a sandbox once per (task, seed) and
 * appends one supervisor-judged call test per input the reference answered
 * (ee_task_add_generated). Owned by its task. */
struct ee_task_gen {
	char *reference;  /* "reference": a program defining the entry point */
	char *generate;   /* "generate": Python defining generate(rng, n); NULL when
	                   * the inputs are given (EvalPlus's rows) */
	json_t *inputs;   /* given inputs (canonical argument arrays), or NULL */
	size_t n_base;    /* of the given inputs, the first n_base are the canonical
	                   * tier (EvalPlus's base_input), the rest the gen's tier */
	unsigned n;       /* "n_generated": inputs asked for (default 20) */
	int tier;         /* "generated_tier": enum ee_tier (default property) */
	double float_tol; /* "generated_float_tol" or EvalPlus's atol: the atol of
	                   * ee_judge_evalplus; -1 Python's == (the default) */
	char key[65];     /* SHA-256 (hex) of the task object as its reader saw it, for
	                   * a cache of the reference's results (serve); "" unset */
	/* Set by ee_task_add_generated: */
	int added;               /* the generated tests are in the task */
	unsigned long long seed; /* the seed they came from */
	size_t made, dropped;    /* tests added; inputs the reference raised on */
	size_t hidden;           /* of made, hidden by --hidden-fraction */
};

/* Per-task overrides; has_* says which were given. */
struct ee_task_limits {
	int has_timeout, has_memory, has_procs, has_output_cap;
	double timeout_s;
	unsigned memory_mb, procs;
	size_t output_cap;
};

struct ee_task {
	char *task_id;     /* always set; numbers (MBPP) become their decimal text */
	char *class_name;  /* "class"; "" when absent */
	char *prompt;      /* "" when absent (HumanEval: the prompt; MBPP: text) */
	char *entry_point; /* "" when absent */
	char *setup;       /* run after the candidate's top level; "" when absent */
	int format;        /* enum ee_task_format, as detected */
	struct ee_test *tests;
	size_t n_tests;
	struct ee_task_limits limits;
	int strict_asserts;           /* ee_task_strict_asserts ran: the record says who judged each test */
	int compare_given;            /* the task's own "compare" set its io tests' rule */
	int stdlib_only;              /* --packages stdlib: the candidate imports the standard library only */
	struct ee_test_budget budget; /* ee_task_apply_rules's --max-tests */
	struct ee_task_gen *gen;      /* reference + generate, or NULL (native tasks only) */
};

/* Detects the format of obj from its fields (native: "tests"; HumanEval:
 * "test" + "entry_point"; MBPP, original or sanitized: "test_list"; the RL
 * formats by theirs, docs/formats.md; task_detect.c holds the one table).
 * Returns an enum ee_task_format, or -1 when none matches. */
int ee_task_detect(const json_t *obj);

/* Builds a task from one JSON object. where = "file:line" for messages.
 * format EE_FORMAT_AUTO detects it; another value forces it; parse options
 * (EE_TASK_MBPP_CHALLENGE) may be OR'd in. obj is borrowed;
 * the task copies what it keeps. On error *ret is left zeroed. */
int ee_task_from_json(const json_t *obj, int format, const char *where, struct ee_task *ret,
                      struct ee_err *err);

/* As ee_task_from_json, for the row at line (>= 1) of a tasks file: an RL
 * row without an id of its own is then named by its line number. */
int ee_task_from_row(const json_t *obj, int format, const char *where, long line, struct ee_task *ret,
                     struct ee_err *err);

/* Reads obj's optional "limits" object (as in a task) into *ret; a field
 * absent leaves its has_* 0. Errors name "limits.<field>". */
int ee_task_limits_from_json(const json_t *obj, const char *where, struct ee_task_limits *ret,
                             struct ee_err *err);

/* A task made of assertion strings (`execeval run --assert`), all public. */
int ee_task_from_asserts(const char *const *asserts, size_t n, struct ee_task *ret, struct ee_err *err);

void ee_task_free(struct ee_task *t);

/* --strict-asserts: converts every assert test whose code has the literal
 * shape of pyliteral.h into a supervisor-judged call (strict = 1), and
 * every program test of the check-program shape into a supervisor-judged
 * sequence of calls (strict = 1, calls set), keeping each test's kind,
 * index, visibility, weight and tier; other tests are left alone.
 * Returns how many were converted, or -1 (out of memory; the task is then
 * unchanged but for the tests converted so far, each still consistent). */
int ee_task_strict_asserts(struct ee_task *t, struct ee_err *err);

/* ---- Generated tests (generated.c) ---------------------------------------- */

/* SHA-256 (hex) of what decides a task's generated tests: the entry point,
 * reference, generator and n_generated (the cache key with the seed). */
void ee_task_gen_hash(const struct ee_task *t, char hex[65]);

/* Appends one strict call test of the entry point per input i with
 * outputs[i] not NULL: args inputs[i] (an array of canonical values),
 * expected outputs[i] (canonical), the gen's tier (canonical for the first
 * n_base of given inputs) and tolerance, weight 1.
 * A NULL output is an input the reference raised on: counted as dropped.
 * With hidden_fraction > 0, round(made * fraction) of them, picked by the
 * seed, are hidden. Records seed, made, dropped in t->gen. inputs and
 * outputs are borrowed. -1 out of memory (the task keeps its old tests). */
int ee_task_add_generated(struct ee_task *t, const json_t *inputs, json_t *const *outputs,
                          unsigned long long seed, double hidden_fraction, struct ee_err *err);

/* With ref_ms (n_in, by input; borrowed), the reference's time on each
 * input goes with its test (reference_ms). Otherwise as above. */
int ee_task_add_generated_timed(struct ee_task *t, const json_t *inputs, json_t *const *outputs,
                                const double *ref_ms, unsigned long long seed, double hidden_fraction,
                                struct ee_err *err);

/* t's calibrated limit in ms under c, or 0 when it has none (calibration
 * off, or the reference was not timed on it). */
double ee_test_limit_ms(const struct ee_test *t, const struct ee_calibration *c);

/* ---- Run-wide rules (task_rules.c) ---------------------------------------
 * What a run's options (--compare, --max-tests, --test-pick) do to a task
 * once it is loaded. The rule of the task's own "compare" wins over the
 * run's, which wins over the format's default (docs/compare.md). */
struct ee_task_rules {
	int has_compare;           /* --compare was given */
	struct ee_compare compare; /* its rule */
	unsigned max_tests;        /* 0: every test */
	int pick;                  /* enum ee_test_pick */
	int stdlib_only;           /* --packages stdlib (0: host) */
};

/* Sets --packages on the task, the run's rule on the io tests of a task without its own, then,
 * with max_tests, keeps the first max_tests tests or the max_tests with
 * the longest inputs (io: stdin; call: its arguments' JSON; others: their
 * code; ties to the earlier test), in task order, and records the budget
 * in t->budget. Returns 0, or -1 out of memory (no budget applied). */
int ee_task_apply_rules(struct ee_task *t, const struct ee_task_rules *r, struct ee_err *err);

/* Name of a pick ("first", "longest"). */
const char *ee_test_pick_name(int pick);

/* How a test's verdict is reached, chosen once when the stream is prepared
 * (ee_test_judging): the sandbox's own report (assert, program, unittest),
 * an io comparison, a call's value against the expected JSON, Python's ==
 * against a canonical value (a strict assert), or a strict program's calls
 * one by one. */
enum ee_judging { EE_JUDGE_SANDBOX, EE_JUDGE_IO, EE_JUDGE_VALUE, EE_JUDGE_PYEQ, EE_JUDGE_PYEQ_CALLS };

int ee_test_judging(const struct ee_test *t);

/* Whether a test's verdict is the supervisor's own (io, call, strict
 * assert) rather than reported from inside the sandbox. */
int ee_test_judged_by_supervisor(const struct ee_test *t);

/* Name of a kind/tier ("assert", "canonical", ...). */
const char *ee_test_kind_name(int kind);
const char *ee_tier_name(int tier);

/* ---- Samples --------------------------------------------------------------
 * One line of a samples file (docs/contract.md, "Samples"): a task_id and
 * exactly one of "completion" (HumanEval: the program is prompt + text),
 * "generation" (a free-form reply: code is extracted), "code" or "solution"
 * (EvalPlus's name; both a complete program, source EE_SAMPLE_CODE). A sample owns its strings and extra; ee_sample_free releases them
 * and accepts a zeroed sample.
 */
enum ee_sample_source { EE_SAMPLE_COMPLETION, EE_SAMPLE_GENERATION, EE_SAMPLE_CODE };

struct ee_sample {
	char *task_id; /* numbers become their decimal text */
	long index;    /* "sample", >= 0; -1 when absent (the caller numbers it) */
	char *model;   /* NULL when absent */
	int source;    /* enum ee_sample_source: which field text came from */
	char *text;    /* that field's value */
	json_t *extra; /* every other field, to copy to the record: an object
	                * (empty when there are none), owned reference */
};

/* Builds a sample from one JSON object. where = "file:line" for messages.
 * obj is borrowed. On error *ret is left zeroed. */
int ee_sample_from_json(const json_t *obj, const char *where, struct ee_sample *ret, struct ee_err *err);

void ee_sample_free(struct ee_sample *s);

/* Name of a source ("completion", "generation", "code"). */
const char *ee_sample_source_name(int source);

#endif
