/* common.c - option parsing and file reading the subcommands share (cli.h). */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "task.h"

int cli_parse_double(const char *flag, const char *s, double *ret, struct ee_err *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v != v)
		return ee_fail(err, EE_ERR_USAGE, "%s: expected a number, got '%s'", flag, s);
	*ret = v;
	return 0;
}

int cli_parse_uint(const char *flag, const char *s, unsigned long max, unsigned long *ret, struct ee_err *err)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return ee_fail(err, EE_ERR_USAGE, "%s: expected a whole number up to %lu, got '%s'", flag,
		               max, s);
	*ret = v;
	return 0;
}

static int parse_scan(const char *s, int *ret)
{
	static const char *const names[] = { "off", "report", "block" };
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = i;
			return 0;
		}
	return -1;
}

int cli_task_format(int format, const struct ee_eval_options *o)
{
	return format | (o->mbpp_challenge ? (int)EE_TASK_MBPP_CHALLENGE : 0);
}

int cli_common_option(int c, const char *arg, struct ee_eval_options *o, enum ee_extract_mode *extract,
                      struct ee_err *err)
{
	unsigned long u = 0;
	int rc = 0;

	switch (c) {
	case CLI_O_TIMEOUT: return cli_parse_double("--timeout", arg, &o->limits.timeout_s, err);
	case CLI_O_MEMORY:
		rc = cli_parse_uint("--memory", arg, 1u << 20, &u, err);
		o->limits.memory_mb = (unsigned)u;
		return rc;
	case CLI_O_PROCS:
		rc = cli_parse_uint("--procs", arg, 1u << 20, &u, err);
		o->limits.procs = (unsigned)u;
		return rc;
	case CLI_O_CAP:
		rc = cli_parse_uint("--output-cap", arg, 1ul << 40, &u, err);
		o->limits.output_cap = u;
		return rc;
	case CLI_O_EXTRACT:
		if (ee_extract_mode_parse(arg, extract) < 0)
			return ee_fail(err, EE_ERR_USAGE,
			               "--extract: expected auto, fenced or none, got '%s'", arg);
		return 0;
	case CLI_O_SCAN:
		if (parse_scan(arg, &o->scan) < 0)
			return ee_fail(err, EE_ERR_USAGE, "--scan: expected off, report or block, got '%s'",
			               arg);
		return 0;
	case CLI_O_ALLOW: o->deny_imports = 0; return 0;
	case CLI_O_HIDDEN: o->run_hidden_on_fail = 1; return 0;
	case CLI_O_ISOLATION:
		if (strcmp(arg, "warm") == 0)
			o->isolation = EE_ISOLATION_WARM;
		else if (strcmp(arg, "cold") == 0)
			o->isolation = EE_ISOLATION_COLD;
		else if (strcmp(arg, "auto") == 0)
			o->isolation = EE_ISOLATION_AUTO;
		else
			return ee_fail(err, EE_ERR_USAGE,
			               "--isolation: expected warm, cold or auto, got '%s'", arg);
		return 0;
	case CLI_O_LINT: o->lint = 1; return 0;
	case CLI_O_STRICT_ASSERTS: o->strict_asserts = 1; return 0;
	case CLI_O_WEAK_LIMITS: o->weak_limits = 1; return 0;
	case CLI_O_MBPP_CHALLENGE: o->mbpp_challenge = 1; return 0;
	case CLI_O_LINT_SEVERITY: {
		static const char *const names[] = { "low", "medium", "high" };
		for (int i = 0; i < 3; i++)
			if (strcmp(arg, names[i]) == 0) {
				o->lint_severity = i;
				o->lint = 1;
				return 0;
			}
		return ee_fail(err, EE_ERR_USAGE, "--lint-severity: expected low, medium or high, got '%s'",
		               arg);
	}
	}
	return ee_fail(err, EE_ERR_USAGE, "internal: unknown shared option %d", c);
}

int cli_read_file(const char *path, size_t cap, char **ret, size_t *ret_len, struct ee_err *err)
{
	int stdin_ = !path || strcmp(path, "-") == 0;
	int fd = stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	const char *name = stdin_ ? "<stdin>" : path;
	struct ee_buf b;
	char chunk[65536];

	if (fd < 0)
		return ee_fail_errno(err, EE_ERR_USAGE, "%s", name);
	ee_buf_init(&b, cap);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ee_fail_errno(err, EE_ERR_USAGE, "%s", name);
			goto fail;
		}
		if (n == 0)
			break;
		if (ee_buf_append(&b, chunk, (size_t)n) < 0) {
			ee_fail(err, EE_ERR_USAGE, "%s: larger than %zu bytes", name, cap);
			goto fail;
		}
	}
	if (!stdin_)
		close(fd);
	if (!b.data && ee_buf_append(&b, "", 0) < 0) {
		ee_fail(err, EE_ERR_USAGE, "out of memory");
		goto fail;
	}
	*ret = b.data;
	*ret_len = b.len;
	return 0;
fail:
	if (!stdin_)
		close(fd);
	ee_buf_free(&b);
	return -1;
}
