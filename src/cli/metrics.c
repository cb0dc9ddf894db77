/* metrics.c - `execeval metrics`: the summary of a results file.
 *
 * Reads the results JSONL one line at a time (each line capped at
 * MAX_LINE), adds every record to an ee_summary, prints the table and
 * optionally writes the summary JSON. A bad line is an input error (exit 2,
 * naming file:line and field) unless it is the last non-blank line: a run
 * killed while appending leaves a torn last line, which is skipped with a
 * warning. Wall time and throughput come from the records' timestamps.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli/cli.h"
#include "composite.h"
#include "err.h"
#include "summary.h"

#define MAX_LINE (16u << 20)
#define MAX_KS   32
#define MAX_K    1000000000ul

static const char usage[] = "usage: execeval metrics RESULTS.jsonl [-k 1,10,100] [--json FILE]\n"
                            "  -k LIST       pass@k for these k (default 1,10,100); a k is reported only\n"
                            "                when every task has at least k samples\n"
                            "  --json FILE   also write the summary as JSON to FILE\n"
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

/* "1,10,100": positive decimal integers, nothing else. */
static int parse_ks(const char *s, struct metrics_args *a, struct ee_err *err)
{
	const char *p = s;

	a->nk = 0;
	for (;;) {
		unsigned long k = 0;
		const char *digits = p;
		for (; *p >= '0' && *p <= '9' && k <= MAX_K; p++)
			k = k * 10 + (unsigned long)(*p - '0');
		if (p == digits || k == 0 || k > MAX_K || (*p && *p != ','))
			return ee_fail(err, EE_ERR_USAGE,
			               "-k: expected comma-separated positive integers, got '%s'", s);
		if (a->nk == MAX_KS)
			return ee_fail(err, EE_ERR_USAGE, "-k: at most %d values", MAX_KS);
		a->ks[a->nk++] = k;
		if (!*p++)
			return 0;
	}
}

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
	while ((c = getopt_long(argc, argv, "k:", longopts, NULL)) != -1) {
		if (c == 'k' && parse_ks(optarg, a, err) < 0)
			return -1;
		else if (c == O_JSON)
			a->json_out = optarg;
		else if (c == O_COMPOSITE && ee_composite_parse(optarg, &a->formula, err) < 0)
			return -1;
		else if (c == O_COMPOSITE)
			a->composite = 1;
		else if (c == O_HELP)
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

/* ---- lines ---------------------------------------------------------------- */

struct reader {
	int fd;
	char chunk[65536];
	size_t pos, len;
	int eof;
	struct ee_buf line; /* the current line, without its newline */
};

/* 1: a line is in r->line; 0: end of file; -1: read error or over MAX_LINE. */
static int next_line(struct reader *r, const char *name, unsigned long lineno, struct ee_err *err)
{
	int got = 0;

	ee_buf_reset(&r->line);
	for (;;) {
		if (r->pos == r->len) {
			if (r->eof)
				return got;
			ssize_t n = read(r->fd, r->chunk, sizeof(r->chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return ee_fail_errno(err, EE_ERR_USAGE, "%s", name);
			r->eof = n == 0;
			r->pos = 0;
			r->len = (size_t)n;
			continue;
		}
		char *start = r->chunk + r->pos, *nl = memchr(start, '\n', r->len - r->pos);
		size_t take = nl ? (size_t)(nl - start) : r->len - r->pos;
		if (ee_buf_append(&r->line, start, take) < 0)
			return ee_fail(err, EE_ERR_USAGE, "%s:%lu: line longer than %u MiB", name, lineno,
			               MAX_LINE >> 20);
		got = 1;
		r->pos += take + (nl != NULL);
		if (nl)
			return 1;
	}
}

static int is_blank(const struct ee_buf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (!strchr(" \t\r", b->data[i]))
			return 0;
	return 1;
}

static int add_line(struct ee_summary *s, const struct ee_buf *line, const char *where, struct ee_err *err)
{
	json_error_t jerr;
	json_t *rec = json_loadb(line->data, line->len, 0, &jerr);

	if (!rec)
		return ee_fail(err, EE_ERR_USAGE, "%s: invalid JSON at column %d: %s", where, jerr.column,
		               jerr.text);
	int rc = ee_summary_add(s, rec, where, err);
	json_decref(rec);
	return rc;
}

/* Adds every record of the file; a bad last line only warns. */
static int read_results(struct ee_summary *s, const char *path, struct ee_err *err)
{
	struct reader *r = calloc(1, sizeof(*r));
	struct ee_err pending = { 0 };
	unsigned long lineno = 0;
	char where[4096];
	int rc;

	if (!r)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	ee_buf_init(&r->line, MAX_LINE);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		rc = ee_fail_errno(err, EE_ERR_USAGE, "%s", path);
	else
		while ((rc = next_line(r, path, lineno + 1, err)) > 0) {
			lineno++;
			if (is_blank(&r->line))
				continue;
			if (pending.code) { /* the bad line was not the last one */
				*err = pending;
				rc = -1;
				break;
			}
			snprintf(where, sizeof(where), "%s:%lu", path, lineno);
			add_line(s, &r->line, where, &pending);
		}
	if (rc == 0 && pending.code)
		fprintf(stderr,
		        "execeval: warning: %s; skipped the last line (torn by an interrupted run?)\n",
		        pending.msg);
	if (r->fd >= 0)
		close(r->fd);
	ee_buf_free(&r->line);
	free(r);
	return rc;
}

/* ---- output --------------------------------------------------------------- */

static int write_json(const json_t *summary, const char *path, struct ee_err *err)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return ee_fail_errno(err, EE_ERR_USAGE, "--json: %s", path);
	int bad = json_dumpf(summary, f, JSON_INDENT(2)) < 0 || fputc('\n', f) == EOF;
	if (fclose(f) != 0 || bad)
		return ee_fail_errno(err, EE_ERR_USAGE, "--json: %s: write failed", path);
	return 0;
}

static int summarize(const struct metrics_args *a, struct ee_err *err)
{
	struct ee_summary *s = ee_summary_new();
	json_t *summary = NULL;
	int rc = -1;

	if (!s)
		return ee_fail(err, EE_ERR_USAGE, "out of memory");
	if (read_results(s, a->results, err) < 0)
		goto out;
	double wall_s = ee_summary_span_s(s);
	summary = ee_summary_json(s, a->ks, a->nk, wall_s);
	if (!summary) {
		ee_fail(err, EE_ERR_USAGE, "out of memory");
		goto out;
	}
	if (a->composite)
		ee_composite_add(&a->formula, summary);
	if (wall_s > 0)
		json_object_set_new(summary, "wall_from_timestamps", json_true());
	ee_summary_print(summary, stdout);
	if (fflush(stdout) != 0) {
		ee_fail_errno(err, EE_ERR_USAGE, "<stdout>");
		goto out;
	}
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
