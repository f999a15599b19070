/*
 * mig_dpkeep: what one full run of the DP over the GPUs (mig_dp.c) keeps
 * for the next full run of the same search (doc/mig.md, "The DP over the
 * GPUs"): each GPU's moves, once built (s->dp_moves), and where its exact
 * pass ran out of work, its complete layers and the moves their states
 * name (s->dp_saved). Each was built against a plan no better than any
 * later run's, with bounds valid for every plan, so a later run takes it,
 * drops what its own plan and bounds rule out, and builds nothing again.
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

long mig_dp_moves_reused;

/* dst: a copy of src's moves, its own array. */
void
mig_dp_moves_copy(struct gmap *dst, const struct gmap *src)
{
	*dst = *src;
	dst->m = xcalloc(src->n + 1, sizeof *dst->m);
	if (src->n)
		memcpy(dst->m, src->m, src->n * sizeof *dst->m);
	dst->cap = src->n;
}

static void
saved_free(struct mig_dp_saved *v)
{
	if (!v)
		return;
	for (int j = 0; j <= v->depth; j++)
		free(v->ly[j].st);
	for (int j = 0; j < v->depth; j++)
		free(v->gm[j].m);
	free(v->ly);
	free(v->gm);
	free(v);
}

void
mig_dp_moves_free(struct search *s)
{
	for (int j = 0; s->dp_moves && j < s->ngpus; j++)
		free(s->dp_moves[j].m);
	free(s->dp_moves);
	s->dp_moves = NULL;
	saved_free(s->dp_saved);
	s->dp_saved = NULL;
}

/*
 * GPU j's moves from the full run before (s->dp_moves), into g: 1 taken,
 * 0 none kept for this run's target. Built against a plan no better than
 * this one and a bound as valid: a superset of what would be built now,
 * each vector with the same best row; what this run's build would drop
 * (no better by itself, or at the first prices) is dropped here, and
 * mig_dp_prices drops what this plan rules out.
 */
int
mig_dp_moves_take(struct dp *d, int j, struct gmap *g)
{
	const struct search *s = d->s;
	const struct gmap *c;

	if (!s->dp_moves || s->dp_moves_units != d->target || !s->dp_moves[j].m)
		return 0;
	c = &s->dp_moves[j];
	g->m = xcalloc(c->n + 1, sizeof *g->m);
	g->n = 0;
	for (size_t e = 0; e < c->n; e++) {
		const struct move *m = &c->m[e];
		double lb = d->L0 - d->hq[j] + (double)m->waste - TOL_BYTES;

		for (int k = 0; d->priced && k < s->nk; k++)
			lb -= d->pp[k] * mig_dp_field(&d->vc, m->v, k);
		if (m->x && (mig_dp_no_better(d, m->waste, (uint64_t)m->sms * 1024, m->ops) ||
		    (d->priced && lb > 0 && mig_dp_no_better(d, (uint64_t)lb, 0, -1))))
			continue;
		g->m[g->n++] = *m;
	}
	g->cap = c->n;
	g->maxunits = c->maxunits;
	mig_dp_spend(d, (long)(c->n / 64) + 1);
	mig_dp_moves_reused++;
#ifdef MIG_TRACE
	fprintf(stderr, "moves %d: %zu of %zu reused work %ld\n", j, g->n, c->n, d->work);
#endif
	return 1;
}

/* GPU j's moves as a full run built them, whole, kept for the next full run. */
void
mig_dp_moves_keep(struct dp *d, int j, const struct gmap *g)
{
	struct search *s = d->s;

	if (!s->dp_moves || s->dp_moves_units != d->target) {
		mig_dp_moves_free(s);
		s->dp_moves = xcalloc((size_t)s->ngpus + 1, sizeof *s->dp_moves);
		s->dp_moves_units = d->target;
	}
	mig_dp_moves_copy(&s->dp_moves[j], g);
}

long mig_dp_layers_reused;

/*
 * The exact pass from the layers a full run before left (s->dp_saved),
 * taken into ly: layers 0..depth - 1 as they are, layer depth less the
 * states this run's plan and bounds drop (no plan through a dropped one
 * beats the best one); the moves the saved states name go to old[j].
 * Those states were held against a plan no better than this run's, by
 * bounds valid for every plan, with moves this run's are among: every
 * plan this run would find has its states there, or a plan no worse that
 * dominance kept for it. The depth taken, 0: none.
 */
int
mig_dp_resume(struct dp *d, struct layer *ly, const int *restu, struct gmap *old)
{
	struct search *s = d->s;
	struct mig_dp_saved *v = s->dp_saved;
	struct layer *l;
	size_t w = 0, n;
	long evals = 0;
	int depth;

	if (!v || v->units != d->target || v->depth < 1 || v->depth >= s->ngpus)
		return 0;
	depth = v->depth;
	for (int j = 0; j <= depth; j++) {
		free(ly[j].st);
		ly[j] = v->ly[j];
	}
	for (int j = 0; j < depth; j++)
		old[j] = v->gm[j];
	free(v->ly);
	free(v->gm);
	free(v);
	s->dp_saved = NULL;
	l = &ly[depth];
	n = l->n;
	for (size_t a = 0; a < n; a++) {
		const struct state *st = &l->st[a];
		int need = d->target - st->units, left[s->nk + 1];
		uint64_t lw = 0, ls = 0;

		if (mig_dp_no_better(d, st->waste, (uint64_t)st->sms * 1024, st->ops) || st->units + restu[depth] < d->target)
			continue;
		if (need > 0) {
			evals++;
			mig_dp_lefts(d, st->key, left);
			if (!mig_dp_rest_bounds(d, left, need, depth, st->waste, &lw, &ls) ||
			    mig_dp_no_better(d, st->waste + lw, (uint64_t)st->sms * 1024 + ls, st->ops))
				continue;
		}
		l->st[w] = *st;
		l->st[w++].lb = st->waste + lw;
	}
	l->n = w;
	mig_dp_spend(d, (long)n / 4 + 1 + evals * s->nk * (d->pl ? 2 : 1) / EVAL_WORK);
	mig_dp_layers_reused++;
	d->done = depth;
#ifdef MIG_TRACE
	fprintf(stderr, "resume: layer %d, %zu of %zu states kept\n", depth, w, n);
#endif
	return depth;
}

/*
 * The exact pass ran out of work: its complete layers 0..d->done and the
 * moves their states name (old[j] below from, gm[j] from it on) kept for
 * the next full run; the layers' and old's arrays are taken (emptied here).
 */
void
mig_dp_save(struct dp *d, struct layer *ly, struct gmap *gm, struct gmap *old, int from)
{
	struct search *s = d->s;
	struct mig_dp_saved *v;
	int depth = d->done;

	saved_free(s->dp_saved);
	s->dp_saved = NULL;
	if (depth < 1 || depth >= s->ngpus)
		return;
	v = xcalloc(1, sizeof *v);
	v->units = d->target;
	v->depth = depth;
	v->ly = xcalloc((size_t)depth + 1, sizeof *v->ly);
	v->gm = xcalloc((size_t)depth + 1, sizeof *v->gm);
	for (int j = 0; j <= depth; j++) {
		v->ly[j] = ly[j];
		ly[j] = (struct layer){NULL, 0, 0};
	}
	for (int j = 0; j < depth; j++) {
		if (j < from) {
			v->gm[j] = old[j];
			old[j] = (struct gmap){NULL, 0, 0, 0};
		} else
			mig_dp_moves_copy(&v->gm[j], &gm[j]);
	}
	s->dp_saved = v;
#ifdef MIG_TRACE
	fprintf(stderr, "saved: layers 0..%d, %zu states in the last\n", depth, v->ly[depth].n);
#endif
}
