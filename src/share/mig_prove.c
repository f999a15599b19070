/*
 * mig_prove: the planner's run (doc/mig.md, "How it works"). The objective
 * is lexicographic (the most units satisfied, then the least waste, the
 * fewest SMs, the fewest operations), so it is proven level by level, each
 * over the plans that reach the optimum of the levels before it:
 *
 *   1. First plans (mig_heur.c); the configuration LP at level 1
 *      (mig_master.c): a dive rounds it into plans, and its bound says how
 *      many units a plan can place at most. While the best plan places
 *      fewer, the bags (mig_bag*.c) look for a plan placing one more: one
 *      found is the new best; where none exists, the best plan's units are
 *      the most there can be.
 *   2. The most units S proven, the LP's bounds at levels 2 to 4 may prove
 *      the best plan optimal at once; else the bags, for plans placing S
 *      units, find the optimum or run out of work, the waste the LP bounds
 *      being where they start.
 *
 * Everything counts against one work budget (s->limit), not time: the same
 * input always gives the same plan. What is proven goes to s->lb; where the
 * budget runs out first, the plan is the best found and s->lb says how far
 * from optimal it can be.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/knob.h"

#include <math.h>

/* The dive at level 1 gets 1 / this of the budget left. */
#define DIVE_SHARE 4

/* The bound pr->bound, on level lvl's value, as what no plan beats there (a lower bound of waste, SMs, operations). */
static void
bound_to_lb(struct search *s, int lvl)
{
	long double b = s->pr->bound + 1e-14L * s->pr->mag; /* its rounding only lowers it */
	long double step = (long double)s->waste_step;

	switch (lvl) {
	case 1:
		if (floorl(b) < s->lb.satisfied)
			s->lb.satisfied = floorl(b) < 0 ? 0 : (int)floorl(b);
		break;
	case 2:
		/* waste is a multiple of the gcd of all memory sizes: up to the next one */
		if (-b * MIG_GIB > 0)
			s->lb.waste = (uint64_t)(ceill(floorl(-b * MIG_GIB) / step) * step);
		break;
	case 3:
		s->lb.sms = ceill(-b) > 0 ? (int)ceill(-b) : 0;
		break;
	default:
		s->lb.ops = ceill(-b) > 0 ? (int)ceill(-b) : 0;
		break;
	}
}

/* Does the best plan reach level lvl's bound? Then it is settled: the bound becomes its value. */
static int
reached(struct search *s, int lvl)
{
	struct mig_score *lb = &s->lb;

	switch (lvl) {
	case 1:
		return s->bs.satisfied >= lb->satisfied;
	case 2:
		return s->bs.waste <= lb->waste ? (lb->waste = s->bs.waste, 1) : 0;
	case 3:
		return s->bs.sms <= lb->sms ? (lb->sms = s->bs.sms, 1) : 0;
	default:
		return s->bs.ops <= lb->ops ? (lb->ops = s->bs.ops, 1) : 0;
	}
}

/*
 * Level 1: the most units. 1 proven. Each search for a plan of one unit
 * more may take all the work left: where level 1 is not proven, the rest
 * is not run (its levels are defined by the most units).
 */
static int
most_units(struct search *s)
{
	struct mig_score lb;

	mig_lp_level(s, 1);
	mig_dive(s, s->nodes + (s->limit - s->nodes) / DIVE_SHARE);
	mig_improve(s);
	mig_lp_bound(s);
	bound_to_lb(s, 1);
	while (!reached(s, 1) && s->nodes < s->limit) {
		int before = s->bs.satisfied;
		int done = mig_bags_run(s, before + 1, s->limit - s->nodes, 1, 0, &lb);

		if (s->bs.satisfied > before) {
			knob_add(KNOB_MIG_BAG_UNITS, 1);
			continue;
		}
		if (done)
			s->lb.satisfied = before; /* no plan places one more */
		break;
	}
	return reached(s, 1);
}

/* Levels 2 to 4, the most units proven: the LP's bounds, then the bags. */
static void
the_rest(struct search *s)
{
	struct mig_score lb;
	int lvl;

	mig_improve(s);
	for (lvl = 2; lvl <= 4; lvl++) {
		mig_lp_level(s, lvl);
		mig_improve(s);
		mig_lp_bound(s);
		bound_to_lb(s, lvl);
		if (!reached(s, lvl))
			break;
	}
	if (lvl > 4)
		return; /* the LP's bounds prove it */
	if (mig_bags_run(s, s->bs.satisfied, s->limit - s->nodes, 0, lvl == 2 ? s->lb.waste : s->bs.waste, &lb)) {
		knob_add(KNOB_MIG_BAG_PROOFS, 1);
		s->lb = s->bs;
		return;
	}
	/*
	 * Out of work: the bags have ruled out every plan below lb (waste,
	 * then SMs); with the LP's bound on the waste, what is left unproven.
	 * They say nothing of the operations.
	 */
	if (lvl == 2 && lb.waste > s->lb.waste)
		s->lb.waste = lb.waste;
	if (lvl <= 3 && reached(s, 2) && lb.waste == s->bs.waste && lb.sms > s->lb.sms) {
		s->lb.sms = lb.sms;
		reached(s, 3);
	}
}

void
mig_search_run(struct search *s, const struct mig_request *reqs, int nunits)
{
	s->lb = (struct mig_score){0, 0, 0, 0};
	for (int k = 0; k < s->nk; k++)
		s->lb.satisfied += s->k[k].n;
	mig_price_init(s);
	mig_first_plans(s, reqs, nunits);
	if (most_units(s))
		the_rest(s);
	mig_price_free(s);
}
