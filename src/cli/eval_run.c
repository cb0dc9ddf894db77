/* eval_run.c - `<results>.run.json`: what a results file was made from.
 *
 * A fresh `eval` writes, beside its results file, the sha256 of the tasks
 * and samples files and the judging options (limits, strictness,
 * extraction, comparison, shard). `eval --resume` compares them with the
 * run it is about to continue: records judged on other data or by other
 * rules must not be mixed into one file without a word, so a mismatch is
 * refused unless --resume-anyway. Samples read from a pipe have no hash
 * (null): that part is not checked, with a warning. compare and report
 * read the tasks' sha256 back (cli_run_tasks_sha256) to tell data sets
 * apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/jsonfield.h"
#include "cli/cli.h"
#include "base/err.h"
#include "results/outpath.h"
#include "input/samples_dir.h"
#include "base/sha256.h"

#define MAX_RUN_FILE (1u << 20)

void cli_run_file_path(const char *results, char *buf, size_t size)
{
	snprintf(buf, size, "%.4000s.run.json", results);
}

/* The samples' sha256: of the file as given (gzip: the compressed bytes),
 * or of an EvalPlus directory (samples_dir.h): 1; 0 for a pipe; -1. */
static int samples_sha256(const char *samples, int regular, char hex[EE_SHA256_HEX], struct ee_err *err)
{
	if (ee_samples_dir_is(samples))
		return ee_samples_dir_sha256_of(samples, hex, err) < 0 ? -1 : 1;
	if (!regular)
		return 0;
	return ee_sha256_file(samples, hex, err) < 0 ? -1 : 1;
}

json_t *cli_run_describe(const char *tasks, const char *samples, int samples_regular, json_t *options,
                         struct ee_err *err)
{
	char tasks_hex[EE_SHA256_HEX], samples_hex[EE_SHA256_HEX];
	int hashed = 0;

	if (!options || ee_sha256_file(tasks, tasks_hex, err) < 0 ||
	    (hashed = samples_sha256(samples, samples_regular, samples_hex, err)) < 0) {
		if (!options)
			ee_fail(err, EE_ERR_USAGE, "out of memory");
		json_decref(options);
		return NULL;
	}
	json_t *run = json_pack("{s:s, s:s?, s:o}", "tasks_sha256", tasks_hex, "samples_sha256",
	                        hashed ? samples_hex : NULL, "options", options);
	if (!run)
		ee_fail(err, EE_ERR_USAGE, "out of memory");
	return run;
}

int cli_run_write(const char *results, const json_t *run, int force, struct ee_err *err)
{
	char path[4096];
	char *text = json_dumps(run, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	if (!text)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	cli_run_file_path(results, path, sizeof(path));
	size_t len = strlen(text);
	text[len] = '\n';
	int rc = ee_write_atomic(path, text, len + 1, force, err);
	free(text);
	return rc;
}

int cli_run_read(const char *results, json_t **ret, struct ee_err *err)
{
	char path[4096];
	json_error_t jerr;
	char jtext[EE_JF_ERROR_TEXT];
	struct stat st;

	cli_run_file_path(results, path, sizeof(path));
	*ret = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (*ret || (stat(path, &st) < 0 && errno == ENOENT))
		return 0;
	return ee_fail(err, EE_ERR_USAGE, "%s:%d: %s", path, jerr.line, ee_jf_error_text(&jerr, jtext));
}

int cli_run_tasks_sha256(const char *results, char *out, size_t size, struct ee_err *err)
{
	char path[4096];
	json_t *run;

	out[0] = '\0';
	if (cli_run_read(results, &run, err) < 0)
		return -1;
	if (!run)
		return 0;
	cli_run_file_path(results, path, sizeof(path));
	const char *sha = json_string_value(json_object_get(run, "tasks_sha256"));
	int rc = 0;
	if (ee_sha256_is_hex(sha) && strlen(sha) < size)
		snprintf(out, size, "%s", sha);
	else
		rc = ee_fail(err, EE_ERR_USAGE, "%s: tasks_sha256: expected 64 hex digits", path);
	json_decref(run);
	return rc;
}

int cli_summary_add_tasks_sha256(json_t *summary, const char *results, struct ee_err *err)
{
	char sha[EE_SHA256_HEX];

	if (cli_run_tasks_sha256(results, sha, sizeof(sha), err) < 0)
		return -1;
	if (sha[0] && json_object_set_new(summary, "tasks_sha256", json_string(sha)) < 0)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	return 0;
}

/* The first key (dotted path) where was and now differ, into buf; 0: none. */
static int first_difference(const json_t *was, const json_t *now, const char *prefix, char *buf, size_t size)
{
	const char *key;
	json_t *v;

	if (json_is_object(was) && json_is_object(now)) {
		json_object_foreach ((json_t *)now, key, v) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s%s%s", prefix, *prefix ? "." : "", key);
			if (first_difference(json_object_get(was, key), v, sub, buf, size))
				return 1;
		}
		json_object_foreach ((json_t *)was, key, v) {
			if (!json_object_get(now, key)) {
				snprintf(buf, size, "%s%s%s", prefix, *prefix ? "." : "", key);
				return 1;
			}
		}
		return 0;
	}
	if (was && now && json_equal(was, now))
		return 0;
	snprintf(buf, size, "%s", prefix);
	return 1;
}

static char *brief(const json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("absent");
}

static const json_t *at_path(const json_t *root, const char *dotted)
{
	char copy[256], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", dotted);
	for (char *k = strtok_r(copy, ".", &save); k && root; k = strtok_r(NULL, ".", &save))
		root = json_object_get(root, k);
	return root;
}

int cli_run_check(const char *results, const json_t *now, int anyway, int *ret_missing, struct ee_err *err)
{
	char path[4096], where[256];
	json_t *was;

	*ret_missing = 0;
	cli_run_file_path(results, path, sizeof(path));
	if (cli_run_read(results, &was, err) < 0)
		return -1;
	if (!was) {
		*ret_missing = 1;
		return 0;
	}
	json_t *mine = json_deep_copy(now);
	if (!mine) {
		json_decref(was);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	const char *stopped = json_string_value(json_object_get(was, "samples_stopped"));
	if (stopped) { /* the samples were wrong: they are fixed now, records before stay */
		fprintf(stderr,
		        "execeval eval: warning: --resume: the run in %s stopped on its samples (%s); the "
		        "records it kept are continued, the samples are not checked against them\n",
		        path, stopped);
		json_object_set(mine, "samples_sha256", json_object_get(was, "samples_sha256"));
		json_object_set(mine, "samples_stopped", json_object_get(was, "samples_stopped"));
		*ret_missing = 2;
	} else if (json_is_null(json_object_get(mine, "samples_sha256"))) { /* a pipe: cannot tell */
		fprintf(stderr,
		        "execeval eval: warning: --resume: samples read from a pipe are not checked against "
		        "%s\n",
		        path);
		json_object_set(mine, "samples_sha256", json_object_get(was, "samples_sha256"));
	}
	int rc = 0;
	if (first_difference(was, mine, "", where, sizeof(where))) {
		char *a = brief(at_path(was, where)), *b = brief(at_path(mine, where));
		rc = anyway ? 0
		            : ee_fail(err, EE_ERR_USAGE,
		                      "--resume: %.80s: %.40s was %.24s, now %.24s: not the same run "
		                      "(--resume-anyway to mix them)",
		                      path, where, a ? a : "?", b ? b : "?");
		if (anyway)
			fprintf(stderr, "execeval eval: warning: --resume-anyway: %s: %s was %s, now %s\n",
			        path, where, a ? a : "?", b ? b : "?");
		free(a);
		free(b);
	}
	json_decref(mine);
	json_decref(was);
	return rc;
}

int cli_run_mark_stopped(const char *results, const char *why, int force, struct ee_err *err)
{
	char path[4096];
	cli_run_file_path(results, path, sizeof(path));
	json_t *run = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	int rc = run && json_object_set_new(run, "samples_sha256", json_null()) == 0 &&
	                         json_object_set_new(run, "samples_stopped", json_string(why)) == 0
	                 ? cli_run_write(results, run, force, err)
	                 : ee_fail(err, EE_ERR_USAGE, "%s: cannot note that the run stopped", path);
	json_decref(run);
	return rc;
}
