/* samples_dir.c - an EvalPlus samples directory (see samples_dir.h). */
#include "input/samples_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "input/dataset.h"
#include "base/err.h"
#include "input/input.h"
#include "base/strmap.h"
#include "base/text.h"

#define MAX_PROGRAM (64u << 20) /* as a line of a samples file */

int ee_samples_dir_is(const char *path)
{
	struct stat st;
	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* n of "<digits>.py", or -1. */
static long program_index(const char *name)
{
	size_t digits = strspn(name, "0123456789");
	if (digits == 0 || digits > 9 || strcmp(name + digits, ".py") != 0)
		return -1;
	return strtol(name, NULL, 10);
}

static int by_task_then_index(const void *a, const void *b)
{
	const struct ee_samples_dir_file *x = a, *y = b;
	int c = strncmp(x->name, y->name, x->task_len > y->task_len ? x->task_len : y->task_len);
	if (c == 0 && x->task_len != y->task_len)
		c = x->task_len < y->task_len ? -1 : 1;
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int add_file(struct ee_samples_dir *d, size_t *cap, const char *task, const char *file, long index,
                    struct ee_err *err)
{
	if (d->n == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct ee_samples_dir_file *p = realloc(d->files, n * sizeof(*p));
		if (!p)
			return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", d->root);
		d->files = p;
		*cap = n;
	}
	struct ee_samples_dir_file *f = &d->files[d->n];
	size_t len = strlen(task) + 1 + strlen(file) + 1;
	f->name = malloc(len);
	if (!f->name)
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", d->root);
	snprintf(f->name, len, "%s/%s", task, file);
	f->task_len = strlen(task);
	f->index = index;
	f->task_id = NULL;
	d->n++;
	return 0;
}

/* The programs of one task's subdirectory. */
static int list_task(struct ee_samples_dir *d, size_t *cap, const char *task, struct ee_err *err)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", d->root, task);
	DIR *dir = opendir(path);
	struct dirent *e;
	int rc = 0;

	if (!dir)
		return ee_fail_errno(err, EE_ERR_USAGE, "--samples %.300s", path);
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		long index = program_index(e->d_name);
		rc = index < 0 ? ee_fail(err, EE_ERR_USAGE,
		                         "--samples %.300s/%.100s: not a sample: expected <n>.py (EvalPlus's "
		                         "layout DIR/<task_id with / as _>/<n>.py)",
		                         path, e->d_name)
		               : add_file(d, cap, task, e->d_name, index, err);
	}
	closedir(dir);
	return rc;
}

static int list(struct ee_samples_dir *d, struct ee_err *err)
{
	DIR *dir = opendir(d->root);
	struct dirent *e;
	size_t cap = 0;
	int rc = 0;

	if (!dir)
		return ee_fail_errno(err, EE_ERR_USAGE, "--samples %s", d->root);
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		char path[8192];
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->root, e->d_name);
		if (stat(path, &st) < 0)
			rc = ee_fail_errno(err, EE_ERR_USAGE, "--samples %.300s", path);
		else if (!S_ISDIR(st.st_mode))
			rc = ee_fail(err, EE_ERR_USAGE,
			             "--samples %.300s: not a task directory (EvalPlus's layout "
			             "DIR/<task_id with / as _>/<n>.py)",
			             path);
		else
			rc = list_task(d, &cap, e->d_name, err);
	}
	closedir(dir);
	return rc;
}

/* Two files of one task with one index ("1.py", "01.py"): adjacent once sorted. */
static int check_unique(const struct ee_samples_dir *d, struct ee_err *err)
{
	for (size_t i = 1; i < d->n; i++)
		if (by_task_then_index(&d->files[i - 1], &d->files[i]) == 0)
			return ee_fail(err, EE_ERR_USAGE,
			               "--samples %.200s/%.100s: sample %ld repeats %.100s", d->root,
			               d->files[i].name, d->files[i].index, d->files[i - 1].name);
	return 0;
}

/* The task_id of subdirectory name (task_len bytes of name), or NULL when no
 * task has it, err naming it; two tasks that map to one name are an error. */
static const char *task_of(const struct ee_strmap *names, const struct ee_dataset *tasks,
                           const struct ee_samples_dir *d, const struct ee_samples_dir_file *f,
                           struct ee_err *err)
{
	char sub[4096];
	snprintf(sub, sizeof(sub), "%.*s", (int)f->task_len, f->name);
	size_t *at = ee_strmap_get(names, sub);
	if (!at && strncmp(sub, "Mbpp_", 5) == 0) { /* EvalPlus's Mbpp/N onto MBPP's N */
		char id[4096];
		snprintf(id, sizeof(id), "Mbpp/%s", sub + 5);
		const struct ee_dataset_entry *e = ee_dataset_find_sample(tasks, id);
		if (e)
			return e->task.task_id;
	}
	if (!at) {
		ee_fail(err, EE_ERR_USAGE, "--samples %.300s/%.200s: no task of the tasks file has this name",
		        d->root, sub);
		return NULL;
	}
	return tasks->entries[*at].task.task_id;
}

/* Every subdirectory names a task: tasks' ids with '/' as '_'. */
static int check_tasks(struct ee_samples_dir *d, const struct ee_dataset *tasks, struct ee_err *err)
{
	struct ee_strmap names = { 0 };
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < tasks->n; i++) {
		char name[4096];
		int added;
		snprintf(name, sizeof(name), "%s", tasks->entries[i].task.task_id);
		for (char *p = strchr(name, '/'); p; p = strchr(p, '/'))
			*p = '_';
		size_t *at = ee_strmap_put(&names, name, i, &added);
		if (!at)
			rc = ee_fail(err, EE_ERR_USAGE, "out of memory");
		else if (!added)
			rc = ee_fail(err, EE_ERR_USAGE,
			             "--samples %.200s: tasks '%.100s' and '%.100s' have one directory name",
			             d->root, tasks->entries[*at].task.task_id,
			             tasks->entries[i].task.task_id);
	}
	for (size_t i = 0; rc == 0 && i < d->n; i++)
		if (!(d->files[i].task_id = task_of(&names, tasks, d, &d->files[i], err)))
			rc = -1;
	ee_strmap_free(&names);
	return rc;
}

int ee_samples_dir_open(struct ee_samples_dir *d, const char *root, const struct ee_dataset *tasks,
                        struct ee_err *err)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->root, sizeof(d->root), "%s", root);
	for (size_t n = strlen(d->root); n > 1 && d->root[n - 1] == '/'; n--)
		d->root[n - 1] = '\0';
	ee_sha256_init(&d->sha);
	if (list(d, err) < 0)
		return -1;
	if (d->n) /* qsort of NULL is undefined, even of nothing */
		qsort(d->files, d->n, sizeof(*d->files), by_task_then_index);
	if (check_unique(d, err) < 0 || (tasks && check_tasks(d, tasks, err) < 0))
		return -1;
	return 0;
}

/* The bytes of the file at path (at most MAX_PROGRAM) into text. */
static int read_program(const char *path, struct ee_buf *text, struct ee_err *err)
{
	struct ee_input in;
	int rc = ee_input_open(&in, path, err);

	while (rc == 0 && (rc = ee_input_fill(&in, err)) == 1) {
		size_t n = in.len - in.pos;
		if (text->len + n > text->cap)
			rc = (ee_fail(err, EE_ERR_USAGE, "%.300s: larger than %u bytes", path, MAX_PROGRAM),
			      -2);
		else if (ee_buf_append(text, in.data + in.pos, n) < 0)
			rc = ee_fail(err, EE_ERR_USAGE, "%.300s: out of memory", path);
		else
			in.pos = in.len, rc = 0;
	}
	ee_input_close(&in);
	return rc == 0 && ee_buf_append(text, "", 0) < 0 ? ee_fail(err, EE_ERR_USAGE, "out of memory") : rc;
}

/* Reads the next file into text and hashes it: 0; -2 too large; -1. */
static int take_next(struct ee_samples_dir *d, struct ee_buf *text, struct ee_err *err)
{
	const struct ee_samples_dir_file *f = &d->files[d->next++];
	char size[32];

	snprintf(d->where, sizeof(d->where), "%s/%s", d->root, f->name);
	int rc = read_program(d->where, text, err);
	if (rc < 0)
		return rc;
	snprintf(size, sizeof(size), "%zu", text->len);
	ee_sha256_update(&d->sha, f->name, strlen(f->name) + 1);
	ee_sha256_update(&d->sha, size, strlen(size) + 1);
	ee_sha256_update(&d->sha, text->data, text->len);
	return 0;
}

int ee_samples_dir_next(struct ee_samples_dir *d, json_t **ret, struct ee_err *err)
{
	struct ee_buf text;

	*ret = NULL;
	if (d->next == d->n)
		return 0;
	const struct ee_samples_dir_file *f = &d->files[d->next];
	ee_buf_init(&text, MAX_PROGRAM);
	int rc = take_next(d, &text, err);
	long bad = rc == 0 ? ee_utf8_first_bad(text.data, text.len) : -1;
	if (bad >= 0) {
		ee_fail(err, EE_ERR_USAGE, "%.300s: byte offset %ld: not UTF-8 (byte 0x%02x)", d->where, bad,
		        (unsigned char)text.data[bad]);
		rc = -2;
	}
	if (rc == 0) {
		*ret = json_pack("{s:s, s:s%, s:I}", "task_id", f->task_id ? f->task_id : "", "solution",
		                 text.data, text.len, "sample", (json_int_t)f->index);
		rc = *ret ? 1 : ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	ee_buf_free(&text);
	return rc;
}

void ee_samples_dir_sha256(const struct ee_samples_dir *d, char out[EE_SHA256_HEX])
{
	struct ee_sha256 copy = d->sha;
	uint8_t digest[EE_SHA256_LEN];
	ee_sha256_final(&copy, digest);
	ee_sha256_hex(digest, out);
}

int ee_samples_dir_sha256_of(const char *root, char out[EE_SHA256_HEX], struct ee_err *err)
{
	struct ee_samples_dir d;
	struct ee_buf text;
	int rc = ee_samples_dir_open(&d, root, NULL, err);

	ee_buf_init(&text, MAX_PROGRAM);
	while (rc == 0 && d.next < d.n) {
		ee_buf_reset(&text);
		rc = take_next(&d, &text, err) < 0 ? -1 : 0; /* a file too large: named, as eval will */
	}
	if (rc == 0)
		ee_samples_dir_sha256(&d, out);
	ee_buf_free(&text);
	ee_samples_dir_free(&d);
	return rc;
}

void ee_samples_dir_free(struct ee_samples_dir *d)
{
	for (size_t i = 0; d->files && i < d->n; i++)
		free(d->files[i].name);
	free(d->files);
	d->files = NULL;
	d->n = d->next = 0;
}
