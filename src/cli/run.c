/* run.c - `execeval run`: evaluate one candidate, print one record. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/err.h"
#include "base/loop.h"
#include "input/compose.h"
#include "input/dataset.h"
#include "engine/engine.h"
#include "engine/reference.h"
#include "input/extract.h"
#include "base/jsonfield.h"
#include "sandbox/sandbox.h"
#include "input/task.h"

#define MAX_CANDIDATE (16u << 20)
#define MAX_ASSERTS   1024
#define COUNT(a)      (sizeof(a) / sizeof((a)[0]))

static const char usage_head[] =
        "usage: execeval run [OPTIONS] [CANDIDATE]\n"
        "  CANDIDATE            a file, or - / absent for standard input\n"
        "  --task FILE          a task: one JSON object, or a tasks file (JSON Lines or a\n"
        "                       JSON array; native, HumanEval or MBPP)\n"
        "  --task-id ID         the task of a tasks file to run (needed when it holds\n"
        "                       more than one)\n"
        "  --assert 'STMT'      an assertion, one test each (repeatable)\n"
        "  --completion FILE    instead of CANDIDATE: the rest of the task's prompt, run\n"
        "                       as prompt + completion (- for standard input)\n"
        "  --stop               cut the completion at HumanEval's stop sequences\n";
static const char usage_tail[] = "  --model NAME         copied into the record\n";

struct run_args {
	const char *task_file;
	const char *task_id; /* picks one task of task_file */
	const char *asserts[MAX_ASSERTS];
	size_t n_asserts;
	const char *candidate;
	const char *completion; /* --completion FILE, instead of candidate */
	int stop;
	const char *model;
	enum ee_extract_mode extract;
	struct ee_eval_options opt;
};

static int parse_args(int argc, char **argv, struct run_args *a, struct ee_err *err)
{
	enum { O_TASK = 256, O_TASK_ID, O_ASSERT, O_COMPLETION, O_STOP, O_MODEL, O_HELP };
	static const struct option own[] = {
		{ "task", required_argument, NULL, O_TASK },
		{ "task-id", required_argument, NULL, O_TASK_ID },
		{ "assert", required_argument, NULL, O_ASSERT },
		{ "completion", required_argument, NULL, O_COMPLETION },
		{ "stop", no_argument, NULL, O_STOP },
		{ "model", required_argument, NULL, O_MODEL },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[EE_OPTIONS_MAX + COUNT(own)];
	struct ee_option_sink sink = { &a->opt, &a->extract };
	int c;

	ee_options_getopt(own, EE_FRONT_RUN, longopts, COUNT(longopts));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case O_TASK: a->task_file = optarg; break;
		case O_TASK_ID: a->task_id = optarg; break;
		case O_ASSERT:
			if (a->n_asserts == MAX_ASSERTS)
				return ee_fail(err, EE_ERR_USAGE, "--assert: more than %d", MAX_ASSERTS);
			a->asserts[a->n_asserts++] = optarg;
			break;
		case O_COMPLETION: a->completion = optarg; break;
		case O_STOP: a->stop = 1; break;
		case O_MODEL: a->model = optarg; break;
		case 'h':
		case O_HELP: cli_usage(usage_head, EE_FRONT_RUN, 23, usage_tail); exit(EXIT_PASS);
		default:
			if (ee_option_of_code(c)) {
				rc = ee_option_set(ee_option_of_code(c), optarg, &sink, err);
				break;
			}
			return ee_fail(err, EE_ERR_USAGE,
			               "unknown or incomplete option '%s' (see execeval run --help)",
			               argv[optind - 1]);
		}
		if (rc < 0)
			return -1;
	}
	if (optind < argc - 1)
		return ee_fail(err, EE_ERR_USAGE, "one candidate at most, got '%s' and '%s'", argv[optind],
		               argv[optind + 1]);
	a->candidate = optind < argc ? argv[optind] : NULL;
	if (a->completion && a->candidate)
		return ee_fail(err, EE_ERR_USAGE, "give a CANDIDATE or --completion FILE, not both");
	if (a->stop && !a->completion)
		return ee_fail(err, EE_ERR_USAGE, "--stop cuts a --completion FILE");
	if (!a->task_file == !a->n_asserts)
		return ee_fail(err, EE_ERR_USAGE, "give either --task FILE or at least one --assert");
	if (a->task_id && !a->task_file)
		return ee_fail(err, EE_ERR_USAGE, "--task-id ID picks a task of --task FILE");
	return 0;
}

/* The message for an unknown --task-id: the nearest id when one is close,
 * else the first few ids of the file. */
static int no_such_task(const struct run_args *a, const struct ee_dataset *d, struct ee_err *err)
{
	const char **ids = malloc(d->n * sizeof(*ids));
	const char *near;
	char some[160] = "";
	size_t len = 0;

	if (!ids)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", a->task_file);
	for (size_t i = 0; i < d->n; i++)
		ids[i] = d->entries[i].task.task_id;
	near = ee_nearest_name(a->task_id, ids, d->n);
	for (size_t i = 0; i < d->n && i < 3 && len < sizeof(some); i++)
		len += (size_t)snprintf(some + len, sizeof(some) - len, "%s'%.40s'", i ? ", " : "", ids[i]);
	if (near)
		ee_fail(err, EE_ERR_USAGE, "--task-id: no task '%.100s' in %.200s; did you mean '%.100s'?",
		        a->task_id, a->task_file, near);
	else
		ee_fail(err, EE_ERR_USAGE, "--task-id: no task '%.100s' in %.200s (its %zu tasks: %s%s)",
		        a->task_id, a->task_file, d->n, some, d->n > 3 ? ", ..." : "");
	free(ids);
	return -1;
}

/* Moves the task --task-id names (or the file's only task) out of d. */
static int pick_task(const struct run_args *a, struct ee_dataset *d, struct ee_task *t, struct ee_err *err)
{
	struct ee_dataset_entry *e = d->n == 1 ? &d->entries[0] : NULL;

	if (a->task_id)
		e = ee_dataset_find(d, a->task_id);
	if (!e && a->task_id)
		return no_such_task(a, d, err);
	if (!e)
		return ee_fail(err, EE_ERR_USAGE,
		               "--task %.200s holds %zu tasks: pick one with --task-id ID (e.g. --task-id "
		               "'%.100s')",
		               a->task_file, d->n, d->entries[0].task.task_id);
	*t = e->task;
	memset(&e->task, 0, sizeof(e->task)); /* t owns it now */
	return 0;
}

/* Whether the file's first byte but white space is '{'. */
static int opens_an_object(const char *path)
{
	FILE *f = fopen(path, "re");
	int ch = EOF;

	if (!f)
		return 0;
	do
		ch = getc(f);
	while (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n');
	fclose(f);
	return ch == '{';
}

/* A task file that is one JSON object over several lines (as
 * examples/tasks/add.json): not a tasks file's JSON Lines. -1 keeps err
 * (the tasks file's message) unless the file is such an object, or a
 * broken one (then err says where it breaks). */
static int read_one_object(const struct run_args *a, struct ee_task *t, struct ee_err *err)
{
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];
	json_t *obj = json_load_file(a->task_file, JSON_REJECT_DUPLICATES, &jerr);
	char where[300];
	int rc = -1;

	if (!obj) {
		json_t *first =
		        json_load_file(a->task_file, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr);
		/* not even one JSON value (line -1: unreadable); but a file that
		 * opens no object (a CSV file) keeps the tasks file's message */
		if (!first && jerr.line > 0 && opens_an_object(a->task_file))
			ee_fail(err, EE_ERR_USAGE, "%s:%d:%d: %s", a->task_file, jerr.line, jerr.column,
			        ee_jf_error_text(&jerr, jtext));
		json_decref(first);
		return -1;
	}
	snprintf(where, sizeof(where), "%.280s:1", a->task_file);
	if (json_is_object(obj))
		rc = ee_task_from_json(obj, cli_task_format(EE_FORMAT_AUTO, &a->opt), where, t, err);
	json_decref(obj);
	if (rc == 0 && a->task_id && strcmp(t->task_id, a->task_id) != 0) {
		ee_fail(err, EE_ERR_USAGE, "--task-id: no task '%.100s' in %.200s (its one task is '%.100s')",
		        a->task_id, a->task_file, t->task_id);
		ee_task_free(t);
		return -1;
	}
	return rc;
}

/* --task FILE: a tasks file of any format (JSON Lines or a JSON array of
 * native, HumanEval or MBPP tasks; --task-id picks one), or one task
 * object. */
static int read_task(const struct run_args *a, struct ee_task *t, struct ee_err *err)
{
	struct ee_dataset d;

	if (!a->task_file)
		return ee_task_from_asserts(a->asserts, a->n_asserts, t, err);
	if (ee_dataset_load(a->task_file, cli_task_format(EE_FORMAT_AUTO, &a->opt), &d, err) < 0)
		return read_one_object(a, t, err);
	int rc = pick_task(a, &d, t, err);
	ee_dataset_free(&d);
	return rc;
}

static int load_task(const struct run_args *a, struct ee_task *t, struct ee_err *err)
{
	if (read_task(a, t, err) < 0)
		return -1;
	if (cli_prepare_task(t, &a->opt, err) < 0) {
		ee_task_free(t);
		return -1;
	}
	return 0;
}

static void print_record(void *ctx, json_t *record)
{
	json_t **slot = ctx;
	*slot = record;
}

static int exit_code_of(const json_t *rec)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	if (!status)
		return EXIT_SANDBOX;
	return strcmp(status, "pass") == 0 ? EXIT_PASS : EXIT_NOT_PASS;
}

static int evaluate(struct run_args *a, struct ee_task *task, const char *program,
                    const struct ee_extract_info *how)
{
	char extraction[EE_EXTRACTION_NAME_MAX];
	struct ee_engine_config ecfg = { .opt = &a->opt, .workers = 1 };
	struct ee_engine *eng = NULL;
	struct ee_err err = { 0 };
	json_t *record = NULL;
	int code = EXIT_SANDBOX;

	if (ee_engine_open(&ecfg, &eng, &err) < 0)
		goto out;
	int made = ee_reference_prepare(eng, &a->opt, task, &err);
	if (made != 0) { /* the task's reference or generator failed: the task's error */
		code = made > 0 ? 128 + made : err.code == EE_ERR_USAGE ? EXIT_USAGE : EXIT_SANDBOX;
		if (code == EXIT_USAGE)
			fprintf(stderr, "execeval run: %s\n", err.msg);
		goto out;
	}
	ee_extraction_name(how, extraction, sizeof(extraction));
	struct ee_candidate cand = { .task = task,
		                     .program = program,
		                     .model = a->model,
		                     .sample = 0,
		                     .no_code_block = how->how == EE_HOW_NO_BLOCK,
		                     .extraction = extraction };
	if (ee_eval_start(eng, &a->opt, &cand, print_record, &record, &err) < 0)
		goto out;
	int sig = ee_loop_run(ee_engine_loop(eng), &err);
	if (sig != 0) {
		if (sig > 0)
			fprintf(stderr, "execeval: interrupted by signal %d; sandbox removed\n", sig);
		code = sig > 0 ? 128 + sig : EXIT_SANDBOX;
		goto out;
	}
	const char *setup_error = json_string_value(json_object_get(record, "sandbox_error"));
	if (setup_error) {
		snprintf(err.msg, sizeof(err.msg), "sandbox setup failed: %s", setup_error);
		goto out;
	}
	char *line = json_dumps(record, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	if (line) {
		puts(line);
		free(line);
	}
	code = exit_code_of(record);
	if (json_is_true(json_object_get(record, "infra_error"))) {
		code = EXIT_SANDBOX; /* printed: what happened; not the candidate's verdict */
		snprintf(err.msg, sizeof(err.msg),
		         "the host starved the candidate of CPU twice (its timeout is the busy "
		         "machine's, not the candidate's: reward null); run it on a quieter host");
	}
out:
	if (code == EXIT_SANDBOX && err.msg[0])
		fprintf(stderr, "execeval: %s\n", err.msg);
	json_decref(record);
	ee_engine_close(eng);
	return code;
}

/* The program: the completion after the task's prompt, or the candidate
 * as a program or a generation (compose.h). */
static int compose(const struct run_args *a, const struct ee_task *task, const char *text, size_t len,
                   char **program, struct ee_extract_info *how, struct ee_err *err)
{
	if (a->completion)
		return ee_compose_completion(task, text, a->stop, program, how, err);
	return ee_compose_generation(task, text, len, a->extract, program, how, err);
}

int cmd_run(int argc, char **argv)
{
	struct run_args a;
	struct ee_task task;
	struct ee_err err = { 0 };
	char *text = NULL, *program = NULL;
	size_t len = 0;
	struct ee_extract_info how;
	int code = EXIT_USAGE;

	memset(&a, 0, sizeof(a));
	memset(&task, 0, sizeof(task));
	/* isolation cold: one candidate, a worker would only add its warm-up */
	ee_options_defaults(EE_FRONT_RUN, &(struct ee_option_sink){ &a.opt, &a.extract });
	if (parse_args(argc, argv, &a, &err) < 0 || load_task(&a, &task, &err) < 0 ||
	    cli_read_file(a.completion ? a.completion : a.candidate, MAX_CANDIDATE, &text, &len, &err) < 0 ||
	    compose(&a, &task, text, len, &program, &how, &err) < 0) {
		fprintf(stderr, "execeval run: %s\n", err.msg);
		goto out;
	}
	cli_clamp_limits("run", &a.opt.limits);
	code = evaluate(&a, &task, program, &how);
out:
	free(text);
	free(program);
	ee_task_free(&task);
	return code;
}
