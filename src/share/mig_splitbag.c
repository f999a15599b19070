/*
 * mig_splitbag: the bags of instances, the split DP's first try once the
 * most units any plan places, S, is proven (doc/mig.md, "The bags").
 *
 * Where every unit is placed, every plan places the same memory P, so its
 * waste is its instances' memory less P, and its SMs are its instances'
 * SMs: the first two levels of its value depend on the multiset I of its
 * instances alone (the bag: instances per profile), and which GPU an
 * instance sits on matters only to the operations. So the bags whose
 * memory lies between P plus a bound and P plus the best plan's waste are
 * enumerated (each kept only where its instances could take every unit:
 * an instance for each exclusive unit, room for the small ones in what
 * those leave, Hall's condition on which instances the exclusive units
 * fit, the compute slices the GPUs have), sorted by memory and then SMs,
 * and tried in that order: a bag is a plan where its instances can take
 * every unit (each exclusive unit alone in an instance it fits, every way;
 * the small units packed into the rest by a DP over those instances whose
 * waste the slack bounds, which is exact) and the GPUs' tables can hold it
 * (a DP over the GPUs, remembered across bags, with the fewest
 * operations). The first bag that is a plan has the least waste and then
 * SMs any plan can have; the bags of the same memory and SMs after it are
 * tried for fewer operations; one that leaves an instance empty is never
 * the first, since the bag without that instance is a plan too, with less
 * memory, and comes before it. Where no bag better than the best plan is
 * a plan, that plan is optimal.
 *
 * Where the mix does not fit (S below the units), each plan leaves out a
 * drop vector (how many units of each class), which fixes the memory it
 * places: beneath each vector the bags are those of a mix that fits. The
 * vectors are enumerated within the best plan's waste (their exclusive
 * units' least waste, rounded to the profiles' gcd, and the GPUs' memory,
 * SMs and compute slices), and their bags tried, least bound first; where
 * no vector's bags beat the best plan, it is optimal.
 */
#include "share/mig.h"
#include "share/mig_split.h"
#include "util/str.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

#define NO_ROW INT_MAX
#define MAX_BAGS 200000       /* bags kept after the cheap checks, before giving up */
#define MAX_HALL 1024         /* sets of exclusive classes checked */
#define ROUNDING 1e-6         /* what a bound in double may be below its exact value (only ever loosens it) */

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
	int depth;                    /* the enumeration has decided every profile of mask past prof[depth - 1] */
};

struct bags {
	struct split *x;
	int np, prof[MIG_MAX_PROFILES]; /* the profiles used (none another stands for), most memory first */
	int maxc[MIG_MAX_PROFILES];     /* [p]: the most instances of p all GPUs' rows have */
	uint64_t restmem[MIG_MAX_PROFILES + 1]; /* [i]: the most memory of profiles prof[i..] */
	uint64_t restfill[MIG_MAX_PROFILES + 1]; /* the most small memory they hold */
	long restmost[MIG_MAX_PROFILES + 1], restsms[MIG_MAX_PROFILES + 1]; /* small units, SMs */
	int restn[MIG_MAX_PROFILES + 1]; /* instances */
	double perslice[4][MIG_MAX_PROFILES + 1]; /* [0..3][i]: the most fill, small units, SMs, instances a compute slice of prof[i..] has */
	uint64_t P, lo, hi;           /* the placed units' memory; the bags' memory lies in [lo, hi] */
	uint64_t smem;                /* the small units' */
	long sneed;                   /* SMs their shares need */
	int units, eunits, ns;        /* units placed; exclusive ones, small ones */
	int ec[MAX_FIELDS], sc[MAX_FIELDS]; /* units placed of each exclusive, small class */
	uint64_t ew[MAX_FIELDS];      /* [c]: the least an exclusive unit of class c wastes */
	uint64_t dm;                  /* the gcd of the profiles' memories: a bag's memory is a multiple */
	uint32_t efit[MAX_FIELDS];    /* [c]: profiles exclusive class c fits */
	uint64_t minfill;             /* the least fill the exclusive units' instances take */
	int holds[MAX_FIELDS][MIG_MAX_PROFILES]; /* [a][p]: the most units of small class a one instance of p holds */
	int minmost;
	long minsms;                  /* and SMs */
	long minroom[MAX_FIELDS];     /* and units of each small class they could have held */
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
	uint64_t capmem;              /* the most instance memory all GPUs' rows have */
	long capsms;                  /* and SMs */
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
	long pcheap, pcache, pslack, pwork; /* packs(): cheap no, cache no, slack_pack calls, work in them (trace) */
};

/* A state of the packing: the small units left (plain), from which state of the layer before, with what content. */
struct pst {
	uint64_t r, c;
	int parent;
};

/* --------------------------------------------------------------------------------- set up */

/* What depends on the GPUs alone: their rows, the profiles used, the memo of what they hold. */
static int
bags_init(struct bags *b, struct split *x)
{
	const struct search *s = x->s;
	int used[MIG_MAX_PROFILES] = {0}, cap[MIG_MAX_PROFILES];
	uint64_t pm[MIG_MAX_PROFILES];

	memset(b, 0, sizeof *b);
	b->x = x;
	b->rows = xcalloc((size_t)s->ngpus + 1, sizeof *b->rows);
	b->nrows = xcalloc((size_t)s->ngpus + 1, sizeof *b->nrows);
	b->sufmax = xcalloc(((size_t)s->ngpus + 1) * MIG_MAX_PROFILES, sizeof *b->sufmax);
	b->sufsl = xcalloc((size_t)s->ngpus + 1, sizeof *b->sufsl);
	mig_hm_init(&b->memo, 1024, 2);
	mig_hm_init(&b->ycache, 64, 1);
	for (int j = s->ngpus - 1; j >= 0; j--) {
		const struct gtable *t = s->sg[j].t;
		size_t cap2 = 0;
		int sl = 0, rsms = 0;
		uint64_t rmem = 0;

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
			{
				uint64_t m = 0;
				int sm = 0;

				for (int p = 0; p < x->np; p++) {
					m += w.n[p] * x->g->profiles[p].mem_bytes;
					sm += w.n[p] * x->g->profiles[p].sms;
				}
				rmem = m > rmem ? m : rmem;
				rsms = sm > rsms ? sm : rsms;
			}
			xgrow(&b->rows[j], &cap2, b->nrows[j] + 1, sizeof *b->rows[j]);
			b->rows[j][b->nrows[j]++] = w;
			for (int p = 0; p < x->np; p++) {
				used[p] |= w.n[p] > 0;
				if (w.n[p] > b->sufmax[j * MIG_MAX_PROFILES + p] - b->sufmax[(j + 1) * MIG_MAX_PROFILES + p])
					b->sufmax[j * MIG_MAX_PROFILES + p] = b->sufmax[(j + 1) * MIG_MAX_PROFILES + p] + w.n[p];
			}
		}
		b->sufsl[j] = b->sufsl[j + 1] + sl;
		b->capmem += rmem;
		b->capsms += rsms;
		spend(x, (long)t->ngeo / 8 + 1);
	}
	for (int p = 0; p < x->np; p++) {
		b->maxc[p] = b->sufmax[p];
		cap[p] = b->maxc[p];
		if (cap[p] > UCHAR_MAX)
			return -1;
		pm[p] = x->g->profiles[p].mem_bytes;
		if (used[p]) {
			b->prof[b->np++] = p;
			b->dm = mig_gcd64(b->dm, pm[p]);
		}
	}
	mig_order_by(b->prof, pm, b->np, 1);
	for (int i = b->np - 1; i >= 0; i--) {
		int p = b->prof[i];

		b->restmem[i] = b->restmem[i + 1] + (uint64_t)b->maxc[p] * pm[p];
		b->restfill[i] = b->restfill[i + 1] + (uint64_t)b->maxc[p] * x->fill[p];
		b->restmost[i] = b->restmost[i + 1] + (long)b->maxc[p] * x->smost[p];
		b->restsms[i] = b->restsms[i + 1] + (long)b->maxc[p] * x->g->profiles[p].sms;
		b->restn[i] = b->restn[i + 1] + b->maxc[p];
		{
			double v[4] = {(double)x->fill[p], x->smost[p], x->g->profiles[p].sms, 1};

			for (int k = 0; k < 4; k++) {
				v[k] /= x->g->profiles[p].slices;
				b->perslice[k][i] = v[k] > b->perslice[k][i + 1] ? v[k] : b->perslice[k][i + 1];
			}
		}
	}
	if (mig_split_pack_init(&b->pr, x->np, cap) < 0)
		return -1;
	for (int c = 0; c < x->ne; c++) {
		uint64_t um = s->sg[0].mem[x->ecls[c]];

		b->efit[c] = s->sg[0].fit[x->ecls[c]];
		b->ew[c] = UINT64_MAX;
		for (int p = 0; p < x->np; p++) {
			if (!used[p])
				b->efit[c] &= ~(1u << p);
			if (b->efit[c] >> p & 1 && pm[p] - um < b->ew[c])
				b->ew[c] = pm[p] - um;
		}
	}
	if ((1 << x->ne) <= MAX_HALL)
		b->hl = xcalloc((size_t)1 << x->ne, sizeof *b->hl);
	return 0;
}

/*
 * The units placed: each exclusive class's ec[c] and small class's sc[a]
 * (every unit, or all but a drop vector's), with the bags' memory from lo
 * up to that of the best plan's waste. -1: some unit fits no instance.
 */
static int
bags_units(struct bags *b, const int *ec, const int *sc, uint64_t lo)
{
	struct split *x = b->x;

	memcpy(b->ec, ec, sizeof *ec * (size_t)x->ne);
	memcpy(b->sc, sc, sizeof *sc * (size_t)x->nsm);
	b->P = b->smem = 0;
	b->sneed = 0;
	b->units = b->eunits = b->ns = b->minmost = 0;
	b->minfill = 0;
	b->minsms = 0;
	memset(b->minroom, 0, sizeof b->minroom);
	b->nhall = 0;
	b->nc = 0;
	mig_hm_free(&b->ycache);
	mig_hm_init(&b->ycache, 64, 1);
	/* the small units, and the least the exclusive ones take from them */
	for (int a = 0; a < x->nsm; a++) {
		b->ns += sc[a];
		b->smem += (uint64_t)sc[a] * x->smem[a];
		b->sneed += (long)sc[a] * x->sneed[a];
		for (int p = 0; p < x->np; p++) {
			const struct mig_profile *pr = &x->g->profiles[p];
			uint64_t n = pr->mem_bytes / x->smem[a];

			if (x->sneed[a] > 0 && (uint64_t)(pr->sms / x->sneed[a]) < n)
				n = (uint64_t)(pr->sms / x->sneed[a]);
			b->holds[a][p] = n < (uint64_t)sc[a] ? (int)n : sc[a];
		}
	}
	b->P = b->smem;
	for (int c = 0; c < x->ne; c++) {
		uint64_t f = UINT64_MAX;
		int m = INT_MAX, sm = INT_MAX;

		if (!ec[c])
			continue;
		if (!b->efit[c])
			return -1;
		for (int p = 0; p < x->np; p++)
			if (b->efit[c] >> p & 1) {
				f = x->fill[p] < f ? x->fill[p] : f;
				m = x->smost[p] < m ? x->smost[p] : m;
				sm = x->g->profiles[p].sms < sm ? x->g->profiles[p].sms : sm;
			}
		b->minsms += (long)ec[c] * sm;
		for (int a = 0; a < x->nsm; a++) {
			int h = INT_MAX;

			for (int p = 0; p < x->np; p++)
				if (b->efit[c] >> p & 1 && b->holds[a][p] < h)
					h = b->holds[a][p];
			b->minroom[a] += (long)ec[c] * h;
		}
		b->P += (uint64_t)ec[c] * x->s->sg[0].mem[x->ecls[c]];
		b->eunits += ec[c];
		b->minfill += (uint64_t)ec[c] * f;
		b->minmost += ec[c] * m;
	}
	b->units = b->eunits + b->ns;
	/*
	 * Hall's condition: each set of exclusive classes against the instances
	 * its units fit. Of the sets whose classes fit the same profiles (mask),
	 * the one of every class that fits within them holds the most units: one
	 * per mask.
	 */
	if (b->hl)
		for (uint32_t m = 1; m < (1u << x->ne); m++) {
			struct hall h = {0, 0, 0};
			int seen = 0;

			for (int c = 0; c < x->ne; c++)
				if (m >> c & 1 && ec[c])
					h.mask |= b->efit[c];
			for (int t = 0; t < b->nhall && !seen; t++)
				seen = b->hl[t].mask == h.mask;
			if (!h.mask || seen)
				continue;
			for (int c = 0; c < x->ne; c++)
				if (ec[c] && (b->efit[c] & ~h.mask) == 0)
					h.units += ec[c];
			for (int i = 0; i < b->np; i++)
				if (h.mask >> b->prof[i] & 1)
					h.depth = i + 1;
			b->hl[b->nhall++] = h;
		}
	b->lo = lo;
	b->hi = x->inc.waste > UINT64_MAX - b->P ? UINT64_MAX : b->P + x->inc.waste;
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

/*
 * Whether instances n[] (per profile), less less[a] of each small class's
 * room (what exclusive units take of it at least), hold, class by class,
 * as many units as each small class has.
 */
static int
class_room(const struct bags *b, const unsigned char *n, const long *less)
{
	const struct split *x = b->x;

	for (int a = 0; a < x->nsm; a++) {
		long room = 0, need = b->sc[a] + (less ? less[a] : 0);

		for (int i = 0; i < b->np && room < need; i++)
			room += (long)n[b->prof[i]] * b->holds[a][b->prof[i]];
		if (room < need)
			return 0;
	}
	return 1;
}

/*
 * The least of val[] (per profile) that `units` instances of n[] among the
 * profiles of mask have: the exclusive units of a set of classes take as
 * many instances, distinct, of the profiles some class of the set fits.
 */
static uint64_t
least_taken(const struct bags *b, const unsigned char *n, uint32_t mask, int units, const uint64_t *val)
{
	int order[MIG_MAX_PROFILES], m = 0;
	uint64_t sum = 0;

	for (int i = 0; i < b->np; i++)
		if (mask >> b->prof[i] & 1 && n[b->prof[i]])
			order[m++] = b->prof[i];
	for (int i = 1; i < m; i++)
		for (int j = i; j > 0 && val[order[j]] < val[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < m && units > 0; i++) {
		int k = n[order[i]] < units ? n[order[i]] : units;

		sum += (uint64_t)k * val[order[i]];
		units -= k;
	}
	return sum;
}

/*
 * Whether the instances n[], less those each set of exclusive classes
 * takes at least (its units' worth of the instances its classes fit with
 * the least of each), leave the small units their fill, count, SMs and
 * room class by class.
 */
static int
left_room(const struct bags *b, const unsigned char *n)
{
	const struct split *x = b->x;
	uint64_t val[MIG_MAX_PROFILES], have;

	for (int r = 0; r < 3 + x->nsm; r++) {
		uint64_t need, take = 0;

		have = 0;
		for (int p = 0; p < x->np; p++) {
			if (r == 0)
				val[p] = x->fill[p];
			else if (r == 1)
				val[p] = (uint64_t)x->smost[p];
			else if (r == 2)
				val[p] = (uint64_t)x->g->profiles[p].sms;
			else
				val[p] = (uint64_t)b->holds[r - 3][p];
			have += (uint64_t)n[p] * val[p];
		}
		need = r == 0 ? b->smem : r == 1 ? (uint64_t)b->ns : r == 2 ? (uint64_t)b->sneed : (uint64_t)b->sc[r - 3];
		for (int h = 0; h < b->nhall; h++) {
			uint64_t t = least_taken(b, n, b->hl[h].mask, b->hl[h].units, val);

			take = t > take ? t : take;
		}
		if (have < take || have - take < need)
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
	if (n < b->eunits || n - b->eunits > b->ns)
		return;
	/* the small units in what the exclusive ones leave */
	if (fill < b->minfill || fill - b->minfill < b->smem || most - b->minmost < b->ns || sms - b->minsms < b->sneed ||
	    !class_room(b, b->cur, b->minroom))
		return;
	for (int h = 0; h < b->nhall; h++) {
		int have = 0;

		for (int i = 0; i < b->np; i++)
			if (b->hl[h].mask >> b->prof[i] & 1)
				have += b->cur[b->prof[i]];
		if (have < b->hl[h].units)
			return;
	}
	spend(x, (long)b->nhall * (4 + x->nsm) / 16 + 1);
	if (!left_room(b, b->cur))
		return;
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

/*
 * Whether the instances of profiles prof[0..i-1] chosen (b->cur) leave
 * the rest room to hold every unit: the sets of exclusive classes whose
 * profiles are all decided (Hall's condition), and what the profiles from
 * prof[i] on add at most to the instances, their small fill, units, SMs.
 */
static int
bag_room(const struct bags *b, int i, int sl)
{
	const struct split *x = b->x;
	int n = 0;
	uint64_t fill = 0;
	long most = 0, sms = 0;
	double left = b->sufsl[0] - sl;   /* the compute slices left for prof[i..] */

	for (int t = 0; t < i; t++) {
		int p = b->prof[t], c = b->cur[p];

		n += c;
		fill += (uint64_t)c * x->fill[p];
		most += (long)c * x->smost[p];
		sms += (long)c * x->g->profiles[p].sms;
	}
	/* the rest at their most: every instance of every profile, or the slices left at the best rate */
	if (n + fmin(b->restn[i], left * b->perslice[3][i] + ROUNDING) < b->eunits ||
	    (double)fill + fmin((double)b->restfill[i], left * b->perslice[0][i] * (1 + ROUNDING)) <
	        (double)(b->minfill + b->smem) ||
	    most + fmin(b->restmost[i], left * b->perslice[1][i] + ROUNDING) < b->minmost + b->ns ||
	    sms + fmin(b->restsms[i], left * b->perslice[2][i] + ROUNDING) < b->minsms + b->sneed)
		return 0;
	/* each small class's room, the rest at their most */
	for (int a = 0; a < x->nsm; a++) {
		long room = 0, more = 0;
		double rate = 0;

		for (int t = 0; t < b->np; t++) {
			int p = b->prof[t];

			if (t < i) {
				room += (long)b->cur[p] * b->holds[a][p];
			} else {
				more += (long)b->maxc[p] * b->holds[a][p];
				if ((double)b->holds[a][p] / x->g->profiles[p].slices > rate)
					rate = (double)b->holds[a][p] / x->g->profiles[p].slices;
			}
		}
		if (room + fmin((double)more, left * rate + ROUNDING) < b->sc[a] + b->minroom[a])
			return 0;
	}
	/* Hall's condition, the profiles not decided yet at their most (in number, and in the slices left) */
	for (int h = 0; h < b->nhall; h++) {
		int have = 0, more = 0, sl1 = INT_MAX;

		for (int t = 0; t < b->np; t++) {
			int p = b->prof[t];

			if (!(b->hl[h].mask >> p & 1))
				continue;
			if (t < i) {
				have += b->cur[p];
			} else {
				more += b->maxc[p];
				sl1 = x->g->profiles[p].slices < sl1 ? x->g->profiles[p].slices : sl1;
			}
		}
		if (more && more > left / sl1 + ROUNDING)
			more = (int)(left / sl1 + ROUNDING);
		if (have + more < b->hl[h].units)
			return 0;
	}
	return 1;
}

/* The last profile p's least count: the instances before it (b->cur) and it hold the small units' SMs, fill and count. */
static int
last_least(const struct bags *b, int p)
{
	const struct split *x = b->x;
	uint64_t fill = 0;
	long most = 0, sms = 0, c = 0;

	for (int t = 0; t + 1 < b->np; t++) {
		int q = b->prof[t];

		fill += (uint64_t)b->cur[q] * x->fill[q];
		most += (long)b->cur[q] * x->smost[q];
		sms += (long)b->cur[q] * x->g->profiles[q].sms;
	}
	if (sms < b->minsms + b->sneed)
		c = (b->minsms + b->sneed - sms + x->g->profiles[p].sms - 1) / x->g->profiles[p].sms;
	if (most < b->minmost + b->ns && x->smost[p] > 0 && (b->minmost + b->ns - most + x->smost[p] - 1) / x->smost[p] > c)
		c = (b->minmost + b->ns - most + x->smost[p] - 1) / x->smost[p];
	if (fill < b->minfill + b->smem && x->fill[p] > 0 &&
	    (long)((b->minfill + b->smem - fill + x->fill[p] - 1) / x->fill[p]) > c)
		c = (long)((b->minfill + b->smem - fill + x->fill[p] - 1) / x->fill[p]);
	/* each small class's room */
	for (int a = 0; a < x->nsm; a++) {
		long room = 0, need = b->sc[a] + b->minroom[a];

		for (int t = 0; t + 1 < b->np; t++)
			room += (long)b->cur[b->prof[t]] * b->holds[a][b->prof[t]];
		if (room >= need)
			continue;
		if (b->holds[a][p] == 0)
			return INT_MAX;
		if ((need - room + b->holds[a][p] - 1) / b->holds[a][p] > c)
			c = (need - room + b->holds[a][p] - 1) / b->holds[a][p];
	}
	return c > INT_MAX ? INT_MAX : (int)c;
}

/* The bags from profile prof[i] on, with memory mem, n instances and sl compute slices so far. */
static void
bag_enum(struct bags *b, int i, uint64_t mem, int n, int sl)
{
	struct split *x = b->x;
	int p;
	uint64_t pm;

	/* each node its work, kept or not */
	if (spend(x, 1) || (i > 0 && i < b->np && !bag_room(b, i, sl)))
		return;
	if (i == b->np) {
		if (mem >= b->lo)
			bag_leaf(b, mem);
		return;
	}
	p = b->prof[i];
	pm = x->g->profiles[p].mem_bytes;
	for (int c = i + 1 == b->np ? last_least(b, p) : 0; c <= b->maxc[p] && n + c <= b->eunits + b->ns && !x->aborted;
	    c++) {
		uint64_t m = mem + (uint64_t)c * pm;
		int l = sl + c * x->g->profiles[p].slices;

		/* more memory than the best plan allows, more compute slices than the GPUs have */
		if (m > b->hi || l > b->sufsl[0])
			break;
		if (m + b->restmem[i + 1] < b->lo)
			continue;
		b->cur[p] = (unsigned char)c;
		bag_enum(b, i + 1, m, n + c, l);
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
		full += (uint64_t)b->sc[a] * x->psm.one[a];
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
	if (n > b->ns || fill < b->smem || most < b->ns || ysms < b->sneed || n > MIG_MAX_INST * 64 ||
	    !class_room(b, b->avail, NULL)) {
		b->pcheap++;
		return 0;
	}
	seen = mig_hm_get(&b->ycache, y, 0);
	if (*seen == 0) {
		b->pcache++;
		return 0;
	}
	b->pslack++;
	b->pwork -= x->work;
	r = slack_pack(b, ymem);
	b->pwork += x->work;
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
	uint64_t fill = 0, take = 0;
	long sms = 0, tsms = 0, room[MAX_FIELDS];
	int r;

	if (spend(x, 1))
		return -1;
	if (c == x->ne)
		return packs(b);
	if (left == 0)
		return exclusive(b, c + 1, 0, c + 1 < x->ne ? b->ec[c + 1] : 0);
	/*
	 * What the instances left hold, less what the units still to give take
	 * at least (each the least fill and SMs of a profile it fits that is
	 * left; class c's from q on): too little for the small units, no way.
	 */
	for (int p = 0; p < x->np; p++) {
		fill += (uint64_t)b->avail[p] * x->fill[p];
		sms += (long)b->avail[p] * x->g->profiles[p].sms;
	}
	memset(room, 0, sizeof room);
	for (int d = c; d < x->ne; d++) {
		uint64_t f = UINT64_MAX;
		long m = LONG_MAX;
		int n = d == c ? left : b->ec[d], h[MAX_FIELDS];

		if (!n)
			continue;
		for (int a = 0; a < x->nsm; a++)
			h[a] = INT_MAX;
		for (int p = d == c ? q : 0; p < x->np; p++)
			if (b->efit[d] >> p & 1 && b->avail[p]) {
				f = x->fill[p] < f ? x->fill[p] : f;
				m = x->g->profiles[p].sms < m ? x->g->profiles[p].sms : m;
				for (int a = 0; a < x->nsm; a++)
					h[a] = b->holds[a][p] < h[a] ? b->holds[a][p] : h[a];
			}
		if (m == LONG_MAX)
			return 0;
		take += (uint64_t)n * f;
		tsms += (long)n * m;
		for (int a = 0; a < x->nsm; a++)
			room[a] += (long)n * h[a];
	}
	if (fill < take || fill - take < b->smem || sms - tsms < b->sneed || !class_room(b, b->avail, room))
		return 0;
	for (; q < x->np && !(b->efit[c] >> q & 1 && b->avail[q]); q++)
		;
	if (q == x->np)
		return 0;
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

/*
 * The bags of the units b holds, tried in order of memory and SMs until
 * none could beat the best plan: 0 done (a better plan offered where one
 * was found), -1 out of work. *found: set where a bag gave a plan.
 */
static int
bags_try(struct bags *b, struct mig_score *best, int *found)
{
	struct split *x = b->x;
	int first = -1;

	bag_enum(b, 0, 0, 0, 0);
	if (!x->aborted && b->nc > 1)
		qsort(b->c, b->nc, sizeof *b->c, bag_cmp);
	spend(x, (long)b->nc / 4 + 1);
#ifdef MIG_TRACE
	fprintf(stderr, "bags: enumerated %zu, work %ld\n", b->nc, x->work);
#endif
	for (size_t i = 0; i < b->nc && !x->aborted; i++) {
		const struct bagc *t = &b->c[i];
		uint64_t w = t->mem - b->P;
		int ops, r;
		struct mig_score want;

		if (first >= 0 && (w != best->waste || t->sms != best->sms))
			break;
		if (no_better(x, w, t->sms, 0))
			break;
		memcpy(b->avail, t->n, sizeof b->avail);
		memset(b->e, 0, sizeof b->e);
		b->tried++;
		r = exclusive(b, 0, 0, x->ne ? b->ec[0] : 0);
		if (r < 0)
			break;
		if (r == 0) {
			b->nopack++;
			continue;
		}
		ops = hold(b, 0, t->n);
		if (ops == NO_ROW || no_better(x, w, t->sms, ops)) {
			b->nohold++;
			continue;
		}
		/* its plan now: a later bag of the same value and fewer operations replaces it */
		want = (struct mig_score){x->S, w, t->sms, ops};
		if (!bag_plan(b, t, &want)) {
			/* not built (none should fail): no proof, and the split DP goes on from the plans it has */
			x->aborted = 1;
			break;
		}
		*best = x->inc = want;
		first = (int)i;
		*found = 1;
	}
	return x->aborted ? -1 : 0;
}

/*
 * Where the mix does not fit: a drop vector (the units of each class left
 * out, S placed in all) fixes the memory placed, so beneath each one the
 * bags are those of a mix that fits. Its waste is at least its exclusive
 * units' least waste, and congruent to minus the memory placed modulo the
 * profiles' gcd (a bag's memory is a multiple of it): the vectors go by
 * that bound, least first, until it passes the best plan's waste.
 */
#define NRES 4                /* the GPUs' room a drop vector's units must fit: memory, SMs, slices twice */

struct drops {
	struct bags *b;
	int nk;                       /* classes: exclusive ones, then small ones */
	int n[2 * MAX_FIELDS];
	uint64_t w[2 * MAX_FIELDS], m[2 * MAX_FIELDS]; /* a unit's least waste, its memory */
	/*
	 * [q][k]: what a unit of class k takes at least of resource q (its
	 * instance's memory; SMs; compute slices, a small unit its part of an
	 * instance by memory and by SMs); cap[q]: what all GPUs' rows have
	 */
	double use[NRES][2 * MAX_FIELDS], cap[NRES];
	/* [i]: classes i.. by w, and by use[q], most first; what all their units waste, use */
	int wsort[2 * MAX_FIELDS][2 * MAX_FIELDS], usort[NRES][2 * MAX_FIELDS][2 * MAX_FIELDS];
	uint64_t wall[2 * MAX_FIELDS + 1];
	double uall[NRES][2 * MAX_FIELDS + 1];
	int d[2 * MAX_FIELDS];
	/*
	 * [a][c]: a unit of class a can stand for one of class c in any plan,
	 * at the same value (the same memory, and it fits wherever c's does),
	 * and goes first (ties broken by index): a vector that leaves out a unit
	 * of a while it keeps one of c is matched by the one that leaves out the
	 * unit of c instead, so only vectors that leave out all of c first are
	 * tried
	 */
	unsigned char easier[2 * MAX_FIELDS][2 * MAX_FIELDS];
	struct dv {
		uint64_t lb;          /* its bound */
		unsigned char d[2 * MAX_FIELDS]; /* the units it leaves out of each class */
	} *v;
	size_t nv, vcap;
};

#define MAX_DROPS 100000      /* drop vectors within the best plan's waste, before giving up */

_Static_assert(sizeof ((struct search *)0)->bags_done_d == 2 * MAX_FIELDS, "a drop vector's classes");

/* Classes i.. in order of val, most first, into out. */
static void
drops_sort(const struct drops *r, int i, const double *val, int *out)
{
	int n = 0;

	for (int k = i; k < r->nk; k++) {
		int j = n++;

		for (; j > 0 && val[out[j - 1]] < val[k]; j--)
			out[j] = out[j - 1];
		out[j] = k;
	}
}

/* The least waste the kept units of classes i.. add, with left of them still to drop (the most wasteful). */
static uint64_t
drops_rest(const struct drops *r, int i, int left)
{
	uint64_t cut = 0;

	for (int a = 0; a < r->nk - i && left > 0; a++) {
		int k = r->wsort[i][a], take = r->n[k] < left ? r->n[k] : left;

		cut += (uint64_t)take * r->w[k];
		left -= take;
	}
	return r->wall[i] - cut;
}

/* The least of resource q the kept units of classes i.. take, with left of them still to drop. */
static double
drops_use(const struct drops *r, int q, int i, int left)
{
	double cut = 0;

	for (int a = 0; a < r->nk - i && left > 0; a++) {
		int k = r->usort[q][i][a], take = r->n[k] < left ? r->n[k] : left;

		cut += take * r->use[q][k];
		left -= take;
	}
	return r->uall[q][i] - cut;
}

static void
drops_enum(struct drops *r, int i, int left, uint64_t waste, uint64_t placed, int room, const double *used)
{
	struct split *x = r->b->x;

	if (x->aborted)
		return;
	spend(x, 1);
	if (i == r->nk) {
		uint64_t dm = r->b->dm, lb = waste + (dm - (placed + waste) % dm) % dm;

		/* its instances' memory, a multiple of dm, within what the GPUs have */
		if (left || no_better(x, lb, 0, 0) || (double)(placed + lb) > r->cap[0] * (1 + ROUNDING))
			return;
		if (r->nv >= MAX_DROPS) {
			x->aborted = 1;
			return;
		}
		xgrow(&r->v, &r->vcap, r->nv + 1, sizeof *r->v);
		memset(&r->v[r->nv], 0, sizeof r->v[r->nv]);
		r->v[r->nv].lb = lb;
		for (int k = 0; k < r->nk; k++)
			r->v[r->nv].d[k] = (unsigned char)r->d[k];
		r->nv++;
		return;
	}
	room -= r->n[i];
	for (int d = left < r->n[i] ? left : r->n[i]; d >= 0 && left - d <= room; d--) {
		uint64_t w = waste + (uint64_t)(r->n[i] - d) * r->w[i];
		double u[NRES];
		int fits = 1;

		if (no_better(x, w + drops_rest(r, i + 1, left - d), 0, 0))
			continue;
		/* no unit of a class left out while a harder one of the same memory is kept */
		for (int j = 0; j < i && fits; j++)
			fits = !(r->easier[i][j] && d > 0 && r->d[j] < r->n[j]) && !(r->easier[j][i] && r->d[j] > 0 && d < r->n[i]);
		if (!fits)
			continue;
		/* the units kept so far and the least the rest keep take no more than the GPUs have */
		for (int q = 0; q < NRES && fits; q++) {
			u[q] = used[q] + (r->n[i] - d) * r->use[q][i];
			fits = u[q] + drops_use(r, q, i + 1, left - d) <= r->cap[q] * (1 + ROUNDING) + ROUNDING;
		}
		if (!fits)
			continue;
		r->d[i] = d;
		drops_enum(r, i + 1, left - d, w, placed + (uint64_t)(r->n[i] - d) * r->m[i], room, u);
	}
	r->d[i] = 0;
}

static int
dv_cmp(const void *pa, const void *pb)
{
	const struct dv *a = pa, *c = pb;

	if (a->lb != c->lb)
		return a->lb < c->lb ? -1 : 1;
	return memcmp(a->d, c->d, sizeof a->d);
}

/* The drop vectors, and the bags beneath each: 0 every one done, -1 out of work. */
static int
drops_run(struct bags *b, int units, struct mig_score *best, int *found)
{
	struct split *x = b->x;
	struct drops r;
	int room = 0, ret = 0;

	memset(&r, 0, sizeof r);
	r.b = b;
	for (int c = 0; c < x->ne; c++) {
		r.n[r.nk] = x->pe.cap[c];
		r.w[r.nk] = b->efit[c] ? b->ew[c] : 0;
		r.m[r.nk] = x->s->sg[0].mem[x->ecls[c]];
		r.use[0][r.nk] = (double)(r.m[r.nk] + r.w[r.nk]);
		r.use[1][r.nk] = r.use[2][r.nk] = INT_MAX;
		for (int i = 0; i < b->np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->prof[i]];

			if (!(b->efit[c] >> b->prof[i] & 1))
				continue;
			r.use[1][r.nk] = pr->sms < r.use[1][r.nk] ? pr->sms : r.use[1][r.nk];
			r.use[2][r.nk] = pr->slices < r.use[2][r.nk] ? pr->slices : r.use[2][r.nk];
		}
		r.use[3][r.nk] = r.use[2][r.nk];
		r.nk++;
	}
	for (int a = 0; a < x->nsm; a++) {
		r.n[r.nk] = x->psm.cap[a];
		r.w[r.nk] = 0;
		r.m[r.nk] = x->smem[a];
		r.use[0][r.nk] = (double)x->smem[a];
		r.use[1][r.nk] = x->sneed[a];
		r.use[2][r.nk] = r.use[3][r.nk] = INT_MAX;
		for (int i = 0; i < b->np; i++) {
			const struct mig_profile *pr = &x->g->profiles[b->prof[i]];
			double by_mem = pr->slices * ((double)x->smem[a] / (double)pr->mem_bytes);
			double by_sms = pr->slices * ((double)x->sneed[a] / pr->sms);

			if (pr->mem_bytes < x->smem[a] || pr->sms < x->sneed[a])
				continue;
			r.use[2][r.nk] = by_mem < r.use[2][r.nk] ? by_mem : r.use[2][r.nk];
			r.use[3][r.nk] = by_sms < r.use[3][r.nk] ? by_sms : r.use[3][r.nk];
		}
		r.nk++;
	}
	/* which class's units stand for which's */
	for (int a = 0; a < r.nk; a++)
		for (int c = 0; c < r.nk; c++) {
			int ea = a < x->ne, ec = c < x->ne, ab, ca;

			if (a == c || ea != ec || r.m[a] != r.m[c])
				continue;
			if (ea) {
				ab = (b->efit[a] & b->efit[c]) == b->efit[c];     /* a fits wherever c does */
				ca = (b->efit[a] & b->efit[c]) == b->efit[a];
			} else {
				ab = x->sneed[a - x->ne] <= x->sneed[c - x->ne];
				ca = x->sneed[c - x->ne] <= x->sneed[a - x->ne];
			}
			r.easier[a][c] = ab && (!ca || a > c);
		}
	r.cap[0] = (double)b->capmem;
	r.cap[1] = (double)b->capsms;
	r.cap[2] = r.cap[3] = b->sufsl[0];
	for (int i = r.nk - 1; i >= 0; i--) {
		double wv[2 * MAX_FIELDS];

		r.wall[i] = r.wall[i + 1] + (uint64_t)r.n[i] * r.w[i];
		for (int k = 0; k < r.nk; k++)
			wv[k] = (double)r.w[k];
		drops_sort(&r, i, wv, r.wsort[i]);
		for (int q = 0; q < NRES; q++) {
			r.uall[q][i] = r.uall[q][i + 1] + r.n[i] * r.use[q][i];
			drops_sort(&r, i, r.use[q], r.usort[q][i]);
		}
	}
	for (int k = 0; k < r.nk; k++)
		room += r.n[k];
	drops_enum(&r, 0, units - x->S, 0, 0, room, (const double[NRES]){0});
	if (!x->aborted && r.nv > 1)
		qsort(r.v, r.nv, sizeof *r.v, dv_cmp);
	spend(x, (long)r.nv / 4 + 1);
#ifdef MIG_TRACE
	fprintf(stderr, "drops: %zu vectors, work %ld\n", r.nv, x->work);
#endif
	for (size_t i = 0; i < r.nv && !x->aborted; i++) {
		const unsigned char *d = r.v[i].d;
		struct search *s = x->s;
		struct dv done;
		int ec[MAX_FIELDS], sc[MAX_FIELDS];

		if (no_better(x, r.v[i].lb, 0, 0))
			break;
		/* finished by the bags first, against a plan no better than this run's */
		memset(&done, 0, sizeof done);
		done.lb = s->bags_done_lb;
		memcpy(done.d, s->bags_done_d, sizeof done.d);
		if (s->bags_done && dv_cmp(&r.v[i], &done) <= 0)
			continue;
		for (int c = 0; c < x->ne; c++)
			ec[c] = x->pe.cap[c] - d[c];
		for (int a = 0; a < x->nsm; a++)
			sc[a] = x->psm.cap[a] - d[x->ne + a];
		if (bags_units(b, ec, sc, 0) < 0)
			continue;
		b->lo = b->P + r.v[i].lb;
		if (bags_try(b, best, found) < 0) {
			ret = -1;
			break;
		}
		s->bags_done = 1;
		s->bags_done_lb = r.v[i].lb;
		memcpy(s->bags_done_d, d, sizeof s->bags_done_d);
	}
	if (x->aborted)
		ret = -1;
	free(r.v);
	return ret;
}

int
mig_split_bags(struct split *x)
{
	struct bags b;
	int ret = 0, found = 0, units = x->ns, r;
	struct mig_score best = x->inc;

	for (int c = 0; c < x->ne; c++)
		units += x->pe.cap[c];
	if (bags_init(&b, x) < 0) {
		bags_free(&b);
		return 0;
	}
	r = drops_run(&b, units, &best, &found);
	if (r == 0 && !x->aborted) {
		ret = 1;
		mig_bag_proofs++;
		if (found)
			mig_bag_own = best;
	}
#ifdef MIG_TRACE
	fprintf(stderr, "bags: tried %ld (not packed %ld, not held %ld), held %zu, found %d, ret %d, work %ld "
	    "aborted %d; packs: cheap %ld cache %ld slack %ld (work %ld)\n", b.tried, b.nopack, b.nohold, b.nm, found, ret,
	    x->work, x->aborted, b.pcheap, b.pcache, b.pslack, b.pwork);
#endif
	bags_free(&b);
	return ret;
}
