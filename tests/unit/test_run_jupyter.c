/* test_run_jupyter.c - /run_jupyter's pure pieces (run_jupyter.h): the
 * request read as SandboxFusion's model reads it (defaults, ceilings, the
 * field named on a refusal), the next cell's clock within the total, and
 * an engine cell answer turned into SandboxFusion's cell. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "base/err.h"
#include "serve/run_jupyter.h"

static const struct ee_run_jupyter_config cfg = {
	.limits = { .memory_mb = 512 },
	.max_cell_timeout_s = 30,
	.max_total_timeout_s = 3600,
};

static int read_body(const char *body, struct ee_jupyter_request *r, struct ee_err *err)
{
	return ee_jupyter_request_read(body, strlen(body), &cfg, r, err);
}

Test(run_jupyter, defaults_as_sandboxfusion_has_them)
{
	struct ee_jupyter_request r;
	struct ee_err err = { 0 };

	cr_assert_eq(read_body("{\"cells\": [\"a = 1\", \"a\"], \"other\": 1}", &r, &err), 0, "%s", err.msg);
	cr_assert_eq(json_array_size(r.cells), 2);
	cr_assert_float_eq(r.cell_timeout_s, 0, 1e-9);
	cr_assert_float_eq(r.total_timeout_s, 45, 1e-9);
	cr_assert_eq(r.memory_mb, 512);
	cr_assert_eq(json_object_size(r.files), 0);
	cr_assert_eq(json_array_size(r.fetch), 0);
	ee_jupyter_request_free(&r);
}

Test(run_jupyter, ceilings_are_the_servers)
{
	struct ee_jupyter_request r;
	struct ee_err err = { 0 };

	cr_assert_eq(
	        read_body("{\"cells\": [], \"total_timeout\": 99999, \"memory_limit_MB\": 4096,"
	                  " \"cell_timeout\": 2.5, \"kernel\": \"python3\", \"files\": {\"a/b\": \"aGk=\"},"
	                  " \"fetch_files\": [\"out\"]}",
	                  &r, &err),
	        0, "%s", err.msg);
	cr_assert_float_eq(r.total_timeout_s, 3600, 1e-9);
	cr_assert_float_eq(r.cell_timeout_s, 2.5, 1e-9);
	cr_assert_eq(r.memory_mb, 512);
	cr_assert_str_eq(json_string_value(json_object_get(r.files, "a/b")), "aGk=");
	cr_assert_str_eq(json_string_value(json_array_get(r.fetch, 0)), "out");
	ee_jupyter_request_free(&r);
	cr_assert_eq(read_body("{\"cells\": [], \"memory_limit_MB\": 3}", &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.memory_mb, 16); /* the least any sandbox has */
	ee_jupyter_request_free(&r);
}

Test(run_jupyter, a_refusal_names_its_field)
{
	static const struct {
		const char *body, *field;
	} bad[] = {
		{ "{}", "cells" },
		{ "{\"cells\": null}", "cells" },
		{ "{\"cells\": [\"1\", {}]}", "cells[1]" },
		{ "{\"cells\": [], \"cell_timeout\": -0.5}", "cell_timeout" },
		{ "{\"cells\": [], \"total_timeout\": 0}", "total_timeout" },
		{ "{\"cells\": [], \"memory_limit_MB\": 0}", "memory_limit_MB" },
		{ "{\"cells\": [], \"memory_limit_MB\": 1.5}", "memory_limit_MB" },
		{ "{\"cells\": [], \"kernel\": \"python2\"}", "kernel" },
		{ "{\"cells\": [], \"files\": {\"../x\": \"aGk=\"}}", "files.../x" },
		{ "{\"cells\": [], \"fetch_files\": \"out\"}", "fetch_files" },
		{ "[1]", "body" },
		{ "{\"cells\": ", "body" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ee_jupyter_request r;
		struct ee_err err = { 0 };
		cr_assert_eq(read_body(bad[i].body, &r, &err), -1, "%s", bad[i].body);
		cr_assert_str_eq(err.field, bad[i].field, "%s: %s (%s)", bad[i].body, err.field, err.msg);
		cr_assert(err.msg[0]);
		ee_jupyter_request_free(&r);
	}
}

Test(run_jupyter, too_many_cells)
{
	size_t n = EE_JUPYTER_MAX_CELLS + 1;
	char *body = malloc(n * 4 + 16);
	size_t at = (size_t)sprintf(body, "{\"cells\": [");
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(body + at, "%s\"1\"", i ? "," : "");
	strcpy(body + at, "]}");
	struct ee_jupyter_request r;
	struct ee_err err = { 0 };
	cr_assert_eq(read_body(body, &r, &err), -1);
	cr_assert_str_eq(err.field, "cells");
	ee_jupyter_request_free(&r);
	free(body);
}

Test(run_jupyter, a_cells_clock)
{
	int by_total = -1;

	/* Its own clock when the total leaves room for it. */
	cr_assert_float_eq(ee_jupyter_cell_clock(2, 10, 30, &by_total), 2, 1e-9);
	cr_assert_eq(by_total, 0);
	/* What is left of the total, when that is less. */
	cr_assert_float_eq(ee_jupyter_cell_clock(5, 1.5, 30, &by_total), 1.5, 1e-9);
	cr_assert_eq(by_total, 1);
	/* No clock of its own: the total's. */
	cr_assert_float_eq(ee_jupyter_cell_clock(0, 7, 30, &by_total), 7, 1e-9);
	cr_assert_eq(by_total, 1);
	/* The server's ceiling is the cell's clock, not the total's. */
	cr_assert_float_eq(ee_jupyter_cell_clock(0, 45, 30, &by_total), 30, 1e-9);
	cr_assert_eq(by_total, 0);
	cr_assert_float_eq(ee_jupyter_cell_clock(3, 3, 30, &by_total), 3, 1e-9);
	cr_assert_eq(by_total, 0);
}

static json_t *cell_of(const char *answer, double clock)
{
	json_error_t e;
	json_t *a = json_loads(answer, 0, &e);
	cr_assert(a, "%s", e.text);
	json_t *c = ee_jupyter_cell_of(a, clock);
	json_decref(a);
	return c;
}

Test(run_jupyter, a_value_is_displayed_as_text_plain)
{
	json_t *c = cell_of("{\"status\": \"ok\", \"result\": \"123\", \"error\": null, \"stdout\": \"x\\n\","
	                    " \"stderr\": \"\", \"rolled_back\": false}",
	                    1);
	json_t *want = json_loads(
	        "{\"stdout\": \"x\\n\", \"stderr\": \"\", \"display\": [{\"text/plain\": \"123\"}],"
	        " \"error\": []}",
	        0, NULL);
	cr_assert(json_equal(c, want));
	json_decref(want);
	json_decref(c);
	c = cell_of("{\"status\": \"ok\", \"result\": null, \"stdout\": \"\", \"stderr\": \"\"}", 1);
	cr_assert_eq(json_array_size(json_object_get(c, "display")), 0);
	json_decref(c);
}

Test(run_jupyter, an_exception_is_its_error_with_the_traceback_in_lines)
{
	json_t *c = cell_of(
	        "{\"status\": \"error\", \"result\": null, \"stdout\": \"\", \"stderr\": \"\","
	        " \"rolled_back\": false, \"error\": {\"type\": \"ValueError\", \"message\": \"boom\","
	        " \"traceback\": \"Traceback (most recent call last):\\n  File \\\"<cell-1>\\\"\\n"
	        "ValueError: boom\\n\"}}",
	        1);
	json_t *err = json_array_get(json_object_get(c, "error"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(err, "ename")), "ValueError");
	cr_assert_str_eq(json_string_value(json_object_get(err, "evalue")), "boom");
	json_t *tb = json_object_get(err, "traceback");
	cr_assert_eq(json_array_size(tb), 3);
	cr_assert_str_eq(json_string_value(json_array_get(tb, 2)), "ValueError: boom");
	json_decref(c);
}

Test(run_jupyter, a_rolled_back_cell_says_why)
{
	json_t *c = cell_of("{\"status\": \"timeout\", \"detail\": \"timeout\", \"stdout\": \"started\\n\","
	                    " \"stderr\": \"\", \"rolled_back\": true}",
	                    1.5);
	json_t *err = json_array_get(json_object_get(c, "error"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(c, "stdout")), "started\n");
	cr_assert_str_eq(json_string_value(json_object_get(err, "ename")), "timeout");
	cr_assert(strstr(json_string_value(json_object_get(err, "evalue")), "1.5 s"));
	cr_assert_eq(json_array_size(json_object_get(err, "traceback")), 0);
	json_decref(c);
	c = cell_of("{\"status\": \"crashed\", \"detail\": \"exit code 3\", \"rolled_back\": true}", 1);
	err = json_array_get(json_object_get(c, "error"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(err, "ename")), "crashed");
	cr_assert(strstr(json_string_value(json_object_get(err, "evalue")), "exit code 3"));
	cr_assert_str_eq(json_string_value(json_object_get(c, "stdout")), "");
	json_decref(c);
}
