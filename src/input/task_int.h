/* task_int.h - what task.c, task_formats.c and sample.c share. Not a public
 * header: everyone else goes through task.h. */
#ifndef EE_TASK_INT_H
#define EE_TASK_INT_H

#include <stddef.h>

#include "base/jsonfield.h"
#include "input/task.h"

/* The context of a task or sample read at where ("input" when NULL). */
struct ee_jf ee_task_ctx(const char *where, struct ee_err *err);

/* Fails "where: expected a JSON object, got T" unless obj is an object. */
int ee_task_check_object(const struct ee_jf *c, const json_t *obj);

/* names[i], or "unknown" out of range. */
const char *ee_task_name_of(const char *const *names, size_t n, int i);

/* A test of kind with the defaults: canonical tier, weight 1, no tolerance. */
void ee_test_init(struct ee_test *t, int kind, int hidden);

/* Releases what one test holds (not the test itself). */
void ee_test_free(struct ee_test *t);

/* A task's optional "compare" (any format), else its format's default:
 * the rule of its io tests (task_rules.c). t->format is set. */
int ee_task_read_compare(const struct ee_jf *c, const json_t *obj, struct ee_task *t);

/* n zeroed tests, so ee_task_free can run at any point after. */
int ee_task_alloc_tests(const struct ee_jf *c, struct ee_task *t, size_t n);

/* The format parsers (task_formats.c): the fields of their format into t.
 * opts: EE_TASK_MBPP_CHALLENGE, ... */
int ee_task_parse_native(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_humaneval(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_mbpp(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);

/* A native task's reference, generate, n_generated, generated_tier and
 * generated_float_tol into t->gen (generated.c); none of them: t->gen
 * stays NULL. t->entry_point must be set already. */
int ee_task_parse_gen(const struct ee_jf *c, const json_t *obj, struct ee_task *t);
/* Frees t->gen and sets it NULL. */
void ee_task_gen_free(struct ee_task *t);

/* The RL data sets' rows (formats_rl.c, formats_lcb.c; docs/formats.md):
 * every test an io or a call test, judged by the supervisor. */
int ee_task_parse_apps(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_codecontests(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_verl(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_lcb(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_openr1(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
/* EvalPlus's HumanEval+ and MBPP+ rows (evalplus.c): no tests of their
 * own, given inputs in t->gen for the reference step. */
int ee_task_parse_evalplus(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_prime(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);

/* What the RL parsers share (formats_rl.c). */

/* obj[key] as a JSON value: a string is parsed as the JSON it holds (the
 * data sets store tests so), anything else is taken as it is. A new
 * reference in *ret; NULL when absent and not required. */
int ee_rl_json_field(const struct ee_jf *c, const json_t *obj, const char *key, int required, json_t **ret);

/* JSON text s[0..n) parsed, errors naming field: "field: not JSON: ...". */
int ee_rl_parse_json(const struct ee_jf *c, const char *field, const char *s, size_t n, json_t **ret);

/* Newline-separated JSON values (LiveCodeBench's and verl's call inputs)
 * as an argument array; blank lines are skipped. */
int ee_rl_json_lines(const struct ee_jf *c, const char *field, const json_t *text, json_t **ret);

/* A call test of fn on args (stolen) expecting expected (stolen), a
 * method of a fresh method_of() when method_of is not NULL. */
int ee_rl_call_test(const struct ee_jf *c, struct ee_test *test, int hidden, const char *fn,
                    const char *method_of, json_t *args, json_t *expected);

/* A test case object's "input" and "output" strings (borrowed), both
 * required (LiveCodeBench, open-r1). */
int ee_rl_case_texts(const struct ee_jf *c, const json_t *tc, const char **in, const char **out);

/* An io test: stdin and expected stdout copied. */
int ee_rl_io_test(const struct ee_jf *c, struct ee_test *test, int hidden, const char *in, const char *out);

/* "Solution" when starter_code (a string, may be absent) defines
 * `class Solution` (LeetCode style), else NULL. */
const char *ee_rl_method_class(const json_t *obj);

/* entry_point for the extraction: fn, or the class its method is in. */
int ee_rl_entry_point(const struct ee_jf *c, struct ee_task *t, const char *fn, const char *method_of);

#endif
