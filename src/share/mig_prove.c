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

/* The local improvement before the DP's second try (mig_dp_improve) gets 1 / this of what is left. */
#define MIG_LOCAL_SHARE 4
/* One more unit sought where level 1 is not proven (mig_dp_improve_units) gets 1 / this of what is left. */
#define MIG_UNITS_SHARE 4
/* The root's search over loads gets 1 / this of what is left of the budget. */
#define MIG_ROOT_SEARCH_SHARE 8
/* The bags (mig_splitdrop.c) first, once the most units are proven, get 1 / this of what is left after level 1. */
#define MIG_BAG_SHARE 3

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
		if (mig_lpsol_frac(sol->placed[c]) > far) {
			far = mig_lpsol_frac(sol->placed[c]);
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
			double v = mig_lpsol_profiles(s, sol, g, p);

			if (mig_lpsol_frac(v) > far) {
				far = mig_lpsol_frac(v);
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
		double v = mig_lpsol_rows(sol, sol->term[t].grp, sol->term[t].row);

		if (sol->term[t].row >= 0 && mig_lpsol_frac(v) > far) {
			far = mig_lpsol_frac(v);
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
					double v = mig_lpsol_content(s, sol, g, kind, p, c);

					if (mig_lpsol_frac(v) > far) {
						far = mig_lpsol_frac(v);
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

/*
 * The waste level's root duals as prices for the DP: a load's reduced
 * value there is -cw waste / GiB + sum_k (cs - pi_k) v_k, so the DP's
 * waste less prices p . v with p_k = (cs - pi_k) GiB / cw is the same
 * bound (in bytes): the LP's, which the DP's own price steps approach
 * only slowly.
 */
static void
save_dp_prices(struct search *s)
{
	if (s->cw <= 0)
		return;
	if (!s->dp_lp_prices)
		s->dp_lp_prices = xcalloc((size_t)s->nk + 1, sizeof *s->dp_lp_prices);
	for (int k = 0; k < s->nk; k++)
		s->dp_lp_prices[k] = (double)((s->cs - s->pi[k]) * MIG_GIB / s->cw);
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
	/* the dive within half the level's work (each of its LPs may take much) */
	if (s->nodes < total)
		mig_dive(s, &sol, s->nodes + (total - s->nodes) / 2);
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
		if (s->lvl == 2)
			save_dp_prices(s);
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
		if (st == MIG_LP_OPTIMAL && mig_pool_has_detail(s) && mig_node_plan(s, &sol) == 0 &&
		    !mig_could_beat(s, s->root)) {
			for (int j = 0; j < s->ngpus; j++)
				s->fixed[j] = -2;
			continue;
		}
		/* else (or no LP): search the node's plans, rows fixed where the LP fixed them */
		if (st != MIG_LP_OPTIMAL || mig_fix_rows(s, &sol) < 0)
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
	TRACE("lvl %d done ret %d root %.6Lf open %zu aborted %d nodes %ld\n", s->lvl, ret, s->root, o.n, s->aborted, s->nodes);
	if (ret < 0) {
		/* this node's bound in the root's lattice (the open ones' are rounded in their parents') */
		for (int k = 0; k < s->nk; k++) {
			s->hi[k] = s->k[k].n;
			s->lo[k] = all ? s->hi[k] : 0;
		}
		mig_lattice_node(s);
		s->root = mig_lattice_round(s, s->root);
		TRACE("lvl %d rounded root %.6Lf\n", s->lvl, s->root);
	}
	/* not proven: the largest bound left, this node's and the open ones' */
	for (size_t i = 0; i < o.n; i++) {
		if (ret < 0 && o.v[i].bound > s->root)
			s->root = o.v[i].bound;
		node_free(&o.v[i]);
	}
	/*
	 * Out of budget, but no node left may beat the best plan (found since
	 * they were bounded, or their bounds rounded to its value): proven.
	 */
	if (ret < 0 && !mig_could_beat_rounded(s, s->root))
		ret = 0;
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
	long double gap = 0, lbound[5] = {0}, lmag[5] = {0};
	int gap_mag = 0, settled = 0;

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
		int r = prove_level(s, s->nodes + (mine > 0 ? mine : 0));

		/*
		 * Level 1 not proven: its bound is on every plan, so a plan that
		 * reaches it proves the level. The branch and price's plans may
		 * be a unit short where pairs of GPUs planned again place one
		 * more (mig_dp_improve_units), within a share of what is left.
		 */
		if (s->lvl == 1 && r < 0 && s->have) {
			int upto = (int)floorl(s->root + 1e-9L);

			mig_dp_improve_units(s, (total - reserve - s->nodes) / MIG_UNITS_SHARE, upto);
			if (s->bs.satisfied >= upto)
				r = 0;
		}

		/* what no plan meeting the earlier levels' rows beats at this level: its best plan's value, or the bound left */
		lbound[s->lvl] = r == 0 ? mig_level_value(&s->bs, s->lvl) : s->root;
		lmag[s->lvl] = s->mag;
		if (r < 0 && s->gap_level == 0) {
			s->gap_level = s->lvl;
			gap = s->root;
			gap_mag = 1;
			s->gap_mag = s->mag;
		}
		/*
		 * A later level's plans may reach level 1's bound (its bound is
		 * on every plan, whatever the later levels): the most units are
		 * then proven after all, so the DP below gets its turn and the
		 * later levels start again with that many units as their row.
		 */
		if (s->gap_level == 1 && s->lvl > 1 && !settled && s->have &&
		    (long double)s->bs.satisfied >= floorl(gap + 1e-9L)) {
			settled = 1;
			s->gap_level = 0;
			gap_mag = 0;
			s->lvl = 1;
		}
		/*
		 * With the most units proven, the DP over the GPUs settles the
		 * other levels at once where the classes are few (mig_dp.c): a
		 * third of the work now, and half of what is then left kept for a
		 * second try with the plan the branch and price improves and the
		 * waste level's LP prices (the DP prunes by the best plan: a
		 * better one makes it faster).
		 */
		if (s->lvl == 1 && s->gap_level == 0) {
			mig_search_improve(s);
			/* the bags first (mig_splitdrop.c; beneath each drop vector where the mix does not fit), on this thread */
			if (mig_split_bags_first(s, (total - s->nodes) / MIG_BAG_SHARE)) {
				s->lvl = 4;
				break;
			}
			/* the split DP beside all that follows, with as much work (mig_splitjob.c) */
			mig_split_start(s, total - s->nodes);
			if (mig_dp_run(s, (total - s->nodes) / 3)) {
				s->lvl = 4;
				break;
			}
			reserve = (total - s->nodes) / 2;
		}
	}
	/*
	 * Before the DP's second try, the best plan improved pair of GPUs by
	 * pair (mig_dp_improve): a better plan is what lets it prune.
	 */
	if (reserve > 0 && s->gap_level > 1)
		mig_dp_improve(s, (total - s->nodes) / MIG_LOCAL_SHARE);
	if (reserve > 0 && s->gap_level > 1 && mig_dp_run(s, total - s->nodes)) {
		s->gap_level = 0;
		gap_mag = 0;
	}
	/*
	 * The levels after one not proven went on with its best value then as
	 * their row; each level's rows only loosen as the plan improves, so its
	 * bound holds for the plans of the final values too. The gap is the
	 * first level whose bound the final plan does not reach; where the
	 * plan reaches every level's, it is proven after all.
	 */
	if (s->gap_level) {
		s->gap_level = 0;
		gap_mag = 0;
		for (int l = 1; l <= 4 && !s->gap_level; l++) {
			s->lvl = l;
			s->inc = mig_level_value(&s->bs, l);
			s->step = l == 2 ? s->waste_step : 1;
			s->mag = lmag[l];
			if (mig_could_beat_rounded(s, lbound[l])) {
				s->gap_level = l;
				gap = lbound[l];
				gap_mag = 1;
				s->gap_mag = lmag[l];
			}
		}
	}
	/* the rest not proven: the split DP's proof, where it has one, stands */
	if (mig_split_join(s, s->gap_level == 0)) {
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
