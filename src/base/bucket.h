/* bucket.h - a token bucket: how often something may happen.
 *
 * Up to burst events at once, then rate a second on average. The sandbox's
 * supervisor paces each sandbox's seccomp notifications with one
 * (sandbox/notify.h), so that what a candidate makes it do per second has
 * a bound. An empty bucket says how long until quantum tokens are back:
 * a waiter wakes once per batch, not once per event (a wake-up costs the
 * supervisor what an event does).
 *
 * Time is the caller's (milliseconds of CLOCK_MONOTONIC): no system call,
 * and tests choose it. Lifecycle: ee_bucket_init, then ee_bucket_take per
 * event. No allocation; the caller owns the struct.
 */
#ifndef EE_BASE_BUCKET_H
#define EE_BASE_BUCKET_H

struct ee_bucket {
	double per_ms;  /* tokens back a millisecond */
	double burst;   /* most held: full at init */
	double quantum; /* an empty bucket's wait is until this many are back */
	double tokens;
	double last_ms; /* time of the last refill */
};

/* A full bucket at now_ms: per_s > 0 tokens a second, 1 <= quantum <= burst
 * (clamped into that range). */
void ee_bucket_init(struct ee_bucket *b, double per_s, double burst, double quantum, double now_ms);

/* Takes one token at now_ms: 0. When none is left, takes nothing and
 * returns the milliseconds until quantum tokens are back (> 0). A clock
 * that went back counts as no time passed. */
double ee_bucket_take(struct ee_bucket *b, double now_ms);

#endif
