/* metrics.h - pass@k and the distribution statistics of a data set.
 *
 * pass@k is the unbiased estimator of Chen et al. (2021):
 *   pass_at_k(n, c, k) = 1 - C(n-c, k) / C(n, k),  1 when n - c < k,
 * computed as 1 - prod_{i=n-c+1}^{n} (1 - k/i) (or the equal product of k
 * factors prod_{j<k} (1 - c/(n-j)), whichever is shorter), summed in log
 * space (log1p, expm1), which never forms a binomial coefficient and so
 * stays accurate to about 1e-15 relative for n in the millions.
 */
#ifndef EE_METRICS_H
#define EE_METRICS_H

#include <stddef.h>

/* Returns pass@k in [0, 1], or NaN when the arguments are impossible
 * (k == 0, k > n, or c > n). */
double ee_pass_at_k(unsigned long n, unsigned long c, unsigned long k);

/* The q-quantile (q in [0,1]) of v[0..n) by linear interpolation between
 * closest ranks (numpy's default). Sorts v in place. NaN when n == 0, when
 * q is outside [0, 1] or NaN, and (as numpy) when v holds a NaN. */
double ee_quantile(double *v, size_t n, double q);

#endif
