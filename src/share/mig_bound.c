/*
 * mig_bound: the bounds that prove a MIG plan optimal (doc/mig.md, "The
 * search"), one level of the objective at a time.
 *
 * Level l maximizes f_l: satisfied (1), minus waste in GiB (2), minus SMs
 * (3), minus operations (4), over the plans that reach the optimum of every
 * level before it (satisfied >= S, waste <= W, SMs <= M). A plan is a load
 * per GPU, and the GPUs share nothing but the jobs and those level rows, so
 * pricing them decouples the GPUs (Lagrangian relaxation): for any prices
 * pi >= 0 and multipliers ls, lw, lm >= 0, every such plan P has
 *
 *   f_l(P) <= sum_g h_g + pi . n - ls S + lw W + lm M,
 *   h_g = max over loads L of GPU g (the empty one too) of
 *         f_l(L) + ls sat(L) - lw waste(L) - lm SMs(L) - pi . L,
 *
 * since every added term is >= 0 on P. h_g is the best row of g's table of
 * the sum, over the row's instances, of the best value one instance can
 * hold (an exclusive job, or a packing of small jobs that share it: a
 * knapsack solved exactly, or bounded fractionally when too large); the
 * row's operations count at level 4.
 *
 * The prices come from the configuration LP (mig_master.c); any prices give
 * a valid bound, so how good they are changes the speed, never the answer.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e30L)

/* The value a unit of small class k adds to an instance it shares (GPU j). */
static long double
item_value(const struct search *s, const struct sgpu *sg, int k)
{
	return s->cs + s->cw * (long double)sg->mem[k] / MIG_GIB - s->pi[k];
}

/* --------------------------------------------------------- the knapsack */

/* The best packing of one instance with small units (positive values only). */
struct pack {
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

#define PACK_STEPS 20000L

/* Fractional bound (memory only) of items from i on with mem bytes left. */
static long double
pack_frac(const struct pack *pk, int i, uint64_t mem)
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
pack(struct pack *pk, int i, uint64_t mem, int sms, long double val)
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
	if (i >= pk->n || val + pack_frac(pk, i, pk->cap - mem) <= pk->best)
		return;
	maxc = (int)((pk->cap - mem) / pk->mem[i]);
	if (maxc > pk->maxc[i])
		maxc = pk->maxc[i];
	if (pk->need[i] > 0 && (pk->sms - sms) / pk->need[i] < maxc)
		maxc = (pk->sms - sms) / pk->need[i];
	for (int c = maxc; c >= 0 && !pk->cut; c--) {
		pk->cur[i] = c;
		pack(pk, i + 1, mem + (uint64_t)c * pk->mem[i], sms + c * pk->need[i], val + c * pk->v[i]);
	}
	pk->cur[i] = 0;
}

/* What the node's profile constraints add to one instance of profile p on GPU j at the prices. */
static long double
profile_adj(const struct search *s, int j, int p)
{
	long double a = 0;

	for (int i = 0; i < s->nbr; i++)
		if (s->br[i].kind == MIG_BR_PROFILE && s->br[i].grp == s->sg[j].grp && s->br[i].idx == p)
			a += s->bradj[i];
	return a;
}

/* ... the content constraints (kind, profile p, class k; k unused for shared instances). */
static long double
content_adj(const struct search *s, int j, int kind, int p, int k)
{
	long double a = 0;

	for (int i = 0; i < s->nbr; i++)
		if (s->br[i].kind == kind && s->br[i].grp == s->sg[j].grp && s->br[i].idx == p &&
		    (kind == MIG_BR_SHARED || s->br[i].k == k))
			a += s->bradj[i];
	return a;
}

/* ... and the row constraints to table row r of GPU j. */
static long double
row_adj(const struct search *s, int j, int r)
{
	long double a = 0;

	for (int i = 0; i < s->nbr; i++)
		if (s->br[i].kind == MIG_BR_ROW && s->br[i].grp == s->sg[j].grp && s->br[i].idx == r)
			a += s->bradj[i];
	return a;
}

/*
 * best[p]: the most value one instance of profile p of GPU j can have with
 * the units in rem (it must hold at least one); NONE where none fits it.
 * Exact, or an upper bound where the packing search is cut. x (may be NULL):
 * [p * nk + k] the units of class k of a real content reaching it (or the
 * best found when cut).
 */
void
mig_price_instances(struct search *s, int j, const int *rem, long double *best, int *x)
{
	const struct sgpu *sg = &s->sg[j];
	const struct mig_gpu *g = sg->g;
	size_t nk = (size_t)s->nk + 1;
	struct pack pk;
	void *buf = xcalloc(nk, 5 * sizeof(int) + sizeof(long double) + sizeof(uint64_t));

	pk.v = buf;
	pk.mem = (uint64_t *)(pk.v + nk);
	pk.k = (int *)(pk.mem + nk);
	pk.need = pk.k + nk;
	pk.maxc = pk.need + nk;
	pk.cur = pk.maxc + nk;
	pk.keep = pk.cur + nk;
	for (int p = 0; p < g->nprofiles; p++) {
		const struct mig_profile *pr = &g->profiles[p];
		long double b = NONE, one = NONE;
		int kb = -1, k1 = -1;

		/* exclusive: the best class that fits */
		for (int k = 0; k < s->nk; k++) {
			long double v;

			if (!rem[k] || sg->small[k] || !(sg->fit[k] >> p & 1))
				continue;
			v = mig_inst_value(s, pr, 1, sg->mem[k]) - s->pi[k] + content_adj(s, j, MIG_BR_EXCL, p, k);
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
		/* shared: small units that fit, the positive ones packed, else the best single one */
		pk.n = 0;
		pk.cap = pr->mem_bytes;
		pk.sms = pr->sms;
		for (int k = 0; k < s->nk; k++) {
			int q;
			long double v;

			if (!sg->small[k] || !rem[k] || sg->mem[k] > pr->mem_bytes || sg->need[k] > pr->sms)
				continue;
			v = item_value(s, sg, k) + content_adj(s, j, MIG_BR_ITEM, p, k);
			if (v > one) {
				one = v;
				k1 = k;
			}
			if (v <= 0)
				continue;
			/* by value per byte, best first */
			for (q = pk.n++; q > 0 && pk.v[q - 1] / (long double)pk.mem[q - 1] < v / (long double)sg->mem[k]; q--) {
				pk.k[q] = pk.k[q - 1];
				pk.v[q] = pk.v[q - 1];
				pk.mem[q] = pk.mem[q - 1];
				pk.need[q] = pk.need[q - 1];
				pk.maxc[q] = pk.maxc[q - 1];
			}
			pk.k[q] = k;
			pk.v[q] = v;
			pk.mem[q] = sg->mem[k];
			pk.need[q] = sg->need[k];
			pk.maxc[q] = rem[k];
		}
		if (k1 < 0) {
			best[p] = b;
			continue;
		}
		{
			long double base = mig_inst_value(s, pr, 0, 0) + content_adj(s, j, MIG_BR_SHARED, p, 0), sh;

			pk.best = 0;
			pk.steps = 0;
			pk.cut = 0;
			memset(pk.cur, 0, sizeof *pk.cur * nk);
			memset(pk.keep, 0, sizeof *pk.keep * nk);
			if (pk.n > 0)
				pack(&pk, 0, 0, 0, 0);
			s->nodes += pk.steps / 4; /* the packings' work counts against the budget */
			if (pk.best > 0) {
				sh = base + (pk.cut ? pack_frac(&pk, 0, pk.cap) : pk.best);
			} else {
				/* no positive unit fits: the least bad single one */
				sh = base + one;
				pk.n = 1;
				pk.k[0] = k1;
				pk.keep[0] = 1;
			}
			if (sh > b) {
				b = sh;
				if (x) {
					memset(x + (size_t)p * (size_t)s->nk, 0, sizeof *x * (size_t)s->nk);
					for (int i = 0; i < pk.n; i++)
						x[(size_t)p * (size_t)s->nk + (size_t)pk.k[i]] = pk.keep[i];
				}
			}
		}
		best[p] = b <= NONE / 2 ? NONE : b + profile_adj(s, j, p);
	}
	free(buf);
}

void
mig_bound_instances(struct search *s, int j, const int *rem, long double *best)
{
	mig_price_instances(s, j, rem, best, NULL);
}

/*
 * h: the best load of GPU j: the best row of its table (or the empty load,
 * 0, where the table has none), or its fixed row; *row gets it (-1: none).
 */
long double
mig_price_gpu(const struct search *s, int j, const long double *best, int *row)
{
	const struct gtable *t = s->sg[j].t;
	long double h = NONE;
	size_t r0 = 0, r1 = t->ngeo;

	*row = -1;
	if (s->fixed[j] >= 0) {
		r0 = (size_t)s->fixed[j];
		r1 = r0 + 1;
	} else if (t->ngeo == 0 || s->fixed[j] == -1) {
		return 0; /* the empty load, no row */
	}
	for (size_t r = r0; r < r1; r++) {
		long double v = -s->co * t->geo[r].ops + row_adj(s, j, (int)r);

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
mig_bound_root(struct search *s, const int *rem)
{
	long double best[MIG_MAX_PROFILES], total = s->cconst;
	int row;

	for (int k = 0; k < s->nk; k++)
		total += s->pi[k] * rem[k];
	for (int j = 0; j < s->ngpus; j++) {
		if (!s->sg[j].twin || s->fixed[j] != -2 || s->fixed[j - 1] != -2) {
			mig_price_instances(s, j, rem, best, NULL);
			s->sg[j].h = mig_price_gpu(s, j, best, &row);
		} else {
			s->sg[j].h = s->sg[j - 1].h;
		}
		total += s->sg[j].h;
	}
	return total;
}
