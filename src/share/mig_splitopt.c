/*
 * mig_splitopt: each GPU's options for the split DP (mig_split.c): every
 * row of its table and every way of giving its instances to exclusive
 * classes or to the shared small units, each pair of exclusive units and
 * shared instances once, at its least (exclusive waste, SMs, operations);
 * the profiles another stands for left out. And the packed counts' set up.
 */
#include "share/mig.h"
#include "share/mig_split.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
mig_split_pack_init(struct pack *pk, int n, const int *cap)
{
	int at = 0;

	memset(pk, 0, sizeof *pk);
	pk->n = n;
	for (int i = 0; i < n; i++) {
		int b = 1;

		while ((1 << b) - 1 < cap[i])
			b++;
		if (at + b + 1 > 64)
			return -1;
		pk->off[i] = at;
		pk->b[i] = b;
		pk->cap[i] = cap[i];
		pk->one[i] = (uint64_t)1 << at;
		pk->field[i] = (((uint64_t)1 << b) - 1) << at;
		pk->bias += ((((uint64_t)1 << b) - 1) - (uint64_t)cap[i]) << at;
		pk->guard |= (uint64_t)1 << (at + b);
		at += b + 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------ the options */

/*
 * Profile p stands for q where every row with q has a twin with p instead
 * needing no more operations, and p has the same memory and SMs and takes
 * every exclusive class q does: q's rows add nothing (the +me profiles,
 * unless a class names one).
 */
static int
stands_for_in(const struct split *x, const struct gtable *t, int p, int q)
{
	const struct mig_profile *a = &x->g->profiles[p], *b = &x->g->profiles[q];
	const struct sgpu *sg = &x->s->sg[0];

	if (a->mem_bytes != b->mem_bytes || a->sms != b->sms)
		return 0;
	for (int k = 0; k < x->s->nk; k++)
		if ((sg->fit[k] >> q & 1) && !(sg->fit[k] >> p & 1))
			return 0;
	return mig_gtable_swaps(t, q, p);
}

/* ... on every GPU's table. */
static int
stands_for(const struct split *x, int p, int q)
{
	for (int j = 0; j < x->s->ngpus; j++)
		if ((j == 0 || !x->s->sg[j].twin) && !stands_for_in(x, x->s->sg[j].t, p, q))
			return 0;
	return 1;
}

struct obuild {
	struct split *x;
	struct ost *os;
	struct hmap idx;
	const struct gtable *t;
	const struct geo *g;
	int prof[MIG_MAX_PROFILES], cnt[MIG_MAX_PROFILES], nprof;
	int a[MIG_MAX_PROFILES][MAX_FIELDS + 1]; /* per profile of the row: units per exclusive class; [ne] shared */
	int sms;
};

static void
opt_leaf(struct obuild *b, uint64_t e, uint64_t y, uint64_t w, int eu)
{
	struct split *x = b->x;
	struct opt o;
	int *at, left[MIG_MAX_PROFILES][MAX_FIELDS + 1];

	memset(&o, 0, sizeof o);
	o.e = e;
	o.y = y;
	o.w = w;
	o.eu = eu;
	o.sms = b->sms;
	o.ops = b->g->ops;
	o.x = b->g;
	for (int i = 0; i < b->nprof; i++) {
		int p = b->prof[i];

		o.ymem += (uint64_t)b->a[i][x->ne] * x->g->profiles[p].mem_bytes;
		o.ysms += b->a[i][x->ne] * x->g->profiles[p].sms;
		o.yfill += (uint64_t)b->a[i][x->ne] * x->fill[p];
		o.ycap += b->a[i][x->ne] * x->smost[p];
	}
	/* the roles, instance by instance of the row's placement */
	memcpy(left, b->a, sizeof left);
	for (int i = 0; i < b->g->n; i++) {
		int p = b->t->cand[b->g->cand[i]].profile, r = 0, c;

		while (b->prof[r] != p)
			r++;
		for (c = 0; c < x->ne && left[r][c] == 0; c++)
			;
		if (c < x->ne) {
			left[r][c]--;
			o.role[i] = (unsigned char)c;
		} else {
			left[r][x->ne]--;
			o.role[i] = SHARED;
		}
	}
	at = mig_hm_get(&b->idx, e, y);
	if (*at >= 0) {
		struct opt *q = &b->os->o[*at];

		if (w < q->w || (w == q->w && (o.sms < q->sms || (o.sms == q->sms && o.ops < q->ops))))
			*q = o;
		return;
	}
	xgrow(&b->os->o, &b->os->cap, b->os->n + 1, sizeof *b->os->o);
	*at = (int)b->os->n;
	b->os->o[b->os->n++] = o;
	if (eu + (o.ycap < x->ns ? o.ycap : x->ns) > b->os->most)
		b->os->most = eu + (o.ycap < x->ns ? o.ycap : x->ns);
}

/* Row profile i on: its cnt[i] instances split among the exclusive classes from c on and shared. */
static void
opt_roles(struct obuild *b, int i, int c, int left, uint64_t e, uint64_t y, uint64_t w, int eu, int nshared)
{
	struct split *x = b->x;
	const struct sgpu *sg = &x->s->sg[0];
	int p;

	if (x->aborted)
		return;
	if (i == b->nprof) {
		opt_leaf(b, e, y, w, eu);
		return;
	}
	p = b->prof[i];
	if (c == x->ne) {
		/* the rest shared: each holds a small unit, and one of p can */
		if (left > 0 && (nshared + left > x->ns || x->ncont[p] == 0))
			return;
		b->a[i][x->ne] = left;
		opt_roles(b, i + 1, 0, i + 1 < b->nprof ? b->cnt[i + 1] : 0, e, y + (uint64_t)left * x->pyk.one[p], w, eu,
		    nshared + left);
		return;
	}
	b->a[i][c] = 0;
	opt_roles(b, i, c + 1, left, e, y, w, eu, nshared);
	if (!(sg->fit[x->ecls[c]] >> p & 1))
		return;
	for (int n = 1; n <= left && pk_get(&x->pe, e, c) + n <= x->pe.cap[c] && eu + n <= x->S; n++) {
		b->a[i][c] = n;
		opt_roles(b, i, c + 1, left - n, e + (uint64_t)n * x->pe.one[c],
		    y, w + (uint64_t)n * (x->g->profiles[p].mem_bytes - sg->mem[x->ecls[c]]), eu + n, nshared);
	}
	b->a[i][c] = 0;
}

/* GPU j's options: every row of its table, every split of its instances. */
void
mig_split_options(struct split *x, int j, struct ost *os)
{
	const struct gtable *t = x->s->sg[j].t;
	struct obuild b;

	memset(&b, 0, sizeof b);
	b.x = x;
	b.os = os;
	b.t = t;
	mig_hm_init(&b.idx, 256, 2);
	/* the empty load */
	xgrow(&os->o, &os->cap, 1, sizeof *os->o);
	memset(&os->o[0], 0, sizeof os->o[0]);
	*mig_hm_get(&b.idx, 0, 0) = 0;
	os->n = 1;
	for (size_t r = 0; r < t->ngeo && !x->aborted; r++) {
		const struct geo *g = &t->geo[r];
		int skip = g->key == 0;

		b.nprof = 0;
		b.sms = 0;
		for (int p = 0; p < x->np && !skip; p++) {
			int n = (int)(g->key >> (4 * p) & 15);

			if (!n)
				continue;
			skip = x->skip[p];
			b.prof[b.nprof] = p;
			b.cnt[b.nprof++] = n;
			b.sms += n * x->g->profiles[p].sms;
		}
		if (skip)
			continue;
		b.g = g;
		memset(b.a, 0, sizeof b.a);
		opt_roles(&b, 0, 0, b.cnt[0], 0, 0, 0, 0, 0);
		spend(x, 1);
	}
	spend(x, (long)os->n / 4 + 1);
	mig_hm_free(&b.idx);
}


/* The profiles another stands for, on every GPU: their rows add nothing. */
void
mig_split_skips(struct split *x)
{
	for (int q = 0; q < x->np; q++)
		for (int p = 0; p < x->np && !x->skip[q]; p++)
			if (p != q && !x->skip[p] && stands_for(x, p, q))
				x->skip[q] = 1;
}
