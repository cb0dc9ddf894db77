/* eval_history.c - what `execeval eval` stores in the run history (cli.h).
 *
 * Gathers one row after the summary is computed: the UTC times, the
 * command line, the absolute paths and sha256 of the tasks and samples
 * files (streamed, bounded memory), the models seen, the limits, execeval's
 * version and the summary, and inserts it. Failing here never fails the
 * run: eval warns, naming the database, and exits as it would have.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "base/err.h"
#include "history/history.h"
#include "base/resource_limits.h"
#include "base/sha256.h"
#include "base/strmap.h"
#include "base/text.h"

int cli_history_default(char *buf, size_t size)
{
	return ee_history_default_path(getenv("XDG_DATA_HOME"), getenv("HOME"), buf, size);
}

/* s as a JSON string, its invalid UTF-8 (a file name may have any bytes)
 * replaced with U+FFFD; NULL when out of memory. */
static json_t *text_json(const char *s)
{
	char *valid = ee_text_sanitize(s, strlen(s), (size_t)-1, NULL);
	json_t *j = valid ? json_string(valid) : NULL;

	free(valid);
	return j;
}

json_t *cli_argv_json(int argc, char **argv)
{
	json_t *a = json_array();

	if (a && json_array_append_new(a, json_string("execeval")) < 0)
		goto fail;
	for (int i = 0; a && i < argc; i++)
		if (json_array_append_new(a, text_json(argv[i])) < 0)
			goto fail;
	return a;
fail:
	json_decref(a);
	return NULL;
}

int cli_models_note(struct ee_strmap *models, const char *model)
{
	if (!model || ee_strmap_get(models, model))
		return 0;
	if (models->len >= CLI_HISTORY_MAX_MODELS)
		return 1;
	return ee_strmap_put(models, model, 0, NULL) ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The model names, sorted, as a JSON array. */
static json_t *models_json(const struct ee_strmap *models)
{
	const char **names = calloc(models->len + 1, sizeof(*names));
	const struct ee_strmap_slot *slot;
	size_t n = 0, pos = 0;
	json_t *a = json_array();

	if (!names || !a)
		goto fail;
	while ((slot = ee_strmap_next(models, &pos)) != NULL && n < models->len)
		names[n++] = slot->key;
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(names[i])) < 0)
			goto fail;
	free(names);
	return a;
fail:
	free(names);
	json_decref(a);
	return NULL;
}

static json_t *limits_json(const struct ee_limits *l)
{
	return json_pack("{s:f, s:I, s:I, s:I, s:I, s:I, s:I}", "timeout_s", l->timeout_s, "memory_mb",
	                 (json_int_t)l->memory_mb, "procs", (json_int_t)l->procs, "output_cap",
	                 (json_int_t)l->output_cap, "tmp_mb", (json_int_t)l->tmp_mb, "open_files",
	                 (json_int_t)l->open_files, "file_mb", (json_int_t)l->file_mb);
}

static void iso8601(time_t t, char out[32])
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* The absolute path when it resolves, else path as given, as valid UTF-8
 * (malloc'd; NULL when out of memory). */
static char *absolute(const char *path)
{
	char buf[PATH_MAX];
	const char *p = realpath(path, buf) ? buf : path;

	return ee_text_sanitize(p, strlen(p), (size_t)-1, NULL);
}

/* The JSON texts of one row; freed by free_texts. */
struct row_texts {
	char *command_line, *models, *limits, *summary, *tasks, *samples;
};

static void free_texts(struct row_texts *t)
{
	free(t->tasks);
	free(t->samples);
	free(t->command_line);
	free(t->models);
	free(t->limits);
	free(t->summary);
}

static int dump_texts(const struct cli_history_row *row, const json_t *summary, struct row_texts *t,
                      struct ee_err *err)
{
	json_t *models = models_json(row->models);
	json_t *limits = limits_json(row->limits);

	t->command_line = row->argv ? json_dumps(row->argv, JSON_COMPACT) : NULL;
	t->models = models ? json_dumps(models, JSON_COMPACT) : NULL;
	t->limits = limits ? json_dumps(limits, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	t->summary = json_dumps(summary, JSON_COMPACT | JSON_REAL_PRECISION(17));
	t->tasks = absolute(row->tasks);
	t->samples = absolute(row->samples);
	json_decref(models);
	json_decref(limits);
	if (!t->command_line || !t->models || !t->limits || !t->summary || !t->tasks || !t->samples)
		return ee_fail(err, EE_ERR_USAGE, "history %.160s: out of memory", row->db);
	return 0;
}

int cli_history_store(const struct cli_history_row *row, const json_t *summary, long long *ret_id,
                      struct ee_err *err)
{
	char tasks_sha[EE_SHA256_HEX], samples_sha[EE_SHA256_HEX], started[32], finished[32];
	struct row_texts t = { 0 };
	struct ee_history *h = NULL;
	struct ee_err why;
	int rc = -1;

	if (ee_sha256_file(row->tasks, tasks_sha, &why) < 0 ||
	    (row->samples_sha256 ? snprintf(samples_sha, sizeof(samples_sha), "%s", row->samples_sha256) < 0
	                         : ee_sha256_file(row->samples, samples_sha, &why) < 0)) {
		ee_fail(err, EE_ERR_USAGE, "history %.160s: cannot hash %.80s", row->db, why.msg);
		return -1;
	}
	if (dump_texts(row, summary, &t, err) < 0)
		goto out;
	iso8601(row->started, started);
	iso8601(row->finished, finished);
	struct ee_history_run run = {
		.started_at = started,
		.finished_at = finished,
		.command_line = t.command_line,
		.tasks_path = t.tasks,
		.tasks_sha256 = tasks_sha,
		.samples_path = t.samples,
		.samples_sha256 = samples_sha,
		.models = t.models,
		.limits = t.limits,
		.execeval_version = EE_VERSION,
		.summary = t.summary,
	};
	if (ee_history_open(row->db, EE_HISTORY_CREATE, &h, err) == 0 &&
	    ee_history_insert(h, &run, ret_id, err) == 0)
		rc = 0;
out:
	ee_history_close(h);
	free_texts(&t);
	return rc;
}
