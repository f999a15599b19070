/*
 * mig_bound: the bound that proves a level of the objective (doc/mig.md,
 * "How it works"), and the pricing the configuration LP (mig_master.c)
 * generates its columns with.
 *
 * Level l maximizes f_l: satisfied (1), minus waste in GiB (2), minus SMs
 * (3), minus operations (4), over the plans that reach the optimum of every
 * level before it (satisfied >= S, waste <= W, SMs <= M). A plan is a load
 * per GPU, and the GPUs share nothing but the units and those level rows,
 * so pricing them decouples the GPUs (Lagrangian relaxation): for any
 * prices pi >= 0 and multipliers ls, lw, lm >= 0, every such plan P has
 *
 *   f_l(P) <= sum_g h_g + pi . n - ls S + lw W + lm M,
 *   h_g = max over loads L of GPU g (the empty one too) of
 *         f_l(L) + ls sat(L) - lw waste(L) - lm SMs(L) - pi . L,
 *
 * since every added term is >= 0 on P. h_g is the best row of g's table of
 * the sum, over the row's instances, of the best value one instance can
 * hold (an exclusive unit, or a packing of small units that share it: a
 * knapsack solved exactly, or bounded fractionally when too large); the
 * row's operations count at level 4. Any prices give a valid bound, so the
 * LP's numbers change how tight it is, never whether it holds; it is summed
 * in long double, its rounding far below the steps a plan's value takes.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e30L)
#define PACK_STEPS 20000L

long double
mig_level_value(const struct mig_score *sc, int lvl)
{
	switch (lvl) {
	case 1:
		return sc->satisfied;
	case 2:
		return -(long double)sc->waste / MIG_GIB;
	case 3:
		return -sc->sms;
	default:
		return -sc->ops;
	}
}

/* The value of an instance of profile pr holding n units of mem bytes in all, at the prices. */
static long double
inst_value(const struct price *pr, const struct mig_profile *p, int n, uint64_t mem)
{
	return pr->cs * n - pr->cw * ((long double)p->mem_bytes - (long double)mem) / MIG_GIB - pr->cm * p->sms;
}

/* ------------------------------------------------------------------- the knapsack */

/* The best packing of one instance with small units (positive values only). */
struct knap {
	int n;
	int *k;                       /* [n] classes, best value per byte first */
	long double *v;
	uint64_t *mem;
	int *need, *maxc;
	uint64_t cap;
	int sms;
	int *cur, *keep;
	long double best;
	long steps;
	int cut;
};

/* Fractional bound (memory only) of items from i on with mem bytes left. */
static long double
frac(const struct knap *pk, int i, uint64_t mem)
{
	long double f = 0;

	for (; i < pk->n && mem > 0; i++) {
		uint64_t all = (uint64_t)pk->maxc[i] * pk->mem[i];

		if (all <= mem) {
			f += pk->maxc[i] * pk->v[i];
			mem -= all;
		} else {
			f += pk->v[i] * (long double)mem / (long double)pk->mem[i];
			mem = 0;
		}
	}
	return f;
}

static void
knapsack(struct knap *pk, int i, uint64_t mem, int sms, long double val)
{
	int maxc;

	if (pk->cut)
		return;
	if (++pk->steps > PACK_STEPS) {
		pk->cut = 1;
		return;
	}
	if (val > pk->best) {
		pk->best = val;
		memcpy(pk->keep, pk->cur, sizeof *pk->keep * (size_t)pk->n);
	}
	if (i >= pk->n || val + frac(pk, i, pk->cap - mem) <= pk->best)
		return;
	maxc = (int)((pk->cap - mem) / pk->mem[i]);
	if (maxc > pk->maxc[i])
		maxc = pk->maxc[i];
	if (pk->need[i] > 0 && (pk->sms - sms) / pk->need[i] < maxc)
		maxc = (pk->sms - sms) / pk->need[i];
	for (int c = maxc; c >= 0 && !pk->cut; c--) {
		pk->cur[i] = c;
		knapsack(pk, i + 1, mem + (uint64_t)c * pk->mem[i], sms + c * pk->need[i], val + c * pk->v[i]);
	}
	pk->cur[i] = 0;
}

/* Small class k into the knapsack, by value per byte (best first); the most a unit adds where none beats it. */
static void
knap_add(struct knap *pk, int k, long double v, uint64_t mem, int need, int maxc)
{
	int q;

	for (q = pk->n++; q > 0 && pk->v[q - 1] / (long double)pk->mem[q - 1] < v / (long double)mem; q--) {
		pk->k[q] = pk->k[q - 1];
		pk->v[q] = pk->v[q - 1];
		pk->mem[q] = pk->mem[q - 1];
		pk->need[q] = pk->need[q - 1];
		pk->maxc[q] = pk->maxc[q - 1];
	}
	pk->k[q] = k;
	pk->v[q] = v;
	pk->mem[q] = mem;
	pk->need[q] = need;
	pk->maxc[q] = maxc;
}

/*
 * One instance of profile p shared: the small units that fit it, the
 * positive ones packed, else the least bad single one (it must hold one);
 * NONE where none fits. x (may be NULL): its content.
 */
static long double
shared_best(struct search *s, int j, int p, struct knap *pk, int *x)
{
	const struct sgpu *sg = &s->sg[j];
	const struct mig_profile *pr = &sg->g->profiles[p];
	const struct price *c = s->pr;
	long double one = NONE, base = inst_value(c, pr, 0, 0), v;
	int k1 = -1;

	pk->n = 0;
	pk->cap = pr->mem_bytes;
	pk->sms = pr->sms;
	for (int k = 0; k < s->nk; k++) {
		if (!sg->small[k] || !c->hi[k] || sg->mem[k] > pr->mem_bytes || sg->need[k] > pr->sms)
			continue;
		v = c->cs + c->cw * (long double)sg->mem[k] / MIG_GIB - c->pi[k];
		if (v > one) {
			one = v;
			k1 = k;
		}
		if (v > 0)
			knap_add(pk, k, v, sg->mem[k], sg->need[k], c->hi[k]);
	}
	if (k1 < 0)
		return NONE;
	pk->best = 0;
	pk->steps = 0;
	pk->cut = 0;
	memset(pk->cur, 0, sizeof *pk->cur * ((size_t)s->nk + 1));
	memset(pk->keep, 0, sizeof *pk->keep * ((size_t)s->nk + 1));
	if (pk->n > 0)
		knapsack(pk, 0, 0, 0, 0);
	s->nodes += pk->steps / 4; /* the packings' work counts against the budget */
	if (pk->best <= 0) {
		/* no positive unit fits: the least bad single one */
		pk->n = 1;
		pk->k[0] = k1;
		pk->keep[0] = 1;
		v = base + one;
	} else {
		/* cut short: the fractional bound, larger, so still a bound */
		v = base + (pk->cut ? frac(pk, 0, pk->cap) : pk->best);
	}
	if (x) {
		memset(x, 0, sizeof *x * (size_t)s->nk);
		for (int i = 0; i < pk->n; i++)
			x[pk->k[i]] = pk->keep[i];
	}
	return v;
}

void
mig_price_instances(struct search *s, int j, long double *best, int *x)
{
	const struct sgpu *sg = &s->sg[j];
	const struct price *c = s->pr;
	size_t nk = (size_t)s->nk + 1;
	struct knap pk;
	void *buf = xcalloc(nk, 5 * sizeof(int) + sizeof(long double) + sizeof(uint64_t));
	int *sx = xcalloc(nk, sizeof *sx);

	pk.v = buf;
	pk.mem = (uint64_t *)(pk.v + nk);
	pk.k = (int *)(pk.mem + nk);
	pk.need = pk.k + nk;
	pk.maxc = pk.need + nk;
	pk.cur = pk.maxc + nk;
	pk.keep = pk.cur + nk;
	for (int p = 0; p < sg->g->nprofiles; p++) {
		const struct mig_profile *pr = &sg->g->profiles[p];
		long double b = NONE, sh;
		int kb = -1;

		/* exclusive: the best class that fits */
		for (int k = 0; k < s->nk; k++) {
			long double v;

			if (!c->hi[k] || sg->small[k] || !(sg->fit[k] >> p & 1))
				continue;
			v = inst_value(c, pr, 1, sg->mem[k]) - c->pi[k];
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
		sh = shared_best(s, j, p, &pk, sx);
		if (sh > b) {
			b = sh;
			if (x)
				memcpy(x + (size_t)p * (size_t)s->nk, sx, sizeof *x * (size_t)s->nk);
		}
		best[p] = b;
	}
	free(sx);
	free(buf);
}

long double
mig_price_gpu(const struct search *s, int j, const long double *best, int *row)
{
	const struct gtable *t = s->sg[j].t;
	long double h = NONE;

	*row = -1;
	if (t->ngeo == 0)
		return 0; /* the empty load, no row */
	for (size_t r = 0; r < t->ngeo; r++) {
		long double v = -s->pr->co * t->geo[r].ops;

		for (int p = 0; p < s->sg[j].g->nprofiles && v > NONE / 2; p++) {
			int c = (int)(t->geo[r].key >> (4 * p) & 15);

			if (c)
				v = best[p] <= NONE / 2 ? NONE : v + c * best[p];
		}
		if (v > h) {
			h = v;
			*row = (int)r;
		}
	}
	return h;
}

long double
mig_bound(struct search *s)
{
	struct price *c = s->pr;
	long double best[MIG_MAX_PROFILES], total = c->cconst, mag = 1 + fabsl(c->cconst);
	int row;

	for (int k = 0; k < s->nk; k++) {
		total += c->pi[k] * c->hi[k];
		mag += fabsl(c->pi[k]) * s->k[k].n + fabsl(c->cs) * s->k[k].n;
	}
	for (int j = 0; j < s->ngpus; j++) {
		const struct mig_gpu *g = s->sg[j].g;

		if (!s->sg[j].twin) {
			mig_price_instances(s, j, best, NULL);
			c->h[j] = mig_price_gpu(s, j, best, &row);
		} else {
			c->h[j] = c->h[j - 1];
		}
		total += c->h[j];
		mag += fabsl(c->h[j]) + fabsl(c->co) * 2 * MIG_MAX_INST;
		for (int p = 0; p < g->nprofiles; p++)
			mag += (fabsl(c->cw) * (long double)g->profiles[p].mem_bytes / MIG_GIB + fabsl(c->cm) * g->profiles[p].sms) *
			    g->profiles[p].max_count;
	}
	c->bound = total;
	c->mag = mag + fabsl(total);
	return total;
}
