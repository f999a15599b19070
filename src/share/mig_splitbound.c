/*
 * mig_splitbound: the split DP's bounds (mig_split.c): a state's own (what
 * its shared instances cannot fill), and the table of completions (what
 * the GPUs still to come add, by exclusive units and shared memory) that
 * cuts a layer's states none of whose completions beats the best plan.
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

/* ---------------------------------------------------------------------------- the completions */

/*
 * What GPUs j.. can still add, as a table by the exclusive units they
 * place (any classes: a relaxation) and the memory of their shared
 * instances (in steps of dq, the profiles' gcd): the least exclusive waste
 * of such options, held as suffix minima over the memory (sw), and of it
 * plus the memory (sv). A state with e exclusive units placed, shared
 * memory ymem of which its instances can hold yfill: a plan through it
 * with de more exclusive units places c = S - |e| - de small units, which
 * need shared memory of at least Pmin(c) in all and take at most Pmax(c)
 * of it, so it wastes at least its w plus, over the completions adding
 * dT >= Pmin(c) - ymem, the larger of
 *
 *   dw + (ymem - yfill)            and      dw + ymem + dT - Pmax(c);
 *
 * the least over dT of each is a suffix minimum (cut()).
 */
/* An option as the completions see it: its exclusive units and shared memory, the least waste, SMs, operations. */
struct proj {
	int eu;
	uint64_t q, w;
	int sms, ops;
};

static size_t
project(struct split *x, const struct ost *os, uint64_t dq, struct proj **out)
{
	struct hmap h;
	size_t n = 0, cap = 0;

	mig_hm_init(&h, os->n, 2);
	for (size_t i = 0; i < os->n; i++) {
		const struct opt *o = &os->o[i];
		int *at = mig_hm_get(&h, (uint64_t)o->eu, o->ymem / dq);
		struct proj *p;

		if (*at < 0) {
			xgrow(out, &cap, n + 1, sizeof **out);
			*at = (int)n;
			(*out)[n++] = (struct proj){o->eu, o->ymem / dq, o->w, o->sms, o->ops};
			continue;
		}
		p = &(*out)[*at];
		if (o->w < p->w)
			p->w = o->w;
		if (o->sms < p->sms)
			p->sms = o->sms;
		if (o->ops < p->ops)
			p->ops = o->ops;
	}
	mig_hm_free(&h);
	spend(x, (long)os->n / 8 + 1);
	return n;
}

void
mig_split_completions(struct split *x, const struct ost *os)
{
	const struct search *s = x->s;
	uint64_t dq = 0, tmax = x->pmax[x->ns] + x->inc.waste, *cur, *nxt;
	int maxe = 0, nt, *cm, *nm, *co, *no;
	size_t cells, *ci, *ni, nci = 0, nni;
	long start = x->work;

	for (int p = 0; p < x->np; p++)
		dq = mig_gcd64(dq, x->g->profiles[p].mem_bytes);
	if (!dq)
		return;
	x->exact = 1;
	/* coarser steps where the table would be large: a step then stands for what lies under it */
	while (tmax / dq + 1 > CT_STEPS || ((uint64_t)x->S + 1) * (tmax / dq + 1) > CT_CELLS) {
		dq *= 2;
		x->exact = 0;
	}
	nt = (int)(tmax / dq) + 1;
	cells = ((size_t)x->S + 1) * (size_t)nt;
	x->dq = dq;
	x->ct = xcalloc((size_t)s->ngpus + 1, sizeof *x->ct);
	cur = xcalloc(cells, sizeof *cur);
	nxt = xcalloc(cells, sizeof *nxt);
	cm = xcalloc(cells, sizeof *cm);
	nm = xcalloc(cells, sizeof *nm);
	co = xcalloc(cells, sizeof *co);
	no = xcalloc(cells, sizeof *no);
	ci = xcalloc(cells, sizeof *ci);
	ni = xcalloc(cells, sizeof *ni);
	for (size_t i = 0; i < cells; i++) {
		cur[i] = nxt[i] = CT_NONE;
		cm[i] = co[i] = nm[i] = no[i] = INT32_MAX;
	}
	spend(x, (long)(cells / 16) + 1);
	cur[0] = 0;
	cm[0] = co[0] = 0;
	ci[nci++] = 0;
	for (int j = s->ngpus; j >= 0 && !x->aborted; j--) {
		struct ctab *t = &x->ct[j];
		struct proj *pj = NULL;
		size_t npj = 0;

		if (j < s->ngpus) {
			/* nxt = cur (GPUs j+1..) plus one of GPU j's options, over the cells that hold something */
			int top = 0;

			npj = project(x, &os[j], dq, &pj);
			nni = 0;
			for (size_t a = 0; a < nci; a++) {
				size_t c = ci[a];
				int e = (int)(c / (size_t)nt), q = (int)(c % (size_t)nt);
				uint64_t w = cur[c];
				int m = cm[c], op = co[c];

				for (size_t i = 0; i < npj; i++) {
					const struct proj *o = &pj[i];
					int ne = e + o->eu;
					uint64_t nq = (uint64_t)q + o->q, nw = w + o->w;
					size_t at;

					if (ne > x->S || nq >= (uint64_t)nt || nw > x->inc.waste)
						continue;
					at = (size_t)ne * (size_t)nt + nq;
					if (nxt[at] == CT_NONE)
						ni[nni++] = at;
					if (nw < nxt[at])
						nxt[at] = nw;
					if (m + o->sms < nm[at])
						nm[at] = m + o->sms;
					if (op + o->ops < no[at])
						no[at] = op + o->ops;
					if (ne > top)
						top = ne;
				}
			}
			spend(x, (long)(nci * npj) / 16 + 1);
			/* a table this dear goes with layers past what the run can finish: give up */
			if (x->work - start > (x->limit - start) / CT_SHARE)
				x->aborted = 1;
			free(pj);
			/* cur = nxt, nxt emptied */
			for (size_t a = 0; a < nci; a++) {
				cur[ci[a]] = CT_NONE;
				cm[ci[a]] = co[ci[a]] = INT32_MAX;
			}
			for (size_t a = 0; a < nni; a++) {
				size_t c = ni[a];

				cur[c] = nxt[c];
				cm[c] = nm[c];
				co[c] = no[c];
				nxt[c] = CT_NONE;
				nm[c] = no[c] = INT32_MAX;
			}
			memcpy(ci, ni, sizeof *ci * nni);
			nci = nni;
			maxe = top;
		}
		t->maxe = maxe;
		t->nt = nt;
		t->sw = xcalloc(((size_t)maxe + 1) * (size_t)nt, sizeof *t->sw);
		t->sv = xcalloc(((size_t)maxe + 1) * (size_t)nt, sizeof *t->sv);
		t->sm = xcalloc(((size_t)maxe + 1) * (size_t)nt, sizeof *t->sm);
		t->so = xcalloc(((size_t)maxe + 1) * (size_t)nt, sizeof *t->so);
		for (int e = 0; e <= maxe; e++) {
			uint64_t bw = CT_NONE, bv = CT_NONE;
			int bm = INT32_MAX, bo = INT32_MAX;

			for (int q = nt - 1; q >= 0; q--) {
				size_t at = (size_t)e * (size_t)nt + (size_t)q;
				uint64_t w = cur[at];

				if (w != CT_NONE) {
					if (w < bw)
						bw = w;
					if (w + (uint64_t)q * dq < bv)
						bv = w + (uint64_t)q * dq;
					if (cm[at] < bm)
						bm = cm[at];
					if (co[at] < bo)
						bo = co[at];
				}
				t->sw[at] = bw == CT_NONE ? CT_NO : (uint32_t)(bw >> 20);
				t->sv[at] = bv == CT_NONE ? CT_NO : (uint32_t)(bv >> 20);
				t->sm[at] = (uint16_t)(bm > UINT16_MAX ? UINT16_MAX : bm);
				t->so[at] = (uint16_t)(bo > UINT16_MAX ? UINT16_MAX : bo);
			}
		}
		spend(x, (long)((size_t)(maxe + 1) * (size_t)nt / 32) + 1);
	}
	free(cur);
	free(nxt);
	free(cm);
	free(nm);
	free(co);
	free(no);
	free(ci);
	free(ni);
}

/*
 * The least waste of a plan through st (GPUs 0..j-1 chosen) by the
 * completions table (above); UINT64_MAX: none completes it.
 */
static uint64_t
completion_bound(const struct split *x, const struct sst *st, int j, int *sms, int *ops)
{
	const struct ctab *t = &x->ct[j];
	uint64_t best = UINT64_MAX, own = st->ymem > st->yfill ? st->ymem - st->yfill : 0;
	int left = 0, bm = INT32_MAX, bo = INT32_MAX;

	for (int i = 0; i < x->ne; i++)
		left += x->pe.cap[i] - pk_count(&x->pe, st->e, i);
	for (int de = 0; de <= t->maxe && de <= left; de++) {
		int c = x->S - st->eu - de;
		uint64_t pmin, need, a, b, v;
		size_t q;

		if (c < 0)
			break;
		if (c > x->ns)
			continue;
		/* the c smallest small units' memory: all of it less the ns - c largest */
		pmin = x->pmax[x->ns] - x->pmax[x->ns - c];
		need = pmin > st->ymem ? pmin - st->ymem : 0;
		q = (size_t)((need + x->dq - 1) / x->dq);
		/*
		 * with coarser steps an option's memory was rounded down: what
		 * GPUs j.. add lies up to a step per GPU above their entry
		 */
		if (!x->exact)
			q = q > (size_t)(x->s->ngpus - j) ? q - (size_t)(x->s->ngpus - j) : 0;
		if (q >= (size_t)t->nt)
			continue;
		if (t->sw[(size_t)de * (size_t)t->nt + q] == CT_NO)
			continue;
		a = (uint64_t)t->sw[(size_t)de * (size_t)t->nt + q] << 20;
		b = (uint64_t)t->sv[(size_t)de * (size_t)t->nt + q] << 20;
		v = a + own;
		if (b + st->ymem > x->pmax[c] && b + st->ymem - x->pmax[c] > v)
			v = b + st->ymem - x->pmax[c];
		if (v < best)
			best = v;
		if (t->sm[(size_t)de * (size_t)t->nt + q] < bm)
			bm = t->sm[(size_t)de * (size_t)t->nt + q];
		if (t->so[(size_t)de * (size_t)t->nt + q] < bo)
			bo = t->so[(size_t)de * (size_t)t->nt + q];
	}
	*sms = st->sms + (bm == INT32_MAX ? 0 : bm);
	*ops = st->ops + (bo == INT32_MAX ? 0 : bo);
	return best == UINT64_MAX ? best : st->w + best;
}

/* Drops the states of layer l (GPUs 0..j-1 chosen) whose completions are no better than the best plan; compacts l. */
void
mig_split_cut(struct split *x, struct slayer *l, int j)
{
	size_t w = 0;

	if (!x->ct)
		return;
	for (size_t i = 0; i < l->n; i++) {
		int sms, ops;
		uint64_t b = completion_bound(x, &l->st[i], j, &sms, &ops);

		if (b != UINT64_MAX && !no_better(x, b, sms, ops))
			l->st[w++] = l->st[i];
	}
	spend(x, (long)l->n * (x->ct[j].maxe + 1) / 8 + 1);
#ifdef MIG_TRACE
	fprintf(stderr, "split: cut %d: %zu of %zu kept\n", j, w, l->n);
#endif
	l->n = w;
}

/*
 * The bound of the waste of a plan through state st (GPUs 0..j-1 chosen):
 * its exclusive waste and what its shared instances cannot fill (no more
 * than each at its fullest, the c largest small units, those whose shares
 * fit their SMs); what is still to come adds at least nothing.
 */
uint64_t
mig_split_lb(const struct split *x, const struct sst *st)
{
	int c = x->S - st->eu;
	uint64_t hold;

	if (c > x->ns)
		c = x->ns;
	if (c < 0)
		c = 0;
	hold = x->pmax[c];
	if (st->yfill < hold)
		hold = st->yfill;
	if (x->pmaxu) {
		uint64_t h = x->pmaxu[(size_t)c * ((size_t)x->umax + 1) + (size_t)(st->ysms < x->umax ? st->ysms : x->umax)];

		if (h < hold)
			hold = h;
	}
	return st->w + (st->ymem > hold ? st->ymem - hold : 0);
}

