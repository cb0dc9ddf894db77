/* samples.h - the samples of an eval run: read once, numbered, filtered,
 * evaluated, their records handed back in input order.
 *
 * Samples are streamed (never all in memory) from a JSONL file, gzip or
 * not, standard input included (lines.h), or from an EvalPlus directory
 * (samples_dir.h). Each non-blank line is parsed (sample.h), given the
 * run's default model when it has none, shown to note_model, matched to its
 * task and numbered: its position among its task's lines unless it says
 * "sample". A (task_id, sample) key met twice stops the run, naming both
 * lines (it would be judged and counted twice). A sample is then kept only
 * when it hashes to this shard (FNV-1a of the key, modulo N: every shard
 * reads the whole file and numbers it alike, so shards are disjoint) and
 * is not in the results file already (ee_samples_resume); a kept one is
 * composed into its program (compose.h) and becomes a candidate.
 *
 * An invalid sample (not JSON, no task, no text, a program that cannot be
 * composed) stops the run, unless skip_invalid: it then becomes an error
 * record in its place (record.h's ee_record_invalid_sample, sample -line;
 * every shard writes it, --resume skips it like any other).
 *
 * Order: each candidate, and each invalid line's record, takes a ticket
 * when it is read; records go to the sink in ticket order through a
 * bounded reorder buffer (reorder.h). While the buffer is full no sample
 * is read (EE_SCHED_WAIT). A candidate whose host failed (a record with
 * "sandbox_error", after one retry on a fresh sandbox) is recorded as the
 * sample's infrastructure error ("infra_error": true; --resume skips it
 * like any record); EE_SAMPLES_INFRA_STOP of them in a row (in the order
 * they finish) mean the host is broken: no further sample is read, and
 * the run ends with that error.
 *
 * Lifecycle: zero a struct ee_samples, ee_samples_open, optionally
 * ee_samples_resume, then ee_samples_run (or ee_samples_next and
 * ee_samples_done by hand, then ee_samples_flush), then ee_samples_close
 * (accepts a zeroed or half-opened one). Ownership: the samples own their
 * input, key sets, buffer and the sample in hand; cfg's pointers are
 * borrowed until close (the tasks' seen counters are advanced). Errors:
 * ee_err, EE_ERR_USAGE for the samples, EE_ERR_SANDBOX for the host.
 */
#ifndef EE_SAMPLES_H
#define EE_SAMPLES_H

#include <jansson.h>
#include <stdint.h>

#include "base/sha256.h"
#include "engine/evaluate.h"
#include "input/extract.h"
#include "input/lines.h"
#include "input/samples_dir.h"
#include "input/task.h"
#include "results/reorder.h"
#include "results/results.h"

struct ee_dataset;
struct ee_engine;
struct ee_err;

struct ee_samples_config {
	const char *path; /* a JSONL file, "-" (standard input) or an EvalPlus directory */
	struct ee_dataset *tasks;
	const char *tasks_path; /* for messages */
	const char *model;      /* of the samples that carry none; NULL: none */
	enum ee_extract_mode extract;
	int stop;                       /* cut completions at HumanEval's stop sequences */
	unsigned long shard_i, shard_n; /* keep shard I of N; N <= 1: every sample */
	int skip_invalid;               /* an invalid sample is an error record, not a stop */
	unsigned jobs;                  /* evaluations at once (ee_samples_run); bounds the buffer */
	/* Each parsed sample's model (NULL: none), before its task is looked
	 * up, so that a sample of an unknown task counts too; -1 (err filled)
	 * makes the sample invalid. NULL: not called. */
	int (*note_model)(void *ctx, const char *model, struct ee_err *err);
	/* Each record, in input order, with its encoded line (reorder.h). */
	ee_reorder_sink sink;
	void *ctx; /* of note_model and sink */
};

/* Infrastructure errors in a row that end a run (exit 3): one is a
 * sample's bad luck; five, each retried on a fresh sandbox, are a host
 * that cannot hold one (docs/contract.md). */
#define EE_SAMPLES_INFRA_STOP 5

struct ee_samples_counts {
	unsigned long lines;       /* non-blank lines (a directory: files) read */
	unsigned long invalid;     /* of them: error records of this run (skip_invalid) */
	long first_invalid;        /* the first of those's line, 0: none */
	unsigned long other_shard; /* of them: left to the other shards */
	unsigned long skipped;     /* of them: in the results file already */
	unsigned long records;     /* records handed to the sink */
	unsigned long infra;       /* of them: infrastructure errors (sandbox_error) */
};

struct ee_samples {
	struct ee_samples_config cfg;
	struct ee_lines lines;     /* a JSONL input... */
	struct ee_samples_dir dir; /* ...or an EvalPlus directory */
	int from_dir;
	struct ee_key_lines keys; /* (task_id, sample) -> line: one sample per key */
	struct ee_done_set done;  /* the keys in the results file (ee_samples_resume) */
	struct ee_reorder order;
	struct ee_samples_counts n;
	int failed;                       /* the samples stopped the run (a bad line, a repeated key) */
	int sandbox_failed;               /* the host failed too many sandboxes: read no more */
	unsigned infra_in_a_row;          /* infrastructure errors since the last verdict */
	const struct ee_breaker *breaker; /* the engine's (--breaker): tripped, read no more */
	struct ee_err sandbox_err;
	long line_no;     /* of the sample in hand (a directory: its position) */
	char where[4400]; /* "file:line", or a directory's file */
	char shard[48];   /* "I/N" when shard_n > 1, else "" */
	/* the sample in hand, until the next one is read */
	struct ee_sample sample;
	char *program;
	char extraction[EE_EXTRACTION_NAME_MAX];
};

/* Opens cfg->path (a directory is listed and checked against the tasks). */
int ee_samples_open(struct ee_samples *s, const struct ee_samples_config *cfg, struct ee_err *err);

/* Reads the results file at results (absent: nothing done), visiting each
 * record (results.h's ee_results_resume, torn last line cut: *ret_repaired);
 * the samples it holds are skipped. */
int ee_samples_resume(struct ee_samples *s, const char *results, ee_record_visit visit, void *ctx,
                      int *ret_repaired, struct ee_err *err);

/* About how many samples this shard holds, for an ETA: 0 when unknown (a
 * pipe is read once). A file is counted by a reading of its own. */
unsigned long ee_samples_expected(const struct ee_samples *s);

/* 1 when path is a regular file. "-" (standard input) never is, even when
 * the shell redirected a file into it: reading it twice (to hash, to
 * count) would consume what the run must read. */
int ee_samples_is_file(const char *path);

/* The next candidate in *c (valid until the next call) with the ticket
 * its record must come back with: 1; 0 at the end; EE_SCHED_WAIT while the
 * buffer is full; -1 with err (s->failed when the samples are at fault). */
int ee_samples_next(struct ee_samples *s, struct ee_candidate *c, uint64_t *ticket, struct ee_err *err);

/* The record (owned; NULL: interrupted, none) of ticket's candidate. */
void ee_samples_done(struct ee_samples *s, uint64_t ticket, json_t *record);

/* Hands the sink every record still held, gaps skipped. */
void ee_samples_flush(struct ee_samples *s);

/* Every sample through the scheduler on eng, cfg->jobs at once, then
 * flushed: 0, a signal number (> 0), or -1 with err (ee_schedule). */
int ee_samples_run(struct ee_samples *s, struct ee_engine *eng, const struct ee_eval_options *o,
                   struct ee_err *err);

/* After a complete run: 0 when it evaluated a sample or found every one
 * done; else -1, err saying why none was (no samples, all invalid, none in
 * this shard). */
int ee_samples_some_evaluated(const struct ee_samples *s, struct ee_err *err);

/* The sha256 (hex) of the samples read so far: of the whole input at the end. */
void ee_samples_sha256(struct ee_samples *s, char out[EE_SHA256_HEX]);

void ee_samples_close(struct ee_samples *s);

#endif
