/* dataset.c - loading a tasks file (see dataset.h). */
#include "input/dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfield.h"
#include "base/buf.h"
#include "base/err.h"
#include "input/lines.h"

#define MAX_LINE  (64u << 20)
#define MAX_ARRAY (1u << 30) /* a whole array file: sanitized MBPP is 0.5 MB */

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
	if (ee_task_from_row(obj, format, where, line, &e->task, err) < 0)
		return -1;
	e->line = line;
	d->n++;
	return 0;
}

static int add_line(struct ee_dataset *d, size_t *cap, const struct ee_lines *l, int format,
                    struct ee_err *err)
{
	json_error_t jerr;
	json_t *obj = json_loadb(l->line.data, l->line.len, JSON_REJECT_DUPLICATES, &jerr);
	int rc = obj ? add(d, cap, obj, format, l->in.name, (long)l->line_no, err)
	             : ee_lines_json_error(l, "tasks", &jerr, err);
	json_decref(obj);
	return rc;
}

/* The rest of the file from the current line on, which opens an array. */
static int load_array(struct ee_lines *l, int format, struct ee_dataset *d, size_t *cap, struct ee_err *err)
{
	struct ee_buf text;
	unsigned long first = l->line_no;
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];

	ee_buf_init(&text, MAX_ARRAY);
	int rc = ee_lines_slurp(l, &text, err);
	json_t *arr = rc == 0 ? json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	ee_buf_free(&text);
	if (rc < 0)
		return -1;
	if (!json_is_array(arr)) {
		json_decref(arr);
		return ee_fail(err, EE_ERR_USAGE, "%s:%lu: column %d: %s", l->in.name,
		               first + (unsigned long)jerr.line - 1, jerr.column,
		               arr ? "expected an array of tasks" : ee_jf_error_text(&jerr, jtext));
	}
	size_t i;
	json_t *obj;
	json_array_foreach (arr, i, obj) {
		if (add(d, cap, obj, format, l->in.name, (long)i + 1, err) < 0) {
			json_decref(arr);
			return -1;
		}
	}
	json_decref(arr);
	return 0;
}

/* JSON Lines, or an array when the first non-blank line opens one. */
static int load(struct ee_lines *l, int format, struct ee_dataset *d, struct ee_err *err)
{
	size_t cap = 0;
	int rc;

	while ((rc = ee_lines_next(l, err)) == 1) {
		if (ee_lines_blank(l))
			continue;
		if (d->n == 0 && l->line.data[strspn(l->line.data, " \t\r")] == '[')
			return load_array(l, format, d, &cap, err);
		if (add_line(d, &cap, l, format, err) < 0)
			return -1;
	}
	return rc == 0 ? 0 : -1;
}

static int check_unique(const struct ee_dataset *d, const char *path, struct ee_err *err)
{
	for (size_t i = 1; i < d->n; i++)
		if (strcmp(d->entries[i].task.task_id, d->entries[i - 1].task.task_id) == 0) {
			long a = d->entries[i - 1].line, b = d->entries[i].line;
			return ee_fail(err, EE_ERR_USAGE,
			               "%s:%ld: task_id: '%.100s' already defined on line %ld", path,
			               a > b ? a : b, d->entries[i].task.task_id, a < b ? a : b);
		}
	return 0;
}

int ee_dataset_load(const char *path, int format, struct ee_dataset *ret, struct ee_err *err)
{
	struct ee_lines l;

	memset(ret, 0, sizeof(*ret));
	int rc = ee_lines_open(&l, path, MAX_LINE, err);
	if (rc == 0)
		rc = load(&l, format, ret, err);
	if (rc == 0 && ret->n == 0)
		rc = ee_fail(err, EE_ERR_USAGE, "%s: no tasks", l.in.name);
	if (rc == 0) {
		qsort(ret->entries, ret->n, sizeof(*ret->entries), by_id);
		rc = check_unique(ret, l.in.name, err);
	}
	ee_lines_close(&l);
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

struct ee_dataset_entry *ee_dataset_find_sample(const struct ee_dataset *d, const char *task_id)
{
	static const char evalplus[] = "Mbpp/";
	struct ee_dataset_entry *e = ee_dataset_find(d, task_id);
	const char *number = task_id + sizeof(evalplus) - 1;

	if (e || strncmp(task_id, evalplus, sizeof(evalplus) - 1) != 0 || number[0] < '1' ||
	    number[0] > '9' || number[strspn(number, "0123456789")] != '\0')
		return e;
	e = ee_dataset_find(d, number);
	return e && e->task.format == EE_FORMAT_MBPP ? e : NULL;
}
