/* results_file.c - a results file as the reading subcommands see it
 * (metrics, report): every record handed to a visitor, and the -k list.
 *
 * Reads the results JSONL one line at a time (each line capped at
 * MAX_LINE). A line that is not JSON, or that the visitor rejects, is an
 * input error naming file:line unless it is the last non-blank line: a run
 * killed while appending leaves a torn last line, which is skipped with a
 * warning on stderr. A (task_id, sample) key on two lines is an error naming
 * both: the sample would be counted twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli/cli.h"
#include "err.h"
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
	struct reader *r = calloc(1, sizeof(*r));
	struct ee_err pending = { 0 };
	struct ee_key_lines keys = { 0 };
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
			int fatal = 0;
			visit_line(&r->line, path, lineno, where, visit, ctx, &keys, &fatal, &pending);
			if (fatal) {
				*err = pending;
				rc = -1;
				break;
			}
		}
	if (rc == 0 && pending.code)
		fprintf(stderr,
		        "execeval: warning: %s; skipped the last line (torn by an interrupted run?)\n",
		        pending.msg);
	if (r->fd >= 0)
		close(r->fd);
	ee_buf_free(&r->line);
	ee_keys_free(&keys);
	free(r);
	return rc;
}
