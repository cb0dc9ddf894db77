/* results_file.c - a results file as the reading subcommands see it
 * (metrics, report): every record handed to a visitor, and the -k list.
 *
 * Reads the results JSONL one line at a time (lines.h: gzip or not, UTF-8,
 * each line capped at MAX_LINE). A line that is not JSON, not UTF-8 or too
 * long, or that the visitor rejects, is an input error naming file:line
 * unless it is the last non-blank line: a run killed while appending leaves
 * a torn last line, which is skipped with a warning on stderr. A (task_id, sample) key on two lines is an error naming
 * both: the sample would be counted twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli/cli.h"
#include "err.h"
#include "lines.h"
#include "results.h"

#define MAX_LINE (16u << 20)
#define MAX_K    1000000000ul

int cli_parse_ks(const char *s, unsigned long *ks, size_t max, size_t *ret_n, struct ee_err *err)
{
	const char *p = s;

	*ret_n = 0;
	for (;;) {
		unsigned long k = 0;
		const char *digits = p;
		for (; *p >= '0' && *p <= '9' && k <= MAX_K; p++)
			k = k * 10 + (unsigned long)(*p - '0');
		if (p == digits || k == 0 || k > MAX_K || (*p && *p != ','))
			return ee_fail(err, EE_ERR_USAGE,
			               "-k: expected comma-separated positive integers, got '%s'", s);
		if (*ret_n == max)
			return ee_fail(err, EE_ERR_USAGE, "-k: at most %zu values", max);
		ks[(*ret_n)++] = k;
		if (!*p++)
			return 0;
	}
}

/* Visits one line; a repeated (task_id, sample) key sets *fatal: it is an
 * error even on the last line (a torn line is never a whole record). */
static int visit_line(const struct ee_buf *line, const char *path, unsigned long lineno, const char *where,
                      cli_record_visit visit, void *ctx, struct ee_key_lines *keys, int *fatal,
                      struct ee_err *err)
{
	json_error_t jerr;
	json_t *rec = json_loadb(line->data, line->len, 0, &jerr);

	if (!rec)
		return ee_fail(err, EE_ERR_USAGE, "%s: invalid JSON at column %d: %s", where, jerr.column,
		               jerr.text);
	int rc = visit(ctx, rec, where, err);
	if (rc == 0 && json_is_integer(json_object_get(rec, "sample")))
		*fatal = rc = ee_keys_note(keys, rec, path, lineno, err);
	json_decref(rec);
	return rc;
}

int cli_read_results(const char *path, cli_record_visit visit, void *ctx, struct ee_err *err)
{
	struct ee_lines l;
	struct ee_err pending = { 0 }, why;
	struct ee_key_lines keys = { 0 };
	char where[4096];
	int rc = ee_lines_open(&l, path, MAX_LINE, err), got = 0;

	while (rc == 0 && (got = ee_lines_next(&l, &why)) != 0) {
		if (got == -1) {
			*err = why;
			rc = -1;
		} else if (got == 1 && ee_lines_blank(&l)) {
			continue;
		} else if (pending.code) { /* the bad line was not the last one */
			*err = pending;
			rc = -1;
		} else if (got == -2 && l.had_newline) { /* too long, not UTF-8, and whole: never torn */
			*err = why;
			rc = -1;
		} else if (got == -2) { /* unterminated: torn by an interrupted run, if it is the last */
			pending = why;
		} else {
			snprintf(where, sizeof(where), "%s:%lu", l.in.name, l.line_no);
			int fatal = 0;
			visit_line(&l.line, l.in.name, l.line_no, where, visit, ctx, &keys, &fatal, &pending);
			if (fatal) {
				*err = pending;
				rc = -1;
			}
		}
	}
	if (rc == 0 && pending.code)
		fprintf(stderr,
		        "execeval: warning: %s; skipped the last line (torn by an interrupted run?)\n",
		        pending.msg);
	ee_lines_close(&l);
	ee_keys_free(&keys);
	return rc;
}
