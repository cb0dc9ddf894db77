/* server_int.h - the server's state, shared by its modules. Not a public
 * header: everyone else goes through server.h.
 *
 *   server.c   routing (which endpoint, which method, what next) and the
 *              server's life: the daemon, signals, the drain
 *   body.c     reading a POST's body: charges, the per-address share, pace
 *   submit.c   from a complete body to records: parse, admit, submit, keep
 *   answer.c   every answer queued: JSON, errors, refusals, /healthz,
 *              /metrics, a batch's streamed records
 *
 * All of it runs on the loop's one thread.
 */
#ifndef EE_SERVE_SERVER_INT_H
#define EE_SERVE_SERVER_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <time.h>

#include "base/buf.h"
#include "serve/budget.h"
#include "serve/request.h"
#include "serve/server.h"
#include "serve/stats.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))

/* A client's deadline (docs/api.md): seconds from its request's arrival
 * within which it wants the answer of /v1/run, /v1/batch or /get_reward.
 * A candidate starts only by that deadline less its clock and the margin
 * (a sandbox's start and the answer's way back), as /run_code's do. */
#define DEADLINE_HEADER   "Execeval-Deadline"
#define DEADLINE_MAX_S    3600.0
#define DEADLINE_MARGIN_S 1.0

struct ee_server {
	struct ee_loop *loop;
	struct ee_engine *eng; /* its breaker and violation counters (engine.h) */
	const struct ee_eval_options *o;
	const struct ee_server_config *cfg;
	struct MHD_Daemon *daemon;
	struct ee_loop_fd *watch;
	struct ee_dispatch *dispatch;
	struct ee_refcache *refcache;       /* generated tests' reference results (refcache.h) */
	struct ee_run_code *run_code;       /* POST /run_code's own queue (run_code.h) */
	struct ee_sessions *sessions;       /* /v1/sessions (sessions.h) */
	struct ee_run_jupyter *run_jupyter; /* POST /run_jupyter, on sessions (run_jupyter.h) */
	struct ee_heal *heal;               /* a sick server's own probe (heal.h) */
	struct conn *awaiting;              /* requests with a deadline whose tasks' reference
	                                     * runs are not done (submit.c) */
	struct ee_serve_stats stats;
	struct ee_budget budget; /* bytes held for every client (budget.h) */
	unsigned suspended;      /* connections waiting for records */
	unsigned answering;      /* responses queued and not yet completed */
	double eval_s_avg;       /* moving average of an evaluation's seconds */
	int draining;            /* a signal asked to stop */
	int forced;              /* signal number of a forced stop */
	struct timespec deadline;
};

/* One request, from its headers to its completion (MHD's con_cls). */
struct conn {
	struct ee_server *srv;
	struct MHD_Connection *mc;
	int endpoint;
	struct timespec arrived;
	struct ee_buf body;
	size_t received;               /* body bytes arrived, kept or not */
	struct ee_budget_share *share; /* its address's (POSTs) */
	size_t charged;                /* body, then parsed request: budget and share */
	size_t reserved;               /* records, reserved then held: budget only */
	int answered;                  /* a response was queued */
	int suspended;
	int submitting;     /* inside the submit loop: callbacks may come */
	int interrupted;    /* an evaluation ended without a verdict */
	int overflow;       /* a record outgrew the budget: the answer is a 503 */
	unsigned refused;   /* 413 or 429 decided mid-body, answered at its end */
	int refused_reason; /* 429: which cap (enum ee_budget_result) */
	size_t discarded;   /* body bytes dropped since */
	struct ee_request req;
	int records;  /* /get_reward: the answer carries the records too */
	char **texts; /* each run's record as JSON text (/v1/run: the answer), filled by the callbacks */
	size_t *lens;
	unsigned run_code; /* /v1/run: 200, or 500 when its sandbox could not be set up */
	struct slot *slots;
	size_t pending;          /* evaluations not back yet */
	double deadline_s;       /* DEADLINE_HEADER's seconds, 0 when absent */
	size_t expired;          /* candidates that could not start before it (dispatch.h) */
	int resumed;             /* its records' wait is over: MHD_resume_connection was called */
	double latest;           /* the latest its candidates may start (INFINITY: no deadline) */
	int gave_up;             /* its deadline passed before its reference runs were done */
	struct conn *await_next; /* in srv->awaiting while listed */
	int listed;
	int orphaned; /* MHD completed the request first: free when pending is 0 */

	struct ee_run_code_call *call; /* /run_code: its call, until answered */
	int call_ready;
	char sess_path[80];                 /* /v1/sessions: what follows it in the URL */
	struct ee_sessions_wait *sess_wait; /* its create or exec, until answered */
	int sess_ready;                     /* its answer is there (a /run_jupyter run's too) */
	struct ee_run_jupyter_run *jupyter; /* /run_jupyter: its run, until answered */

	/* Generated tests (submit.c, refcache.h): one group per task with a
	 * reference; its runs wait in held dispatcher places for its results. */
	struct group *groups;
	size_t n_groups;
	size_t held;         /* places reserved (dispatch.h), not yet submitted into */
	char ref_error[256]; /* a task's error: the answer is a 422 naming ref_field */
	char ref_field[128];
	size_t ref_error_run; /* the run of the task at fault (the first wins) */
};

/* The runs of one task with a reference, its generated tests made once. */
struct group {
	struct conn *c;
	struct ee_task *owner; /* the task struct that owns the tests (the others copy its pointers) */
	size_t first;          /* its first run: the reference runs with its task's limits */
	int state;             /* enum group_state (submit.c) */
	char why[256];         /* a sandbox's failure: its runs' records say it */
};

struct slot {
	struct conn *c;
	size_t index;
};

struct header {
	const char *name, *value;
};

static inline double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline double ts_s(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

/* ---- answer.c: each queues the answer (text and r taken) or returns MHD_NO */

enum MHD_Result answer(struct conn *c, unsigned code, char *text, size_t len, const char *type,
                       const struct header *extra);
enum MHD_Result answer_json(struct conn *c, unsigned code, json_t *v, const struct header *extra);
enum MHD_Result answer_error(struct conn *c, unsigned code, const char *msg, const char *field,
                             const struct header *extra);
/* An error answer counted as a rejection (reason: enum ee_reject), with
 * Retry-After on 429 and 503 and WWW-Authenticate on 401. */
enum MHD_Result refuse(struct conn *c, unsigned code, int reason, const char *msg, const char *field);
/* 429 for a budget's refusal (over: enum ee_budget_result). */
enum MHD_Result refuse_budget(struct conn *c, int over);
enum MHD_Result answer_health(struct conn *c);
enum MHD_Result answer_metrics(struct conn *c);
/* The records are all back: the request's answer. */
enum MHD_Result answer_records(struct conn *c);

/* ---- body.c --------------------------------------------------------------- */

/* Sets the connection's timeout to when its body would fall under the
 * minimum rate. */
void pace(struct conn *c);
/* Joins the client address's share of the budget: -1 out of memory. */
int join_share(struct conn *c);
/* n more bytes of the body: kept, or refused (answered at the body's end). */
enum MHD_Result on_upload(struct conn *c, const char *data, size_t n);

/* ---- submit.c ------------------------------------------------------------- */

/* The body is in: parses it and submits its runs, or refuses it. */
enum MHD_Result on_body_complete(struct conn *c);
/* Requests whose deadline passed while their tasks' reference runs went
 * on: answered now (504, or /get_reward's infrastructure errors). */
void expire_awaiting(struct ee_server *srv);
/* Milliseconds to the next such deadline, -1 for none. */
long awaiting_next_ms(const struct ee_server *srv);
/* Takes c off srv->awaiting (if it is there). */
void unawait(struct conn *c);
/* /run_code's answer, once its call is done (submit.c). */
enum MHD_Result run_code_answer(struct conn *c);

/* ---- server.c ------------------------------------------------------------- */

/* Frees c and gives back all it holds (MHD is done with it, nothing pending). */
void free_conn(struct conn *c);

#endif
