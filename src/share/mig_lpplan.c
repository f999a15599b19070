/*
 * mig_lpplan: plans built from a configuration LP's solution (doc/mig.md,
 * "Branch and price"): its counts per group (GPUs per row, instances per
 * profile, what they hold), the GPUs' rows fixed from them, the plan of a
 * node whose counts are all whole numbers (the shared units packed into its
 * shared instances by a small exact bin packing), and the dive that rounds
 * the LP one GPU at a time for a first plan. Used by mig_prove.c.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "share/mig_lp.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* cc -DMIG_TRACE: the plans on stderr */
#ifdef MIG_TRACE
#define TRACE(...) fprintf(stderr, __VA_ARGS__)
#else
#define TRACE(...) ((void)0)
#endif

double
mig_lpsol_frac(double v)
{
	double f = v - floor(v);

	return f < 0.5 ? f : 1 - f;
}

/* The LP's GPUs of group grp with row row, and its instances of profile p there. */
double
mig_lpsol_rows(const struct mig_lpsol *sol, int grp, int row)
{
	double v = 0;

	for (size_t t = 0; t < sol->nterm; t++)
		if (sol->term[t].grp == grp && sol->term[t].row == row)
			v += sol->term[t].x;
	return v;
}

double
mig_lpsol_profiles(const struct search *s, const struct mig_lpsol *sol, int grp, int p)
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

double
mig_lpsol_content(const struct search *s, const struct mig_lpsol *sol, int grp, int kind, int p, int k)
{
	double v = 0;

	for (size_t t = 0; t < sol->nterm; t++)
		if (sol->term[t].grp == grp)
			v += sol->term[t].x * mig_pool_detail(s, sol->term[t].col, kind, p, k);
	return v;
}

/* Rows by key, largest first (the order twins' loads keep, mig_search.c). */
static int
row_cmp_desc(const struct gtable *t, int a, int b)
{
	uint64_t ka = a < 0 ? 0 : t->geo[a].key, kb = b < 0 ? 0 : t->geo[b].key;

	return ka == kb ? 0 : ka > kb ? -1 : 1;
}

/* Fix each GPU's row from the LP's whole numbers of GPUs per row; 0 if they add up. */
int
mig_fix_rows(struct search *s, const struct mig_lpsol *sol)
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
			for (long c = lround(mig_lpsol_rows(sol, g, sol->term[t].row)); c > 0; c--) {
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
 * Instance sl gets the next unit of want[] alone (want[k] of class k still
 * to place alone), else shared bin *b of bins (nb of them, nk counts each):
 * 0 when nothing is left for it.
 */
static int
slot_fill(const struct sgpu *sg, struct slot *sl, int *want, const int *bins, int *b, int nb, int nk)
{
	int k = 0;

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
		return 1;
	}
	if (*b >= nb)
		return 0;
	for (int q = 0; q < nk; q++) {
		int u = bins[(size_t)*b * (size_t)nk + (size_t)q];

		sl->cnt[q] = u;
		sl->nunits += u;
		sl->mem += (uint64_t)u * sg->mem[q];
		sl->need += u * sg->need[q];
	}
	(*b)++;
	return 1;
}

/*
 * The plan a node's LP describes when every count in it is a whole number:
 * the rows, the units alone in instances, the shared instances and their
 * units (packed here: the LP only says how many of each go to a profile).
 * Offered as a candidate for the best plan; -1 where it cannot be built.
 */
int
mig_node_plan(struct search *s, const struct mig_lpsol *sol)
{
	int ngroups = s->sg[s->ngpus - 1].grp + 1, nk = s->nk, ret = 0;
	int *want = xcalloc((size_t)nk * 2 + 2, sizeof *want), *bins = NULL;
	struct mig_score sc = {0, 0, 0, 0};

	if (mig_fix_rows(s, sol) < 0) {
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
			int nsh = (int)lround(mig_lpsol_content(s, sol, g, MIG_BR_SHARED, p, 0)), n = 0, b = 0;
			struct binpack bp;

			for (int k = 0; k < nk; k++) {
				want[k] = (int)lround(mig_lpsol_content(s, sol, g, MIG_BR_EXCL, p, k));
				want[nk + k] = (int)lround(mig_lpsol_content(s, sol, g, MIG_BR_ITEM, p, k));
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

					if (sl->profile != p)
						continue;
					n++;
					if (!slot_fill(sg, sl, want, bins, &b, nsh, nk))
						ret = -1; /* more instances than the LP fills */
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

			sl->profile = p;
			if (!slot_fill(sg, sl, want, bins, &b, nb, nk))
				continue; /* nothing left for it: not created */
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
void
mig_dive(struct search *s, struct mig_lpsol *sol, long until)
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
	for (int step = 0; step < s->ngpus && s->nodes < until; step++) {
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

