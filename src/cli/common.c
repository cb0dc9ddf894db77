/* common.c - shared set-up and option parsing of the subcommands (cli.h). */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/resource_limits.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "sandbox/worker.h"
#include "input/task.h"

void cli_usage(const char *head, unsigned front, int col, const char *tail)
{
	fputs(head, stdout);
	ee_options_help(stdout, front, col);
	fputs(tail, stdout);
}

int cli_task_format(int format, const struct ee_eval_options *o)
{
	if (format == EE_FORMAT_AUTO)
		format = o->task_format;
	return format | (o->mbpp_challenge ? (int)EE_TASK_MBPP_CHALLENGE : 0);
}

int cli_prepare_task(struct ee_task *t, const struct ee_eval_options *o, struct ee_err *err)
{
	if (ee_task_apply_rules(t, &o->task_rules, err) < 0)
		return -1;
	return o->strict_asserts && ee_task_strict_asserts(t, err) < 0 ? -1 : 0;
}

const char *cli_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
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

void cli_clamp_limits(const char *cmd, struct ee_limits *lim)
{
	const struct ee_limits given = *lim;

	ee_limits_clamp(lim);
	if (!(given.timeout_s == lim->timeout_s))
		fprintf(stderr, "execeval %s: --timeout %g is outside [%g, %g]: %g s\n", cmd, given.timeout_s,
		        EE_TIMEOUT_MIN_S, EE_TIMEOUT_MAX_S, lim->timeout_s);
	if (given.memory_mb != lim->memory_mb)
		fprintf(stderr, "execeval %s: --memory %u is outside [%u, %u]: %u MB\n", cmd, given.memory_mb,
		        EE_MEMORY_MB_MIN, EE_MEMORY_MB_MAX, lim->memory_mb);
	if (given.procs != lim->procs)
		fprintf(stderr, "execeval %s: --procs %u is outside [%u, %u]: %u\n", cmd, given.procs,
		        EE_PROCS_MIN, EE_PROCS_MAX, lim->procs);
	if (given.output_cap != lim->output_cap)
		fprintf(stderr, "execeval %s: --output-cap %zu is outside [%zu, %zu]: %zu bytes\n", cmd,
		        given.output_cap, EE_OUTPUT_CAP_MIN, EE_OUTPUT_CAP_MAX, lim->output_cap);
	if (given.tmp_mb != lim->tmp_mb)
		fprintf(stderr, "execeval %s: --tmp-size %u is outside [%u, %u]: %u MB\n", cmd, given.tmp_mb,
		        EE_TMP_MB_MIN, EE_TMP_MB_MAX, lim->tmp_mb);
}
