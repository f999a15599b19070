/*
 * mig_bagpack: a bag's instances given every unit (doc/mig.md, "How it
 * works"): each exclusive unit alone in an instance it fits, every way
 * until one works, a way dropped as soon as what is left cannot hold the
 * small units; the small units packed into the other instances by a DP
 * over them, least memory first, whose waste of memory and of SMs the
 * slacks bound.
 */
#include "share/mig.h"
#include "share/mig_bag.h"
#include "util/str.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A state of the packing: the small units left (plain), from which state of the layer before, with what content. */
struct pst {
	uint64_t r, c;
	int parent;
};

/*
 * Whether instances n[] (per profile), less less[a] of each small class's
 * room (what exclusive units take of it at least), hold, class by class,
 * as many units as each small class has.
 */
static int
class_room(const struct bags *b, const unsigned char *n, const long *less)
{
	const struct bagrun *x = b->x;

	for (int a = 0; a < x->nsm; a++) {
		long room = 0, need = b->u.sc[a] + (less ? less[a] : 0);

		for (int i = 0; i < b->gp.np && room < need; i++)
			room += (long)n[b->gp.prof[i]] * b->u.holds[a][b->gp.prof[i]];
		if (room < need)
			return 0;
	}
	return 1;
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
 * The SMs likewise: a packing of all of them leaves exactly the SMs of Y
 * less what their shares need, so an instance's content may leave no more
 * of its SMs than the instances before it left of that (where shares make
 * the SMs the scarce resource, this is what rules most contents out).
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
	long lower_sms;               /* the least SMs its content's shares need */
};

/*
 * Contents of the instance from class sorder[i] on, c so far (plain), mem
 * and need its memory and SMs, restmem and restneed those of the units of
 * the classes from sorder[i] on still to place.
 */
static void
contents(struct pk *k, int i, uint64_t c, uint64_t mem, int need, uint64_t restmem, long restneed)
{
	struct bagrun *x = k->b->x;
	int a, have;

	if (x->aborted || mem + restmem < k->lower || need + restneed < k->lower_sms)
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
	restneed -= (long)have * x->sneed[a];
	for (int n = have; n >= 0; n--) {
		uint64_t m = mem + (uint64_t)n * x->smem[a];
		int nd = need + n * x->sneed[a];

		if (m > k->pm || nd > k->ps)
			continue;
		contents(k, i + 1, c + (uint64_t)n * x->psm.one[a], m, nd, restmem, restneed);
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
	struct bagrun *x = b->x;
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
	struct bagrun *x = b->x;
	int inst[MIG_MAX_INST * 64], m = 0, ret = 0;
	uint64_t full = 0, slack = ymem - b->u.smem, before = 0, lfill[MIG_MAX_INST * 64 + 1] = {0};
	uint64_t lminw[MIG_MAX_INST * 64 + 1] = {0};
	long lmost[MIG_MAX_INST * 64 + 1] = {0}, lsms[MIG_MAX_INST * 64 + 1] = {0}, smslack, sbefore = 0;
	struct pst *prev = NULL;
	size_t nprev = 0;
	struct pst **lay;

	/* least memory first: the last instance, the largest, then takes what is left, one check */
	for (int i = b->gp.np - 1; i >= 0; i--)
		for (int n = 0; n < b->avail[b->gp.prof[i]]; n++)
			inst[m++] = b->gp.prof[i];
	for (int a = 0; a < x->nsm; a++)
		full += (uint64_t)b->u.sc[a] * x->psm.one[a];
	/* what the instances from t on hold at most: memory, units, SMs; and waste at least */
	for (int t = m - 1; t >= 0; t--) {
		lfill[t] = lfill[t + 1] + x->fill[inst[t]];
		lminw[t] = lminw[t + 1] + (x->g->profiles[inst[t]].mem_bytes - x->fill[inst[t]]);
		lmost[t] = lmost[t + 1] + x->smost[inst[t]];
		lsms[t] = lsms[t + 1] + x->g->profiles[inst[t]].sms;
	}
	smslack = lsms[0] - b->u.sneed;
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
			wasted = before - (b->u.smem - left);
			if (wasted + lminw[t] > slack || left > lfill[t] || units > lmost[t] || need > lsms[t])
				continue;
			k.r = prev[i].r;
			k.parent = (int)i;
			/* what this one may waste: the slack less what the others before wasted and those after must */
			k.lower = k.pm > slack - wasted - lminw[t + 1] ? k.pm - (slack - wasted - lminw[t + 1]) : 0;
			/* and what is left after it, the later instances hold */
			if (left > lfill[t + 1] && left - lfill[t + 1] > k.lower)
				k.lower = left - lfill[t + 1];
			/* its SMs left over: no more than the SM slack less what the instances before left over */
			k.lower_sms = k.ps - (smslack - (sbefore - (b->u.sneed - need)));
			contents(&k, 0, 0, 0, 0, left, need);
		}
		spend(x, (long)nprev / 4 + 1);
		if (!x->aborted)
			dominated(b, &k);
		mig_hm_free(&k.h);
		before += k.pm;
		sbefore += k.ps;
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
	struct bagrun *x = b->x;
	uint64_t y = 0, fill = 0, ymem = 0;
	long ysms = 0, most = 0;
	int n = 0, *seen, r;

	for (int p = 0; p < x->np; p++) {
		if (!b->avail[p])
			continue;
		y += (uint64_t)b->avail[p] << b->gp.pr.off[p];
		fill += (uint64_t)b->avail[p] * x->fill[p];
		most += (long)b->avail[p] * x->smost[p];
		ysms += (long)b->avail[p] * x->g->profiles[p].sms;
		ymem += (uint64_t)b->avail[p] * x->g->profiles[p].mem_bytes;
		n += b->avail[p];
	}
	if (n > b->u.ns || fill < b->u.smem || most < b->u.ns || ysms < b->u.sneed || n > MIG_MAX_INST * 64 ||
	    !class_room(b, b->avail, NULL))
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
int
mig_bags_exclusive(struct bags *b, int c, int q, int left)
{
	struct bagrun *x = b->x;
	uint64_t fill = 0, take = 0;
	long sms = 0, tsms = 0, room[MAX_FIELDS];
	int r;

	if (spend(x, 1))
		return -1;
	if (c == x->ne)
		return packs(b);
	if (left == 0)
		return mig_bags_exclusive(b, c + 1, 0, c + 1 < x->ne ? b->u.ec[c + 1] : 0);
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
		int n = d == c ? left : b->u.ec[d], h[MAX_FIELDS];

		if (!n)
			continue;
		for (int a = 0; a < x->nsm; a++)
			h[a] = INT_MAX;
		for (int p = d == c ? q : 0; p < x->np; p++)
			if (b->u.efit[d] >> p & 1 && b->avail[p]) {
				f = x->fill[p] < f ? x->fill[p] : f;
				m = x->g->profiles[p].sms < m ? x->g->profiles[p].sms : m;
				for (int a = 0; a < x->nsm; a++)
					h[a] = b->u.holds[a][p] < h[a] ? b->u.holds[a][p] : h[a];
			}
		if (m == LONG_MAX)
			return 0;
		take += (uint64_t)n * f;
		tsms += (long)n * m;
		for (int a = 0; a < x->nsm; a++)
			room[a] += (long)n * h[a];
	}
	if (fill < take || fill - take < b->u.smem || sms - tsms < b->u.sneed || !class_room(b, b->avail, room))
		return 0;
	for (; q < x->np && !(b->u.efit[c] >> q & 1 && b->avail[q]); q++)
		;
	if (q == x->np)
		return 0;
	for (int n = left < b->avail[q] ? left : b->avail[q]; n >= 0; n--) {
		b->e[c][q] = n;
		b->avail[q] = (unsigned char)(b->avail[q] - n);
		r = mig_bags_exclusive(b, c, q + 1, left - n);
		b->avail[q] = (unsigned char)(b->avail[q] + n);
		b->e[c][q] = 0;
		if (r != 0)
			return r;
	}
	return 0;
}

