/*
 * mig_heur: plans found fast, for the proof to beat or to prove (doc/mig.md,
 * "The search"): first fit onto any partial plan (largest or smallest
 * units first), each instance shrunk to the smallest profile that holds
 * it, the unit-by-unit search's plans (mig_unitsearch.c) as loads, and ruin
 * and recreate around the best plan (a GPU's or two GPUs' loads refilled).
 * None of this bounds anything: good plans only make the bound prune.
 */
#include "share/mig.h"
#include "share/mig_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ a first plan, fast */

/*
 * First fit onto the loads in s->cur: the units of left[] one at a time
 * (largest first, or smallest first), each into an instance it can share,
 * else into a new instance of the cheapest profile that fits it on the
 * first GPU whose geometry table still has a row for it, else nowhere
 * (left[] keeps what is not placed).
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

			for (int j = 0; j < s->ngpus && !done; j++) {
				const struct sgpu *sg = &s->sg[j];
				struct load *ld = &s->cur[j];

				for (int i = 0; i < ld->nslots && sg->small[k] && !done; i++) {
					struct slot *sl = &ld->slot[i];
					const struct mig_profile *pr = &sg->g->profiles[sl->profile];

					if (sl->big < 0 && sl->mem + sg->mem[k] <= pr->mem_bytes && sl->need + sg->need[k] <= pr->sms) {
						sl->cnt[k]++;
						sl->nunits++;
						sl->mem += sg->mem[k];
						sl->need += sg->need[k];
						done = 1;
					}
				}
			}
			for (int j = 0; j < s->ngpus && !done; j++) {
				const struct sgpu *sg = &s->sg[j];
				struct load *ld = &s->cur[j];
				uint64_t key = ld->x ? ld->x->key : 0;
				int best = -1;

				if (ld->nslots >= MIG_MAX_INST)
					continue;
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
				if (best >= 0) {
					struct slot *sl = &ld->slot[ld->nslots++];

					ld->x = mig_gtable_find(sg->t, key + ((uint64_t)1 << (4 * best)));
					sl->profile = best;
					sl->big = sg->small[k] ? -1 : k;
					sl->nunits = 1;
					sl->mem = sg->mem[k];
					sl->need = sg->need[k];
					memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
					if (sg->small[k])
						sl->cnt[k] = 1;
					done = 1;
				}
			}
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

/* The score of the loads in s->cur; offered as a candidate for the best plan (s->rem: the units left). */
void
mig_search_offer_cur(struct search *s, const int *left)
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
	for (int k = 0; k < s->nk; k++)
		s->rem[k] = left[k];
	s->sc = sc;
	mig_search_offer(s);
}

/* s->cur, as mig_search_offer_cur, as a plan of any node (the current node's bounds on the units set aside). */
void
mig_search_offer_any(struct search *s, const int *left)
{
	int *lo = s->lo, *hi = s->hi, zero[s->nk + 1], all[s->nk + 1];

	for (int k = 0; k < s->nk; k++) {
		zero[k] = 0;
		all[k] = s->k[k].n;
	}
	s->lo = zero;
	s->hi = all;
	mig_search_offer_cur(s, left);
	s->lo = lo;
	s->hi = hi;
}

/*
 * A plan from the loads in s->cur and the units left[] (which it changes):
 * the units left placed first fit, each instance shrunk to the smallest
 * profile that holds it, and offered as a candidate for the best plan.
 */
void
mig_search_complete(struct search *s, int *left)
{
	fill_first_fit(s, left, 0);
	shrink(s);
	mig_search_offer_cur(s, left);
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
 * plan becomes the best. Cheap, and often what the bound needed.
 */
void
mig_search_improve(struct search *s)
{
	int left[s->nk + 1], lo[s->nk + 1], hi[s->nk + 1];
	long steps = 0, units = 0, per;

	if (!s->have)
		return;
	for (int k = 0; k < s->nk; k++) {
		lo[k] = s->lo[k];
		s->lo[k] = 0; /* any plan: not a node's */
		hi[k] = s->hi[k];
		s->hi[k] = s->k[k].n;
		units += s->k[k].n;
	}
	/* a refill's work: about its time; all of them within a sixteenth of the budget */
	per = units * s->ngpus / 2 + 1;
	for (int a = 0; a < s->ngpus; a++)
		for (int b = a; b < s->ngpus && (steps + 2) * per <= s->budget / 16; b++)
			for (int asc = 0; asc < 2; asc++) {
				best_to_cur(s);
				for (int j = a; j <= b; j += b - a ? b - a : 1) {
					s->cur[j].x = s->sg[j].t->ngeo ? mig_gtable_find(s->sg[j].t, 0) : NULL;
					s->cur[j].nslots = 0;
				}
				units_left(s, left);
				fill_first_fit(s, left, asc);
				shrink(s);
				mig_search_offer_cur(s, left);
				steps++;
			}
	for (int k = 0; k < s->nk; k++) {
		s->lo[k] = lo[k];
		s->hi[k] = hi[k];
	}
	s->nodes += steps * per;
}

/*
 * First fit from nothing (largest first, or smallest first). Good plans are
 * what make the bound prune; the search proves or improves on this one.
 */
static void
greedy(struct search *s, int ascending)
{
	int left[s->nk + 1];

	for (int j = 0; j < s->ngpus; j++) {
		s->cur[j].x = NULL;
		s->cur[j].nslots = 0;
		for (int i = 0; i < MIG_MAX_INST; i++)
			memset(s->cur[j].slot[i].cnt, 0, sizeof *s->cur[j].slot[i].cnt * (size_t)s->nk);
	}
	for (int k = 0; k < s->nk; k++)
		left[k] = s->k[k].n;
	fill_first_fit(s, left, ascending);
	shrink(s);
	mig_search_offer_cur(s, left);
}

/* The best plan of the unit search (mig_unitsearch.c) as loads, a candidate for the best. */
static void
seed(struct search *s, const struct usearch *us)
{
	struct mig_score sc = {0, 0, 0, 0};

	if (!us->found)
		return;
	for (int j = 0; j < s->ngpus; j++) {
		const struct sgpu *sg = &s->sg[j];
		const struct gstate *st = &us->best_gs[sg->gpu];
		struct load *ld = &s->cur[j];

		ld->x = mig_gtable_find(sg->t, st->key);
		ld->nslots = st->nopen;
		for (int o = 0; o < st->nopen; o++) {
			struct slot *sl = &ld->slot[o];
			const struct mig_profile *pr = &sg->g->profiles[st->open[o].profile];

			sl->profile = st->open[o].profile;
			sl->big = -1;
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
			for (int u = 0; u < us->nunits; u++) {
				int k = s->cls[us->units[u].req];

				if (us->best_ag[u] != sg->gpu || us->best_ai[u] != o)
					continue;
				if (st->open[o].exclusive)
					sl->big = k;
				else
					sl->cnt[k]++;
				sl->nunits++;
				sl->mem += sg->mem[k];
				sl->need += sg->need[k];
			}
			sc.satisfied += sl->nunits;
			sc.waste += pr->mem_bytes - sl->mem;
			sc.sms += pr->sms;
		}
		sc.ops += ld->x ? ld->x->ops : 0;
	}
	s->sc = sc;
	mig_search_offer(s);
}

/*
 * The unit search, least needy units first then largest first, each with an
 * eighth of the budget: good plans quickly.
 */
static void
first_plans(struct search *s, const struct mig_request *reqs, int nunits)
{
	struct usearch a, b;
	long limit = s->limit / 64 + 1;

	mig_usearch_init(&a, s->gpus, s->ngpus, reqs, nunits, s->tab, limit, 1);
	mig_usearch_unit(&a, 0);
	s->nodes += a.nodes;
	seed(s, &a);
	mig_usearch_init(&b, s->gpus, s->ngpus, reqs, nunits, s->tab, limit, 0);
	b.best = a.best;
	b.have_best = a.have_best;
	mig_usearch_unit(&b, 0);
	s->nodes += b.nodes;
	seed(s, &b);
	mig_usearch_free(&a);
	mig_usearch_free(&b);
}

void
mig_search_first(struct search *s, const struct mig_request *reqs, int nunits)
{
	s->lvl = 1;
	for (int k = 0; k < s->nk; k++) {
		s->pi[k] = 0;
		s->lo[k] = 0;
		s->hi[k] = s->k[k].n;
		s->rem[k] = s->k[k].n;
	}
	mig_lattice_node(s);
	greedy(s, 0);
	greedy(s, 1);
	first_plans(s, reqs, nunits);
}
