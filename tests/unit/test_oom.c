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
#include <ftw.h>
#include <jansson.h>
#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/buf.h"
#include "results/compare.h"
#include "results/composite.h"
#include "input/dataset.h"
#include "base/err.h"
#include "verdict/events.h"
#include "input/extract.h"
#include "history/history.h"
#include "pyvalue/judge.h"
#include "leakcheck.h"
#include "../fuzz/events_task.h"
#include "protocol/netstring.h"
#include "pyvalue/pyliteral.h"
#include "verdict/record.h"
#include "report/out.h"
#include "report/report.h"
#include "base/resource_limits.h"
#include "results/results.h"
#include "input/samples_dir.h"
#include "sandbox/sandbox.h"
#include "serve/request.h"
#include "results/summary.h"
#include "input/task.h"
#include "base/text.h"

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
	/* --max-tests 1 --test-pick longest: its ranking allocates too */
	struct ee_task_rules budget = { .max_tests = 1, .pick = EE_PICK_LONGEST };
	if (ee_task_apply_rules(&t, &budget, err) < 0) {
		ee_task_free(&t);
		return -1;
	}
	disarm();
	char buf[256];
	snprintf(buf, sizeof(buf), "%s %zu %s %zu", t.task_id, t.n_tests, t.entry_point ? t.entry_point : "-",
	         t.n_tests ? t.tests[0].task_index : 0);
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

/* in as one gzip member, into *ret (malloc'd, never failed: a fixture). */
static size_t gzip_of(const char *in, size_t len, unsigned char **ret)
{
	z_stream z = { 0 };
	size_t cap = len + len / 8 + 64;
	in_jansson++;
	*ret = malloc(cap);
	cr_assert(*ret && deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (unsigned char *)in, z.avail_in = (uInt)len;
	z.next_out = *ret, z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	in_jansson--;
	return cap - z.avail_out;
}

/* The results files again, gzip-compressed: zlib's allocations fail too. */
static int gzip_results_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	unsigned char *gz;
	size_t gz_len = gzip_of(in, len, &gz);
	long n = 0;
	int torn;
	int rc = ee_results_read(as_file((const char *)gz, gz_len), count_record, &n, &torn, err);
	free(gz);
	if (rc < 0)
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

/* Appends to a digest, its allocations never failed: not the subject's. */
static void note(struct ee_buf *b, const char *p, size_t n)
{
	in_jansson++;
	cr_assert_eq(ee_buf_append(b, p, n), 0);
	in_jansson--;
}

/* The events stream of fuzz_events' task, then the record built from it: a
 * record the stream's or the builder's allocation failure left a key short
 * of would be data silently lost. */
static const struct ee_task *events_task(void)
{
	static struct ee_task task;
	static int ready;
	if (!ready) {
		const char *json = EVENTS_TASK_JSON;
		long saved = fail_at;
		disarm();
		json_t *o = json_loads(json, 0, NULL);
		struct ee_err err;
		cr_assert(o && ee_task_from_json(o, EE_FORMAT_AUTO, "oom:1", &task, &err) == 0);
		json_decref(o);
		fail_at = saved;
		ready = 1;
	}
	return &task;
}

static int record_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	static char out_text[] = "some output\n", err_text[] = "Traceback\n";
	struct ee_stream s;
	if (ee_stream_init(&s, events_task(), EVENTS_NONCE, 1, 0) < 0) {
		ee_stream_free(&s);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	size_t chunk = len ? (size_t)(unsigned char)in[0] % 64 + 1 : 1;
	for (size_t off = 1; off < len; off += chunk)
		ee_stream_feed(&s, in + off, len - off < chunk ? len - off : chunk);
	ee_stream_finish(&s);
	struct ee_sandbox_outcome out = { .have_status = 1,
		                          .cg = { -1, -1, 2048, -1 },
		                          .out = { .data = out_text, .len = sizeof(out_text) - 1 },
		                          .err = { .data = err_text, .len = sizeof(err_text) - 1 },
		                          .wall_ms = 12.5,
		                          .cpu_ms = 3.25,
		                          .runq_wait_ms = -1,
		                          .maxrss_kb = 1024 };
	json_t *extra = json_pack("{s:s}", "note", "kept");
	struct ee_record_parts parts = { .task = events_task(),
		                         .stream = &s,
		                         .out = &out,
		                         .model = "m",
		                         .sample = 3,
		                         .extra = extra,
		                         .program = "def f(x):\n    return x\n",
		                         .extraction = "raw",
		                         .sandbox_id = "sb-1",
		                         .started_at = "then",
		                         .lint = 1 };
	json_t *rec = extra ? ee_record_build(&parts) : NULL;
	json_decref(extra);
	ee_stream_free(&s);
	if (!rec)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	json_object_del(rec, "finished_at");
	*digest = dump(rec);
	json_decref(rec);
	/* The stream's failure is a protocol violation, a reason's a test's
	 * message: the record says "out of memory". */
	if (strstr(*digest, "out of memory")) {
		free(*digest);
		*digest = NULL;
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	return 0;
}

/* A judge that ran out of memory says so in its reason. */
static int judge_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	const char *nul = memchr(in, '\0', len);
	size_t an = nul ? (size_t)(nul - in) : len / 2;
	const char *b = in + an + (nul ? 1 : 0);
	size_t bn = len - (size_t)(b - in);
	char why[4][256] = { "", "", "", "" };
	int same[4] = { -1, -1, -1, -1 };
	same[0] = ee_judge_io(in, an, b, bn, 1e-6, why[0], sizeof(why[0]));
	json_t *ja = json_loadb(in, an, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	json_t *jb = json_loadb(b, bn, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (ja && jb) {
		same[1] = ee_judge_call(ja, jb, -1.0, why[1], sizeof(why[1]));
		same[2] = ee_judge_pyeq(ja, jb, why[2], sizeof(why[2]));
		same[3] = ee_judge_pyeq(ja, ja, why[3], sizeof(why[3]));
	}
	json_decref(ja);
	json_decref(jb);
	for (int i = 0; i < 4; i++)
		if (strstr(why[i], "out of memory"))
			return ee_fail(err, EE_ERR_USAGE, "out of memory");
	disarm();
	char buf[1100];
	snprintf(buf, sizeof(buf), "%d %s|%d %s|%d %s|%d %s", same[0], why[0], same[1], why[1], same[2],
	         why[2], same[3], why[3]);
	*digest = strdup(buf);
	return 0;
}

/* The check programs of HumanEval's shape, converted to calls. */
static int pyprogram_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_pyprogram p;
	int rc = ee_pyprogram_convert(in, &p);
	if (rc < 0) {
		ee_pyprogram_free(&p);
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	}
	disarm();
	char *calls = rc == 1 ? json_dumps(p.calls, JSON_COMPACT) : NULL;
	size_t n = (calls ? strlen(calls) : 0) + 64;
	*digest = malloc(n);
	snprintf(*digest, n, "%d %s %s", rc, rc == 1 ? p.fn : "-", calls ? calls : "-");
	free(calls);
	ee_pyprogram_free(&p);
	return 0;
}

/* Frames of a netstring stream fed in chunks of 7; as fuzz_netstring, the
 * first byte sets the largest frame and the second is not the stream's. */
static int netstring_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	struct ee_ns_decoder d;
	struct ee_buf frames;
	int rc = 0;
	if (len < 2)
		return ee_fail(err, EE_ERR_USAGE, "oom:1: too short");
	ee_buf_init(&frames, OOM_MAX_INPUT * 2);
	ee_ns_init(&d, (size_t)(unsigned char)in[0] * 4, len);
	in += 2, len -= 2;
	for (size_t pos = 0; pos < len && rc == 0; pos += 7) {
		const char *p;
		size_t n;
		rc = ee_ns_feed(&d, in + pos, len - pos < 7 ? len - pos : 7, err);
		while (rc == 0 && (rc = ee_ns_next(&d, &p, &n, err)) == 1) {
			char head[32];
			snprintf(head, sizeof(head), "%zu:", n);
			note(&frames, head, strlen(head));
			note(&frames, p, n);
			note(&frames, "|", 1);
			rc = 0;
		}
	}
	if (rc == 0)
		rc = ee_ns_finish(&d, err);
	ee_ns_free(&d);
	if (rc == 0) {
		disarm();
		*digest = strndup(frames.data ? frames.data : "", frames.len);
	}
	ee_buf_free(&frames);
	return rc < 0 ? -1 : 0;
}

/* Text sanitised as stdout and stderr are, cut at 40 characters. */
static int text_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	int cut = -1;
	char *out = ee_text_sanitize(in, len, 40, &cut);
	if (!out)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	disarm();
	size_t n = strlen(out) + 16;
	*digest = malloc(n);
	snprintf(*digest, n, "%d %s", cut, out);
	free(out);
	return 0;
}

/* The HTML report of a results file. */
static int report_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	static const unsigned long ks[] = { 1, 2 };
	const char *p = in, *end = in + len;
	struct ee_report *r = ee_report_new();
	struct ee_out o;
	unsigned long line = 0;
	char where[32];
	int rc = 0;

	if (!r)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, n, 0, NULL);
		snprintf(where, sizeof(where), "oom:%lu", ++line);
		if (rec)
			rc = ee_report_add(r, rec, where, err);
		json_decref(rec);
		p += n + (nl != NULL);
	}
	struct ee_report_options opt = { .title = "oom", .generated_at = "now", .ks = ks, .nk = 2 };
	ee_out_init(&o, 64u << 20);
	if (rc == 0)
		rc = ee_report_html(r, &opt, &o, err);
	if (rc == 0) {
		disarm();
		*digest = strdup(o.buf.data);
	}
	ee_out_free(&o);
	ee_report_free(r);
	return rc;
}

/* ---- subjects with inputs of their own ---------------------------------- */

/* Runs call with allocations never failed: fixtures, not the subject. */
#define FIXTURE(call)                                                                                        \
	do {                                                                                                 \
		in_jansson++;                                                                                \
		call;                                                                                        \
		in_jansson--;                                                                                \
	} while (0)

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	cr_assert(f && fwrite(text, 1, len, f) == len && fclose(f) == 0, "%s: %m", path);
}

/* An EvalPlus samples directory for two tasks of the bundled examples: a
 * file not UTF-8 among them. */
static const char *samples_root(const struct ee_dataset **tasks)
{
	static char root[] = "/tmp/ee-oom-samples-XXXXXX";
	static struct ee_dataset set;
	static int ready;
	if (!ready) {
		struct ee_err err;
		int rc;
		FIXTURE(rc = ee_dataset_load("examples/tasks.jsonl", EE_FORMAT_AUTO, &set, &err));
		cr_assert_eq(rc, 0, "%s", err.msg);
		cr_assert(mkdtemp(root), "%m");
		char sub[512];
		snprintf(sub, sizeof(sub), "%s/ex_reverse_words", root);
		cr_assert(mkdir(sub, 0700) == 0);
		write_file(sub, "0.py", "def reverse_words(s):\n    return s\n", 35);
		write_file(sub, "10.py", "x = 1\n", 6);
		write_file(sub, "2.py", "bad = '\xff'\n", 10);
		snprintf(sub, sizeof(sub), "%s/ex_gcd_list", root);
		cr_assert(mkdir(sub, 0700) == 0);
		write_file(sub, "0.py", "def gcd_list(xs):\n    return 1\n", 31);
		ready = 1;
	}
	*tasks = &set;
	return root;
}

static int samples_dir_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	const struct ee_dataset *tasks;
	const char *root = samples_root(&tasks);
	struct ee_samples_dir d;
	struct ee_buf out;
	json_t *sample;
	int rc;
	ee_buf_init(&out, OOM_MAX_INPUT);
	if (ee_samples_dir_open(&d, root, tasks, err) < 0) {
		ee_samples_dir_free(&d);
		return -1;
	}
	while ((rc = ee_samples_dir_next(&d, &sample, err)) != 0 && rc != -1) {
		char *text;
		FIXTURE(text = rc == 1 ? json_dumps(sample, JSON_SORT_KEYS)
		                       : strdup(err->msg + strlen(root)));
		note(&out, text, strlen(text));
		free(text);
		json_decref(sample);
	}
	char sha[EE_SHA256_HEX];
	ee_samples_dir_sha256(&d, sha);
	ee_samples_dir_free(&d);
	if (rc == 0) {
		note(&out, sha, strlen(sha));
		disarm();
		*digest = strdup(out.data);
	}
	ee_buf_free(&out);
	return rc;
}

/* SQLite's own allocations come here too (set before its first use): the
 * history's handling of a statement that ran out of memory is tested. */
static void *sqlite_malloc(int n)
{
	return __wrap_malloc((size_t)n);
}
static void *sqlite_realloc(void *p, int n)
{
	return __wrap_realloc(p, (size_t)n);
}
static int sqlite_size(void *p)
{
	return (int)malloc_usable_size(p);
}
static int sqlite_roundup(int n)
{
	return (n + 7) & ~7;
}
static int sqlite_init(void *app)
{
	(void)app;
	return SQLITE_OK;
}
static void sqlite_shutdown(void *app)
{
	(void)app;
}

static int visit_run(void *ctx, const struct ee_history_run *run, struct ee_err *err)
{
	char head[64];
	(void)err;
	snprintf(head, sizeof(head), "%lld|", run->id);
	note(ctx, head, strlen(head));
	const char *fields[] = { run->started_at,       run->finished_at,  run->command_line,
		                 run->tasks_path,       run->tasks_sha256, run->samples_path,
		                 run->samples_sha256,   run->models,       run->limits,
		                 run->execeval_version, run->summary };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		note(ctx, fields[i], strlen(fields[i]));
		note(ctx, "|", 1);
	}
	return 0;
}

/* The history's file, named by the pid (another run of the unit tests,
 * a second clone on the host, must not share it), and its leftovers gone. */
static void remove_history(char *path, size_t size)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char leftover[96];

	snprintf(path, size, "/dev/shm/ee-oom-history.%ld.db", (long)getpid());
	for (size_t i = 0; i < 3; i++) {
		snprintf(leftover, sizeof(leftover), "%s%s", path, suffixes[i]);
		unlink(leftover);
	}
}

/* A new history (in memory's file system), a run of this summary stored,
 * listed (all runs, then those of a model and of a class), got back, and
 * listed again after the history is opened anew.
 * The filtered lists: SQLite's json_valid() (3.40) answers 0 when its
 * parse runs out of memory, which must not leave the run out silently. */
static int history_subject(const char *in, size_t len, char **digest, struct ee_err *err)
{
	char path[64];
	remove_history(path, sizeof(path));
	struct ee_history_run run = { .started_at = "2024-05-01T12:34:56Z",
		                      .finished_at = "2024-05-01T12:35:00Z",
		                      .command_line = "[\"execeval\",\"eval\"]",
		                      .tasks_path = "t.jsonl",
		                      .tasks_sha256 = "ab",
		                      .samples_path = "s.jsonl",
		                      .samples_sha256 = "cd",
		                      .models = "[\"m\"]",
		                      .limits = "{}",
		                      .execeval_version = EE_VERSION,
		                      .summary = in };
	struct ee_history_query every = { 0 }, of_model = { .model = "m" },
	                        of_class = { .task_class = "math" };
	struct ee_history *h;
	struct ee_buf out;
	long long id;
	(void)len;
	ee_buf_init(&out, OOM_MAX_INPUT * 4);
	int rc = ee_history_open(path, EE_HISTORY_CREATE, &h, err);
	if (rc == 0)
		rc = ee_history_insert(h, &run, &id, err);
	if (rc == 0) {
		note(&out, "every run:", 10);
		rc = ee_history_list(h, &every, visit_run, &out, err);
	}
	if (rc == 0) {
		note(&out, "of model m:", 11);
		rc = ee_history_list(h, &of_model, visit_run, &out, err);
	}
	if (rc == 0) {
		note(&out, "of class math:", 14);
		rc = ee_history_list(h, &of_class, visit_run, &out, err);
	}
	if (rc == 0) {
		note(&out, "by id:", 6);
		rc = ee_history_get(h, id, visit_run, &out, err) < 0 ? -1 : 0;
	}
	ee_history_close(h);
	h = NULL;
	if (rc == 0) /* an existing history: its schema version is read */
		rc = ee_history_open(path, 0, &h, err);
	if (rc == 0) {
		note(&out, "reopened:", 9);
		rc = ee_history_list(h, &every, visit_run, &out, err);
	}
	ee_history_close(h);
	if (rc == 0) {
		disarm();
		*digest = strdup(out.data ? out.data : "");
	}
	ee_buf_free(&out);
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
	if (getenv("OOM_SHOW"))
		fprintf(stderr, "%s: %d %s\n", name, want_rc, want ? want : err.msg);
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
Test(oom, gzip_results_files)
{
	static const char line[] = "{\"task_id\": \"a\", \"sample\": 0, \"status\": \"pass\"}\n";
	long plain = exhaust("plain", results_subject, line, sizeof(line) - 1);
	long gz = exhaust("gzip", gzip_results_subject, line, sizeof(line) - 1);
	/* inflate's state among them: zlib allocates through ours */
	cr_assert_gt(gz, plain, "gzip input makes %ld allocations, plain %ld", gz, plain);
	corpus("fuzz_results", gzip_results_subject);
}
Test(oom, compare_sides)
{
	corpus("fuzz_compare", compare_subject);
}
Test(oom, events_and_record)
{
	corpus("fuzz_events", record_subject);
}
Test(oom, judge)
{
	corpus("fuzz_judge", judge_subject);
}
Test(oom, check_programs)
{
	corpus("fuzz_pyprogram", pyprogram_subject);
}
Test(oom, netstrings)
{
	corpus("fuzz_netstring", netstring_subject);
}
Test(oom, text)
{
	corpus("fuzz_text", text_subject);
}
Test(oom, report)
{
	corpus("fuzz_report", report_subject);
}
static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

Test(oom, samples_dir)
{
	const struct ee_dataset *tasks;
	cr_assert_gt(exhaust("samples_dir", samples_dir_subject, "", 0), 0);
	nftw(samples_root(&tasks), remove_one, 8, FTW_DEPTH | FTW_PHYS);
	no_leaks();
}
Test(oom, history)
{
	static const sqlite3_mem_methods methods = { sqlite_malloc,   free,
		                                     sqlite_realloc,  sqlite_size,
		                                     sqlite_roundup,  sqlite_init,
		                                     sqlite_shutdown, NULL };
	cr_assert_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &methods), SQLITE_OK);
	/* One summary: each run creates a database (about 1300 allocations). */
	static const char summary[] = "{\"samples\": 2, \"classes\": {\"math\": {\"samples\": 2}}}";
	cr_assert_gt(exhaust("history", history_subject, summary, sizeof(summary) - 1), 0);
	no_leaks();
	char path[64];
	remove_history(path, sizeof(path));
}
