/*
 * mig_prove: proving a MIG plan optimal, one level of the objective at a
 * time (doc/mig.md, "The search"): most units satisfied, then least waste,
 * then fewest SMs, then fewest operations, each level over the plans that
 * reach the optimum of the levels before it.
 *
 * A level is a branch and bound on how many units of each class the plan
 * places (lo[k] <= placed[k] <= hi[k]). Each node is bounded by its
 * configuration LP (mig_bound.c); a node whose bound cannot beat the best
 * plan is dropped, one whose LP places a fractional number of some class is
 * split on it (placed <= floor, placed >= ceil: every plan of the node is in
 * one child), and one whose LP places whole numbers of every class is
 * searched plan by plan (mig_search.c) with that LP's prices. Nodes go best
 * bound first. The level is proven when no node is left; the budget running
 * out first leaves the largest bound of the nodes left as the gap.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "share/mig_lp.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* cc -DMIG_TRACE: the proof's nodes on stderr */
#ifdef MIG_TRACE
#define TRACE(...) fprintf(stderr, __VA_ARGS__)
#else
#define TRACE(...) ((void)0)
#endif

/* The root's search over loads gets 1 / this of what is left of the budget. */
#define MIG_ROOT_SEARCH_SHARE 8

struct node {
	long double bound;            /* its parent's: no plan of the node is worth more */
	int *lo, *hi;                 /* units per class */
	struct mig_branch *br;        /* the other constraints */
	int nbr;
};

struct open {
	struct node *v;
	size_t n, cap;
	int nk;
};

static void
push(struct open *o, long double bound, const int *lo, const int *hi, const struct mig_branch *br, int nbr,
    const struct mig_branch *more)
{
	struct node *x;

	xgrow(&o->v, &o->cap, o->n + 1, sizeof *o->v);
	x = &o->v[o->n++];
	x->bound = bound;
	x->lo = xcalloc((size_t)o->nk * 2 + 1, sizeof *x->lo);
	x->hi = x->lo + o->nk;
	memcpy(x->lo, lo, sizeof *lo * (size_t)o->nk);
	memcpy(x->hi, hi, sizeof *hi * (size_t)o->nk);
	x->nbr = nbr + (more != NULL);
	x->br = xcalloc((size_t)x->nbr + 1, sizeof *x->br);
	if (nbr > 0)
		memcpy(x->br, br, sizeof *br * (size_t)nbr);
	if (more)
		x->br[nbr] = *more;
}

static void
node_free(struct node *x)
{
	free(x->lo);
	free(x->br);
}

/* The node to work on: the last pushed (a dive: plans come early), or the best bound when it has none to beat. */
static struct node
pop(struct open *o, int best_first)
{
	size_t b = o->n - 1;
	struct node x;

	for (size_t i = 0; best_first && i < o->n; i++)
		if (o->v[i].bound > o->v[b].bound)
			b = i;
	x = o->v[b];
	o->v[b] = o->v[--o->n];
	return x;
}

static double
frac(double v)
{
	double f = v - floor(v);

	return f < 0.5 ? f : 1 - f;
}

/* The LP's GPUs of group grp with row row, and its instances of profile p there. */
static double
rows_of(const struct mig_lpsol *sol, int grp, int row)
{
	double v = 0;

	for (size_t t = 0; t < sol->nterm; t++)
		if (sol->term[t].grp == grp && sol->term[t].row == row)
			v += sol->term[t].x;
	return v;
}

static double
profiles_of(const struct search *s, const struct mig_lpsol *sol, int grp, int p)
{
	double v = 0;
	int j = 0;

	while (s->sg[j].grp != grp)
		j++;
	for (size_t t = 0; t < sol->nterm; t++)
		if (sol->term[t].grp == grp && sol->term[t].row >= 0)
			v += sol->term[t].x * (double)(s->sg[j].t->geo[sol->term[t].row].key >> (4 * p) & 15);
	return v;
}

static double
content_of(const struct search *s, const struct mig_lpsol *sol, int grp, int kind, int p, int k)
{
	double v = 0;

	for (size_t t = 0; t < sol->nterm; t++)
		if (sol->term[t].grp == grp)
			v += sol->term[t].x * mig_pool_detail(s, sol->term[t].col, kind, p, k);
	return v;
}

/*
 * Where to split the node: a class whose LP count is fractional (-> *k),
 * else a group's instances of a profile, else a group's GPUs with a row
 * (-> *b); 0 when all are whole numbers.
 */
static int
split(const struct search *s, const struct mig_lpsol *sol, int *k, struct mig_branch *b, double *at)
{
	double far = 1e-6;
	int found = 0, ngroups = s->sg[s->ngpus - 1].grp + 1;

	*k = -1;
	for (int c = 0; c < s->nk; c++)
		if (frac(sol->placed[c]) > far) {
			far = frac(sol->placed[c]);
			*k = c;
			*at = sol->placed[c];
			found = 1;
		}
	if (found)
		return 1;
	for (int g = 0; g < ngroups; g++) {
		int j = 0;

		while (s->sg[j].grp != g)
			j++;
		for (int p = 0; p < s->sg[j].g->nprofiles; p++) {
			double v = profiles_of(s, sol, g, p);

			if (frac(v) > far) {
				far = frac(v);
				b->kind = MIG_BR_PROFILE;
				b->grp = g;
				b->idx = p;
				*at = v;
				found = 1;
			}
		}
	}
	if (found)
		return 1;
	for (size_t t = 0; t < sol->nterm; t++) {
		double v = rows_of(sol, sol->term[t].grp, sol->term[t].row);

		if (sol->term[t].row >= 0 && frac(v) > far) {
			far = frac(v);
			b->kind = MIG_BR_ROW;
			b->grp = sol->term[t].grp;
			b->idx = sol->term[t].row;
			*at = v;
			found = 1;
		}
	}
	if (found || !mig_pool_has_detail(s))
		return found;
	/* what the instances hold: units alone in one, shared instances, units in those */
	for (int g = 0; g < ngroups; g++) {
		int j = 0;

		while (s->sg[j].grp != g)
			j++;
		for (int p = 0; p < s->sg[j].g->nprofiles; p++)
			for (int kind = MIG_BR_EXCL; kind <= MIG_BR_ITEM; kind++)
				for (int c = 0; c < (kind == MIG_BR_SHARED ? 1 : s->nk); c++) {
					double v = content_of(s, sol, g, kind, p, c);

					if (frac(v) > far) {
						far = frac(v);
						b->kind = kind;
						b->grp = g;
						b->idx = p;
						b->k = c;
						*at = v;
						found = 1;
					}
				}
	}
	return found;
}

/* Rows by key, largest first (the order twins' loads keep, mig_search.c). */
static int
row_cmp_desc(const struct gtable *t, int a, int b)
{
	uint64_t ka = a < 0 ? 0 : t->geo[a].key, kb = b < 0 ? 0 : t->geo[b].key;

	return ka == kb ? 0 : ka > kb ? -1 : 1;
}

/* Fix each GPU's row from the LP's whole numbers of GPUs per row; 0 if they add up. */
static int
fix_rows(struct search *s, const struct mig_lpsol *sol)
{
	int ngroups = s->sg[s->ngpus - 1].grp + 1;

	for (int g = 0, j0 = 0; g < ngroups; g++) {
		int j1 = j0, n = 0;

		while (j1 < s->ngpus && s->sg[j1].grp == g)
			j1++;
		for (size_t t = 0; t < sol->nterm; t++) {
			size_t u;

			if (sol->term[t].grp != g)
				continue;
			for (u = 0; u < t && !(sol->term[u].grp == g && sol->term[u].row == sol->term[t].row); u++)
				;
			if (u < t)
				continue; /* that row's GPUs were counted at its first term */
			for (long c = lround(rows_of(sol, g, sol->term[t].row)); c > 0; c--) {
				int i = j0 + n++;

				if (i >= j1)
					return -1;
				s->fixed[i] = sol->term[t].row;
				for (; i > j0 && row_cmp_desc(s->sg[i].t, s->fixed[i - 1], s->fixed[i]) > 0; i--) {
					int tmp = s->fixed[i];

					s->fixed[i] = s->fixed[i - 1];
					s->fixed[i - 1] = tmp;
				}
			}
		}
		if (j0 + n != j1)
			return -1;
		j0 = j1;
	}
	return 0;
}

/* ---------------------------------------------- a node's plan from its LP */

/* Shared units into nb instances of one profile, each holding some (bins[b * nk + k]). */
struct binpack {
	struct search *s;
	const struct sgpu *sg;
	const struct mig_profile *pr;
	int nb, *rem, *bins, units;
	uint64_t mem;                 /* of the units left */
	long steps;
	int cut;
};

#define BINPACK_STEPS 200000L

static int
bp_fill(struct binpack *bp, int b, int k, uint64_t mem, int sms, int units, int tight)
{
	struct search *s = bp->s;
	int *cur = bp->bins + (size_t)b * (size_t)s->nk, maxc;
	const int *prev = b > 0 ? cur - s->nk : NULL;

	if ((++bp->steps & 255) == 0)
		s->nodes += 64; /* the packing's work counts against the budget */
	if (bp->steps > BINPACK_STEPS) {
		bp->cut = 1;
		return 0;
	}
	if (k == s->nk) {
		if (units == 0)
			return 0; /* every instance holds a unit */
		if (b + 1 == bp->nb)
			return bp->units == 0;
		/* the units left must fill the instances left, one at least each, within their memory */
		if (bp->units < bp->nb - b - 1 || bp->mem > (uint64_t)(bp->nb - b - 1) * bp->pr->mem_bytes)
			return 0;
		return bp_fill(bp, b + 1, 0, 0, 0, 0, 1);
	}
	maxc = bp->rem[k];
	if (maxc > 0 && bp->sg->mem[k] > 0 && (uint64_t)maxc > (bp->pr->mem_bytes - mem) / bp->sg->mem[k])
		maxc = (int)((bp->pr->mem_bytes - mem) / bp->sg->mem[k]);
	if (maxc > 0 && bp->sg->need[k] > 0 && maxc > (bp->pr->sms - sms) / bp->sg->need[k])
		maxc = (bp->pr->sms - sms) / bp->sg->need[k];
	if (tight && prev && maxc > prev[k])
		maxc = prev[k]; /* instances alike: each holds no more (in class order) than the one before */
	for (int c = maxc; c >= 0 && !bp->cut; c--) {
		cur[k] = c;
		bp->rem[k] -= c;
		bp->units -= c;
		bp->mem -= (uint64_t)c * bp->sg->mem[k];
		if (bp_fill(bp, b, k + 1, mem + (uint64_t)c * bp->sg->mem[k], sms + c * bp->sg->need[k], units + c,
		    tight && prev && c == prev[k]))
			return 1;
		bp->rem[k] += c;
		bp->units += c;
		bp->mem += (uint64_t)c * bp->sg->mem[k];
	}
	cur[k] = 0;
	return 0;
}

/*
 * The plan a node's LP describes when every count in it is a whole number:
 * the rows, the units alone in instances, the shared instances and their
 * units (packed here: the LP only says how many of each go to a profile).
 * Offered as a candidate for the best plan; -1 where it cannot be built.
 */
static int
node_plan(struct search *s, const struct mig_lpsol *sol)
{
	int ngroups = s->sg[s->ngpus - 1].grp + 1, nk = s->nk, ret = 0;
	int *want = xcalloc((size_t)nk * 2 + 2, sizeof *want), *bins = NULL;
	struct mig_score sc = {0, 0, 0, 0};

	if (fix_rows(s, sol) < 0) {
		TRACE("node_plan: rows\n");
		free(want);
		return -1;
	}
	for (int j = 0; j < s->ngpus; j++) {
		struct load *ld = &s->cur[j];
		const struct mig_gpu *g = s->sg[j].g;

		ld->x = s->fixed[j] >= 0 ? &s->sg[j].t->geo[s->fixed[j]] : NULL;
		ld->nslots = 0;
		for (int p = 0; p < g->nprofiles && ld->x; p++)
			for (int c = (int)(ld->x->key >> (4 * p) & 15); c > 0; c--) {
				struct slot *sl = &ld->slot[ld->nslots++];

				sl->profile = p;
				sl->big = -1;
				sl->nunits = 0;
				sl->mem = 0;
				sl->need = 0;
				memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)nk);
			}
		sc.ops += ld->x ? ld->x->ops : 0;
	}
	for (int g = 0; g < ngroups && ret == 0; g++) {
		int j0 = 0, j1;

		while (s->sg[j0].grp != g)
			j0++;
		for (j1 = j0; j1 < s->ngpus && s->sg[j1].grp == g; j1++)
			;
		for (int p = 0; p < s->sg[j0].g->nprofiles && ret == 0; p++) {
			const struct sgpu *sg = &s->sg[j0];
			int nsh = (int)lround(content_of(s, sol, g, MIG_BR_SHARED, p, 0)), n = 0, b = 0;
			struct binpack bp;

			for (int k = 0; k < nk; k++) {
				want[k] = (int)lround(content_of(s, sol, g, MIG_BR_EXCL, p, k));
				want[nk + k] = (int)lround(content_of(s, sol, g, MIG_BR_ITEM, p, k));
			}
			memset(&bp, 0, sizeof bp);
			bp.s = s;
			bp.sg = sg;
			bp.pr = &sg->g->profiles[p];
			bp.nb = nsh;
			bp.rem = want + nk;
			for (int k = 0; k < nk; k++) {
				if (want[nk + k] > 0 && !sg->small[k])
					ret = -1;
				bp.units += want[nk + k];
				bp.mem += (uint64_t)want[nk + k] * sg->mem[k];
			}
			bins = xrealloc(bins, ((size_t)nsh + 1) * (size_t)nk * sizeof *bins);
			memset(bins, 0, ((size_t)nsh + 1) * (size_t)nk * sizeof *bins);
			bp.bins = bins;
			if (ret == 0 && nsh > 0 && !bp_fill(&bp, 0, 0, 0, 0, 0, 0))
				ret = -1;
			if (ret == 0 && nsh == 0 && bp.units > 0)
				ret = -1;
			/* the instances of profile p on the group's GPUs: units alone first, then the shared ones */
			for (int j = j0; j < j1 && ret == 0; j++)
				for (int i = 0; i < s->cur[j].nslots; i++) {
					struct slot *sl = &s->cur[j].slot[i];
					int k = 0;

					if (sl->profile != p)
						continue;
					n++;
					while (k < nk && want[k] == 0)
						k++;
					if (k < nk) {
						want[k]--;
						sl->big = k;
						sl->nunits = 1;
						sl->mem = sg->mem[k];
						sl->need = sg->need[k];
					} else if (b < nsh) {
						for (int c = 0; c < nk; c++) {
							int u = bins[(size_t)b * (size_t)nk + (size_t)c];

							sl->cnt[c] = u;
							sl->nunits += u;
							sl->mem += (uint64_t)u * sg->mem[c];
							sl->need += u * sg->need[c];
						}
						b++;
					} else {
						ret = -1; /* more instances than the LP fills */
					}
				}
			for (int k = 0; k < nk && ret == 0; k++)
				if (want[k] != 0)
					ret = -1;
			if (ret == 0 && b != nsh)
				ret = -1;
			(void)n;
		}
	}
	free(bins);
	free(want);
	if (ret < 0)
		TRACE("node_plan: contents\n");
	if (ret < 0)
		return -1;
	for (int k = 0; k < nk; k++)
		s->rem[k] = s->hi[k];
	for (int j = 0; j < s->ngpus; j++)
		for (int i = 0; i < s->cur[j].nslots; i++) {
			const struct slot *sl = &s->cur[j].slot[i];
			const struct mig_profile *pr = &s->sg[j].g->profiles[sl->profile];

			if (sl->nunits == 0)
				return -1;
			if (sl->big >= 0)
				s->rem[sl->big]--;
			else
				for (int k = 0; k < nk; k++)
					s->rem[k] -= sl->cnt[k];
			sc.satisfied += sl->nunits;
			sc.waste += pr->mem_bytes - sl->mem;
			sc.sms += pr->sms;
		}
	for (int k = 0; k < nk; k++)
		if (s->rem[k] < 0)
			return -1;
	s->sc = sc;
	TRACE("node_plan: %d %.3f %d %d\n", sc.satisfied, (double)sc.waste / (1 << 30), sc.sms, sc.ops);
	mig_search_offer(s);
	return 0;
}

/* ------------------------------------------------------------- the dive */

/*
 * Pool column col as GPU j's load in s->cur[j], within the units left: its
 * row, the units alone in instances, the shared units packed into its shared
 * instances; what the units left cannot fill is dropped (a sub-row of a
 * valid row is valid). -1 if nothing is left of it or no packing is found.
 */
static int
column_load(struct search *s, int col, int j, const int *left)
{
	const struct sgpu *sg = &s->sg[j];
	struct load *ld = &s->cur[j];
	int row = mig_pool_row(s, col), nk = s->nk, ret = 0;
	int *want = xcalloc((size_t)nk * 3 + 3, sizeof *want), *avail = want + 2 * nk + 1, *bins = NULL;
	uint64_t key = 0;

	memcpy(avail, left, sizeof *avail * (size_t)nk);
	ld->nslots = 0;
	for (int p = 0; row >= 0 && p < sg->g->nprofiles && ret == 0; p++) {
		int c = (int)(sg->t->geo[row].key >> (4 * p) & 15), nsh = (int)lround(mig_pool_detail(s, col, MIG_BR_SHARED, p, 0));
		struct binpack bp;
		int nb;

		if (!c)
			continue;
		memset(&bp, 0, sizeof bp);
		for (int k = 0; k < nk; k++) {
			int e = (int)lround(mig_pool_detail(s, col, MIG_BR_EXCL, p, k));
			int it = (int)lround(mig_pool_detail(s, col, MIG_BR_ITEM, p, k));

			want[k] = e < avail[k] ? e : avail[k];
			avail[k] -= want[k];
			want[nk + k] = it < avail[k] ? it : avail[k];
			avail[k] -= want[nk + k];
			bp.units += want[nk + k];
		}
		/* the shared units into as many of the shared instances as they fill */
		nb = nsh < bp.units ? nsh : bp.units;
		bins = xrealloc(bins, ((size_t)nsh + 1) * (size_t)nk * sizeof *bins);
		for (; nb > 0; nb--) {
			int units = bp.units;

			memset(bins, 0, ((size_t)nsh + 1) * (size_t)nk * sizeof *bins);
			bp.s = s;
			bp.sg = sg;
			bp.pr = &sg->g->profiles[p];
			bp.nb = nb;
			bp.rem = want + nk;
			bp.bins = bins;
			bp.mem = 0;
			for (int k = 0; k < nk; k++)
				bp.mem += (uint64_t)want[nk + k] * sg->mem[k];
			bp.steps = 0;
			bp.cut = 0;
			if (bp_fill(&bp, 0, 0, 0, 0, 0, 0))
				break;
			bp.units = units;
		}
		if (nb == 0 && bp.units > 0)
			ret = -1;
		for (int i = 0, b = 0; i < c && ret == 0; i++) {
			struct slot *sl = &ld->slot[ld->nslots];
			int k = 0;

			sl->profile = p;
			sl->big = -1;
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)nk);
			while (k < nk && want[k] == 0)
				k++;
			if (k < nk) {
				want[k]--;
				sl->big = k;
				sl->nunits = 1;
				sl->mem = sg->mem[k];
				sl->need = sg->need[k];
			} else if (b < nb) {
				for (int q = 0; q < nk; q++) {
					int u = bins[(size_t)b * (size_t)nk + (size_t)q];

					sl->cnt[q] = u;
					sl->nunits += u;
					sl->mem += (uint64_t)u * sg->mem[q];
					sl->need += u * sg->need[q];
				}
				b++;
			} else {
				continue; /* nothing left for it: not created */
			}
			ld->nslots++;
			key += (uint64_t)1 << (4 * p);
		}
	}
	free(want);
	free(bins);
	ld->x = row >= 0 ? mig_gtable_find(sg->t, key) : NULL;
	if (ret < 0 || (row >= 0 && !ld->x))
		return -1;
	return 0;
}

/*
 * A plan from the LP by residual rounding: solve the LP, give one GPU the
 * load of the column the LP uses most (of those that still fit), take that
 * GPU and its units out, solve again, until every GPU has a load. Plans
 * close to the LP are what let the bound prove them; the bound does not
 * depend on this.
 */
static void
dive(struct search *s, struct mig_lpsol *sol)
{
	int ngroups = s->sg[s->ngpus - 1].grp + 1, nk = s->nk;
	int *left = xcalloc((size_t)nk + 1, sizeof *left), *done = xcalloc((size_t)s->ngpus + 1, sizeof *done);
	long double rhs[3];
	struct mig_score sc = {0, 0, 0, 0};

	if (!mig_pool_has_detail(s)) {
		free(left);
		free(done);
		return;
	}
	memcpy(rhs, s->lvl_rhs, sizeof rhs);
	s->grp_fixed = xcalloc((size_t)ngroups + 1, sizeof *s->grp_fixed);
	for (int k = 0; k < nk; k++) {
		left[k] = s->k[k].n;
		s->lo[k] = 0;
	}
	s->nbr = 0;
	for (int step = 0; step < s->ngpus; step++) {
		size_t best;
		int j = 0;

		memcpy(s->hi, left, sizeof *left * (size_t)nk);
		if (mig_bound_node(s, sol) != MIG_LP_OPTIMAL)
			break;
		/* the columns the LP uses, most first: the first that makes a load for a free GPU of its group */
		best = sol->nterm;
		for (size_t tried = 0; tried < sol->nterm && best == sol->nterm; tried++) {
			size_t t = sol->nterm;

			for (size_t u = 0; u < sol->nterm; u++)
				if (sol->term[u].x >= 0 && (t == sol->nterm || sol->term[u].x > sol->term[t].x))
					t = u;
			if (t == sol->nterm)
				break;
			for (j = 0; j < s->ngpus; j++)
				if (s->sg[j].grp == sol->term[t].grp && !done[j])
					break;
			if (j < s->ngpus && column_load(s, sol->term[t].col, j, left) == 0)
				best = t;
			else
				sol->term[t].x = -1; /* not this one */
		}
		if (best == sol->nterm)
			break;
		TRACE("dive step %d: term %zu of %zu col %d grp %d j %d\n", step, best, sol->nterm, sol->term[best].col,
		    sol->term[best].grp, j);
		done[j] = 1;
		s->grp_fixed[sol->term[best].grp]++;
		for (int i = 0; i < s->cur[j].nslots; i++) {
			const struct slot *sl = &s->cur[j].slot[i];
			const struct mig_profile *pr = &s->sg[j].g->profiles[sl->profile];

			if (sl->big >= 0)
				left[sl->big]--;
			else
				for (int k = 0; k < nk; k++)
					left[k] -= sl->cnt[k];
			sc.satisfied += sl->nunits;
			sc.waste += pr->mem_bytes - sl->mem;
			sc.sms += pr->sms;
			s->lvl_rhs[0] -= sl->nunits;
			s->lvl_rhs[1] -= (long double)(pr->mem_bytes - sl->mem) / MIG_GIB;
			s->lvl_rhs[2] -= pr->sms;
		}
		sc.ops += s->cur[j].x ? s->cur[j].x->ops : 0;
	}
	/* GPUs left get the empty load; then the units left go where they fit */
	for (int j = 0; j < s->ngpus; j++)
		if (!done[j]) {
			const struct geo *e = s->sg[j].t->ngeo ? mig_gtable_find(s->sg[j].t, 0) : NULL;

			s->cur[j].x = e;
			s->cur[j].nslots = 0;
			sc.ops += e ? e->ops : 0;
		}
	for (int k = 0; k < nk; k++)
		s->hi[k] = s->k[k].n;
	memcpy(s->lvl_rhs, rhs, sizeof rhs);
	TRACE("dive: %d %.3f %d %d\n", sc.satisfied, (double)sc.waste / (1 << 30), sc.sms, sc.ops);
	mig_search_complete(s, left);
	free(s->grp_fixed);
	s->grp_fixed = NULL;
	free(left);
	free(done);
}

/* Prove level s->lvl within the budget: 0 proven, -1 not (s->root: the gap's bound). */
static int
prove_level(struct search *s, long total)
{
	struct open o = {NULL, 0, 0, s->nk};
	struct mig_lpsol sol;
	int dived = 0; /* the first nodes dive (last pushed first) for plans, then the best bound goes first */
	int *lo = xcalloc((size_t)s->nk * 2 + 1, sizeof *lo), *hi = lo + s->nk, ret = 0, all = 0;

	memset(&sol, 0, sizeof sol);
	sol.placed = xcalloc((size_t)s->nk + 1, sizeof *sol.placed);
	s->inc = mig_level_value(&s->bs, s->lvl);
	s->step = s->lvl == 2 ? s->waste_step : 1;
	mig_bound_level_start(s);
	if (s->nodes < total)
		dive(s, &sol);
	mig_search_improve(s);
	s->inc = mig_level_value(&s->bs, s->lvl);
	for (int k = 0; k < s->nk; k++)
		all += s->k[k].n;
	/* a plan that satisfies every unit: the later levels' plans place every unit of every class */
	all = s->have && s->lvl >= 2 && s->bs.satisfied == all;
	for (int k = 0; k < s->nk; k++) {
		hi[k] = s->k[k].n;
		lo[k] = all ? hi[k] : 0;
		s->lo[k] = lo[k];
		s->hi[k] = hi[k];
	}
	if (s->nodes >= total) {
		/* no budget left for this level: the root bound alone, which may still prove it */
		s->nbr = 0;
		mig_bound_node(s, NULL);
		mig_search_magnitude(s);
		ret = mig_could_beat(s, s->root) ? -1 : 0;
		goto done;
	}
	/*
	 * First the search over loads at the root LP's prices, with a share of
	 * the budget: on a few GPUs, or where the LP is close, it proves the
	 * level outright; else the branch and price goes on from its best plan.
	 */
	s->nbr = 0;
	if (mig_bound_node(s, NULL) == MIG_LP_OPTIMAL) {
		mig_search_magnitude(s);
		if (!mig_could_beat(s, s->root))
			goto done;
		mig_search_dfs(s, (total - s->nodes) / MIG_ROOT_SEARCH_SHARE);
		if (!s->aborted)
			goto done; /* searched to the end: proven */
	}
	push(&o, 1e30L, lo, hi, NULL, 0, NULL);
	while (o.n > 0) {
		struct node x = pop(&o, dived);
		struct mig_branch b;
		int st, k;
		double at = 0;

		if (s->have && !mig_could_beat_rounded(s, x.bound)) {
			node_free(&x);
			continue;
		}
		if (s->nodes >= total && x.bound < 1e29L) {
			ret = -1;
			s->root = x.bound;
			node_free(&x);
			break;
		}
		memcpy(s->lo, x.lo, sizeof *lo * (size_t)s->nk);
		memcpy(s->hi, x.hi, sizeof *hi * (size_t)s->nk);
		free(s->br);
		free(s->bradj);
		s->br = x.br;
		s->nbr = x.nbr;
		s->bradj = xcalloc((size_t)x.nbr + 1, sizeof *s->bradj);
		free(x.lo);
		st = mig_bound_node(s, &sol);
		mig_search_magnitude(s);
		TRACE("lvl %d node: st %d best %.6Lf bound %.6Lf lp %.6f cols %d nodes %ld open %zu nbr %d\n",
			    s->lvl, st, s->inc, s->root, s->lp_obj, s->lp_columns, s->nodes, o.n, s->nbr);
		if (!mig_could_beat(s, s->root))
			continue;
		if (st == MIG_LP_OPTIMAL && split(s, &sol, &k, &b, &at)) {
			long double rb = mig_lattice_round(s, s->root); /* the children's, in this node's lattice */

			memcpy(lo, s->lo, sizeof *lo * (size_t)s->nk);
			memcpy(hi, s->hi, sizeof *hi * (size_t)s->nk);
			if (k >= 0) {
				/* up first: plans that place more come from the dive */
				hi[k] = (int)floor(at);
				push(&o, rb, lo, hi, s->br, s->nbr, NULL);
				hi[k] = s->hi[k];
				lo[k] = (int)ceil(at);
				push(&o, rb, lo, hi, s->br, s->nbr, NULL);
			} else {
				struct mig_branch up = b;

				b.lo = 0;
				b.hi = (int)floor(at);
				up.lo = (int)ceil(at);
				up.hi = 1 << 20;
				push(&o, rb, lo, hi, s->br, s->nbr, &b);
				push(&o, rb, lo, hi, s->br, s->nbr, &up);
			}
			continue;
		}
		/* whole numbers everywhere: the LP's plan is the node's best, if it can be built */
		dived = 1;
		if (st == MIG_LP_OPTIMAL && mig_pool_has_detail(s) && node_plan(s, &sol) == 0 &&
		    !mig_could_beat(s, s->root)) {
			for (int j = 0; j < s->ngpus; j++)
				s->fixed[j] = -2;
			continue;
		}
		/* else (or no LP): search the node's plans, rows fixed where the LP fixed them */
		if (st != MIG_LP_OPTIMAL || fix_rows(s, &sol) < 0)
			for (int j = 0; j < s->ngpus; j++)
				s->fixed[j] = -2;
		s->cconst -= s->brconst;
		s->nbr = 0;
		s->root = mig_bound_root(s, s->hi);
		mig_search_magnitude(s);
		if (mig_could_beat(s, s->root))
			mig_search_dfs(s, total - s->nodes);
		for (int j = 0; j < s->ngpus; j++)
			s->fixed[j] = -2;
		if (s->aborted) {
			ret = -1;
			break;
		}
	}
done:
	if (ret < 0) {
		/* this node's bound in the root's lattice (the open ones' are rounded in their parents') */
		for (int k = 0; k < s->nk; k++) {
			s->hi[k] = s->k[k].n;
			s->lo[k] = all ? s->hi[k] : 0;
		}
		mig_lattice_node(s);
		s->root = mig_lattice_round(s, s->root);
	}
	/* not proven: the largest bound left, this node's and the open ones' */
	for (size_t i = 0; i < o.n; i++) {
		if (ret < 0 && o.v[i].bound > s->root)
			s->root = o.v[i].bound;
		node_free(&o.v[i]);
	}
	free(o.v);
	free(sol.placed);
	free(sol.term);
	free(lo);
	return ret;
}

void
mig_search_run(struct search *s, const struct mig_request *reqs, int nunits)
{
	long total = s->limit, reserve = 0;
	long double gap = 0;
	int gap_mag = 0;

	mig_search_first(s, reqs, nunits);
	s->gap_level = 0;
	for (s->lvl = 1; s->lvl <= 4; s->lvl++) {
		/*
		 * Each level gets a share of what is left (half, two thirds, three
		 * quarters, all), so that a level not proven still leaves the later
		 * ones work: they go on improving the plan from the best one's
		 * values (no longer a proof, a better plan); the gap is the first
		 * level's that was not proven.
		 */
		long left = total - reserve - s->nodes, mine = left * s->lvl / (s->lvl + 1);

		if (s->lvl == 4)
			mine = left;
		if (prove_level(s, s->nodes + (mine > 0 ? mine : 0)) < 0 && s->gap_level == 0) {
			s->gap_level = s->lvl;
			gap = s->root;
			gap_mag = 1;
			s->gap_mag = s->mag;
		}
		/*
		 * With the most units proven, the DP over the GPUs settles the
		 * other levels at once where the classes are few (mig_dp.c): a
		 * third of the work now, and a third of what is then left kept
		 * for a second try with the plan the branch and price improves
		 * (the DP prunes by the best plan: a better one makes it faster).
		 */
		if (s->lvl == 1 && s->gap_level == 0) {
			mig_search_improve(s);
			if (mig_dp_run(s, (total - s->nodes) / 3)) {
				s->lvl = 4;
				break;
			}
			reserve = (total - s->nodes) / 3;
		}
	}
	if (reserve > 0 && s->gap_level > 1 && mig_dp_run(s, total - s->nodes)) {
		s->gap_level = 0;
		gap_mag = 0;
	}
	s->lvl = s->gap_level ? s->gap_level : 4;
	if (gap_mag) {
		s->root = gap;
		s->mag = s->gap_mag;
	}
	s->optimal = s->gap_level == 0;
	TRACE("lp solves %ld pivots %ld\n", s->lp_solves, s->lp_pivots);
}
