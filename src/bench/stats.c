/*
 * stats: medians and spreads of repeats. The median, not the mean, because
 * one slow repeat (a daemon waking, a page fault storm) must not move the
 * answer; min and max are kept so that a reader can see how noisy it was.
 */
#include "bench/stats.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
stats_median(const double *v, int n)
{
	double *s, m;

	if (n <= 0)
		return NAN;
	s = xmalloc((size_t)n * sizeof *s);
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double
stats_ratio(double a, double b)
{
	if (isnan(a) || isnan(b) || b == 0)
		return NAN;
	return a / b;
}

void
stats_of(const double *v, int n, struct stats *st)
{
	st->n = n > 0 ? n : 0;
	if (n <= 0) {
		st->median = st->min = st->max = st->spread = NAN;
		return;
	}
	st->min = st->max = v[0];
	for (int i = 1; i < n; i++) {
		if (v[i] < st->min)
			st->min = v[i];
		if (v[i] > st->max)
			st->max = v[i];
	}
	st->median = stats_median(v, n);
	st->spread = stats_ratio(st->max - st->min, st->median);
}
