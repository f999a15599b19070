/*
 * mig_dp: the exact plan by dynamic programming over the GPUs (doc/mig.md,
 * "The search"), tried once the satisfied level is proven.
 *
 * Everything a plan is scored on adds up over the GPUs, and a GPU's load is
 * worth what its table row and its units per class make it, however the
 * units sit in the row's instances: the waste is the row's instance memory
 * less the units' memory, the SMs the row's, the operations the row's. So
 * the best plan is a shortest path. A state is the units of each class
 * placed on the GPUs so far; GPU j moves it by any vector of units some row
 * of its table can hold, at the best (waste, SMs, operations) of such rows;
 * each state keeps its best value (sums keep the lexicographic order, so
 * the best path to a state is made of best paths). A plan must place the
 * proven most units, S, so states with more are dropped, and so is every
 * state that cannot end strictly better than the best plan known (its
 * value so far plus the least the units it still needs can add, each a
 * lower bound of its own part of the order). The last layer's best state
 * is a better plan; an empty last layer proves the best plan optimal.
 *
 * Exact whatever it meets, and fast where the classes are few enough for
 * the states to be few; past its share of the work it gives up and the
 * branch and price (mig_prove.c) goes on.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

#define NONE UINT64_MAX
#define DP_UNITS 2          /* the DP's steps per work unit: a move tried costs about a quarter of a search node */
#define MAX_OPTIONS 20000  /* contents of one instance before the DP gives up */

/* ------------------------------------------------------------------ a hash from packed vectors */

struct hmap {
	uint64_t *key;
	int *val;
	size_t cap, n;
};

static void
hm_init(struct hmap *h, size_t want)
{
	h->cap = 64;
	while (h->cap < 2 * want)
		h->cap *= 2;
	h->key = xcalloc(h->cap, sizeof *h->key);
	memset(h->key, 0xff, h->cap * sizeof *h->key);
	h->val = xcalloc(h->cap, sizeof *h->val);
	h->n = 0;
}

static void
hm_free(struct hmap *h)
{
	free(h->key);
	free(h->val);
	memset(h, 0, sizeof *h);
}

static size_t
hm_slot(const struct hmap *h, uint64_t k)
{
	size_t i = (size_t)((k * 0x9E3779B97F4A7C15ULL) >> 17) & (h->cap - 1);

	while (h->key[i] != NONE && h->key[i] != k)
		i = (i + 1) & (h->cap - 1);
	return i;
}

/* The value slot of key k; a new key gets -1. */
static int *
hm_get(struct hmap *h, uint64_t k)
{
	size_t i;

	if (2 * (h->n + 1) > h->cap) {
		struct hmap g;

		hm_init(&g, h->cap);
		for (size_t a = 0; a < h->cap; a++)
			if (h->key[a] != NONE) {
				size_t b = hm_slot(&g, h->key[a]);

				g.key[b] = h->key[a];
				g.val[b] = h->val[a];
				g.n++;
			}
		hm_free(h);
		*h = g;
	}
	i = hm_slot(h, k);
	if (h->key[i] == NONE) {
		h->key[i] = k;
		h->val[i] = -1;
		h->n++;
	}
	return &h->val[i];
}

/* ------------------------------------------------------------------------ the DP's own state */

/*
 * Units per class packed in one word: class k in a field of b[k] + 1 bits
 * at off[k]. A state holds each count biased by c[k] = 2^b[k] - 1 - n[k],
 * so that adding a plain vector sets the field's top (guard) bit exactly
 * when the count passes n[k]: one addition and one mask per move.
 */
struct vec {
	int nk;
	int *off, *b;
	uint64_t bias, guard;
};

/* A vector of units some load (or instance) of a GPU holds. */
struct item {
	uint64_t v;                   /* plain packed counts */
	int units;
	uint64_t mem;                 /* their memory on that GPU */
};

/* GPU j's moves: each vector with the best row that holds it. */
struct move {
	uint64_t v;
	int units;
	uint64_t waste;
	int sms, ops;
	const struct geo *x;          /* NULL: the empty load */
};

struct gmap {
	struct move *m;
	size_t n, cap;
	int maxunits;
};

struct state {
	uint64_t key;                 /* biased */
	int units;
	uint64_t waste;
	int sms, ops;
	int prev;                     /* its state in the layer before */
	int move;                     /* GPU's move that led here */
};

struct layer {
	struct state *st;
	size_t n, cap;
};

struct dp {
	struct search *s;
	struct vec vc;
	int target;                   /* S: the units every plan of the level places */
	struct mig_score inc;         /* the best plan: only strictly better ones are kept */
	long work, limit;
	int aborted;
	/* lower bounds of what a unit still to place adds (over all GPUs) */
	uint64_t *wmin;               /* [k] waste; NONE: placed nowhere */
	uint64_t *smin;               /* [k] SMs, in 1/1024 */
	int *wordr, *sordr;           /* classes by wmin, by smin */
	/*
	 * Lagrangian bounds (prices pw, ps per unit of each class, for the
	 * waste and for the SMs): whatever GPUs j.. add is at least hw[j]
	 * (hs[j]) plus the prices of the units they place (the cheapest
	 * `need` of those left), for any prices; the prices only make it tight.
	 */
	double *pw, *ps, *hw, *hs;
	int *pwordr, *psordr;
};

static int
field(const struct vec *vc, uint64_t key, int k)
{
	return (int)((key >> vc->off[k]) & (((uint64_t)1 << vc->b[k]) - 1));
}

static int
vec_init(struct vec *vc, const struct search *s)
{
	int at = 0;

	vc->nk = s->nk;
	vc->off = xcalloc((size_t)s->nk * 2 + 1, sizeof *vc->off);
	vc->b = vc->off + s->nk;
	vc->bias = vc->guard = 0;
	for (int k = 0; k < s->nk; k++) {
		int b = 1;

		while ((1L << b) - 1 < s->k[k].n)
			b++;
		if (at + b + 1 > 64)
			return -1;
		vc->off[k] = at;
		vc->b[k] = b;
		vc->bias += ((((uint64_t)1 << b) - 1) - (uint64_t)s->k[k].n) << at;
		vc->guard |= (uint64_t)1 << (at + b);
		at += b + 1;
	}
	return 0;
}

/* Is (w, m, o) with m in 1/1024 SMs at least the best plan's, in the objective's order? */
static int
no_better(const struct dp *d, uint64_t w, uint64_t m, int o)
{
	uint64_t im = (uint64_t)d->inc.sms * 1024;

	if (w != d->inc.waste)
		return w > d->inc.waste;
	if (m != im)
		return m > im;
	return o >= d->inc.ops;
}

static int
spend(struct dp *d, long w)
{
	d->work += w;
	if (d->work > d->limit)
		d->aborted = 1;
	return d->aborted;
}

/* ------------------------------------------------------------------------------- GPU j's moves */

/* Every content one instance of profile p of GPU j can have: one exclusive unit, or shared units. */
static void
packs(struct dp *d, int j, const struct mig_profile *pr, int k, uint64_t v, int units, uint64_t mem, int need,
    struct item **out, size_t *n, size_t *cap)
{
	const struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];

	if (d->aborted)
		return;
	if (k == s->nk) {
		/* an instance wasting more than the best plan does in all is in no better plan */
		if (units > 0 && pr->mem_bytes - mem <= d->inc.waste) {
			if (*n >= MAX_OPTIONS) {
				d->aborted = 1;
				return;
			}
			xgrow(out, cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = (struct item){v, units, mem};
		}
		return;
	}
	packs(d, j, pr, k + 1, v, units, mem, need, out, n, cap);
	if (!sg->small[k])
		return;
	for (int c = 1; c <= s->k[k].n && units + c <= d->target; c++) {
		if (mem + (uint64_t)c * sg->mem[k] > pr->mem_bytes || need + c * sg->need[k] > pr->sms)
			break;
		packs(d, j, pr, k + 1, v + ((uint64_t)c << d->vc.off[k]), units + c, mem + (uint64_t)c * sg->mem[k],
		    need + c * sg->need[k], out, n, cap);
	}
}

static void
options(struct dp *d, int j, int p, struct item **out, size_t *n)
{
	const struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (int k = 0; k < s->nk; k++)
		if (s->k[k].n > 0 && (sg->fit[k] >> p & 1) && sg->g->profiles[p].mem_bytes - sg->mem[k] <= d->inc.waste) {
			xgrow(out, &cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = (struct item){(uint64_t)1 << d->vc.off[k], 1, sg->mem[k]};
		}
	packs(d, j, &sg->g->profiles[p], 0, 0, 0, 0, 0, out, n, &cap);
}

struct build {
	struct dp *d;
	int j;
	const struct gtable *t;
	struct item *opt[MIG_MAX_PROFILES];
	size_t nopt[MIG_MAX_PROFILES];
	int count[MIG_MAX_PROFILES];
	struct gmap *g;
	struct hmap idx;              /* vector -> its move */
};

/* Vectors cur (biased: their counts past n[k] show) held by a row of key with mem, sms: moves. */
static void
row_moves(struct build *b, const struct item *cur, size_t ncur, const struct geo *x, uint64_t mem, int sms)
{
	struct dp *d = b->d;
	int ops = x ? x->ops : 0;

	for (size_t i = 0; i < ncur; i++) {
		uint64_t w = mem - cur[i].mem, v = cur[i].v - d->vc.bias;
		int *at;
		struct move *m;

		if (no_better(d, w, (uint64_t)sms * 1024, ops))
			continue;
		at = hm_get(&b->idx, v);
		if (*at < 0) {
			xgrow(&b->g->m, &b->g->cap, b->g->n + 1, sizeof *b->g->m);
			*at = (int)b->g->n++;
			b->g->m[*at] = (struct move){v, cur[i].units, w, sms, ops, x};
			if (cur[i].units > b->g->maxunits)
				b->g->maxunits = cur[i].units;
			continue;
		}
		m = &b->g->m[*at];
		if (w < m->waste || (w == m->waste && (sms < m->sms || (sms == m->sms && ops < m->ops))))
			*m = (struct move){v, cur[i].units, w, sms, ops, x};
	}
}

/*
 * The rows of GPU j's table as a tree (a row with one more instance of
 * profile q >= the last added is its child; a sub-row of a row is a row):
 * the vectors a row holds are its parent's plus one content of q's.
 */
static void
rows(struct build *b, int p0, uint64_t key, const struct item *cur, size_t ncur, uint64_t mem, int sms)
{
	struct dp *d = b->d;
	const struct mig_gpu *g = d->s->sg[b->j].g;

	for (int q = p0; q < g->nprofiles && !d->aborted; q++) {
		const struct mig_profile *pr = &g->profiles[q];
		uint64_t nkey = key + ((uint64_t)1 << (4 * q));
		const struct geo *x;
		struct item *nxt = NULL;
		size_t nn = 0, cap = 0;
		struct hmap seen;

		if (b->count[q] >= 15 || b->nopt[q] == 0 || !(x = mig_gtable_find(b->t, nkey)))
			continue;
		hm_init(&seen, ncur);
		for (size_t i = 0; i < ncur && !spend(d, (long)b->nopt[q] / 4 + 1); i++)
			for (size_t o = 0; o < b->nopt[q]; o++) {
				uint64_t v = cur[i].v + b->opt[q][o].v;
				int units = cur[i].units + b->opt[q][o].units;
				uint64_t m = cur[i].mem + b->opt[q][o].mem;
				int *at;

				/* past n[k], past S, or wasting more than the best plan already (waste only grows) */
				if ((v & d->vc.guard) || units > d->target ||
				    no_better(d, mem + pr->mem_bytes - m, (uint64_t)(sms + pr->sms) * 1024, -1))
					continue;
				at = hm_get(&seen, v);
				if (*at >= 0)
					continue;
				xgrow(&nxt, &cap, nn + 1, sizeof *nxt);
				*at = (int)nn;
				nxt[nn++] = (struct item){v, units, m};
			}
		hm_free(&seen);
		if (!d->aborted && nn > 0) {
			b->count[q]++;
			row_moves(b, nxt, nn, x, mem + pr->mem_bytes, sms + pr->sms);
			rows(b, q, nkey, nxt, nn, mem + pr->mem_bytes, sms + pr->sms);
			b->count[q]--;
		}
		free(nxt);
	}
}

static void
gpu_moves(struct dp *d, int j, struct gmap *g)
{
	struct build b;
	struct item zero = {d->vc.bias, 0, 0};

	memset(&b, 0, sizeof b);
	b.d = d;
	b.j = j;
	b.t = d->s->sg[j].t;
	b.g = g;
	hm_init(&b.idx, 256);
	for (int p = 0; p < d->s->sg[j].g->nprofiles && !d->aborted; p++)
		options(d, j, p, &b.opt[p], &b.nopt[p]);
	row_moves(&b, &zero, 1, NULL, 0, 0);
	if (!d->aborted)
		rows(&b, 0, 0, &zero, 1, 0, 0);
	for (int p = 0; p < MIG_MAX_PROFILES; p++)
		free(b.opt[p]);
	hm_free(&b.idx);
}

/* ---------------------------------------------------------------- bounds on what is still to come */

static void
bounds_init(struct dp *d)
{
	struct search *s = d->s;
	int nk = s->nk;

	d->wmin = xcalloc((size_t)nk * 2 + 1, sizeof *d->wmin);
	d->smin = d->wmin + nk;
	d->wordr = xcalloc((size_t)nk * 2 + 1, sizeof *d->wordr);
	d->sordr = d->wordr + nk;
	for (int k = 0; k < nk; k++) {
		d->wmin[k] = d->smin[k] = NONE;
		for (int j = 0; j < s->ngpus; j++) {
			const struct sgpu *sg = &s->sg[j];

			for (int p = 0; p < sg->g->nprofiles; p++) {
				const struct mig_profile *pr = &sg->g->profiles[p];
				uint64_t w, m;

				if (sg->fit[k] >> p & 1) {
					w = pr->mem_bytes - sg->mem[k];
					m = (uint64_t)pr->sms * 1024;
				} else if (sg->small[k] && sg->mem[k] <= pr->mem_bytes && sg->need[k] <= pr->sms) {
					/* shared: an instance's SMs are at least its units' memory shares of them */
					w = 0;
					long double f = (long double)pr->sms * 1024 * sg->mem[k] / pr->mem_bytes;

					m = f >= 1 ? (uint64_t)f - 1 : 0; /* rounded down, and one less against rounding */
				} else
					continue;
				if (w < d->wmin[k])
					d->wmin[k] = w;
				if (m < d->smin[k])
					d->smin[k] = m;
			}
		}
		d->wordr[k] = d->sordr[k] = k;
	}
	for (int a = 1; a < nk; a++)
		for (int b = a; b > 0 && d->wmin[d->wordr[b]] < d->wmin[d->wordr[b - 1]]; b--) {
			int t = d->wordr[b];

			d->wordr[b] = d->wordr[b - 1];
			d->wordr[b - 1] = t;
		}
	for (int a = 1; a < nk; a++)
		for (int b = a; b > 0 && d->smin[d->sordr[b]] < d->smin[d->sordr[b - 1]]; b--) {
			int t = d->sordr[b];

			d->sordr[b] = d->sordr[b - 1];
			d->sordr[b - 1] = t;
		}
}

/* The least the cheapest `need` of the units left in key (biased) add, by per-unit bounds lb over order. */
static uint64_t
least(const struct dp *d, uint64_t key, int need, const uint64_t *lb, const int *order)
{
	uint64_t sum = 0;

	for (int i = 0; i < d->vc.nk && need > 0; i++) {
		int k = order[i], left, c;

		if (lb[k] == NONE)
			break;
		left = d->s->k[k].n - (field(&d->vc, key, k) - (int)(((d->vc.bias >> d->vc.off[k])) &
		    (((uint64_t)1 << d->vc.b[k]) - 1)));
		c = left < need ? left : need;
		sum += (uint64_t)c * lb[k];
		need -= c;
	}
	return need > 0 ? NONE : sum;
}

/* ------------------------------------------------------------------------- the plan it found */

/* Units rem[] into the instances from i on of GPU j's row x, each holding something. */
static int
assign(struct dp *d, int j, struct load *ld, int i, int *rem, int k, long *steps)
{
	struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];
	struct slot *sl = &ld->slot[i];
	const struct mig_profile *pr;

	if (++*steps > 1000000)
		return 0;
	if (i == ld->nslots) {
		for (int c = 0; c < s->nk; c++)
			if (rem[c])
				return 0;
		return 1;
	}
	pr = &sg->g->profiles[sl->profile];
	if (k < 0) {
		/* a new instance: one exclusive unit, or shared units (k from 0) */
		for (int c = 0; c < s->nk; c++)
			if (rem[c] > 0 && (sg->fit[c] >> sl->profile & 1)) {
				memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
				sl->big = c;
				sl->nunits = 1;
				sl->mem = sg->mem[c];
				sl->need = sg->need[c];
				rem[c]--;
				if (assign(d, j, ld, i + 1, rem, -1, steps))
					return 1;
				rem[c]++;
			}
		memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
		sl->big = -1;
		sl->nunits = 0;
		sl->mem = 0;
		sl->need = 0;
		return assign(d, j, ld, i, rem, 0, steps);
	}
	if (k == s->nk)
		return sl->nunits > 0 && assign(d, j, ld, i + 1, rem, -1, steps);
	if (sg->small[k])
		for (int c = rem[k]; c >= 1; c--) {
			if (sl->mem + (uint64_t)c * sg->mem[k] > pr->mem_bytes || sl->need + c * sg->need[k] > pr->sms)
				continue;
			sl->cnt[k] = c;
			sl->nunits += c;
			sl->mem += (uint64_t)c * sg->mem[k];
			sl->need += c * sg->need[k];
			rem[k] -= c;
			if (assign(d, j, ld, i, rem, k + 1, steps))
				return 1;
			rem[k] += c;
			sl->cnt[k] = 0;
			sl->nunits -= c;
			sl->mem -= (uint64_t)c * sg->mem[k];
			sl->need -= c * sg->need[k];
		}
	return assign(d, j, ld, i, rem, k + 1, steps);
}

static int
load_of(struct dp *d, int j, const struct move *m, int *left)
{
	struct search *s = d->s;
	struct load *ld = &s->cur[j];
	int rem[s->nk + 1];
	long steps = 0;

	for (int k = 0; k < s->nk; k++) {
		rem[k] = field(&d->vc, m->v, k);
		left[k] -= rem[k];
	}
	ld->x = m->x;
	ld->nslots = m->x ? m->x->n : 0;
	for (int i = 0; i < ld->nslots; i++)
		ld->slot[i].profile = s->sg[j].t->cand[m->x->cand[i]].profile;
	return assign(d, j, ld, 0, rem, -1, &steps);
}


/* -------------------------------------------------------------------- Lagrangian bounds */

/* The least prices pr[] of `need` units of those left (left[k] of class k), order: pr ascending. */
static double
cheapest(const struct dp *d, const int *left, int need, const double *pr, const int *order)
{
	double sum = 0;

	for (int i = 0; i < d->vc.nk && need > 0; i++) {
		int k = order[i], c = left[k] < need ? left[k] : need;

		sum += c * pr[k];
		need -= c;
	}
	return sum;
}

static void
price_order(const struct dp *d, const double *pr, int *order)
{
	for (int k = 0; k < d->vc.nk; k++)
		order[k] = k;
	for (int a = 1; a < d->vc.nk; a++)
		for (int b = a; b > 0 && pr[order[b]] < pr[order[b - 1]]; b--) {
			int t = order[b];

			order[b] = order[b - 1];
			order[b - 1] = t;
		}
}

/* A move's own value: its waste (which 0) or its SMs (which 1). */
static double
own(const struct move *m, int which)
{
	return which ? (double)m->sms : (double)m->waste;
}

/*
 * L(pr) = sum over GPUs of the least (own - pr . v) of a move, plus the
 * cheapest S units at pr: a lower bound on the waste (SMs) of every plan
 * placing S units. Prices by subgradient steps towards the best plan's value;
 * h[j] gets the suffix sums at the best prices found.
 */
static void
lagrange(struct dp *d, const struct gmap *gm, int which, double target, double *pr, double *h, int *order)
{
	const struct search *s = d->s;
	int nk = s->nk, G = s->ngpus;
	double *cur = xcalloc((size_t)nk + 1, sizeof *cur), *gk = xcalloc((size_t)nk + 1, sizeof *gk);
	double best = -1e300, scale = 2;
	int *left = xcalloc((size_t)nk + 1, sizeof *left), stall = 0;

	for (int k = 0; k < nk; k++)
		left[k] = s->k[k].n;
	for (int it = 0; it < 150 && !spend(d, 1); it++) {
		double L = 0, norm = 0;
		int need = d->target;

		for (int k = 0; k < nk; k++)
			gk[k] = 0;
		for (int j = 0; j < G; j++) {
			double hb = 1e300;
			const struct move *mb = NULL;

			spend(d, (long)gm[j].n * nk / 64 + 1);
			for (size_t e = 0; e < gm[j].n; e++) {
				const struct move *m = &gm[j].m[e];
				double r = own(m, which);

				for (int k = 0; k < nk; k++)
					r -= cur[k] * field(&d->vc, m->v, k);
				if (r < hb) {
					hb = r;
					mb = m;
				}
			}
			L += hb;
			for (int k = 0; mb && k < nk; k++)
				gk[k] -= field(&d->vc, mb->v, k);
		}
		price_order(d, cur, order);
		L += cheapest(d, left, need, cur, order);
		for (int i = 0; i < nk && need > 0; i++) {
			int k = order[i], c = left[k] < need ? left[k] : need;

			gk[k] += c;
			need -= c;
		}
		if (L > best + 1e-9 * (1 + target)) {
			best = L;
			memcpy(pr, cur, sizeof *cur * (size_t)nk);
			stall = 0;
		} else if (++stall >= 5) {
			scale /= 2;
			stall = 0;
		}
		for (int k = 0; k < nk; k++)
			norm += gk[k] * gk[k];
		if (norm == 0 || target - L <= 0)
			break;
		for (int k = 0; k < nk; k++)
			cur[k] += scale * (target - L) / norm * gk[k];
	}
	/* suffix sums at the best prices */
	h[G] = 0;
	for (int j = G - 1; j >= 0; j--) {
		double hb = 1e300;

		for (size_t e = 0; e < gm[j].n; e++) {
			double r = own(&gm[j].m[e], which);

			for (int k = 0; k < nk; k++)
				r -= pr[k] * field(&d->vc, gm[j].m[e].v, k);
			hb = r < hb ? r : hb;
		}
		h[j] = h[j + 1] + (gm[j].n ? hb : 0);
	}
	price_order(d, pr, order);
	free(cur);
	free(gk);
	free(left);
}


/* The units of each class a state (biased key) has not placed. */
static void
lefts(const struct dp *d, uint64_t key, int *left)
{
	for (int k = 0; k < d->vc.nk; k++)
		left[k] = d->s->k[k].n - (field(&d->vc, key, k) - field(&d->vc, d->vc.bias, k));
}

#define TOL_BYTES 4096.0 /* against the prices' rounding: a bound loosened by 4 KiB */

/* Raise *lw (bytes), *ls (1/1024 SMs) to the Lagrangian bounds of what GPUs j.. add to state key. */
static void
rest_bounds(const struct dp *d, uint64_t key, int need, int j, uint64_t *lw, uint64_t *ls)
{
	int left[d->vc.nk + 1];
	double w, m;

	lefts(d, key, left);
	w = d->hw[j] + cheapest(d, left, need, d->pw, d->pwordr) - TOL_BYTES;
	m = (d->hs[j] + cheapest(d, left, need, d->ps, d->psordr)) * 1024 - 1;
	if (w > (double)*lw)
		*lw = (uint64_t)w;
	if (m > (double)*ls)
		*ls = (uint64_t)m;
}

/* The prices, and the moves no strictly better plan can make dropped. */
static void
prices(struct dp *d, struct gmap *gm)
{
	const struct search *s = d->s;
	int G = s->ngpus, nk = s->nk;
	int left[nk + 1];

	d->pw = xcalloc((size_t)nk * 2 + 2, sizeof *d->pw);
	d->ps = d->pw + nk + 1;
	d->hw = xcalloc((size_t)G * 2 + 2, sizeof *d->hw);
	d->hs = d->hw + G + 1;
	d->pwordr = xcalloc((size_t)nk * 2 + 2, sizeof *d->pwordr);
	d->psordr = d->pwordr + nk + 1;
	lagrange(d, gm, 0, (double)d->inc.waste, d->pw, d->hw, d->pwordr);
	lagrange(d, gm, 1, (double)d->inc.sms, d->ps, d->hs, d->psordr);
	for (int k = 0; k < nk; k++)
		left[k] = s->k[k].n;
	for (int j = 0; j < G; j++) {
		double hj = d->hw[j] - d->hw[j + 1], sj = d->hs[j] - d->hs[j + 1];
		double lw = d->hw[0] + cheapest(d, left, d->target, d->pw, d->pwordr) - hj;
		double ls = d->hs[0] + cheapest(d, left, d->target, d->ps, d->psordr) - sj;
		size_t w = 0;

		for (size_t e = 0; e < gm[j].n; e++) {
			const struct move *m = &gm[j].m[e];
			double rw = (double)m->waste, rs = m->sms;
			uint64_t bw, bs;

			for (int k = 0; k < nk; k++) {
				rw -= d->pw[k] * field(&d->vc, m->v, k);
				rs -= d->ps[k] * field(&d->vc, m->v, k);
			}
			bw = lw + rw - TOL_BYTES > 0 ? (uint64_t)(lw + rw - TOL_BYTES) : 0;
			bs = (ls + rs) * 1024 - 1 > 0 ? (uint64_t)((ls + rs) * 1024 - 1) : 0;
			if (!no_better(d, bw, bs, m->ops) || m->units == 0)
				gm[j].m[w++] = *m;
		}
		gm[j].n = w;
	}
}

/* ---------------------------------------------------------------------------------- the DP */

static void
push(struct layer *l, struct hmap *h, const struct state *st)
{
	int *at = hm_get(h, st->key);
	struct state *o;

	if (*at < 0) {
		xgrow(&l->st, &l->cap, l->n + 1, sizeof *l->st);
		*at = (int)l->n;
		l->st[l->n++] = *st;
		return;
	}
	o = &l->st[*at];
	if (st->waste < o->waste || (st->waste == o->waste && (st->sms < o->sms || (st->sms == o->sms && st->ops < o->ops))))
		*o = *st;
}

/*
 * Plans placing exactly s->bs.satisfied units (the proven most), at most
 * limit work: 1 the best plan is now proven optimal (replaced by a better
 * one the DP found), 0 gave up.
 */
int
mig_dp_run(struct search *s, long limit)
{
	struct dp d;
	struct gmap *gm = xcalloc((size_t)s->ngpus + 1, sizeof *gm);
	struct layer *ly = xcalloc((size_t)s->ngpus + 1, sizeof *ly);
	int *restu = xcalloc((size_t)s->ngpus + 1, sizeof *restu), ret = 0;

	memset(&d, 0, sizeof d);
	d.s = s;
	d.target = s->bs.satisfied;
	d.inc = s->bs;
	d.limit = limit * DP_UNITS;
	if (!s->have || vec_init(&d.vc, s) < 0)
		goto out;
	bounds_init(&d);
	for (int j = 0; j < s->ngpus && !d.aborted; j++) {
		if (s->sg[j].twin) {
			/* the same moves as the GPU before it */
			gm[j] = gm[j - 1];
			gm[j].m = xcalloc(gm[j].n + 1, sizeof *gm[j].m);
			memcpy(gm[j].m, gm[j - 1].m, gm[j].n * sizeof *gm[j].m);
			gm[j].cap = gm[j].n;
		} else
			gpu_moves(&d, j, &gm[j]);
	}
	if (!d.aborted)
		prices(&d, gm);
	for (int j = s->ngpus - 1; j >= 0; j--)
		restu[j] = restu[j + 1] + gm[j].maxunits;
	if (!d.aborted) {
		struct hmap h;

		hm_init(&h, 1);
		push(&ly[0], &h, &(struct state){d.vc.bias, 0, 0, 0, 0, -1, -1});
		hm_free(&h);
	}
	for (int j = 0; j < s->ngpus && !d.aborted; j++) {
		struct hmap h;

		hm_init(&h, ly[j].n * 4);
		for (size_t a = 0; a < ly[j].n && !spend(&d, (long)gm[j].n / 4 + 1); a++) {
			const struct state *st = &ly[j].st[a];

			for (size_t e = 0; e < gm[j].n; e++) {
				const struct move *m = &gm[j].m[e];
				struct state nx;
				int need;
				uint64_t lw, ls;

				nx.key = st->key + m->v;
				nx.units = st->units + m->units;
				if ((nx.key & d.vc.guard) || nx.units > d.target || nx.units + restu[j + 1] < d.target)
					continue;
				nx.waste = st->waste + m->waste;
				nx.sms = st->sms + m->sms;
				nx.ops = st->ops + m->ops;
				if (no_better(&d, nx.waste, (uint64_t)nx.sms * 1024, nx.ops))
					continue;
				need = d.target - nx.units;
				if (need > 0) {
					if ((lw = least(&d, nx.key, need, d.wmin, d.wordr)) == NONE ||
					    (ls = least(&d, nx.key, need, d.smin, d.sordr)) == NONE)
						continue;
					rest_bounds(&d, nx.key, need, j + 1, &lw, &ls);
					if (no_better(&d, nx.waste + lw, (uint64_t)nx.sms * 1024 + ls, nx.ops))
						continue;
				}
				nx.prev = (int)a;
				nx.move = (int)e;
				push(&ly[j + 1], &h, &nx);
			}
		}
		hm_free(&h);
	}
	s->nodes += d.work / DP_UNITS;
#ifdef MIG_TRACE
	{
		fprintf(stderr, "dp: work %ld of %ld aborted %d moves", d.work, d.limit, d.aborted);
		for (int j = 0; j < s->ngpus; j++)
			fprintf(stderr, " %zu", gm[j].n);
		fprintf(stderr, " states");
		for (int j = 0; j <= s->ngpus; j++)
			fprintf(stderr, " %zu", ly[j].n);
		fprintf(stderr, "\n");
	}
#endif
	if (d.aborted)
		goto out;
	ret = 1;
	{
		const struct layer *last = &ly[s->ngpus];
		int best = -1;

		for (size_t a = 0; a < last->n; a++) {
			const struct state *st = &last->st[a], *b = best >= 0 ? &last->st[best] : NULL;

			if (st->units != d.target)
				continue;
			if (!b || st->waste < b->waste ||
			    (st->waste == b->waste && (st->sms < b->sms || (st->sms == b->sms && st->ops < b->ops))))
				best = (int)a;
		}
		if (best >= 0) {
			int left[s->nk + 1], *lo = s->lo, *hi = s->hi, zero[s->nk + 1], all[s->nk + 1];

			for (int k = 0; k < s->nk; k++) {
				left[k] = all[k] = s->k[k].n;
				zero[k] = 0;
			}
			for (int j = s->ngpus - 1; j >= 0 && ret; j--) {
				const struct state *st = &ly[j + 1].st[best];

				ret = load_of(&d, j, &gm[j].m[st->move], left);
				best = st->prev;
			}
			if (ret) {
				s->lo = zero;
				s->hi = all;
				mig_search_offer_cur(s, left);
				s->lo = lo;
				s->hi = hi;
			}
		}
	}
out:
	for (int j = 0; j <= s->ngpus; j++) {
		free(gm[j].m);
		free(ly[j].st);
	}
	free(gm);
	free(ly);
	free(restu);
	free(d.vc.off);
	free(d.wmin);
	free(d.wordr);
	free(d.pw);
	free(d.hw);
	free(d.pwordr);
	return ret;
}
