/*
 * mig_dp: the exact plan by dynamic programming over the GPUs (doc/mig.md,
 * "The search"), tried once the satisfied level is proven.
 *
 * Everything a plan is scored on adds up over the GPUs, and a GPU's load is
 * worth what its table row and its units per class make it, however the
 * units sit in the row's instances: the waste is the row's instance memory
 * less the units' memory, the SMs the row's, the operations the row's. So
 * the best plan is a shortest path. A state is the units of each class
 * placed on the GPUs so far; GPU j moves it by any vector of units some row
 * of its table can hold, at the best (waste, SMs, operations) of such rows;
 * each state keeps its best value (sums keep the lexicographic order, so
 * the best path to a state is made of best paths). A plan must place the
 * proven most units, S, so states with more are dropped, and so is every
 * state that cannot end strictly better than the best plan known (its
 * value so far plus the least the units it still needs can add, each a
 * lower bound of its own part of the order), and so is a state another
 * state of its layer matches with a plan no worse (mig_dpdom.c). The last
 * layer's best state is a better plan; an empty last layer proves the
 * best plan optimal.
 *
 * Exact whatever it meets, and fast where the classes are few enough for
 * the states to be few; past its share of the work it gives up and the
 * branch and price (mig_prove.c) goes on.
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#include <time.h>
#endif
#include <stdlib.h>
#include <string.h>

int
mig_dp_field(const struct vec *vc, uint64_t key, int k)
{
	return (int)((key >> vc->off[k]) & (((uint64_t)1 << vc->b[k]) - 1));
}

static int
vec_init(struct vec *vc, const struct search *s)
{
	int at = 0;

	vc->nk = s->nk;
	vc->off = xcalloc((size_t)s->nk * 2 + 1, sizeof *vc->off);
	vc->b = vc->off + s->nk;
	vc->bias = vc->guard = 0;
	for (int k = 0; k < s->nk; k++) {
		int b = 1;

		while ((1L << b) - 1 < s->k[k].n)
			b++;
		if (at + b + 1 > 64)
			return -1;
		vc->off[k] = at;
		vc->b[k] = b;
		vc->bias += ((((uint64_t)1 << b) - 1) - (uint64_t)s->k[k].n) << at;
		vc->guard |= (uint64_t)1 << (at + b);
		at += b + 1;
	}
	return 0;
}

int mig_dp_no_prune, mig_dp_blind;
struct mig_score mig_dp_found, mig_dp_own;

/* Is (w, m, o) with m in 1/1024 SMs at least the best plan's, in the objective's order? */
int
mig_dp_no_better(const struct dp *d, uint64_t w, uint64_t m, int o)
{
	uint64_t im = (uint64_t)d->inc.sms * 1024;

	if (mig_dp_no_prune)
		return 0;

	/* a lower bound on the waste of a plan placing every unit rounds up to the lattice of its values */
	if (d->dm && w < d->inc.waste && w + d->dm > d->inc.waste)
		w = d->inc.waste;

	if (w != d->inc.waste)
		return w > d->inc.waste;
	if (m != im)
		return m > im;
	return o >= d->inc.ops;
}

int
mig_dp_spend(struct dp *d, long w)
{
	d->work += w;
	if (d->work > d->limit)
		d->aborted = 1;
	return d->aborted;
}

/* ------------------------------------------------------------------------- the plan it found */

/* Slot sl as content it (one exclusive unit of a class that may not share, or shared units). */
static void
fill_slot(const struct dp *d, int j, struct slot *sl, const struct item *it)
{
	const struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];

	memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
	sl->big = -1;
	sl->nunits = it->units;
	sl->mem = it->mem;
	sl->need = 0;
	for (int k = 0; k < s->nk; k++) {
		int c = mig_dp_field(&d->vc, it->v, k);

		if (!c)
			continue;
		if (!sg->small[k])
			sl->big = k;
		else
			sl->cnt[k] = c;
		sl->need += c * sg->need[k];
	}
}

/*
 * GPU j's load for move m: one content per instance of its row, from the
 * contents the moves were built of (b->opt), adding up to m's units. A DP
 * over the instances: layer i holds each partial sum the first i reach
 * (once, with how), so it stays within the sub-vectors of m's; back from
 * m's vector when the last layer has it. 0: not found (cannot happen for
 * a move built from these contents; within its share of work it is only a
 * guard).
 */
static int
load_of(struct dp *d, int j, const struct build *b, const struct move *m, int *left)
{
	struct search *s = d->s;
	struct load *ld = &s->cur[j];
	struct step { uint64_t v; int from, opt; } *st = NULL;
	size_t n = 1, cap = 0, *at;
	long steps = 0;
	int ok = 0, found = -1;

	for (int k = 0; k < s->nk; k++)
		left[k] -= mig_dp_field(&d->vc, m->v, k);
	ld->x = m->x;
	ld->nslots = m->x ? m->x->n : 0;
	for (int i = 0; i < ld->nslots; i++)
		ld->slot[i].profile = s->sg[j].t->cand[m->x->cand[i]].profile;
	if (!ld->nslots)
		return m->v == 0;
	at = xcalloc((size_t)ld->nslots + 2, sizeof *at);
	xgrow(&st, &cap, 1, sizeof *st);
	st[0] = (struct step){0, -1, -1};
	at[0] = 0;
	at[1] = 1;
	for (int i = 0; i < ld->nslots && steps <= MAX_REBUILD; i++) {
		int p = ld->slot[i].profile;
		struct hmap h;

		mig_hm_init(&h, at[i + 1] - at[i], 1);
		for (size_t a = at[i]; a < at[i + 1] && steps <= MAX_REBUILD; a++) {
			uint64_t r = m->v - st[a].v;

			for (size_t o = 0; o < b->nopt[p]; o++) {
				uint64_t c = b->opt[p][o].v;
				int *slot;

				steps++;
				/* a field of c above r's borrows its guard bit: not within what is left */
				if ((((r | d->vc.guard) - c) & d->vc.guard) != d->vc.guard)
					continue;
				slot = mig_hm_get(&h, st[a].v + c, 0);
				if (*slot >= 0)
					continue;
				*slot = (int)n;
				xgrow(&st, &cap, n + 1, sizeof *st);
				st[n++] = (struct step){st[a].v + c, (int)a, (int)o};
			}
		}
		mig_hm_free(&h);
		at[i + 2] = n;
	}
	mig_dp_spend(d, steps / 8 + 1);
	for (size_t a = at[ld->nslots]; steps <= MAX_REBUILD && a < at[ld->nslots + 1] && found < 0; a++)
		if (st[a].v == m->v)
			found = (int)a;
	for (int i = ld->nslots - 1; found >= 0 && i >= 0; i--) {
		fill_slot(d, j, &ld->slot[i], &b->opt[ld->slot[i].profile][st[found].opt]);
		found = st[found].from;
		ok = 1;
	}
	free(st);
	free(at);
	return ok;
}

/* GPU j's load as in the best plan (a kept GPU of a local run). */
static void
load_kept(struct dp *d, int j, const struct move *m, int *left)
{
	struct search *s = d->s;
	struct load *ld = &s->cur[j];
	const struct load *bst = &s->best[j];

	for (int k = 0; k < s->nk; k++)
		left[k] -= mig_dp_field(&d->vc, m->v, k);
	ld->x = m->x;
	ld->nslots = m->x ? bst->nslots : 0;
	for (int i = 0; i < ld->nslots; i++) {
		int *cnt = ld->slot[i].cnt;

		ld->slot[i] = bst->slot[i];
		ld->slot[i].cnt = cnt;
		memcpy(cnt, bst->slot[i].cnt, sizeof *cnt * (size_t)s->nk);
	}
}


/* ---------------------------------------------------------------------------------- the DP */

/* Is a's value better than b's in the objective's order (waste, SMs, operations)? */
static int
state_better(const struct state *a, const struct state *b)
{
	return a->waste < b->waste || (a->waste == b->waste && (a->sms < b->sms || (a->sms == b->sms && a->ops < b->ops)));
}

static void
push(struct layer *l, struct hmap *h, const struct state *st)
{
	int *at = mig_hm_get(h, st->key, 0);
	struct state *o;

	if (*at < 0) {
		xgrow(&l->st, &l->cap, l->n + 1, sizeof *l->st);
		*at = (int)l->n;
		l->st[l->n++] = *st;
		return;
	}
	o = &l->st[*at];
	if (state_better(st, o))
		*o = *st;
}

static int
state_cmp(const void *a, const void *b)
{
	const struct state *x = a, *y = b;

	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	if (x->sms != y->sms)
		return x->sms < y->sms ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

/*
 * The layers of states, GPU by GPU, from layer from on (0: from scratch;
 * else layers 0..from are given); beam > 0 keeps only the beam most
 * promising states of each layer (a heuristic). 0: out of work.
 */
static int
layers(struct dp *d, const struct gmap *gm, struct layer *ly, const int *restu, size_t beam, int from)
{
	const struct search *s = d->s;
	struct hmap h;

	for (int j = from ? from + 1 : 0; j <= s->ngpus; j++)
		ly[j].n = 0;
	mig_dp_found.satisfied = -1;
	if (!from) {
		mig_hm_init(&h, 1, 1);
		push(&ly[0], &h, &(struct state){d->vc.bias, 0, 0, 0, 0, -1, -1, 0});
		mig_hm_free(&h);
	}
	for (int j = from; j < s->ngpus && !d->aborted; j++) {
		d->done = j;
		mig_hm_init(&h, ly[j].n * 4, 1);
		/*
		 * a state's moves cost one work unit, each move tried a quarter,
		 * each bound of what is to come (its time grows with the classes)
		 * nk / EVAL_WORK
		 */
		for (size_t a = 0; a < ly[j].n && !d->aborted; a++) {
			const struct state *st = &ly[j].st[a];
			double base = 0;
			size_t e;
			long evals = 0;

			if (d->ordered) {
				int left[s->nk + 1];

				mig_dp_lefts(d, st->key, left);
				base = (double)st->waste + mig_dp_state_base(d, left, d->target - st->units, j);
			}
			for (e = 0; e < gm[j].n; e++) {
				const struct move *m = &gm[j].m[e];
				struct state nx;
				const int *at;
				int need;
				uint64_t lw = 0, ls = 0;

				/* the moves by reduced waste: once past the best plan's waste, so are the rest */
				if (d->ordered && base + m->rc > (double)d->inc.waste && !mig_dp_no_prune)
					break;

				nx.key = st->key + m->v;
				nx.units = st->units + m->units;
				if ((nx.key & d->vc.guard) || nx.units > d->target || nx.units + restu[j + 1] < d->target)
					continue;
				nx.waste = st->waste + m->waste;
				nx.sms = st->sms + m->sms;
				nx.ops = st->ops + m->ops;
				if (mig_dp_no_better(d, nx.waste, (uint64_t)nx.sms * 1024, nx.ops))
					continue;
				/* reached already at no worse a value: push would keep that one, so no bound is needed */
				if ((at = mig_hm_find(&h, nx.key, 0)) && !state_better(&nx, &ly[j + 1].st[*at]))
					continue;
				need = d->target - nx.units;
				if (need > 0 && !mig_dp_no_prune) {
					int left[s->nk + 1];

					evals++;
					mig_dp_lefts(d, nx.key, left);
					if (!mig_dp_rest_bounds(d, left, need, j + 1, nx.waste, &lw, &ls) ||
					    mig_dp_no_better(d, nx.waste + lw, (uint64_t)nx.sms * 1024 + ls, nx.ops))
						continue;
				}
				nx.prev = (int)a;
				nx.move = (int)e;
				nx.lb = nx.waste + lw;
				push(&ly[j + 1], &h, &nx);
			}
			mig_dp_spend(d, (long)e / 4 + 1 + evals * s->nk * (d->pl ? 2 : 1) / EVAL_WORK);
		}
		/*
		 * states another one of the layer, with one unit more, covers
		 * (mig_dpdom.c); not in a local run whose kept GPUs hold units: the
		 * unit taken out of a completion might be one of theirs
		 */
		if (!beam && !d->aborted && d->start == d->vc.bias)
			mig_dp_dominate(d, &ly[j + 1], &h, j + 1);
		mig_hm_free(&h);
		if (beam && ly[j + 1].n > beam) {
			mig_dp_spend(d, (long)ly[j + 1].n / 4);
			qsort(ly[j + 1].st, ly[j + 1].n, sizeof *ly[j + 1].st, state_cmp);
			ly[j + 1].n = beam;
		}
	}
	return !d->aborted;
}

/*
 * The last layer's best state as the plan, offered as the best one: 1
 * offered, 0 no state (the best plan stands), -1 its loads not rebuilt.
 * gm[j]: the moves the states of layer j + 1 name.
 */
static int
take_best(struct dp *d, const struct gmap *const *gm, const struct layer *ly, const struct build *bl, const unsigned char *keep)
{
	struct search *s = d->s;
	const struct layer *last = &ly[s->ngpus];
	int best = -1, left[s->nk + 1];

	for (size_t a = 0; a < last->n; a++) {
		const struct state *st = &last->st[a], *b = best >= 0 ? &last->st[best] : NULL;

		if (st->units != d->target)
			continue;
		if (!b || st->waste < b->waste ||
		    (st->waste == b->waste && (st->sms < b->sms || (st->sms == b->sms && st->ops < b->ops))))
			best = (int)a;
	}
	if (best < 0)
		return 0;
	mig_dp_found = (struct mig_score){d->target, last->st[best].waste, last->st[best].sms, last->st[best].ops};
	for (int k = 0; k < s->nk; k++)
		left[k] = s->k[k].n;
	for (int j = s->ngpus - 1; j >= 0; j--) {
		const struct state *st = &ly[j + 1].st[best];

		if (keep && keep[j])
			load_kept(d, j, &gm[j]->m[st->move], left);
		else if (!load_of(d, j, &bl[j], &gm[j]->m[st->move], left))
			return -1;
		best = st->prev;
	}
	mig_search_offer_any(s, left);
	return 1;
}

/* The units of each class GPU j's load in the best plan holds, and what it adds to the score. */
static struct move
best_move(const struct dp *d, int j)
{
	const struct search *s = d->s;
	const struct load *ld = &s->best[j];
	struct move m = {0, 0, 0, 0, ld->x ? ld->x->ops : 0, ld->x, 0};

	for (int i = 0; i < ld->nslots; i++) {
		const struct slot *sl = &ld->slot[i];
		const struct mig_profile *pr = &s->sg[j].g->profiles[sl->profile];

		m.units += sl->nunits;
		m.waste += pr->mem_bytes - sl->mem;
		m.sms += pr->sms;
		if (sl->big >= 0)
			m.v += (uint64_t)1 << d->vc.off[sl->big];
		else
			for (int k = 0; k < s->nk; k++)
				m.v += (uint64_t)sl->cnt[k] << d->vc.off[k];
	}
	if (!m.units)
		m.x = NULL, m.ops = 0; /* the DP's empty load */
	return m;
}

/* What a plan of one more unit is held against: nothing (any such plan is better). */
static const struct mig_score unbeaten = {0, (uint64_t)1 << 60, 1 << 24, 1 << 24};

/*
 * The DP within limit work. keep (NULL: none) names GPUs whose loads stay
 * as in the best plan: each has that one move, and the others' moves are
 * built for the units those leave. 1: the best plan is optimal among the
 * plans the run allows (replaced by a better one the DP found), 0 gave up.
 * more: plans placing one unit more than the best plan, any of them (the
 * first the beam finds): every such plan is better, so nothing is held
 * against the best plan's waste, SMs or operations.
 */
static int
dp_run(struct search *s, long limit, const unsigned char *keep, int more)
{
	struct dp d;
	struct gmap *gm;
	struct layer *ly;
	int *restu, ret = 0, cap[s->nk + 1], from = 0;
	struct build *bl = NULL;
	struct gmap *old;             /* [j < from]: the moves the states of a resumed run's layers j + 1 name */
	const struct gmap **mv;       /* [j]: the moves the states of layer j + 1 name */

	gm = xcalloc((size_t)s->ngpus + 1, sizeof *gm);
	old = xcalloc((size_t)s->ngpus + 1, sizeof *old);
	mv = xcalloc((size_t)s->ngpus + 1, sizeof *mv);
	for (int j = 0; j < s->ngpus; j++)
		mv[j] = &gm[j];
	ly = xcalloc((size_t)s->ngpus + 1, sizeof *ly);
	restu = xcalloc((size_t)s->ngpus + 1, sizeof *restu);

#ifdef MIG_TRACE
	struct timespec t0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
#endif
	memset(&d, 0, sizeof d);
	d.s = s;
	d.target = s->bs.satisfied + more;
	d.maxed = !more;              /* S proven the most (mig_prove.c), unless one more is sought */
	d.inc = more || (mig_dp_blind && !keep) ? unbeaten : s->bs;
	d.limit = limit;
	if (!s->have || vec_init(&d.vc, s) < 0)
		goto out;
	d.start = d.vc.bias;
	for (int k = 0; k < s->nk; k++)
		cap[k] = s->k[k].n;
	/*
	 * The kept GPUs' part of the best plan's score: while the moves are
	 * built, a free GPU's move is held against what is left of it (the
	 * other free GPUs add at least nothing).
	 */
	for (int j = 0; keep && j < s->ngpus; j++)
		if (keep[j]) {
			struct move m = best_move(&d, j);

			d.start += m.v;
			for (int k = 0; k < s->nk; k++)
				cap[k] -= mig_dp_field(&d.vc, m.v, k);
			d.inc.waste -= m.waste;
			d.inc.sms -= m.sms;
			d.inc.ops -= m.ops;
		}
	d.cap = cap;
	mig_dp_bounds_init(&d);
	mig_dp_lattice(&d);
	bl = xcalloc((size_t)s->ngpus + 1, sizeof *bl);
	/*
	 * A local run's kept GPUs need no contents (their one move is known),
	 * and its few units no first prices: the moves' prices below suffice.
	 */
	for (int j = 0; j < s->ngpus && !d.aborted; j++)
		if (!keep || !keep[j])
			mig_dp_build_init(&d, j, &bl[j]);
	if (!d.aborted && !keep)
		mig_dp_preprice(&d, bl);
	for (int j = 0; j < s->ngpus && !d.aborted; j++) {
		if (keep && keep[j]) {
			gm[j].m = xcalloc(1, sizeof *gm[j].m);
			gm[j].m[0] = best_move(&d, j);
			gm[j].n = gm[j].cap = 1;
			gm[j].maxunits = gm[j].m[0].units;
		} else if (s->sg[j].twin && !(keep && keep[j - 1])) {
			/* the same moves as the GPU before it */
			mig_dp_moves_copy(&gm[j], &gm[j - 1]);
		} else if (!keep && !more && mig_dp_moves_take(&d, j, &gm[j])) {
			/* built by the full run before (mig_dpkeep.c) */
		} else {
			mig_dp_moves(&d, &bl[j], &gm[j]);
			/* a full run's moves, whole, for the next full run */
			if (!keep && !more && !d.aborted)
				mig_dp_moves_keep(&d, j, &gm[j]);
		}
#ifdef MIG_TRACE
		fprintf(stderr, "moves %d: %zu work %ld opts", j, gm[j].n, d.work);
		for (int p = 0; p < MIG_MAX_PROFILES; p++)
			fprintf(stderr, " %zu", bl[j].nopt[p]);
		fprintf(stderr, " cap");
		for (int k = 0; k < s->nk; k++)
			fprintf(stderr, " %d", cap[k]);
		fprintf(stderr, "\n");
#endif
	}
	d.inc = more || (mig_dp_blind && !keep) ? unbeaten : s->bs;
	if (!d.aborted) {
		mig_dp_prices(&d, gm);
		mig_dp_order_moves(&d, gm);
		d.ordered = 1;
	}
	for (int j = s->ngpus - 1; j >= 0; j--)
		restu[j] = restu[j + 1] + gm[j].maxunits;
	/*
	 * First a beam (the BEAM states of each layer that promise the least
	 * waste): a good plan fast, so that the exact pass prunes by it.
	 */
	if (!d.aborted && layers(&d, gm, ly, restu, mig_dp_blind && !keep ? 1 : BEAM, 0) && take_best(&d, mv, ly, bl, keep) > 0) {
		if (more)
			goto done;
		d.inc = mig_dp_blind && !keep ? mig_dp_found : s->bs;
		mig_dp_own = mig_dp_found;
		mig_dp_filter_moves(&d, gm);
	}
	if (!d.aborted) {
		/* a full run goes on from where the one before ran out, if it can */
		if (!keep && !more) {
			from = mig_dp_resume(&d, ly, restu, old);
			for (int j = 0; j < from; j++)
				mv[j] = &old[j];
		}
		if (layers(&d, gm, ly, restu, 0, from)) {
			ret = take_best(&d, mv, ly, bl, keep);
			if (ret > 0)
				mig_dp_own = mig_dp_found;
#ifdef MIG_TRACE
			if (from)
				fprintf(stderr, "resumed: take_best %d\n", ret);
#endif
			ret = ret >= 0;
		} else if (!keep && !more)
			mig_dp_save(&d, ly, gm, old, from);
	}
done:
	s->nodes += d.work;
#ifdef MIG_TRACE
	{
		struct timespec te;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &te);
		fprintf(stderr, "dp: cpu %.2f ms work %ld of %ld aborted %d moves",
		    (te.tv_sec - t0.tv_sec) * 1e3 + (te.tv_nsec - t0.tv_nsec) / 1e6, d.work, d.limit, d.aborted);
		for (int j = 0; j < s->ngpus; j++)
			fprintf(stderr, " %zu", gm[j].n);
		fprintf(stderr, " states");
		for (int j = 0; j <= s->ngpus; j++)
			fprintf(stderr, " %zu", ly[j].n);
		fprintf(stderr, "\n");
	}
#endif
out:
	for (int j = 0; bl && j < s->ngpus; j++)
		mig_dp_build_free(&bl[j]);
	free(bl);
	free(d.pp);
	for (int j = 0; j <= s->ngpus; j++) {
		free(gm[j].m);
		free(old[j].m);
		free(ly[j].st);
	}
	free(gm);
	free(old);
	free(mv);
	free(ly);
	free(restu);
	free(d.vc.off);
	free(d.wmin);
	free(d.wordr);
	free(d.pw);
	free(d.hw);
	free(d.pwordr);
	free(d.pl);
	free(d.hl);
	free(d.plordr);
	return ret;
}

/*
 * Plans placing exactly s->bs.satisfied units (the proven most), at most
 * limit work: 1 the best plan is now proven optimal (replaced by a better
 * one the DP found), 0 gave up.
 */
int mig_dp_disabled;

int
mig_dp_run(struct search *s, long limit)
{
	return mig_dp_disabled ? 0 : dp_run(s, limit, NULL, 0);
}

/*
 * Pair of GPUs by pair, the other GPUs' loads kept as in the best plan,
 * the DP finds loads of the two for the units they hold and those no GPU
 * holds (an exact search of that neighbourhood: few units, few states):
 * the best ones, or (more) ones placing one more unit, until the plan
 * places upto. Sweeps over the pairs until one finds nothing better,
 * within limit work; each run gets at most a share of it.
 */
static void
pairs(struct search *s, long limit, int more, int upto, long *found)
{
	unsigned char keep[s->ngpus + 1];
	long end = s->nodes + limit, per = limit / MIG_DP_LOCAL_SHARE + 1;
	int better = 1;

	if (mig_dp_disabled || s->ngpus < 3)
		return;
	while (better && s->have) {
		better = 0;
		for (int a = 0; a < s->ngpus; a++)
			for (int b = a + 1; b < s->ngpus; b++) {
				struct mig_score was = s->bs;

				if (more && s->bs.satisfied >= upto)
					return;
				if (!more && !s->best[a].nslots && !s->best[b].nslots)
					continue; /* what two empty GPUs could place, S says no plan does */
				if (end - s->nodes <= 0)
					return;
				memset(keep, 1, (size_t)s->ngpus);
				keep[a] = keep[b] = 0;
				dp_run(s, end - s->nodes < per ? end - s->nodes : per, keep, more);
				if (mig_score_better(&s->bs, &was)) {
					better = 1;
					(*found)++;
				}
#ifdef MIG_TRACE
				fprintf(stderr, "local %d %d: units %d waste %.3f sms %d (was %d %.3f %d) work %ld of %ld\n", a, b,
				    s->bs.satisfied, s->bs.waste / 1073741824.0, s->bs.sms, was.satisfied,
				    was.waste / 1073741824.0, was.sms, s->nodes, end);
#endif
			}
	}
}

/* A better plan fast, which is what lets the DP's second try and the bounds prune. */
long mig_dp_local_found;

void
mig_dp_improve(struct search *s, long limit)
{
	pairs(s, limit, 0, 0, &mig_dp_local_found);
}

/*
 * Level 1 not proven: plans of one more unit, up to upto units. A pair's
 * run that ends within its share is exact in its neighbourhood: where the
 * two GPUs can place one more unit, it finds such a plan.
 */
long mig_dp_units_found;

void
mig_dp_improve_units(struct search *s, long limit, int upto)
{
	pairs(s, limit, 1, upto, &mig_dp_units_found);
}
