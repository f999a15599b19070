/*
 * mig_splitbag: the bags of instances, the split DP's first try where
 * every plan places every unit (doc/mig.md, "The bags").
 *
 * Where the most units any plan places is all of them, every plan places
 * the same memory P, so its waste is its instances' memory less P, and its
 * SMs are its instances' SMs: the first two levels of its value depend on
 * the multiset I of its instances alone (the bag: instances per profile),
 * and which GPU an instance sits on matters only to the operations. So the
 * bags whose memory lies between P and P plus the best plan's waste are
 * enumerated (each kept only where its instances could take every unit:
 * an instance for each exclusive unit, room for the small ones in the
 * rest, Hall's condition on which instances the exclusive units fit),
 * sorted by memory and then SMs, and tried in that order: a bag is a plan
 * where its instances can take every unit (each exclusive unit alone in an
 * instance it fits, every way; the small units packed into the rest by a
 * DP over those instances whose waste the slack bounds, which is exact)
 * and the GPUs' tables can hold it (a DP over the GPUs, remembered across
 * bags, with the fewest operations). The first bag that is a plan has the
 * least waste and then SMs any plan can have; the bags of the same memory
 * and SMs after it are tried for fewer operations; one that leaves an
 * instance empty is never the first, since the bag without that instance
 * is a plan too, with less memory, and comes before it. Where no bag
 * better than the best plan is a plan, that plan is optimal.
 */
#include "share/mig.h"
#include "share/mig_split.h"
#include "util/str.h"

#include <limits.h>
#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

#define NO_ROW INT_MAX
#define MAX_BAGS 200000       /* bags kept after the cheap checks, before giving up */
#define MAX_HALL 1024         /* sets of exclusive classes checked */

struct brow {
	const struct geo *g;          /* NULL: the empty load */
	int ops, sl;                  /* operations, compute slices */
	unsigned char n[MIG_MAX_PROFILES];
};

struct bagc {
	uint64_t mem;
	int sms;
	unsigned char n[MIG_MAX_PROFILES];
};

struct hall {
	uint32_t mask;                /* profiles some class of the set fits */
	int units;                    /* the set's units */
};

struct bags {
	struct split *x;
	int np, prof[MIG_MAX_PROFILES]; /* the profiles used (none another stands for), most memory first */
	int maxc[MIG_MAX_PROFILES];     /* [p]: the most instances of p all GPUs' rows have */
	uint64_t restmem[MIG_MAX_PROFILES + 1]; /* [i]: the most memory of profiles prof[i..] */
	uint64_t P, lo, hi;           /* every unit's memory; the bags' memory lies in [lo, hi] */
	uint64_t smem;                /* the small units' */
	long sneed;                   /* SMs their shares need */
	int units, eunits;
	uint32_t efit[MAX_FIELDS];    /* [c]: profiles exclusive class c fits */
	uint64_t minfill;             /* the least fill the exclusive units' instances take */
	int holds[MAX_FIELDS][MIG_MAX_PROFILES]; /* [a][p]: the most units of small class a one instance of p holds */
	int minmost;
	struct hall *hl;
	int nhall;
	unsigned char cur[MIG_MAX_PROFILES];
	struct bagc *c;
	size_t nc, cap;
	/* the GPUs' rows, and which bags of instances GPUs j.. hold (remembered) */
	struct brow **rows;
	size_t *nrows;
	int *sufmax;                  /* [j * MIG_MAX_PROFILES + p]: the most instances of p GPUs j.. have */
	int *sufsl;                   /* [j]: the most compute slices GPUs j.. have */
	struct pack pr;               /* instances per profile, any number of GPUs */
	struct hmap memo;             /* (rest, j) -> its entry */
	struct held {
		int ops, row;         /* the fewest operations (NO_ROW: none), with row of GPU j first (-1: none) */
	} *held;
	size_t nm, mcap;
	/* the exclusive units' instances of the bag tried */
	int e[MAX_FIELDS][MIG_MAX_PROFILES];
	int ebest[MAX_FIELDS][MIG_MAX_PROFILES];
	unsigned char avail[MIG_MAX_PROFILES];
	struct hmap ycache;           /* Y -> 0: the small units do not all go in */
	/* the packing found: a content (plain) per instance of Y, and its profile */
	int yprof[MIG_MAX_INST * 64];
	uint64_t ycnt[MIG_MAX_INST * 64];
	int ninst;
	long tried, nopack, nohold;   /* bags tried, not packed, not held (the trace's) */
};

/* A state of the packing: the small units left (plain), from which state of the layer before, with what content. */
struct pst {
	uint64_t r, c;
	int parent;
};

/* --------------------------------------------------------------------------------- set up */

static int
bags_init(struct bags *b, struct split *x)
{
	const struct search *s = x->s;
	const struct sgpu *sg = &s->sg[0];
	int used[MIG_MAX_PROFILES] = {0}, cap[MIG_MAX_PROFILES];
	uint64_t pm[MIG_MAX_PROFILES];

	memset(b, 0, sizeof *b);
	b->x = x;
	for (int k = 0; k < s->nk; k++) {
		b->units += s->k[k].n;
		b->P += (uint64_t)s->k[k].n * sg->mem[k];
	}
	if (x->S != b->units)
		return -1;
	b->rows = xcalloc((size_t)s->ngpus + 1, sizeof *b->rows);
	b->nrows = xcalloc((size_t)s->ngpus + 1, sizeof *b->nrows);
	b->sufmax = xcalloc(((size_t)s->ngpus + 1) * MIG_MAX_PROFILES, sizeof *b->sufmax);
	b->sufsl = xcalloc((size_t)s->ngpus + 1, sizeof *b->sufsl);
	for (int j = s->ngpus - 1; j >= 0; j--) {
		const struct gtable *t = s->sg[j].t;
		size_t cap2 = 0;
		int sl = 0;

		xgrow(&b->rows[j], &cap2, 1, sizeof *b->rows[j]);
		memset(&b->rows[j][0], 0, sizeof b->rows[j][0]);
		b->nrows[j] = 1;
		for (int p = 0; p < MIG_MAX_PROFILES; p++)
			b->sufmax[j * MIG_MAX_PROFILES + p] = b->sufmax[(j + 1) * MIG_MAX_PROFILES + p];
		for (size_t r = 0; r < t->ngeo; r++) {
			const struct geo *g = &t->geo[r];
			struct brow w;
			int skip = g->key == 0;

			memset(&w, 0, sizeof w);
			for (int p = 0; p < x->np && !skip; p++) {
				w.n[p] = (unsigned char)(g->key >> (4 * p) & 15);
				skip = w.n[p] && x->skip[p];
			}
			if (skip)
				continue;
			w.g = g;
			w.ops = g->ops;
			for (int p = 0; p < x->np; p++)
				w.sl += w.n[p] * x->g->profiles[p].slices;
			sl = w.sl > sl ? w.sl : sl;
			xgrow(&b->rows[j], &cap2, b->nrows[j] + 1, sizeof *b->rows[j]);
			b->rows[j][b->nrows[j]++] = w;
			for (int p = 0; p < x->np; p++) {
				used[p] |= w.n[p] > 0;
				if (w.n[p] > b->sufmax[j * MIG_MAX_PROFILES + p] - b->sufmax[(j + 1) * MIG_MAX_PROFILES + p])
					b->sufmax[j * MIG_MAX_PROFILES + p] = b->sufmax[(j + 1) * MIG_MAX_PROFILES + p] + w.n[p];
			}
		}
		b->sufsl[j] = b->sufsl[j + 1] + sl;
		spend(x, (long)t->ngeo / 8 + 1);
	}
	for (int p = 0; p < x->np; p++) {
		b->maxc[p] = b->sufmax[p];
		cap[p] = b->maxc[p];
		if (cap[p] > UCHAR_MAX)
			return -1;
		pm[p] = x->g->profiles[p].mem_bytes;
		if (used[p])
			b->prof[b->np++] = p;
	}
	mig_order_by(b->prof, pm, b->np, 1);
	for (int i = b->np - 1; i >= 0; i--)
		b->restmem[i] = b->restmem[i + 1] + (uint64_t)b->maxc[b->prof[i]] * pm[b->prof[i]];
	if (mig_split_pack_init(&b->pr, x->np, cap) < 0)
		return -1;
	/* the small units, and the least the exclusive ones take from them */
	for (int a = 0; a < x->nsm; a++) {
		b->smem += (uint64_t)x->psm.cap[a] * x->smem[a];
		b->sneed += (long)x->psm.cap[a] * x->sneed[a];
		for (int p = 0; p < x->np; p++) {
			const struct mig_profile *pr = &x->g->profiles[p];
			uint64_t n = pr->mem_bytes / x->smem[a];

			if (x->sneed[a] > 0 && (uint64_t)(pr->sms / x->sneed[a]) < n)
				n = (uint64_t)(pr->sms / x->sneed[a]);
			b->holds[a][p] = n < (uint64_t)x->psm.cap[a] ? (int)n : x->psm.cap[a];
		}
	}
	for (int c = 0; c < x->ne; c++) {
		uint64_t f = UINT64_MAX;
		int m = INT_MAX;

		b->efit[c] = sg->fit[x->ecls[c]];
		for (int p = 0; p < x->np; p++) {
			if (!used[p])
				b->efit[c] &= ~(1u << p);
			if (b->efit[c] >> p & 1) {
				f = x->fill[p] < f ? x->fill[p] : f;
				m = x->smost[p] < m ? x->smost[p] : m;
			}
		}
		if (!b->efit[c])
			return -1;
		b->eunits += x->pe.cap[c];
		b->minfill += (uint64_t)x->pe.cap[c] * f;
		b->minmost += x->pe.cap[c] * m;
	}
	/* Hall's condition: each set of exclusive classes against the instances its units fit */
	if ((1 << x->ne) <= MAX_HALL) {
		b->hl = xcalloc((size_t)1 << x->ne, sizeof *b->hl);
		for (uint32_t m = 1; m < (1u << x->ne); m++) {
			struct hall h = {0, 0};

			for (int c = 0; c < x->ne; c++)
				if (m >> c & 1) {
					h.mask |= b->efit[c];
					h.units += x->pe.cap[c];
				}
			b->hl[b->nhall++] = h;
		}
	}
	b->lo = b->P;
	b->hi = x->inc.waste > UINT64_MAX - b->P ? UINT64_MAX : b->P + x->inc.waste;
	mig_hm_init(&b->memo, 1024, 2);
	mig_hm_init(&b->ycache, 64, 1);
	return 0;
}

static void
bags_free(struct bags *b)
{
	for (int j = 0; b->rows && j <= b->x->s->ngpus; j++)
		free(b->rows[j]);
	free(b->rows);
	free(b->nrows);
	free(b->sufmax);
	free(b->sufsl);
	free(b->hl);
	free(b->c);
	free(b->held);
	mig_hm_free(&b->memo);
	mig_hm_free(&b->ycache);
}

/* ------------------------------------------------------------------------------- the bags */

/* Whether instances n[] (per profile) hold, class by class, as many units as each small class has. */
static int
class_room(const struct bags *b, const unsigned char *n)
{
	const struct split *x = b->x;

	for (int a = 0; a < x->nsm; a++) {
		long room = 0;

		for (int i = 0; i < b->np && room < x->psm.cap[a]; i++)
			room += (long)n[b->prof[i]] * b->holds[a][b->prof[i]];
		if (room < x->psm.cap[a])
			return 0;
	}
	return 1;
}

/* The checks every bag of the enumeration gets: it is kept if it may hold every unit. */
static void
bag_leaf(struct bags *b, uint64_t mem)
{
	struct split *x = b->x;
	int n = 0, sms = 0;
	uint64_t fill = 0;
	long most = 0;

	for (int i = 0; i < b->np; i++) {
		int p = b->prof[i], c = b->cur[p];

		n += c;
		sms += c * x->g->profiles[p].sms;
		fill += (uint64_t)c * x->fill[p];
		most += (long)c * x->smost[p];
	}
	/* each exclusive unit alone in an instance, each other instance a small unit at least */
	if (n < b->eunits || n - b->eunits > x->ns)
		return;
	/* the small units in what the exclusive ones leave */
	if (fill < b->minfill || fill - b->minfill < b->smem || most - b->minmost < x->ns || sms < b->sneed ||
	    !class_room(b, b->cur))
		return;
	for (int h = 0; h < b->nhall; h++) {
		int have = 0;

		for (int i = 0; i < b->np; i++)
			if (b->hl[h].mask >> b->prof[i] & 1)
				have += b->cur[b->prof[i]];
		if (have < b->hl[h].units)
			return;
	}
	spend(x, b->nhall / 16 + 1);
	if (b->nc >= MAX_BAGS) {
		x->aborted = 1;
		return;
	}
	xgrow(&b->c, &b->cap, b->nc + 1, sizeof *b->c);
	b->c[b->nc].mem = mem;
	b->c[b->nc].sms = sms;
	memcpy(b->c[b->nc].n, b->cur, sizeof b->cur);
	b->nc++;
}

/* The bags from profile prof[i] on, with memory mem so far and n instances. */
static void
bag_enum(struct bags *b, int i, uint64_t mem, int n)
{
	struct split *x = b->x;
	int p;
	uint64_t pm;

	if (x->aborted)
		return;
	if (i == b->np) {
		if (mem >= b->lo)
			bag_leaf(b, mem);
		return;
	}
	p = b->prof[i];
	pm = x->g->profiles[p].mem_bytes;
	spend(x, 1);
	for (int c = 0; c <= b->maxc[p] && n + c <= b->eunits + x->ns && !x->aborted; c++) {
		uint64_t m = mem + (uint64_t)c * pm;

		if (m > b->hi)
			break;
		if (m + b->restmem[i + 1] < b->lo)
			continue;
		b->cur[p] = (unsigned char)c;
		bag_enum(b, i + 1, m, n + c);
	}
	b->cur[p] = 0;
}

static int
bag_cmp(const void *pa, const void *pb)
{
	const struct bagc *a = pa, *c = pb;

	if (a->mem != c->mem)
		return a->mem < c->mem ? -1 : 1;
	if (a->sms != c->sms)
		return a->sms - c->sms;
	return memcmp(a->n, c->n, sizeof a->n);
}

/* ------------------------------------------------------------------ the GPUs hold the bag */

/*
 * The fewest operations with which GPUs j.. hold exactly the instances
 * `rest` (NO_ROW: they cannot); remembered, so across the bags tried.
 */
static int
hold(struct bags *b, int j, const unsigned char *rest)
{
	struct split *x = b->x;
	const struct search *s = x->s;
	uint64_t key = 0;
	int *at, best = NO_ROW, brow = -1, me, sl = 0;

	for (int p = 0; p < x->np; p++) {
		if (rest[p] > b->sufmax[j * MIG_MAX_PROFILES + p])
			return NO_ROW;
		key += (uint64_t)rest[p] << b->pr.off[p];
		sl += rest[p] * x->g->profiles[p].slices;
	}
	if (sl > b->sufsl[j])
		return NO_ROW;
	if (j == s->ngpus)
		return 0;
	at = mig_hm_get(&b->memo, key, (uint64_t)j);
	if (*at >= 0)
		return b->held[*at].ops;
	for (size_t r = 0; r < b->nrows[j] && !x->aborted; r++) {
		const struct brow *w = &b->rows[j][r];
		unsigned char left[MIG_MAX_PROFILES];
		int ok = 1, v;

		for (int p = 0; p < x->np && ok; p++) {
			ok = w->n[p] <= rest[p];
			left[p] = (unsigned char)(rest[p] - w->n[p]);
		}
		if (!ok || w->ops >= best)
			continue;
		v = hold(b, j + 1, left);
		if (v != NO_ROW && w->ops + v < best) {
			best = w->ops + v;
			brow = (int)r;
		}
	}
	spend(x, (long)b->nrows[j] / 8 + 1);
	if (x->aborted)
		return NO_ROW;
	xgrow(&b->held, &b->mcap, b->nm + 1, sizeof *b->held);
	me = (int)b->nm++;
	b->held[me] = (struct held){best, brow};
	/* the recursion may have grown the map: find the entry again */
	*mig_hm_get(&b->memo, key, (uint64_t)j) = me;
	return best;
}

/* -------------------------------------------------------------------- the bag holds the units */

/*
 * Every small unit into the instances of Y, an instance at a time, least
 * memory first, the last (the largest) taking what is left. A packing of
 * all of them wastes exactly mem(Y) less their memory (the slack), so an
 * instance's content may waste (its memory less the content's) no more
 * than what the instances before it left of the slack, and must leave no
 * more than the later instances hold at their fullest; a state is the
 * units still to place (which fixes what the instances before wasted).
 * Contents are kept to those with a unit at least: a packing that leaves
 * an instance empty makes a smaller bag a plan, and that one comes first.
 */
struct pk {
	struct bags *b;
	struct hmap h;
	struct pst *st;
	size_t n, cap;
	int parent;
	uint64_t r, lower, pm;
	int ps;
};

/* Contents of the instance from class sorder[i] on, c so far (plain), mem and need its memory and SMs. */
static void
contents(struct pk *k, int i, uint64_t c, uint64_t mem, int need, uint64_t restmem)
{
	struct split *x = k->b->x;
	int a, have;

	if (x->aborted || mem + restmem < k->lower)
		return;
	if (i == x->nsm) {
		int *at;

		if (c == 0)
			return;
		at = mig_hm_get(&k->h, k->r - c, 0);
		spend(x, 1);
		if (*at >= 0)
			return;
		xgrow(&k->st, &k->cap, k->n + 1, sizeof *k->st);
		*at = (int)k->n;
		k->st[k->n++] = (struct pst){k->r - c, c, k->parent};
		return;
	}
	a = x->sorder[i];
	have = pk_get(&x->psm, k->r, a);
	restmem -= (uint64_t)have * x->smem[a];
	for (int n = have; n >= 0; n--) {
		uint64_t m = mem + (uint64_t)n * x->smem[a];
		int nd = need + n * x->sneed[a];

		if (m > k->pm || nd > k->ps)
			continue;
		contents(k, i + 1, c + (uint64_t)n * x->psm.one[a], m, nd, restmem);
	}
}

/*
 * Drops the states of a layer that one with a unit more placed covers
 * (r - one unit of some class is there too). Only the bags of the least
 * memory that is a plan are ever taken, and there every packing of all
 * the small units fills every instance (else a smaller bag is a plan): a
 * packing through the state dropped, less the units the other has placed
 * already, is then one through the other, each later content still holding
 * a unit, within the slack and what the later instances hold. Along a chain
 * of drops the units placed grow, so it ends at a state kept.
 */
static void
dominated(struct bags *b, struct pk *k)
{
	struct split *x = b->x;
	size_t w = 0;
	unsigned char *gone = xcalloc(k->n + 1, 1);

	for (size_t i = 0; i < k->n; i++)
		for (int a = 0; a < x->nsm && !gone[i]; a++)
			gone[i] = pk_get(&x->psm, k->st[i].r, a) > 0 && mig_hm_find(&k->h, k->st[i].r - x->psm.one[a], 0);
	for (size_t i = 0; i < k->n; i++)
		if (!gone[i])
			k->st[w++] = k->st[i];
	spend(x, (long)k->n * x->nsm / 16 + 1);
	k->n = w;
	free(gone);
}

/* The small units' packing into b->avail: 1 found (b->yprof, b->ycnt), 0 none, -1 out of work. */
static int
slack_pack(struct bags *b, uint64_t ymem)
{
	struct split *x = b->x;
	int inst[MIG_MAX_INST * 64], m = 0, ret = 0;
	uint64_t full = 0, slack = ymem - b->smem, before = 0, lfill[MIG_MAX_INST * 64 + 1] = {0};
	uint64_t lminw[MIG_MAX_INST * 64 + 1] = {0};
	long lmost[MIG_MAX_INST * 64 + 1] = {0}, lsms[MIG_MAX_INST * 64 + 1] = {0};
	struct pst *prev = NULL;
	size_t nprev = 0;
	struct pst **lay;

	/* least memory first: the last instance, the largest, then takes what is left, one check */
	for (int i = b->np - 1; i >= 0; i--)
		for (int n = 0; n < b->avail[b->prof[i]]; n++)
			inst[m++] = b->prof[i];
	for (int a = 0; a < x->nsm; a++)
		full += (uint64_t)x->psm.cap[a] * x->psm.one[a];
	/* what the instances from t on hold at most: memory, units, SMs; and waste at least */
	for (int t = m - 1; t >= 0; t--) {
		lfill[t] = lfill[t + 1] + x->fill[inst[t]];
		lminw[t] = lminw[t + 1] + (x->g->profiles[inst[t]].mem_bytes - x->fill[inst[t]]);
		lmost[t] = lmost[t + 1] + x->smost[inst[t]];
		lsms[t] = lsms[t + 1] + x->g->profiles[inst[t]].sms;
	}
	lay = xcalloc((size_t)m + 1, sizeof *lay);
	lay[0] = xcalloc(1, sizeof *lay[0]);
	lay[0][0] = (struct pst){full, 0, -1};
	nprev = 1;
	prev = lay[0];
	for (int t = 0; t + 1 < m && nprev && !x->aborted; t++) {
		struct pk k;
		const struct mig_profile *pr = &x->g->profiles[inst[t]];

		memset(&k, 0, sizeof k);
		k.b = b;
		k.pm = pr->mem_bytes;
		k.ps = pr->sms;
		mig_hm_init(&k.h, nprev * 2, 1);
		for (size_t i = 0; i < nprev && !x->aborted; i++) {
			uint64_t left = 0, wasted;
			long units = 0, need = 0;

			for (int a = 0; a < x->nsm; a++) {
				int n = pk_get(&x->psm, prev[i].r, a);

				left += (uint64_t)n * x->smem[a];
				units += n;
				need += (long)n * x->sneed[a];
			}
			/* what the instances before wasted: their memory less what they hold */
			wasted = before - (b->smem - left);
			if (wasted + lminw[t] > slack || left > lfill[t] || units > lmost[t] || need > lsms[t])
				continue;
			k.r = prev[i].r;
			k.parent = (int)i;
			/* what this one may waste: the slack less what the others before wasted and those after must */
			k.lower = k.pm > slack - wasted - lminw[t + 1] ? k.pm - (slack - wasted - lminw[t + 1]) : 0;
			/* and what is left after it, the later instances hold */
			if (left > lfill[t + 1] && left - lfill[t + 1] > k.lower)
				k.lower = left - lfill[t + 1];
			contents(&k, 0, 0, 0, 0, left);
		}
		spend(x, (long)nprev / 4 + 1);
		if (!x->aborted)
			dominated(b, &k);
		mig_hm_free(&k.h);
		before += k.pm;
		lay[t + 1] = k.st;
		prev = k.st;
		nprev = k.n;
	}
	if (!x->aborted && nprev && m > 0) {
		const struct mig_profile *pr = &x->g->profiles[inst[m - 1]];

		/* the last instance: a state whose units left it holds, one at least */
		for (size_t i = 0; i < nprev; i++) {
			uint64_t left = 0;
			int need = 0, at = (int)i;

			for (int a = 0; a < x->nsm; a++) {
				left += (uint64_t)pk_get(&x->psm, prev[i].r, a) * x->smem[a];
				need += pk_get(&x->psm, prev[i].r, a) * x->sneed[a];
			}
			if (prev[i].r == 0 || left > pr->mem_bytes || need > pr->sms)
				continue;
			b->yprof[m - 1] = inst[m - 1];
			b->ycnt[m - 1] = prev[i].r;
			{
				for (int t = m - 1; t >= 1; t--) {
					b->yprof[t - 1] = inst[t - 1];
					b->ycnt[t - 1] = lay[t][at].c;
					at = lay[t][at].parent;
				}
			}
			b->ninst = m;
			ret = 1;
			break;
		}
		spend(x, (long)nprev / 4 + 1);
	} else if (!x->aborted && m == 0) {
		b->ninst = 0;
		ret = full == 0;
	}
	for (int t = 0; t <= m; t++)
		free(lay[t]);
	free(lay);
	return x->aborted ? -1 : ret;
}

/* The small units into b->avail: all packed (1), not (0), out of work (-1). */
static int
packs(struct bags *b)
{
	struct split *x = b->x;
	uint64_t y = 0, fill = 0, ymem = 0;
	long ysms = 0, most = 0;
	int n = 0, *seen, r;

	for (int p = 0; p < x->np; p++) {
		if (!b->avail[p])
			continue;
		y += (uint64_t)b->avail[p] << b->pr.off[p];
		fill += (uint64_t)b->avail[p] * x->fill[p];
		most += (long)b->avail[p] * x->smost[p];
		ysms += (long)b->avail[p] * x->g->profiles[p].sms;
		ymem += (uint64_t)b->avail[p] * x->g->profiles[p].mem_bytes;
		n += b->avail[p];
	}
	if (n > x->ns || fill < b->smem || most < x->ns || ysms < b->sneed || n > MIG_MAX_INST * 64 ||
	    !class_room(b, b->avail))
		return 0;
	seen = mig_hm_get(&b->ycache, y, 0);
	if (*seen == 0)
		return 0;
	r = slack_pack(b, ymem);
	if (r == 0)
		*mig_hm_get(&b->ycache, y, 0) = 0;
	if (r > 0)
		memcpy(b->ebest, b->e, sizeof b->e);
	return r;
}

/*
 * Exclusive class c's units, `left` of them still to give, among the
 * profiles from q on that it fits, then the later classes': 1 where some
 * way leaves the small units a packing.
 */
static int
exclusive(struct bags *b, int c, int q, int left)
{
	struct split *x = b->x;
	int r;

	if (x->aborted)
		return -1;
	if (c == x->ne)
		return packs(b);
	if (left == 0)
		return exclusive(b, c + 1, 0, c + 1 < x->ne ? x->pe.cap[c + 1] : 0);
	for (; q < x->np && !(b->efit[c] >> q & 1 && b->avail[q]); q++)
		;
	if (q == x->np)
		return 0;
	spend(x, 1);
	for (int n = left < b->avail[q] ? left : b->avail[q]; n >= 0; n--) {
		b->e[c][q] = n;
		b->avail[q] = (unsigned char)(b->avail[q] - n);
		r = exclusive(b, c, q + 1, left - n);
		b->avail[q] = (unsigned char)(b->avail[q] + n);
		b->e[c][q] = 0;
		if (r != 0)
			return r;
	}
	return 0;
}

/* ----------------------------------------------------------------------------- the plan */

/* The plan of bag t into the search, offered as the split DP's: 1 built with value want. */
static int
bag_plan(struct bags *b, const struct bagc *t, const struct mig_score *want)
{
	struct split *x = b->x;
	const struct search *s = x->s;
	struct opt *os = xcalloc((size_t)s->ngpus + 1, sizeof *os);
	const struct opt *o[s->ngpus + 1];
	unsigned char rest[MIG_MAX_PROFILES];
	int give[MAX_FIELDS][MIG_MAX_PROFILES], ok = 1;

	memcpy(rest, t->n, sizeof rest);
	memcpy(give, b->ebest, sizeof give);
	for (int j = 0; j < s->ngpus && ok; j++) {
		uint64_t key = 0;
		const int *at;
		const struct brow *w;

		for (int p = 0; p < x->np; p++)
			key += (uint64_t)rest[p] << b->pr.off[p];
		at = mig_hm_find(&b->memo, key, (uint64_t)j);
		if (!at || *at < 0 || b->held[*at].row < 0) {
			ok = 0;
			break;
		}
		w = &b->rows[j][b->held[*at].row];
		os[j].x = w->g;
		o[j] = &os[j];
		for (int i = 0; w->g && i < w->g->n; i++) {
			int p = s->sg[j].t->cand[w->g->cand[i]].profile, c;

			for (c = 0; c < x->ne && give[c][p] == 0; c++)
				;
			if (c < x->ne) {
				give[c][p]--;
				os[j].role[i] = (unsigned char)c;
			} else {
				os[j].role[i] = SHARED;
			}
		}
		for (int p = 0; p < x->np; p++)
			rest[p] = (unsigned char)(rest[p] - w->n[p]);
	}
	if (ok)
		ok = mig_split_loads(x, o, b->yprof, b->ycnt, b->ninst, want);
	free(os);
	return ok;
}

/* ------------------------------------------------------------------------------ the run */

int mig_split_no_bags;
long mig_bag_proofs;
struct mig_score mig_bag_own = {-1, 0, 0, 0};

int
mig_split_bags(struct split *x)
{
	struct bags b;
	int ret = 0, found = -1;
	struct mig_score best = x->inc, want;

	if (bags_init(&b, x) < 0) {
		bags_free(&b);
		return 0;
	}
	bag_enum(&b, 0, 0, 0);
	if (!x->aborted)
		qsort(b.c, b.nc, sizeof *b.c, bag_cmp);
	spend(x, (long)b.nc / 4 + 1);
#ifdef MIG_TRACE
	fprintf(stderr, "bags: enumerated %zu, work %ld\n", b.nc, x->work);
#endif
	for (size_t i = 0; i < b.nc && !x->aborted; i++) {
		const struct bagc *t = &b.c[i];
		uint64_t w = t->mem - b.P;
		int ops, r;

		if (found >= 0 && (w != best.waste || t->sms != best.sms))
			break;
		if (no_better(x, w, t->sms, 0))
			break;
		memcpy(b.avail, t->n, sizeof b.avail);
		memset(b.e, 0, sizeof b.e);
		b.tried++;
		r = exclusive(&b, 0, 0, x->ne ? x->pe.cap[0] : 0);
		if (r < 0)
			break;
		if (r == 0) {
			b.nopack++;
			continue;
		}
		ops = hold(&b, 0, t->n);
		if (ops == NO_ROW || no_better(x, w, t->sms, ops)) {
			b.nohold++;
			continue;
		}
		/* its plan now: a later bag of the same value and fewer operations replaces it */
		want = (struct mig_score){x->S, w, t->sms, ops};
		if (!bag_plan(&b, t, &want)) {
			/* not built (none should fail): no proof, and the split DP goes on from the plans it has */
			x->aborted = 1;
			break;
		}
		best = x->inc = want;
		found = (int)i;
	}
	if (!x->aborted) {
		ret = 1;
		mig_bag_proofs++;
		if (found >= 0)
			mig_bag_own = best;
	}
#ifdef MIG_TRACE
	fprintf(stderr, "bags: %zu kept, tried %ld (not packed %ld, not held %ld), held %zu, found %d, ret %d, work %ld "
	    "aborted %d\n", b.nc, b.tried, b.nopack, b.nohold, b.nm, found, ret, x->work, x->aborted);
#endif
	bags_free(&b);
	return ret;
}
