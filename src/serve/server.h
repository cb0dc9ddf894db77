/* server.h - `execeval serve`: the evaluator behind an HTTP API (docs/api.md).
 *
 * Theory of operation: one thread, one event loop. libmicrohttpd runs in
 * its external-epoll mode; its epoll fd is one more fd on the sandboxes' loop
 * (sandbox.h), so HTTP and sandboxes are driven by the same epoll_wait and
 * nothing is shared between threads. A request is read whole (bounded by
 * max_body), parsed (request.h), admitted only if all its evaluations fit
 * in the bounded queue (dispatch.h; else 429 with Retry-After), and its
 * connection is suspended until the last of its records is back, then
 * answered. Every accepted request gets its records; nothing is answered
 * twice.
 *
 * Memory (budget.h): what a request holds is charged to max_buffered as it
 * comes to be held: body bytes as they arrive (never a declared length),
 * then its parsed tasks (request.h's cost), then its records, each kept as
 * its JSON text (a fraction of a jansson tree) and reserved at admission
 * at a lower bound of its size, so a batch whose answer cannot fit is
 * refused before it runs. Bodies and parsed requests of one client address
 * are bounded by max_buffered_per_ip too. A body must keep arriving at
 * body_min_rate after body_grace_s, else its connection is closed: a
 * trickle cannot hold a connection and its bytes for the idle timeout
 * after every byte.
 *
 * Shutdown: the first SIGTERM/SIGINT closes the listening socket, answers new
 * requests on open connections with 503, and lets accepted work finish; after
 * grace seconds, or on a second signal, running sandboxes are killed and their
 * requests answered 503. ee_server_run returns once every answer is sent.
 *
 * Ownership: the server borrows eng, o and cfg (and cfg's strings) for its
 * lifetime; it owns the daemon, its connections and their requests.
 */
#ifndef EE_SERVE_SERVER_H
#define EE_SERVE_SERVER_H

#include <stddef.h>

#include "input/extract.h"
#include "serve/listen.h"

struct ee_engine;
struct ee_err;
struct ee_eval_options;
struct ee_server;

struct ee_server_config {
	struct ee_listen_addr addr;
	const char *token;          /* bearer token, or NULL: no authentication */
	size_t max_body;            /* bytes of one request body */
	size_t max_buffered;        /* bytes held at once, all requests (budget.h) */
	size_t max_buffered_per_ip; /* of which bodies and parsed requests of one address */
	size_t max_tests_per_task;  /* tests in one task (413 above) */
	size_t max_request_tests;   /* tests over all runs of one request (413 above) */
	size_t max_body_values;     /* JSON values in one body (413 above) */
	double body_min_rate;       /* bytes/s a body must keep up after body_grace_s */
	double body_grace_s;
	unsigned max_connections;        /* open at once */
	unsigned max_connections_per_ip; /* from one address; 0: no limit */
	unsigned idle_timeout_s;         /* an idle connection is closed after this */
	double grace_s;                  /* after SIGTERM, time to finish accepted work */
	unsigned jobs;                   /* sandboxes at once */
	size_t queue;                    /* evaluations that may wait */
	double run_code_deadline_s;      /* /run_code: 0, compile + run timeout + 10 s (run_code.h) */
	size_t run_code_queue;           /* /run_code requests that may wait; 0: sized by memory */
	unsigned run_code_coalesce;      /* /run_code requests of one program per sandbox (run_code.h) */
	size_t reference_cache;          /* bytes of generated tests' reference results kept (refcache.h) */
	unsigned max_sessions;           /* /v1/sessions live at once (sessions.h) */
	const char *const *session_preload; /* modules every session imports first */
	size_t n_session_preload;
	enum ee_extract_mode extract;
	const char *isolation;             /* "warm" or "cold", for /healthz */
	void (*log)(const char *fmt, ...); /* one line about the server's life, or NULL */
};

/* Binds and listens; serves on eng's loop and runs candidates on eng.
 * Errors: EE_ERR_SANDBOX when the address cannot be bound. */
int ee_server_new(struct ee_engine *eng, const struct ee_eval_options *o, const struct ee_server_config *cfg,
                  struct ee_server **ret, struct ee_err *err);

/* The bound address ("127.0.0.1:41234"). */
void ee_server_address(const struct ee_server *s, char *buf, size_t size);

/* Serves until a signal stops it. Returns 0 after a graceful drain (also
 * when grace ran out), the signal number when a second signal forced the
 * stop, or -1 on an internal failure. */
int ee_server_run(struct ee_server *s, struct ee_err *err);

void ee_server_free(struct ee_server *s);

#endif
