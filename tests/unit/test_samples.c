/* test_samples.c - an eval run's samples (samples.h) without sandboxes:
 * numbering, shard selection, the resume skip set, repeated keys, invalid
 * lines as records in their place, the model hook, a host failure, and
 * why a run evaluated nothing. Candidates come from ee_samples_next; their
 * "records" are made up here and given back with ee_samples_done. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "engine/samples.h"
#include "engine/scheduler.h"
#include "input/dataset.h"

#include "leakcheck.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char dir[64];

/* Each test in a directory of its own, removed after it. */
static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(strcpy(dir, "/tmp/ee-unit-samples-XXXXXX")));
}

static void remove_dir(void)
{
	char cmd[96];
	cr_assert_eq(system((snprintf(cmd, sizeof(cmd), "rm -rf %s", dir), cmd)), 0);
}

TestSuite(samples, .init = make_dir, .fini = remove_dir);

static const char *write_file(const char *name, const char *content)
{
	static char paths[4][256];
	static int next;
	char *path = paths[next++ % 4];
	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(content, 1, strlen(content), f), strlen(content));
	fclose(f);
	return path;
}

#define TASK(id)                                                                                             \
	"{\"task_id\":\"" id                                                                                 \
	"\",\"prompt\":\"def f():\\n\",\"tests\":[{\"kind\":\"assert\",\"code\":\"assert f()\"}]}\n"
#define S(id, rest) "{\"task_id\":\"" id "\",\"completion\":\"    return 1\\n\"" rest "}\n"

/* What the sink and the model hook saw. */
struct seen {
	char keys[64][48]; /* "task_id/sample status" of each record, in order */
	size_t n;
	char models[16][16];
	size_t n_models;
	int refuse_models; /* note_model fails */
};

static void sink(void *ctx, json_t *rec, const char *line, size_t len)
{
	struct seen *s = ctx;
	cr_assert_not_null(rec);
	cr_assert(line && len > 0 && line[len - 1] == '\n');
	const char *id = json_string_value(json_object_get(rec, "task_id"));
	if (s->n < COUNT(s->keys)) /* the rest only counted */
		snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s/%lld %s", id ? id : "null",
		         (long long)json_integer_value(json_object_get(rec, "sample")),
		         json_string_value(json_object_get(rec, "status")));
	s->n++;
}

static int note_model(void *ctx, const char *model, struct ee_err *err)
{
	struct seen *s = ctx;
	if (s->refuse_models)
		return ee_fail(err, EE_ERR_USAGE, "no models today");
	if (s->n_models < COUNT(s->models))
		snprintf(s->models[s->n_models], sizeof(s->models[0]), "%s", model ? model : "-");
	s->n_models++;
	return 0;
}

struct run {
	struct ee_dataset tasks;
	struct ee_samples s;
	struct seen seen;
};

static void open_run(struct run *r, const char *samples, const struct ee_samples_config *extra)
{
	struct ee_err err = { 0 };
	const char *tasks = write_file("tasks.jsonl", TASK("a") TASK("b") TASK("c"));
	struct ee_samples_config cfg = extra ? *extra : (struct ee_samples_config){ 0 };

	memset(r, 0, sizeof(*r));
	cr_assert_eq(ee_dataset_load(tasks, EE_FORMAT_AUTO, &r->tasks, &err), 0, "%s", err.msg);
	cfg.path = write_file("samples.jsonl", samples);
	cfg.tasks = &r->tasks;
	cfg.tasks_path = "tasks.jsonl";
	cfg.jobs = cfg.jobs ? cfg.jobs : 4;
	cfg.note_model = note_model;
	cfg.sink = sink;
	cfg.ctx = &r->seen;
	cr_assert_eq(ee_samples_open(&r->s, &cfg, &err), 0, "%s", err.msg);
}

static void close_run(struct run *r)
{
	ee_samples_close(&r->s);
	ee_dataset_free(&r->tasks);
	no_leaks();
}

/* Takes every candidate; each one's record ("pass") goes back at once.
 * Returns what the last ee_samples_next said; keys[] "task_id/sample". */
static int drain(struct run *r, char keys[][48], size_t *n, size_t max, struct ee_err *err)
{
	struct ee_candidate c;
	uint64_t ticket;
	int rc;

	*n = 0;
	while ((rc = ee_samples_next(&r->s, &c, &ticket, err)) == 1) {
		cr_assert_lt(*n, max);
		snprintf(keys[(*n)++], 48, "%s/%ld", c.task->task_id, c.sample);
		cr_assert_not_null(c.program);
		ee_samples_done(&r->s, ticket,
		                json_pack("{s:s, s:I, s:s}", "task_id", c.task->task_id, "sample",
		                          (json_int_t)c.sample, "status", "pass"));
	}
	ee_samples_flush(&r->s);
	return rc;
}

Test(samples, numbers_each_sample_by_its_position_among_its_tasks_lines_unless_it_says)
{
	struct run r;
	struct ee_err err = { 0 };
	char keys[16][48];
	size_t n;
	static const char *const want[] = { "a/0", "b/0", "a/1", "a/7", "b/1" };

	open_run(&r, S("a", "") S("b", "") "\n  \n" S("a", "") S("a", ",\"sample\":7") S("b", ""), NULL);
	cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), 0, "%s", err.msg);
	cr_assert_eq(n, COUNT(want));
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(keys[i], want[i], "candidate %zu", i);
	cr_expect_eq(r.s.n.lines, 5, "blank lines are not samples");
	cr_expect_eq(r.s.n.records, 5);
	cr_expect_eq(ee_samples_some_evaluated(&r.s, &err), 0);
	close_run(&r);
}

Test(samples, shards_are_disjoint_and_together_the_whole_file)
{
	char text[4096] = "";
	char all[3][32][48];
	size_t n[3], total = 0;
	struct ee_err err = { 0 };

	for (int i = 0; i < 10; i++)
		strcat(text, S("a", "") S("b", ""));
	for (unsigned long shard = 0; shard < 3; shard++) {
		struct run r;
		struct ee_samples_config cfg = { .shard_i = shard, .shard_n = 3 };
		open_run(&r, text, &cfg);
		struct ee_candidate c;
		uint64_t ticket;
		cr_assert_eq(ee_samples_next(&r.s, &c, &ticket, &err), 1, "%s", err.msg);
		cr_expect_str_eq(c.shard, shard == 0 ? "0/3" : shard == 1 ? "1/3" : "2/3");
		snprintf(all[shard][0], 48, "%s/%ld", c.task->task_id, c.sample);
		ee_samples_done(&r.s, ticket, NULL);
		cr_assert_eq(drain(&r, all[shard] + 1, &n[shard], 31, &err), 0, "%s", err.msg);
		n[shard]++;
		cr_expect_eq(r.s.n.lines, 20);
		cr_expect_eq(r.s.n.other_shard + n[shard], 20, "shard %lu", shard);
		cr_expect_gt(n[shard], 0, "20 keys leave no shard of 3 empty");
		total += n[shard];
		close_run(&r);
	}
	cr_expect_eq(total, 20);
	for (int i = 0; i < 3; i++)
		for (size_t x = 0; x < n[i]; x++)
			for (int j = 0; j < 3; j++)
				for (size_t y = 0; y < n[j]; y++)
					cr_expect(i == j && x == y ? 1 : strcmp(all[i][x], all[j][y]) != 0,
					          "%s in two places", all[i][x]);
}

Test(samples, shard_0_of_1_is_the_whole_run_and_says_no_shard)
{
	struct run r;
	struct ee_samples_config cfg = { .shard_i = 0, .shard_n = 1 };
	struct ee_candidate c;
	uint64_t ticket;
	struct ee_err err = { 0 };

	open_run(&r, S("a", "") S("b", ""), &cfg);
	cr_assert_eq(ee_samples_next(&r.s, &c, &ticket, &err), 1, "%s", err.msg);
	cr_expect_null(c.shard);
	ee_samples_done(&r.s, ticket, NULL);
	close_run(&r);
}

Test(samples, resume_skips_the_keys_of_the_results_file_invalid_lines_included)
{
	struct run r;
	struct ee_samples_config cfg = { .skip_invalid = 1 };
	struct ee_err err = { 0 };
	char keys[16][48];
	size_t n;
	int repaired = 0;
	/* a/0 and the invalid line 3 were done; a/1 was torn off the end */
	const char *results = write_file(
	        "r.jsonl", "{\"task_id\":\"a\",\"sample\":0,\"status\":\"pass\"}\n"
	                   "{\"task_id\":null,\"sample\":-3,\"invalid\":true,\"status\":\"error\"}\n"
	                   "{\"task_id\":\"a\",\"sam");

	open_run(&r, S("a", "") S("b", "") "{not json\n" S("a", "") "[1]\n", &cfg);
	cr_assert_eq(ee_samples_resume(&r.s, results, NULL, NULL, &repaired, &err), 0, "%s", err.msg);
	cr_expect_eq(repaired, 1);
	cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(keys[0], "b/0");
	cr_expect_str_eq(keys[1], "a/1");
	cr_expect_eq(r.s.n.skipped, 2, "a/0 and line 3");
	cr_expect_eq(r.s.n.invalid, 1, "line 5 only: line 3's record is in the file");
	cr_assert_eq(r.seen.n, 3);
	cr_expect_str_eq(r.seen.keys[2], "null/-5 error");
	close_run(&r);
}

Test(samples, a_run_that_resumes_everything_evaluated_something)
{
	struct run r;
	struct ee_err err = { 0 };
	char keys[4][48];
	size_t n;
	int repaired;
	const char *results = write_file("r.jsonl", "{\"task_id\":\"a\",\"sample\":0,\"status\":\"pass\"}\n");

	open_run(&r, S("a", ""), NULL);
	cr_assert_eq(ee_samples_resume(&r.s, results, NULL, NULL, &repaired, &err), 0, "%s", err.msg);
	cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), 0, "%s", err.msg);
	cr_expect_eq(n, 0);
	cr_expect_eq(ee_samples_some_evaluated(&r.s, &err), 0, "all done before is not 'none evaluated'");
	close_run(&r);
}

Test(samples, a_repeated_key_stops_the_run_naming_both_lines_even_with_skip_invalid)
{
	struct run r;
	struct ee_samples_config cfg = { .skip_invalid = 1 };
	struct ee_err err = { 0 };
	char keys[8][48];
	size_t n;

	open_run(&r, S("a", "") S("b", "") "\n" S("a", ",\"sample\":0"), &cfg);
	cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), -1);
	cr_expect_eq(n, 2, "the samples before it are evaluated");
	cr_expect_eq(err.code, EE_ERR_USAGE);
	cr_expect_not_null(strstr(err.msg, "samples.jsonl:4: sample (a, 0) repeats line 1"), "%s", err.msg);
	cr_expect_eq(r.s.failed, 1);
	cr_expect_eq(r.s.n.invalid, 0);
	close_run(&r);
}

struct invalid_case {
	const char *line;
	const char *want_msg; /* in the record's message */
	const char *want_key; /* the record's "task_id/sample status" */
};

Test(samples, an_invalid_line_is_a_stop_or_under_skip_invalid_an_error_record_in_its_place)
{
	static const struct invalid_case cases[] = {
		{ "{not json\n", "samples.jsonl:2: column", "null/-2 error" },
		{ "[1]\n", "samples.jsonl:2", "null/-2 error" },
		{ S("zz", ""), "task_id: 'zz' is not in tasks.jsonl", "null/-2 error" },
		{ "{\"task_id\":\"b\"}\n", "samples.jsonl:2", "b/-2 error" },
	};
	for (size_t i = 0; i < COUNT(cases); i++)
		for (int skip = 0; skip <= 1; skip++) {
			struct run r;
			struct ee_samples_config cfg = { .skip_invalid = skip };
			struct ee_err err = { 0 };
			char keys[8][48], text[512];
			size_t n;
			snprintf(text, sizeof(text), "%s%s%s", S("a", ""), cases[i].line, S("c", ""));
			open_run(&r, text, &cfg);
			int rc = drain(&r, keys, &n, COUNT(keys), &err);
			if (!skip) {
				cr_expect_eq(rc, -1, "case %zu", i);
				cr_expect_not_null(strstr(err.msg, cases[i].want_msg), "case %zu: %s", i,
				                   err.msg);
				cr_expect_eq(r.s.failed, 1, "case %zu", i);
				cr_expect_eq(r.seen.n, 1, "case %zu: the record before it is kept", i);
			} else {
				cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
				cr_assert_eq(r.seen.n, 3, "case %zu", i);
				cr_expect_str_eq(r.seen.keys[0], "a/0 pass", "case %zu", i);
				cr_expect_str_eq(r.seen.keys[1], cases[i].want_key, "case %zu", i);
				cr_expect_str_eq(r.seen.keys[2], "c/0 pass", "case %zu", i);
				cr_expect_eq(r.s.n.invalid, 1, "case %zu", i);
				cr_expect_eq(r.s.n.first_invalid, 2, "case %zu", i);
			}
			close_run(&r);
		}
}

Test(samples, records_reach_the_sink_in_input_order_whatever_order_they_finish_in)
{
	struct run r;
	struct ee_samples_config cfg = { .skip_invalid = 1 };
	struct ee_candidate c;
	uint64_t t[2];
	struct ee_err err = { 0 };

	open_run(&r, S("a", "") "{bad\n" S("b", ""), &cfg);
	cr_assert_eq(ee_samples_next(&r.s, &c, &t[0], &err), 1, "%s", err.msg);
	cr_assert_eq(ee_samples_next(&r.s, &c, &t[1], &err), 1, "%s", err.msg);
	cr_expect_eq(r.seen.n, 0, "the invalid line waits for a/0");
	ee_samples_done(&r.s, t[1],
	                json_pack("{s:s, s:i, s:s}", "task_id", "b", "sample", 0, "status", "fail"));
	cr_expect_eq(r.seen.n, 0);
	ee_samples_done(&r.s, t[0],
	                json_pack("{s:s, s:i, s:s}", "task_id", "a", "sample", 0, "status", "pass"));
	cr_assert_eq(r.seen.n, 3);
	cr_expect_str_eq(r.seen.keys[0], "a/0 pass");
	cr_expect_str_eq(r.seen.keys[1], "null/-2 error");
	cr_expect_str_eq(r.seen.keys[2], "b/0 fail");
	close_run(&r);
}

Test(samples, the_reorder_bound_makes_next_wait)
{
	struct run r;
	struct ee_samples_config cfg = { .jobs = 1 };
	struct ee_candidate c;
	uint64_t first, t;
	struct ee_err err = { 0 };
	char text[300 * 48] = "";
	int got = 0, rc;

	for (int i = 0; i < 300; i++)
		strcat(text, S("a", ""));
	open_run(&r, text, &cfg);
	cr_assert_eq(ee_samples_next(&r.s, &c, &first, &err), 1);
	/* the head never finishes: the others pile up behind it */
	while ((rc = ee_samples_next(&r.s, &c, &t, &err)) == 1) {
		got++;
		ee_samples_done(&r.s, t,
		                json_pack("{s:s, s:I, s:s}", "task_id", "a", "sample", (json_int_t)c.sample,
		                          "status", "pass"));
	}
	cr_expect_eq(rc, EE_SCHED_WAIT);
	cr_expect_eq(got, 256, "256 held per job");
	ee_samples_done(&r.s, first, NULL);
	cr_expect_eq(r.seen.n, 256, "a gap lets them go");
	cr_expect_eq(ee_samples_next(&r.s, &c, &t, &err), 1, "and reading goes on");
	ee_samples_done(&r.s, t, NULL);
	close_run(&r);
}

Test(samples, the_model_is_noted_before_the_task_lookup_and_the_default_fills_in)
{
	struct run r;
	struct ee_samples_config cfg = { .skip_invalid = 1, .model = "dflt" };
	struct ee_err err = { 0 };
	char keys[8][48];
	size_t n;

	open_run(&r, S("a", ",\"model\":\"m1\"") S("zz", ",\"model\":\"m2\"") S("b", ""), &cfg);
	cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), 0, "%s", err.msg);
	cr_assert_eq(r.seen.n_models, 3);
	cr_expect_str_eq(r.seen.models[0], "m1");
	cr_expect_str_eq(r.seen.models[1], "m2", "a sample of an unknown task counts its model");
	cr_expect_str_eq(r.seen.models[2], "dflt");
	close_run(&r);

	open_run(&r, S("a", ""), NULL);
	r.seen.refuse_models = 1;
	cr_expect_eq(drain(&r, keys, &n, COUNT(keys), &err), -1);
	cr_expect_str_eq(err.msg, "no models today", "the hook's refusal makes the sample invalid");
	close_run(&r);
}

static json_t *record_of(long sample, const char *sandbox_error)
{
	if (sandbox_error)
		return json_pack("{s:s, s:I, s:s, s:n, s:b}", "task_id", "a", "sample", (json_int_t)sample,
		                 "sandbox_error", sandbox_error, "reward", "infra_error", 1);
	return json_pack("{s:s, s:I, s:s}", "task_id", "a", "sample", (json_int_t)sample, "status", "pass");
}

Test(samples, a_sandbox_error_is_the_samples_record_and_a_run_of_them_stops_reading)
{
	struct run r;
	struct ee_candidate c;
	uint64_t t;
	struct ee_err err = { 0 };

	/* 0: an infra error; 1: a verdict (the run of them starts over); 2-6:
	 * EE_SAMPLES_INFRA_STOP infra errors in a row, the last stops it. */
	cr_assert_eq(EE_SAMPLES_INFRA_STOP, 5);
	open_run(&r, S("a", "") S("a", "") S("a", "") S("a", "") S("a", "") S("a", "") S("a", "") S("a", ""),
	         NULL);
	for (long i = 0; i < 7; i++) {
		cr_assert_eq(ee_samples_next(&r.s, &c, &t, &err), 1, "sample %ld: %s", i, err.msg);
		ee_samples_done(&r.s, t, record_of(i, i == 1 ? NULL : "clone: EAGAIN"));
		if (i == 0)
			cr_expect_eq(r.seen.n, 1, "the record is kept: the sample's infrastructure error");
	}
	cr_expect_eq(r.seen.n, 7, "every record is kept");
	cr_expect_str_eq(r.seen.keys[0], "a/0 (null)");
	cr_expect_eq(r.s.n.infra, 6);
	cr_expect_eq(ee_samples_next(&r.s, &c, &t, &err), -1, "a run of them stops reading");
	cr_expect_eq(err.code, EE_ERR_SANDBOX);
	cr_expect_str_eq(err.msg, "sandbox setup failed for 5 samples in a row (last: clone: EAGAIN)");
	cr_expect_eq(r.s.failed, 0, "the host failed, not the samples");
	close_run(&r);
}

struct none_case {
	const char *samples;
	unsigned long shard_n;
	const char *want;
};

Test(samples, a_run_that_evaluated_nothing_says_why)
{
	static const struct none_case cases[] = {
		{ "\n \n", 0, "no samples (the file has no non-blank line)" },
		{ "{x\n[1]\n", 0, "all 2 lines are invalid (first: line 1)" },
		{ S("a", "") "{x\n", 1000, "--shard 999/1000 selects none of its 2 lines (1 invalid)" },
	};
	for (size_t i = 0; i < COUNT(cases); i++) {
		struct run r;
		struct ee_samples_config cfg = { .skip_invalid = 1,
			                         .shard_n = cases[i].shard_n,
			                         .shard_i = cases[i].shard_n ? cases[i].shard_n - 1 : 0 };
		struct ee_err err = { 0 };
		char keys[4][48];
		size_t n;
		open_run(&r, cases[i].samples, &cfg);
		cr_assert_eq(drain(&r, keys, &n, COUNT(keys), &err), 0, "case %zu: %s", i, err.msg);
		cr_expect_eq(n, 0, "case %zu", i);
		cr_expect_eq(ee_samples_some_evaluated(&r.s, &err), -1, "case %zu", i);
		cr_expect_not_null(strstr(err.msg, cases[i].want), "case %zu: %s", i, err.msg);
		close_run(&r);
	}
}

Test(samples, expected_counts_a_files_lines_per_shard)
{
	struct run r;
	struct ee_samples_config cfg = { .shard_i = 0, .shard_n = 2 };

	open_run(&r, S("a", "") "\n" S("b", "") S("c", ""), NULL);
	cr_expect_eq(ee_samples_expected(&r.s), 3);
	close_run(&r);
	open_run(&r, S("a", "") "\n" S("b", "") S("c", ""), &cfg);
	cr_expect_eq(ee_samples_expected(&r.s), 2, "about: 3 of 2 shards, rounded up");
	close_run(&r);
}
