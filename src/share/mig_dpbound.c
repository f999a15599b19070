/*
 * mig_dpbound: what the DP over the GPUs (mig_dp.c) knows of what is still
 * to come, to drop states that cannot end better than the best plan: per
 * unit, the least waste and SMs a unit of each class adds anywhere;
 * Lagrangian bounds (prices per unit of each class, by subgradient steps;
 * valid for any prices, so their rounding only loosens them, by TOL_BYTES);
 * the lattice of the waste of plans that place every unit; and, from
 * mig_dpmem.c, the bounds by the rows' instance memory.
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

/* d->dm: the step of the waste of plans placing every unit (0: none). */
void
mig_dp_lattice(struct dp *d)
{
	const struct search *s = d->s;
	uint64_t g = 0;
	int all = 0;

	for (int k = 0; k < s->nk; k++)
		all += s->k[k].n;
	d->dm = 0;
	if (d->target != all)
		return;
	for (int k = 0; k < s->nk; k++)
		for (int j = 1; j < s->ngpus; j++)
			if (s->sg[j].mem[k] != s->sg[0].mem[k])
				return;
	for (int j = 0; j < s->ngpus; j++)
		for (int p = 0; p < s->sg[j].g->nprofiles; p++)
			g = mig_gcd64(g, s->sg[j].g->profiles[p].mem_bytes);
	d->dm = g;
}


void
mig_dp_bounds_init(struct dp *d)
{
	struct search *s = d->s;
	int nk = s->nk;

	long work = 0;

	d->mt = mig_dp_no_memtab ? NULL : mig_dp_memtab(s, &work);
	mig_dp_spend(d, work);

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
	mig_order_by(d->wordr, d->wmin, nk, 0);
	mig_order_by(d->sordr, d->smin, nk, 0);
}

/* The least the cheapest `need` of the units left[] add, by per-unit bounds lb over order (NONE: too few). */
static uint64_t
least(const struct dp *d, const int *left, int need, const uint64_t *lb, const int *order)
{
	uint64_t sum = 0;

	for (int i = 0; i < d->vc.nk && need > 0; i++) {
		int k = order[i], c = left[k] < need ? left[k] : need;

		if (lb[k] == NONE)
			break;
		sum += (uint64_t)c * lb[k];
		need -= c;
	}
	return need > 0 ? NONE : sum;
}

/* -------------------------------------------------------------------- Lagrangian bounds */

/*
 * The least prices pr[] of `need` units of those left (left[k] of class k),
 * order: pr ascending; g (may be NULL) gets the units taken of each class
 * added (their part of a subgradient).
 */
static double
cheapest(const struct dp *d, const int *left, int need, const double *pr, const int *order, double *g)
{
	double sum = 0;

	for (int i = 0; i < d->vc.nk && need > 0; i++) {
		int k = order[i], c = left[k] < need ? left[k] : need;

		sum += c * pr[k];
		if (g)
			g[k] += c;
		need -= c;
	}
	return sum;
}

/*
 * Subgradient steps towards a target (the best plan's value): prices cur
 * (n of them) move along g by the Polyak step, halved after 5 steps without
 * a better bound; the best bound's prices are kept.
 */
struct subgrad {
	double *cur, *g, best, scale;
	int n, stall;
};

static void
subgrad_init(struct subgrad *sg, int n)
{
	sg->cur = xcalloc((size_t)n + 1, sizeof *sg->cur);
	sg->g = xcalloc((size_t)n + 1, sizeof *sg->g);
	sg->best = -1e300;
	sg->scale = 2;
	sg->n = n;
	sg->stall = 0;
}

static void
subgrad_free(struct subgrad *sg)
{
	free(sg->cur);
	free(sg->g);
}

/* The bound at sg->cur was L, its subgradient sg->g: keep the prices in keep if best, then step (0: no step left). */
static int
subgrad_step(struct subgrad *sg, double L, double target, double *keep)
{
	double norm = 0;

	if (L > sg->best + 1e-9 * (1 + target)) {
		sg->best = L;
		memcpy(keep, sg->cur, sizeof *sg->cur * (size_t)sg->n);
		sg->stall = 0;
	} else if (++sg->stall >= 5) {
		sg->scale /= 2;
		sg->stall = 0;
	}
	for (int k = 0; k < sg->n; k++)
		norm += sg->g[k] * sg->g[k];
	if (norm == 0 || target - L <= 0)
		return 0;
	for (int k = 0; k < sg->n; k++)
		sg->cur[k] += sg->scale * (target - L) / norm * sg->g[k];
	return 1;
}

/* left[k] = the units of class k: nothing placed yet. */
static void
all_left(const struct dp *d, int *left)
{
	for (int k = 0; k < d->vc.nk; k++)
		left[k] = d->s->k[k].n;
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

/*
 * A move's own value: its waste in bytes (which 0), or its SMs plus mu per
 * GiB of its waste (which 1: the SMs of plans wasting no more than the best
 * one, that constraint priced at mu >= 0).
 */
static double
own(const struct move *m, int which, double mu)
{
	return which ? m->sms + mu * ((double)m->waste / (double)MIG_GIB) : (double)m->waste;
}

/*
 * L(pr) = sum over GPUs of the least (own - pr . v) of a move, plus the
 * cheapest S units at pr: a lower bound on the waste (SMs) of every plan
 * placing S units. Prices by subgradient steps towards the best plan's value;
 * h[j] gets the suffix sums at the best prices found.
 *
 * A twin takes the GPU before it's best move: in a full run its moves are
 * a copy of that GPU's, so this is exact. In a local run (mig_dp_improve)
 * one of two twins may be kept (its one move) and the other free (moves
 * for the units left): there it is not a bound but a guess, which prunes
 * toward loads like the kept one. A local run only offers plans, so no
 * proof rests on it; each GPU's own moves instead (measured on 540 mixes
 * of the bench's generator) gave 27 plans worse and 17 better, 3 fewer
 * proven: the guess is kept.
 */
static void
lagrange(struct dp *d, const struct gmap *gm, int which, double target, const double *start, double *pr, double *h,
    int *order)
{
	const struct search *s = d->s;
	int nk = s->nk, G = s->ngpus;
	int *left = xcalloc((size_t)nk + 1, sizeof *left);
	struct subgrad sg;

	/* each GPU's moves' counts unpacked once (the steps read them LAG_ITERS times) */
	double **cf = xcalloc((size_t)G + 1, sizeof *cf);

	for (int j = 0; j < G; j++) {
		cf[j] = xcalloc(gm[j].n * (size_t)nk + 1, sizeof *cf[j]);
		for (size_t e = 0; e < gm[j].n; e++)
			for (int k = 0; k < nk; k++)
				cf[j][e * (size_t)nk + (size_t)k] = mig_dp_field(&d->vc, gm[j].m[e].v, k);
	}
	/* prices per class, and for the SMs (which 1) mu at [nk]: nk + 1 of them */
	subgrad_init(&sg, nk + 1);
	if (start)
		memcpy(sg.cur, start, sizeof *sg.cur * (size_t)nk);
	all_left(d, left);
	for (int it = 0; it < LAG_ITERS && !mig_dp_spend(d, 1); it++) {
		double *cur = sg.cur, *gk = sg.g;
		double L = which ? -cur[nk] * (double)d->inc.waste / (double)MIG_GIB : 0;

		for (int k = 0; k <= nk; k++)
			gk[k] = 0;
		if (which)
			gk[nk] = -(double)d->inc.waste / (double)MIG_GIB;
		double hb = 1e300;
		const struct move *mb = NULL;
		const double *cb = NULL;

		for (int j = 0; j < G; j++) {
			/* a twin has the GPU before it's moves, so the same best one */
			if (!s->sg[j].twin) {
				hb = 1e300;
				mb = NULL;
				cb = NULL;
				mig_dp_spend(d, (long)gm[j].n * nk / 64 + 1);
			}
			for (size_t e = 0; !s->sg[j].twin && e < gm[j].n; e++) {
				const double *c = &cf[j][e * (size_t)nk];
				double r = own(&gm[j].m[e], which, cur[nk]);

				for (int k = 0; k < nk; k++)
					r -= cur[k] * c[k];
				if (r < hb) {
					hb = r;
					mb = &gm[j].m[e];
					cb = c;
				}
			}
			L += hb;
			for (int k = 0; cb && k < nk; k++)
				gk[k] -= cb[k];
			if (which && mb)
				gk[nk] += (double)mb->waste / (double)MIG_GIB;
		}
		price_order(d, cur, order);
		L += cheapest(d, left, d->target, cur, order, gk);
		if (!subgrad_step(&sg, L, target, pr))
			break;
		cur[nk] = which && cur[nk] > 0 ? cur[nk] : 0; /* mu >= 0 */
	}
	/* suffix sums at the best prices */
	h[G] = 0;
	double hb = 1e300;

	for (int j = G - 1, twin = 0; j >= 0; twin = s->sg[j].twin, j--) {
		if (twin) {
			h[j] = h[j + 1] + (gm[j].n ? hb : 0); /* the GPU after it is its twin: the same moves */
			continue;
		}
		hb = 1e300;
		for (size_t e = 0; e < gm[j].n; e++) {
			const double *c = &cf[j][e * (size_t)nk];
			double r = own(&gm[j].m[e], which, pr[nk]);

			for (int k = 0; k < nk; k++)
				r -= pr[k] * c[k];
			hb = r < hb ? r : hb;
		}
		h[j] = h[j + 1] + (gm[j].n ? hb : 0);
	}
	price_order(d, pr, order);
	subgrad_free(&sg);
	for (int j = 0; j < G; j++)
		free(cf[j]);
	free(cf);
	free(left);
}


/* The units of each class a state (biased key) has not placed. */
void
mig_dp_lefts(const struct dp *d, uint64_t key, int *left)
{
	for (int k = 0; k < d->vc.nk; k++)
		left[k] = d->s->k[k].n - (mig_dp_field(&d->vc, key, k) - mig_dp_field(&d->vc, d->vc.bias, k));
}


/*
 * The least GPUs j.. add to a state whose units left[] are not placed and
 * that needs `need` more: *lw in bytes of waste, *ls in 1/1024 SMs, each
 * the larger of the per-unit and the Lagrangian bound. 0: no plan completes it.
 */
int
mig_dp_rest_bounds(const struct dp *d, const int *left, int need, int j, uint64_t waste, uint64_t *lw, uint64_t *ls)
{
	double w, m;

	if ((*lw = least(d, left, need, d->wmin, d->wordr)) == NONE ||
	    (*ls = least(d, left, need, d->smin, d->sordr)) == NONE)
		return 0;
	w = d->hw[j] + cheapest(d, left, need, d->pw, d->pwordr, NULL) - TOL_BYTES;
	if (d->pl) {
		double w2 = d->hl[j] + cheapest(d, left, need, d->pl, d->plordr, NULL) - TOL_BYTES;

		w = w2 > w ? w2 : w;
	}
	m = (d->hs[j] + cheapest(d, left, need, d->ps, d->psordr, NULL) -
	    d->ps[d->vc.nk] * (((double)d->inc.waste - (double)waste) / (double)MIG_GIB)) * 1024 - 1;
	if (w > (double)*lw)
		*lw = (uint64_t)w;
	if (m > (double)*ls)
		*ls = (uint64_t)m;
	return mig_dp_no_memtab || mig_dp_by_memory(d, left, need, j, waste, lw, ls);
}

/* The moves no plan strictly better than the best one can make, dropped (at the prices pw, ps). */
void
mig_dp_filter_moves(struct dp *d, struct gmap *gm)
{
	const struct search *s = d->s;
	int G = s->ngpus, nk = s->nk;
	int left[nk + 1];

	all_left(d, left);
	for (int j = 0; j < G; j++) {
		double hj = d->hw[j] - d->hw[j + 1], sj = d->hs[j] - d->hs[j + 1];
		double lw = d->hw[0] + cheapest(d, left, d->target, d->pw, d->pwordr, NULL) - hj;
		double ls = d->hs[0] + cheapest(d, left, d->target, d->ps, d->psordr, NULL) - sj -
		    d->ps[nk] * ((double)d->inc.waste / (double)MIG_GIB);
		size_t w = 0;

		for (size_t e = 0; e < gm[j].n; e++) {
			const struct move *m = &gm[j].m[e];
			double rw = (double)m->waste, rs = own(m, 1, d->ps[nk]);
			uint64_t bw, bs;

			for (int k = 0; k < nk; k++) {
				rw -= d->pw[k] * mig_dp_field(&d->vc, m->v, k);
				rs -= d->ps[k] * mig_dp_field(&d->vc, m->v, k);
			}
			bw = lw + rw - TOL_BYTES > 0 ? (uint64_t)(lw + rw - TOL_BYTES) : 0;
			bs = (ls + rs) * 1024 - 1 > 0 ? (uint64_t)((ls + rs) * 1024 - 1) : 0;
			if (!mig_dp_no_better(d, bw, bs, m->ops) || m->units == 0)
				gm[j].m[w++] = *m;
		}
		gm[j].n = w;
	}
}

/* The prices, and the moves no strictly better plan can make dropped. */
void
mig_dp_prices(struct dp *d, struct gmap *gm)
{
	const struct search *s = d->s;
	int G = s->ngpus, nk = s->nk;

	d->pw = xcalloc((size_t)nk * 2 + 2, sizeof *d->pw);
	d->ps = d->pw + nk + 1;
	d->hw = xcalloc((size_t)G * 2 + 2, sizeof *d->hw);
	d->hs = d->hw + G + 1;
	d->pwordr = xcalloc((size_t)nk * 2 + 2, sizeof *d->pwordr);
	d->psordr = d->pwordr + nk + 1;
	lagrange(d, gm, 0, (double)d->inc.waste, d->priced ? d->pp : NULL, d->pw, d->hw, d->pwordr);
	if (s->dp_lp_prices) {
		d->pl = xcalloc((size_t)nk + 2, sizeof *d->pl);
		d->hl = xcalloc((size_t)G + 2, sizeof *d->hl);
		d->plordr = xcalloc((size_t)nk + 2, sizeof *d->plordr);
		lagrange(d, gm, 0, (double)d->inc.waste, s->dp_lp_prices, d->pl, d->hl, d->plordr);
	}
	lagrange(d, gm, 1, (double)d->inc.sms, NULL, d->ps, d->hs, d->psordr);
#ifdef MIG_TRACE
	int left[nk + 1];

	all_left(d, left);
	fprintf(stderr, "dp: S %d waste %.3f GiB >= %.3f, SMs %d >= %.1f\n", d->target, d->inc.waste / 1073741824.0,
	    (d->hw[0] + cheapest(d, left, d->target, d->pw, d->pwordr, NULL)) / 1073741824.0, d->inc.sms,
	    d->hs[0] + cheapest(d, left, d->target, d->ps, d->psordr, NULL));
#endif
	mig_dp_filter_moves(d, gm);
}

/*
 * The first prices, before the moves exist: the relaxation in which each
 * instance of a row takes its best content on its own (no class counted
 * within the GPU), so GPU j scores h_j(pr) = min(0, the least over its
 * table's rows of sum count_p * c_p), c_p the least (waste - pr . v) of a
 * content of profile p; L0 = sum h_j + the cheapest S units at pr bounds
 * the waste of every plan (weaker than the moves' bound, but it prunes
 * while they are built). Subgradient steps towards the best plan's waste.
 */
void
mig_dp_preprice(struct dp *d, struct build *bl)
{
	const struct search *s = d->s;
	int G = s->ngpus, nk = s->nk;
	double target = (double)d->inc.waste;
	int *left = xcalloc((size_t)nk + 1, sizeof *left), *order = xcalloc((size_t)nk + 1, sizeof *order);
	struct subgrad sg;

	d->pp = xcalloc((size_t)nk + (size_t)G + 1 + (size_t)G * MIG_MAX_PROFILES, sizeof *d->pp);
	d->hq = d->pp + nk;
	d->cbest = d->hq + G + 1;
	subgrad_init(&sg, nk);
	if (s->dp_lp_prices)
		memcpy(sg.cur, s->dp_lp_prices, sizeof *sg.cur * (size_t)nk);
	all_left(d, left);
	for (int it = 0; it <= PRE_ITERS && !d->aborted; it++) {
		/* the last round only evaluates the best prices */
		const double *pr = it == PRE_ITERS ? d->pp : sg.cur;
		double *gk = sg.g, L = 0;

		for (int k = 0; k < nk; k++)
			gk[k] = 0;
		double c[MIG_MAX_PROFILES], hb = 0;
		const struct item *arg[MIG_MAX_PROFILES];
		const struct geo *xb = NULL;

		for (int j = 0; j < G; j++) {
			const struct build *b = &bl[j];
			const struct mig_gpu *g = s->sg[j].g;
			long cost = 1;

			/* a twin has the GPU before it's table and contents: the same c, hb, xb */
			for (int p = 0; !s->sg[j].twin && p < g->nprofiles; p++) {
				c[p] = 1e300;
				arg[p] = NULL;
				for (size_t o = 0; o < b->nopt[p]; o++) {
					const struct item *x = &b->opt[p][o];
					double r = (double)(g->profiles[p].mem_bytes - x->mem);

					for (int k = 0; k < nk; k++)
						r -= pr[k] * mig_dp_field(&d->vc, x->v, k);
					if (r < c[p]) {
						c[p] = r;
						arg[p] = x;
					}
				}
				cost += (long)b->nopt[p] * nk / 16;
			}
			if (!s->sg[j].twin)
				hb = 0, xb = NULL;
			for (size_t r = 0; !s->sg[j].twin && r < b->t->ngeo; r++) {
				const struct geo *x = &b->t->geo[r];
				double v = 0;

				for (int p = 0; p < g->nprofiles && v < 1e299; p++) {
					int cnt = (int)(x->key >> (4 * p) & 15);

					if (cnt)
						v = arg[p] ? v + cnt * c[p] : 1e300;
				}
				if (v < hb) {
					hb = v;
					xb = x;
				}
			}
			if (!s->sg[j].twin)
				mig_dp_spend(d, cost + (long)b->t->ngeo * g->nprofiles / 16);
			L += hb;
			if (it == PRE_ITERS) {
				d->hq[j] = hb;
				for (int p = 0; p < g->nprofiles; p++)
					d->cbest[j * MIG_MAX_PROFILES + p] = arg[p] ? c[p] : 1e300;
				continue;
			}
			for (int p = 0; xb && p < g->nprofiles; p++) {
				int cnt = (int)(xb->key >> (4 * p) & 15);

				for (int k = 0; cnt && k < nk; k++)
					gk[k] -= cnt * mig_dp_field(&d->vc, arg[p]->v, k);
			}
		}
		price_order(d, pr, order);
		L += cheapest(d, left, d->target, pr, order, it == PRE_ITERS ? NULL : gk);
		if (it == PRE_ITERS) {
			d->L0 = L;
			break;
		}
		if (!subgrad_step(&sg, L, target, d->pp))
			it = PRE_ITERS - 1; /* no better step: evaluate the best prices */
	}
	d->priced = !d->aborted;
	subgrad_free(&sg);
	free(left);
	free(order);
}


static int
move_rc_cmp(const void *a, const void *b)
{
	const struct move *x = a, *y = b;

	if (x->rc != y->rc)
		return x->rc < y->rc ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

/*
 * Each GPU's moves by their reduced waste rc = waste - pw . v, least first.
 * For a state with units left[] and `need` to go at GPU j, every plan
 * through it and move m wastes at least base + m.rc, base = its waste +
 * hw[j + 1] + the cheapest `need` of left[] at pw (the cheapest `need`
 * of the units left are at most the cheapest need - |v| of those left
 * after m plus the prices of m's units): so once base + m.rc passes the
 * best plan's waste, so do all the moves after m, unlooked at.
 */
void
mig_dp_order_moves(struct dp *d, struct gmap *gm)
{
	const struct search *s = d->s;

	for (int j = 0; j < s->ngpus; j++) {
		for (size_t e = 0; e < gm[j].n; e++) {
			struct move *m = &gm[j].m[e];

			m->rc = (double)m->waste;
			for (int k = 0; k < s->nk; k++)
				m->rc -= d->pw[k] * mig_dp_field(&d->vc, m->v, k);
		}
		mig_dp_spend(d, (long)gm[j].n / 4 + 1);
		if (gm[j].n > 1)
			qsort(gm[j].m, gm[j].n, sizeof *gm[j].m, move_rc_cmp);
	}
}

/* base above less the state's waste, and less TOL_BYTES against the prices' rounding. */
double
mig_dp_state_base(const struct dp *d, const int *left, int need, int j)
{
	return d->hw[j + 1] + cheapest(d, left, need, d->pw, d->pwordr, NULL) - TOL_BYTES;
}
