/* test_results.c - the results file (results.h): resume (the done pairs, a
 * torn last line cut off), appending whole lines, repeated keys, and the
 * one torn-line rule every reader shares. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "results/results.h"
#include "tmpdir.h"

TestSuite(results, .init = tmpdir_make, .fini = tmpdir_remove);

static int count_visit(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	(void)rec, (void)where, (void)err;
	++*(int *)ctx;
	return 0;
}

#define REC(id, n) "{\"task_id\":\"" id "\",\"sample\":" #n ",\"status\":\"pass\"}\n"

Test(results, resume_collects_done_pairs_and_cuts_a_torn_line)
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

Test(results, resume_of_a_missing_file_is_an_empty_start)
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

Test(results, a_bad_line_in_the_middle_is_an_error_naming_it)
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

Test(results, append_writes_whole_lines)
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

Test(results, encode_gives_the_line_append_writes_and_write_names_the_file_on_failure)
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

/* ---- repeated keys (issue 12) ------------------------------------------- */

Test(results, a_repeated_key_is_refused_naming_both_lines_where_asked)
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

/* One torn-line rule for every reader (results.h): only a line that is not
 * whole JSON can be torn; a whole last line is a record or an error. */
Test(results, every_reader_shares_the_torn_line_rule)
{
	static const struct ee_results_policy keyed = { EE_RESULTS_KEYED, 1, 1u << 20 };
	static const struct ee_results_policy loose = { EE_RESULTS_LOOSE, 1, 1u << 20 };
	const struct ee_results_policy *policies[] = { &keyed, &loose };
	struct ee_results_torn torn;
	struct ee_err err;
	int visited, was_torn;

	for (size_t i = 0; i < 2; i++) {
		const char *p = write_file("t.jsonl", REC("a", 0) "{\"task_id\":\"a\",\"sam");
		visited = 0;
		cr_assert_eq(ee_results_scan(p, policies[i], count_visit, &visited, &torn, &err), 0, "%s",
		             err.msg);
		cr_expect_eq(visited, 1);
		cr_expect_eq(torn.lines, 1);
		cr_expect_not_null(strstr(torn.why.msg, "t.jsonl:2"), "%s", torn.why.msg);

		p = write_file("t.jsonl", REC("a", 0) "{\"task_id\":\"a\",\"sample\":1}");
		cr_assert_eq(ee_results_scan(p, policies[i], NULL, NULL, &torn, &err), 0, "%s", err.msg);
		cr_expect_eq(torn.lines, 1, "no newline: torn even when it parses");
	}
	/* A whole last line without its key: an error, not a torn line. */
	const char *p = write_file("t.jsonl", REC("a", 0) "{\"task_id\":\"a\"}\n");
	cr_expect_eq(ee_results_read(p, NULL, NULL, &was_torn, &err), -1);
	cr_expect_not_null(strstr(err.msg, "t.jsonl:2: not a result record"), "%s", err.msg);
	/* Blank lines: part of no KEYED file; skipped by LOOSE readers. */
	p = write_file("t.jsonl", REC("a", 0) "\n" REC("a", 1));
	cr_expect_eq(ee_results_scan(p, &keyed, NULL, NULL, &torn, &err), -1);
	cr_expect_eq(ee_results_scan(p, &loose, NULL, NULL, &torn, &err), 0, "%s", err.msg);
	cr_expect_eq(torn.lines, 0);
}
