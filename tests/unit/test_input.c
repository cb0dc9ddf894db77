/* test_input.c - the input layer: dataset loading, program composition,
 * reading a file once (input.c: gzip by its magic bytes, members, corrupt,
 * truncated; the sha256 of the bytes as given; a byte-order mark, UTF-8
 * named by offset; lines capped, torn lines) and EvalPlus's samples
 * directory (order, checks, hash). The results file: test_results.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/buf.h"
#include "input/compose.h"
#include "input/dataset.h"
#include "base/err.h"
#include "input/lines.h"
#include "input/samples_dir.h"
#include "base/sha256.h"
#include "input/task.h"
#include "tmpdir.h"

TestSuite(input, .init = tmpdir_make, .fini = tmpdir_remove);

#define TASK(id)                                                                                             \
	"{\"task_id\":\"" id                                                                                 \
	"\",\"prompt\":\"def f():\\n\",\"tests\":[{\"kind\":\"assert\",\"code\":\"assert f()\"}]}"

/* ---- dataset ------------------------------------------------------------ */

Test(input, dataset_loads_jsonl_and_finds_by_id)
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

Test(input, evalplus_mbpp_ids_find_mbpps_tasks_only)
{
	struct ee_dataset d;
	struct ee_err err;
	const char *p = write_file("t.jsonl", "{\"task_id\": 11, \"text\": \"t\", \"code\": \"\", "
	                                      "\"test_list\": [\"assert 1\"]}\n" TASK("12") "\n");
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), 0, "%s", err.msg);
	cr_expect_str_eq(ee_dataset_find_sample(&d, "Mbpp/11")->task.task_id, "11");
	cr_expect_str_eq(ee_dataset_find_sample(&d, "11")->task.task_id, "11");
	cr_expect_null(ee_dataset_find(&d, "Mbpp/11"));
	cr_expect_null(ee_dataset_find_sample(&d, "Mbpp/12"), "a native task is not MBPP's");
	cr_expect_null(ee_dataset_find_sample(&d, "Mbpp/011"));
	cr_expect_null(ee_dataset_find_sample(&d, "Mbpp/11x"));
	cr_expect_null(ee_dataset_find_sample(&d, "Mbpp/"));
	ee_dataset_free(&d);
}

Test(input, dataset_loads_a_json_array)
{
	struct ee_dataset d;
	struct ee_err err;
	const char *p = write_file("t.json", "  [" TASK("x") ", " TASK("y") "]");
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), 0, "%s", err.msg);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(ee_dataset_find(&d, "y")->line, 2);
	ee_dataset_free(&d);
}

Test(input, dataset_errors_name_file_line_and_field)
{
	static const struct {
		const char *content, *want;
	} cases[] = {
		{ TASK("a") "\n" TASK("a") "\n", "t.jsonl:2: task_id: 'a' already defined on line 1" },
		{ TASK("a") "\n{\"task_id\": \"b\", \"tests\": [{\"kind\": \"nope\", \"code\": \"x\"}]}\n",
		  "t.jsonl:2: tests[0].kind" },
		{ "not json\n", "t.jsonl:1: not JSON: a tasks file is JSON Lines, one JSON object per line "
		                "(docs/formats.md); this line starts \"not json\"" },
		{ TASK("a") "\ntask_id,prompt\ta\n", "t.jsonl:2: not JSON: a tasks file is JSON Lines, "
		                                     "one JSON object per line (docs/formats.md); this line "
		                                     "starts \"task_id,prompt\\x09a\" (a CSV file?)" },
		{ "  {\"task_id\": }\n", "t.jsonl:1: column 15: unexpected token" },
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

Test(input, read_line_caps_and_reports_torn_lines)
{
	const char *p = write_file("l.txt", "short\n0123456789abcdef\nlast");
	struct ee_lines l;
	struct ee_err err;
	cr_assert_eq(ee_lines_open(&l, p, 8, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_lines_next(&l, &err), 1);
	cr_assert_str_eq(l.line.data, "short");
	cr_assert(l.had_newline);
	cr_assert_eq(ee_lines_next(&l, &err), -2, "over the cap");
	cr_assert_not_null(strstr(err.msg, "l.txt:2: line longer than 8 bytes"), "%s", err.msg);
	cr_assert_eq(ee_lines_next(&l, &err), 1, "the line after it");
	cr_assert_str_eq(l.line.data, "last");
	cr_assert_eq(l.line_no, 3);
	cr_assert(!l.had_newline, "no newline: torn");
	cr_assert_eq(ee_lines_next(&l, &err), 0);
	ee_lines_close(&l);
}

/* ---- the input layer ---------------------------------------------------- */

/* text as one gzip member appended to out (at most cap bytes); returns the new length. */
static size_t gzip_append(const char *text, unsigned char *out, size_t len, size_t cap)
{
	z_stream z = { 0 };
	cr_assert_eq(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = out + len;
	z.avail_out = (uInt)(cap - len);
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	len = cap - z.avail_out;
	deflateEnd(&z);
	return len;
}

/* Every line of path joined by '|', or the error of the first failure. */
static char *read_all(const char *path, size_t cap, struct ee_lines *l)
{
	static char got[4096];
	struct ee_err err;
	int rc;
	got[0] = '\0';
	cr_assert_eq(ee_lines_open(l, path, cap, &err), 0, "%s", err.msg);
	while ((rc = ee_lines_next(l, &err)) == 1)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s|", l->line.data);
	if (rc < 0)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "ERR %d %s", rc, err.msg);
	return got;
}

Test(input, gzip_is_known_by_its_magic_and_members_follow_one_another)
{
	unsigned char z[4096];
	size_t n = gzip_append("one\ntw", z, 0, sizeof(z));
	n = gzip_append("o\nthree\n", z, n, sizeof(z));
	const char *p = write_bytes("plain-name.jsonl", z, n);
	struct ee_lines l;
	cr_assert_str_eq(read_all(p, 64, &l), "one|two|three|");
	cr_assert(l.in.gzip);
	char hex[EE_SHA256_HEX], want[EE_SHA256_HEX];
	struct ee_err err;
	ee_input_sha256(&l.in, hex);
	cr_assert_eq(ee_sha256_file(p, want, &err), 0);
	cr_assert_str_eq(hex, want, "the sha256 is of the compressed bytes, as given");
	ee_lines_close(&l);

	p = write_bytes("named.gz", "not\ngzip\n", 9); /* the name does not decide */
	cr_assert_str_eq(read_all(p, 64, &l), "not|gzip|");
	cr_assert(!l.in.gzip);
	ee_lines_close(&l);
}

Test(input, corrupt_and_truncated_gzip_name_the_file_and_line)
{
	unsigned char z[65536];
	char text[20000] = "";
	for (int i = 0; i < 300; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d\n", i * 7919 % 10007);
	size_t n = gzip_append(text, z, 0, sizeof(z));
	struct ee_lines l;

	const char *p = write_bytes("cut.gz", z, n - 12);
	char *got = read_all(p, 64, &l);
	cr_assert_not_null(strstr(got, "ERR -1 "), "%s", got);
	cr_assert_not_null(strstr(got, "cut.gz:"), "%s", got);
	cr_assert_not_null(strstr(got, ": truncated gzip data"), "%s", got);
	ee_lines_close(&l);

	for (size_t i = 30; i < 80; i++)
		z[i] ^= 0x55;
	p = write_bytes("bad.gz", z, n);
	got = read_all(p, 64, &l);
	cr_assert_not_null(strstr(got, "bad.gz:1: corrupt gzip data"), "%s", got);
	ee_lines_close(&l);

	unsigned char trail[4096];
	n = gzip_append("a\n", trail, 0, sizeof(trail));
	memcpy(trail + n, "junk", 4);
	p = write_bytes("trailing.gz", trail, n + 4);
	got = read_all(p, 64, &l);
	cr_assert_not_null(strstr(got, "a|ERR -1 "), "bytes after the last member are an error: %s", got);
	ee_lines_close(&l);
}

Test(input, a_bom_is_dropped_and_bad_utf8_named_by_its_offset)
{
	struct ee_lines l;
	const char *p = write_bytes("bom.jsonl", "\xEF\xBB\xBF{}\n\xEF\xBB\xBF{}\n", 12);
	cr_assert_str_eq(read_all(p, 64, &l), "{}|\xEF\xBB\xBF{}|", "only at the start of the file");
	ee_lines_close(&l);

	p = write_bytes("bad.jsonl",
	                "\xEF\xBB\xBF"
	                "ok\nbad \xC3\x28 x\nok é\n",
	                22);
	struct ee_err err;
	cr_assert_eq(ee_lines_open(&l, p, 64, &err), 0);
	cr_assert_eq(ee_lines_next(&l, &err), 1);
	cr_assert_eq(ee_lines_next(&l, &err), -2);
	cr_assert_not_null(strstr(err.msg, "bad.jsonl:2: byte offset 10: not UTF-8 (byte 0xc3)"), "%s",
	                   err.msg);
	cr_assert_eq(ee_lines_next(&l, &err), 1, "reading goes on");
	cr_assert_str_eq(l.line.data, "ok é");
	ee_lines_close(&l);
}

Test(input, a_document_read_whole_stops_at_its_cap)
{
	const char *p = write_file("doc.json", "{\n  \"a\": 1\n}");
	struct ee_lines l;
	struct ee_buf text;
	struct ee_err err;

	for (size_t cap = 12; cap >= 11; cap--) { /* the document is 12 bytes, no last newline */
		ee_buf_init(&text, cap);
		cr_assert_eq(ee_lines_open(&l, p, 64, &err), 0);
		cr_assert_eq(ee_lines_next(&l, &err), 1);
		int rc = ee_lines_slurp(&l, &text, &err);
		if (cap == 12) {
			cr_assert_eq(rc, 0, "%s", err.msg);
			cr_assert_str_eq(text.data, "{\n  \"a\": 1\n}", "the bytes as they are");
		} else {
			cr_assert_eq(rc, -1);
			cr_assert_not_null(strstr(err.msg, "doc.json:3: larger than 11 bytes"), "%s",
			                   err.msg);
		}
		ee_lines_close(&l);
		ee_buf_free(&text);
	}
}

Test(input, a_tasks_file_in_gzip_as_lines_or_an_array)
{
	const char *task = "{\"task_id\":\"a\",\"prompt\":\"def f():\\n\",\"tests\":[{\"kind\":\"assert\","
	                   "\"code\":\"assert f()\"}]}";
	char text[512];
	unsigned char z[2048];
	struct ee_dataset d;
	struct ee_err err;

	snprintf(text, sizeof(text), "\n\n[\n%s\n]\n", task);
	const char *p = write_bytes("t.json.gz", z, gzip_append(text, z, 0, sizeof(z)));
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), 0, "%s", err.msg);
	cr_assert_eq(d.n, 1);
	ee_dataset_free(&d);

	snprintf(text, sizeof(text), "\n%s\n[1]\n", task);
	p = write_bytes("t.jsonl.gz", z, gzip_append(text, z, 0, sizeof(z)));
	cr_assert_eq(ee_dataset_load(p, EE_FORMAT_AUTO, &d, &err), -1);
	cr_assert_not_null(strstr(err.msg, "t.jsonl.gz:3"), "line numbers count the blank lines: %s",
	                   err.msg);
}

static void put(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/s/%s", dir, name);
	*strrchr(path, '/') = '\0';
	mkdir(path, 0755);
	*strchr(path + strlen(path), '\0') = '/';
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(input, an_evalplus_directory_in_task_then_numeric_order)
{
	char root[256];
	struct ee_samples_dir d;
	struct ee_err err;
	json_t *s;
	const char *want[] = { "HumanEval_1/0.py", "HumanEval_1/9.py", "HumanEval_10/2.py",
		               "HumanEval_2/3.py", "HumanEval_2/11.py" };

	snprintf(root, sizeof(root), "%s/s", dir);
	mkdir(root, 0755);
	put("HumanEval_2/11.py", "b");
	put("HumanEval_2/3.py", "a");
	put("HumanEval_10/2.py", "c");
	put("HumanEval_1/9.py", "d");
	put("HumanEval_1/0.py", "e");
	cr_assert(ee_samples_dir_is(root));
	cr_assert_eq(ee_samples_dir_open(&d, root, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d.n, 5);
	for (size_t i = 0; i < d.n; i++)
		cr_expect_str_eq(d.files[i].name, want[i]);
	for (size_t i = 0; i < d.n; i++) {
		cr_assert_eq(ee_samples_dir_next(&d, &s, &err), 1, "%s", err.msg);
		json_decref(s);
	}
	cr_assert_eq(ee_samples_dir_next(&d, &s, &err), 0);
	char streamed[EE_SHA256_HEX], whole[EE_SHA256_HEX];
	ee_samples_dir_sha256(&d, streamed);
	ee_samples_dir_free(&d);
	cr_assert_eq(ee_samples_dir_sha256_of(root, whole, &err), 0, "%s", err.msg);
	cr_assert_str_eq(streamed, whole);

	put("HumanEval_1/09.py", "x");
	cr_assert_eq(ee_samples_dir_open(&d, root, NULL, &err), -1);
	cr_assert_not_null(strstr(err.msg, "sample 9 repeats HumanEval_1/"), "%s", err.msg);
	ee_samples_dir_free(&d);
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

Test(input, compose_each_sample_form)
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
