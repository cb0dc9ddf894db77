/* session_int.h - what session.c and session_fork.c share: the session's
 * struct and the few steps one takes from the other. Not a public header:
 * everyone else goes through session.h. */
#ifndef EE_ENGINE_SESSION_INT_H
#define EE_ENGINE_SESSION_INT_H

#include <time.h>

#include "base/buf.h"
#include "base/resource_limits.h"
#include "engine/session.h"
#include "protocol/netstring.h"

struct ee_loop;
struct ee_loop_fd;
struct ee_sandbox;

#define SESSION_MAX_FRAME ((size_t)2 << 20)
/* The keeper's own stderr (a harness failure), kept for the end's why. */
#define SESSION_KEEP_OUTPUT 2048
/* A cell's clock, then this long for the keeper to end it and answer. */
#define SESSION_STOP_GRACE_S 8.0
/* Starting the interpreter and importing the preloads, before any clock. */
#define SESSION_START_ALLOWANCE_S 20.0

/* PH_FORKING: its fork's helper runs (session_fork.c); PH_HOLDER: it was
 * forked, its init stopped, its copies' pid namespaces nested in its: it
 * runs nothing and lives until its family's last copy ends. */
enum session_phase { PH_STARTING, PH_SETUP, PH_READY, PH_CELL, PH_FORKING, PH_HOLDER, PH_ENDED };

struct session_family;
struct fork_job;

struct ee_engine;

struct ee_session {
	struct ee_engine *eng;
	struct ee_loop *loop;
	struct ee_sandbox *sb;
	const struct ee_session_ops *ops;
	void *ctx;
	struct ee_ns_decoder ns;
	char nonce[33];
	unsigned long seq;
	enum session_phase phase;
	char *setup;
	struct ee_buf out, err; /* the running cell's */
	int timer_fd;
	struct ee_loop_fd *timer_watch;
	char stop_why[32]; /* "timeout" once the cell's clock ran out */
	long oom_before;
	/* The running cell's start, for a timeout's question: slow, or starved
	 * by the host (score.h)? Its clock, the cgroup's CPU then, and the
	 * boot tick from which a thread is the cell's (a fresh fork). */
	struct timespec cell_t0;
	long long cpu_before_usec;
	long long born_since;
	int starved;
	double starved_cpu_ms;
	unsigned cells;
	int ended_by_owner;
	char why[256];                  /* what ended it, first cause */
	struct ee_limits limits;        /* its own (timeout_s: the setup's clock): its copies' too */
	int is_copy;                    /* a copy's keeper is its pid 1 (copy.h) */
	struct session_family *family;  /* a copy: the family it holds a reference of */
	struct session_family *holding; /* a holder: the family it holds up */
	struct fork_job *forking;       /* PH_FORKING: its fork's helper, which outlives it if it ends */
	int end_after_fork;             /* ended by its owner while forking: ended when the fork is done */
};

/* session.c */
/* Ends it (kills its sandbox) with why, the first cause. */
void session_end_with(struct ee_session *s, const char *why);
/* A session whose sandbox is a copy of from's, still to be made: started
 * (config.copy), its keeper's hello awaited as a new session's. */
int session_new_copy(struct ee_session *from, const struct ee_session_ops *ops, void *ctx,
                     struct ee_session **ret, struct ee_err *err);

/* session_fork.c */
/* Its sandbox ended: the reference it held of its family is given back
 * (the last one ends the family's holder). */
void session_family_drop(struct ee_session *s);
/* It is freed while its fork's helper runs: the fork goes on without it. */
void session_fork_orphan(struct ee_session *s);

#endif
