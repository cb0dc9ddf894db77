/* test_io.c - the file-facing modules of eval: dataset loading, program
 * composition, the results file (resume, torn lines), limits and buffers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "compose.h"
#include "dataset.h"
#include "err.h"
#include "lines.h"
#include "resource_limits.h"
#include "results.h"
#include "task.h"

static char dir[] = "/tmp/ee-unit-io-XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	strcpy(dir, "/tmp/ee-unit-io-XXXXXX");
}

TestSuite(io, .init = make_dir, .fini = remove_dir);

static const char *write_file(const char *name, const char *content)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
	return path;
}

#define TASK(id)                                                                                             \
	"{\"task_id\":\"" id                                                                                 \
	"\",\"prompt\":\"def f():\\n\",\"tests\":[{\"kind\":\"assert\",\"code\":\"assert f()\"}]}"

/* ---- dataset ------------------------------------------------------------ */

Test(io, dataset_loads_jsonl_and_finds_by_id)
{
	struct ee_dataset d;
	struct ee_err err;
	const char *p = write_file("t.jsonl", TASK("b") "\n\n" TASK("a") "\n" TASK("c"));
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), 0, "%s", err.msg);
	cr_assert_eq(d.n, 3);
	cr_assert_str_eq(ee_dataset_find(&d, "a")->task.task_id, "a");
	cr_assert_eq(ee_dataset_find(&d, "b")->line, 1);
	cr_assert_eq(ee_dataset_find(&d, "c")->line, 4);
	cr_assert_null(ee_dataset_find(&d, "zz"));
	ee_dataset_free(&d);
}

Test(io, dataset_loads_a_json_array)
{
	struct ee_dataset d;
	struct ee_err err;
	const char *p = write_file("t.json", "  [" TASK("x") ", " TASK("y") "]");
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), 0, "%s", err.msg);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(ee_dataset_find(&d, "y")->line, 2);
	ee_dataset_free(&d);
}

Test(io, dataset_errors_name_file_line_and_field)
{
	static const struct {
		const char *content, *want;
	} cases[] = {
		{ TASK("a") "\n" TASK("a") "\n", "t.jsonl:2: task_id: 'a' already defined on line 1" },
		{ TASK("a") "\n{\"task_id\": \"b\", \"tests\": [{\"kind\": \"nope\", \"code\": \"x\"}]}\n",
		  "t.jsonl:2: tests[0].kind" },
		{ "not json\n", "t.jsonl:1: column" },
		{ "\n\n", "no tasks" },
		{ "[1, 2]", "t.jsonl:1" },
		{ "[\"unclosed", "t.jsonl:1: column 10: premature end of input" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ee_dataset d;
		struct ee_err err = { 0 };
		const char *p = write_file("t.jsonl", cases[i].content);
		cr_expect_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), -1, "case %zu", i);
		cr_expect_eq(err.code, EE_ERR_USAGE, "case %zu", i);
		cr_expect_not_null(strstr(err.msg, cases[i].want), "case %zu: '%s'", i, err.msg);
	}
	struct ee_dataset d;
	struct ee_err err;
	cr_expect_eq(ee_dataset_load("/nonexistent/t.jsonl", EE_FORMAT_AUTO, &d, &err), -1);
	cr_expect_not_null(strstr(err.msg, "/nonexistent/t.jsonl"));
}

Test(io, read_line_caps_and_reports_torn_lines)
{
	const char *p = write_file("l.txt", "short\n0123456789abcdef\nlast");
	FILE *f = fopen(p, "r");
	char *buf = NULL;
	size_t alloc = 0;
	int nl;
	cr_assert_eq(ee_read_line(f, &buf, &alloc, 8, &nl), 5);
	cr_assert_str_eq(buf, "short");
	cr_assert(nl);
	cr_assert_eq(ee_read_line(f, &buf, &alloc, 8, &nl), -2, "over the cap");
	cr_assert_eq(ee_read_line(f, &buf, &alloc, 8, &nl), 4);
	cr_assert_str_eq(buf, "last");
	cr_assert(!nl, "no newline: torn");
	cr_assert_eq(ee_read_line(f, &buf, &alloc, 8, &nl), -1);
	fclose(f);
	free(buf);
}

/* ---- compose ------------------------------------------------------------ */

static struct ee_task task_of(const char *json)
{
	struct ee_task t;
	struct ee_err err;
	json_t *o = json_loads(json, 0, NULL);
	cr_assert_not_null(o);
	cr_assert_eq(ee_task_from_json(o, EE_FORMAT_AUTO, "t:1", &t, &err), 0, "%s", err.msg);
	json_decref(o);
	return t;
}

static char *compose(const struct ee_task *t, const char *sample_json, int mode, int stop, int *no_block)
{
	struct ee_sample s;
	struct ee_err err;
	char *program;
	json_t *o = json_loads(sample_json, 0, NULL);
	cr_assert_eq(ee_sample_from_json(o, "s:1", &s, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_compose_program(t, &s, mode, stop, &program, no_block, &err), 0, "%s", err.msg);
	json_decref(o);
	ee_sample_free(&s);
	return program;
}

Test(io, compose_each_sample_form)
{
	struct ee_task he = task_of("{\"task_id\":\"h\",\"prompt\":\"def f():\\n\",\"entry_point\":\"f\","
	                            "\"test\":\"def check(c): assert c()\"}");
	struct ee_task mbpp = task_of(
	        "{\"task_id\":1,\"text\":\"Write f.\",\"code\":\"x\","
	        "\"test_list\":[\"assert f()\"],\"test_setup_code\":\"\",\"challenge_test_list\":[]}");
	int nb;
	char *p;

	p = compose(&he, "{\"task_id\":\"h\",\"completion\":\"    return 1\\n\\ndef g(): pass\\n\"}",
	            EE_EXTRACT_AUTO, 0, &nb);
	cr_expect_str_eq(p, "def f():\n    return 1\n\ndef g(): pass\n");
	free(p);
	p = compose(&he, "{\"task_id\":\"h\",\"completion\":\"    return 1\\n\\ndef g(): pass\\n\"}",
	            EE_EXTRACT_AUTO, 1, &nb);
	cr_expect_str_eq(p, "def f():\n    return 1\n", "--stop cuts at \\ndef");
	free(p);
	p = compose(&mbpp, "{\"task_id\":1,\"completion\":\"def f(): return 1\"}", EE_EXTRACT_AUTO, 0, &nb);
	cr_expect_str_eq(p, "def f(): return 1", "MBPP's prompt is English: not prepended");
	free(p);
	p = compose(&he, "{\"task_id\":\"h\",\"code\":\"print(1)\"}", EE_EXTRACT_AUTO, 0, &nb);
	cr_expect_str_eq(p, "print(1)");
	free(p);
	p = compose(&he, "{\"task_id\":\"h\",\"generation\":\"Sure:\\n```python\\nx = 1\\n```\\n\"}",
	            EE_EXTRACT_AUTO, 0, &nb);
	cr_expect_str_eq(p, "x = 1\n");
	cr_expect_eq(nb, 0);
	free(p);
	p = compose(&he, "{\"task_id\":\"h\",\"generation\":\"no code here\"}", EE_EXTRACT_FENCED, 0, &nb);
	cr_expect_eq(nb, 1, "fenced mode without a block");
	free(p);
	ee_task_free(&he);
	ee_task_free(&mbpp);
}

/* ---- results ------------------------------------------------------------ */

static int count_visit(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	(void)rec, (void)where, (void)err;
	++*(int *)ctx;
	return 0;
}

#define REC(id, n) "{\"task_id\":\"" id "\",\"sample\":" #n ",\"status\":\"pass\"}\n"

Test(io, resume_collects_done_pairs_and_cuts_a_torn_line)
{
	struct ee_done_set done;
	struct ee_err err;
	int visited = 0, repaired;
	const char *p = write_file("r.jsonl", REC("a", 0) REC("a", 1) REC("b", 0) "{\"task_id\":\"b\",\"sam");
	memset(&done, 0, sizeof(done));
	cr_assert_eq(ee_results_resume(p, &done, count_visit, &visited, &repaired, &err), 0, "%s", err.msg);
	cr_expect_eq(visited, 3);
	cr_expect(repaired);
	cr_expect(ee_done_contains(&done, "a", 1));
	cr_expect(!ee_done_contains(&done, "a", 2));
	cr_expect(!ee_done_contains(&done, "b", 1));
	FILE *f = fopen(p, "r");
	fseek(f, 0, SEEK_END);
	cr_expect_eq(ftell(f), (long)strlen(REC("a", 0) REC("a", 1) REC("b", 0)),
	             "cut after the last whole line");
	fclose(f);
	cr_expect_eq(ee_done_insert(&done, "b", 1), 0);
	cr_expect(ee_done_contains(&done, "b", 1));
	ee_done_free(&done);
}

Test(io, resume_of_a_missing_file_is_an_empty_start)
{
	struct ee_done_set done;
	struct ee_err err;
	int repaired;
	memset(&done, 0, sizeof(done));
	cr_assert_eq(ee_results_resume("/tmp/ee-unit-io-none/r.jsonl", &done, NULL, NULL, &repaired, &err),
	             0);
	cr_assert(!ee_done_contains(&done, "a", 0));
	ee_done_free(&done);
}

Test(io, a_bad_line_in_the_middle_is_an_error_naming_it)
{
	struct ee_done_set done;
	struct ee_err err;
	int repaired;
	const char *p = write_file("r.jsonl", REC("a", 0) "{\"task_id\":\"a\"}\n" REC("a", 2));
	memset(&done, 0, sizeof(done));
	cr_assert_eq(ee_results_resume(p, &done, NULL, NULL, &repaired, &err), -1);
	cr_expect_not_null(strstr(err.msg, "r.jsonl:2"), "%s", err.msg);
	ee_done_free(&done);
	cr_assert_eq(ee_results_read("/nonexistent/r.jsonl", NULL, NULL, &repaired, &err), -1);
}

Test(io, append_writes_whole_lines)
{
	struct ee_err err;
	char path[256];
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	int fd = ee_results_open(path, 1, &err);
	cr_assert_geq(fd, 0, "%s", err.msg);
	json_t *rec = json_pack("{s:s, s:i, s:f}", "task_id", "t", "sample", 3, "score", 0.5);
	cr_assert_eq(ee_results_append(fd, rec, path, &err), 0);
	cr_assert_eq(ee_results_append(fd, rec, path, &err), 0);
	close(fd);
	json_decref(rec);
	FILE *f = fopen(path, "r");
	char line[256];
	int n = 0;
	while (fgets(line, sizeof(line), f))
		n += strcmp(line, "{\"task_id\":\"t\",\"sample\":3,\"score\":0.5}\n") == 0;
	fclose(f);
	cr_expect_eq(n, 2);
	cr_expect_eq(ee_results_open("/nonexistent/dir/out.jsonl", 0, &err), -1);
}

Test(io, encode_gives_the_line_append_writes_and_write_names_the_file_on_failure)
{
	struct ee_err err;
	size_t len = 0;
	static const char want[] = "{\"task_id\":\"t\",\"sample\":3}\n";
	json_t *rec = json_pack("{s:s, s:i}", "task_id", "t", "sample", 3);
	char *line = ee_results_encode(rec, &len);
	json_decref(rec);
	cr_assert_not_null(line);
	cr_expect_eq(len, strlen(want));
	cr_expect_eq(memcmp(line, want, len), 0, "%.*s", (int)len, line);
	cr_expect_eq(ee_results_write(-1, line, len, "bad.jsonl", &err), -1);
	cr_expect_not_null(strstr(err.msg, "bad.jsonl: write"), "%s", err.msg);
	free(line);
}

/* ---- limits and buffers ------------------------------------------------- */

Test(io, limits_are_clamped_and_nan_is_the_default)
{
	struct ee_limits l;
	ee_limits_default(&l);
	cr_expect(l.timeout_s == 3.0 && l.memory_mb == 512 && l.procs == 64 && l.output_cap == 262144);
	l.timeout_s = 0;
	l.memory_mb = 1;
	l.procs = 0;
	l.output_cap = 0;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 0.1 && l.memory_mb == 16 && l.procs == 1 && l.output_cap == 1024);
	l.timeout_s = NAN;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 3.0);
	l.timeout_s = 1e9;
	ee_limits_clamp(&l);
	cr_expect(l.timeout_s == 30.0);
}

Test(io, a_buffer_never_passes_its_cap)
{
	struct ee_buf b;
	ee_buf_init(&b, 10);
	cr_expect_eq(ee_buf_append(&b, "0123456", 7), 0);
	cr_expect_eq(ee_buf_append(&b, "789a", 4), -1, "11 > 10: refused whole");
	cr_expect_eq(b.len, 7);
	cr_expect_eq(ee_buf_append_some(&b, "789abc", 6), 3);
	cr_expect_str_eq(b.data, "0123456789");
	ee_buf_consume(&b, 4);
	cr_expect_str_eq(b.data, "456789");
	ee_buf_free(&b);
	ee_buf_free(&b);
}

/* ---- repeated keys (issue 12) ------------------------------------------- */

Test(io, a_repeated_key_is_refused_naming_both_lines_where_asked)
{
	struct ee_done_set done;
	struct ee_err err;
	int visited = 0, torn;
	const char *p = write_file("dup.jsonl", REC("a", 0) REC("b", 0) REC("a", 0));
	memset(&done, 0, sizeof(done));
	cr_expect_eq(ee_results_read(p, count_visit, &visited, &torn, &err), 0, "merge reads them all");
	cr_expect_eq(visited, 3);
	visited = 0;
	cr_assert_eq(ee_results_read_unique(p, count_visit, &visited, &torn, &err), -1);
	cr_expect_eq(visited, 2, "the repeated line is not visited");
	cr_expect_not_null(
	        strstr(err.msg, "dup.jsonl:3: repeated record: task_id 'a' sample 0 is already on line 1"),
	        "%s", err.msg);
	cr_assert_eq(ee_results_resume(p, &done, NULL, NULL, &torn, &err), -1);
	cr_expect_not_null(strstr(err.msg, "already on line 1"), "%s", err.msg);
	ee_done_free(&done);
	p = write_file("ok.jsonl", REC("a", 0) REC("a", 1) REC("b", 0));
	cr_expect_eq(ee_results_read_unique(p, NULL, NULL, &torn, &err), 0, "%s", err.msg);
}
