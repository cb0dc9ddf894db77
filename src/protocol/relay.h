/* relay.h - the separate judge's relay rules (issue 17; --judge split,
 * the default of run, eval and serve; the engine's user is evaluate_judge.c).
 *
 * Under the separate judge two sandboxes run per candidate: the candidate's
 * (job role "serve": its program, then a call server) and the judge's (role
 * "judge": the test code, the candidate's names bound to stubs). Neither
 * talks to the other; the supervisor moves three kinds of message, each
 * checked here before it is forwarded as a netstring on the receiver's
 * gate fd (docs/protocol.md, "Separate judge"):
 *
 *   candidate {"ev":"serving","names":[S...]}  -> judge     {"names":[...]}
 *   judge     {"ev":"call","call":N,"fn":S | "handle":H,"args":[V...],
 *              "kwargs":[[S,V]...]}            -> candidate {"call":N,...}
 *   candidate {"ev":"reply","call":N,"status":...}  -> judge {"call":N,...}
 *
 * V is a canonical value (docs/protocol.md; a complex, its two float texts,
 * counts as one node, as the harness counts it) checked for its shape, its
 * nesting depth and its number of nodes, so that the judge's decoder never
 * sees what it would have to refuse; or {"stream":true}, the next of the
 * values streamed before the message in "part" events (flat.h), each
 * checked as it comes and forwarded at once as {"part": text}: a message
 * names exactly the values streamed before it, whole. Calls alternate with replies: call N
 * is numbered 0, 1, 2, ... and its reply must carry N before the next call
 * is accepted. The relay decides nothing about verdicts.
 *
 * Ownership: struct ee_relay is a caller-owned value, no heap inside; the
 * frames returned are malloc'd and the caller's. Errors: -1 with err set
 * (EE_ERR_USAGE: the message broke a rule, the sender's stream is a
 * protocol violation; EE_ERR_SANDBOX: out of memory).
 */
#ifndef EE_RELAY_H
#define EE_RELAY_H

#include <jansson.h>
#include <stddef.h>

#include "protocol/flat.h"

struct ee_err;

#define EE_RELAY_MAX_DEPTH 100    /* as the harness's canonical form */
#define EE_RELAY_MAX_NODES 100000 /* values in one message */
#define EE_RELAY_MAX_FRAME (1 << 20)
#define EE_RELAY_MAX_NAMES 10000

struct ee_relay {
	long next_call;      /* the number the judge's next call must carry */
	int awaiting;        /* a call was forwarded, its reply not yet */
	int attr_read;       /* that call reads an attribute: its reply may say "method" */
	int names_sent;      /* the serving event was forwarded (once) */
	struct ee_flat flat; /* the values streamed since the last call or reply */
};

void ee_relay_init(struct ee_relay *r);

/* The candidate's serving event -> the judge's first frame. */
int ee_relay_names(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len,
                   struct ee_err *err);

/* The judge's call event -> the candidate's frame. */
int ee_relay_call(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len,
                  struct ee_err *err);

/* A part of a streamed value -> the receiver's frame {"part": text}: the
 * judge's before its call (from_judge), the candidate's before its reply. */
int ee_relay_part(struct ee_relay *r, int from_judge, const json_t *ev, char **ret_frame, size_t *ret_len,
                  struct ee_err *err);

/* The candidate's reply event -> the judge's frame. */
int ee_relay_reply(struct ee_relay *r, const json_t *ev, char **ret_frame, size_t *ret_len,
                   struct ee_err *err);

/* 0 when v is a canonical value within the bounds (handles: {"handle": H},
 * H >= 0, allowed only when handles is set); -1 with err set otherwise. */
int ee_relay_check_value(const json_t *v, int handles, struct ee_err *err);

#endif
