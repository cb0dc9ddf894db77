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

/* A task's optional "compare" (any format): the rule of its io tests
 * (task_rules.c). */
int ee_task_read_compare(const struct ee_jf *c, const json_t *obj, struct ee_task *t);

/* n zeroed tests, so ee_task_free can run at any point after. */
int ee_task_alloc_tests(const struct ee_jf *c, struct ee_task *t, size_t n);

/* The format parsers (task_formats.c): the fields of their format into t.
 * opts: EE_TASK_MBPP_CHALLENGE, ... */
int ee_task_parse_native(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_humaneval(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);
int ee_task_parse_mbpp(const struct ee_jf *c, const json_t *obj, unsigned opts, struct ee_task *t);

#endif
