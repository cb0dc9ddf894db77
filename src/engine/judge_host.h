/* judge_host.h - long-lived judges: a judge's sandbox that judges one
 * evaluation after another (--judge separate; evaluate_judge.c,
 * docs/protocol.md "The long-lived judge").
 *
 * The sandbox runs the harness with a job of role "judges"; each
 * evaluation's judge job goes to it on its gate fd (a netstring), and the
 * evaluation's events come back on its result channel, hello to done, as
 * from a judge of its own. Starting a judge costs what starting a
 * candidate costs (a fork, a sandbox, the pages the first run copies);
 * a judge kept from one evaluation to the next pays that once per slot.
 *
 * An evaluation takes a judge (ee_judge_host_take: an idle one, else a new
 * one), which from then on calls the evaluation's ops with its result
 * bytes and, should its process end, its end. It gives it back once its
 * judge side is over: parked for the next evaluation when the judge's
 * "done" said it can go on and nothing ended its channel, otherwise after
 * its process ended (ee_judge_host_give_back frees it then). A parked
 * judge is no job of the loop and its clock is stopped; one whose process
 * ends while parked is freed. The engine keeps the idle ones
 * (struct ee_judges) and, at its close, ends them.
 *
 * Native backend only (cold or warm); gVisor and Docker judges are started
 * per evaluation.
 */
#ifndef EE_ENGINE_JUDGE_HOST_H
#define EE_ENGINE_JUDGE_HOST_H

#include <stddef.h>

struct ee_err;
struct ee_loop;
struct ee_sandbox;
struct ee_sandbox_config;
struct ee_sandbox_ops;
struct ee_judge_host;

/* The engine's judges: the idle ones, and how many live. */
struct ee_judges {
	struct ee_judge_host *idle;
	unsigned live;
};

/* A judge for one evaluation, its job (role "judge") already on its way:
 * an idle one with its clock re-armed to cfg's first clock (as a new one
 * gets, ee_sandbox_first_clock_s), else one started with cfg (cfg->job is
 * replaced by the bootstrap job). ops get the judge's result bytes and its
 * end, with ctx, until given back. */
int ee_judge_host_take(struct ee_judges *js, struct ee_loop *loop, const struct ee_sandbox_config *cfg,
                       const char *job, size_t job_len, const struct ee_sandbox_ops *ops, void *ctx,
                       struct ee_judge_host **ret, struct ee_err *err);

struct ee_sandbox *ee_judge_host_sandbox(const struct ee_judge_host *h);

/* The CPU its process reported for the evaluations before this one: what
 * to take off its whole outcome when it ends in this one. */
double ee_judge_host_cpu_before(const struct ee_judge_host *h);

/* The evaluation is done with it. reusable: its done said reuse, its gate
 * stayed open, and cpu_ms is what it reported for this evaluation; it is
 * parked. Otherwise its process has ended (freed now) or is killed (freed
 * at its end). */
void ee_judge_host_give_back(struct ee_judges *js, struct ee_judge_host *h, int reusable, double cpu_ms);

/* Kills every idle judge and runs loop until each has ended. */
void ee_judges_close(struct ee_judges *js, struct ee_loop *loop);

#endif
