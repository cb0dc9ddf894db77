/* record.h - the result record of one candidate (docs/record.md).
 *
 * Built from facts the supervisor established itself: the validated event
 * stream, the sandbox's outcome (clock, cgroup counters, wait status) and the
 * verdict decided from them (score.h). Candidate output appears only in the
 * stdout and stderr fields, sanitised and truncated.
 *
 * Every record shape is built here: a judged candidate's (ee_record_build),
 * a candidate whose sandbox could not be set up, and an invalid sample line
 * under eval --skip-invalid.
 */
#ifndef EE_RECORD_H
#define EE_RECORD_H

#include <jansson.h>

#define EE_RECORD_TEXT_CHARS 8000 /* of stdout and of stderr, each */

struct ee_task;
struct ee_stream;
struct ee_sandbox_outcome;
struct ee_reward;

/* Everything borrowed for the call. */
struct ee_record_parts {
	const struct ee_task *task;
	const struct ee_stream *stream;
	const struct ee_sandbox_outcome *out;
	const char *model;      /* NULL: absent */
	long sample;            /* -1: absent */
	json_t *extra;          /* sample fields to copy, or NULL (not modified) */
	int no_code_block;      /* --extract fenced found no block */
	const char *program;    /* the code that ran (its first bytes), or NULL: absent */
	const char *extraction; /* how it was found, or NULL: absent */
	const char *shard;      /* "I/N" of eval --shard, or NULL: absent */
	const char *sandbox_id;
	const char *backend; /* "gvisor"; NULL (native): absent */
	const char *started_at;
	int lint;                       /* the lint phase was asked for: the record has "lint" */
	int lint_severity;              /* enum ee_severity: lint fails at or above it */
	const struct ee_reward *reward; /* --reward; NULL or not custom: binary, unrecorded */
};

/* A new record (owned by the caller), or NULL when out of memory. */
json_t *ee_record_build(const struct ee_record_parts *parts);

/* The record of a candidate whose sandbox could not be set up, or whose
 * worker was lost twice (the host failed, not the candidate): {"task_id",
 * "sandbox_error", "reward": null, "infra_error": true, "execeval_version"};
 * a trainer masks it instead of punishing the model. NULL when out of memory. */
json_t *ee_record_sandbox_error(const char *task_id, const char *msg);

/* Marks a whole record as the host's failure, not the candidate's (a
 * timeout starved twice): "reward": null, "infra_error": true; its status
 * and detail stay what happened. */
void ee_record_mark_infra(json_t *rec);

/* The same for one sample of a data set (eval), with its key, so that a
 * results file holds it in the sample's place: "sample" (when >= 0),
 * "model" and "shard" (when not NULL) too. The sample's unknown fields
 * are not copied: one named "status" would claim a verdict. */
json_t *ee_record_sample_sandbox_error(const char *task_id, long sample, const char *model, const char *shard,
                                       const char *msg);

/* The error record of an invalid sample (eval --skip-invalid) at line of
 * the samples: task_id (the sample's own JSON string, copied; the caller
 * passes it only when it names a task of the data set, else NULL: null),
 * sample -line (unique per line, never a real index), "invalid", "line"
 * and message (why it is invalid). NULL when out of memory. */
json_t *ee_record_invalid_sample(const json_t *task_id, long line, const char *message);

/* Now, UTC, ISO 8601 with milliseconds. */
void ee_iso_now(char out[32]);

#endif
