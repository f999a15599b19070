/*
 * mig_search: the branch and bound that finds the optimal plan.
 *
 * A plan is a load per GPU: a row of the GPU's geometry table (profile
 * counts, mig_table.c) and what each of those instances holds (one
 * exclusive unit, or shared small units). The search takes the GPUs one at
 * a time, in classes of identical ones, whose loads it keeps in a fixed
 * order (so that a plan and its permutations among twins are searched
 * once); units are counted per class of identical units, never one by one.
 * A load is tried only if the Lagrangian bound (mig_bound.c) says that the
 * plans through it could still beat the best one found: the bound at a node
 * is the value so far, plus the prices of the units left, plus each
 * remaining GPU's best reduced value; a load of GPU j keeps the bound at
 * least the best value only if its own reduced value is close enough to
 * GPU j's best. When the search ends without reaching its node budget,
 * every plan has been either tried or bounded: the best is optimal.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>

int
mig_need_sms(const struct mig_gpu *g, double share)
{
	if (share <= 0)
		return 0;
	return (int)ceil(share * g->full_sms - 1e-9);
}

long double
mig_inst_value(const struct search *s, const struct mig_profile *pr, int n, uint64_t mem)
{
	return s->cs * n - s->cw * ((long double)pr->mem_bytes - (long double)mem) / MIG_GIB - s->cm * pr->sms;
}

/* The value of a unit of small class k shared in an instance of GPU j. */
static long double
item_value(const struct search *s, const struct sgpu *sg, int k)
{
	return s->cs + s->cw * (long double)sg->mem[k] / MIG_GIB - s->pi[k];
}

long double
mig_level_value(const struct mig_score *sc, int lvl)
{
	switch (lvl) {
	case 1:
		return sc->satisfied;
	case 2:
		return -(long double)sc->waste / MIG_GIB;
	case 3:
		return -sc->sms;
	default:
		return -sc->ops;
	}
}

/*
 * Could a plan whose value at this level is at most bound beat the best?
 * Only by a whole step (a unit, an SM, an operation, a byte of waste): a
 * tie at this level is settled at the next. The bound is a long double
 * sum of numbers of size mag at most, whose rounding stays below
 * 1e-14 * mag; pruning waits until the bound is that far below.
 */
int
mig_could_beat_rounded(const struct search *s, long double bound)
{
	if (!s->have)
		return 1;
	return bound + 1e-14L * s->mag >= s->inc + s->step;
}

/* The bound first moved down to the next value a plan of the node can take (mig_lattice.c). */
int
mig_could_beat(const struct search *s, long double bound)
{
	if (!mig_could_beat_rounded(s, bound))
		return 0; /* rounding only lowers it */
	return s->lvl == 1 || mig_could_beat_rounded(s, mig_lattice_round(s, bound));
}

/* ------------------------------------------------------------ load order */

/* Total order of instance contents: exclusive before shared, then by class order. */
static int
slot_cmp(const struct search *s, int j, const struct slot *a, const struct slot *b)
{
	const struct sgpu *sg = &s->sg[j];

	if (a->profile != b->profile)
		return a->profile < b->profile ? -1 : 1;
	if ((a->big >= 0) != (b->big >= 0))
		return a->big >= 0 ? 1 : -1;
	if (a->big >= 0) {
		if (a->big == b->big)
			return 0;
		for (int i = 0; i < sg->nkorder[a->profile]; i++) {
			int k = sg->korder[a->profile * s->nk + i];

			if (k == a->big)
				return 1;
			if (k == b->big)
				return -1;
		}
		return 0;
	}
	for (int i = 0; i < s->nk; i++) {
		int k = sg->order[i];

		if (a->cnt[k] != b->cnt[k])
			return a->cnt[k] > b->cnt[k] ? 1 : -1;
	}
	return 0;
}

static int
load_cmp(const struct search *s, int j, const struct load *a, const struct load *b)
{
	uint64_t ka = a->x ? a->x->key : 0, kb = b->x ? b->x->key : 0;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	for (int i = 0; i < a->nslots; i++) {
		int c = slot_cmp(s, j, &a->slot[i], &b->slot[i]);

		if (c)
			return c;
	}
	return 0;
}

/* ------------------------------------------------------------ the search */

static void level(struct search *s, int j);

static void
leaf(struct search *s)
{
	if (s->have && !mig_score_better(&s->sc, &s->bs))
		return;
	for (int k = 0; k < s->nk; k++)
		if (s->hi[k] - s->rem[k] < s->lo[k])
			return; /* outside the node: too few of class k */
	s->bs = s->sc;
	s->inc = mig_level_value(&s->bs, s->lvl);
	s->have = 1;
	memcpy(s->bestbuf, s->cntbuf, sizeof *s->cntbuf * (size_t)s->ngpus * MIG_MAX_INST * (size_t)(s->nk + 1));
	for (int j = 0; j < s->ngpus; j++) {
		s->best[j] = s->cur[j];
		for (int i = 0; i < MIG_MAX_INST; i++)
			s->best[j].slot[i].cnt = s->bestbuf + (s->cur[j].slot[i].cnt - s->cntbuf);
	}
}

/* GPU j's load is complete: account for it and go on with the next GPU. */
static void
gpu_done(struct search *s, int j)
{
	struct load *ld = &s->cur[j];
	struct mig_score keep = s->sc;
	long double val = s->val;

	if (s->sg[j].twin && load_cmp(s, j, ld, &s->cur[j - 1]) > 0)
		return;
	for (int i = 0; i < ld->nslots; i++) {
		const struct slot *sl = &ld->slot[i];
		const struct mig_profile *pr = &s->sg[j].g->profiles[sl->profile];

		s->sc.satisfied += sl->nunits;
		s->sc.waste += pr->mem_bytes - sl->mem;
		s->sc.sms += pr->sms;
		s->val += mig_inst_value(s, pr, sl->nunits, sl->mem);
	}
	s->sc.ops += ld->x ? ld->x->ops : 0;
	s->val -= s->co * (ld->x ? ld->x->ops : 0);
	level(s, j + 1);
	s->sc = keep;
	s->val = val;
}

static void fill(struct search *s, int j, int i, long double red);

/*
 * Slot i of GPU j shared: the units of the small classes from position pos
 * of the class order on. tight: the counts so far equal those of the slot
 * before, of the same profile, which this one may not exceed.
 */
static void
shared(struct search *s, int j, int i, long double red, int pos, int tight, long double part)
{
	const struct sgpu *sg = &s->sg[j];
	struct slot *sl = &s->cur[j].slot[i];
	const struct mig_profile *pr = &sg->g->profiles[sl->profile];
	const struct slot *prev = i > 0 && s->cur[j].slot[i - 1].profile == sl->profile ? &s->cur[j].slot[i - 1] : NULL;
	int k, maxc;
	long double v, opt;

	if (s->aborted || ++s->nodes > s->limit) {
		s->aborted = 1; /* a node of the search like fill's */
		return;
	}
	while (pos < s->nk && !(sg->small[sg->order[pos]] && s->rem[sg->order[pos]] > 0 &&
	    sg->need[sg->order[pos]] <= pr->sms - sl->need))
		pos++;
	if (pos == s->nk) {
		if (sl->nunits == 0)
			return;
		fill(s, j, i + 1, red + part + mig_inst_value(s, pr, 0, 0));
		return;
	}
	k = sg->order[pos];
	v = item_value(s, sg, k);
	maxc = (int)((pr->mem_bytes - sl->mem) / sg->mem[k]);
	if (maxc > s->rem[k])
		maxc = s->rem[k];
	if (sg->need[k] > 0 && (pr->sms - sl->need) / sg->need[k] < maxc)
		maxc = (pr->sms - sl->need) / sg->need[k];
	if (tight && prev && prev->big < 0 && maxc > prev->cnt[k])
		maxc = prev->cnt[k];
	/* what the rest could add: the next class in the order has the best value per byte */
	opt = 0;
	if (pos + 1 < s->nk) {
		int o = sg->order[pos + 1];

		if (sg->small[o]) {
			opt = item_value(s, sg, o) / (long double)sg->mem[o];
			opt = opt > 0 ? opt : 0;
		}
	}
	for (int c = maxc; c >= 0 && !s->aborted; c--) {
		long double left = (long double)(pr->mem_bytes - sl->mem - (uint64_t)c * sg->mem[k]);

		if (!mig_could_beat(s, s->thr_base + red + part + c * v + opt * left + mig_inst_value(s, pr, 0, 0) +
		    s->rest[i + 1]))
			continue;
		sl->cnt[k] = c;
		sl->nunits += c;
		sl->mem += (uint64_t)c * sg->mem[k];
		sl->need += c * sg->need[k];
		s->rem[k] -= c;
		shared(s, j, i, red, pos + 1, tight && prev && prev->big < 0 && c == prev->cnt[k], part + c * v);
		s->rem[k] += c;
		sl->need -= c * sg->need[k];
		sl->mem -= (uint64_t)c * sg->mem[k];
		sl->nunits -= c;
		sl->cnt[k] = 0;
	}
}

/* Slot i of GPU j's load onwards; red: the reduced value of slots 0..i-1. */
static void
fill(struct search *s, int j, int i, long double red)
{
	const struct sgpu *sg = &s->sg[j];
	struct load *ld = &s->cur[j];
	struct slot *sl, *prev;
	const struct mig_profile *pr;
	int start = 0;

	if (s->aborted)
		return;
	if (++s->nodes > s->limit) {
		s->aborted = 1;
		return;
	}
	if (i == ld->nslots) {
		gpu_done(s, j);
		return;
	}
	if (!mig_could_beat(s, s->thr_base + red + s->rest[i]))
		return;
	sl = &ld->slot[i];
	pr = &sg->g->profiles[sl->profile];
	prev = i > 0 && ld->slot[i - 1].profile == sl->profile ? &ld->slot[i - 1] : NULL;
	/* exclusive units, best first; after an exclusive slot of this profile, none better than its */
	if (prev && prev->big < 0)
		start = sg->nkorder[sl->profile];
	else if (prev)
		while (start < sg->nkorder[sl->profile] && sg->korder[sl->profile * s->nk + start] != prev->big)
			start++;
	for (int n = start; n < sg->nkorder[sl->profile] && !s->aborted; n++) {
		int k = sg->korder[sl->profile * s->nk + n];
		long double rv;

		if (!s->rem[k])
			continue;
		rv = mig_inst_value(s, pr, 1, sg->mem[k]) - s->pi[k];
		if (!mig_could_beat(s, s->thr_base + red + rv + s->rest[i + 1]))
			break; /* the rest are worse */
		sl->big = k;
		sl->nunits = 1;
		sl->mem = sg->mem[k];
		sl->need = sg->need[k];
		s->rem[k]--;
		fill(s, j, i + 1, red + rv);
		s->rem[k]++;
	}
	sl->big = -1;
	sl->nunits = 0;
	sl->mem = 0;
	sl->need = 0;
	memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
	shared(s, j, i, red, 0, prev != NULL, 0);
}

/* Profiles by memory, largest first (they are the hardest to fill), then index. */
static int
slot_profile_cmp(const struct mig_gpu *g, int a, int b)
{
	if (g->profiles[a].mem_bytes != g->profiles[b].mem_bytes)
		return g->profiles[a].mem_bytes > g->profiles[b].mem_bytes ? -1 : 1;
	return a - b;
}

/* Set up GPU j's load for table row x: its slots, largest profiles first. */
static void
load_rows(struct search *s, int j, const struct geo *x, const long double *dyn)
{
	struct load *ld = &s->cur[j];
	const struct mig_gpu *g = s->sg[j].g;
	int prof[MIG_MAX_PROFILES], np = 0;

	ld->x = x;
	ld->nslots = 0;
	for (int p = 0; p < g->nprofiles; p++)
		if (x && (x->key >> (4 * p) & 15)) {
			int i = np++;

			while (i > 0 && slot_profile_cmp(g, prof[i - 1], p) > 0) {
				prof[i] = prof[i - 1];
				i--;
			}
			prof[i] = p;
		}
	for (int q = 0; q < np; q++)
		for (int c = (int)(x->key >> (4 * prof[q]) & 15); c > 0; c--) {
			struct slot *sl = &ld->slot[ld->nslots++];

			sl->profile = prof[q];
			sl->big = -1;
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
		}
	s->rest[ld->nslots] = 0;
	for (int i = ld->nslots - 1; i >= 0; i--)
		s->rest[i] = s->rest[i + 1] + dyn[ld->slot[i].profile];
}

static void
level(struct search *s, int j)
{
	const struct sgpu *sg;
	long double bound, *dyn, base, *rest = s->rest, thr = s->thr_base;

	if (s->aborted)
		return;
	if (j == s->ngpus) {
		leaf(s);
		return;
	}
	sg = &s->sg[j];
	bound = s->val + s->cconst;
	for (int k = 0; k < s->nk; k++)
		bound += s->pi[k] * s->rem[k];
	for (int h = j; h < s->ngpus; h++)
		bound += s->sg[h].h;
	if (!mig_could_beat(s, bound))
		return;
	dyn = s->dyn + (size_t)j * MIG_MAX_PROFILES;
	mig_bound_instances(s, j, s->rem, dyn);
	s->nodes += (long)sg->t->ngeo / 8 + s->nk; /* this GPU's rows and classes: its work */
	base = bound - sg->h;
	/* fill() reads rest and thr_base of the GPU it works on: one of each per level */
	s->rest = s->restbuf + (size_t)j * (MIG_MAX_INST + 1);
	if (s->fixed[j] != -2) {
		/* the proof fixed this GPU's row (mig_prove.c) */
		const struct geo *x = s->fixed[j] >= 0 ? &sg->t->geo[s->fixed[j]] : NULL;

		load_rows(s, j, x, dyn);
		s->thr_base = base - s->co * (x ? x->ops : 0);
		fill(s, j, 0, 0);
	} else if (sg->t->ngeo == 0) {
		/* no valid geometry around the busy instances: nothing new here */
		load_rows(s, j, NULL, dyn);
		s->thr_base = base;
		fill(s, j, 0, 0);
	}
	for (size_t r = 0; r < sg->t->ngeo && !s->aborted && s->fixed[j] == -2; r++) {
		const struct geo *x = &sg->t->geo[sg->conf[r]];
		long double ub = 0;

		for (int p = 0; p < sg->g->nprofiles; p++) {
			int c = (int)(x->key >> (4 * p) & 15);

			if (c && dyn[p] < -1e29L)
				ub = -1e30L;
			else if (c)
				ub += c * dyn[p];
		}
		ub -= s->co * x->ops;
		if (ub < -1e29L || !mig_could_beat(s, base + ub))
			continue;
		load_rows(s, j, x, dyn);
		s->thr_base = base - s->co * x->ops;
		fill(s, j, 0, 0);
	}
	s->rest = rest;
	s->thr_base = thr;
}

/* ------------------------------------------------------------- the orders */

/* The orders that try the best first, at the current prices. */
static void
make_orders(struct search *s)
{
	for (int j = 0; j < s->ngpus; j++) {
		struct sgpu *sg = &s->sg[j];
		const struct mig_gpu *g = sg->g;
		long double best[MIG_MAX_PROFILES], *key = xcalloc(sg->t->ngeo + 1, sizeof *key);
		int n = 0;

		/* small classes by value per byte, then the rest */
		for (int k = 0; k < s->nk; k++)
			if (sg->small[k]) {
				long double d = item_value(s, sg, k) / (long double)sg->mem[k];
				int i = n++;

				while (i > 0) {
					int o = sg->order[i - 1];
					long double e = item_value(s, sg, o) / (long double)sg->mem[o];

					if (e >= d)
						break;
					sg->order[i] = o;
					i--;
				}
				sg->order[i] = k;
			}
		for (int k = 0; k < s->nk; k++)
			if (!sg->small[k])
				sg->order[n++] = k;
		/* exclusive classes of each profile by reduced value */
		for (int p = 0; p < g->nprofiles; p++) {
			int *o = sg->korder + p * s->nk, m = 0;

			for (int k = 0; k < s->nk; k++) {
				long double v;
				int i;

				if (sg->small[k] || !(sg->fit[k] >> p & 1))
					continue;
				v = mig_inst_value(s, &g->profiles[p], 1, sg->mem[k]) - s->pi[k];
				for (i = m++; i > 0; i--) {
					long double w = mig_inst_value(s, &g->profiles[p], 1, sg->mem[o[i - 1]]) - s->pi[o[i - 1]];

					if (w >= v)
						break;
					o[i] = o[i - 1];
				}
				o[i] = k;
			}
			sg->nkorder[p] = m;
		}
		/* table rows by their bound, best first; ties by fewer operations, then table order */
		mig_bound_instances(s, j, s->rem, best);
		for (size_t r = 0; r < sg->t->ngeo; r++) {
			long double v = 0;

			for (int p = 0; p < g->nprofiles; p++) {
				int c = (int)(sg->t->geo[r].key >> (4 * p) & 15);

				if (c)
					v += best[p] < -1e29L ? -1e30L : c * best[p];
			}
			key[r] = v - s->co * sg->t->geo[r].ops;
			sg->conf[r] = (int)r;
		}
		for (size_t r = 1; r < sg->t->ngeo; r++) {
			int x = sg->conf[r];
			size_t i = r;

			while (i > 0) {
				int y = sg->conf[i - 1];

				if (key[y] > key[x] || (key[y] == key[x] && (sg->t->geo[y].ops < sg->t->geo[x].ops ||
				    (sg->t->geo[y].ops == sg->t->geo[x].ops && y < x))))
					break;
				sg->conf[i] = y;
				i--;
			}
			sg->conf[i] = x;
		}
		free(key);
	}
}

/* --------------------------------------------------------------- running */

static void
run(struct search *s, long limit)
{
	s->limit = s->nodes + limit;
	s->aborted = 0;
	memset(&s->sc, 0, sizeof s->sc);
	s->val = 0;
	for (int k = 0; k < s->nk; k++)
		s->rem[k] = s->hi[k];
	level(s, 0);
}

void
mig_search_offer(struct search *s)
{
	leaf(s);
}

void
mig_search_dfs(struct search *s, long limit)
{
	make_orders(s);
	run(s, limit);
}

void
mig_search_magnitude(struct search *s)
{
	long double m = 1 + fabsl(s->cconst) + fabsl(s->root);

	for (int k = 0; k < s->nk; k++)
		m += fabsl(s->pi[k]) * s->k[k].n + fabsl(s->cs) * s->k[k].n;
	for (int j = 0; j < s->ngpus; j++) {
		const struct mig_gpu *g = s->sg[j].g;

		m += fabsl(s->sg[j].h) + fabsl(s->co) * 2 * MIG_MAX_INST;
		for (int p = 0; p < g->nprofiles; p++)
			m += (fabsl(s->cw) * (long double)g->profiles[p].mem_bytes / MIG_GIB + fabsl(s->cm) * g->profiles[p].sms) *
			    g->profiles[p].max_count;
	}
	s->mag = m;
}
