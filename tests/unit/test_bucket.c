/* test_bucket.c - the token bucket (bucket.h): the burst, the rate after
 * it, the batched wait of an empty bucket, and odd clocks. */
#include <criterion/criterion.h>

#include "base/bucket.h"

/* Takes every token available at now_ms: how many. */
static int drain(struct ee_bucket *b, double now_ms)
{
	int n = 0;
	while (ee_bucket_take(b, now_ms) == 0 && n < 1000000)
		n++;
	return n;
}

Test(bucket, a_full_bucket_gives_its_burst_then_says_wait)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 1000, 50, 10, 100.0);
	cr_expect_eq(drain(&b, 100.0), 50);
	/* 10 tokens at 1 a millisecond: 10 ms. */
	double wait = ee_bucket_take(&b, 100.0);
	cr_expect(wait > 9.999 && wait < 10.001, "wait %f", wait);
}

Test(bucket, after_the_wait_a_quantum_is_back)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 1000, 50, 10, 0.0);
	drain(&b, 0.0);
	double wait = ee_bucket_take(&b, 0.0);
	cr_expect_eq(drain(&b, wait), 10);
	/* Half a token back: the wait is for the rest of a quantum. */
	double now = wait + 0.5;
	wait = ee_bucket_take(&b, now);
	cr_expect(wait > 9.499 && wait < 9.501, "wait %f", wait);
}

Test(bucket, the_rate_holds_over_a_long_run)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 2000, 100, 20, 0.0);
	/* A caller that takes whenever it may, for 10 s: burst + rate x 10 s. */
	double now = 0.0;
	long taken = 0;
	while (now <= 10000.0) {
		double wait = ee_bucket_take(&b, now);
		if (wait == 0)
			taken++;
		else
			now += wait;
	}
	cr_expect(taken >= 100 + 20000 - 20 && taken <= 100 + 20000 + 20, "taken %ld", taken);
}

Test(bucket, refills_no_further_than_the_burst)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 1000, 30, 5, 0.0);
	drain(&b, 0.0);
	/* An hour idle: 30 again, not 3.6 million. */
	cr_expect_eq(drain(&b, 3600e3), 30);
}

Test(bucket, a_clock_that_goes_back_adds_nothing)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 1000, 10, 5, 1000.0);
	drain(&b, 1000.0);
	cr_expect_gt(ee_bucket_take(&b, 0.0), 0);
	/* Nor does it make the later refill larger than the time that passed
	 * since the last take. */
	cr_expect_eq(drain(&b, 1002.0), 2);
}

Test(bucket, quantum_is_clamped_to_one_and_the_burst)
{
	struct ee_bucket b;
	ee_bucket_init(&b, 1000, 8, 0, 0.0);
	drain(&b, 0.0);
	double wait = ee_bucket_take(&b, 0.0);
	cr_expect(wait > 0.999 && wait < 1.001, "quantum 0 waits for one token: %f", wait);
	ee_bucket_init(&b, 1000, 8, 100, 0.0);
	drain(&b, 0.0);
	wait = ee_bucket_take(&b, 0.0);
	cr_expect(wait > 7.999 && wait < 8.001, "quantum past the burst waits for a burst: %f", wait);
}
