/* results.c - the results file (see results.h). */
#include "results/results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonfield.h"
#include "base/err.h"
#include "input/lines.h"

#define MAX_RECORD_LINE (64u << 20)

static void make_key(char *buf, size_t size, const char *task_id, long sample)
{
	snprintf(buf, size, "%s\x1f%ld", task_id, sample);
}

int ee_done_contains(const struct ee_done_set *d, const char *task_id, long sample)
{
	char key[4096];
	make_key(key, sizeof(key), task_id, sample);
	return ee_strmap_get(&d->keys, key) != NULL;
}

int ee_done_insert(struct ee_done_set *d, const char *task_id, long sample)
{
	char key[4096];
	make_key(key, sizeof(key), task_id, sample);
	return ee_strmap_put(&d->keys, key, 1, NULL) ? 0 : -1;
}

void ee_done_free(struct ee_done_set *d)
{
	ee_strmap_free(&d->keys);
}

/* The record's task_id; "" for an invalid sample whose task was unknown. */
static const char *record_task(const json_t *rec)
{
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	return id ? id : "";
}

long ee_keys_seen(struct ee_key_lines *k, const char *task_id, long sample, unsigned long line)
{
	char key[4096];
	int added;

	make_key(key, sizeof(key), task_id, sample);
	size_t *first = ee_strmap_put(&k->lines, key, line, &added);
	return !first ? -1 : added ? 0 : (long)*first;
}

int ee_keys_note(struct ee_key_lines *k, const json_t *rec, const char *path, unsigned long line,
                 struct ee_err *err)
{
	long sample = (long)json_integer_value(json_object_get(rec, "sample"));
	long first = ee_keys_seen(k, record_task(rec), sample, line);

	if (first < 0)
		return ee_fail(err, EE_ERR_USAGE, "%s:%lu: out of memory", path, line);
	if (first > 0)
		return ee_fail(
		        err, EE_ERR_USAGE,
		        "%.120s:%lu: repeated record: task_id '%.60s' sample %ld is already on line %ld "
		        "(one record per sample; merge drops exact copies)",
		        path, line, record_task(rec), sample, first);
	return 0;
}

void ee_keys_free(struct ee_key_lines *k)
{
	ee_strmap_free(&k->lines);
}

/* A keyed record: a task_id and a sample index (an invalid-sample record
 * may have a null task_id). */
static int keyed(const json_t *rec)
{
	const json_t *id = json_object_get(rec, "task_id");
	int id_ok = json_is_string(id) || (json_is_null(id) && json_is_true(json_object_get(rec, "invalid")));

	return json_is_object(rec) && id_ok && json_is_integer(json_object_get(rec, "sample"));
}

/* The current line as a record. NULL with why when it is unusable (too
 * long, not UTF-8, not JSON, no newline): a torn line if it is the last,
 * unless it is a whole line too long or not UTF-8. */
static json_t *line_record(const struct ee_lines *l, int got, const struct ee_results_policy *p,
                           const char *where, struct ee_err *why)
{
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];
	json_t *rec = got == 1 ? json_loadb(l->line.data, l->line.len, 0, &jerr) : NULL;

	if (got != 1) /* why says so already */
		return NULL;
	if (!rec && p->shape == EE_RESULTS_KEYED) /* blank lines included */
		ee_fail(why, EE_ERR_USAGE, "%s: not a result record (task_id and sample)", where);
	else if (!rec)
		ee_fail(why, EE_ERR_USAGE, "%s: invalid JSON at column %d: %s", where, jerr.column,
		        ee_jf_error_text(&jerr, jtext));
	else if (!l->had_newline)
		ee_fail(why, EE_ERR_USAGE, "%s: no newline at its end (a torn write)", where);
	else
		return rec;
	json_decref(rec);
	return NULL;
}

/* Visits one whole line's record: a KEYED record without its key, a
 * repeated key (when keys) and the visitor's refusal are errors. */
static int take_record(const json_t *rec, const struct ee_results_policy *p, const char *path,
                       unsigned long line, const char *where, ee_record_visit visit, void *ctx,
                       struct ee_key_lines *keys, struct ee_err *err)
{
	int rc = 0;

	if (p->shape == EE_RESULTS_KEYED && !keyed(rec))
		return ee_fail(err, EE_ERR_USAGE, "%s: not a result record (task_id and sample)", where);
	if (keys && json_is_integer(json_object_get(rec, "sample")))
		rc = ee_keys_note(keys, rec, path, line, err);
	if (rc == 0 && visit)
		rc = visit(ctx, rec, where, err);
	return rc;
}

/* The one reading loop (results.h has the policy). *good is the offset
 * after the last record taken, where resume cuts. */
static int read_records(struct ee_lines *l, const struct ee_results_policy *p, ee_record_visit visit,
                        void *ctx, struct ee_key_lines *keys, struct ee_results_torn *torn, off_t *good,
                        struct ee_err *err)
{
	const char *path = l->in.name;
	char where[512];
	int got;
	struct ee_err why = { 0 };

	memset(torn, 0, sizeof(*torn));
	*good = 0;
	while ((got = ee_lines_next(l, &why)) != 0) {
		if (got == -1) {
			*err = why;
			return -1;
		}
		if (got == 1 && p->shape == EE_RESULTS_LOOSE && ee_lines_blank(l))
			continue;
		if (torn->why.code) { /* the bad line was not the last one */
			*err = torn->why;
			return -1;
		}
		snprintf(where, sizeof(where), "%.480s:%lu", path, l->line_no);
		json_t *rec = line_record(l, got, p, where, &why);
		if (!rec && got == -2 && l->had_newline) { /* over the cap or not UTF-8, and whole: */
			/* no interrupted write leaves that (a torn record stops short of the cap) */
			*err = why;
			return -1;
		}
		if (!rec) {
			torn->why = why; /* an error unless no record follows */
			continue;
		}
		int rc = take_record(rec, p, path, l->line_no, where, visit, ctx, keys, err);
		json_decref(rec);
		if (rc < 0)
			return -1;
		*good = (off_t)l->offset;
	}
	torn->lines = torn->why.code != 0;
	return 0;
}

int ee_results_scan(const char *path, const struct ee_results_policy *p, ee_record_visit visit, void *ctx,
                    struct ee_results_torn *torn, struct ee_err *err)
{
	struct ee_key_lines keys = { 0 };
	struct ee_lines l;
	off_t good;
	int rc = ee_lines_open(&l, path, p->line_cap, err);

	if (rc == 0)
		rc = read_records(&l, p, visit, ctx, p->unique ? &keys : NULL, torn, &good, err);
	ee_lines_close(&l);
	ee_keys_free(&keys);
	return rc;
}

static int read_keyed(const char *path, ee_record_visit visit, void *ctx, int unique, int *ret_torn,
                      struct ee_err *err)
{
	const struct ee_results_policy p = { EE_RESULTS_KEYED, unique, MAX_RECORD_LINE };
	struct ee_results_torn torn;
	int rc = ee_results_scan(path, &p, visit, ctx, &torn, err);

	*ret_torn = rc == 0 && torn.lines;
	return rc;
}

int ee_results_read(const char *path, ee_record_visit visit, void *ctx, int *ret_torn, struct ee_err *err)
{
	return read_keyed(path, visit, ctx, 0, ret_torn, err);
}

int ee_results_read_unique(const char *path, ee_record_visit visit, void *ctx, int *ret_torn,
                           struct ee_err *err)
{
	return read_keyed(path, visit, ctx, 1, ret_torn, err);
}

struct resume_ctx {
	struct ee_done_set *done;
	ee_record_visit visit;
	void *ctx;
};

static int remember(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	struct resume_ctx *r = ctx;
	if (ee_done_insert(r->done, record_task(rec),
	                   (long)json_integer_value(json_object_get(rec, "sample"))) < 0)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", where);
	return r->visit ? r->visit(r->ctx, rec, where, err) : 0;
}

int ee_results_resume(const char *path, struct ee_done_set *done, ee_record_visit visit, void *ctx,
                      int *ret_repaired, struct ee_err *err)
{
	static const struct ee_results_policy keyed_unique = { EE_RESULTS_KEYED, 1, MAX_RECORD_LINE };
	struct resume_ctx r = { done, visit, ctx };
	struct ee_key_lines keys = { 0 };
	struct ee_results_torn torn;
	struct ee_lines l;
	off_t good;

	*ret_repaired = 0;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	int rc = ee_lines_open(&l, path, MAX_RECORD_LINE, err);
	if (rc == 0 && l.in.gzip) /* new records are appended as text */
		rc = ee_fail(err, EE_ERR_USAGE,
		             "%s: gzip-compressed: --resume appends to a plain results file", path);
	if (rc == 0)
		rc = read_records(&l, &keyed_unique, remember, &r, &keys, &torn, &good, err);
	*ret_repaired = rc == 0 && torn.lines;
	ee_lines_close(&l);
	ee_keys_free(&keys);
	if (rc == 0 && *ret_repaired && truncate(path, good) < 0)
		rc = ee_fail_errno(err, EE_ERR_USAGE, "%s: cannot cut the torn last line", path);
	return rc;
}

int ee_results_open(const char *path, int truncate_it, struct ee_err *err)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate_it ? O_TRUNC : 0);
	int fd = open(path, flags, 0644);
	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	return fd;
}

char *ee_results_encode(const json_t *record, size_t *ret_len)
{
	char *text = json_dumps(record, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	if (!text)
		return NULL;
	size_t len = strlen(text);
	text[len] = '\n'; /* replaces the NUL: one write, one line */
	*ret_len = len + 1;
	return text;
}

int ee_results_write(int fd, const char *line, size_t len, const char *path, struct ee_err *err)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ee_fail_errno(err, EE_ERR_USAGE, "%s: write", path);
		off += (size_t)n;
	}
	return 0;
}

int ee_results_append(int fd, const json_t *record, const char *path, struct ee_err *err)
{
	size_t len;
	char *line = ee_results_encode(record, &len);
	if (!line)
		return ee_fail(err, EE_ERR_USAGE, "%s: cannot encode a record", path);
	int rc = ee_results_write(fd, line, len, path, err);
	free(line);
	return rc;
}

int ee_results_count(const char *path, unsigned long *ret, struct ee_err *err)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), filled = 0;
	ssize_t n;

	*ret = 0;
	if (fd < 0)
		return errno == ENOENT ? 0 : ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
			close(fd);
			return -1;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				*ret += (unsigned long)filled;
				filled = 0;
			} else if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r') {
				filled = 1;
			}
		}
	}
	*ret += (unsigned long)filled; /* a last line without its newline */
	close(fd);
	return 0;
}
