/*
 * mig_bagdrop: the bags run (doc/mig.md, "How it works"), for plans placing
 * S units: where S is every unit, those of the whole mix; else beneath each
 * drop vector (the units left out of each class, which fix the memory
 * placed), the vectors bounded, ordered and tried least bound first until
 * the bound passes the best plan.
 */
#include "share/mig.h"
#include "share/mig_bag.h"
#include "util/str.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Where the mix does not fit: a drop vector (the units of each class left
 * out, S placed in all) fixes the memory placed, so beneath each one the
 * bags are those of a mix that fits. Its waste is at least its exclusive
 * units' least waste, and congruent to minus the memory placed modulo the
 * profiles' gcd (a bag's memory is a multiple of it): the vectors go by
 * that bound, least first, until it passes the best plan's waste.
 */
#define NRES 4                /* the GPUs' room a drop vector's units must fit: memory, SMs, slices twice */

struct drops {
	struct bags *b;
	int nk;                       /* classes: exclusive ones, then small ones */
	int n[2 * MAX_FIELDS];
	uint64_t w[2 * MAX_FIELDS], m[2 * MAX_FIELDS]; /* a unit's least waste, its memory */
	/*
	 * [q][k]: what a unit of class k takes at least of resource q (its
	 * instance's memory; SMs; compute slices, a small unit its part of an
	 * instance by memory and by SMs); cap[q]: what all GPUs' rows have
	 */
	double use[NRES][2 * MAX_FIELDS], cap[NRES];
	/* [i]: classes i.. by w, and by use[q], most first; what all their units waste, use */
	int wsort[2 * MAX_FIELDS][2 * MAX_FIELDS], usort[NRES][2 * MAX_FIELDS][2 * MAX_FIELDS];
	uint64_t wall[2 * MAX_FIELDS + 1];
	double uall[NRES][2 * MAX_FIELDS + 1];
	int d[2 * MAX_FIELDS];
	/*
	 * [a][c]: a unit of class a can stand for one of class c in any plan,
	 * at the same value (the same memory, and it fits wherever c's does),
	 * and goes first (ties broken by index): a vector that leaves out a unit
	 * of a while it keeps one of c is matched by the one that leaves out the
	 * unit of c instead, so only vectors that leave out all of c first are
	 * tried
	 */
	unsigned char easier[2 * MAX_FIELDS][2 * MAX_FIELDS];
	struct dv {
		uint64_t lb;          /* its bound */
		unsigned char d[2 * MAX_FIELDS]; /* the units it leaves out of each class */
	} *v;
	size_t nv, vcap;
};

#define MAX_DROPS 100000      /* drop vectors within the best plan's waste, before giving up */

/* Classes i.. in order of val, most first, into out. */
static void
drops_sort(const struct drops *r, int i, const double *val, int *out)
{
	int n = 0;

	for (int k = i; k < r->nk; k++) {
		int j = n++;

		for (; j > 0 && val[out[j - 1]] < val[k]; j--)
			out[j] = out[j - 1];
		out[j] = k;
	}
}

/* The least waste the kept units of classes i.. add, with left of them still to drop (the most wasteful). */
static uint64_t
drops_rest(const struct drops *r, int i, int left)
{
	uint64_t cut = 0;

	for (int a = 0; a < r->nk - i && left > 0; a++) {
		int k = r->wsort[i][a], take = r->n[k] < left ? r->n[k] : left;

		cut += (uint64_t)take * r->w[k];
		left -= take;
	}
	return r->wall[i] - cut;
}

/* The least of resource q the kept units of classes i.. take, with left of them still to drop. */
static double
drops_use(const struct drops *r, int q, int i, int left)
{
	double cut = 0;

	for (int a = 0; a < r->nk - i && left > 0; a++) {
		int k = r->usort[q][i][a], take = r->n[k] < left ? r->n[k] : left;

		cut += take * r->use[q][k];
		left -= take;
	}
	return r->uall[q][i] - cut;
}

static void
drops_enum(struct drops *r, int i, int left, uint64_t waste, uint64_t placed, int room, const double *used)
{
	struct bagrun *x = r->b->x;

	if (x->aborted)
		return;
	spend(x, 1);
	if (i == r->nk) {
		uint64_t dm = r->b->gp.dm, lb = waste + (dm - (placed + waste) % dm) % dm;

		/* its instances' memory, a multiple of dm, within what the GPUs have */
		if (left || no_better(x, lb, 0, 0) || (double)(placed + lb) > r->cap[0] * (1 + ROUNDING))
			return;
		if (r->nv >= MAX_DROPS) {
			x->aborted = 1;
			return;
		}
		xgrow(&r->v, &r->vcap, r->nv + 1, sizeof *r->v);
		memset(&r->v[r->nv], 0, sizeof r->v[r->nv]);
		r->v[r->nv].lb = lb;
		for (int k = 0; k < r->nk; k++)
			r->v[r->nv].d[k] = (unsigned char)r->d[k];
		r->nv++;
		return;
	}
	room -= r->n[i];
	for (int d = left < r->n[i] ? left : r->n[i]; d >= 0 && left - d <= room; d--) {
		uint64_t w = waste + (uint64_t)(r->n[i] - d) * r->w[i];
		double u[NRES];
		int fits = 1;

		if (no_better(x, w + drops_rest(r, i + 1, left - d), 0, 0))
			continue;
		/* no unit of a class left out while a harder one of the same memory is kept */
		for (int j = 0; j < i && fits; j++)
			fits = !(r->easier[i][j] && d > 0 && r->d[j] < r->n[j]) && !(r->easier[j][i] && r->d[j] > 0 && d < r->n[i]);
		if (!fits)
			continue;
		/* the units kept so far and the least the rest keep take no more than the GPUs have */
		for (int q = 0; q < NRES && fits; q++) {
			u[q] = used[q] + (r->n[i] - d) * r->use[q][i];
			fits = u[q] + drops_use(r, q, i + 1, left - d) <= r->cap[q] * (1 + ROUNDING) + ROUNDING;
		}
		if (!fits)
			continue;
		r->d[i] = d;
		drops_enum(r, i + 1, left - d, w, placed + (uint64_t)(r->n[i] - d) * r->m[i], room, u);
	}
	r->d[i] = 0;
}

static int
dv_cmp(const void *pa, const void *pb)
{
	const struct dv *a = pa, *c = pb;

	if (a->lb != c->lb)
		return a->lb < c->lb ? -1 : 1;
	return memcmp(a->d, c->d, sizeof a->d);
}

/* The first waste at least w (and lb) that a bag's memory, a multiple of dm, allows above the memory placed. */
static uint64_t
start(const struct bags *b, uint64_t lb, uint64_t w)
{
	uint64_t dm = b->gp.dm;

	if (w <= lb)
		return lb;
	return w + (dm - (b->u.P + w) % dm) % dm;
}

/* The lesser of two (waste, SMs) bounds, in the objective's order. */
static struct mig_score
least(struct mig_score a, uint64_t w, int sms)
{
	if (w < a.waste || (w == a.waste && sms < a.sms)) {
		a.waste = w;
		a.sms = sms;
	}
	return a;
}

/*
 * The drop vectors, and the bags beneath each, their waste from wlb up: 0
 * every one done (or, x->first, a plan found), -1 out of work, *lb then the
 * least waste and SMs a plan of the vectors not done can have.
 */
static int
drops_run(struct bags *b, int units, uint64_t wlb, struct mig_score *lb, int *found)
{
	struct bagrun *x = b->x;
	struct drops r;
	int room = 0, ret = 0;

	memset(&r, 0, sizeof r);
	r.b = b;
	for (int c = 0; c < x->ne; c++) {
		r.n[r.nk] = x->pe.cap[c];
		r.w[r.nk] = b->u.efit[c] ? b->u.ew[c] : 0;
		r.m[r.nk] = x->s->sg[0].mem[x->ecls[c]];
		r.use[0][r.nk] = (double)(r.m[r.nk] + r.w[r.nk]);
		r.use[1][r.nk] = r.use[2][r.nk] = INT_MAX;
		for (int i = 0; i < b->gp.np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->gp.prof[i]];

			if (!(b->u.efit[c] >> b->gp.prof[i] & 1))
				continue;
			r.use[1][r.nk] = pr->sms < r.use[1][r.nk] ? pr->sms : r.use[1][r.nk];
			r.use[2][r.nk] = pr->slices < r.use[2][r.nk] ? pr->slices : r.use[2][r.nk];
		}
		r.use[3][r.nk] = r.use[2][r.nk];
		r.nk++;
	}
	for (int a = 0; a < x->nsm; a++) {
		r.n[r.nk] = x->psm.cap[a];
		r.w[r.nk] = 0;
		r.m[r.nk] = x->smem[a];
		r.use[0][r.nk] = (double)x->smem[a];
		r.use[1][r.nk] = x->sneed[a];
		r.use[2][r.nk] = r.use[3][r.nk] = INT_MAX;
		for (int i = 0; i < b->gp.np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->gp.prof[i]];
			double by_mem = pr->slices * ((double)x->smem[a] / (double)pr->mem_bytes);
			double by_sms = pr->slices * ((double)x->sneed[a] / pr->sms);

			if (pr->mem_bytes < x->smem[a] || pr->sms < x->sneed[a])
				continue;
			r.use[2][r.nk] = by_mem < r.use[2][r.nk] ? by_mem : r.use[2][r.nk];
			r.use[3][r.nk] = by_sms < r.use[3][r.nk] ? by_sms : r.use[3][r.nk];
		}
		r.nk++;
	}
	/* which class's units stand for which's */
	for (int a = 0; a < r.nk; a++)
		for (int c = 0; c < r.nk; c++) {
			int ea = a < x->ne, ec = c < x->ne, ab, ca;

			if (a == c || ea != ec || r.m[a] != r.m[c])
				continue;
			if (ea) {
				ab = (b->u.efit[a] & b->u.efit[c]) == b->u.efit[c];     /* a fits wherever c does */
				ca = (b->u.efit[a] & b->u.efit[c]) == b->u.efit[a];
			} else {
				ab = x->sneed[a - x->ne] <= x->sneed[c - x->ne];
				ca = x->sneed[c - x->ne] <= x->sneed[a - x->ne];
			}
			r.easier[a][c] = ab && (!ca || a > c);
		}
	r.cap[0] = (double)b->gp.capmem;
	r.cap[1] = (double)b->gp.capsms;
	r.cap[2] = r.cap[3] = b->gp.sufsl[0];
	for (int i = r.nk - 1; i >= 0; i--) {
		double wv[2 * MAX_FIELDS];

		r.wall[i] = r.wall[i + 1] + (uint64_t)r.n[i] * r.w[i];
		for (int k = 0; k < r.nk; k++)
			wv[k] = (double)r.w[k];
		drops_sort(&r, i, wv, r.wsort[i]);
		for (int q = 0; q < NRES; q++) {
			r.uall[q][i] = r.uall[q][i + 1] + r.n[i] * r.use[q][i];
			drops_sort(&r, i, r.use[q], r.usort[q][i]);
		}
	}
	for (int k = 0; k < r.nk; k++)
		room += r.n[k];
	*lb = least(x->inc, wlb, 0);
	drops_enum(&r, 0, units - x->S, 0, 0, room, (const double[NRES]){0});
	if (!x->aborted && r.nv > 1)
		qsort(r.v, r.nv, sizeof *r.v, dv_cmp);
	spend(x, (long)r.nv / 4 + 1);
	for (size_t i = 0; i < r.nv && !x->aborted && !(x->first && *found); i++) {
		const unsigned char *d = r.v[i].d;
		int ec[MAX_FIELDS], sc[MAX_FIELDS];

		if (no_better(x, r.v[i].lb, 0, 0))
			break;
		for (int c = 0; c < x->ne; c++)
			ec[c] = x->pe.cap[c] - d[c];
		for (int a = 0; a < x->nsm; a++)
			sc[a] = x->psm.cap[a] - d[x->ne + a];
		if (mig_bags_units(b, ec, sc) < 0)
			continue;
		b->lo = b->u.P + start(b, r.v[i].lb, wlb);
		b->at_mem = b->lo;
		b->at_sms = 0;
		if (mig_bags_try(b, found) < 0) {
			/* this vector's plans come from the bag tried on, the later vectors' from their bounds */
			*lb = least(x->inc, b->at_mem - b->u.P, b->at_sms);
			if (i + 1 < r.nv)
				*lb = least(*lb, r.v[i + 1].lb > wlb ? r.v[i + 1].lb : wlb, 0);
			break;
		}
	}
	if (x->aborted)
		ret = -1;
	free(r.v);
	return ret;
}

int
mig_bags_run(struct search *s, int S, long limit, int first, uint64_t wlb, struct mig_score *lb)
{
	struct bagrun x;
	struct bags b;
	int ret = 0, found = 0, units;

	*lb = (struct mig_score){S, wlb, 0, 0}; /* nothing ruled out but what wlb says */
	if (mig_bagrun_init(&x, s, S, limit, first) == 0) {
		units = x.ns;
		for (int c = 0; c < x.ne; c++)
			units += x.pe.cap[c];
		if (mig_bags_init(&b, &x) == 0)
			ret = (drops_run(&b, units, wlb, lb, &found) == 0 && !x.aborted) || (first && found);
		mig_bags_free(&b);
	}
	s->nodes += x.work;
	return ret;
}
