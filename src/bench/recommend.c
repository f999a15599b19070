/*
 * recommend: which configuration to use, from the medians measured. The best
 * median wins unless a simpler configuration comes within 2% of it: fewer
 * processes first (less memory, fewer contexts), then the simpler mode
 * (nothing to set up, then a daemon, then code changes). So the answer is
 * never more than 2% below the best measured, and is the one a person would
 * rather run when two are equal within noise.
 *
 * Beside it, the point with the fewest joules, named only when its J is
 * below every other point's by more than the spread: the larger of the
 * two points' (their J's own spread where each repeat has its J, else
 * their time's: a J summed over repeats is one figure, and joules follow
 * the time the work took). Else none is clearly lower, and it says so.
 */
#include "bench/bench.h"

#include <math.h>
#include <string.h>

#define SIMPLER_WITHIN 0.02

/* How much a mode asks of the user, lowest first. */
static int
mode_cost(int mode)
{
	switch (mode) {
	case BM_TIMESLICE: return 0;     /* just run P processes */
	case BM_MPS: return 1;           /* a daemon */
	case BM_MPS_CAPPED: return 2;    /* a daemon and a limit per client */
	case BM_STREAMS: return 3;       /* change the program */
	case BM_BATCHED: return 4;       /* rewrite it around batched calls */
	default: return 9;
	}
}

static int
simpler(const struct bench_point *a, const struct bench_point *b)
{
	if (a->procs != b->procs)
		return a->procs < b->procs;
	return mode_cost(a->mode) < mode_cost(b->mode);
}

static int
usable(const struct bench_point *p, int size)
{
	return p->size == size && p->st.n > 0 && !isnan(p->st.median);
}

static double
median_at(const struct bench_exercise *e, int size, int mode, int procs)
{
	const struct bench_point *p = bench_point_get(e, size, mode, procs);

	return p && p->st.n > 0 ? p->st.median : NAN;
}

void
bench_recommend(const struct bench_exercise *e, int size, struct bench_rec *rec)
{
	const struct bench_point *best = NULL, *pick = NULL;

	memset(rec, 0, sizeof *rec);
	rec->size = size;
	rec->energy = rec->energy_next = rec->energy_spread = NAN;
	for (int i = 0; i < e->npts; i++) {
		const struct bench_point *p = &e->pts[i];

		if (usable(p, size) && (!best || p->st.median > best->st.median))
			best = p;
	}
	if (!best)
		return;
	for (int i = 0; i < e->npts; i++) {
		const struct bench_point *p = &e->pts[i];

		if (!usable(p, size) || p->st.median < best->st.median * (1 - SIMPLER_WITHIN))
			continue;
		if (!pick || simpler(p, pick))
			pick = p;
	}
	rec->valid = 1;
	rec->mode = pick->mode;
	rec->procs = pick->procs;
	rec->value = pick->st.median;
	rec->best_mode = best->mode;
	rec->best_procs = best->procs;
	rec->best = best->st.median;
	rec->one = median_at(e, size, BM_TIMESLICE, 1);
	rec->timeslice = median_at(e, size, BM_TIMESLICE, pick->procs);
	rec->gain_one = stats_ratio(rec->value, rec->one);
	rec->gain_timeslice = stats_ratio(rec->value, rec->timeslice);
	bench_recommend_energy(e, size, rec);
}

/* How far a point's J may be off: its J's spread, or its time's where J is one summed figure. */
static double
energy_spread(const struct bench_point *p)
{
	double s = p->est.n > 1 ? p->est.spread : p->st.spread;

	return isnan(s) ? 0 : s;
}

void
bench_recommend_energy(const struct bench_exercise *e, int size, struct bench_rec *rec)
{
	const struct bench_point *low = NULL, *near = NULL;

	rec->energy = rec->energy_next = rec->energy_spread = NAN;
	rec->energy_clear = 0;
	for (int i = 0; i < e->npts; i++) {
		const struct bench_point *p = &e->pts[i];

		if (usable(p, size) && p->est.n > 0 && !isnan(p->est.median) &&
		    (!low || p->est.median < low->est.median))
			low = p;
	}
	if (!low)
		return;
	rec->energy = low->est.median;
	rec->energy_mode = low->mode;
	rec->energy_procs = low->procs;
	rec->energy_value = low->st.median;
	/* every other point: above it by more than the larger spread of the two? the first not, or the nearest */
	rec->energy_clear = 1;
	for (int i = 0; i < e->npts; i++) {
		const struct bench_point *p = &e->pts[i];
		double sp, gap;

		if (p == low || !usable(p, size) || p->est.n == 0 || isnan(p->est.median))
			continue;
		sp = fmax(energy_spread(low), energy_spread(p));
		gap = p->est.median - low->est.median;
		if (gap <= sp * low->est.median) {
			if (rec->energy_clear || p->est.median < near->est.median) {
				near = p;
				rec->energy_spread = sp;
			}
			rec->energy_clear = 0;
		} else if (rec->energy_clear && (!near || p->est.median < near->est.median)) {
			near = p;
			rec->energy_spread = sp;
		}
	}
	if (!near) {
		rec->energy_clear = 0;  /* one point with joules: lower than nothing */
		return;
	}
	rec->energy_next = near->est.median;
	rec->energy_next_mode = near->mode;
	rec->energy_next_procs = near->procs;
}
