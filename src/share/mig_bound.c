/*
 * mig_bound: the bound that proves a MIG plan optimal (doc/mig.md, "The
 * search"). The objective (satisfied, waste, SMs) is one number here:
 *
 *   value = (satisfied * BIG - waste) * SBIG - SMs
 *
 * with BIG and SBIG above any waste and SM count a plan can have, so that
 * comparing values compares the objective's first three levels in order.
 * A plan is a load per GPU, and the GPUs share only the request units, so
 * pricing the units decouples them (Lagrangian relaxation): for any prices
 * pi >= 0,
 *
 *   value(plan) <= sum_k pi_k * units_k + sum_g h_g(pi),
 *   h_g(pi) = max over loads L of GPU g of value(L) - pi . L,
 *
 * because the plan's loads take at most units_k of each class. h_g is a
 * maximum over the rows of g's geometry table of the sum over its instances
 * of the best reduced value one instance can have, which is cheap: an
 * exclusive unit, or shared units as a fractional knapsack by memory. The
 * prices are chosen here by subgradient steps toward the lowest bound; any
 * prices give a valid bound, so the search stays exact however good they are.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e30L)

/* Small classes of GPU j by reduced value per byte at the prices, best first. */
static void
small_order(const struct search *s, int j, int *order, int *n)
{
	const struct sgpu *sg = &s->sg[j];

	*n = 0;
	for (int k = 0; k < s->nk; k++) {
		long double d;
		int i;

		if (!sg->small[k])
			continue;
		d = ((s->big + (long double)sg->mem[k]) * s->sbig - s->pi[k]) / (long double)sg->mem[k];
		for (i = *n; i > 0; i--) {
			int o = order[i - 1];
			long double e = ((s->big + (long double)sg->mem[o]) * s->sbig - s->pi[o]) /
			    (long double)sg->mem[o];

			if (e >= d)
				break;
			order[i] = o;
		}
		order[i] = k;
		(*n)++;
	}
}

/* The best packing of one instance with small units: a small branch and bound. */
struct pack {
	const struct search *s;
	const struct sgpu *sg;
	const struct mig_profile *pr;
	const int *order;             /* small classes, best value per byte first */
	int n;
	const int *rem;
	int depth;
	int keep[64];                 /* counts of the best packing, by position in order */
	int cur[64];
	long double best;             /* its value (0: none better than empty) */
	long steps;                   /* calls so far: past PACK_STEPS, the fractional bound instead */
	int cut;
};

#define PACK_STEPS 2000

static void
pack(struct pack *pk, int i, uint64_t mem, int sms, long double val, int units, int *cnt)
{
	const struct search *s = pk->s;
	long double v, d;
	int k, maxc;

	(void)cnt;
	if (pk->cut || ++pk->steps > PACK_STEPS) {
		pk->cut = 1;
		return;
	}
	if (units > 0 && val > pk->best) {
		pk->best = val;
		memcpy(pk->keep, pk->cur, sizeof pk->keep);
	}
	if (i >= pk->n || i >= 64)
		return;
	k = pk->order[i];
	v = (s->big + (long double)pk->sg->mem[k]) * s->sbig - s->pi[k];
	d = v / (long double)pk->sg->mem[k];
	/* no packing of the rest beats the fractional one at this density */
	if (v <= 0 || val + d * (long double)(pk->pr->mem_bytes - mem) <= pk->best)
		return;
	maxc = (int)((pk->pr->mem_bytes - mem) / pk->sg->mem[k]);
	if (maxc > pk->rem[k])
		maxc = pk->rem[k];
	if (pk->sg->need[k] > 0 && (pk->pr->sms - sms) / pk->sg->need[k] < maxc)
		maxc = (pk->pr->sms - sms) / pk->sg->need[k];
	for (int c = maxc; c >= 0; c--) {
		pk->cur[i] = c;
		pack(pk, i + 1, mem + (uint64_t)c * pk->sg->mem[k], sms + c * pk->sg->need[k], val + c * v, units + c, cnt);
	}
	pk->cur[i] = 0;
}

/*
 * best[p]: the most reduced value one instance of profile p of GPU j can
 * have with the units in rem; NONE where no unit fits it. x (may be NULL):
 * [p * nk + k] the units of class k that take it (fractional when shared).
 */
static void
instance_bounds(const struct search *s, int j, const int *rem, long double *best, long double *x)
{
	const struct sgpu *sg = &s->sg[j];
	const struct mig_gpu *g = sg->g;
	int order[s->nk + 1], nsmall;

	small_order(s, j, order, &nsmall);
	for (int p = 0; p < g->nprofiles; p++) {
		const struct mig_profile *pr = &g->profiles[p];
		long double b = NONE, sh = mig_inst_value(s, pr, 0, 0);
		int kb = -1;

		for (int k = 0; k < s->nk; k++) {
			long double v;

			if (!rem[k] || sg->small[k] || !(sg->fit[k] >> p & 1))
				continue;
			v = mig_inst_value(s, pr, 1, sg->mem[k]) - s->pi[k];
			if (v > b) {
				b = v;
				kb = k;
			}
		}
		if (x) {
			memset(x + (size_t)p * (size_t)s->nk, 0, sizeof *x * (size_t)s->nk);
			if (kb >= 0)
				x[(size_t)p * (size_t)s->nk + (size_t)kb] = 1;
		}
		/* shared: the best packing of small units, memory and SMs both */
		if (nsmall > 0) {
			struct pack pk = {s, sg, pr, order, nsmall, rem, 0, {0}, {0}, NONE, 0, 0};
			int *cnt = xcalloc((size_t)s->nk + 1, sizeof *cnt);

			pack(&pk, 0, 0, 0, 0, 0, cnt);
			free(cnt);
			if (pk.cut) {
				/* too many packings to try: the fractional knapsack bounds them all */
				long double cap = (long double)pr->mem_bytes, f = 0;

				memset(pk.keep, 0, sizeof pk.keep);
				for (int i = 0; i < nsmall && i < 64 && cap > 0; i++) {
					int k = order[i];
					long double v = (s->big + (long double)sg->mem[k]) * s->sbig - s->pi[k], m, take;

					if (v <= 0)
						break;
					if (!rem[k] || sg->need[k] > pr->sms)
						continue;
					m = (long double)sg->mem[k];
					take = cap / m < (long double)rem[k] ? cap / m : (long double)rem[k];
					f += take * v;
					cap -= take * m;
					pk.keep[i] = (int)take;
				}
				pk.best = f > 0 ? f : NONE;
			}
			sh += pk.best;
			if (pk.best > 0 && sh > b) {
				b = sh;
				if (x) {
					memset(x + (size_t)p * (size_t)s->nk, 0, sizeof *x * (size_t)s->nk);
					for (int i = 0; i < nsmall; i++)
						x[(size_t)p * (size_t)s->nk + (size_t)order[i]] = pk.keep[i];
				}
			}
		}
		best[p] = b;
	}
}

void
mig_bound_instances(const struct search *s, int j, const int *rem, long double *best)
{
	instance_bounds(s, j, rem, best, NULL);
}

/* h: the best row of GPU j's table for the instance bounds; *row gets it (-1: the empty one). */
static long double
gpu_bound(const struct search *s, int j, const long double *best, int *row)
{
	const struct gtable *t = s->sg[j].t;
	long double h = 0;

	*row = -1;
	for (size_t r = 0; r < t->ngeo; r++) {
		long double v = 0;

		for (int p = 0; p < s->sg[j].g->nprofiles && v > NONE / 2; p++) {
			int c = (int)(t->geo[r].key >> (4 * p) & 15);

			if (c)
				v += c * best[p];
		}
		if (v > h) {
			h = v;
			*row = (int)r;
		}
	}
	return h;
}

/* The bound at prices s->pi; grad (may be NULL) gets units_k minus what the GPUs' best loads take. */
static long double
evaluate(struct search *s, long double *grad, long double *best, long double *x)
{
	long double total = 0;

	for (int k = 0; k < s->nk; k++) {
		total += s->pi[k] * s->k[k].n;
		if (grad)
			grad[k] = s->k[k].n;
	}
	for (int j = 0, row = -1; j < s->ngpus; j++) {
		/* twins are consecutive and alike: best, x and row carry over */
		if (!s->sg[j].twin) {
			instance_bounds(s, j, s->rem, best, x);
			s->sg[j].h = gpu_bound(s, j, best, &row);
		} else {
			s->sg[j].h = s->sg[j - 1].h;
		}
		total += s->sg[j].h;
		if (!grad)
			continue;
		if (row < 0)
			continue;
		for (int p = 0; p < s->sg[j].g->nprofiles; p++) {
			int c = (int)(s->sg[j].t->geo[row].key >> (4 * p) & 15);

			for (int k = 0; c && k < s->nk; k++)
				grad[k] -= c * x[(size_t)p * (size_t)s->nk + (size_t)k];
		}
	}
	return total;
}

void
mig_bound_prices(struct search *s, long double target)
{
	long double *grad = xcalloc((size_t)s->nk + 1, sizeof *grad);
	long double *keep = xcalloc((size_t)s->nk + 1, sizeof *keep);
	long double *best = xcalloc(MIG_MAX_PROFILES, sizeof *best);
	long double *x = xcalloc((size_t)s->nk * MIG_MAX_PROFILES + 1, sizeof *x);
	long double lowest = 0, theta = 2;
	int stall = 0;

	for (int it = 0; it < 300; it++) {
		long double b = evaluate(s, grad, best, x), norm = 0, step;

		if (it == 0 || b < lowest - 1) {
			lowest = b;
			memcpy(keep, s->pi, sizeof *keep * (size_t)s->nk);
			stall = 0;
		} else if (++stall >= 8) {
			theta /= 2;
			stall = 0;
		}
		if (lowest - target < s->sbig || theta < 1e-4L)
			break; /* proven to within one SM, or no more progress */
		for (int k = 0; k < s->nk; k++)
			if (!(grad[k] > 0 && s->pi[k] <= 0))
				norm += grad[k] * grad[k];
		if (norm <= 0)
			break;
		step = theta * (b - target) / norm;
		for (int k = 0; k < s->nk; k++) {
			s->pi[k] -= step * grad[k];
			if (s->pi[k] < 0)
				s->pi[k] = 0;
		}
	}
	memcpy(s->pi, keep, sizeof *keep * (size_t)s->nk);
	s->root = evaluate(s, NULL, best, x);
	free(grad);
	free(keep);
	free(best);
	free(x);
}
