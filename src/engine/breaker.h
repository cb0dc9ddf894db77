/* breaker.h - the circuit breaker: stop evaluating when candidates attack.
 *
 * `--breaker "RATE over N"`: the breaker trips when more than RATE x N of
 * the last N candidates (a sliding window of their records) made an
 * escape-class attempt (verdict/violations.h: network, ptrace, mount,
 * namespaces, privilege changes, kernel attack surface). RATE is a
 * fraction (0.05) or a percentage (5%); 0 trips on the first attempt.
 * Before N candidates were seen, the count is still compared with RATE x N,
 * so a few early attacks trip it only when they alone exceed the bound.
 *
 * A tripped breaker stays tripped until ee_breaker_reset (eval: a new run
 * with --resume; serve: POST /v1/admin/resume). No allocation after parse.
 */
#ifndef EE_BREAKER_H
#define EE_BREAKER_H

#include <jansson.h>

struct ee_err;

#define EE_BREAKER_MAX_N 100000

/* What --breaker asked for; n == 0: off. */
struct ee_breaker_spec {
	double rate;
	unsigned n;
};

struct ee_breaker {
	struct ee_breaker_spec spec;
	unsigned char *window; /* n entries: 1 when that candidate attacked */
	unsigned pos, seen, hits;
	int tripped;
	char why[256]; /* when tripped */
};

/* Parses "RATE over N" (also "RATE/N"); NULL or "off": off. */
int ee_breaker_parse(const char *text, struct ee_breaker_spec *ret, struct ee_err *err);

/* 0, or -1 out of memory. An off spec makes a breaker that never trips. */
int ee_breaker_init(struct ee_breaker *b, const struct ee_breaker_spec *spec, struct ee_err *err);
void ee_breaker_free(struct ee_breaker *b);

/* Counts one candidate's record (NULL: none, not counted): 1 when this one
 * tripped the breaker, else 0. */
int ee_breaker_feed(struct ee_breaker *b, const json_t *record);
void ee_breaker_reset(struct ee_breaker *b);

#endif
