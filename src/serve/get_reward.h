/* get_reward.h - OpenRLHF's remote reward model, POST /get_reward
 * (docs/api.md): its body read into runs, its records into its answer.
 *
 * OpenRLHF (--remote_rm_url http://HOST:PORT/get_reward) posts
 * {"query": [str], "prompts": [str], "labels": [...]}, one element of each
 * per sample: query is the prompt followed by the model's response, the
 * label the data set's --label_key column. Here a label carries the
 * sample's tests: a task in any format the server reads (native,
 * HumanEval, MBPP, the RL data sets'), as a JSON object or as a string
 * holding one; one without a "task_id" is named "labels[i]". The response
 * is the query with its prompt taken off its front (or, when the query
 * does not start with it, up to the prompt's first occurrence; when it
 * has none, the whole query), trailing end-of-sequence tokens dropped,
 * and is read as a generation: its code extracted as a /v1/run
 * "generation" is. Samples next to each other with the same label (a
 * GRPO group) share one task, parsed once.
 *
 * The answer is {"rewards": [float], "scores": [float], "extra_logs":
 * {key: [number]}} in sample order: rewards the records' "reward" (the
 * server's --reward), scores their "score" (0..1, what OpenRLHF's dynamic
 * filtering reads), every extra_logs list numeric and one per sample (so
 * OpenRLHF can concatenate and log them). A sample that could not be
 * judged (an infrastructure error: reward null) gets 0.0 for both and 1 in
 * extra_logs "infra_error": OpenRLHF needs a float and would punish the
 * model for the sandbox's failure with -1. "records": true in the body
 * adds the records themselves ("records": [...]).
 *
 * Bounds as a batch's (request.h): at most max_runs samples, max_tests
 * tests in one label, max_request_tests over all samples (a shared label
 * once per sample), max_values JSON values; -2 over one, naming the field.
 */
#ifndef EE_SERVE_GET_REWARD_H
#define EE_SERVE_GET_REWARD_H

#include <stddef.h>

#include "serve/request.h"

struct ee_err;

/* Reads body[0..len) into *ret, one run per sample; *records: the body
 * asked for the records too. 0; -1 for a malformed body; -2 over a bound
 * (err->field names the field). */
int ee_get_reward_parse(const char *body, size_t len, const struct ee_request_rules *rules,
                        struct ee_request *ret, int *records, struct ee_err *err);

/* The answer (malloc'd JSON text, *len its length) from the n records'
 * texts; NULL when out of memory or a text is not a record. */
char *ee_get_reward_answer(char *const *texts, const size_t *lens, size_t n, int records, size_t *len);

#endif
