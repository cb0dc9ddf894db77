/* metrics.c - pass@k and quantiles (see metrics.h).
 *
 * pass@k: C(n-c, k) / C(n, k) equals both
 *   prod_{i=n-c+1}^{n} (1 - k/i)      (c factors)   and
 *   prod_{j=0}^{k-1} (1 - c/(n-j))    (k factors).
 * We take the shorter product, so the work is min(c, k) steps, and sum it in
 * log space with log1p and finish with expm1: 1 - prod computed directly
 * loses all but a few digits when prod is near 1 (pass@1 = 1e-6 would carry
 * a relative error near 1e-10), the log1p/expm1 pair keeps it near 1e-16.
 */
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>

/* Below this, exp() underflows to 0: pass@k is 1 to double precision. */
#define LOG_TINY (-746.0)

/* log(1 - a/b) for 0 < a < b. log1p is exact near 1 - a/b = 1; near 0 the
 * integer b - a is exact where 1 - a/b would round. */
static double log1m_ratio(unsigned long a, unsigned long b)
{
	double r = (double)a / (double)b;

	return r < 0.5 ? log1p(-r) : log((double)(b - a) / (double)b);
}

/* 1 - C(n-c, k) / C(n, k) for 0 < k <= n - c and c > 0. */
static double pass_prob(unsigned long n, unsigned long c, unsigned long k)
{
	double log_fail = 0.0;

	if (c <= k) {
		/* counted loop: i <= n would never end for n == ULONG_MAX */
		for (unsigned long t = 0; t < c && log_fail > LOG_TINY; t++) {
			unsigned long i = n - c + 1 + t;
			log_fail += log1m_ratio(k, i);
		}
	} else {
		for (unsigned long j = 0; j < k && log_fail > LOG_TINY; j++)
			log_fail += log1m_ratio(c, n - j);
	}
	return -expm1(log_fail);
}

double ee_pass_at_k(unsigned long n, unsigned long c, unsigned long k)
{
	if (k == 0 || k > n || c > n)
		return NAN;
	if (n - c < k)
		return 1.0; /* every draw of k samples holds a correct one */
	if (c == 0)
		return 0.0;
	return pass_prob(n, c, k);
}

/* Ascending, NaN last, so a NaN anywhere is found at the end. */
static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	if (isnan(a) || isnan(b))
		return (isnan(a) != 0) - (isnan(b) != 0);
	return (a > b) - (a < b);
}

/* numpy's _lerp: from the nearer end, so t = 1 gives b exactly. */
static double lerp(double a, double b, double t)
{
	if (a == b)
		return a; /* also keeps inf, inf from becoming inf - inf */
	double diff = b - a;
	return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double ee_quantile(double *v, size_t n, double q)
{
	if (n == 0 || !(q >= 0.0 && q <= 1.0))
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (isnan(v[n - 1]))
		return NAN; /* as numpy: a NaN in the data poisons the result */

	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : n - 1;
	return lerp(v[lo], v[hi], h - (double)lo);
}
