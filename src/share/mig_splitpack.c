/*
 * mig_splitpack: the split DP's inner DP (mig_split.c): the small units
 * packed into a multiset Y of shared instances. Each profile's fullest
 * contents (a knapsack on memory and SMs, counts within each class's);
 * for each Y, the most-filled vectors of small units its instances hold,
 * built from the set of Y less one instance (kept per Y: the candidates
 * share most of their instances); the most memory c of them take. And the
 * plan of a last-layer state, rebuilt from its options and its packing.
 */
#include "share/mig.h"
#include "share/mig_split.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------------- a shared instance's contents */

/* Every vector of small units one instance of p holds (memory and SMs), from class i on. */
static void
contents_from(struct split *x, int p, int i, uint64_t v, uint64_t mem, int need, uint64_t **out, size_t *n,
    size_t *cap)
{
	const struct mig_profile *pr = &x->g->profiles[p];

	if (x->aborted)
		return;
	if (i == x->nsm) {
		/* only the fullest: one more unit of some class would not fit or pass its count */
		for (int a = 0; a < x->nsm; a++)
			if (pk_get(&x->psm, v, a) < x->psm.cap[a] && mem + x->smem[a] <= pr->mem_bytes &&
			    need + x->sneed[a] <= pr->sms)
				return;
		if (*n >= MAX_CONTENTS) {
			x->aborted = 1;
			return;
		}
		xgrow(out, cap, *n + 1, sizeof **out);
		(*out)[(*n)++] = v;
		return;
	}
	for (int c = 0; c <= x->psm.cap[i]; c++) {
		uint64_t m = mem + (uint64_t)c * x->smem[i];
		int nd = need + c * x->sneed[i];

		if (m > pr->mem_bytes || nd > pr->sms)
			break;
		contents_from(x, p, i + 1, v + (uint64_t)c * x->psm.one[i], m, nd, out, n, cap);
	}
}

/*
 * Each profile's fullest contents (x->cont), and the most small memory
 * and units one shared instance of it holds.
 */
void
mig_split_limits(struct split *x)
{
	for (int p = 0; p < x->np && !x->aborted; p++) {
		size_t cap = 0;

		contents_from(x, p, 0, 0, 0, 0, &x->cont[p], &x->ncont[p], &cap);
		spend(x, (long)x->ncont[p] + 1);
		for (size_t o = 0; o < x->ncont[p]; o++) {
			uint64_t m = 0;
			int u = 0;

			for (int a = 0; a < x->nsm; a++) {
				m += (uint64_t)pk_get(&x->psm, x->cont[p][o], a) * x->smem[a];
				u += pk_get(&x->psm, x->cont[p][o], a);
			}
			if (m > x->fill[p])
				x->fill[p] = m;
			if (u > x->smost[p])
				x->smost[p] = u;
		}
	}
}

/* ------------------------------------------------------------------------------ the inner DP */

/* The set of Y (plain), built from its parent's; its index, -1 out of work. */
static int
rset_of(struct split *x, uint64_t y)
{
	const int *have = mig_hm_find(&x->rmap, y, 0);
	int p, parent, me;
	struct hmap seen;
	size_t at;

	if (have)
		return *have;
	if (y == 0) {
		xgrow(&x->rs, &x->rscap, x->nrs + 1, sizeof *x->rs);
		xgrow(&x->vec, &x->veccap, x->nvec + 1, sizeof *x->vec);
		xgrow(&x->from, &x->fromcap, x->nvec + 1, sizeof *x->from);
		xgrow(&x->via, &x->viacap, x->nvec + 1, sizeof *x->via);
		x->vec[x->nvec] = x->psm.bias;
		x->from[x->nvec] = x->via[x->nvec] = -1;
		x->rs[x->nrs] = (struct rset){0, -1, -1, x->nvec, 1};
		x->nvec++;
		*mig_hm_get(&x->rmap, 0, 0) = (int)x->nrs;
		return (int)x->nrs++;
	}
	/*
	 * the instance added last: of the profile with the fewest contents,
	 * so that the many contents of a large one meet a small set
	 */
	p = -1;
	for (int q = 0; q < x->np; q++)
		if (pk_get(&x->pyk, y, q) && (p < 0 || x->ncont[q] < x->ncont[p]))
			p = q;
	parent = rset_of(x, y - x->pyk.one[p]);
	if (parent < 0 || x->aborted)
		return -1;
	mig_hm_init(&seen, x->rs[parent].n * 4, 1);
	at = x->nvec;
	for (size_t a = 0; a < x->rs[parent].n; a++) {
		uint64_t u = x->vec[x->rs[parent].at + a];

		for (size_t o = 0; o < x->ncont[p]; o++) {
			uint64_t v = pk_add_sat(&x->psm, u, x->cont[p][o]);
			int *slot = mig_hm_get(&seen, v, 0);

			if (*slot >= 0)
				continue;
			*slot = (int)x->nvec;
			xgrow(&x->vec, &x->veccap, x->nvec + 1, sizeof *x->vec);
			xgrow(&x->from, &x->fromcap, x->nvec + 1, sizeof *x->from);
			xgrow(&x->via, &x->viacap, x->nvec + 1, sizeof *x->via);
			x->vec[x->nvec] = v;
			x->from[x->nvec] = (int)(x->rs[parent].at + a);
			x->via[x->nvec] = (int)o;
			x->nvec++;
		}
		if (spend(x, (long)x->ncont[p] / 4 + 1))
			break;
	}
	/* only the fullest: a vector with one unit more of some class in the set goes */
	{
		size_t w = at;

		for (size_t i = at; i < x->nvec; i++) {
			uint64_t v = x->vec[i];
			int dom = 0;

			for (int a = 0; a < x->nsm && !dom; a++) {
				uint64_t u = v + x->psm.one[a];

				dom = !(u & x->psm.guard) && mig_hm_find(&seen, u, 0);
			}
			if (dom)
				continue;
			x->vec[w] = x->vec[i];
			x->from[w] = x->from[i];
			x->via[w] = x->via[i];
			w++;
		}
		spend(x, (long)(x->nvec - at) * x->nsm / 16 + 1);
		x->nvec = w;
	}
	mig_hm_free(&seen);
	if (x->aborted)
		return -1;
	xgrow(&x->rs, &x->rscap, x->nrs + 1, sizeof *x->rs);
	me = (int)x->nrs++;
	x->rs[me] = (struct rset){y, parent, p, at, x->nvec - at};
	*mig_hm_get(&x->rmap, y, 0) = me;
	return me;
}

/* The memory of the c largest units of biased vector v (-1: fewer than c). */
static int64_t
top_mem(const struct split *x, uint64_t v, int c, int *take)
{
	int64_t m = 0;

	for (int i = 0; i < x->nsm; i++) {
		int a = x->sorder[i], n = pk_count(&x->psm, v, a);

		if (n > c)
			n = c;
		c -= n;
		m += (int64_t)n * (int64_t)x->smem[a];
		if (take)
			take[a] = n;
	}
	return c > 0 ? -1 : m;
}

/* The most small memory c units packed into Y take (-1: none fit; -2: out of work); *best its vector. */
int64_t
mig_split_most_packed(struct split *x, uint64_t y, int c, size_t *best)
{
	int r = rset_of(x, y);
	int64_t most = -1;

	if (r < 0)
		return -2;
	for (size_t i = 0; i < x->rs[r].n; i++) {
		int64_t m = top_mem(x, x->vec[x->rs[r].at + i], c, NULL);

		if (m > most) {
			most = m;
			*best = x->rs[r].at + i;
		}
	}
	spend(x, (long)x->rs[r].n * x->nsm / 16 + 1);
	return most;
}

/* ----------------------------------------------------------------------------- the plan */

/*
 * The loads of options o[j] (one per GPU) into s->cur, their shared
 * instances given the contents cnt[] (plain small vectors) of profiles
 * prof[], ninst of them, in order per profile; offered: 1 offered as the
 * better plan with value want, 0 not (a content missing).
 */
int
mig_split_loads(struct split *x, const struct opt *const *o, const int *prof, const uint64_t *cnt, int ninst,
    const struct mig_score *want)
{
	struct search *s = x->s;
	int left[s->nk + 1], next[MIG_MAX_PROFILES], ok = 1;

	for (int k = 0; k < s->nk; k++)
		left[k] = s->k[k].n;
	for (int p = 0; p < MIG_MAX_PROFILES; p++)
		next[p] = 0;
	for (int j = 0; j < s->ngpus && ok; j++) {
		struct load *ld = &s->cur[j];

		ld->x = o[j]->x;
		ld->nslots = o[j]->x ? o[j]->x->n : 0;
		for (int i = 0; i < ld->nslots; i++) {
			struct slot *sl = &ld->slot[i];
			int p = s->sg[j].t->cand[o[j]->x->cand[i]].profile;

			sl->profile = p;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			sl->big = -1;
			if (o[j]->role[i] != SHARED) {
				int k = x->ecls[o[j]->role[i]];

				sl->big = k;
				sl->nunits = 1;
				sl->mem = s->sg[j].mem[k];
				sl->need = s->sg[j].need[k];
				left[k]--;
				continue;
			}
			/* the next content for profile p */
			while (next[p] < ninst && prof[next[p]] != p)
				next[p]++;
			if (next[p] == ninst) {
				ok = 0;
				break;
			}
			for (int a = 0; a < x->nsm; a++) {
				int n = pk_get(&x->psm, cnt[next[p]], a), k = x->scls[a];

				sl->cnt[k] = n;
				sl->nunits += n;
				sl->mem += (uint64_t)n * s->sg[j].mem[k];
				sl->need += n * s->sg[j].need[k];
				left[k] -= n;
			}
			next[p]++;
		}
	}
	if (!ok)
		return 0;
	mig_search_offer_any(s, left);
	return s->bs.satisfied == want->satisfied && s->bs.waste == want->waste && s->bs.sms == want->sms &&
	    s->bs.ops == want->ops;
}

/*
 * The plan of last-layer state `at` (its packing: vector `vi` of its Y's
 * set, c units) into s->cur, offered: 1 offered as the better plan, 0 not
 * built (an instance left empty, or the score not the state's).
 */
int
mig_split_plan(struct split *x, struct slayer *ly, struct ost *os, int at, size_t vi, int c, const struct mig_score *want)
{
	struct search *s = x->s;
	const struct sst *st = &ly[s->ngpus].st[at];
	int take[MAX_FIELDS], have[MAX_FIELDS] = {0}, ok = 1;
	uint64_t *cnt;                /* per instance of Y: its content (plain), then trimmed */
	int *prof, ninst = 0, r;
	const struct opt *o[s->ngpus + 1];
	const int *set = mig_hm_find(&x->rmap, st->y, 0);

	top_mem(x, x->vec[vi], c, take);
	for (int j = s->ngpus - 1, a = at; j >= 0; j--) {
		o[j] = &os[j].o[ly[j + 1].st[a].opt];
		a = ly[j + 1].st[a].prev;
	}
	if (!set)
		return 0;
	r = *set;
	cnt = xcalloc(MIG_MAX_INST * (size_t)s->ngpus + 1, sizeof *cnt);
	prof = xcalloc(MIG_MAX_INST * (size_t)s->ngpus + 1, sizeof *prof);
	/* back through the sets: one content per instance of Y */
	for (long v = (long)vi; r >= 0 && x->rs[r].parent >= 0; r = x->rs[r].parent) {
		prof[ninst] = x->rs[r].prof;
		cnt[ninst++] = x->cont[x->rs[r].prof][x->via[v]];
		v = x->from[v];
	}
	/* units past what the state takes come out (the saturated adds, the c largest) */
	for (int i = 0; i < ninst; i++)
		for (int a = 0; a < x->nsm; a++)
			have[a] += pk_get(&x->psm, cnt[i], a);
	for (int a = 0; a < x->nsm; a++)
		for (int i = 0; i < ninst && have[a] > take[a]; i++) {
			int n = pk_get(&x->psm, cnt[i], a), out = have[a] - take[a] < n ? have[a] - take[a] : n;

			cnt[i] -= (uint64_t)out * x->psm.one[a];
			have[a] -= out;
		}
	for (int i = 0; i < ninst; i++)
		ok = ok && cnt[i] != 0;
	if (ok)
		ok = mig_split_loads(x, o, prof, cnt, ninst, want);
	free(cnt);
	free(prof);
	return ok;
}
