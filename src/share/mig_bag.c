/*
 * mig_bag: the bags of instances (doc/mig.md, "How it works"): set up, the
 * bags enumerated with the checks every bag gets, the GPUs holding a bag,
 * its plan rebuilt, the bags tried in order (mig_bagpack.c gives a bag's
 * instances the units; mig_bagdrop.c runs them).
 *
 * Where the units placed are fixed (every unit, or all but a drop
 * vector's), every plan places the same memory P, so its waste is its
 * instances' memory less P, and its SMs are its instances' SMs: the first
 * two levels of its value depend on the multiset of its instances alone
 * (the bag: instances per profile), and which GPU an instance sits on
 * matters only to the operations. So the bags whose memory lies between P
 * plus a bound and P plus the best plan's waste are enumerated (each kept
 * only where its instances could take every unit: an instance for each
 * exclusive unit, room for the small ones in what those leave, Hall's
 * condition on which instances the exclusive units fit, the compute
 * slices the GPUs have), sorted by memory and then SMs, and tried in that
 * order: a bag is a plan where its instances can take every unit (each
 * exclusive unit alone in an instance it fits, every way; the small units
 * packed into the rest by a DP over those instances whose waste of memory
 * and of SMs the slacks bound, which is exact) and the GPUs' tables can hold it (a DP over the
 * GPUs, remembered across bags, with the fewest operations). The first bag
 * that is a plan has the least waste and then SMs any plan can have; the
 * bags of the same memory and SMs after it are tried for fewer operations;
 * one that leaves an instance empty is never the first, since the bag
 * without that instance is a plan too, with less memory, and comes before
 * it. Where no bag better than the best plan is a plan, that plan is
 * optimal.
 */
#include "share/mig.h"
#include "share/mig_bag.h"
#include "util/str.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------------------------- set up */

/* What depends on the GPUs alone: their rows, the profiles used, the memo of what they hold. */
int
mig_bags_init(struct bags *b, struct bagrun *x)
{
	const struct search *s = x->s;
	int used[MIG_MAX_PROFILES] = {0}, cap[MIG_MAX_PROFILES];
	uint64_t pm[MIG_MAX_PROFILES];

	memset(b, 0, sizeof *b);
	b->x = x;
	b->gp.rows = xcalloc((size_t)s->ngpus + 1, sizeof *b->gp.rows);
	b->gp.nrows = xcalloc((size_t)s->ngpus + 1, sizeof *b->gp.nrows);
	b->gp.sufmax = xcalloc(((size_t)s->ngpus + 1) * MIG_MAX_PROFILES, sizeof *b->gp.sufmax);
	b->gp.sufsl = xcalloc((size_t)s->ngpus + 1, sizeof *b->gp.sufsl);
	mig_hm_init(&b->gp.memo, 1024, 2);
	mig_hm_init(&b->ycache, 64, 1);
	for (int j = s->ngpus - 1; j >= 0; j--) {
		const struct gtable *t = s->sg[j].t;
		size_t cap2 = 0;
		int sl = 0, rsms = 0;
		uint64_t rmem = 0;

		xgrow(&b->gp.rows[j], &cap2, 1, sizeof *b->gp.rows[j]);
		memset(&b->gp.rows[j][0], 0, sizeof b->gp.rows[j][0]);
		b->gp.nrows[j] = 1;
		for (int p = 0; p < MIG_MAX_PROFILES; p++)
			b->gp.sufmax[j * MIG_MAX_PROFILES + p] = b->gp.sufmax[(j + 1) * MIG_MAX_PROFILES + p];
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
			xgrow(&b->gp.rows[j], &cap2, b->gp.nrows[j] + 1, sizeof *b->gp.rows[j]);
			b->gp.rows[j][b->gp.nrows[j]++] = w;
			for (int p = 0; p < x->np; p++) {
				used[p] |= w.n[p] > 0;
				if (w.n[p] > b->gp.sufmax[j * MIG_MAX_PROFILES + p] - b->gp.sufmax[(j + 1) * MIG_MAX_PROFILES + p])
					b->gp.sufmax[j * MIG_MAX_PROFILES + p] = b->gp.sufmax[(j + 1) * MIG_MAX_PROFILES + p] + w.n[p];
			}
		}
		b->gp.sufsl[j] = b->gp.sufsl[j + 1] + sl;
		b->gp.capmem += rmem;
		b->gp.capsms += rsms;
		spend(x, (long)t->ngeo / 8 + 1);
	}
	for (int p = 0; p < x->np; p++) {
		b->gp.maxc[p] = b->gp.sufmax[p];
		cap[p] = b->gp.maxc[p];
		if (cap[p] > UCHAR_MAX)
			return -1;
		pm[p] = x->g->profiles[p].mem_bytes;
		if (used[p]) {
			b->gp.prof[b->gp.np++] = p;
			b->gp.dm = mig_gcd64(b->gp.dm, pm[p]);
		}
	}
	if (!b->gp.dm)
		b->gp.dm = 1; /* no instance at all: every bag is empty */
	mig_order_by(b->gp.prof, pm, b->gp.np, 1);
	for (int i = b->gp.np - 1; i >= 0; i--) {
		int p = b->gp.prof[i];

		b->gp.restmem[i] = b->gp.restmem[i + 1] + (uint64_t)b->gp.maxc[p] * pm[p];
		b->gp.restfill[i] = b->gp.restfill[i + 1] + (uint64_t)b->gp.maxc[p] * x->fill[p];
		b->gp.restmost[i] = b->gp.restmost[i + 1] + (long)b->gp.maxc[p] * x->smost[p];
		b->gp.restsms[i] = b->gp.restsms[i + 1] + (long)b->gp.maxc[p] * x->g->profiles[p].sms;
		b->gp.restn[i] = b->gp.restn[i + 1] + b->gp.maxc[p];
		{
			double v[4] = {(double)x->fill[p], x->smost[p], x->g->profiles[p].sms, 1};

			for (int k = 0; k < 4; k++) {
				v[k] /= x->g->profiles[p].slices;
				b->gp.perslice[k][i] = v[k] > b->gp.perslice[k][i + 1] ? v[k] : b->gp.perslice[k][i + 1];
			}
		}
	}
	if (mig_pack_init(&b->gp.pr, x->np, cap) < 0)
		return -1;
	for (int c = 0; c < x->ne; c++) {
		uint64_t um = s->sg[0].mem[x->ecls[c]];

		b->u.efit[c] = s->sg[0].fit[x->ecls[c]];
		b->u.ew[c] = UINT64_MAX;
		for (int p = 0; p < x->np; p++) {
			if (!used[p])
				b->u.efit[c] &= ~(1u << p);
			if (b->u.efit[c] >> p & 1 && pm[p] - um < b->u.ew[c])
				b->u.ew[c] = pm[p] - um;
		}
	}
	if ((1 << x->ne) <= MAX_HALL)
		b->u.hl = xcalloc((size_t)1 << x->ne, sizeof *b->u.hl);
	return 0;
}

/*
 * The units placed: each exclusive class's ec[c] and small class's sc[a]
 * (every unit, or all but a drop vector's), with the bags' memory up to
 * that of the best plan's waste (b->lo is the caller's). -1: some unit
 * fits no instance.
 */
int
mig_bags_units(struct bags *b, const int *ec, const int *sc)
{
	struct bagrun *x = b->x;

	memcpy(b->u.ec, ec, sizeof *ec * (size_t)x->ne);
	memcpy(b->u.sc, sc, sizeof *sc * (size_t)x->nsm);
	b->u.P = b->u.smem = 0;
	b->u.sneed = 0;
	b->u.eunits = b->u.ns = b->u.minmost = 0;
	b->u.minfill = 0;
	b->u.minsms = 0;
	memset(b->u.minroom, 0, sizeof b->u.minroom);
	b->u.nhall = 0;
	b->nc = 0;
	mig_hm_free(&b->ycache);
	mig_hm_init(&b->ycache, 64, 1);
	/* the small units, and the least the exclusive ones take from them */
	for (int a = 0; a < x->nsm; a++) {
		b->u.ns += sc[a];
		b->u.smem += (uint64_t)sc[a] * x->smem[a];
		b->u.sneed += (long)sc[a] * x->sneed[a];
		for (int p = 0; p < x->np; p++) {
			const struct mig_profile *pr = &x->g->profiles[p];
			uint64_t n = pr->mem_bytes / x->smem[a];

			if (x->sneed[a] > 0 && (uint64_t)(pr->sms / x->sneed[a]) < n)
				n = (uint64_t)(pr->sms / x->sneed[a]);
			b->u.holds[a][p] = n < (uint64_t)sc[a] ? (int)n : sc[a];
		}
	}
	b->u.P = b->u.smem;
	for (int c = 0; c < x->ne; c++) {
		uint64_t f = UINT64_MAX;
		int m = INT_MAX, sm = INT_MAX;

		if (!ec[c])
			continue;
		if (!b->u.efit[c])
			return -1;
		for (int p = 0; p < x->np; p++)
			if (b->u.efit[c] >> p & 1) {
				f = x->fill[p] < f ? x->fill[p] : f;
				m = x->smost[p] < m ? x->smost[p] : m;
				sm = x->g->profiles[p].sms < sm ? x->g->profiles[p].sms : sm;
			}
		b->u.minsms += (long)ec[c] * sm;
		for (int a = 0; a < x->nsm; a++) {
			int h = INT_MAX;

			for (int p = 0; p < x->np; p++)
				if (b->u.efit[c] >> p & 1 && b->u.holds[a][p] < h)
					h = b->u.holds[a][p];
			b->u.minroom[a] += (long)ec[c] * h;
		}
		b->u.P += (uint64_t)ec[c] * x->s->sg[0].mem[x->ecls[c]];
		b->u.eunits += ec[c];
		b->u.minfill += (uint64_t)ec[c] * f;
		b->u.minmost += ec[c] * m;
	}
	/*
	 * Hall's condition: each set of exclusive classes against the instances
	 * its units fit. Of the sets whose classes fit the same profiles (mask),
	 * the one of every class that fits within them holds the most units: one
	 * per mask.
	 */
	if (b->u.hl)
		for (uint32_t m = 1; m < (1u << x->ne); m++) {
			struct hall h = {0, 0, 0};
			int seen = 0;

			for (int c = 0; c < x->ne; c++)
				if (m >> c & 1 && ec[c])
					h.mask |= b->u.efit[c];
			for (int t = 0; t < b->u.nhall && !seen; t++)
				seen = b->u.hl[t].mask == h.mask;
			if (!h.mask || seen)
				continue;
			for (int c = 0; c < x->ne; c++)
				if (ec[c] && (b->u.efit[c] & ~h.mask) == 0)
					h.units += ec[c];
			for (int i = 0; i < b->gp.np; i++)
				if (h.mask >> b->gp.prof[i] & 1)
					h.depth = i + 1;
			b->u.hl[b->u.nhall++] = h;
		}
	b->hi = x->inc.waste > UINT64_MAX - b->u.P ? UINT64_MAX : b->u.P + x->inc.waste;
	return 0;
}

void
mig_bags_free(struct bags *b)
{
	for (int j = 0; b->gp.rows && j <= b->x->s->ngpus; j++)
		free(b->gp.rows[j]);
	free(b->gp.rows);
	free(b->gp.nrows);
	free(b->gp.sufmax);
	free(b->gp.sufsl);
	free(b->u.hl);
	free(b->c);
	free(b->gp.held);
	mig_hm_free(&b->gp.memo);
	mig_hm_free(&b->ycache);
}

/* ------------------------------------------------------------------------------- the bags */

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

	for (int i = 0; i < b->gp.np; i++)
		if (mask >> b->gp.prof[i] & 1 && n[b->gp.prof[i]])
			order[m++] = b->gp.prof[i];
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
	const struct bagrun *x = b->x;
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
				val[p] = (uint64_t)b->u.holds[r - 3][p];
			have += (uint64_t)n[p] * val[p];
		}
		need = r == 0 ? b->u.smem : r == 1 ? (uint64_t)b->u.ns : r == 2 ? (uint64_t)b->u.sneed : (uint64_t)b->u.sc[r - 3];
		for (int h = 0; h < b->u.nhall; h++) {
			uint64_t t = least_taken(b, n, b->u.hl[h].mask, b->u.hl[h].units, val);

			take = t > take ? t : take;
		}
		if (have < take || have - take < need)
			return 0;
	}
	return 1;
}

/* What the instances of profiles prof[0..i-1] chosen (b->cur) have: count, small fill, units, SMs, each class's room. */
struct have {
	int n;
	uint64_t fill;
	long most, sms, room[MAX_FIELDS];
};

static void
decided(const struct bags *b, int i, struct have *h)
{
	const struct bagrun *x = b->x;

	memset(h, 0, sizeof *h);
	for (int t = 0; t < i; t++) {
		int p = b->gp.prof[t], c = b->cur[p];

		h->n += c;
		h->fill += (uint64_t)c * x->fill[p];
		h->most += (long)c * x->smost[p];
		h->sms += (long)c * x->g->profiles[p].sms;
		for (int a = 0; a < x->nsm; a++)
			h->room[a] += (long)c * b->u.holds[a][p];
	}
}

/*
 * Whether the instances chosen so far (h, of profiles prof[0..i-1]) leave
 * the rest room to hold every unit, what the profiles from prof[i] on add
 * taken at its most (every instance of them, or the compute slices left at
 * the best rate per slice): an instance for each exclusive unit; the small
 * units' fill, count, SMs and each class's room, beyond what the exclusive
 * units take of them at least; Hall's condition. With i = np, every check
 * a whole bag gets but left_room().
 */
static int
bag_room(const struct bags *b, int i, int sl, const struct have *h)
{
	const struct bagrun *x = b->x;
	double left = b->gp.sufsl[0] - sl;   /* the compute slices left for prof[i..] */

	if (h->n + fmin(b->gp.restn[i], left * b->gp.perslice[3][i] + ROUNDING) < b->u.eunits ||
	    (double)h->fill + fmin((double)b->gp.restfill[i], left * b->gp.perslice[0][i] * (1 + ROUNDING)) <
	        (double)(b->u.minfill + b->u.smem) ||
	    h->most + fmin(b->gp.restmost[i], left * b->gp.perslice[1][i] + ROUNDING) < b->u.minmost + b->u.ns ||
	    h->sms + fmin(b->gp.restsms[i], left * b->gp.perslice[2][i] + ROUNDING) < b->u.minsms + b->u.sneed)
		return 0;
	for (int a = 0; a < x->nsm; a++) {
		long more = 0;
		double rate = 0;

		for (int t = i; t < b->gp.np; t++) {
			int p = b->gp.prof[t];

			more += (long)b->gp.maxc[p] * b->u.holds[a][p];
			if ((double)b->u.holds[a][p] / x->g->profiles[p].slices > rate)
				rate = (double)b->u.holds[a][p] / x->g->profiles[p].slices;
		}
		if (h->room[a] + fmin((double)more, left * rate + ROUNDING) < b->u.sc[a] + b->u.minroom[a])
			return 0;
	}
	for (int k = 0; k < b->u.nhall; k++) {
		int have = 0, more = 0, sl1 = INT_MAX;

		for (int t = 0; t < b->gp.np; t++) {
			int p = b->gp.prof[t];

			if (!(b->u.hl[k].mask >> p & 1))
				continue;
			if (t < i) {
				have += b->cur[p];
			} else {
				more += b->gp.maxc[p];
				sl1 = x->g->profiles[p].slices < sl1 ? x->g->profiles[p].slices : sl1;
			}
		}
		if (more && more > left / sl1 + ROUNDING)
			more = (int)(left / sl1 + ROUNDING);
		if (have + more < b->u.hl[k].units)
			return 0;
	}
	return 1;
}

/* The last profile p's least count: with the instances before it (h), it meets bag_room()'s monotone needs. */
static int
last_least(const struct bags *b, int p, const struct have *h)
{
	const struct bagrun *x = b->x;
	const struct mig_profile *pr = &x->g->profiles[p];
	long c = 0, need[3] = {b->u.minsms + b->u.sneed - h->sms, b->u.minmost + b->u.ns - h->most, 0}, per[3] = {pr->sms,
	    x->smost[p], 0};

	for (int k = 0; k < 2; k++)
		if (need[k] > 0 && per[k] > 0 && (need[k] + per[k] - 1) / per[k] > c)
			c = (need[k] + per[k] - 1) / per[k];
	if (h->fill < b->u.minfill + b->u.smem && x->fill[p] > 0 &&
	    (long)((b->u.minfill + b->u.smem - h->fill + x->fill[p] - 1) / x->fill[p]) > c)
		c = (long)((b->u.minfill + b->u.smem - h->fill + x->fill[p] - 1) / x->fill[p]);
	for (int a = 0; a < x->nsm; a++) {
		long short_of = b->u.sc[a] + b->u.minroom[a] - h->room[a];

		if (short_of <= 0)
			continue;
		if (b->u.holds[a][p] == 0)
			return INT_MAX;
		if ((short_of + b->u.holds[a][p] - 1) / b->u.holds[a][p] > c)
			c = (short_of + b->u.holds[a][p] - 1) / b->u.holds[a][p];
	}
	return c > INT_MAX ? INT_MAX : (int)c;
}

/* A bag that passed bag_room(): kept where left_room() holds too. */
static void
bag_keep(struct bags *b, uint64_t mem, int sms)
{
	struct bagrun *x = b->x;

	spend(x, (long)b->u.nhall * (4 + x->nsm) / 16 + 1);
	if (!left_room(b, b->cur))
		return;
	if (b->nc >= MAX_BAGS) {
		x->aborted = 1;
		return;
	}
	xgrow(&b->c, &b->ccap, b->nc + 1, sizeof *b->c);
	b->c[b->nc].mem = mem;
	b->c[b->nc].sms = sms;
	memcpy(b->c[b->nc].n, b->cur, sizeof b->cur);
	b->nc++;
}

/* The bags from profile prof[i] on, with memory mem, n instances and sl compute slices so far. */
static void
bag_enum(struct bags *b, int i, uint64_t mem, int n, int sl)
{
	struct bagrun *x = b->x;
	struct have h;
	int p;
	uint64_t pm;

	/* each node its work, kept or not */
	if (spend(x, 1))
		return;
	decided(b, i, &h);
	if (i > 0 && !bag_room(b, i, sl, &h))
		return;
	if (i == b->gp.np) {
		if (mem >= b->lo)
			bag_keep(b, mem, (int)h.sms);
		return;
	}
	p = b->gp.prof[i];
	pm = x->g->profiles[p].mem_bytes;
	for (int c = i + 1 == b->gp.np ? last_least(b, p, &h) : 0;
	    c <= b->gp.maxc[p] && n + c <= b->u.eunits + b->u.ns && !x->aborted; c++) {
		uint64_t m = mem + (uint64_t)c * pm;
		int l = sl + c * x->g->profiles[p].slices;

		/* more memory than the best plan allows, more compute slices than the GPUs have */
		if (m > b->hi || l > b->gp.sufsl[0])
			break;
		if (m + b->gp.restmem[i + 1] < b->lo)
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
	struct bagrun *x = b->x;
	const struct search *s = x->s;
	uint64_t key = 0;
	int *at, best = NO_ROW, brow = -1, me, sl = 0;

	for (int p = 0; p < x->np; p++) {
		if (rest[p] > b->gp.sufmax[j * MIG_MAX_PROFILES + p])
			return NO_ROW;
		key += (uint64_t)rest[p] << b->gp.pr.off[p];
		sl += rest[p] * x->g->profiles[p].slices;
	}
	if (sl > b->gp.sufsl[j])
		return NO_ROW;
	if (j == s->ngpus)
		return 0;
	at = mig_hm_get(&b->gp.memo, key, (uint64_t)j);
	if (*at >= 0)
		return b->gp.held[*at].ops;
	for (size_t r = 0; r < b->gp.nrows[j] && !x->aborted; r++) {
		const struct brow *w = &b->gp.rows[j][r];
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
	spend(x, (long)b->gp.nrows[j] / 8 + 1);
	if (x->aborted)
		return NO_ROW;
	xgrow(&b->gp.held, &b->gp.mcap, b->gp.nm + 1, sizeof *b->gp.held);
	me = (int)b->gp.nm++;
	b->gp.held[me] = (struct held){best, brow};
	/* the recursion may have grown the map: find the entry again */
	*mig_hm_get(&b->gp.memo, key, (uint64_t)j) = me;
	return best;
}

/* ----------------------------------------------------------------------------- the plan */

/* The plan of bag t into the search, offered: 1 where it was built with value want. */
static int
bag_plan(struct bags *b, const struct bagc *t, const struct mig_score *want)
{
	struct bagrun *x = b->x;
	const struct search *s = x->s;
	const struct geo *row[s->ngpus + 1];
	signed char (*role)[MIG_MAX_INST] = xcalloc((size_t)s->ngpus + 1, sizeof *role);
	unsigned char rest[MIG_MAX_PROFILES];
	int give[MAX_FIELDS][MIG_MAX_PROFILES], ok = 1;

	memcpy(rest, t->n, sizeof rest);
	memcpy(give, b->ebest, sizeof give);
	for (int j = 0; j < s->ngpus && ok; j++) {
		uint64_t key = 0;
		const int *at;
		const struct brow *w;

		for (int p = 0; p < x->np; p++)
			key += (uint64_t)rest[p] << b->gp.pr.off[p];
		at = mig_hm_find(&b->gp.memo, key, (uint64_t)j);
		if (!at || *at < 0 || b->gp.held[*at].row < 0) {
			ok = 0;
			break;
		}
		w = &b->gp.rows[j][b->gp.held[*at].row];
		row[j] = w->g;
		for (int i = 0; w->g && i < w->g->n; i++) {
			int p = s->sg[j].t->cand[w->g->cand[i]].profile, c;

			for (c = 0; c < x->ne && give[c][p] == 0; c++)
				;
			role[j][i] = (signed char)(c < x->ne ? c : -1);
			if (c < x->ne)
				give[c][p]--;
		}
		for (int p = 0; p < x->np; p++)
			rest[p] = (unsigned char)(rest[p] - w->n[p]);
	}
	if (ok)
		ok = mig_bag_offer(x, row, (const signed char (*)[MIG_MAX_INST])role, b->yprof, b->ycnt, b->ninst, want);
	free(role);
	return ok;
}

/*
 * The bags of the units b holds, tried in order of memory and SMs until
 * none could beat the best plan (x->first: until one is a plan): 0 done
 * (a better plan offered where one was found), -1 out of work. *found: set
 * where a bag gave a plan.
 */
int
mig_bags_try(struct bags *b, int *found)
{
	struct bagrun *x = b->x;
	int first = -1;

	bag_enum(b, 0, 0, 0, 0);
	if (!x->aborted && b->nc > 1)
		qsort(b->c, b->nc, sizeof *b->c, bag_cmp);
	spend(x, (long)b->nc / 4 + 1);
	for (size_t i = 0; i < b->nc && !x->aborted; i++) {
		const struct bagc *t = &b->c[i];
		uint64_t w = t->mem - b->u.P;
		int ops, r;
		struct mig_score want;

		if (first >= 0 && (w != x->inc.waste || t->sms != x->inc.sms))
			break;
		if (no_better(x, w, t->sms, 0))
			break;
		b->at_mem = t->mem;
		b->at_sms = t->sms;
		memcpy(b->avail, t->n, sizeof b->avail);
		memset(b->e, 0, sizeof b->e);
		r = mig_bags_exclusive(b, 0, 0, x->ne ? b->u.ec[0] : 0);
		if (r < 0)
			break;
		if (r == 0)
			continue;
		ops = hold(b, 0, t->n);
		if (ops == NO_ROW || no_better(x, w, t->sms, ops))
			continue;
		/* its plan now: a later bag of the same value and fewer operations replaces it */
		want = (struct mig_score){x->S, w, t->sms, ops};
		if (!bag_plan(b, t, &want)) {
			/* not built (none should fail): no proof */
			x->aborted = 1;
			break;
		}
		x->inc = want;
		first = (int)i;
		*found = 1;
		if (x->first)
			break;
	}
	return x->aborted ? -1 : 0;
}

