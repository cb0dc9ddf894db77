/* common.c - shared set-up and option parsing of the subcommands (cli.h). */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "sandbox/worker.h"
#include "task.h"

void cli_context_zero(struct cli_context *c)
{
	memset(c, 0, sizeof(*c));
	c->harness.code_fd = -1;
}

/* Warm workers when asked for; auto falls back to cold where warm cannot run. */
static int start_pool(struct cli_context *c, struct ee_eval_options *o, unsigned workers, struct ee_err *err)
{
	struct ee_err why = { 0 };

	if (o->isolation == EE_ISOLATION_COLD)
		return 0;
	if (ee_pool_supported(&c->host, &why) < 0) {
		if (o->isolation == EE_ISOLATION_WARM) {
			*err = why;
			return -1;
		}
		fprintf(stderr, "execeval: running cold: %s\n", why.msg);
		return 0;
	}
	struct ee_pool_setup s = { &c->host, &c->mounts, &c->seccomp, o->limits, o->lint };
	if (ee_pool_new(&s, workers, &c->pool, err) < 0)
		return -1;
	o->pool = c->pool;
	return 0;
}

/* Without a memory cgroup --memory is only RLIMIT_AS, which the pages of
 * files (memfd, /tmp) never touch: run there only when told to, with
 * memfd_create refused and /tmp and file sizes fitted inside --memory.
 * The message fits ee_err; doctor says why the cgroup is unusable. */
static int check_memory_limit(const struct ee_host *h, struct ee_eval_options *o, struct ee_err *err)
{
	if (ee_host_has_memory_cgroup(h)) {
		o->weak_limits = 0;
		return 0;
	}
	if (!o->weak_limits)
		return ee_fail(err, EE_ERR_SANDBOX,
		               "no writable memory cgroup: --memory would be RLIMIT_AS only, which memfd "
		               "and /tmp pages escape; give execeval one (docker --cgroupns=private; "
		               "unprivileged: systemd-run --user --scope -p Delegate=yes) or pass "
		               "--weak-limits");
	ee_limits_fit_weak(&o->limits);
	return 0;
}

int cli_context_init(struct cli_context *c, struct ee_eval_options *o, unsigned workers, struct ee_err *err)
{
	cli_context_zero(c);
	if (ee_host_probe(&c->host, err) < 0 || ee_host_usable(&c->host, err) < 0 ||
	    check_memory_limit(&c->host, o, err) < 0)
		return -1;
	ee_cgroup_sweep_stale(&c->host);
	if (ee_mount_plan(o->limits.tmp_mb, &c->mounts, err) < 0 ||
	    ee_harness_prepare(c->host.python, &c->harness, err) < 0 ||
	    ee_seccomp_compile(o->weak_limits ? EE_SECCOMP_NO_MEMFD : 0, &c->seccomp, err) < 0 ||
	    ee_loop_new(&c->loop, err) < 0)
		return -1;
	o->host = &c->host;
	o->mounts = &c->mounts;
	o->seccomp = &c->seccomp;
	o->harness = &c->harness;
	return start_pool(c, o, workers, err);
}

void cli_context_free(struct cli_context *c)
{
	ee_pool_free(c->pool);
	c->pool = NULL;
	ee_loop_free(c->loop);
	c->loop = NULL;
	ee_harness_release(&c->harness);
	ee_seccomp_free(&c->seccomp);
}

void cli_usage(const char *head, unsigned front, int col, const char *tail)
{
	fputs(head, stdout);
	ee_options_help(stdout, front, col);
	fputs(tail, stdout);
}

int cli_task_format(int format, const struct ee_eval_options *o)
{
	return format | (o->mbpp_challenge ? (int)EE_TASK_MBPP_CHALLENGE : 0);
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

static void keep_record(void *ctx, json_t *record)
{
	*(json_t **)ctx = record;
}

int cli_check_sandbox(struct cli_context *ctx, const struct ee_eval_options *o, double *wall_ms,
                      struct ee_err *err)
{
	static const char *const asserts[] = { "assert add(1, 2) == 3" };
	struct ee_task task = { 0 };
	json_t *rec = NULL;
	int rc = -1;

	if (ee_task_from_asserts(asserts, 1, &task, err) < 0 ||
	    (o->strict_asserts && ee_task_strict_asserts(&task, err) < 0)) {
		ee_task_free(&task);
		return -1;
	}
	struct ee_candidate cand = { .task = &task,
		                     .program = "def add(a, b):\n    return a + b\n",
		                     .sample = -1 };
	int sig = ee_eval_start(ctx->loop, o, &cand, keep_record, &rec, err) < 0
	                  ? -1
	                  : ee_loop_run(ctx->loop, err);
	if (sig > 0) {
		ee_fail(err, EE_ERR_SANDBOX, "interrupted by signal %d", sig);
	} else if (sig == 0) {
		const char *status = json_string_value(json_object_get(rec, "status"));
		const char *why = json_string_value(json_object_get(rec, "sandbox_error"));
		if (!why)
			why = json_string_value(json_object_get(rec, "detail"));
		if (status && strcmp(status, "pass") == 0) {
			*wall_ms = json_number_value(
			        json_object_get(json_object_get(rec, "resources"), "wall_ms"));
			rc = 0;
		} else {
			ee_fail(err, EE_ERR_SANDBOX, "a trivial candidate did not pass: %s",
			        why      ? why
			        : status ? status
			                 : "no record");
		}
	}
	json_decref(rec);
	ee_task_free(&task);
	return rc;
}
