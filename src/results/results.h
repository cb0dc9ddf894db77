/* results.h - the results file: durable appends, resume, torn-line repair.
 *
 * Each record is one line written with a single write(2) on an O_APPEND
 * descriptor, so a crash leaves at most one torn last line, which
 * ee_results_resume truncates away. The (task_id, sample) pairs already
 * present form a set that --resume skips.
 */
#ifndef EE_RESULTS_H
#define EE_RESULTS_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "base/strmap.h"

/* The (task_id, sample) pairs already evaluated. Zero it to start. */
struct ee_done_set {
	struct ee_strmap keys; /* "task_id\x1f<sample>" */
};

/* Called for each complete, valid record found (borrowed). */
typedef int (*ee_record_visit)(void *ctx, const json_t *record, const char *where, struct ee_err *err);

/* Reads path (absent is fine: nothing done yet), visits every record, fills
 * done, and truncates a torn last line (*ret_repaired = 1). An invalid line
 * that is not the last is an error naming file:line. */
int ee_results_resume(const char *path, struct ee_done_set *done, ee_record_visit visit, void *ctx,
                      int *ret_repaired, struct ee_err *err);

/* How every reader takes a results file (docs/record.md, "Reading a
 * results file"). The torn-line rule is the same for all of them: the last
 * line (blank ones aside, where they are skipped) is torn when it is not a
 * whole line of JSON: not JSON, not UTF-8, over the line cap, or no newline
 * at its end (records are written with theirs in one write(2), so only an
 * interrupted write leaves such a line). It is skipped and counted
 * (torn->lines; torn->why says what was wrong, naming file:line). The same
 * fault on an earlier line is an error naming file:line. A whole line is
 * never torn: a KEYED record without task_id and integer sample, a repeated
 * key (unique) and the visitor's refusal are errors naming file:line, the
 * last line included. */
enum ee_results_shape {
	EE_RESULTS_KEYED, /* eval's own files: every line a record with task_id and sample */
	EE_RESULTS_LOOSE, /* hand-made too: blank lines skipped, the visitor checks the fields */
};
struct ee_results_policy {
	int shape;       /* enum ee_results_shape */
	int unique;      /* a (task_id, sample) key on two lines is an error naming both */
	size_t line_cap; /* a longer line is unusable */
};
struct ee_results_torn {
	int lines;         /* torn last lines skipped: 0 or 1 */
	struct ee_err why; /* when lines: what was wrong with it, naming file:line */
};
int ee_results_scan(const char *path, const struct ee_results_policy *p, ee_record_visit visit, void *ctx,
                    struct ee_results_torn *torn, struct ee_err *err);

/* ee_results_scan of a KEYED file of at most 64 MiB lines (merge, compat):
 * *ret_torn = 1 when the last line was torn and skipped. */
int ee_results_read(const char *path, ee_record_visit visit, void *ctx, int *ret_torn, struct ee_err *err);

/* Every (task_id, sample) key of a results file and the line it is on: a
 * file that holds one key twice would count a sample twice. Zero it to
 * start; ee_keys_free. */
struct ee_key_lines {
	struct ee_strmap lines; /* key -> line */
};
/* Notes record's key at line of path: 0 the first time; -1 when the key was
 * seen before, err naming the key and both lines. */
int ee_keys_note(struct ee_key_lines *k, const json_t *record, const char *path, unsigned long line,
                 struct ee_err *err);
/* Notes (task_id, sample) at line (> 0): 0 the first time, else the line
 * it was first noted on; -1 when memory ran out. */
long ee_keys_seen(struct ee_key_lines *k, const char *task_id, long sample, unsigned long line);
void ee_keys_free(struct ee_key_lines *k);

/* The records a results file holds, as eval's refusal to overwrite them
 * counts them: its lines with anything but blanks (a torn last line
 * counts: it is someone's work too), read in fixed-size chunks, so any
 * file is counted in bounded memory. An absent file holds 0. */
int ee_results_count(const char *path, unsigned long *ret, struct ee_err *err);

/* As ee_results_read, but a (task_id, sample) key on two lines is an error
 * naming it and both line numbers (compare). */
int ee_results_read_unique(const char *path, ee_record_visit visit, void *ctx, int *ret_torn,
                           struct ee_err *err);

int ee_done_contains(const struct ee_done_set *done, const char *task_id, long sample);
int ee_done_insert(struct ee_done_set *done, const char *task_id, long sample);
void ee_done_free(struct ee_done_set *done);

/* Opens path for appending (created 0644); truncate=1 starts it empty. */
int ee_results_open(const char *path, int truncate, struct ee_err *err);

/* Appends record as one line. */
int ee_results_append(int fd, const json_t *record, const char *path, struct ee_err *err);

/* The two halves of ee_results_append, for a caller that holds lines before
 * writing them: record as its line ('\n' included, no NUL; *ret_len bytes;
 * owned by the caller), NULL when it cannot be encoded; and the write. */
char *ee_results_encode(const json_t *record, size_t *ret_len);
int ee_results_write(int fd, const char *line, size_t len, const char *path, struct ee_err *err);

#endif
