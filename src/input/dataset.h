/* dataset.h - a tasks file loaded whole, looked up by task_id.
 *
 * Accepts JSON Lines (one task object per line; blank lines skipped) or one
 * JSON array of task objects (sanitized MBPP ships so), gzip-compressed or
 * not, from a file or a pipe (lines.h). Every task goes
 * through ee_task_from_json, so errors name "file:line: field: ...". A
 * duplicate task_id is an error naming both lines. The set owns its tasks.
 */
#ifndef EE_DATASET_H
#define EE_DATASET_H

#include <stddef.h>

#include "input/task.h"

struct ee_err;

struct ee_dataset_entry {
	struct ee_task task;
	long line;          /* where it was defined (array: element index + 1) */
	unsigned long seen; /* samples met so far: the next implicit sample index */
};

struct ee_dataset {
	struct ee_dataset_entry *entries; /* sorted by task_id */
	size_t n;
};

int ee_dataset_load(const char *path, int format, struct ee_dataset *ret, struct ee_err *err);
void ee_dataset_free(struct ee_dataset *d);

/* The entry of task_id, or NULL. */
struct ee_dataset_entry *ee_dataset_find(const struct ee_dataset *d, const char *task_id);

/* The entry a sample's task_id names: its own; else, for EvalPlus's MBPP
 * ids ("Mbpp/11"), MBPP's task of that number ("11") when the tasks file
 * holds it in MBPP's format (mbpp.jsonl, sanitized MBPP). NULL when none. */
struct ee_dataset_entry *ee_dataset_find_sample(const struct ee_dataset *d, const char *task_id);

#endif
