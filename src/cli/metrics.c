/* metrics.c - `execeval metrics`: the summary of a results file.
 *
 * Reads the results JSONL (cli_read_results: a bad line is an input error,
 * exit 2, naming file:line and field, unless it is a torn last line), adds
 * every record to an ee_summary, prints the table and optionally writes the
 * summary JSON. Wall time and throughput come from the records' timestamps.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "results/composite.h"
#include "base/err.h"
#include "results/outpath.h"
#include "results/summary.h"

#define MAX_KS 32

static const char usage[] = "usage: execeval metrics RESULTS.jsonl [-k 1,10,100] [--json FILE]\n"
                            "  -k LIST       pass@k for these k (default 1,10,100); a k is reported only\n"
                            "                when every task has at least k samples\n"
                            "  --json FILE   also write the summary as JSON to FILE (-: on stdout,\n"
                            "                and the table on stderr)\n"
                            "  --composite F a composite score, e.g. \"0.7*correctness+0.3*lint\"\n"
                            "                (docs/record.md, Composite)\n";

struct metrics_args {
	const char *results;
	const char *json_out;
	int composite; /* formula given */
	struct ee_composite formula;
	unsigned long ks[MAX_KS];
	size_t nk;
};

static int parse_args(int argc, char **argv, struct metrics_args *a, struct ee_err *err)
{
	enum { O_JSON = 256, O_COMPOSITE, O_HELP };
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, O_JSON },
		{ "composite", required_argument, NULL, O_COMPOSITE },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->ks[0] = 1, a->ks[1] = 10, a->ks[2] = 100, a->nk = 3;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hk:", longopts, NULL)) != -1) {
		if (c == 'k' && cli_parse_ks(optarg, a->ks, MAX_KS, &a->nk, err) < 0)
			return -1;
		else if (c == O_JSON)
			a->json_out = optarg;
		else if (c == O_COMPOSITE && ee_composite_parse(optarg, &a->formula, err) < 0)
			return -1;
		else if (c == O_COMPOSITE)
			a->composite = 1;
		else if (c == O_HELP || c == 'h')
			return 1;
		else if (c == '?' || c == ':')
			return ee_fail(err, EE_ERR_USAGE, "unknown option or missing value: '%s'",
			               argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ee_fail(err, EE_ERR_USAGE, "expected one results file\n%s", usage);
	a->results = argv[optind];
	return 0;
}

static int add_record(void *ctx, const json_t *rec, const char *where, struct ee_err *err)
{
	return ee_summary_add(ctx, rec, where, err);
}

/* ---- output --------------------------------------------------------------- */

static int write_json(const json_t *summary, const char *path, struct ee_err *err)
{
	char *text = json_dumps(summary, JSON_INDENT(2));
	if (!text)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	size_t len = strlen(text);
	text[len] = '\n'; /* replaces the NUL */
	int rc = ee_write_atomic(path, text, len + 1, 0, err);
	free(text);
	return rc;
}

/* --json -: the summary on standard output, alone. */
static int print_json(const json_t *summary, struct ee_err *err)
{
	if (json_dumpf(summary, stdout, JSON_INDENT(2)) < 0 || fputc('\n', stdout) == EOF ||
	    fflush(stdout) != 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "<stdout>");
	return 0;
}

static int summarize(const struct metrics_args *a, struct ee_err *err)
{
	struct ee_summary *s = ee_summary_new();
	json_t *summary = NULL;
	int rc = -1;

	const struct ee_path_role in = { "results", a->results }, out = { "--json", a->json_out };
	/* --json -: standard output holds the JSON alone (as eval's --summary-json -) */
	int json_to_stdout = a->json_out && strcmp(a->json_out, "-") == 0;
	FILE *table = json_to_stdout ? stderr : stdout;
	if (!s)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (a->json_out && !json_to_stdout && ee_outputs_check(&in, 1, &out, 1, 0, err) < 0)
		goto out;
	if (cli_read_results(a->results, add_record, s, err) < 0)
		goto out;
	double wall_s = ee_summary_span_s(s);
	summary = ee_summary_json(s, a->ks, a->nk, wall_s);
	if (!summary) {
		ee_fail(err, EE_ERR_USAGE, "out of memory");
		goto out;
	}
	if (a->composite && ee_composite_add(&a->formula, summary, err) < 0)
		goto out;
	if (wall_s > 0)
		json_object_set_new(summary, "wall_from_timestamps", json_true());
	if (cli_summary_add_tasks_sha256(summary, a->results, err) < 0)
		goto out;
	ee_summary_print(summary, table);
	if (fflush(table) != 0) {
		ee_fail_errno(err, EE_ERR_USAGE, "<stdout>");
		goto out;
	}
	if (json_to_stdout)
		rc = print_json(summary, err);
	else
		rc = a->json_out ? write_json(summary, a->json_out, err) : 0;
out:
	json_decref(summary);
	ee_summary_free(s);
	return rc;
}

int cmd_metrics(int argc, char **argv)
{
	struct metrics_args a = { 0 };
	struct ee_err err = { 0 };
	int rc = parse_args(argc, argv, &a, &err);

	if (rc > 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (rc < 0 || summarize(&a, &err) < 0) {
		fprintf(stderr, "execeval metrics: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}
