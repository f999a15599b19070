/*
 * mig_heur: plans found fast, for the proof to prove or to beat (doc/mig.md,
 * "How it works"): first fit onto any partial plan (largest or smallest
 * units first), each instance shrunk to the smallest profile that holds it,
 * the unit-by-unit search's plans (mig_unitsearch.c), and ruin and recreate
 * around the best plan (a GPU's or two GPUs' loads refilled). None of this
 * bounds anything: good plans only let the proof finish sooner. And the
 * offer: a plan built in s->cur becomes the best where it is better.
 */
#include "share/mig.h"
#include "share/mig_int.h"

#include <stdlib.h>
#include <string.h>

void
mig_load_clear(struct search *s, int j)
{
	struct load *ld = &s->cur[j];

	ld->x = s->sg[j].t->ngeo ? mig_gtable_find(s->sg[j].t, 0) : NULL;
	ld->nslots = 0;
	for (int i = 0; i < MIG_MAX_INST; i++)
		memset(ld->slot[i].cnt, 0, sizeof *ld->slot[i].cnt * (size_t)s->nk);
}

/* The score of the loads in s->cur. */
static struct mig_score
score(const struct search *s)
{
	struct mig_score sc = {0, 0, 0, 0};

	for (int j = 0; j < s->ngpus; j++) {
		for (int i = 0; i < s->cur[j].nslots; i++) {
			const struct slot *sl = &s->cur[j].slot[i];
			const struct mig_profile *pr = &s->sg[j].g->profiles[sl->profile];

			sc.satisfied += sl->nunits;
			sc.waste += pr->mem_bytes - sl->mem;
			sc.sms += pr->sms;
		}
		sc.ops += s->cur[j].x ? s->cur[j].x->ops : 0;
	}
	return sc;
}

struct mig_score
mig_offer(struct search *s)
{
	struct mig_score sc = score(s);

	if (s->have && !mig_score_better(&sc, &s->bs))
		return sc; /* ties go to the plan found first */
	s->bs = sc;
	s->have = 1;
	memcpy(s->bestbuf, s->cntbuf, sizeof *s->cntbuf * (size_t)s->ngpus * MIG_MAX_INST * (size_t)(s->nk + 1));
	for (int j = 0; j < s->ngpus; j++) {
		s->best[j] = s->cur[j];
		for (int i = 0; i < MIG_MAX_INST; i++)
			s->best[j].slot[i].cnt = s->bestbuf + (s->cur[j].slot[i].cnt - s->cntbuf);
	}
	return sc;
}

/* Unit k into an instance of GPU j's load that it can share; 1 placed. */
static int
share_into(struct search *s, int j, int k)
{
	const struct sgpu *sg = &s->sg[j];
	struct load *ld = &s->cur[j];

	for (int i = 0; i < ld->nslots && sg->small[k]; i++) {
		struct slot *sl = &ld->slot[i];
		const struct mig_profile *pr = &sg->g->profiles[sl->profile];

		if (sl->big < 0 && sl->mem + sg->mem[k] <= pr->mem_bytes && sl->need + sg->need[k] <= pr->sms) {
			sl->cnt[k]++;
			sl->nunits++;
			sl->mem += sg->mem[k];
			sl->need += sg->need[k];
			return 1;
		}
	}
	return 0;
}

/* Unit k into a new instance of the cheapest profile that fits it, where GPU j's table has the row; 1 placed. */
static int
new_instance(struct search *s, int j, int k)
{
	const struct sgpu *sg = &s->sg[j];
	struct load *ld = &s->cur[j];
	uint64_t key = ld->x ? ld->x->key : 0;
	int best = -1;
	struct slot *sl;

	if (ld->nslots >= MIG_MAX_INST)
		return 0;
	for (int p = 0; p < sg->g->nprofiles; p++) {
		const struct mig_profile *pr = &sg->g->profiles[p];

		if (sg->small[k] ? sg->need[k] > pr->sms : !(sg->fit[k] >> p & 1))
			continue;
		if ((key >> (4 * p) & 15) == 15 || !mig_gtable_find(sg->t, key + ((uint64_t)1 << (4 * p))))
			continue;
		if (best < 0 || pr->mem_bytes < sg->g->profiles[best].mem_bytes ||
		    (pr->mem_bytes == sg->g->profiles[best].mem_bytes && pr->sms < sg->g->profiles[best].sms))
			best = p;
	}
	if (best < 0)
		return 0;
	sl = &ld->slot[ld->nslots++];
	ld->x = mig_gtable_find(sg->t, key + ((uint64_t)1 << (4 * best)));
	sl->profile = best;
	sl->big = sg->small[k] ? -1 : k;
	sl->nunits = 1;
	sl->mem = sg->mem[k];
	sl->need = sg->need[k];
	memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
	if (sg->small[k])
		sl->cnt[k] = 1;
	return 1;
}

/*
 * First fit onto the loads in s->cur: the units of left[] one at a time
 * (largest first, or smallest first), each into an instance it can share,
 * else into a new instance on the first GPU that has room for one, else
 * nowhere (left[] keeps what is not placed).
 */
static void
fill_first_fit(struct search *s, int *left, int ascending)
{
	int idx[s->nk + 1], n = 0;

	for (int k = 0; k < s->nk; k++) {
		int i = n++;

		while (i > 0 && (ascending ? s->k[idx[i - 1]].mem > s->k[k].mem : s->k[idx[i - 1]].mem < s->k[k].mem)) {
			idx[i] = idx[i - 1];
			i--;
		}
		idx[i] = k;
	}
	for (int q = 0; q < n; q++) {
		int k = idx[q], units = left[k];

		for (int u = 0; u < units; u++) {
			int done = 0;

			for (int j = 0; j < s->ngpus && !done; j++)
				done = share_into(s, j, k);
			for (int j = 0; j < s->ngpus && !done; j++)
				done = new_instance(s, j, k);
			left[k] -= done;
		}
	}
}

/*
 * Each instance of the loads in s->cur into the profile that holds what it
 * holds with the least memory, then SMs, where the GPU's table has the row
 * that makes: a plan no worse at any level but the operations.
 */
static void
shrink(struct search *s)
{
	for (int j = 0; j < s->ngpus; j++) {
		const struct sgpu *sg = &s->sg[j];
		struct load *ld = &s->cur[j];

		for (int i = 0; i < ld->nslots && ld->x; i++) {
			struct slot *sl = &ld->slot[i];
			const struct mig_profile *cur = &sg->g->profiles[sl->profile];
			uint64_t key = ld->x->key - ((uint64_t)1 << (4 * sl->profile));
			int best = sl->profile;

			if (sl->big >= 0 && s->k[sl->big].profile[0])
				continue; /* a named profile is itself */
			for (int p = 0; p < sg->g->nprofiles; p++) {
				const struct mig_profile *pr = &sg->g->profiles[p], *bp = &sg->g->profiles[best];

				if (pr->mem_bytes < sl->mem || pr->sms < sl->need || (sl->big >= 0 && !(sg->fit[sl->big] >> p & 1)))
					continue;
				if (pr->mem_bytes > bp->mem_bytes || (pr->mem_bytes == bp->mem_bytes && pr->sms >= bp->sms))
					continue;
				if ((key >> (4 * p) & 15) == 15 || !mig_gtable_find(sg->t, key + ((uint64_t)1 << (4 * p))))
					continue;
				best = p;
			}
			if (best != sl->profile && (cur->mem_bytes > sg->g->profiles[best].mem_bytes ||
			    cur->sms > sg->g->profiles[best].sms)) {
				ld->x = mig_gtable_find(sg->t, key + ((uint64_t)1 << (4 * best)));
				sl->profile = best;
			}
		}
	}
}

void
mig_complete(struct search *s, int *left)
{
	fill_first_fit(s, left, 0);
	shrink(s);
	mig_offer(s);
}

/* s->cur = s->best. */
static void
best_to_cur(struct search *s)
{
	memcpy(s->cntbuf, s->bestbuf, sizeof *s->cntbuf * (size_t)s->ngpus * MIG_MAX_INST * (size_t)(s->nk + 1));
	for (int j = 0; j < s->ngpus; j++) {
		s->cur[j] = s->best[j];
		for (int i = 0; i < MIG_MAX_INST; i++)
			s->cur[j].slot[i].cnt = s->cntbuf + (s->best[j].slot[i].cnt - s->bestbuf);
	}
}

/* The units of each class the loads in s->cur do not place. */
static void
units_left(const struct search *s, int *left)
{
	for (int k = 0; k < s->nk; k++)
		left[k] = s->k[k].n;
	for (int j = 0; j < s->ngpus; j++)
		for (int i = 0; i < s->cur[j].nslots; i++) {
			const struct slot *sl = &s->cur[j].slot[i];

			if (sl->big >= 0)
				left[sl->big]--;
			else
				for (int k = 0; k < s->nk; k++)
					left[k] -= sl->cnt[k];
		}
}

/*
 * Ruin and recreate around the best plan: for each GPU and each pair of
 * GPUs, their loads emptied and refilled first fit (both orders) with
 * their units and those no GPU holds, each instance shrunk; any better
 * plan becomes the best. Cheap, and often what the proof needed.
 */
void
mig_improve(struct search *s)
{
	int left[s->nk + 1];
	long steps = 0, units = 0, per;

	if (!s->have)
		return;
	for (int k = 0; k < s->nk; k++)
		units += s->k[k].n;
	/* a refill's work: about its time; all of them within a sixteenth of the budget */
	per = units * s->ngpus / 2 + 1;
	for (int a = 0; a < s->ngpus; a++)
		for (int b = a; b < s->ngpus && (steps + 2) * per <= s->limit / 16; b++)
			for (int asc = 0; asc < 2; asc++) {
				best_to_cur(s);
				for (int j = a; j <= b; j += b - a ? b - a : 1)
					mig_load_clear(s, j);
				units_left(s, left);
				fill_first_fit(s, left, asc);
				shrink(s);
				mig_offer(s);
				steps++;
			}
	s->nodes += steps * per;
}

/* First fit from nothing (largest first, or smallest first). */
static void
greedy(struct search *s, int ascending)
{
	int left[s->nk + 1];

	for (int j = 0; j < s->ngpus; j++) {
		mig_load_clear(s, j);
		s->cur[j].x = NULL; /* the row comes with the first instance */
	}
	for (int k = 0; k < s->nk; k++)
		left[k] = s->k[k].n;
	fill_first_fit(s, left, ascending);
	shrink(s);
	mig_offer(s);
}

void
mig_first_plans(struct search *s, const struct mig_request *reqs, int nunits)
{
	greedy(s, 0);
	greedy(s, 1);
	mig_unit_plans(s, reqs, nunits);
}
