/* samples_dir.h - EvalPlus's samples directory as a stream of samples.
 *
 * EvalPlus writes one program per file: DIR/<task_id with '/' replaced by
 * '_'>/<n>.py, sample n of that task, each file a complete program (its
 * "solution"). The directory is listed and checked whole before anything
 * runs: every subdirectory must name a task of the tasks file and every file
 * in it must be <digits>.py, else an error names the path; two files with
 * one index (1.py, 01.py) are an error naming both. Samples come in a
 * fixed order, subdirectory name then n numerically, whatever order the
 * file system lists them in.
 *
 * The sha256 of a directory, what --resume compares, is over that ordered
 * list: for each file its path below DIR, a NUL, its size in decimal, a
 * NUL, then its bytes.
 *
 * Lifecycle: ee_samples_dir_open, ee_samples_dir_next until it returns 0,
 * ee_samples_dir_free (accepts a zeroed or failed one).
 */
#ifndef EE_SAMPLES_DIR_H
#define EE_SAMPLES_DIR_H

#include <jansson.h>
#include <stddef.h>

#include "base/sha256.h"

struct ee_err;
struct ee_dataset;

struct ee_samples_dir_file {
	char *name;          /* "HumanEval_0/3.py", below the directory */
	size_t task_len;     /* of the subdirectory part of name */
	long index;          /* n */
	const char *task_id; /* borrowed from the tasks; NULL when not checked */
};

struct ee_samples_dir {
	char root[4096];
	struct ee_samples_dir_file *files; /* in sample order */
	size_t n, next;
	struct ee_sha256 sha; /* of the files given so far */
	char where[4352];     /* the path of the last file given, for messages */
};

/* 1 when path is a directory (a samples directory, not a JSONL file). */
int ee_samples_dir_is(const char *path);

/* Lists and checks root; tasks (NULL: not checked) maps subdirectories to
 * task_ids. */
int ee_samples_dir_open(struct ee_samples_dir *d, const char *root, const struct ee_dataset *tasks,
                        struct ee_err *err);

/* The next file as a sample {"task_id", "solution", "sample"} in *ret (a new
 * reference): 1; 0 at the end; -2 when this file is unusable (larger than
 * the cap, not UTF-8: err names it; the next call goes on); -1 when it
 * cannot be read. d->where names the file. */
int ee_samples_dir_next(struct ee_samples_dir *d, json_t **ret, struct ee_err *err);

/* The sha256 (hex) of the files given so far: of the whole directory at
 * the end. */
void ee_samples_dir_sha256(const struct ee_samples_dir *d, char out[EE_SHA256_HEX]);

/* The sha256 of the whole directory (for RESULTS.run.json), reading it all. */
int ee_samples_dir_sha256_of(const char *root, char out[EE_SHA256_HEX], struct ee_err *err);

void ee_samples_dir_free(struct ee_samples_dir *d);

#endif
