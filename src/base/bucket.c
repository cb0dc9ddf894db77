/* bucket.c - a token bucket (see bucket.h). */
#include "base/bucket.h"

void ee_bucket_init(struct ee_bucket *b, double per_s, double burst, double quantum, double now_ms)
{
	b->per_ms = per_s / 1e3;
	b->burst = burst < 1 ? 1 : burst;
	b->quantum = quantum < 1 ? 1 : quantum > b->burst ? b->burst : quantum;
	b->tokens = b->burst;
	b->last_ms = now_ms;
}

double ee_bucket_take(struct ee_bucket *b, double now_ms)
{
	/* A clock that went back refills nothing, and the next refill counts
	 * from the latest time seen, not from the earlier one. */
	if (now_ms > b->last_ms) {
		b->tokens += (now_ms - b->last_ms) * b->per_ms;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_ms = now_ms;
	}
	if (b->tokens >= 1) {
		b->tokens -= 1;
		return 0;
	}
	double wait = (b->quantum - b->tokens) / b->per_ms;
	return wait > 0 ? wait : 1e-3;
}
