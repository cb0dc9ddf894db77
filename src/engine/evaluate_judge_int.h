/* evaluate_judge_int.h - a candidate's pair under --judge separate, shared
 * by evaluate_judge.c (the pair's life: its two sandboxes, the relay, the
 * clocks, its end) and evaluate_judge_merge.c (the verdicts: the pair's
 * merged into the candidate's stream, a third run's with the judge's).
 * Internal to src/engine/; evaluate_int.h is what evaluate.c sees of it.
 */
#ifndef EE_ENGINE_EVALUATE_JUDGE_INT_H
#define EE_ENGINE_EVALUATE_JUDGE_INT_H

#include <stddef.h>

#include "base/err.h"
#include "engine/evaluate_int.h"
#include "input/task.h"
#include "protocol/relay.h"
#include "sandbox/sandbox.h"
#include "verdict/events.h"

struct judged {
	struct ee_eval *ev; /* its stream is the candidate's (role serve) */
	struct ee_stream judge;
	struct ee_relay relay;
	struct ee_sandbox *cand_sb, *judge_sb;
	int cand_done, judge_done; /* on_done came; the judge's: or its side is over (judge_over) */
	/* The judge: a long-lived one (judge_host.h; its sandbox is judge_sb),
	 * NULL once given back or when it is one of its own (judge_sb then
	 * owned). What its side came to, scalars only, in judge_out once over. */
	struct ee_judge_host *host;
	struct ee_sandbox_outcome judge_out;
	int judge_gate_closed; /* the candidate ended first: the judge reads EOF */
	int judge_reusable;    /* its done said reuse and its gate stayed open */
	double judge_taken_ms;
	/* Its hello for this evaluation came. The run's clock covers both
	 * sides, but not a judge's start (a new one: its worker's warm-up, a
	 * cold interpreter, gVisor's boot), which can take longer than the
	 * whole clock on a loaded host: until the hello the candidate's clock
	 * is held, and the judge's, which had EE_JUDGE_START_S more until
	 * then, is set to the run's. A judge that timed out before it is a
	 * sandbox error, not the candidate's verdict. */
	int judge_ready;
	int go_sent; /* {"go":true} went to the candidate: its code may run */
	/* The CPU both sides pin themselves to (ee_engine_pair_cpu), or -1;
	 * given back to eng at free_judged, which may come after ev's end. */
	int cpu;
	struct ee_engine *eng;
	int end_sent; /* {"end":true} went to the candidate */
	char *judge_job;
	size_t judge_job_len;
	/* The judge's task: the task's judge-kind tests only (shallow copies,
	 * borrowed from ev->task; never ee_task_free'd), each one's index in
	 * ev->task in task_index. */
	struct ee_task view;
	size_t *task_index;
	struct ee_err start_err; /* the judge's sandbox could not start */
	/* The candidate's stream of the pair, while the run that judges the
	 * public tests the judge ran ahead of goes on in ev->stream. */
	struct ee_stream cand_stream;
};

/* ---- evaluate_judge.c ----------------------------------------------------- */

/* Whether the judge judges t: test code (not io, call or a strict assert:
 * those stay the supervisor's). */
int ee_judge_kind(const struct ee_test *t);

/* s's violation is why, unless it has one already: both sides are killed. */
void ee_judge_violate(struct ee_stream *s, const char *why);

/* ---- evaluate_judge_merge.c ----------------------------------------------- */

/* The candidate's phases and the judge's tests, in the candidate's stream
 * (ev->stream); the others (io, call) did not run. out: the candidate's
 * outcome, the judge's clock and CPU added. */
void ee_judge_merge_pair(struct judged *j, struct ee_sandbox_outcome *out);

/* What only a third run judges: a test not the judge's (a mixed task). */
int ee_judge_needs_inline(const struct judged *j);

/* Both sides ran to their ends and the judge reported every test (a
 * hidden one may be skipped): its verdicts are whole. */
int ee_judge_finished_cleanly(const struct judged *j, const struct ee_sandbox_outcome *out);

/* The pair ended among the judge's hidden tests that ran ahead of public
 * ones it does not judge (a mixed task): a verdict only if those pass. */
int ee_judge_ran_ahead(const struct judged *j);

#endif
