/* session.h - a live interpreter in a sandbox of its own, kept from one
 * cell to the next (an agent's code interpreter; job role "session",
 * harness session.py, docs/protocol.md "Sessions").
 *
 * A session is one sandbox started as a candidate's (namespaces, seccomp,
 * its own cgroup and uid, a private /tmp, no network) whose harness keeps
 * an interpreter and runs each cell in a fork of it: a cell that answers
 * (a value or an exception) becomes the session's state; one that does not
 * (the cell's clock, the output cap, the memory limit, a crash) is ended
 * and the session is as it was before it (rolled back). The supervisor
 * keeps every clock: a cell's own (a stop on the gate, then the
 * sandbox's clock as the backstop), the idle timeout and the TTL are the
 * owner's (serve/sessions.c).
 *
 * Lifecycle: ee_session_start; the first answer (ops->on_answer) is the
 * setup's (an empty setup answers at once once the interpreter is up);
 * then ee_session_exec for one cell at a time, each answered once;
 * ee_session_end at any time kills it; ops->on_end comes exactly once,
 * when its sandbox is gone (then ee_session_free, from on_end or later).
 * A cell running when the session ends gets no answer: on_end says why.
 *
 * Ownership: the session owns its sandbox, its timer and the answers'
 * buffers; an answer handed to on_answer is the callee's. The config is
 * borrowed for ee_session_start only. Errors: ee_err (EE_ERR_SANDBOX: the
 * sandbox could not be made; EE_ERR_USAGE: a cell out of turn).
 */
#ifndef EE_ENGINE_SESSION_H
#define EE_ENGINE_SESSION_H

#include <jansson.h>
#include <stddef.h>

#include "base/resource_limits.h"

struct ee_engine;
struct ee_err;
struct ee_session;

struct ee_session_config {
	struct ee_limits limits; /* memory, procs, tmp, output_cap (a cell's); timeout_s: the setup's clock */
	const char *setup;       /* run first as a cell; NULL or "" for none */
	const json_t *files;     /* {relative path: base64} written into /tmp first; NULL for none */
	const char *const *preload; /* modules imported before the first cell */
	size_t n_preload;
	int deny_imports; /* the default deny list, as candidates have it */
	double life_s;    /* the longest the session may live (its CPU's hard limit) */
};

struct ee_session_ops {
	/* One cell's answer: {status, detail, result, error, stdout, stderr,
	 * duration_ms, cpu_ms, rolled_back, tmp_restored, files}. */
	void (*on_answer)(void *ctx, struct ee_session *s, json_t *answer);
	/* The session is gone; why is "" when ee_session_end ended it. */
	void (*on_end)(void *ctx, struct ee_session *s, const char *why);
};

int ee_session_start(struct ee_engine *eng, const struct ee_session_config *cfg,
                     const struct ee_session_ops *ops, void *ctx, struct ee_session **ret,
                     struct ee_err *err);

struct ee_cell {
	const char *code;
	const char *stdin_text; /* NULL: none */
	double timeout_s;       /* the cell's wall clock */
	const json_t *fetch;    /* [relative path]: files read back after it; NULL for none */
};

/* Runs one cell: EE_ERR_USAGE when one runs already or the session is
 * not ready (setup running, ended). */
int ee_session_exec(struct ee_session *s, const struct ee_cell *cell, struct ee_err *err);

int ee_session_busy(const struct ee_session *s);
unsigned ee_session_cells(const struct ee_session *s);
/* The cgroup's counters now (-1 fields where unknown). */
void ee_session_usage(const struct ee_session *s, long *peak_kb, double *cpu_ms);

/* ---- forking (session_fork.c; docs/sandbox.md "Forking a session") ----
 *
 * Copies s into n new sessions (1 <= n <= EE_SESSION_FORK_MAX), each with
 * s's interpreter state and a copy of its /tmp, each as isolated from the
 * others as two sessions are; the first is meant to go on as s (the
 * caller moves s's identity onto it). s must be ready (no cell). Returns
 * at once; on_forked(fork_ctx, NULL) comes when the copies are made (each
 * then answers its first answer, the setup's, through ops with ctxs[i],
 * as a new session), or on_forked(fork_ctx, err) when they are not
 * (EE_ERR_USAGE: refused, err says why; s goes on, unless it ended, which
 * its own on_end says). From a made fork on, s is the engine's (its
 * family's holder): the caller forgets it, and gets no on_end for it.
 * A copy made before a failure (here or later) ends through ops->on_end
 * as a session that could not start; copies[i] is NULL for one not made. */
#define EE_SESSION_FORK_MAX 101
int ee_session_fork(struct ee_session *s, unsigned n, const struct ee_session_ops *ops, void *const *ctxs,
                    void (*on_forked)(void *ctx, const struct ee_err *err), void *fork_ctx,
                    struct ee_session **copies, struct ee_err *err);
/* Forked sessions still holding up their copies, in this process (each
 * ends after its last copy, on the loop). */
unsigned ee_session_holders(void);
/* Its callbacks' ctx from now on (a copy that takes its parent's place). */
void ee_session_set_ctx(struct ee_session *s, void *ctx);

void ee_session_end(struct ee_session *s);
void ee_session_free(struct ee_session *s);

#endif
