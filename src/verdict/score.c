/* score.c - deciding status, detail, score and reward (see score.h). */
#include "verdict/score.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

const char *ee_status_name(int status)
{
	static const char *const names[] = { "pass", "assertion_fail", "syntax_error", "timeout", "error" };
	return status >= 0 && status <= EE_ERROR ? names[status] : "error";
}

/* detail = prefix followed by arg (when non-NULL). */
static void set(struct ee_verdict *v, int status, const char *prefix, const char *arg)
{
	v->status = status;
	snprintf(v->detail, sizeof(v->detail), "%s%s", prefix, arg ? arg : "");
}

/* A stream that stopped before "done": what the kernel says ended it. */
static void incomplete(const struct ee_verdict_in *in, struct ee_verdict *v)
{
	if (in->have_status && WIFSIGNALED(in->status)) {
		int sig = WTERMSIG(in->status);
		if (sig == SIGXCPU)
			set(v, EE_ERROR, "cpu limit", NULL);
		else if (sig == SIGXFSZ)
			set(v, EE_ERROR, "file size limit", NULL);
		else if (sig == SIGSYS)
			set(v, EE_ERROR, "blocked syscall", NULL);
		else {
			char name[32];
			snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
			set(v, EE_ERROR, "killed by signal ", name);
		}
		return;
	}
	set(v, EE_ERROR, "premature exit", NULL);
}

static void from_tests(const struct ee_verdict_in *in, struct ee_verdict *v)
{
	const struct ee_test_outcome *first_fail = NULL, *first_timeout = NULL;

	if (in->n_tests == 0) {
		set(v, EE_ERROR, "no tests", NULL); /* nothing was checked: never a pass */
		return;
	}
	for (size_t i = 0; i < in->n_tests; i++) {
		const struct ee_test_outcome *t = &in->tests[i];
		if (t->exited) {
			set(v, EE_ERROR, "premature exit", NULL);
			return;
		}
		if (t->overflow) {
			set(v, EE_ERROR, "output overflow", NULL);
			return;
		}
		if (t->state != EE_T_PASS && t->denied) {
			set(v, EE_ERROR, "denied import: ", t->denied);
			return;
		}
		if (t->timed_out && !first_timeout)
			first_timeout = t;
		if (t->state == EE_T_FAIL && !first_fail)
			first_fail = t;
	}
	if (first_timeout) {
		char buf[96];
		if (first_timeout->slow && first_timeout->message) /* "slow: 41x the reference" */
			snprintf(buf, sizeof(buf), "%s", first_timeout->message);
		else
			snprintf(buf, sizeof(buf), "test %d timed out", first_timeout->index);
		set(v, EE_TIMEOUT, buf, NULL);
		return;
	}
	if (first_fail) {
		char buf[200];
		const char *msg = first_fail->message ? first_fail->message : "";
		/* The first line only: a detail is short; the test keeps the rest. */
		int line = (int)strcspn(msg, "\n");
		snprintf(buf, sizeof(buf), "test %d failed%s%.*s", first_fail->index, *msg ? ": " : "",
		         line < 160 ? line : 160, msg);
		set(v, EE_ASSERTION_FAIL, buf, NULL);
		return;
	}
	for (size_t i = 0; i < in->n_tests; i++)
		if (in->tests[i].state != EE_T_PASS) {
			/* skipped or never run, yet nothing failed: the stream ended early */
			set(v, EE_ERROR, "premature exit", NULL);
			return;
		}
	set(v, EE_PASS, "", NULL);
}

static int all_passed(const struct ee_verdict_in *in)
{
	for (size_t i = 0; i < in->n_tests; i++)
		if (in->tests[i].state != EE_T_PASS)
			return 0;
	return in->n_tests > 0;
}

/* A timeout not of the candidate's making: a thread of it was runnable
 * but waited for a CPU for more than half of its wall time, and the whole
 * sandbox ran for less than half of it, less than half a core over its
 * clock (neighbours or a busy host took the rest; with -j at most the cores
 * and equal shares a sandbox gets a whole CPU). A quarter let an honest
 * program that needs 60 % of its clock on a CPU time out unflagged on a
 * host that gave it 40 %. A sleeper or a deadlock waits on no run queue (what it waited
 * at start-up under load is far less); a candidate's own threads competing
 * for its one-CPU quota run a whole CPU's worth. A trainer can mask it. */
#define STARVED_WAIT_FRACTION 0.5
#define STARVED_CPU_FRACTION  0.5

int ee_verdict_starved(double wall_ms, double cpu_ms, double runq_wait_ms)
{
	return wall_ms > 0 && cpu_ms >= 0 && runq_wait_ms > STARVED_WAIT_FRACTION * wall_ms &&
	       cpu_ms < STARVED_CPU_FRACTION * wall_ms;
}

static int starved(const struct ee_verdict_in *in)
{
	return ee_verdict_starved(in->wall_ms, in->cpu_ms, in->runq_wait_ms);
}

/* What cut the run short, first match wins: the supervisor's clock (a
 * starved run's timeout says so), its output cap, the kernel's OOM killer
 * (or a MemoryError) unless everything passed anyway. */
enum cut { CUT_NONE, CUT_STARVED, CUT_TIMEOUT, CUT_OUTPUT_OVERFLOW, CUT_MEMORY };

static enum cut cut_short(const struct ee_verdict_in *in)
{
	int complete = in->done && !in->protocol_error;

	if (in->timed_out)
		return starved(in) ? CUT_STARVED : CUT_TIMEOUT;
	if (in->output_overflow)
		return CUT_OUTPUT_OVERFLOW;
	if (in->oom_killed && !(complete && all_passed(in)))
		return CUT_MEMORY;
	return CUT_NONE;
}

static void decide_status(const struct ee_verdict_in *in, struct ee_verdict *v)
{
	enum cut cut = cut_short(in);

	if (cut == CUT_STARVED) {
		v->status = EE_TIMEOUT;
		snprintf(v->detail, sizeof(v->detail), "timeout (starved: %.0f ms of CPU)", in->cpu_ms);
	} else if (cut == CUT_TIMEOUT)
		set(v, EE_TIMEOUT, "timeout", NULL);
	else if (cut == CUT_OUTPUT_OVERFLOW)
		set(v, EE_ERROR, "output overflow", NULL);
	else if (cut == CUT_MEMORY)
		set(v, EE_ERROR, "memory limit", NULL);
	else if (in->protocol_error)
		set(v, EE_ERROR, "protocol violation: ", in->protocol_error);
	else if (in->syntax_error)
		set(v, EE_SYNTAX_ERROR, "syntax error: ", in->syntax_error);
	else if (in->scan_block)
		set(v, EE_ERROR, "blocked by scan: ", in->scan_block);
	else if (in->import_failed && in->import_denied)
		set(v, EE_ERROR, "denied import: ", in->import_denied);
	else if (in->import_failed && in->import_exit)
		set(v, EE_ERROR, "premature exit", NULL);
	else if (in->import_failed && in->import_setup)
		set(v, EE_ERROR, "setup failed: ", in->import_message);
	else if (in->import_failed)
		set(v, EE_SYNTAX_ERROR, "import error: ", in->import_message);
	else if (!in->done)
		incomplete(in, v);
	else
		from_tests(in, v);
	/* A refused fork explains whatever followed (an exception at import, a
	 * failed test, a premature exit) better than its symptom; a timeout
	 * keeps its own stable detail. */
	if (in->pids_limit_hit && v->status != EE_PASS && v->status != EE_TIMEOUT && !in->output_overflow &&
	    !in->oom_killed && !in->protocol_error)
		set(v, EE_ERROR, "process limit", NULL);
}

void ee_verdict_decide(const struct ee_verdict_in *in, struct ee_verdict *v)
{
	double got = 0, all = 0;

	memset(v, 0, sizeof(*v));
	decide_status(in, v);
	for (size_t i = 0; i < in->n_tests; i++) {
		all += in->tests[i].weight;
		if (in->tests[i].state == EE_T_PASS) {
			got += in->tests[i].weight;
			v->passed++;
		}
	}
	v->total = (unsigned)in->n_tests;
	v->score = all > 0 ? got / all : 0.0;
	if (in->timed_out) /* a test's own timeout leaves the others judged */
		v->score = 0.0;
	if (v->score > 1.0)
		v->score = 1.0;
	v->reward = v->status == EE_PASS ? 1 : -1;
}
