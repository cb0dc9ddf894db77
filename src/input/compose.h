/* compose.h - the program to run for one sample of a task.
 *
 *   completion  HumanEval and native tasks: prompt + completion (the prompt
 *               is the function's signature); MBPP: the completion alone
 *               (its prompt is English). With stop, the completion is first
 *               cut at HumanEval's stop sequences ("\nclass", "\ndef", "\n#",
 *               "\nif", "\nprint").
 *   generation  a free-form reply: the program is extracted (extract.h),
 *               preferring the block that defines the task's entry point.
 *               When the task's prompt is code (HumanEval, native), its
 *               top-level import lines (column 0, "import X" or
 *               "from X import Y" on one line) that the extracted program
 *               lacks as a line are put before it (after any
 *               "from __future__" lines of the program): a chat answer
 *               often restates the function without the prompt's
 *               "from typing import List". Not under --extract none, nor on
 *               an empty program.
 *   code        a complete program, as is.
 */
#ifndef EE_COMPOSE_H
#define EE_COMPOSE_H

#include "input/extract.h"

struct ee_err;
struct ee_sample;
struct ee_task;

/* *ret is malloc'd, owned by the caller; *info says how it was composed
 * (its name is the record's "extraction"). */
int ee_compose(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode, int stop,
               char **ret, struct ee_extract_info *info, struct ee_err *err);

/* The generation text[0..len) of task t: extracted, then the prompt's
 * missing imports (above). run and serve take their candidates so. */
int ee_compose_generation(const struct ee_task *t, const char *text, size_t len, enum ee_extract_mode mode,
                          char **ret, struct ee_extract_info *info, struct ee_err *err);

/* The completion text of task t (above; stop: cut it first). run and
 * serve take a "completion" so, as eval takes a sample's. */
int ee_compose_completion(const struct ee_task *t, const char *text, int stop, char **ret,
                          struct ee_extract_info *info, struct ee_err *err);

/* ee_compose, reporting only whether FENCED found no block. */
int ee_compose_program(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode,
                       int stop, char **ret, int *ret_no_block, struct ee_err *err);

#endif
