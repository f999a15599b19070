/*
 * mig_splitdrop: the bags run (doc/mig.md, "The drop vectors"): where
 * every unit is placed, those of the whole mix; where the mix does not
 * fit, beneath each drop vector (the units left out of each class, which
 * fix the memory placed), the vectors bounded, ordered and tried least
 * bound first until the bound passes the best plan.
 */
#include "share/mig.h"
#include "share/mig_splitbag.h"
#include "util/str.h"

#include <limits.h>
#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

int mig_split_no_bags;
long mig_bag_proofs;
struct mig_score mig_bag_own = {-1, 0, 0, 0};

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

_Static_assert(sizeof ((struct search *)0)->bags_done_d == 2 * MAX_FIELDS, "a drop vector's classes");

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
	struct split *x = r->b->x;

	if (x->aborted)
		return;
	spend(x, 1);
	if (i == r->nk) {
		uint64_t dm = r->b->dm, lb = waste + (dm - (placed + waste) % dm) % dm;

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

/* The drop vectors, and the bags beneath each: 0 every one done, -1 out of work. */
static int
drops_run(struct bags *b, int units, struct mig_score *best, int *found)
{
	struct split *x = b->x;
	struct drops r;
	int room = 0, ret = 0;

	memset(&r, 0, sizeof r);
	r.b = b;
	for (int c = 0; c < x->ne; c++) {
		r.n[r.nk] = x->pe.cap[c];
		r.w[r.nk] = b->efit[c] ? b->ew[c] : 0;
		r.m[r.nk] = x->s->sg[0].mem[x->ecls[c]];
		r.use[0][r.nk] = (double)(r.m[r.nk] + r.w[r.nk]);
		r.use[1][r.nk] = r.use[2][r.nk] = INT_MAX;
		for (int i = 0; i < b->np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->prof[i]];

			if (!(b->efit[c] >> b->prof[i] & 1))
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
		for (int i = 0; i < b->np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->prof[i]];
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
				ab = (b->efit[a] & b->efit[c]) == b->efit[c];     /* a fits wherever c does */
				ca = (b->efit[a] & b->efit[c]) == b->efit[a];
			} else {
				ab = x->sneed[a - x->ne] <= x->sneed[c - x->ne];
				ca = x->sneed[c - x->ne] <= x->sneed[a - x->ne];
			}
			r.easier[a][c] = ab && (!ca || a > c);
		}
	r.cap[0] = (double)b->capmem;
	r.cap[1] = (double)b->capsms;
	r.cap[2] = r.cap[3] = b->sufsl[0];
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
	drops_enum(&r, 0, units - x->S, 0, 0, room, (const double[NRES]){0});
	if (!x->aborted && r.nv > 1)
		qsort(r.v, r.nv, sizeof *r.v, dv_cmp);
	spend(x, (long)r.nv / 4 + 1);
#ifdef MIG_TRACE
	fprintf(stderr, "drops: %zu vectors, work %ld\n", r.nv, x->work);
#endif
	for (size_t i = 0; i < r.nv && !x->aborted; i++) {
		const unsigned char *d = r.v[i].d;
		struct search *s = x->s;
		struct dv done;
		int ec[MAX_FIELDS], sc[MAX_FIELDS];

		if (no_better(x, r.v[i].lb, 0, 0))
			break;
		/* finished by the bags first, against a plan no better than this run's */
		memset(&done, 0, sizeof done);
		done.lb = s->bags_done_lb;
		memcpy(done.d, s->bags_done_d, sizeof done.d);
		if (s->bags_done && dv_cmp(&r.v[i], &done) <= 0)
			continue;
		for (int c = 0; c < x->ne; c++)
			ec[c] = x->pe.cap[c] - d[c];
		for (int a = 0; a < x->nsm; a++)
			sc[a] = x->psm.cap[a] - d[x->ne + a];
		if (mig_bags_units(b, ec, sc) < 0)
			continue;
		b->lo = b->P + r.v[i].lb;
		if (mig_bags_try(b, best, found) < 0) {
			ret = -1;
			break;
		}
		s->bags_done = 1;
		s->bags_done_lb = r.v[i].lb;
		memcpy(s->bags_done_d, d, sizeof s->bags_done_d);
	}
	if (x->aborted)
		ret = -1;
	free(r.v);
	return ret;
}

int
mig_split_bags(struct split *x)
{
	struct bags b;
	int ret = 0, found = 0, units = x->ns, r;
	struct mig_score best = x->inc;

	for (int c = 0; c < x->ne; c++)
		units += x->pe.cap[c];
	if (mig_bags_init(&b, x) < 0) {
		mig_bags_free(&b);
		return 0;
	}
	r = drops_run(&b, units, &best, &found);
	if (r == 0 && !x->aborted) {
		ret = 1;
		mig_bag_proofs++;
		if (found)
			mig_bag_own = best;
	}
#ifdef MIG_TRACE
	fprintf(stderr, "bags: tried %ld (not packed %ld, not held %ld), held %zu, found %d, ret %d, work %ld "
	    "aborted %d; packs: cheap %ld cache %ld slack %ld (work %ld)\n", b.tried, b.nopack, b.nohold, b.nm, found, ret,
	    x->work, x->aborted, b.pcheap, b.pcache, b.pslack, b.pwork);
#endif
	mig_bags_free(&b);
	return ret;
}
