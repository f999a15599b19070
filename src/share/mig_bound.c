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
 * The best prices are the duals of the configuration LP (one column per GPU
 * load, rows: jobs per class, GPUs per group of identical ones, the earlier
 * levels): solved here by column generation, the columns coming from the
 * same h_g pricing. The LP is in doubles, but its duals are only prices: the
 * bound is recomputed from them with the exact pricing, in long double, so
 * a rounding in the LP can loosen the bound, never break it.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "share/mig_lp.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

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
static void
instance_bounds(struct search *s, int j, const int *rem, long double *best, int *x)
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
	instance_bounds(s, j, rem, best, NULL);
}

/*
 * h: the best load of GPU j: the best row of its table (or the empty load,
 * 0, where the table has none), or its fixed row; *row gets it (-1: none).
 */
static long double
gpu_bound(const struct search *s, int j, const long double *best, int *row)
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
			instance_bounds(s, j, rem, best, NULL);
			s->sg[j].h = gpu_bound(s, j, best, &row);
		} else {
			s->sg[j].h = s->sg[j - 1].h;
		}
		total += s->sg[j].h;
	}
	return total;
}

/* ------------------------------------------------- the configuration LP */

/*
 * A column of the pool: one GPU load's units per class and what it adds to
 * each level, kept across the nodes and levels of one plan (any load of a
 * group is a column of every LP on that group).
 */
#define ATTR_GROUP 0
#define ATTR_ROW 1
#define ATTR_SAT 2
#define ATTR_WASTE 3
#define ATTR_SMS 4
#define ATTR_OPS 5
#define NATTR 6

/*
 * The rows of one LP: units per class (at most hi, or exactly), GPUs per
 * group (exactly), the earlier levels, classes' lows, then the node's other
 * constraints (an upper or exact row each, and a lower one where needed).
 */
struct master {
	int nk, ngroups, nlev, nlow, m;
	int *group;                   /* [ngroups]: its first GPU in search order */
	int *lowk;                    /* [nlow]: the class of each low row */
	int *brrow;                   /* [nbr]: its upper (or exact) row; its low row follows when lo > 0 */
	double *col;                  /* [m] scratch */
};

/*
 * With few classes, a column also keeps what its instances of each profile
 * hold (the proof branches on it): per profile p, at detail(p): units of
 * each class alone in an instance, instances shared, units of each class in
 * shared instances.
 */
#define DETAIL_MAX_CLASSES 64

static int
has_detail(const struct search *s)
{
	return s->nk <= DETAIL_MAX_CLASSES;
}

static size_t
detail(const struct search *s, int p)
{
	return (size_t)s->nk + NATTR + (size_t)p * (2 * (size_t)s->nk + 1);
}

static size_t
pool_width(const struct search *s)
{
	return has_detail(s) ? detail(s, s->maxp) : (size_t)s->nk + NATTR;
}

/* The class of a slot's first unit. */
static int
first_class(const struct search *s, const struct slot *sl)
{
	if (sl->big >= 0)
		return sl->big;
	for (int k = 0; k < s->nk; k++)
		if (sl->cnt[k])
			return k;
	return 0;
}

/* Add a load of group grp (table row: its index, -1 none) to the pool. */
static void
pool_add(struct search *s, int grp, const struct load *ld, const struct sgpu *sg)
{
	size_t w = pool_width(s);
	double *c;

	xgrow(&s->pool, &s->pool_cap, (s->npool + 1) * w, sizeof *s->pool);
	c = s->pool + s->npool++ * w;
	memset(c, 0, sizeof *c * w);
	c[s->nk + ATTR_GROUP] = grp;
	c[s->nk + ATTR_ROW] = ld->x ? (double)(ld->x - sg->t->geo) : -1;
	c[s->nk + ATTR_OPS] = ld->x ? ld->x->ops : 0;
	for (int i = 0; i < ld->nslots; i++) {
		const struct slot *sl = &ld->slot[i];
		const struct mig_profile *pr = &sg->g->profiles[sl->profile];

		if (sl->big >= 0)
			c[sl->big] += 1;
		else
			for (int k = 0; k < s->nk; k++)
				c[k] += sl->cnt[k];
		if (has_detail(s) && sl->nunits > 0) {
			double *d = c + detail(s, sl->profile);

			if (sl->big >= 0) {
				d[sl->big] += 1;
			} else if (sl->nunits == 1 && !sg->small[first_class(s, sl)]) {
				d[first_class(s, sl)] += 1; /* an exclusive unit the pricing put in cnt */
			} else {
				d[s->nk] += 1;
				for (int k = 0; k < s->nk; k++)
					d[s->nk + 1 + k] += sl->cnt[k];
			}
		}
		c[s->nk + ATTR_SAT] += sl->nunits;
		c[s->nk + ATTR_WASTE] += (double)(pr->mem_bytes - sl->mem) / (double)MIG_GIB;
		c[s->nk + ATTR_SMS] += pr->sms;
	}
}

/* What a pool column adds to branching constraint b. */
static double
br_coef(const struct search *s, const struct mig_branch *b, const double *c)
{
	int grp = (int)c[s->nk + ATTR_GROUP], row = (int)c[s->nk + ATTR_ROW];
	const struct sgpu *sg;
	int j = 0;

	if (grp != b->grp)
		return 0;
	if (b->kind == MIG_BR_ROW)
		return row == b->idx;
	if (b->kind == MIG_BR_EXCL)
		return c[detail(s, b->idx) + (size_t)b->k];
	if (b->kind == MIG_BR_SHARED)
		return c[detail(s, b->idx) + (size_t)s->nk];
	if (b->kind == MIG_BR_ITEM)
		return c[detail(s, b->idx) + (size_t)s->nk + 1 + (size_t)b->k];
	if (row < 0)
		return 0;
	while (s->sg[j].grp != grp)
		j++;
	sg = &s->sg[j];
	return (double)(sg->t->geo[row].key >> (4 * b->idx) & 15);
}

/* Pool column c as an LP column of ms; its objective at the level. */
static double
lp_column(const struct search *s, const struct master *ms, const double *c, double *col)
{
	int grp = (int)c[s->nk + ATTR_GROUP];

	memset(col, 0, sizeof *col * (size_t)ms->m);
	for (int k = 0; k < s->nk; k++)
		col[k] = c[k];
	col[ms->nk + grp] = 1;
	for (int l = 0; l < ms->nlev; l++)
		col[ms->nk + ms->ngroups + l] = c[s->nk + ATTR_SAT + l];
	for (int i = 0; i < ms->nlow; i++)
		col[ms->nk + ms->ngroups + ms->nlev + i] = c[ms->lowk[i]];
	for (int i = 0; i < s->nbr; i++) {
		double a = br_coef(s, &s->br[i], c);

		col[ms->brrow[i]] = a;
		if (s->br[i].lo > 0 && s->br[i].lo < s->br[i].hi)
			col[ms->brrow[i] + 1] = a;
	}
	switch (s->lvl) {
	case 1:
		return c[s->nk + ATTR_SAT];
	case 2:
		return -c[s->nk + ATTR_WASTE];
	case 3:
		return -c[s->nk + ATTR_SMS];
	default:
		return -c[s->nk + ATTR_OPS];
	}
}

/* The best load of group grp at the current prices into the pool; its value before the group's dual. */
static long double
price_group(struct search *s, const struct master *ms, int grp, int *x, int *cnt)
{
	int j = ms->group[grp], row;
	long double best[MIG_MAX_PROFILES], h;
	struct load ld;

	instance_bounds(s, j, s->hi, best, x);
	h = gpu_bound(s, j, best, &row);
	memset(&ld, 0, sizeof ld);
	if (row < 0 && s->sg[j].t->ngeo > 0)
		row = (int)(mig_gtable_find(s->sg[j].t, 0) - s->sg[j].t->geo); /* the empty load is the empty row */
	if (row >= 0) {
		const struct geo *g = &s->sg[j].t->geo[row];

		ld.x = g;
		for (int p = 0; p < s->sg[j].g->nprofiles; p++)
			for (int c = (int)(g->key >> (4 * p) & 15); c > 0; c--) {
				struct slot *sl = &ld.slot[ld.nslots];

				sl->profile = p;
				sl->cnt = cnt + (size_t)ld.nslots++ * (size_t)s->nk;
				sl->big = -1;
				sl->nunits = 0;
				sl->mem = 0;
				for (int k = 0; k < s->nk; k++) {
					int n = x[(size_t)p * (size_t)s->nk + (size_t)k];

					sl->cnt[k] = n;
					sl->nunits += n;
					sl->mem += (uint64_t)n * s->sg[j].mem[k];
				}
			}
	}
	pool_add(s, grp, &ld, &s->sg[j]);
	return h;
}

/*
 * A row's multiplier in the Lagrangian from its dual y (times scale),
 * clamped to the sign its sense allows: 'L' (<=) >= 0, 'G' (>=) <= 0 here
 * (returned as the coefficient of the row's sum), 'E' any.
 */
static long double
mult(double y, long double scale, char sense)
{
	long double a = y * scale;

	if (sense == 'L' && a < 0)
		return 0;
	if (sense == 'G' && a > 0)
		return 0;
	return a;
}

/*
 * Prices and multipliers from duals y; scale multiplies them (a phase 1
 * certificate of infeasibility is scaled up: the bound then falls as far as
 * it proves). Each relaxed row A <= b (or >= b, = b) with multiplier u adds
 * u (b - A) to the Lagrangian: -u per unit of A to each load, u b to the
 * constant.
 */
static void
take_duals(struct search *s, const struct master *ms, const struct mig_lp *lp, const double *y, long double scale,
    int objective)
{
	long double ls, lw = 0, lm = 0, *rhs = s->lvl_rhs;
	int base = ms->nk + ms->ngroups;

	s->cconst = 0;
	for (int k = 0; k < s->nk; k++) {
		s->pi[k] = mult(y[k], scale, lp->sense[k]);
		s->cconst += s->pi[k] * s->hi[k];
	}
	for (int i = 0; i < ms->nlow; i++) {
		int k = ms->lowk[i], r = base + ms->nlev + i;
		long double u = mult(y[r], scale, 'G');

		s->pi[k] += u;
		s->cconst += u * s->lo[k];
	}
	/* the class part of the constant is added where rem is known (mig_bound_root) */
	for (int k = 0; k < s->nk; k++)
		s->cconst -= s->pi[k] * s->hi[k];
	ls = ms->nlev > 0 ? -mult(y[base], scale, 'G') : 0;
	if (ms->nlev > 1)
		lw = mult(y[base + 1], scale, 'L');
	if (ms->nlev > 2)
		lm = mult(y[base + 2], scale, 'L');
	s->cs = (s->lvl == 1 && objective) + ls;
	s->cw = (s->lvl == 2 && objective) + lw;
	s->cm = (s->lvl == 3 && objective) + lm;
	s->co = s->lvl == 4 && objective;
	s->cconst += -ls * rhs[0] + lw * rhs[1] + lm * rhs[2];
	s->brconst = s->cconst;
	for (int i = 0; i < s->nbr; i++) {
		const struct mig_branch *b = &s->br[i];
		int r = ms->brrow[i];
		long double u = mult(y[r], scale, lp->sense[r]);

		s->bradj[i] = -u;
		s->cconst += u * b->hi;
		if (b->lo > 0 && b->lo < b->hi) {
			long double v = mult(y[r + 1], scale, 'G');

			s->bradj[i] -= v;
			s->cconst += v * b->lo;
		}
	}
	s->brconst = s->cconst - s->brconst;
}

/*
 * The pool columns a node's LP starts from: the level's first ones (the
 * best plan's loads, the empty loads), and of each group the POOL_KEEP best
 * at the last prices. Any other column the LP needs, the pricing finds
 * again: the choice changes the work, never the bound.
 */
#define POOL_KEEP 24

static void
pool_pick(const struct search *s, const struct master *ms, unsigned char *keep)
{
	size_t w = pool_width(s);
	long double *rv = xcalloc(s->npool + 1, sizeof *rv);

	for (size_t c = 0; c < s->npool; c++) {
		const double *pc = s->pool + c * w;
		long double v = s->cs * pc[s->nk + ATTR_SAT] - s->cw * pc[s->nk + ATTR_WASTE] - s->cm * pc[s->nk + ATTR_SMS] -
		    s->co * pc[s->nk + ATTR_OPS];

		for (int k = 0; k < s->nk; k++)
			v -= s->pi[k] * pc[k];
		rv[c] = v;
		keep[c] = c >= s->pool_level && c < s->pool_level + s->pool_level_n;
	}
	for (int g = 0; g < ms->ngroups; g++)
		for (int n = 0; n < POOL_KEEP; n++) {
			size_t best = s->npool;

			for (size_t c = 0; c < s->npool; c++)
				if (!keep[c] && (int)s->pool[c * w + (size_t)s->nk + ATTR_GROUP] == g && (best == s->npool || rv[c] > rv[best]))
					best = c;
			if (best == s->npool)
				break;
			keep[best] = 1;
		}
	free(rv);
}

void
mig_bound_level_start(struct search *s)
{
	s->pool_level = s->npool;
	s->lvl_rhs[0] = s->bs.satisfied;
	s->lvl_rhs[1] = (long double)s->bs.waste / MIG_GIB;
	s->lvl_rhs[2] = s->bs.sms;
	/* the best plan's loads: a feasible start for the earlier levels' rows; the empty loads */
	for (int j = 0; j < s->ngpus; j++) {
		struct load empty;

		if (s->have)
			pool_add(s, s->sg[j].grp, &s->best[j], &s->sg[j]);
		memset(&empty, 0, sizeof empty);
		if (!s->sg[j].twin && s->sg[j].t->ngeo > 0) {
			empty.x = mig_gtable_find(s->sg[j].t, 0);
			pool_add(s, s->sg[j].grp, &empty, &s->sg[j]);
		} else if (!s->sg[j].twin) {
			pool_add(s, s->sg[j].grp, &empty, &s->sg[j]);
		}
	}
	s->pool_level_n = s->npool - s->pool_level;
}

/* The LP's aggregates at its solution: units per class, instances per group and profile, GPUs per group and row. */
static void
aggregates(const struct search *s, const struct master *ms, const struct mig_lp *lp, const size_t *lp_map,
    struct mig_lpsol *out)
{
	size_t w = pool_width(s);

	memset(out->placed, 0, sizeof *out->placed * (size_t)s->nk);
	out->nterm = 0;
	for (int c = 0; c < lp->n; c++) {
		double v = mig_lp_value(lp, c);
		const double *pc = s->pool + lp_map[c] * w;
		int grp = (int)pc[s->nk + ATTR_GROUP], row = (int)pc[s->nk + ATTR_ROW];

		if (v < 1e-12)
			continue;
		for (int k = 0; k < s->nk; k++)
			out->placed[k] += pc[k] * v;
		xgrow(&out->term, &out->cap, out->nterm + 1, sizeof *out->term);
		out->term[out->nterm].grp = grp;
		out->term[out->nterm].row = row;
		out->term[out->nterm].col = (int)lp_map[c];
		out->term[out->nterm].x = v;
		out->nterm++;
	}
	(void)ms;
}

double
mig_pool_detail(const struct search *s, int col, int kind, int p, int k)
{
	const double *c = s->pool + (size_t)col * pool_width(s);

	if (!has_detail(s))
		return 0;
	if (kind == MIG_BR_EXCL)
		return c[detail(s, p) + (size_t)k];
	if (kind == MIG_BR_SHARED)
		return c[detail(s, p) + (size_t)s->nk];
	return c[detail(s, p) + (size_t)s->nk + 1 + (size_t)k];
}

int
mig_pool_row(const struct search *s, int col)
{
	return (int)s->pool[(size_t)col * pool_width(s) + (size_t)s->nk + ATTR_ROW];
}

double
mig_pool_units(const struct search *s, int col, int k)
{
	return s->pool[(size_t)col * pool_width(s) + (size_t)k];
}

int
mig_pool_has_detail(const struct search *s)
{
	return has_detail(s);
}

int
mig_bound_node(struct search *s, struct mig_lpsol *sol)
{
	struct master ms;
	struct mig_lp lp;
	double *b, *y, *yinf;
	char *sense;
	int *x = xcalloc((size_t)s->nk * MIG_MAX_PROFILES + 1, sizeof *x), ok = 0, infeasible = 0, r;
	int *cnt = xcalloc((size_t)s->nk * MIG_MAX_INST + 1, sizeof *cnt);
	size_t w = pool_width(s), first = s->npool, *lp_map;
	unsigned char *keep = xcalloc(s->npool + 1, 1);
	long pivots = 0;

	memset(&ms, 0, sizeof ms);
	ms.nk = s->nk;
	ms.group = xcalloc((size_t)s->ngpus + 1, sizeof *ms.group);
	ms.lowk = xcalloc((size_t)s->nk + 1, sizeof *ms.lowk);
	ms.brrow = xcalloc((size_t)s->nbr + 1, sizeof *ms.brrow);
	for (int j = 0; j < s->ngpus; j++)
		if (!s->sg[j].twin)
			ms.group[ms.ngroups++] = j;
	ms.nlev = s->lvl - 1 < 3 ? s->lvl - 1 : 3;
	for (int k = 0; k < s->nk; k++)
		if (s->lo[k] > 0 && s->lo[k] < s->hi[k])
			ms.lowk[ms.nlow++] = k;
	r = ms.nk + ms.ngroups + ms.nlev + ms.nlow;
	for (int i = 0; i < s->nbr; i++) {
		ms.brrow[i] = r;
		r += 1 + (s->br[i].lo > 0 && s->br[i].lo < s->br[i].hi);
	}
	ms.m = r;
	ms.col = xcalloc((size_t)ms.m + 1, sizeof *ms.col);
	b = xcalloc((size_t)ms.m + 1, sizeof *b);
	y = xcalloc((size_t)ms.m + 1, sizeof *y);
	yinf = xcalloc((size_t)ms.m + 1, sizeof *yinf);
	sense = xcalloc((size_t)ms.m + 1, 1);
	for (int k = 0; k < s->nk; k++) {
		b[k] = s->hi[k];
		sense[k] = s->lo[k] == s->hi[k] ? 'E' : 'L';
	}
	for (int g = 0; g < ms.ngroups; g++) {
		int n = 1;

		while (ms.group[g] + n < s->ngpus && s->sg[ms.group[g] + n].twin)
			n++;
		b[ms.nk + g] = n - (s->grp_fixed ? s->grp_fixed[g] : 0);
		sense[ms.nk + g] = 'E';
	}
	/* the earlier levels at the best plan's values, loosened by far less than a step: the LP only finds prices */
	for (int l = 0; l < ms.nlev; l++) {
		r = ms.nk + ms.ngroups + l;
		b[r] = (double)s->lvl_rhs[l] + (l == 0 ? -1e-7 : 1e-7 * (1 + fabs((double)s->lvl_rhs[l])));
		sense[r] = l == 0 ? 'G' : 'L';
	}
	for (int i = 0; i < ms.nlow; i++) {
		b[ms.nk + ms.ngroups + ms.nlev + i] = s->lo[ms.lowk[i]];
		sense[ms.nk + ms.ngroups + ms.nlev + i] = 'G';
	}
	for (int i = 0; i < s->nbr; i++) {
		r = ms.brrow[i];
		b[r] = s->br[i].hi;
		sense[r] = s->br[i].lo == s->br[i].hi ? 'E' : 'L';
		if (s->br[i].lo > 0 && s->br[i].lo < s->br[i].hi) {
			b[r + 1] = s->br[i].lo;
			sense[r + 1] = 'G';
		}
	}
	mig_lp_init(&lp, ms.m, b, sense);
	lp_map = xcalloc(s->npool + 2, sizeof *lp_map);
	pool_pick(s, &ms, keep);
	for (size_t c = 0; c < s->npool; c++) {
		double obj;

		if (!keep[c])
			continue;
		obj = lp_column(s, &ms, s->pool + c * w, ms.col);
		lp_map[mig_lp_add(&lp, ms.col, obj)] = c;
	}
	s->nodes += (long)lp.n * lp.m / 16 + (long)s->npool / 4; /* building it */
	for (int it = 0; it < 400; it++) {
		int st = mig_lp_solve(&lp), added = 0;
		long double scale = 1;

		/* the LP's work counts against the budget: a pivot costs about MIG_PIVOT_WORK search nodes */
		s->nodes += (lp.pivots - pivots) * (MIG_PIVOT_WORK * lp.m * (lp.n + lp.m) / 1024 + 1) +
		    ms.ngroups * MIG_PRICE_WORK;
		pivots = lp.pivots;
		if (st == MIG_LP_FAIL)
			break;
		take_duals(s, &ms, &lp, lp.y, 1, st != MIG_LP_INFEASIBLE);
		for (int k = 0; k < ms.m; k++)
			scale += fabs(lp.y[k]);
		for (int g = 0; g < ms.ngroups; g++) {
			long double h = price_group(s, &ms, g, x, cnt);

			if (h - lp.y[ms.nk + g] > 1e-9L * scale) {
				double obj = lp_column(s, &ms, s->pool + (s->npool - 1) * w, ms.col);

				lp_map = xrealloc(lp_map, ((size_t)lp.n + 2) * sizeof *lp_map);
				lp_map[mig_lp_add(&lp, ms.col, obj)] = s->npool - 1; /* phase 1 ignores its objective, phase 2 needs it */
				added++;
			} else {
				s->npool--; /* nothing new */
			}
		}
		if (st == MIG_LP_INFEASIBLE) {
			if (!added) {
				infeasible = 1;
				memcpy(yinf, lp.y, sizeof *yinf * (size_t)ms.m);
				break;
			}
			continue;
		}
		memcpy(y, lp.y, sizeof *y * (size_t)ms.m);
		s->lp_obj = lp.obj;
		ok = 1;
		if (sol)
			aggregates(s, &ms, &lp, lp_map, sol);
		if (!added)
			break;
	}
	(void)first;
	if (infeasible) {
		/* phase 1's duals prove the rows cannot all hold: scaled up, the bound falls below any plan */
		take_duals(s, &ms, &lp, yinf, 1e6L, 0);
		s->cs += s->lvl == 1;
		s->cw += s->lvl == 2;
		s->cm += s->lvl == 3;
		s->co += s->lvl == 4;
	} else if (ok) {
		take_duals(s, &ms, &lp, y, 1, 1);
	} else {
		/* no LP: the objective alone, a weaker bound, still valid */
		for (int k = 0; k < s->nk; k++)
			s->pi[k] = 0;
		for (int i = 0; i < s->nbr; i++)
			s->bradj[i] = 0;
		s->cs = s->lvl == 1;
		s->cw = s->lvl == 2;
		s->cm = s->lvl == 3;
		s->co = s->lvl == 4;
		s->cconst = 0;
		s->brconst = 0;
	}
	s->lp_columns = lp.n;
	s->lp_pivots += lp.pivots;
	s->lp_solves++;
	s->root = mig_bound_root(s, s->hi);
	mig_lp_free(&lp);
	free(ms.group);
	free(ms.lowk);
	free(ms.brrow);
	free(ms.col);
	free(b);
	free(y);
	free(yinf);
	free(sense);
	free(x);
	free(cnt);
	free(keep);
	free(lp_map);
	return infeasible ? MIG_LP_INFEASIBLE : ok ? MIG_LP_OPTIMAL : MIG_LP_FAIL;
}
