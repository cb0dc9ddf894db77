/* eval.h - what `execeval eval`'s files share (eval.c parses and runs,
 * eval_outputs.c opens and writes what the run writes). Private to cli/.
 *
 * Lifecycle: cmd_eval fills a struct eval_args from the command line and
 * owns a struct eval_run for the run (eval.c's release frees it). */
#ifndef EE_CLI_EVAL_H
#define EE_CLI_EVAL_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "base/err.h"
#include "base/strmap.h"
#include "cli/cli.h"
#include "engine/samples.h"
#include "input/dataset.h"
#include "results/composite.h"

struct ee_engine;
struct ee_summary;

#define MAX_KS 32

struct eval_args {
	const char *tasks, *samples, *out, *summary_json;
	const char *model;   /* --model: for samples without one; NULL: none */
	const char *history; /* the history file, NULL: none */
	int no_history;
	json_t *argv; /* the command line as given, for the history */
	unsigned long jobs;
	unsigned long ks[MAX_KS];
	size_t nk;
	int resume, resume_anyway, skip_invalid, quiet, stop, humaneval_compat, force;
	int attempted_only;    /* --attempted-only: the tasks the samples attempt, only */
	char run_file[4096];   /* RESULTS.run.json */
	char compat_out[4096]; /* SAMPLES_results.jsonl, with --humaneval-compat */
	int composite;         /* --composite given: formula */
	struct ee_composite formula;
	unsigned long shard_i, shard_n;
	enum ee_extract_mode extract;
	struct ee_eval_options opt;
};

struct eval_run {
	const struct eval_args *a;
	struct ee_dataset tasks;
	size_t tasks_in_file;      /* tasks.n as loaded, before --attempted-only */
	struct ee_samples samples; /* read, filtered, evaluated; records back in order */
	struct ee_summary *summary;
	int out_fd;
	int write_failed;
	struct ee_err write_err;
	unsigned long total, finished, passed;
	struct cli_progress progress;
	struct ee_strmap models; /* the distinct model names seen, for the history */
	int models_full;
	time_t started;
	int created_out, created_run_file; /* this run made them: a failed start removes them */
	json_t *environment;               /* cli_eval_environment's, for the summary; owned */
};

/* -o names a regular file, or one to create (not /dev/null, a fifo): it
 * then has a run file and can be emptied. */
int cli_eval_results_is_a_file(const struct eval_args *a);
/* Before anything is read or written: no output is an input or another
 * output, none is a symlink (unless --force), each can be created, and
 * without --resume the results file holds no records (unless --force). */
int cli_eval_check_paths(const struct eval_args *a, struct ee_err *err);
/* Once the engine is open: the environment candidates run in (summary.h,
 * results/environment.h) into r->environment; a fresh run records the
 * interpreter's version and the packages' fingerprint in its run file,
 * and --resume warns when they differ from the run file's. */
void cli_eval_environment(struct eval_run *r, const struct ee_engine *eng);
/* After a start that failed before any record was written: the results
 * file and run file this run created are removed (a retry then finds no
 * empty file, and nothing that looks like a run). */
void cli_eval_unmake_results(const struct eval_run *r);
/* Opens the results file into r->out_fd and holds an exclusive lock on it
 * for the whole run (one writer per file); only then is it read (--resume:
 * its records into r->summary, its keys skipped by r->samples) or emptied;
 * its run file is checked or written. */
int cli_eval_open_results(struct eval_run *r, int *repaired, struct ee_err *err);
/* After a complete run of wall seconds: the summary (table, --summary-json),
 * the compat file, then the history (a failure there only warns). */
int cli_eval_finish(struct eval_run *r, const struct ee_engine *eng, double wall, struct ee_err *err);

#endif
