/* outpath.h - output files that cannot destroy an input.
 *
 * The subcommands write files named on the command line (eval's results,
 * summary and compat files, merge -o, report -o, metrics --json). Before
 * anything runs, ee_outputs_check compares every output with every input and
 * with every other output by identity (st_dev, st_ino, symlinks resolved; an
 * output not yet there is its directory's identity and its name), refuses an
 * output that is a symbolic link unless force, and checks that each output's
 * directory exists and is writable. Files written whole (summaries, reports,
 * the compat file) go through struct ee_atomic: a temporary file in the
 * target's directory, renamed over the target, so a failure never leaves a
 * half file and a reader never sees one.
 *
 * Paths are borrowed for each call. Errors are EE_ERR_USAGE and name the flag
 * and the file.
 */
#ifndef EE_OUTPATH_H
#define EE_OUTPATH_H

#include <stddef.h>

struct ee_err;

/* One file of the command line: its flag ("--samples", "-o") and its path
 * ("-" for an input: standard input). */
struct ee_path_role {
	const char *flag;
	const char *path;
};

/* 0 when no output is an input or another output, none is a symlink
 * (unless force) or a directory, and every output's directory exists and is
 * writable; else -1 and err says which. An input that cannot be stat'ed is
 * left for its reader to report. */
int ee_outputs_check(const struct ee_path_role *inputs, size_t n_in, const struct ee_path_role *outputs,
                     size_t n_out, int force, struct ee_err *err);

/* open(2) for an output: O_NOFOLLOW unless force, close-on-exec, 0644. */
int ee_output_open(const char *path, int flags, int force, struct ee_err *err);

/* A file being written whole. The owner calls ee_atomic_commit or
 * ee_atomic_abort exactly once after a successful ee_atomic_begin. */
struct ee_atomic {
	int fd;            /* the temporary file, write-only */
	char tmp[4096];    /* its path */
	char target[4096]; /* where commit renames it */
	int direct;        /* the target is not a regular file (a fifo, a tty): fd is it */
};

/* Creates the temporary file beside path (beside the link's target when
 * path is a symlink and force; a symlink without force is refused). */
int ee_atomic_begin(struct ee_atomic *a, const char *path, int force, struct ee_err *err);
/* fsyncs, closes and renames over the target. */
int ee_atomic_commit(struct ee_atomic *a, struct ee_err *err);
/* Closes and removes the temporary file. */
void ee_atomic_abort(struct ee_atomic *a);
/* begin, write len bytes of data, commit. */
int ee_write_atomic(const char *path, const char *data, size_t len, int force, struct ee_err *err);

#endif
