/* test_request.c - request bodies (request.h) and their counts before
 * parsing (prescan.h). The server's other pure parts have tests of their
 * own (test_budget, test_auth, test_listen, test_stats); the HTTP side
 * itself is tested black-box (tests/e2e/test_serve.py). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "leakcheck.h"
#include "base/resource_limits.h"
#include "serve/prescan.h"
#include "serve/request.h"

#define TASK "{\"task_id\": \"t\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert f() == 1\"}]}"

/* The server's defaults as ceiling: timeout 3 s, memory 512 MB, 64 procs;
 * at most max_tests tests a task, max_request_tests a request, max_values
 * JSON values a body. */
static int parse_bounded(const char *body, int kind, size_t max_runs, size_t max_tests,
                         size_t max_request_tests, size_t max_values, struct ee_request *r,
                         struct ee_err *err)
{
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	struct ee_request_rules rules = { max_runs,          EE_EXTRACT_AUTO, &ceiling, 0,    max_tests,
		                          max_request_tests, max_values,      0,        NULL, NULL };
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	return ee_request_parse(body, strlen(body), kind, &rules, r, err);
}

static int parse_max(const char *body, int kind, size_t max_runs, struct ee_request *r, struct ee_err *err)
{
	return parse_bounded(body, kind, max_runs, 10000, 500000, 250000, r, err);
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

/* A HumanEval-style task: the prompt is the function's head. */
#define HE_TASK                                                                                              \
	"{\"task_id\": \"h\", \"prompt\": \"def f():\\n\", \"entry_point\": \"f\", \"test\": "               \
	"\"def check(candidate):\\n    assert candidate() == 1\\n\"}"

Test(request, completion_is_prompt_plus_completion)
{
	struct ee_request r;
	struct ee_err err;
	const char *plain = "{\"task\": " HE_TASK ", \"completion\": \"    return 1\\nprint(2)\\n\"}";
	const char *stop =
	        "{\"task\": " HE_TASK ", \"completion\": \"    return 1\\nprint(2)\\n\", \"stop\": true}";
	const char *gen = "{\"task\": " HE_TASK ", \"generation\": \"```python\\ndef f(): return 1\\n```\"}";

	cr_assert_eq(parse(plain, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect_str_eq(r.runs[0].program, "def f():\n    return 1\nprint(2)\n");
	cr_expect_str_eq(r.runs[0].extraction, "completion");
	ee_request_free(&r);
	cr_assert_eq(parse(stop, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect_str_eq(r.runs[0].program, "def f():\n    return 1");
	cr_expect_str_eq(r.runs[0].extraction, "completion");
	ee_request_free(&r);
	cr_assert_eq(parse(gen, EE_REQUEST_RUN, &r, &err), 0, "%s", err.msg);
	cr_expect_str_eq(r.runs[0].program, "def f(): return 1\n");
	cr_expect_str_eq(r.runs[0].extraction, "entry-point");
	ee_request_free(&r);
	no_leaks();
}

/* A GRPO group: one batch task, 16 completions; the task is read once, the
 * batch's stop applies to each run without its own, and the request's
 * cost counts every completion's program. */
Test(request, a_group_of_completions_shares_one_task)
{
	struct ee_request r;
	struct ee_err err;
	char body[8192];
	int len = snprintf(body, sizeof(body), "{\"task\": " HE_TASK ", \"stop\": true, \"runs\": [");

	for (int i = 0; i < 16; i++)
		len += snprintf(body + len, sizeof(body) - (size_t)len,
		                "%s{\"completion\": \"    return %d\\n# %0200d\\n\"%s}", i ? ", " : "", i, 0,
		                i == 5 ? ", \"stop\": false" : "");
	snprintf(body + len, sizeof(body) - (size_t)len, "]}");
	cr_assert_eq(parse_max(body, EE_REQUEST_BATCH, 16, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 16);
	size_t programs = 0;
	for (int i = 0; i < 16; i++) {
		char want[64];
		snprintf(want, sizeof(want), "def f():\n    return %d", i);
		cr_expect(r.runs[i].shared_task && r.runs[i].task.tests == r.shared.tests, "run %d", i);
		cr_expect_str_eq(r.runs[i].extraction, "completion", "run %d", i);
		if (i == 5)
			cr_expect(strncmp(r.runs[i].program, want, strlen(want)) == 0 &&
			                  strlen(r.runs[i].program) > 200,
			          "%s", r.runs[i].program);
		else
			cr_expect_str_eq(r.runs[i].program, want, "run %d", i);
		programs += strlen(r.runs[i].program);
	}
	cr_expect(ee_request_cost(&r) > programs + 16 * sizeof(struct ee_run));
	ee_request_free(&r);
	no_leaks();
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
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"completion\": \"y\"}", EE_REQUEST_RUN, "completion",
	  "not both candidate and completion" },
	{ "{\"task\": " TASK ", \"completion\": 1}", EE_REQUEST_RUN, "completion", "expected a string" },
	{ "{\"task\": " TASK
	  ", \"runs\": [{\"completion\": \"x\"}, {\"completion\": \"x\"}, {\"completion\": "
	  "\"x\"}, {\"generation\": \"x\", \"completion\": \"y\"}]}",
	  EE_REQUEST_BATCH, "runs[3].generation", "runs[3].generation: give one of" },
	{ "{\"task\": " TASK ", \"runs\": [{\"model\": \"m\"}]}", EE_REQUEST_BATCH, "runs[0].candidate",
	  "one of candidate" },
	{ "{\"task\": " TASK ", \"candidate\": \"x\", \"stop\": true}", EE_REQUEST_RUN, "stop",
	  "cuts a completion only" },
	{ "{\"task\": " TASK ", \"completion\": \"x\", \"stop\": [\"\\ndef\"]}", EE_REQUEST_RUN, "stop",
	  "expected true or false" },
	{ "{\"task\": " TASK ", \"stop\": 1, \"runs\": [{\"completion\": \"x\"}]}", EE_REQUEST_BATCH, "stop",
	  "expected true or false" },
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

/* A batch of n runs without a task of their own, sharing TASK2 (two tests). */
#define TASK2                                                                                                \
	"{\"task_id\": \"s\", \"tests\": [{\"kind\": \"io\", \"stdin\": \"1\", \"stdout\": \"1\"}, "         \
	"{\"kind\": "                                                                                        \
	"\"io\", \"stdout\": \"\"}]}"

static char *shared_batch(size_t n)
{
	size_t size = 256 + n * 64;
	char *body = malloc(size);
	int len = snprintf(body, size, "{\"task\": " TASK2 ", \"model\": \"m\", \"runs\": [");
	for (size_t i = 0; i < n; i++)
		len += snprintf(body + len, size - (size_t)len,
		                "%s{\"candidate\": \"x = %zu\", \"sample\": %zu%s}", i ? ", " : "", i, i,
		                i == 1 ? ", \"limits\": {\"timeout_s\": 0.25}" : "");
	snprintf(body + len, size - (size_t)len, "]}");
	return body;
}

Test(request, a_batch_task_is_parsed_once_and_shared)
{
	struct ee_request r, one;
	struct ee_err err;
	char *body = shared_batch(100);

	cr_assert_eq(parse_max(body, EE_REQUEST_BATCH, 100, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.n_runs, 100);
	cr_assert(r.has_shared);
	cr_expect_eq(r.tests, 200);
	for (size_t i = 0; i < r.n_runs; i++) {
		cr_expect(r.runs[i].shared_task && r.runs[i].task.tests == r.shared.tests, "run %zu", i);
		cr_expect(r.runs[i].shared_model && r.runs[i].model == r.model, "run %zu", i);
	}
	/* Each run keeps its own limits over the shared tests. */
	cr_expect(r.runs[1].task.limits.has_timeout);
	cr_expect_float_eq(r.runs[1].task.limits.timeout_s, 0.25, 1e-9);
	cr_expect_not(r.runs[0].task.limits.has_timeout);
	cr_expect_not(r.shared.limits.has_timeout);
	/* 100 runs cost one task and 100 small runs, not 100 tasks. */
	const char *single = "{\"task\": " TASK2 ", \"candidate\": \"x = 0\"}";
	cr_assert_eq(parse(single, EE_REQUEST_RUN, &one, &err), 0, "%s", err.msg);
	size_t task = ee_request_cost(&one), batch = ee_request_cost(&r);
	cr_expect(batch > task, "%zu %zu", batch, task);
	cr_expect(batch < task + 100 * (sizeof(struct ee_run) + 64), "batch %zu, one run %zu", batch, task);
	ee_request_free(&one);
	ee_request_free(&r);
	free(body);
	no_leaks();
}

Test(request, tests_bounded_per_task_and_per_request)
{
	static const struct {
		const char *body;
		int kind;
		const char *field, *text;
	} cases[] = {
		{ "{\"task\": " TASK2 ", \"candidate\": \"x\"}", EE_REQUEST_RUN, "task.tests",
		  "2 tests, more than this server's --max-tests-per-task (1)" },
		{ "{\"runs\": [{\"task\": " TASK ", \"candidate\": \"x\"}, {\"task\": " TASK2
		  ", \"candidate\": \"y\"}]}",
		  EE_REQUEST_BATCH, "runs[1].task.tests", "--max-tests-per-task (1)" },
		{ "{\"task\": " TASK2 ", \"runs\": [{\"candidate\": \"x\"}]}", EE_REQUEST_BATCH, "task.tests",
		  "--max-tests-per-task (1)" },
		/* HumanEval's one test and MBPP's lists count as tests too. */
		{ "{\"task\": {\"task_id\": 1, \"text\": \"\", \"code\": \"\", \"test_list\": [\"assert 1\", "
		  "\"assert 2\"]}, \"candidate\": \"x\"}",
		  EE_REQUEST_RUN, "task.tests", "2 tests" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_request r;
		struct ee_err err;
		cr_expect_eq(parse_bounded(cases[i].body, cases[i].kind, 8, 1, 100, 1000, &r, &err), -2,
		             "case %zu", i);
		cr_expect_str_eq(err.field, cases[i].field, "case %zu: %s", i, err.msg);
		cr_expect(strstr(err.msg, cases[i].text) != NULL, "case %zu: %s", i, err.msg);
	}
	/* Runs x tests: a shared task counts once per run. */
	struct ee_request r;
	struct ee_err err;
	char *body = shared_batch(6);
	cr_expect_eq(parse_bounded(body, EE_REQUEST_BATCH, 8, 2, 11, 1000, &r, &err), -2);
	cr_expect_str_eq(err.field, "runs");
	cr_expect(strstr(err.msg,
	                 "6 runs carry 12 tests in all, more than this server's --max-request-tests (11)"),
	          "%s", err.msg);
	cr_expect_eq(parse_bounded(body, EE_REQUEST_BATCH, 8, 2, 12, 1000, &r, &err), 0, "%s", err.msg);
	ee_request_free(&r);
	/* JSON values: the body's, before it is parsed. */
	cr_expect_eq(parse_bounded(body, EE_REQUEST_BATCH, 8, 2, 12, 20, &r, &err), -2);
	cr_expect_str_eq(err.field, "");
	cr_expect(strstr(err.msg, "more than 20 JSON values (this server's --max-body-values)"), "%s",
	          err.msg);
	free(body);
	no_leaks();
}

Test(prescan, counts_values_and_tests_as_the_parser_reads_them)
{
	struct ee_prescan c;
	const char *batch =
	        "{\"task\": " TASK2 ", \"model\": \"m\", \"runs\": [{\"candidate\": \"a\"}, "
	        "{\"candidate\": \"b\", \"task\": {\"task_id\": \"o\", \"tests\": [1, [2, {\"k\": 3}], "
	        "\"x\"]}}, 7, {\"task\": 5}]}";

	cr_assert_eq(ee_prescan(batch, strlen(batch), &c), EE_PRESCAN_OK);
	cr_expect(c.has_task);
	cr_expect_eq(c.task_tests, 2);
	cr_expect_eq(c.runs, 4);
	cr_expect_eq(c.runs_without_task, 3,
	             "a run without a task, one not an object, one whose task is not one");
	cr_expect_eq(c.own_tests, 3);
	cr_expect_eq(c.max_own, 3);
	cr_expect_eq(c.max_own_index, 1);
	/* Values: the root, the task (its object, task_id, tests and the two
	 * tests' 3 + 4 values: 9), model, runs, run 0 (2), run 1 (its object,
	 * candidate, task, task_id, tests and 1, [2, {"k": 3}], "x": 11), 7,
	 * run 3 (2): 29; keys are not values. */
	cr_expect_eq(c.values, 29, "%zu", c.values);
	const char *humaneval = "{\"task\" :\n{\"test\"\t: \"def check(c): pass\", \"entry_point\": \"f\"}}";
	cr_assert_eq(ee_prescan(humaneval, strlen(humaneval), &c), EE_PRESCAN_OK);
	cr_expect_eq(c.task_tests, 1);
	const char *escaped = "{\"runs\": [{\"candidate\": \"a\"}, {\"t\\u0061sk\": {}}]}";
	cr_expect_eq(ee_prescan(escaped, strlen(escaped), &c), EE_PRESCAN_ESCAPED);
	cr_expect_str_eq(c.escaped, "runs[1]");
	/* Escapes in values are fine; in keys below the matched levels too. */
	const char *deep = "{\"candidate\": \"a\\\"b\", \"task\": {\"tests\": [{\"c\\u006fde\": \"x\"}]}}";
	cr_expect_eq(ee_prescan(deep, strlen(deep), &c), EE_PRESCAN_OK);
	cr_expect_eq(c.task_tests, 1);
	static const char *const malformed[] = {
		"", "{\"runs\": [1 2]}", "{\"a\": \"unterminated}", "{\"a\": 1} x", "{\"a\": }", "{\"a\" 1}"
	};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		cr_expect_eq(ee_prescan(malformed[i], strlen(malformed[i]), &c), EE_PRESCAN_MALFORMED, "%s",
		             malformed[i]);
	/* Deep nesting is skipped without recursing. */
	size_t depth = 100000;
	char *deep_body = malloc(2 * depth + 16);
	int len = sprintf(deep_body, "{\"a\": ");
	memset(deep_body + len, '[', depth);
	memset(deep_body + len + depth, ']', depth);
	strcpy(deep_body + len + 2 * depth, "}");
	cr_expect_eq(ee_prescan(deep_body, strlen(deep_body), &c), EE_PRESCAN_OK);
	cr_expect_eq(c.values, depth + 1);
	free(deep_body);
}

/* A raw NUL byte between tokens, which jansson skips: refused where it is
 * (the fuzzer found a body that loaded while the prescan refused it). */
Test(request, a_nul_byte_is_not_json)
{
	static const char body[] = "{\"task\": " TASK ",\n \"candidate\": \"x\"\0}";
	struct ee_limits ceiling;
	ee_limits_default(&ceiling);
	struct ee_request_rules rules = { 4,      EE_EXTRACT_AUTO, &ceiling, 0,    10000,
		                          500000, 250000,          0,        NULL, NULL };
	struct ee_request r = { 0 };
	struct ee_err err = { 0 };
	cr_assert_lt(ee_request_parse(body, sizeof(body) - 1, EE_REQUEST_RUN, &rules, &r, &err), 0);
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect(strstr(err.msg, "line 2 column 18: a NUL byte"), "%s", err.msg);
	ee_request_free(&r);
	no_leaks();
}
