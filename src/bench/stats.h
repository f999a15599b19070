/*
 * stats: what a set of repeats of one measurement says: median, min, max
 * and spread ((max - min) / median), the numbers every bench table shows.
 */
#ifndef GPUPACK_BENCH_STATS_H
#define GPUPACK_BENCH_STATS_H

#include <stddef.h>

struct stats {
	int n;
	double median, min, max;
	double spread;  /* (max - min) / median; 0 for one value, NaN when median is 0 */
};

/* Summarize v[0..n-1] (n may be 0: every field NaN, n 0). v is not changed. */
void stats_of(const double *v, int n, struct stats *st);
/* The median of v[0..n-1] (NaN for n 0). */
double stats_median(const double *v, int n);
/* a / b, NaN where b is 0 or either is NaN: ratios never divide by zero silently. */
double stats_ratio(double a, double b);

#endif
