/*
 * mig_bagmix: the mix as the bags see it (doc/mig.md, "How it works"): on
 * GPUs of one product, each class exclusive (alone in an instance: a named
 * profile, or a job too large to share) or small (sharing instances through
 * MPS); the profiles another stands for, left out; the most small memory and
 * units one shared instance of each profile holds; and a plan built from a
 * bag, offered to the search.
 */
#include "share/mig.h"
#include "share/mig_bag.h"
#include "util/knob.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
mig_pack_init(struct pack *pk, int n, const int *cap)
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

/* Same profiles, and each class small or exclusive alike, on every GPU: one product. */
static int
one_product(const struct search *s)
{
	const struct sgpu *a = &s->sg[0];

	for (int j = 1; j < s->ngpus; j++) {
		const struct sgpu *b = &s->sg[j];

		if (b->g->nprofiles != a->g->nprofiles ||
		    memcmp(b->g->profiles, a->g->profiles, sizeof a->g->profiles[0] * (size_t)a->g->nprofiles) != 0)
			return 0;
		for (int k = 0; k < s->nk; k++)
			if (b->small[k] != a->small[k] || b->fit[k] != a->fit[k] || b->need[k] != a->need[k] ||
			    b->mem[k] != a->mem[k])
				return 0;
	}
	return 1;
}

/*
 * Profile p stands for q where every row with q has a twin with p instead
 * needing no more operations, and p has the same memory and SMs and takes
 * every exclusive class q does: q's rows add nothing (the +me profiles,
 * unless a class names one).
 */
static int
stands_for(const struct bagrun *x, int p, int q)
{
	const struct mig_profile *a = &x->g->profiles[p], *b = &x->g->profiles[q];
	const struct search *s = x->s;

	if (a->mem_bytes != b->mem_bytes || a->sms != b->sms)
		return 0;
	for (int k = 0; k < s->nk; k++)
		if ((s->sg[0].fit[k] >> q & 1) && !(s->sg[0].fit[k] >> p & 1))
			return 0;
	for (int j = 0; j < s->ngpus; j++)
		if ((j == 0 || !s->sg[j].twin) && !mig_gtable_swaps(s->sg[j].t, q, p))
			return 0;
	return 1;
}

/* The fullest contents of an instance of p from small class i on: the most memory and units; -1 too many. */
static int
fullest(struct bagrun *x, int p, int i, uint64_t v, uint64_t mem, int need, long *n)
{
	const struct mig_profile *pr = &x->g->profiles[p];

	if (i == x->nsm) {
		int u = 0;

		/* only the fullest: one more unit of some class would not fit or pass its count */
		for (int a = 0; a < x->nsm; a++)
			if (pk_get(&x->psm, v, a) < x->psm.cap[a] && mem + x->smem[a] <= pr->mem_bytes &&
			    need + x->sneed[a] <= pr->sms)
				return 0;
		if (++*n > MAX_CONTENTS)
			return -1;
		for (int a = 0; a < x->nsm; a++)
			u += pk_get(&x->psm, v, a);
		if (mem > x->fill[p])
			x->fill[p] = mem;
		if (u > x->smost[p])
			x->smost[p] = u;
		return 0;
	}
	for (int c = 0; c <= x->psm.cap[i]; c++) {
		uint64_t m = mem + (uint64_t)c * x->smem[i];
		int nd = need + c * x->sneed[i];

		if (m > pr->mem_bytes || nd > pr->sms)
			break;
		if (fullest(x, p, i + 1, v + (uint64_t)c * x->psm.one[i], m, nd, n) < 0)
			return -1;
	}
	return 0;
}

int
mig_bagrun_init(struct bagrun *x, struct search *s, int S, long limit, int first)
{
	const struct sgpu *sg = &s->sg[0];
	int ecap[MAX_FIELDS], scap[MAX_FIELDS];

	memset(x, 0, sizeof *x);
	x->s = s;
	x->g = sg->g;
	x->S = S;
	x->limit = limit;
	x->first = first;
	x->np = x->g->nprofiles;
	/* a plan placing fewer units is no bound on those placing S: any of them beats it */
	x->inc = s->bs;
	if (s->bs.satisfied < S || knob(KNOB_MIG_BAGS_BLIND))
		x->inc = (struct mig_score){S, (uint64_t)1 << 60, 1 << 24, 1 << 24};
	if (knob(KNOB_MIG_BAGS_OFF) || s->ngpus < 1 || !one_product(s))
		return -1;
	for (int k = 0; k < s->nk; k++) {
		if (sg->small[k]) {
			if (x->nsm == MAX_FIELDS)
				return -1;
			x->scls[x->nsm] = k;
			x->smem[x->nsm] = sg->mem[k];
			x->sneed[x->nsm] = sg->need[k];
			scap[x->nsm++] = s->k[k].n;
			x->ns += s->k[k].n;
		} else if (sg->fit[k]) {
			if (x->ne == MAX_FIELDS)
				return -1;
			x->ecls[x->ne] = k;
			ecap[x->ne++] = s->k[k].n;
		}
	}
	if (mig_pack_init(&x->pe, x->ne, ecap) < 0 || mig_pack_init(&x->psm, x->nsm, scap) < 0)
		return -1;
	for (int i = 0; i < x->nsm; i++)
		x->sorder[i] = i;
	mig_order_by(x->sorder, x->smem, x->nsm, 1);
	for (int q = 0; q < x->np; q++)
		for (int p = 0; p < x->np && !x->skip[q]; p++)
			if (p != q && !x->skip[p] && stands_for(x, p, q))
				x->skip[q] = 1;
	for (int p = 0; p < x->np; p++) {
		long n = 0;

		if (fullest(x, p, 0, 0, 0, 0, &n) < 0)
			return -1;
		spend(x, n + 1);
	}
	return x->aborted ? -1 : 0;
}

int
mig_bag_offer(struct bagrun *x, const struct geo *const *row, const signed char (*role)[MIG_MAX_INST],
    const int *prof, const uint64_t *cnt, int ninst, const struct mig_score *want)
{
	struct search *s = x->s;
	struct mig_score sc;
	int next[MIG_MAX_PROFILES] = {0};

	for (int j = 0; j < s->ngpus; j++) {
		struct load *ld = &s->cur[j];

		ld->x = row[j];
		ld->nslots = row[j] ? row[j]->n : 0;
		for (int i = 0; i < ld->nslots; i++) {
			struct slot *sl = &ld->slot[i];
			int p = s->sg[j].t->cand[row[j]->cand[i]].profile;

			sl->profile = p;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
			sl->big = -1;
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			if (role[j][i] >= 0) {
				int k = x->ecls[role[j][i]];

				sl->big = k;
				sl->nunits = 1;
				sl->mem = s->sg[j].mem[k];
				sl->need = s->sg[j].need[k];
				continue;
			}
			/* the next content for profile p */
			while (next[p] < ninst && prof[next[p]] != p)
				next[p]++;
			if (next[p] == ninst)
				return 0;
			for (int a = 0; a < x->nsm; a++) {
				int n = pk_get(&x->psm, cnt[next[p]], a), k = x->scls[a];

				sl->cnt[k] = n;
				sl->nunits += n;
				sl->mem += (uint64_t)n * s->sg[j].mem[k];
				sl->need += n * s->sg[j].need[k];
			}
			next[p]++;
		}
	}
	sc = mig_offer(s);
	return sc.satisfied == want->satisfied && sc.waste == want->waste && sc.sms == want->sms && sc.ops == want->ops;
}
