/* results.c - the results file (see results.h). */
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset.h"
#include "err.h"

#define MAX_RECORD_LINE (64u << 20)

static char *make_key(const char *task_id, long sample)
{
	size_t len = strlen(task_id) + 32;
	char *k = malloc(len);
	if (k)
		snprintf(k, len, "%s\x1f%ld", task_id, sample);
	return k;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int done_add(struct ee_done_set *d, const char *task_id, long sample)
{
	if (d->n == d->cap) {
		size_t n = d->cap ? d->cap * 2 : 1024;
		char **p = realloc(d->keys, n * sizeof(*p));
		if (!p)
			return -1;
		d->keys = p;
		d->cap = n;
	}
	d->keys[d->n] = make_key(task_id, sample);
	return d->keys[d->n] ? (d->n++, 0) : -1;
}

int ee_done_contains(const struct ee_done_set *d, const char *task_id, long sample)
{
	char *k = make_key(task_id, sample);
	int found = k && d->n && bsearch(&k, d->keys, d->n, sizeof(*d->keys), cmp_key) != NULL;
	free(k);
	return found;
}

void ee_done_free(struct ee_done_set *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->keys[i]);
	free(d->keys);
	memset(d, 0, sizeof(*d));
}

/* One line: a record with a task_id and a sample index. */
static json_t *parse_record(const char *buf, long len)
{
	json_t *rec = json_loadb(buf, (size_t)len, 0, NULL);
	if (rec && (!json_is_string(json_object_get(rec, "task_id")) ||
	            !json_is_integer(json_object_get(rec, "sample")))) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

int ee_results_resume(const char *path, struct ee_done_set *done, ee_record_visit visit, void *ctx,
                      int *ret_repaired, struct ee_err *err)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, where[512];
	size_t alloc = 0;
	long len, line = 0;
	off_t good = 0;
	int nl, rc = 0;

	*ret_repaired = 0;
	if (!f)
		return errno == ENOENT ? 0 : ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	while (rc == 0 && (len = ee_read_line(f, &buf, &alloc, MAX_RECORD_LINE, &nl)) != -1) {
		line++;
		json_t *rec = len >= 0 ? parse_record(buf, len) : NULL;
		if (!rec || !nl) {
			json_decref(rec);
			if (getc(f) != EOF)
				rc = ee_fail(err, EE_ERR_USAGE, "%s:%ld: not a result record (task_id and sample)", path, line);
			else
				*ret_repaired = 1; /* a torn last line: cut below */
			break;
		}
		snprintf(where, sizeof(where), "%.480s:%ld", path, line);
		if (done_add(done, json_string_value(json_object_get(rec, "task_id")),
		             (long)json_integer_value(json_object_get(rec, "sample"))) < 0)
			rc = ee_fail(err, EE_ERR_USAGE, "%s: out of memory", path);
		else if (visit)
			rc = visit(ctx, rec, where, err);
		json_decref(rec);
		good = ftello(f);
	}
	free(buf);
	fclose(f);
	if (rc == 0 && *ret_repaired && truncate(path, good) < 0)
		rc = ee_fail_errno(err, EE_ERR_USAGE, "%s: cannot cut the torn last line", path);
	if (rc == 0)
		qsort(done->keys, done->n, sizeof(*done->keys), cmp_key);
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

int ee_results_append(int fd, const json_t *record, const char *path, struct ee_err *err)
{
	char *text = json_dumps(record, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	if (!text)
		return ee_fail(err, EE_ERR_USAGE, "%s: cannot encode a record", path);
	size_t len = strlen(text);
	text[len] = '\n'; /* replaces the NUL: one write, one line */
	size_t off = 0;
	while (off < len + 1) {
		ssize_t n = write(fd, text + off, len + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(text);
			return ee_fail_errno(err, EE_ERR_USAGE, "%s: write", path);
		}
		off += (size_t)n;
	}
	free(text);
	return 0;
}
