/* compose.h - the program to run for one sample of a task.
 *
 *   completion  HumanEval and native tasks: prompt + completion (the prompt
 *               is the function's signature); MBPP: the completion alone
 *               (its prompt is English). With stop, the completion is first
 *               cut at HumanEval's stop sequences ("\nclass", "\ndef", "\n#",
 *               "\nif", "\nprint").
 *   generation  a free-form reply: the program is extracted (extract.h).
 *   code        a complete program, as is.
 */
#ifndef EE_COMPOSE_H
#define EE_COMPOSE_H

#include "extract.h"

struct ee_err;
struct ee_sample;
struct ee_task;

/* *ret is malloc'd, owned by the caller. *ret_no_block is 1 when mode is
 * FENCED and the generation had no fenced block. */
int ee_compose_program(const struct ee_task *t, const struct ee_sample *s, enum ee_extract_mode mode,
                       int stop, char **ret, int *ret_no_block, struct ee_err *err);

#endif
