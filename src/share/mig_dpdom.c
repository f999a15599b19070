/*
 * mig_dpdom: dominance between the states of one layer of the DP over the
 * GPUs (mig_dp.c; doc/mig.md, "The DP over the GPUs"): a state goes when
 * another state of its layer, which placed one unit more, matches every
 * plan through it with one no worse. One hash lookup per state and class.
 * Exact.
 *
 * A layer holds states u, v with GPUs 0..j-1 done; a completion w of v is
 * what GPUs j.. place (valid loads, within each class's count) so that v
 * plus w places exactly S units, the proven most (the DP runs only once
 * level 1 is proven: d->maxed). val() is (waste, SMs, operations),
 * compared in the objective's order; a completion's cost adds to it.
 *
 * Take u = v + e_a, one more unit of class a placed. Every completion w of
 * v places all the n_a - v_a units of a that v left: otherwise u plus w
 * would be a plan of S + 1 units. So w less one unit of a completes u.
 * Taking a unit out of its instance leaves the instance (the row, SMs and
 * operations) as it was and adds the unit's memory to the waste where it
 * shares the instance with others; where it is alone there, the instance
 * goes too (a sub-row of a row is a row of the table): less waste and
 * strictly fewer SMs, so no worse in that order whatever the operations.
 * So the cost grows by at most (E_a, 0, 0), E_a the largest memory of a on
 * the GPUs j.. where it is small (0 where it never shares; a named profile
 * never does). When val(u) + (E_a, 0, 0) <= val(v), every plan through v
 * is matched by one through u no worse, and v can go: a plan strictly
 * better than the best one known through v gives one through u that no
 * bound may drop either. Along a chain of drops the units placed grow, so
 * it ends at a state kept. The states are compared against the whole
 * layer, then compacted; the next layer is built after, so its prev
 * indices are right, and this layer's own point into the layer before,
 * untouched.
 *
 * The same holds for u = v + x (the cost sum x_k E_k: min(w, left of u)
 * completes u, so w exceeds what u left by |x| units, at most x_k of each
 * class, hence places all of v's left where x_k > 0), and for a unit
 * swapped for a class that can sit wherever it does (u = v + e_a - e_b);
 * both were measured: more lookups than states they drop (doc/mig.md).
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>

long mig_dp_dom_dropped;

/* Is u's value plus (dw, 0, 0) no worse than v's, in the objective's order? */
static int
covers(const struct state *u, uint64_t dw, const struct state *v)
{
	uint64_t w = u->waste + dw;

	if (w != v->waste)
		return w < v->waste;
	if (u->sms != v->sms)
		return u->sms < v->sms;
	return u->ops <= v->ops;
}

/*
 * Drops the states of layer l (GPUs 0..j-1 done; h its keys' indices)
 * that another state of it, with one unit more, covers; compacts it.
 */
void
mig_dp_dominate(struct dp *d, struct layer *l, const struct hmap *h, int j)
{
	const struct search *s = d->s;
	int nk = s->nk;
	uint64_t *one, *cost;
	unsigned char *gone;
	size_t n = 0;

	if (!d->maxed || l->n < 2 || j >= s->ngpus)
		return;
	one = xcalloc(2 * (size_t)nk + 1, sizeof *one);
	cost = one + nk;
	for (int k = 0; k < nk; k++) {
		one[k] = (uint64_t)1 << d->vc.off[k];
		for (int g = j; g < s->ngpus; g++)
			if (s->sg[g].small[k] && s->sg[g].mem[k] > cost[k])
				cost[k] = s->sg[g].mem[k];
	}
	gone = xcalloc(l->n + 1, 1);
	for (size_t i = 0; i < l->n && !d->aborted; i++) {
		const struct state *v = &l->st[i];
		long looks = 0;

		for (int a = 0; a < nk && !gone[i]; a++) {
			const int *at;

			/* u = v + e_a: v left a unit of a */
			if (mig_dp_field(&d->vc, v->key, a) == (1 << d->vc.b[a]) - 1)
				continue;
			looks++;
			at = mig_hm_find(h, v->key + one[a], 0);
			gone[i] = at && covers(&l->st[*at], cost[a], v);
		}
		mig_dp_spend(d, (looks + 3) / 4);
	}
	if (!d->aborted) {
		for (size_t i = 0; i < l->n; i++)
			if (!gone[i])
				l->st[n++] = l->st[i];
		mig_dp_dom_dropped += (long)(l->n - n);
		l->n = n;
	}
	free(gone);
	free(one);
}
