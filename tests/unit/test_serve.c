/* test_serve.c - the server's pure parts: request bodies (request.h), the
 * token (auth.h), listen addresses (listen.h) and the metrics text (stats.h).
 * The HTTP side itself is tested black-box (tests/e2e/test_serve.py). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "leakcheck.h"
#include "resource_limits.h"
#include "serve/auth.h"
#include "serve/listen.h"
#include "serve/request.h"
#include "serve/stats.h"

#define TASK "{\"task_id\": \"t\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert f() == 1\"}]}"

/* The server's defaults as ceiling: timeout 3 s, memory 512 MB, 64 procs. */
static int parse_max(const char *body, int kind, size_t max_runs, struct ee_request *r, struct ee_err *err)
{
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	struct ee_request_rules rules = { max_runs, EE_EXTRACT_AUTO, &ceiling, 0 };
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	return ee_request_parse(body, strlen(body), kind, &rules, r, err);
}

static int parse(const char *body, int kind, struct ee_request *r, struct ee_err *err)
{
	return parse_max(body, kind, 4, r, err);
}

Test(request, run_with_every_field)
{
	struct ee_request r;
	struct ee_err err;
	const char *body =
	        "{\"task\": " TASK ", \"candidate\": \"def f():\\n    return 1\\n\", \"model\": \"m\","
	        " \"sample\": 3, \"limits\": {\"timeout_s\": 0.5}, \"extract\": \"none\"}";

	cr_assert_eq(parse(body, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 1);
	cr_expect_str_eq(r.runs[0].program, "def f():\n    return 1\n");
	cr_expect_str_eq(r.runs[0].model, "m");
	cr_expect_eq(r.runs[0].sample, 3);
	cr_expect_str_eq(r.runs[0].task.task_id, "t");
	cr_expect(r.runs[0].task.limits.has_timeout);
	cr_expect_float_eq(r.runs[0].task.limits.timeout_s, 0.5, 1e-9);
	cr_expect_not(r.runs[0].task.limits.has_memory);
	ee_request_free(&r);
	no_leaks();
}

Test(request, request_limits_override_the_tasks)
{
	struct ee_request r;
	struct ee_err err;
	const char *body =
	        "{\"task\": {\"task_id\": \"t\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert 1\"}],"
	        " \"limits\": {\"timeout_s\": 2.5, \"memory_mb\": 100}},"
	        " \"candidate\": \"x = 1\", \"limits\": {\"timeout_s\": 2}}";

	cr_assert_eq(parse(body, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect_float_eq(r.runs[0].task.limits.timeout_s, 2, 1e-9);
	cr_expect_eq(r.runs[0].task.limits.memory_mb, 100);
	cr_expect_eq(r.runs[0].sample, 0);
	cr_expect_null(r.runs[0].model);
	ee_request_free(&r);
}

Test(request, generation_is_extracted)
{
	struct ee_request r;
	struct ee_err err;
	const char *body =
	        "{\"task\": " TASK ", \"candidate\": \"Here:\\n```python\\ndef f(): return 1\\n```\\n\"}";
	const char *fenced = "{\"task\": " TASK ", \"candidate\": \"no block\", \"extract\": \"fenced\"}";

	cr_assert_eq(parse(body, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect_str_eq(r.runs[0].program, "def f(): return 1\n");
	cr_expect_not(r.runs[0].no_code_block);
	ee_request_free(&r);
	cr_assert_eq(parse(fenced, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect(r.runs[0].no_code_block);
	ee_request_free(&r);
}

struct bad_case {
	const char *body;
	int kind;
	const char *field; /* "" = null */
	const char *in_msg;
};

/* Each malformed body fails with the JSON path at fault. */
static const struct bad_case bad[] = {
	{ "{\"task\": " TASK ", ", EE_REQUEST_RUN, "", "body: line 1" },
	{ "[1]", EE_REQUEST_RUN, "", "must be a JSON object" },
	{ "{\"candidate\": \"x\"}", EE_REQUEST_RUN, "task", "required" },
	{ "{\"task\": " TASK "}", EE_REQUEST_RUN, "candidate", "required" },
	{ "{\"task\": " TASK ", \"candidate\": 5}", EE_REQUEST_RUN, "candidate", "expected a string" },
	{ "{\"task\": 1, \"candidate\": \"x\"}", EE_REQUEST_RUN, "task", "expected an object" },
	{ "{\"task\": {\"task_id\": \"t\", \"tests\": [{\"kind\": \"nope\"}]}, \"candidate\": \"x\"}",
	  EE_REQUEST_RUN, "task.tests[0].kind", "expected one of" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"limit\": {}}", EE_REQUEST_RUN, "limit",
	  "unknown field" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"limits\": {\"timeout_s\": \"1\"}}", EE_REQUEST_RUN,
	  "limits.timeout_s", "" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"limits\": []}", EE_REQUEST_RUN, "limits", "" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"model\": 1}", EE_REQUEST_RUN, "model", "" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"sample\": -1}", EE_REQUEST_RUN, "sample", "" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"extract\": \"all\"}", EE_REQUEST_RUN, "extract", "" },
	{ "{\"task\": " TASK ", \"task\": " TASK ", \"candidate\": \"x\"}", EE_REQUEST_RUN, "", "duplicate" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"limits\": {\"timeout_s\": 3.5}}", EE_REQUEST_RUN,
	  "limits.timeout_s", "above this server's ceiling 3" },
	{ "{\"task\": {\"task_id\": \"t\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert 1\"}], "
	  "\"limits\": "
	  "{\"memory_mb\": 513}}, \"candidate\": \"x\"}",
	  EE_REQUEST_RUN, "task.limits.memory_mb", "above this server's ceiling 512" },
	{ "{\"runs\": [{\"task\": " TASK ", \"candidate\": \"x\", \"limits\": {\"procs\": 65}}]}",
	  EE_REQUEST_BATCH, "runs[0].limits.procs", "ceiling 64" },
	{ "{}", EE_REQUEST_BATCH, "runs", "required" },
	{ "{\"runs\": []}", EE_REQUEST_BATCH, "runs", "non-empty" },
	{ "{\"runs\": [], \"x\": 1}", EE_REQUEST_BATCH, "x", "unknown field" },
	{ "{\"runs\": [{\"candidate\": \"x\"}], \"sample\": 1}", EE_REQUEST_BATCH, "sample",
	  "unknown field" },
	{ "{\"runs\": [{\"candidate\": \"x\"}], \"candidate\": \"x\"}", EE_REQUEST_BATCH, "candidate",
	  "unknown field" },
	{ "{\"runs\": [{\"candidate\": \"x\"}]}", EE_REQUEST_BATCH, "runs[0].task", "required" },
	{ "{\"task\": {\"task_id\": \"t\", \"tests\": [{\"kind\": \"nope\"}]}, \"runs\": [{\"candidate\": "
	  "\"x\"}]}",
	  EE_REQUEST_BATCH, "task.tests[0].kind", "expected one of" },
	{ "{\"task\": " TASK ", \"limits\": {\"timeout_s\": 9}, \"runs\": [{\"candidate\": \"x\"}]}",
	  EE_REQUEST_BATCH, "limits.timeout_s", "ceiling 3" },
	{ "{\"task\": " TASK ", \"model\": 7, \"runs\": [{\"candidate\": \"x\"}]}", EE_REQUEST_BATCH, "model",
	  "expected a string" },
	{ "{\"task\": " TASK ", \"extract\": \"all\", \"runs\": [{\"candidate\": \"x\"}]}", EE_REQUEST_BATCH,
	  "extract", "" },
	{ "{\"task\": 3, \"runs\": [{\"candidate\": \"x\"}]}", EE_REQUEST_BATCH, "task",
	  "expected an object" },
	{ "{\"task\": " TASK ", \"runs\": [{\"candidate\": \"x\"}, {\"candidate\": 1}]}", EE_REQUEST_BATCH,
	  "runs[1].candidate", "expected a string" },
	{ "{\"runs\": [{\"task\": " TASK ", \"candidate\": \"x\"}, 7]}", EE_REQUEST_BATCH, "runs[1]",
	  "expected an object" },
	{ "{\"runs\": [{\"task\": " TASK ", \"candidate\": \"x\"}, {\"task\": " TASK "}]}", EE_REQUEST_BATCH,
	  "runs[1].candidate", "required" },
	{ "{\"runs\": [{\"task\": {\"task_id\": \"t\", \"tests\": [{\"kind\": \"io\"}]}, \"candidate\": "
	  "\"x\"}]}",
	  EE_REQUEST_BATCH, "runs[0].task.tests[0].stdout", "" },
};

Test(request, malformed_bodies_name_the_field)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ee_request r;
		struct ee_err err;
		cr_assert_eq(parse(bad[i].body, bad[i].kind, &r, &err), -1, "case %zu accepted", i);
		cr_expect_str_eq(err.field, bad[i].field, "case %zu: field '%s' (%s)", i, err.field, err.msg);
		cr_expect(strstr(err.msg, bad[i].in_msg) != NULL, "case %zu: message '%s'", i, err.msg);
		cr_expect_null(r.runs, "case %zu: half-built request returned", i);
	}
	no_leaks();
}

/* One task for many candidates (n samples of one prompt): each run without
 * its own task, limits, model or extract takes the batch's; a run's own
 * field replaces the batch's whole. */
Test(request, batch_defaults_apply_to_runs_without_their_own)
{
	struct ee_request r;
	struct ee_err err;
	const char *body =
	        "{\"task\": " TASK
	        ", \"limits\": {\"timeout_s\": 0.5}, \"model\": \"m\", \"extract\": \"none\","
	        " \"runs\": [{\"candidate\": \"a\"},"
	        " {\"candidate\": \"b\", \"model\": \"own\", \"sample\": 1, \"limits\": {\"memory_mb\": 64}},"
	        " {\"candidate\": \"```python\\nc\\n```\", \"extract\": \"fenced\","
	        "  \"task\": {\"task_id\": \"other\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert "
	        "1\"}]}}]}";

	cr_assert_eq(parse(body, EE_REQUEST_BATCH, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 3);
	cr_expect_str_eq(r.runs[0].task.task_id, "t");
	cr_expect_str_eq(r.runs[0].model, "m");
	cr_expect_str_eq(r.runs[0].program, "a");
	cr_expect(r.runs[0].task.limits.has_timeout);
	cr_expect_float_eq(r.runs[0].task.limits.timeout_s, 0.5, 1e-9);
	cr_expect_str_eq(r.runs[1].task.task_id, "t");
	cr_expect_str_eq(r.runs[1].model, "own");
	cr_expect_eq(r.runs[1].sample, 1);
	cr_expect_not(r.runs[1].task.limits.has_timeout, "a run's own limits replace the batch's whole");
	cr_expect(r.runs[1].task.limits.has_memory);
	cr_expect_str_eq(r.runs[2].task.task_id, "other");
	cr_expect_str_eq(r.runs[2].program, "c\n");
	cr_expect_str_eq(r.runs[2].model, "m");
	cr_expect(r.runs[2].task.limits.has_timeout, "the batch's limits apply over a run's own task");
	ee_request_free(&r);
	no_leaks();
}

Test(request, batch_in_order_and_bounded)
{
	struct ee_request r;
	struct ee_err err;
	char body[4096];
	int len = snprintf(body, sizeof(body), "{\"runs\": [");
	for (int i = 0; i < 5; i++)
		len += snprintf(body + len, sizeof(body) - (size_t)len,
		                "%s{\"task\": " TASK ", \"candidate\": \"x = %d\", \"sample\": %d}",
		                i ? ", " : "", i, i);
	snprintf(body + len, sizeof(body) - (size_t)len, "]}");

	/* Five runs, four allowed: -2, naming runs. */
	cr_assert_eq(parse(body, EE_REQUEST_BATCH, &r, &err), -2);
	cr_expect_str_eq(err.field, "runs");
	cr_expect(strstr(err.msg, "5 runs") != NULL, "%s", err.msg);
	cr_assert_eq(parse_max(body, EE_REQUEST_BATCH, 5, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 5);
	for (size_t i = 0; i < 5; i++) {
		char want[16];
		snprintf(want, sizeof(want), "x = %zu", i);
		cr_expect_str_eq(r.runs[i].program, want);
		cr_expect_eq(r.runs[i].sample, (long)i);
	}
	ee_request_free(&r);
	no_leaks();
}

/* ---- token ---------------------------------------------------------------- */

static char *token_file(const char *content)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/ee-token-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return path;
}

Test(token, load_strips_one_newline_and_rejects_weak_files)
{
	struct {
		const char *content;
		const char *token; /* NULL: refused */
		const char *in_msg;
	} cases[] = {
		{ "0123456789abcdef\n", "0123456789abcdef", NULL },
		{ "0123456789abcdef\r\n", "0123456789abcdef", NULL },
		{ "", NULL, "empty" },
		{ "\n", NULL, "empty" },
		{ "short\n", NULL, "too short" },
		{ "0123456789 abcdef\n", NULL, "not printable" },
		{ "0123456789abcdef\n\n", NULL, "not printable" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = token_file(cases[i].content);
		char *tok = NULL;
		struct ee_err err = { 0 };
		int rc = ee_token_load(path, &tok, &err);
		if (cases[i].token) {
			cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
			cr_expect_str_eq(tok, cases[i].token, "case %zu", i);
		} else {
			cr_expect_eq(rc, -1, "case %zu accepted", i);
			cr_expect(strstr(err.msg, cases[i].in_msg) && strstr(err.msg, path), "case %zu: %s",
			          i, err.msg);
		}
		free(tok);
		unlink(path);
	}
	struct ee_err err = { 0 };
	char *tok = NULL;
	cr_expect_eq(ee_token_load("/nonexistent/token", &tok, &err), -1);
	cr_expect(strstr(err.msg, "/nonexistent/token") != NULL, "%s", err.msg);
}

Test(token, check)
{
	const char *t = "0123456789abcdef";

	cr_expect(ee_token_check(t, "Bearer 0123456789abcdef"));
	cr_expect(ee_token_check(t, "bearer 0123456789abcdef"));
	cr_expect_not(ee_token_check(t, NULL));
	cr_expect_not(ee_token_check(t, ""));
	cr_expect_not(ee_token_check(t, "Bearer "));
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdeF"));  /* same length, one byte off */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcde"));   /* a prefix */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdef0")); /* longer */
	cr_expect_not(ee_token_check(t, "Bearer 0123456789abcdef0123456789abcdef")); /* the token twice */
	cr_expect_not(ee_token_check(t, "Basic 0123456789abcdef"));
	cr_expect_not(ee_token_check(t, "0123456789abcdef"));
}

/* ---- listen --------------------------------------------------------------- */

Test(listen, addresses)
{
	struct {
		const char *in;
		const char *out; /* NULL: refused */
		int loopback;
	} cases[] = {
		{ "127.0.0.1:8080", "127.0.0.1:8080", 1 },
		{ "localhost:0", "127.0.0.1:0", 1 },
		{ "127.1.2.3:1", "127.1.2.3:1", 1 },
		{ "0.0.0.0:80", "0.0.0.0:80", 0 },
		{ "10.0.0.1:65535", "10.0.0.1:65535", 0 },
		{ "[::1]:8080", "[::1]:8080", 1 },
		{ "[::]:8080", "[::]:8080", 0 },
		{ "[::ffff:127.0.0.1]:9", "[::ffff:127.0.0.1]:9", 1 },
		{ "127.0.0.1", NULL, 0 },
		{ "127.0.0.1:", NULL, 0 },
		{ "127.0.0.1:65536", NULL, 0 },
		{ "127.0.0.1:-1", NULL, 0 },
		{ "127.0.0.1:80x", NULL, 0 },
		{ "example.com:80", NULL, 0 },
		{ "::1:80", NULL, 0 },
		{ "[::1:80", NULL, 0 },
		{ "[127.0.0.1]:80", NULL, 0 },
		{ ":80", NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_listen_addr a;
		struct ee_err err = { 0 };
		int rc = ee_listen_parse(cases[i].in, &a, &err);
		if (!cases[i].out) {
			cr_expect_eq(rc, -1, "case %s accepted", cases[i].in);
			cr_expect(strstr(err.msg, "--listen") != NULL, "%s", err.msg);
			continue;
		}
		cr_assert_eq(rc, 0, "case %s: %s", cases[i].in, err.msg);
		char buf[80];
		ee_listen_format((const struct sockaddr *)&a.sa, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].out);
		cr_expect_eq(ee_listen_is_loopback(&a), cases[i].loopback, "case %s", cases[i].in);
	}
}

/* ---- stats ---------------------------------------------------------------- */

static unsigned long long value_of(const char *text, const char *series)
{
	char key[200];
	snprintf(key, sizeof(key), "\n%s ", series);
	const char *p = strstr(text, key);
	cr_assert_not_null(p, "no series %s", series);
	return strtoull(p + strlen(key), NULL, 10);
}

Test(stats, render)
{
	struct ee_serve_stats s;
	struct ee_serve_gauges g = { .queue_depth = 3, .queue_capacity = 8, .running = 2, .workers = 2 };
	size_t len;

	memset(&s, 0, sizeof(s));
	ee_stats_answer(&s, ee_endpoint_of("/v1/run"), 200);
	ee_stats_answer(&s, ee_endpoint_of("/v1/run"), 200);
	ee_stats_answer(&s, ee_endpoint_of("/evil\"path"), 404);
	ee_stats_answer(&s, ee_endpoint_of("/v1/batch"), 418);
	ee_stats_record(&s, "pass");
	ee_stats_record(&s, "timeout");
	ee_stats_record(&s, NULL);
	ee_stats_record(&s, "bogus");
	ee_stats_observe(&s.request_s[0], 0.003);
	ee_stats_observe(&s.request_s[0], 0.7);
	ee_stats_observe(&s.request_s[0], 500);
	char *text = ee_stats_render(&s, &g, &len);
	cr_assert_not_null(text);
	cr_expect_eq(strlen(text), len);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"/v1/run\",code=\"200\"}"), 2);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"other\",code=\"404\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_http_requests_total{endpoint=\"/v1/batch\",code=\"other\"}"),
	             1);
	cr_expect_null(strstr(text, "evil"), "a path became a label");
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"pass\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"timeout\"}"), 1);
	cr_expect_eq(value_of(text, "execeval_evaluations_total{status=\"error\"}"), 0);
	cr_expect_eq(value_of(text, "execeval_sandbox_failures_total"), 1);
	cr_expect_eq(value_of(text, "execeval_queue_depth"), 3);
	cr_expect_eq(value_of(text, "execeval_evaluations_running"), 2);
	const char *h = "execeval_request_duration_seconds_bucket{endpoint=\"/v1/run\",le=";
	char key[160];
	snprintf(key, sizeof(key), "%s\"0.005\"}", h);
	cr_expect_eq(value_of(text, key), 1);
	snprintf(key, sizeof(key), "%s\"1\"}", h);
	cr_expect_eq(value_of(text, key), 2);
	snprintf(key, sizeof(key), "%s\"120\"}", h);
	cr_expect_eq(value_of(text, key), 2);
	snprintf(key, sizeof(key), "%s\"+Inf\"}", h);
	cr_expect_eq(value_of(text, key), 3);
	cr_expect_eq(value_of(text, "execeval_request_duration_seconds_count{endpoint=\"/v1/run\"}"), 3);
	cr_expect_eq(value_of(text, "execeval_evaluation_duration_seconds_count"), 0);
	free(text);
}
