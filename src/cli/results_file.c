/* results_file.c - a results file as the reading subcommands see it
 * (metrics, report): every record handed to a visitor, and the -k list.
 *
 * Reads the results JSONL through ee_results_scan with the LOOSE policy
 * (results.h: hand-made records welcome, blank lines skipped, each line
 * capped at MAX_LINE, a (task_id, sample) key on two lines an error): a
 * torn last line is skipped with a warning on stderr, a bad line before it
 * is an error naming file:line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/err.h"
#include "results/results.h"

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

int cli_read_results(const char *path, cli_record_visit visit, void *ctx, struct ee_err *err)
{
	static const struct ee_results_policy loose = { EE_RESULTS_LOOSE, 1, MAX_LINE };
	struct ee_results_torn torn;

	if (ee_results_scan(path, &loose, visit, ctx, &torn, err) < 0)
		return -1;
	if (torn.lines)
		fprintf(stderr,
		        "execeval: warning: %s; skipped the last line (torn by an interrupted run?)\n",
		        torn.why.msg);
	return 0;
}
