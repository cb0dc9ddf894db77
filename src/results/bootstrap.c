/* bootstrap.c - seeded percentile bootstrap (see bootstrap.h).
 *
 * The work is R x n index draws and R x n x m additions: for the summary of
 * HumanEval (164 tasks, pass@1/10/100 and the mean score) about 650,000
 * additions, a millisecond or so. The means are kept per metric in one
 * R x m array and sorted once per metric by ee_quantile.
 */
#include "results/bootstrap.h"

#include <math.h>
#include <stdlib.h>

#include "base/err.h"
#include "results/metrics.h"

uint64_t ee_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void ee_rng_seed(struct ee_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = ee_splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ee_rng_next(struct ee_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t ee_rng_below(struct ee_rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	uint64_t threshold = (0 - n) % n; /* 2^64 mod n: below it, r mod n would favour small values */
	uint64_t x;

	do
		x = ee_rng_next(r);
	while (x < threshold);
	return x % n;
}

uint64_t ee_bootstrap_stream(uint64_t seed, const char *name)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a, 64 bits */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	seed ^= h;
	return ee_splitmix64(&seed);
}

int ee_bootstrap_means(const double *values, size_t n, size_t m, const struct ee_bootstrap *b, uint64_t seed,
                       double *ret_lo, double *ret_hi, struct ee_err *err)
{
	size_t R = b->resamples;

	if (R == 0 || R > EE_BOOTSTRAP_MAX_RESAMPLES || !(b->level > 0.0 && b->level < 1.0))
		return ee_fail(err, EE_ERR_USAGE,
		               "bootstrap: resamples must be in [1, %lu] and level in (0, 1)",
		               EE_BOOTSTRAP_MAX_RESAMPLES);
	if (n == 0) {
		for (size_t j = 0; j < m; j++)
			ret_lo[j] = ret_hi[j] = NAN;
		return 0;
	}
	if (m == 0)
		return 0;
	double *means = malloc(R * m * sizeof(*means)); /* means[j * R + r] */
	double *sums = calloc(m, sizeof(*sums));
	if (!means || !sums) {
		free(means);
		free(sums);
		return ee_fail(err, EE_ERR_USAGE, "bootstrap: out of memory");
	}
	struct ee_rng rng;
	ee_rng_seed(&rng, seed);
	for (size_t r = 0; r < R; r++) {
		for (size_t j = 0; j < m; j++)
			sums[j] = 0.0;
		for (size_t i = 0; i < n; i++) {
			size_t pick = (size_t)ee_rng_below(&rng, n);
			for (size_t j = 0; j < m; j++)
				sums[j] += values[j * n + pick];
		}
		for (size_t j = 0; j < m; j++)
			means[j * R + r] = sums[j] / (double)n;
	}
	double tail = (1.0 - b->level) / 2.0;
	for (size_t j = 0; j < m; j++) {
		ret_lo[j] = ee_quantile(means + j * R, R, tail);
		ret_hi[j] = ee_quantile(means + j * R, R, 1.0 - tail);
	}
	free(means);
	free(sums);
	return 0;
}
