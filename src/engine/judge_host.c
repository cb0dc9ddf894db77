/* judge_host.c - long-lived judges (judge_host.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/loop.h"
#include "base/resource_limits.h"
#include "engine/evaluate_int.h"
#include "engine/judge_host.h"
#include "sandbox/sandbox.h"

struct ee_judge_host {
	struct ee_sandbox *sb;
	struct ee_judges *owner;
	const struct ee_sandbox_ops *ops; /* the evaluation's, while taken */
	void *ctx;
	int ended;                  /* its process ended (on_done came) */
	double cpu_before;          /* what it reported for the earlier ones */
	struct ee_limits limits;    /* the first evaluation's, with its life's CPU */
	struct ee_judge_host *next; /* in owner->idle while parked */
};

/* Its life's CPU (RLIMIT_CPU's hard limit, resource_limits.h): what
 * judge.py's _JUDGE_REUSE_MAX evaluations each get at most, one
 * evaluation's soft limit (the run's timeout_s + 2 s) and the second it
 * rounds up. */
#define EE_JUDGE_LIFE_EVALUATIONS 200

static void unlink_idle(struct ee_judges *js, struct ee_judge_host *h)
{
	for (struct ee_judge_host **p = &js->idle; *p; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
	h->next = NULL;
}

static void destroy(struct ee_judge_host *h)
{
	h->owner->live--;
	ee_sandbox_free(h->sb);
	free(h);
}

static void on_result(void *ctx, struct ee_sandbox *sb, const char *p, size_t n)
{
	struct ee_judge_host *h = ctx;

	if (h->ops)
		h->ops->on_result(h->ctx, sb, p, n);
	else
		ee_sandbox_kill(sb); /* a parked judge has nothing to say */
}

static void on_done(void *ctx, struct ee_sandbox *sb)
{
	struct ee_judge_host *h = ctx;

	h->ended = 1;
	if (h->ops) {
		h->ops->on_done(h->ctx, sb); /* gives it back, which frees it */
		return;
	}
	unlink_idle(h->owner, h);
	destroy(h);
}

static const struct ee_sandbox_ops host_ops = { on_result, on_done };

static int send_job(struct ee_judge_host *h, const char *job, size_t len, struct ee_err *err)
{
	char head[24];
	int n = snprintf(head, sizeof(head), "%zu:", len);
	if (ee_sandbox_gate(h->sb, head, (size_t)n, 0) < 0 || ee_sandbox_gate(h->sb, job, len, 0) < 0 ||
	    ee_sandbox_gate(h->sb, ",", 1, 0) < 0)
		return ee_fail(err, EE_ERR_SANDBOX, "the long-lived judge's gate is closed");
	return 0;
}

int ee_judge_host_take(struct ee_judges *js, struct ee_loop *loop, const struct ee_sandbox_config *cfg,
                       const char *job, size_t job_len, const struct ee_sandbox_ops *ops, void *ctx,
                       struct ee_judge_host **ret, struct ee_err *err)
{
	struct ee_judge_host *h = js->idle;

	if (h) {
		js->idle = h->next;
		h->next = NULL;
		ee_sandbox_park(h->sb, 0);
		ee_sandbox_rearm(h->sb, ee_sandbox_first_clock_s(cfg) * 1e3);
	} else {
		char nonce[33], boot[128];
		ee_eval_random_hex(nonce);
		int n = snprintf(boot, sizeof(boot),
		                 "{\"v\":1,\"role\":\"judges\",\"nonce\":\"%s\",\"code\":\"\",\"tests\":[]}",
		                 nonce);
		struct ee_sandbox_config c = *cfg;
		c.job = boot;
		c.job_len = (size_t)n;
		h = calloc(1, sizeof(*h));
		if (!h)
			return ee_fail(err, EE_ERR_SANDBOX, "out of memory");
		h->limits = *cfg->limits;
		h->limits.cpu_life_s = ((unsigned)h->limits.timeout_s + 3) * EE_JUDGE_LIFE_EVALUATIONS;
		c.limits = &h->limits;
		h->owner = js;
		if (ee_sandbox_start(loop, &c, &host_ops, h, &h->sb, err) < 0) {
			free(h);
			return -1;
		}
		js->live++;
	}
	h->ops = ops;
	h->ctx = ctx;
	if (send_job(h, job, job_len, err) < 0) {
		/* Only a judge whose gate closed: it ends; the caller's ops
		 * are not told (it failed to take it). */
		h->ops = NULL;
		ee_sandbox_kill(h->sb);
		return -1;
	}
	*ret = h;
	return 0;
}

struct ee_sandbox *ee_judge_host_sandbox(const struct ee_judge_host *h)
{
	return h->sb;
}

double ee_judge_host_cpu_before(const struct ee_judge_host *h)
{
	return h->cpu_before;
}

void ee_judge_host_give_back(struct ee_judges *js, struct ee_judge_host *h, int reusable, double cpu_ms)
{
	h->ops = NULL;
	h->ctx = NULL;
	if (h->ended) {
		destroy(h);
		return;
	}
	if (!reusable) {
		ee_sandbox_kill(h->sb); /* freed at its end (on_done) */
		return;
	}
	h->cpu_before += cpu_ms;
	ee_sandbox_rearm(h->sb, 0);
	ee_sandbox_park(h->sb, 1);
	h->next = js->idle;
	js->idle = h;
}

void ee_judges_close(struct ee_judges *js, struct ee_loop *loop)
{
	struct ee_err err;

	for (struct ee_judge_host *h = js->idle; h; h = h->next) {
		ee_sandbox_park(h->sb, 0);
		ee_sandbox_kill(h->sb);
	}
	while (js->live > 0 && ee_loop_run_once(loop, &err) == 0)
		;
}
