/* bootstrap.h - percentile bootstrap intervals of means, and the small
 * seeded generator they draw from.
 *
 * The summary's metrics (pass@k, mean score) are means over tasks of a
 * per-task value. ee_bootstrap_means resamples the items (tasks) with
 * replacement `resamples` times, takes the mean of every metric over each
 * resample, and reports the (1 - level)/2 and (1 + level)/2 quantiles of
 * those means (ee_quantile: linear interpolation, numpy's default) as the
 * interval: the percentile bootstrap. Every metric uses the same draws, so
 * one resample is one imagined data set.
 *
 * The generator is xoshiro256** (Blackman and Vigna, 2018) with its state
 * filled from the 64-bit seed by splitmix64, as its authors recommend. An
 * index below n is drawn by rejection, without modulo bias: r = next()
 * until r >= 2^64 mod n, then r mod n. The draw order is fixed (resample
 * 0..R-1, within it position 0..n-1, one index each), so a seed gives the
 * same interval on every machine and in an independent reimplementation
 * (tests/unit/test_bootstrap.c has one).
 *
 * Memory: the caller's values and R x m doubles during the call; nothing is
 * kept. Errors: EE_ERR_USAGE for impossible arguments and out of memory.
 */
#ifndef EE_BOOTSTRAP_H
#define EE_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

struct ee_err;

#define EE_BOOTSTRAP_RESAMPLES     1000
#define EE_BOOTSTRAP_SEED          20240229u
#define EE_BOOTSTRAP_LEVEL         0.95
#define EE_BOOTSTRAP_MAX_RESAMPLES 1000000ul

struct ee_rng {
	uint64_t s[4];
};

/* One step of splitmix64: advances *state, returns the next output. */
uint64_t ee_splitmix64(uint64_t *state);

/* Seeds r: its four words are the first four splitmix64 outputs of seed. */
void ee_rng_seed(struct ee_rng *r, uint64_t seed);

/* The next 64 bits of xoshiro256**. */
uint64_t ee_rng_next(struct ee_rng *r);

/* Uniform in [0, n) for n >= 1 (0 when n == 0). */
uint64_t ee_rng_below(struct ee_rng *r, uint64_t n);

/* The seed of a named stream (a class of tasks) derived from seed:
 * splitmix64 of seed XOR the FNV-1a hash of name. Each class draws from its
 * own stream, so its interval does not depend on the other classes. */
uint64_t ee_bootstrap_stream(uint64_t seed, const char *name);

struct ee_bootstrap {
	unsigned long resamples; /* 1 .. EE_BOOTSTRAP_MAX_RESAMPLES */
	double level;            /* in (0, 1) */
};

/* values[j * n + i] is metric j (< m) of item i (< n). Fills ret_lo[0..m)
 * and ret_hi[0..m) with each metric's interval, drawing from a generator
 * seeded with seed; NaN bounds when n == 0. */
int ee_bootstrap_means(const double *values, size_t n, size_t m, const struct ee_bootstrap *b, uint64_t seed,
                       double *ret_lo, double *ret_hi, struct ee_err *err);

#endif
