/* test_oom.c - every allocation the parsers and the summary make may fail.
 *
 * The binary is linked with --wrap for malloc, calloc, realloc, strdup and
 * strndup (Makefile), so the library's own calls come here, and jansson is
 * pointed here with json_set_alloc_funcs. For each input, allocation number
 * 0, 1, 2, ... is made to fail in turn until a run makes no more
 * allocations than that: every run must end without a crash or a leak
 * (ASan), a failure must be reported as an error, never as a result with
 * something missing: a run that still succeeds despite the failure must
 * give exactly what the run without failures gives. As libuv tests its
 * loop's out-of-memory paths. The inputs are the fuzz targets' corpora. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compare.h"
#include "composite.h"
#include "err.h"
#include "extract.h"
#include "leakcheck.h"
#include "pyliteral.h"
#include "resource_limits.h"
#include "results.h"
#include "serve/request.h"
#include "summary.h"
#include "task.h"

#ifndef CORPUS
#define CORPUS "tests/fuzz/corpus"
#endif
#define OOM_MAX_INPUT  (64u << 10)
#define MAX_ALLOCS_RUN 200000L /* a run making more is a runaway loop */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long fail_at = -1; /* the allocation that fails; -1: none */
static long allocs;       /* allocations since arm() */
static int failed;        /* the armed allocation was reached and failed */
static int in_jansson;    /* inside jansson's parser: see below */

static int inject(void)
{
	if (fail_at < 0 || in_jansson)
		return 0;
	if (allocs++ != fail_at)
		return 0;
	failed = 1;
	errno = ENOMEM; /* as the allocator's own failure */
	return 1;
}

void *__wrap_malloc(size_t n)
{
	return inject() ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size)
{
	return inject() ? NULL : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n)
{
	return inject() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return __wrap_strndup(s, strlen(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = __wrap_malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

/* jansson's own parser is not this test's subject: on a failed allocation
 * it reports a parse error at a wrong place ("string or '}' expected"),
 * once returned a different document, and once wrote out of bounds (2.14).
 * Its allocations are let through; what execeval does with its result,
 * and every json_object_set_new and the like after it, is tested. */
json_t *__real_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *__real_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__real_json_loadf(FILE *input, size_t flags, json_error_t *error);
json_t *__real_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__wrap_json_loadf(FILE *input, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error);

#define UNINJECTED(call)                                                                                     \
	do {                                                                                                 \
		in_jansson++;                                                                                \
		json_t *j = call;                                                                            \
		in_jansson--;                                                                                \
		return j;                                                                                    \
	} while (0)
json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
	UNINJECTED(__real_json_loadb(buf, len, flags, error));
}
json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error)
{
	UNINJECTED(__real_json_loads(input, flags, error));
}
json_t *__wrap_json_loadf(FILE *input, size_t flags, json_error_t *error)
{
	UNINJECTED(__real_json_loadf(input, flags, error));
}
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error)
{
	UNINJECTED(__real_json_load_file(path, flags, error));
}

static void arm(long n)
{
	fail_at = n, allocs = 0, failed = 0;
}
static void disarm(void)
{
	fail_at = -1;
}

static void init(void)
{
	json_set_alloc_funcs(__wrap_malloc, free);
}

/* One subject: parses in (len bytes, NUL-terminated) and returns 0 with what
 * it produced as text in *digest (made after disarm(): a digest may not
 * itself fail), or -1 with err set. */
typedef int subject_fn(const char *in, size_t len, char **digest, struct ee_err *err);

static char *dump(const json_t *j)
{
	disarm();
	return j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY) : strdup("null");
}

/* ---- the subjects ------------------------------------------------------- */

static int task_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	json_t *j = json_loadb(in, len, JSON_DECODE_ANY, NULL);
	struct ee_task t;
	if (!j)
		return ee_fail(err, EE_ERR_USAGE, "out of memory"); /* the corpus holds JSON only */
	int rc = ee_task_from_json(j, EE_FORMAT_AUTO, "oom:1", &t, err);
	json_decref(j);
	if (rc < 0)
		return rc;
	disarm();
	char buf[256];
	snprintf(buf, sizeof(buf), "%s %zu %s", t.task_id, t.n_tests, t.entry_point ? t.entry_point : "-");
	*digest = strdup(buf);
	ee_task_free(&t);
	return 0;
}

static int request_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	struct ee_request_rules rules = { .max_runs = 8,
		                          .extract = EE_EXTRACT_AUTO,
		                          .ceiling = &ceiling,
		                          .max_tests = 64,
		                          .max_request_tests = 256,
		                          .max_values = 4096 };
	struct ee_request r;
	memset(&r, 0, sizeof(r));
	int kind = strstr(in, "\"runs\"") ? EE_REQUEST_BATCH : EE_REQUEST_RUN;
	if (ee_request_parse(in, len, kind, &rules, &r, err) < 0)
		return -1;
	disarm();
	char buf[256];
	snprintf(buf, sizeof(buf), "%zu runs %zu tests %s", r.n_runs, r.tests, r.runs[0].program);
	*digest = strdup(buf);
	ee_request_free(&r);
	return 0;
}

static int summary_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	static const unsigned long ks[] = { 1, 2, 10 };
	struct ee_summary *s = ee_summary_new();
	const char *p = in, *end = in + len;
	int rc = 0;

	if (!s)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	for (unsigned long line = 1; p < end && rc == 0; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, n, 0, NULL);
		char where[32];
		snprintf(where, sizeof(where), "oom:%lu", line);
		if (rec)
			rc = ee_summary_add(s, rec, where, err);
		json_decref(rec);
		p += n + 1;
	}
	json_t *sum = rc == 0 ? ee_summary_json(s, ks, 3, 1.0) : NULL;
	if (rc == 0 && !sum)
		rc = ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (rc == 0) {
		json_object_del(sum, "wall_s"); /* the same in every run, but not an input's */
		*digest = dump(sum);
	}
	json_decref(sum);
	ee_summary_free(s);
	return rc;
}

static int literal_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	/* NULL is "not a literal" or "out of memory" (pyliteral.h). */
	json_t *v = ee_pyliteral_parse(in, len);
	if (!v && failed)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	*digest = dump(v);
	json_decref(v);
	return 0;
}

static int assert_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_pycall c;
	int rc = ee_pyassert_convert(in, &c);
	if (rc < 0) {
		ee_pycall_free(&c);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	disarm();
	char *expected = rc == 1 ? json_dumps(c.expected, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	char buf[512];
	snprintf(buf, sizeof(buf), "%d %s %s", rc, rc == 1 ? c.fn : "-", expected ? expected : "-");
	free(expected);
	*digest = strdup(buf);
	ee_pycall_free(&c);
	return 0;
}

static int extract_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_extract_info info;
	char *out;
	size_t out_len;
	if (ee_extract_code(in, len, EE_EXTRACT_AUTO, "f", &out, &out_len, &info, err) < 0)
		return -1;
	disarm();
	*digest = strndup(out, out_len);
	free(out);
	return 0;
}

static int composite_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_composite c;
	if (ee_composite_parse(in, &c, err) < 0)
		return -1;
	static const char metrics[] =
	        "\"samples\": 3, \"statuses\": {\"pass\": 1}, \"pass_at_k\": {\"1\": 0.3},"
	        " \"mean_score\": 0.5, \"lint\": {\"pass_rate\": 0.25}";
	char text[512];
	snprintf(text, sizeof(text), "{%s, \"classes\": {\"a\": {%s}}}", metrics, metrics);
	json_t *summary = json_loads(text, 0, NULL);
	if (!summary)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	int rc = ee_composite_add(&c, summary, err);
	if (rc == 0)
		*digest = dump(summary);
	json_decref(summary);
	return rc;
}

/* The file readers read a path: the input goes into a memfd. */
static const char *as_file(const char *in, size_t len)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0)
		fd = memfd_create("oom", 0);
	cr_assert(fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, in, len, 0) == (ssize_t)len);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

static int count_record(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	(void)rec, (void)where, (void)err;
	++*(long *)ctx;
	return 0;
}

static int results_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	long n = 0;
	int torn;
	if (ee_results_read(as_file(in, len), count_record, &n, &torn, err) < 0)
		return -1;
	disarm();
	char buf[64];
	snprintf(buf, sizeof(buf), "%ld records, torn %d", n, torn);
	*digest = strdup(buf);
	return 0;
}

static int compare_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	static const unsigned long ks[] = { 1, 10 };
	struct ee_compare_side s;
	memset(&s, 0, sizeof(s));
	int rc = ee_compare_side_from_file(as_file(in, len), ks, 2, &s, err);
	if (rc == 0)
		*digest = dump(s.summary);
	ee_compare_side_free(&s);
	return rc;
}

/* ---- the loop ----------------------------------------------------------- */

static int says_out_of_memory(const struct ee_err *err)
{
	return strstr(err->msg, "out of memory") != NULL;
}

/* The same error, its details perhaps cut for memory ("?" for a value it
 * could not show): the same place ("oom:LINE: field:"), the same words. */
static int same_place(const char *got, const char *want)
{
	const char *g = strchr(got, ' '), *w = strchr(want, ' ');
	return g && w && g - got == w - want && strncmp(got, want, (size_t)(g - got)) == 0;
}

/* Fails each allocation of subject(in) in turn; returns how many there were. */
static long exhaust(const char *name, subject_fn *subject, const char *in, size_t len)
{
	struct ee_err err = { 0 };
	char *want = NULL, *got;
	int want_rc = subject(in, len, &want, &err);
	disarm();
	char want_msg[sizeof(err.msg)];
	snprintf(want_msg, sizeof(want_msg), "%s", err.msg);

	for (long n = 0;; n++) {
		got = NULL;
		memset(&err, 0, sizeof(err));
		arm(n);
		int rc = subject(in, len, &got, &err);
		int hit = failed;
		disarm();
		if (!hit) { /* every allocation was allowed: as the run without failures */
			cr_expect_eq(rc, want_rc, "%s: %d vs %d without failures", name, rc, want_rc);
			free(got);
			free(want);
			return n;
		}
		if (rc < 0 && want_rc == 0)
			cr_expect(says_out_of_memory(&err), "%s: allocation %ld failed; the error says '%s'",
			          name, n, err.msg);
		if (rc < 0 && want_rc < 0 && !says_out_of_memory(&err))
			cr_expect(same_place(err.msg, want_msg),
			          "%s: allocation %ld failed: another error: '%s'", name, n, err.msg);
		if (rc == 0)
			cr_expect(want && got && strcmp(got, want) == 0,
			          "%s: allocation %ld failed, yet it succeeded with another "
			          "result:\n%s\nvs\n%s",
			          name, n, got ? got : "(none)", want ? want : "(none)");
		free(got);
		cr_assert_lt(n, MAX_ALLOCS_RUN, "%s: no end to its allocations", name);
	}
}

/* Every file of the named fuzz target's corpus through subject. */
static void corpus(const char *target, subject_fn *subject)
{
	char dir[256], path[512];
	static char in[OOM_MAX_INPUT + 1];
	snprintf(dir, sizeof(dir), "%s/%s", CORPUS, target);
	DIR *d = opendir(dir);
	cr_assert(d, "%s: %m", dir);
	long files = 0, total = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "re");
		cr_assert(f, "%s: %m", path);
		size_t len = fread(in, 1, OOM_MAX_INPUT, f);
		fclose(f);
		in[len] = '\0';
		total += exhaust(path, subject, in, len);
		files++;
	}
	closedir(d);
	cr_assert_gt(files, 0, "%s: an empty corpus proves nothing", dir);
	cr_assert_gt(total, 0, "%s: no allocation was ever made: the wrapping does not reach the library",
	             dir);
	no_leaks();
}

TestSuite(oom, .init = init);

Test(oom, task_parsing)
{
	corpus("fuzz_task", task_subject);
}
Test(oom, request_parsing)
{
	corpus("fuzz_request", request_subject);
}
Test(oom, summary)
{
	corpus("fuzz_summary", summary_subject);
}
Test(oom, python_literals)
{
	corpus("fuzz_pyliteral", literal_subject);
}
Test(oom, literal_asserts)
{
	corpus("fuzz_pyliteral", assert_subject);
}
Test(oom, extraction)
{
	corpus("fuzz_extract", extract_subject);
}
Test(oom, composite_formulas)
{
	corpus("fuzz_composite", composite_subject);
}
Test(oom, results_files)
{
	corpus("fuzz_results", results_subject);
}
Test(oom, compare_sides)
{
	corpus("fuzz_compare", compare_subject);
}
