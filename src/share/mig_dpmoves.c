/*
 * mig_dpmoves: GPU j's moves for the DP over the GPUs (mig_dp.c): every
 * vector of units some row of its geometry table can hold (each instance
 * one exclusive unit or shared units), with the best such row's waste,
 * SMs and operations. The rows are walked as a tree (a row with one more
 * instance is a child; a sub-row of a row is a row), a child's vectors its
 * parent's plus one content of the new instance; contents and partial rows
 * that cannot be in a plan better than the best one are dropped on the way
 * (an instance's contents go by their reduced waste at the first prices,
 * least first, so the walk stops at the first one the bound drops).
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every content one instance of profile p of GPU j can have: one exclusive unit, or shared units. */
static void
packs(struct dp *d, int j, const struct mig_profile *pr, int k, uint64_t v, int units, uint64_t mem, int need,
    struct item **out, size_t *n, size_t *cap)
{
	const struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];

	if (d->aborted)
		return;
	if (k == s->nk) {
		/* an instance wasting more than the best plan does in all is in no better plan */
		if (units > 0 && pr->mem_bytes - mem <= d->inc.waste) {
			if (*n >= MAX_OPTIONS) {
				d->aborted = 1;
				return;
			}
			xgrow(out, cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = (struct item){v, units, mem, 0, 0};
		}
		return;
	}
	packs(d, j, pr, k + 1, v, units, mem, need, out, n, cap);
	if (!sg->small[k])
		return;
	for (int c = 1; c <= d->cap[k] && units + c <= d->target; c++) {
		if (mem + (uint64_t)c * sg->mem[k] > pr->mem_bytes || need + c * sg->need[k] > pr->sms)
			break;
		packs(d, j, pr, k + 1, v + ((uint64_t)c << d->vc.off[k]), units + c, mem + (uint64_t)c * sg->mem[k],
		    need + c * sg->need[k], out, n, cap);
	}
}

static void
options(struct dp *d, int j, int p, struct item **out, size_t *n)
{
	const struct search *s = d->s;
	const struct sgpu *sg = &s->sg[j];
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (int k = 0; k < s->nk; k++)
		if (d->cap[k] > 0 && (sg->fit[k] >> p & 1) && sg->g->profiles[p].mem_bytes - sg->mem[k] <= d->inc.waste) {
			xgrow(out, &cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = (struct item){(uint64_t)1 << d->vc.off[k], 1, sg->mem[k], 0, 0};
		}
	packs(d, j, &sg->g->profiles[p], 0, 0, 0, 0, 0, out, n, &cap);
}


int mig_dp_no_stop;
long mig_dp_contents_unseen, mig_dp_moves_built;

static int
item_rc_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->rc != y->rc)
		return x->rc < y->rc ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

/* Vectors cur (biased: their counts past n[k] show) held by a row of key with mem, sms: moves. */
static void
row_moves(struct build *b, const struct item *cur, size_t ncur, const struct geo *x, uint64_t mem, int sms)
{
	struct dp *d = b->d;
	int ops = x ? x->ops : 0;

	for (size_t i = 0; i < ncur; i++) {
		uint64_t w = mem - cur[i].mem, v = cur[i].v - d->start;
		int *at;
		struct move *m;

		if (mig_dp_no_better(d, w, (uint64_t)sms * 1024, ops))
			continue;
		/* at the first prices, the row as it is (rows() allowed for instances it may still get) */
		if (d->priced && x) {
			double lb = d->L0 - d->hq[b->j] + cur[i].rc - TOL_BYTES;

			if (lb > 0 && mig_dp_no_better(d, (uint64_t)lb, 0, -1))
				continue;
		}
		at = mig_hm_get(&b->idx, v, 0);
		if (*at < 0) {
			xgrow(&b->g->m, &b->g->cap, b->g->n + 1, sizeof *b->g->m);
			*at = (int)b->g->n++;
			b->g->m[*at] = (struct move){v, cur[i].units, w, sms, ops, x, 0};
			if (cur[i].units > b->g->maxunits)
				b->g->maxunits = cur[i].units;
			continue;
		}
		m = &b->g->m[*at];
		if (w < m->waste || (w == m->waste && (sms < m->sms || (sms == m->sms && ops < m->ops))))
			*m = (struct move){v, cur[i].units, w, sms, ops, x, 0};
	}
}

/*
 * The rows of GPU j's table as a tree (a row with one more instance of
 * profile q >= the last added is its child; a sub-row of a row is a row):
 * the vectors a row holds are its parent's plus one content of q's.
 * Instances of one profile are added one after the other and their
 * contents are a multiset, so each is taken in order: an instance of the
 * profile last added gets contents from the least index (lo) any path to
 * the vector used for the one before. Every multiset's sorted path is
 * then walked, so every vector is reached; and the filters below depend
 * only on the vector and the row, and pass every part of a vector that
 * passes (waste only grows, each bound holds for the completions), so the
 * vectors kept are those of all the orders, at a fraction of the work.
 */
static void
rows(struct build *b, int p0, int last, uint64_t key, const struct item *cur, size_t ncur, uint64_t mem, int sms)
{
	struct dp *d = b->d;
	const struct mig_gpu *g = d->s->sg[b->j].g;

	for (int q = p0; q < g->nprofiles && !d->aborted; q++) {
		const struct mig_profile *pr = &g->profiles[q];
		uint64_t nkey = key + ((uint64_t)1 << (4 * q));
		const struct geo *x;
		struct item *nxt = NULL;
		size_t nn = 0, cap = 0;
		struct hmap seen;

		if (b->skip[q] || b->count[q] >= 15 || b->nopt[q] == 0 || !(x = mig_gtable_find(b->t, nkey)))
			continue;
		mig_hm_init(&seen, ncur, 1);
		for (size_t i = 0, from, o; i < ncur; i++) {
			from = q == last ? cur[i].lo : 0;
			for (o = from; o < b->nopt[q]; o++) {
				uint64_t v = cur[i].v + b->opt[q][o].v;
				int units = cur[i].units + b->opt[q][o].units;
				uint64_t m = cur[i].mem + b->opt[q][o].mem;
				int *at;

				double rc = cur[i].rc + b->opt[q][o].rc;

				/*
				 * at the first prices, with all the instances it may still
				 * get at their best: the contents go by rc, least first, so
				 * once one fails this, every later one does
				 */
				if (d->priced) {
					double lb = d->L0 - d->hq[b->j] + rc + b->ext[x - b->t->geo] - TOL_BYTES;

					if (lb > 0 && mig_dp_no_better(d, (uint64_t)lb, 0, -1)) {
						if (mig_dp_no_stop)
							continue;
						mig_dp_contents_unseen += (long)(b->nopt[q] - o - 1);
						break;
					}
				}
				/* past n[k], past S, or wasting more than the best plan already (waste only grows) */
				if ((v & d->vc.guard) || units > d->target ||
				    mig_dp_no_better(d, mem + pr->mem_bytes - m, (uint64_t)(sms + pr->sms) * 1024, -1))
					continue;
				at = mig_hm_get(&seen, v, 0);
				if (*at >= 0) {
					if (o < nxt[*at].lo)
						nxt[*at].lo = o;
					continue;
				}
				xgrow(&nxt, &cap, nn + 1, sizeof *nxt);
				*at = (int)nn;
				nxt[nn++] = (struct item){v, units, m, rc, o};
			}
			if (mig_dp_spend(d, (long)(o - from) / 4 + 1))
				break;
		}
		mig_hm_free(&seen);
		if (!d->aborted && nn > 0) {
			b->count[q]++;
			row_moves(b, nxt, nn, x, mem + pr->mem_bytes, sms + pr->sms);
			rows(b, q, q, nkey, nxt, nn, mem + pr->mem_bytes, sms + pr->sms);
			b->count[q]--;
		}
		free(nxt);
	}
}

/* Is every content of profile p one of q's (same memory, no more SMs), and each row with p's has a twin with q's? */
static int
dominated(const struct build *b, int p, int q)
{
	const struct mig_gpu *g = b->d->s->sg[b->j].g;
	const struct gtable *t = b->t;
	struct hmap h;
	int ok = 1;

	if (g->profiles[q].mem_bytes != g->profiles[p].mem_bytes || g->profiles[q].sms > g->profiles[p].sms)
		return 0;
	mig_hm_init(&h, b->nopt[q], 1);
	for (size_t o = 0; o < b->nopt[q]; o++)
		*mig_hm_get(&h, b->opt[q][o].v, 0) = 1;
	for (size_t o = 0; ok && o < b->nopt[p]; o++)
		ok = *mig_hm_get(&h, b->opt[p][o].v, 0) == 1;
	mig_hm_free(&h);
	return ok && mig_gtable_swaps(t, p, q);
}

/* GPU j's instance contents, per profile (b->opt), and the most instances a row of its table has. */
void
mig_dp_build_init(struct dp *d, int j, struct build *b)
{
	const struct gtable *t = d->s->sg[j].t;

	memset(b, 0, sizeof *b);
	b->d = d;
	b->j = j;
	b->t = t;
	for (int p = 0; p < d->s->sg[j].g->nprofiles && !d->aborted; p++)
		options(d, j, p, &b->opt[p], &b->nopt[p]);
	/* a profile left out stands for none: one it is dominated by must itself stay */
	for (int p = 0; p < d->s->sg[j].g->nprofiles && !d->aborted; p++)
		for (int q = 0; q < d->s->sg[j].g->nprofiles && !b->skip[p]; q++)
			if (q != p && !b->skip[q] && b->nopt[p] > 0 && dominated(b, p, q))
				b->skip[p] = 1;
}

/*
 * b->ext: for each row r of the table, the least (at the first prices) that
 * the instances of a row holding r add beyond r's own, each instance at its
 * best content: a row's best completion, never above 0 (r itself).
 */
static void
completions(struct dp *d, struct build *b)
{
	const struct gtable *t = b->t;
	const struct mig_gpu *g = d->s->sg[b->j].g;
	const double *c = &d->cbest[b->j * MIG_MAX_PROFILES];
	double *h = xcalloc(t->ngeo + 1, sizeof *h);

	b->ext = xcalloc(t->ngeo + 1, sizeof *b->ext);
	for (size_t r = 0; r < t->ngeo; r++)
		for (int p = 0; p < g->nprofiles && h[r] < 1e299; p++) {
			int n = (int)(t->geo[r].key >> (4 * p) & 15);

			if (n)
				h[r] = c[p] < 1e299 ? h[r] + n * c[p] : 1e300;
		}
	for (size_t r = 0; r < t->ngeo; r++)
		for (size_t q = 0; q < t->ngeo; q++) {
			int sub = h[q] < 1e299;

			for (int p = 0; p < g->nprofiles && sub; p++)
				sub = (t->geo[q].key >> (4 * p) & 15) >= (t->geo[r].key >> (4 * p) & 15);
			if (sub && h[q] - h[r] < b->ext[r])
				b->ext[r] = h[q] - h[r];
		}
	mig_dp_spend(d, (long)(t->ngeo * t->ngeo) * g->nprofiles / 64 + 1);
	free(h);
}

void
mig_dp_build_free(struct build *b)
{
	free(b->ext);
	for (int p = 0; p < MIG_MAX_PROFILES; p++)
		free(b->opt[p]);
}

void
mig_dp_moves(struct dp *d, struct build *b, struct gmap *g)
{
	struct item zero = {d->start, 0, 0, 0, 0};

	b->g = g;
	mig_hm_init(&b->idx, 256, 1);
	/* each content's part of the first prices' bound */
	for (int p = 0; p < MIG_MAX_PROFILES && d->priced; p++)
		for (size_t o = 0; o < b->nopt[p]; o++) {
			struct item *it = &b->opt[p][o];

			it->rc = (double)(d->s->sg[b->j].g->profiles[p].mem_bytes - it->mem);
			for (int k = 0; k < d->s->nk; k++)
				it->rc -= d->pp[k] * mig_dp_field(&d->vc, it->v, k);
		}
	/* least rc first, for rows() to stop at the first content its bound rules out */
	for (int p = 0; p < MIG_MAX_PROFILES && d->priced; p++)
		if (b->nopt[p] > 1) {
			qsort(b->opt[p], b->nopt[p], sizeof *b->opt[p], item_rc_cmp);
			mig_dp_spend(d, (long)b->nopt[p] / 4 + 1);
		}
	if (d->priced)
		completions(d, b);
	row_moves(b, &zero, 1, NULL, 0, 0);
	if (!d->aborted)
		rows(b, 0, -1, 0, &zero, 1, 0, 0);
	if (!d->aborted)
		mig_dp_moves_built += (long)g->n;
	mig_hm_free(&b->idx);
}

