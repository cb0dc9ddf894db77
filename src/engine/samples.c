/* samples.c - the samples of an eval run, in and out (samples.h).
 *
 * One pass over the input: next_object gives each non-blank sample as JSON,
 * read_sample makes it a numbered sample of a task and decides whether this
 * run evaluates it, ee_samples_next composes the kept ones into candidates
 * and turns invalid ones into error records. Every one of those takes a
 * reorder ticket as it is read, so records reach the sink in input order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/jsonfield.h"
#include "engine/samples.h"
#include "engine/engine.h"

#include "base/err.h"
#include "engine/scheduler.h"
#include "input/compose.h"
#include "input/dataset.h"
#include "input/input.h"
#include "verdict/record.h"

#define MAX_SAMPLE_LINE (64u << 20)
/* Records finished out of order wait for the ones before them: at most this
 * many per job and this many bytes of lines; then no sample is read until
 * the oldest evaluation in flight is done (reorder.h). 256 per job cover a
 * 3 s timeout at the head while the other jobs run fast samples; the bytes
 * bound many jobs or big records. */
#define HELD_PER_JOB 256
#define HELD_BYTES   (32u << 20)

/* Counts what the caller's sink is given (ee_samples_some_evaluated). */
static void to_sink(void *ctx, json_t *rec, const char *line, size_t len)
{
	struct ee_samples *s = ctx;
	s->n.records++;
	s->cfg.sink(s->cfg.ctx, rec, line, len);
}

int ee_samples_open(struct ee_samples *s, const struct ee_samples_config *cfg, struct ee_err *err)
{
	s->cfg = *cfg;
	s->shard[0] = '\0'; /* --shard 0/1 is the whole run: no shard */
	if (cfg->shard_n > 1)
		snprintf(s->shard, sizeof(s->shard), "%lu/%lu", cfg->shard_i, cfg->shard_n);
	ee_reorder_init(&s->order, (cfg->jobs ? cfg->jobs : 1) * (size_t)HELD_PER_JOB, HELD_BYTES, to_sink,
	                s);
	s->from_dir = ee_samples_dir_is(cfg->path);
	if (s->from_dir)
		return ee_samples_dir_open(&s->dir, cfg->path, cfg->tasks, err);
	return ee_lines_open(&s->lines, cfg->path, MAX_SAMPLE_LINE, err);
}

int ee_samples_resume(struct ee_samples *s, const char *results, ee_record_visit visit, void *ctx,
                      int *ret_repaired, struct ee_err *err)
{
	return ee_results_resume(results, &s->done, visit, ctx, ret_repaired, err);
}

int ee_samples_is_file(const char *path)
{
	struct stat st;
	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The non-empty lines of a regular file (decompressed): a reading of its
 * own, the samples stream is read once. 0: unknown. */
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

unsigned long ee_samples_expected(const struct ee_samples *s)
{
	unsigned long n = s->from_dir                       ? s->dir.n
	                  : ee_samples_is_file(s->cfg.path) ? count_lines(s->cfg.path)
	                                                    : 0;
	if (s->cfg.shard_n > 1)
		n = (n + s->cfg.shard_n - 1) / s->cfg.shard_n; /* about */
	return n;
}

/* ---- reading ------------------------------------------------------------ */

static uint64_t fnv1a(const char *str, long sample)
{
	uint64_t h = 1469598103934665603ull;
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 1099511628211ull;
	for (int i = 0; i < 8; i++)
		h = (h ^ (unsigned char)(sample >> (8 * i))) * 1099511628211ull;
	return h;
}

/* The next non-blank sample as a JSON object in *obj, s->where naming it:
 * 1; 0 at the end; -2 an unusable one (err says why: skip_invalid may go
 * on); -1 the input failed. */
static int next_object(struct ee_samples *s, json_t **obj, struct ee_err *err)
{
	json_error_t jerr;
	int rc;

	*obj = NULL;
	if (s->from_dir) {
		rc = ee_samples_dir_next(&s->dir, obj, err);
		s->line_no = (long)s->dir.next;
		snprintf(s->where, sizeof(s->where), "%s", s->dir.where);
		return rc;
	}
	do {
		rc = ee_lines_next(&s->lines, err);
		s->line_no = (long)s->lines.line_no;
	} while (rc == 1 && ee_lines_blank(&s->lines));
	snprintf(s->where, sizeof(s->where), "%.480s:%ld", s->lines.in.name, s->line_no);
	if (rc != 1)
		return rc;
	*obj = json_loadb(s->lines.line.data, s->lines.line.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*obj)
		return ee_lines_json_error(&s->lines, "samples", &jerr, err), -2;
	return 1;
}

/* One sample per (task_id, sample) key in the file: a repeat would be
 * judged and counted twice. */
static int check_repeat(struct ee_samples *s, struct ee_err *err)
{
	long first = ee_keys_seen(&s->keys, s->sample.task_id, s->sample.index, (unsigned long)s->line_no);
	if (first < 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", s->where);
	if (first > 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: sample (%.100s, %ld) repeats line %ld", s->where,
		               s->sample.task_id, s->sample.index, first);
	return 0;
}

/* obj into s->sample; 1 = use it, 0 = skip it, -1 = invalid, -2 = the
 * samples file is wrong (a repeated key): stop, whatever skip_invalid. */
static int read_sample(struct ee_samples *s, const json_t *obj, struct ee_dataset_entry **ret,
                       struct ee_err *err)
{
	const struct ee_samples_config *cfg = &s->cfg;

	ee_sample_free(&s->sample);
	if (ee_sample_from_json(obj, s->where, &s->sample, err) < 0)
		return -1;
	if (!s->sample.model && cfg->model && !(s->sample.model = strdup(cfg->model)))
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (cfg->note_model && cfg->note_model(cfg->ctx, s->sample.model, err) < 0)
		return -1;
	struct ee_dataset_entry *e = ee_dataset_find_sample(cfg->tasks, s->sample.task_id);
	if (!e)
		return ee_fail(err, EE_ERR_USAGE, "%s: task_id: '%.100s' is not in %s", s->where,
		               s->sample.task_id, cfg->tasks_path);
	if (strcmp(e->task.task_id, s->sample.task_id) != 0) { /* EvalPlus's Mbpp/N: the record says N */
		char *id = strdup(e->task.task_id);
		if (!id)
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
		free(s->sample.task_id);
		s->sample.task_id = id;
	}
	unsigned long position = e->seen++;
	if (s->sample.index < 0)
		s->sample.index = (long)position;
	*ret = e;
	if (check_repeat(s, err) < 0)
		return -2;
	if (cfg->shard_n > 1 && fnv1a(s->sample.task_id, s->sample.index) % cfg->shard_n != cfg->shard_i) {
		s->n.other_shard++;
		return 0;
	}
	if (ee_done_contains(&s->done, s->sample.task_id, s->sample.index)) {
		s->n.skipped++;
		return 0;
	}
	return 1;
}

/* The task_id an invalid line's record carries: NULL unless it names a task
 * of the tasks file (an unknown id must not become a task of its own). */
static const json_t *known_task_id(const struct ee_samples *s, const json_t *obj)
{
	json_t *id = obj ? json_object_get(obj, "task_id") : NULL;
	const char *text = json_string_value(id);
	return text && ee_dataset_find(s->cfg.tasks, text) ? id : NULL;
}

/* An invalid sample under skip_invalid: an error record in its place (one
 * a resumed run wrote already is skipped like any other). */
static int invalid_sample(struct ee_samples *s, const json_t *obj, const struct ee_err *why,
                          struct ee_err *err)
{
	const json_t *id = known_task_id(s, obj);
	uint64_t ticket;

	if (ee_done_contains(&s->done, id ? json_string_value(id) : "", -s->line_no)) {
		s->n.skipped++;
		return 0;
	}
	json_t *rec = ee_record_invalid_sample(id, s->line_no, why->msg);
	if (!rec || ee_reorder_ticket(&s->order, &ticket) < 0) {
		json_decref(rec);
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", s->where);
	}
	s->n.invalid++;
	if (!s->n.first_invalid)
		s->n.first_invalid = s->line_no;
	ee_samples_done(s, ticket, rec);
	return 0;
}

/* The next sample to evaluate into *c: as ee_samples_next, no ticket yet. */
static int next_candidate(struct ee_samples *s, struct ee_candidate *c, struct ee_err *err)
{
	const struct ee_samples_config *cfg = &s->cfg;
	json_t *obj;
	int got;

	while (!ee_reorder_full(&s->order) && (got = next_object(s, &obj, err)) != 0) {
		struct ee_dataset_entry *e = NULL;
		int rc = got == 1 ? read_sample(s, obj, &e, err) : -1;
		int fatal = got == -1 || rc == -2; /* the file, not this sample, is wrong */
		struct ee_extract_info how = { 0 };
		free(s->program);
		s->program = NULL;
		if (rc == 1 &&
		    ee_compose(&e->task, &s->sample, cfg->extract, cfg->stop, &s->program, &how, err) < 0)
			rc = -1;
		s->n.lines++;
		ee_extraction_name(&how, s->extraction, sizeof(s->extraction));
		if (rc < 0 && !fatal && cfg->skip_invalid) {
			struct ee_err why = *err;
			if (invalid_sample(s, obj, &why, err) < 0) {
				json_decref(obj);
				return -1;
			}
			rc = 0;
		}
		json_decref(obj);
		if (rc < 0) {
			s->failed = 1;
			return -1;
		}
		if (rc == 0)
			continue;
		*c = (struct ee_candidate){ .task = &e->task,
			                    .program = s->program,
			                    .model = s->sample.model,
			                    .sample = s->sample.index,
			                    .extra = s->sample.extra,
			                    .no_code_block = how.how == EE_HOW_NO_BLOCK,
			                    .extraction = s->extraction,
			                    .shard = s->shard[0] ? s->shard : NULL };
		return 1;
	}
	return ee_reorder_full(&s->order) ? EE_SCHED_WAIT : 0;
}

int ee_samples_next(struct ee_samples *s, struct ee_candidate *c, uint64_t *ticket, struct ee_err *err)
{
	if (s->sandbox_failed) {
		*err = s->sandbox_err;
		return -1;
	}
	if (s->breaker && s->breaker->tripped)
		return ee_fail(err, EE_ERR_BREAKER, "%s", s->breaker->why);
	int rc = next_candidate(s, c, err);
	if (rc != 1)
		return rc;
	if (ee_reorder_ticket(&s->order, ticket) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 1;
}

void ee_samples_done(struct ee_samples *s, uint64_t ticket, json_t *rec)
{
	size_t len = 0;

	if (rec && json_object_get(rec, "sandbox_error")) {
		/* The host failed, not the candidate (it was retried once on a
		 * fresh sandbox): the sample's infrastructure error, recorded. A
		 * run of them means the host is broken: no new sandboxes, and the
		 * run ends with that error (records kept, --resume goes on). */
		s->n.infra++;
		if (++s->infra_in_a_row >= EE_SAMPLES_INFRA_STOP && !s->sandbox_failed) {
			ee_fail(&s->sandbox_err, EE_ERR_SANDBOX,
			        "sandbox setup failed for %u samples in a row (last: %.160s)",
			        EE_SAMPLES_INFRA_STOP,
			        json_string_value(json_object_get(rec, "sandbox_error")));
			s->sandbox_failed = 1;
		}
	} else if (rec) {
		s->infra_in_a_row = 0;
	}
	char *line = rec ? ee_results_encode(rec, &len) : NULL;
	ee_reorder_put(&s->order, ticket, rec, line, len); /* also NULL: lets the records after it go */
}

void ee_samples_flush(struct ee_samples *s)
{
	ee_reorder_flush(&s->order);
}

/* ---- the scheduler's source --------------------------------------------- */

static int source_next(void *ctx, struct ee_candidate *c, void **token, struct ee_err *err)
{
	uint64_t ticket = 0;
	int rc = ee_samples_next(ctx, c, &ticket, err);

	*token = (void *)(uintptr_t)ticket;
	return rc;
}

static void source_done(void *ctx, void *token, json_t *rec)
{
	ee_samples_done(ctx, (uintptr_t)token, rec);
}

static const struct ee_sched_source source = { source_next, source_done };

int ee_samples_run(struct ee_samples *s, struct ee_engine *eng, const struct ee_eval_options *o,
                   struct ee_err *err)
{
	/* Tripped (the engine counts every record): no new sandbox; the
	 * records of those in flight are kept all the same. */
	s->breaker = ee_engine_breaker(eng);
	int rc = ee_schedule(eng, o, s->cfg.jobs, &source, s, err);
	/* Interrupted or failed evaluations came back as gaps already; only a
	 * sample whose sandbox could not be started never comes back: what
	 * finished after it is kept too, and --resume appends it. */
	ee_samples_flush(s);
	return rc;
}

/* ---- the end ------------------------------------------------------------ */

int ee_samples_some_evaluated(const struct ee_samples *s, struct ee_err *err)
{
	const char *path = s->cfg.path;

	if (s->n.records > s->n.invalid || s->n.skipped > 0)
		return 0;
	if (s->n.lines == 0)
		return ee_fail(err, EE_ERR_USAGE, "--samples %s: no samples (%s)", path,
		               s->from_dir ? "the directory has no task directory with a <n>.py"
		                           : "the file has no non-blank line");
	if (s->n.invalid == s->n.lines)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "--samples %s: no sample evaluated: all %lu lines are invalid (first: line %ld)",
		        path, s->n.lines, s->n.first_invalid);
	return ee_fail(err, EE_ERR_USAGE,
	               "--samples %s: no sample evaluated: --shard %lu/%lu selects none of its %lu lines "
	               "(%lu invalid)",
	               path, s->cfg.shard_i, s->cfg.shard_n, s->n.lines, s->n.invalid);
}

void ee_samples_sha256(struct ee_samples *s, char out[EE_SHA256_HEX])
{
	if (s->from_dir)
		ee_samples_dir_sha256(&s->dir, out);
	else
		ee_input_sha256(&s->lines.in, out);
}

void ee_samples_close(struct ee_samples *s)
{
	ee_reorder_free(&s->order);
	ee_lines_close(&s->lines);
	ee_samples_dir_free(&s->dir);
	ee_keys_free(&s->keys);
	ee_done_free(&s->done);
	ee_sample_free(&s->sample);
	free(s->program);
	s->program = NULL;
}
