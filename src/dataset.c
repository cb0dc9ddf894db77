/* dataset.c - loading a tasks file (see dataset.h). */
#include "dataset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "lines.h"

#define MAX_LINE (64u << 20)

static int by_id(const void *a, const void *b)
{
	const struct ee_dataset_entry *x = a, *y = b;
	return strcmp(x->task.task_id, y->task.task_id);
}

static int add(struct ee_dataset *d, size_t *cap, const json_t *obj, int format, const char *path, long line,
               struct ee_err *err)
{
	char where[512];

	if (d->n == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct ee_dataset_entry *p = realloc(d->entries, n * sizeof(*p));
		if (!p)
			return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", path);
		d->entries = p;
		*cap = n;
	}
	struct ee_dataset_entry *e = &d->entries[d->n];
	memset(e, 0, sizeof(*e));
	snprintf(where, sizeof(where), "%.480s:%ld", path, line);
	if (ee_task_from_json(obj, format, where, &e->task, err) < 0)
		return -1;
	e->line = line;
	d->n++;
	return 0;
}

static int load_lines(FILE *f, const char *path, int format, struct ee_dataset *d, size_t *cap,
                      struct ee_err *err)
{
	char *buf = NULL;
	size_t alloc = 0;
	long len, line = 0;
	int nl, rc = 0;

	while (rc == 0 && (len = ee_read_line(f, &buf, &alloc, MAX_LINE, &nl)) != -1) {
		line++;
		if (len == -2) {
			rc = ee_fail(err, EE_ERR_USAGE, "%s:%ld: line longer than %u bytes", path, line,
			             MAX_LINE);
			break;
		}
		if (strspn(buf, " \t\r") == (size_t)len)
			continue;
		json_error_t jerr;
		json_t *obj = json_loadb(buf, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
		if (!obj)
			rc = ee_fail(err, EE_ERR_USAGE, "%s:%ld: column %d: %s", path, line, jerr.column,
			             jerr.text);
		else
			rc = add(d, cap, obj, format, path, line, err);
		json_decref(obj);
	}
	free(buf);
	return rc;
}

static int load_array(FILE *f, const char *path, int format, struct ee_dataset *d, size_t *cap,
                      struct ee_err *err)
{
	json_error_t jerr;
	json_t *arr = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	size_t i;
	json_t *obj;

	if (!json_is_array(arr)) {
		json_decref(arr);
		return ee_fail(err, EE_ERR_USAGE, "%s:%d: column %d: %s", path, jerr.line, jerr.column,
		               arr ? "expected an array of tasks" : jerr.text);
	}
	json_array_foreach (arr, i, obj) {
		if (add(d, cap, obj, format, path, (long)i + 1, err) < 0) {
			json_decref(arr);
			return -1;
		}
	}
	json_decref(arr);
	return 0;
}

int ee_dataset_load(const char *path, int format, struct ee_dataset *ret, struct ee_err *err)
{
	size_t cap = 0;
	FILE *f = fopen(path, "re");
	int rc, c;

	memset(ret, 0, sizeof(*ret));
	if (!f)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
		;
	ungetc(c, f);
	rc = c == '[' ? load_array(f, path, format, ret, &cap, err)
	              : load_lines(f, path, format, ret, &cap, err);
	fclose(f);
	if (rc == 0 && ret->n == 0)
		rc = ee_fail(err, EE_ERR_USAGE, "%s: no tasks", path);
	if (rc == 0) {
		qsort(ret->entries, ret->n, sizeof(*ret->entries), by_id);
		for (size_t i = 1; i < ret->n; i++)
			if (strcmp(ret->entries[i].task.task_id, ret->entries[i - 1].task.task_id) == 0) {
				long a = ret->entries[i - 1].line, b = ret->entries[i].line;
				rc = ee_fail(err, EE_ERR_USAGE,
				             "%s:%ld: task_id: '%.100s' already defined on line %ld", path,
				             a > b ? a : b, ret->entries[i].task.task_id, a < b ? a : b);
				break;
			}
	}
	if (rc < 0)
		ee_dataset_free(ret);
	return rc;
}

void ee_dataset_free(struct ee_dataset *d)
{
	for (size_t i = 0; d->entries && i < d->n; i++)
		ee_task_free(&d->entries[i].task);
	free(d->entries);
	d->entries = NULL;
	d->n = 0;
}

struct ee_dataset_entry *ee_dataset_find(const struct ee_dataset *d, const char *task_id)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(task_id, d->entries[mid].task.task_id);
		if (c == 0)
			return &d->entries[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
