/*
 * mig_split: levels 2 to 4 by a DP over the GPUs that keeps the exclusive
 * units and the shared instances apart (doc/mig.md, "The split DP"), run
 * once the satisfied level is proven, beside the DP over units (mig_dp.c)
 * and the branch and price, on a thread of its own (mig_splitjob.c).
 *
 * Every instance of a plan holds one exclusive unit (a named profile, or a
 * job too large to share) or shared units (small jobs, through MPS). The
 * small jobs care only about which shared instances there are, not about
 * the GPUs these sit on, so a plan is: per GPU a row of its table and, for
 * each instance of the row, its exclusive class or "shared"; then the
 * small units packed into the multiset Y of shared instances. The waste
 * is the exclusive units' (their instance's memory less theirs) plus
 * Y's memory less the small memory packed; the SMs and operations are the
 * rows'. So:
 *
 *   outer: a state is (e, Y): the exclusive units of each class and the
 *          shared instances of each profile on GPUs 0..j-1, with the least
 *          (exclusive waste, SMs, operations) of the rows reaching it (the
 *          rest of the plan's value depends on the key alone);
 *   inner: for a last-layer state, with c = S - |e| small units to place,
 *          the most small memory any c of them packed into Y can take
 *          (each shared instance a knapsack on memory and SMs): a DP over
 *          Y's instances whose layers hold the most-filled vectors of
 *          small units, kept per Y (a Y's set is its parent's, less one
 *          instance, extended).
 *
 * The last layer's states go by a bound of their value (Y's memory less
 * the most the c largest small units, or Y's instances each at its
 * fullest, can put in it), least first; each is valued exactly until the
 * bound passes the best value found. Exact: a state is dropped only by a
 * bound valid for every plan through it (that bound, or too few units
 * within reach), or by one of its layer with one more exclusive unit and a
 * value no worse (S is the most units: every completion of it places all
 * that class's units left, and one taken out of its instance, the
 * instance goes, no worse). A state whose best packing leaves an instance
 * of Y empty is matched by the state without it, which wastes less, so the
 * best state's packing fills every instance of its Y.
 *
 * Where the small units are many kinds of job and the exclusive ones few,
 * its states are far fewer than the DP over units' (which counts the small
 * units of each class GPU by GPU). It needs GPUs of one product (a class
 * small on one and not on another has no single side) and gives up past
 * its work, or where its layers grow past what runs that finish reach.
 */
#include "share/mig.h"
#include "share/mig_split.h"
#include "util/str.h"

#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#include <time.h>
#endif
#include <stdlib.h>
#include <string.h>

#define MAX_STATES (1 << 22) /* states of one layer, whatever the budget: memory */
/*
 * A layer wider than this, and the run gives up: on 180 mixes of the
 * bench's generator, the runs that finish within their share keep their
 * layers narrower, and those that do not are spared the rest of it.
 */
#define WIDE 4000
/*
 * Where the bags first (mig_split_bags_first) did not finish: the bags
 * again on this thread with this many quarters of its work, at most (on
 * 540 mixes of the bench's generator, half of it proves one mix fewer than
 * three quarters or all), the split DP with the rest.
 */
#define THREAD_BAGS 3

#ifdef MIG_TRACE
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
#endif

/* ----------------------------------------------------------------------------------- set up */

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
 * pmaxu: the most memory of at most c small units whose shares need at
 * most u SMs in all (a knapsack on count and SMs, unit by unit): the
 * small units in shared instances of u SMs need no more than u.
 */
static void
pmax_sms(struct split *x)
{
	size_t w;

	for (int j = 0; j < x->s->ngpus; j++)
		x->umax += x->s->sg[j].g->full_sms;
	w = (size_t)x->umax + 1;
	if ((double)x->ns * x->ns * (double)w > 2e7)
		return;
	x->pmaxu = xcalloc(((size_t)x->ns + 1) * w, sizeof *x->pmaxu);
	for (int a = 0; a < x->nsm; a++)
		for (int n = 0; n < x->psm.cap[a]; n++)
			for (int c = x->ns; c >= 1; c--)
				for (int u = x->umax; u >= x->sneed[a]; u--) {
					uint64_t v = x->pmaxu[(size_t)(c - 1) * w + (size_t)(u - x->sneed[a])] + x->smem[a];

					if (v > x->pmaxu[(size_t)c * w + (size_t)u])
						x->pmaxu[(size_t)c * w + (size_t)u] = v;
				}
	spend(x, (long)((double)x->ns * x->ns * (double)w / 64) + 1);
}

static int
split_init(struct split *x, struct search *s, long limit)
{
	const struct sgpu *sg = &s->sg[0];
	int ecap[MAX_FIELDS], scap[MAX_FIELDS], ycap[MIG_MAX_PROFILES], nu = 0;

	x->s = s;
	x->g = sg->g;
	x->S = s->bs.satisfied;
	x->inc = s->bs;
	if (mig_split_blind)
		x->inc = (struct mig_score){x->S, (uint64_t)1 << 60, 1 << 24, 1 << 24};
	x->limit = limit;
	x->np = x->g->nprofiles;
	if (!one_product(s))
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
	for (int p = 0; p < x->np; p++)
		ycap[p] = s->ngpus * (x->g->profiles[p].max_count < 15 ? x->g->profiles[p].max_count : 15);
	if (mig_split_pack_init(&x->pe, x->ne, ecap) < 0 || mig_split_pack_init(&x->pyk, x->np, ycap) < 0 ||
	    mig_split_pack_init(&x->psm, x->nsm, scap) < 0)
		return -1;
	/* the c largest small units' memory */
	for (int i = 0; i < x->nsm; i++)
		x->sorder[i] = i;
	mig_order_by(x->sorder, x->smem, x->nsm, 1);
	x->pmax = xcalloc((size_t)x->ns + 1, sizeof *x->pmax);
	for (int i = 0; i < x->nsm; i++)
		for (int c = 0; c < s->k[x->scls[x->sorder[i]]].n; c++, nu++)
			x->pmax[nu + 1] = x->pmax[nu] + x->smem[x->sorder[i]];
	pmax_sms(x);
	return 0;
}

/* ---------------------------------------------------------------------------- the outer DP */

static int
sst_better(const struct sst *a, const struct sst *b)
{
	return a->w < b->w || (a->w == b->w && (a->sms < b->sms || (a->sms == b->sms && a->ops < b->ops)));
}

static void
spush(struct slayer *l, struct hmap *h, const struct sst *st)
{
	int *at = mig_hm_get(h, st->e, st->y);

	if (*at < 0) {
		xgrow(&l->st, &l->cap, l->n + 1, sizeof *l->st);
		*at = (int)l->n;
		l->st[l->n++] = *st;
		return;
	}
	if (sst_better(st, &l->st[*at]))
		l->st[*at] = *st;
}

/*
 * Drops the states of layer l that one with one more exclusive unit, the
 * same shared instances and a value no worse covers (S is the most units
 * any plan places: every completion of the one places all that class's
 * units left, and taking one out drops its instance). Along a chain of
 * drops the units grow, so it ends at a state kept. All are compared
 * against the whole layer (h: its keys' indices) before it is compacted.
 */
static void
dominate(struct split *x, struct slayer *l, const struct hmap *h)
{
	unsigned char *gone = xcalloc(l->n + 1, 1);
	size_t w = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct sst *v = &l->st[i];

		for (int a = 0; a < x->ne && !gone[i]; a++) {
			uint64_t u = v->e + x->pe.one[a];
			const int *at;

			if (u & x->pe.guard)
				continue;
			at = mig_hm_find(h, u, v->y);
			gone[i] = at && !sst_better(v, &l->st[*at]);
		}
	}
	for (size_t i = 0; i < l->n; i++)
		if (!gone[i])
			l->st[w++] = l->st[i];
	spend(x, (long)l->n * x->ne / 8 + 1);
	l->n = w;
	free(gone);
}

static int
st_cmp(const void *a, const void *b)
{
	const struct sst *x = a, *y = b;

	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	if (x->sms != y->sms)
		return x->sms < y->sms ? -1 : 1;
	if (x->ops != y->ops)
		return x->ops - y->ops;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	return (x->y > y->y) - (x->y < y->y);
}

/* The layers of states, GPU by GPU. 0: out of work. */
static int
layers(struct split *x, const struct ost *os, const int *most, struct slayer *ly)
{
	const struct search *s = x->s;
	struct hmap h;

	for (int j = 1; j <= s->ngpus; j++)
		ly[j].n = 0;
	for (int j = 0; j < s->ngpus && !x->aborted; j++) {
		mig_hm_init(&h, ly[j].n * 4, 2);
		for (size_t a = 0; a < ly[j].n && !x->aborted; a++) {
			const struct sst *st = &ly[j].st[a];
			long tried = 0, pushed = 0;

			for (size_t i = 0; i < os[j].n; i++) {
				const struct opt *o = &os[j].o[i];
				struct sst nx;
				int smalls;

				nx.e = st->e + o->e;
				nx.eu = st->eu + o->eu;
				if ((nx.e & x->pe.guard) || nx.eu > x->S)
					continue;
				nx.y = st->y + o->y;
				nx.ycap = st->ycap + o->ycap;
				smalls = nx.ycap < x->ns ? nx.ycap : x->ns;
				if (nx.eu + smalls + most[j + 1] < x->S)
					continue;
				nx.w = st->w + o->w;
				nx.ymem = st->ymem + o->ymem;
				nx.yfill = st->yfill + o->yfill;
				nx.ysms = st->ysms + o->ysms;
				nx.sms = st->sms + o->sms;
				nx.ops = st->ops + o->ops;
				nx.lb = mig_split_lb(x, &nx);
				tried++;
				if (no_better(x, nx.lb, nx.sms, nx.ops))
					continue;
				nx.prev = (int)a;
				nx.opt = (int)i;
				spush(&ly[j + 1], &h, &nx);
				pushed++;
				if (ly[j + 1].n > MAX_STATES)
					x->aborted = 1;
			}
			/* a hash lookup in a large layer is a cache miss or two */
			spend(x, (long)os[j].n / 16 + tried / 8 +
			    pushed * (ly[j + 1].n > 65536 ? 4 : 1) / 2 + 1);
		}
		if (!x->aborted)
			dominate(x, &ly[j + 1], &h);
		if (!x->aborted)
			mig_split_cut(x, &ly[j + 1], j + 1);
		mig_hm_free(&h);
		/*
		 * the next layer would not fit what is left, or this one is past
		 * what the runs that finish reach: give the rest back now
		 */
		if (j + 1 < s->ngpus && (x->work + (long)(ly[j + 1].n * os[j + 1].n / 8) > x->limit ||
		    ly[j + 1].n > WIDE))
			x->aborted = 1;
#ifdef MIG_TRACE
		fprintf(stderr, "split: layer %d states %zu options %zu work %ld cpu %.2f\n", j + 1, ly[j + 1].n, os[j].n,
		    x->work, cpu_now());
#endif
	}
	return !x->aborted;
}

/* The layer-0 state: nothing placed. */
static void
layer0(const struct split *x, struct slayer *ly)
{
	xgrow(&ly[0].st, &ly[0].cap, 1, sizeof *ly[0].st);
	memset(&ly[0].st[0], 0, sizeof ly[0].st[0]);
	ly[0].st[0].e = x->pe.bias;
	ly[0].st[0].prev = ly[0].st[0].opt = -1;
	ly[0].n = 1;
}


/*
 * The last layer's states, least bound first, valued exactly (the inner
 * DP) while one may still beat x->inc: the best one's index in last
 * (x->inc its value, *vi and *c its packing), -1 none better.
 */
static int
evaluate(struct split *x, const struct slayer *last, size_t *vi, int *c)
{
	struct sst *cand = xcalloc(last->n + 1, sizeof *cand);
	size_t nc = 0, evals = 0;
	int best = -1;

	/* the candidates by their bound (each one's index kept in prev) */
	for (size_t a = 0; a < last->n; a++) {
		int cc = x->S - last->st[a].eu;

		if (cc < 0 || cc > x->ns || cc > last->st[a].ycap)
			continue;
		cand[nc] = last->st[a];
		cand[nc].lb = mig_split_lb(x, &cand[nc]);
		cand[nc].prev = (int)a;
		nc++;
	}
	qsort(cand, nc, sizeof *cand, st_cmp);
	spend(x, (long)nc / 4 + 1);
	for (size_t i = 0; i < nc && !x->aborted; i++) {
		int cc = x->S - cand[i].eu;
		size_t v = 0;
		int64_t m;
		uint64_t w;

		if (no_better(x, cand[i].lb, cand[i].sms, cand[i].ops))
			break;
		m = mig_split_most_packed(x, cand[i].y, cc, &v);
		evals++;
		if (m < 0)
			continue;
		w = cand[i].w + cand[i].ymem - (uint64_t)m;
		if (no_better(x, w, cand[i].sms, cand[i].ops))
			continue;
		x->inc = (struct mig_score){x->S, w, cand[i].sms, cand[i].ops};
		best = cand[i].prev;
		*vi = v;
		*c = cc;
	}
#ifdef MIG_TRACE
	fprintf(stderr, "split: candidates %zu evaluated %zu sets %zu vectors %zu aborted %d\n", nc, evals, x->nrs,
	    x->nvec, x->aborted);
#endif
	free(cand);
	return best;
}

/* ------------------------------------------------------------------------------------ the run */

static void
split_free(struct split *x)
{
	for (int p = 0; p < MIG_MAX_PROFILES; p++)
		free(x->cont[p]);
	free(x->rs);
	mig_hm_free(&x->rmap);
	free(x->vec);
	free(x->from);
	free(x->via);
	free(x->pmax);
	free(x->pmaxu);
	for (int j = 0; x->ct && j <= x->s->ngpus; j++) {
		free(x->ct[j].sw);
		free(x->ct[j].sv);
		free(x->ct[j].sm);
		free(x->ct[j].so);
	}
	free(x->ct);
}

/*
 * The bags (mig_splitdrop.c) on the calling thread, before the rest of the
 * proof (mig_prove.c), within limit: 1 where they proved the best plan
 * optimal (a better one offered to s first). Their work counts in s.
 */
int
mig_split_bags_first(struct search *s, long limit)
{
	struct split x;
	int ret = 0;

	memset(&x, 0, sizeof x);
	if (mig_split_disabled || mig_split_no_bags || !s->have || s->ngpus < 1)
		return 0;
	if (split_init(&x, s, limit) == 0) {
		mig_hm_init(&x.rmap, 64, 1);
		mig_split_skips(&x);
		mig_split_limits(&x);
		if (!x.aborted)
			ret = mig_split_bags(&x);
		s->nodes += x.work;
	}
	x.s = s;
	split_free(&x);
	return ret;
}

int mig_split_disabled, mig_split_blind;
long mig_split_proofs, mig_split_found;
struct mig_score mig_split_own = {-1, 0, 0, 0};

int
mig_split_run(struct search *s, long limit)
{
	struct split x;
	struct ost *os = NULL;
	struct slayer *ly = NULL;
	int *most = NULL, ret = 0;

#ifdef MIG_TRACE
	double t0 = cpu_now();
#endif
	memset(&x, 0, sizeof x);
	if (mig_split_disabled || !s->have || s->ngpus < 1 || split_init(&x, s, limit) < 0) {
		free(x.pmax);
		free(x.pmaxu);
		return 0;
	}
	mig_hm_init(&x.rmap, 64, 1);
	mig_split_skips(&x);
	mig_split_limits(&x);
	/* the bags again (the drop vectors the first run finished skipped), with more work */
	if (!x.aborted && !mig_split_no_bags) {
		long keep = x.limit;

		x.limit = x.work + (keep - x.work) * THREAD_BAGS / 4;
		ret = mig_split_bags(&x);
		x.limit = keep;
		if (ret)
			goto done;
		if (!(s->split_stop && atomic_load(s->split_stop)))
			x.aborted = x.work > x.limit;
	}
	os = xcalloc((size_t)s->ngpus + 1, sizeof *os);
	for (int j = 0; j < s->ngpus && !x.aborted; j++) {
		if (s->sg[j].twin) {
			os[j] = os[j - 1];
			os[j].owned = 0;
			continue;
		}
		mig_split_options(&x, j, &os[j]);
		os[j].owned = 1;
	}
	most = xcalloc((size_t)s->ngpus + 2, sizeof *most);
	for (int j = s->ngpus - 1; j >= 0 && !x.aborted; j--)
		most[j] = most[j + 1] + os[j].most;
	ly = xcalloc((size_t)s->ngpus + 1, sizeof *ly);
	mig_split_own.satisfied = -1;
	if (!x.aborted)
		mig_split_completions(&x, os);
#ifdef MIG_TRACE
	fprintf(stderr, "split: completions: work %ld steps %d of %.0f MiB cpu %.2f\n", x.work, x.ct ? x.ct[0].nt : 0,
	    x.dq / 1048576.0, cpu_now() - t0);
#endif
	if (!x.aborted) {
		layer0(&x, ly);
		layers(&x, os, most, ly);
	}
	if (!x.aborted) {
		size_t vi = 0;
		int c = 0, b = evaluate(&x, &ly[s->ngpus], &vi, &c);
		struct mig_score found = x.inc;

		if (!x.aborted) {
			ret = 1;
			if (b >= 0) {
				ret = mig_split_plan(&x, ly, os, b, vi, c, &found);
				mig_split_found += ret;
				if (ret)
					mig_split_own = found;
			}
			mig_split_proofs += ret;
		}
	}
done:
	s->nodes += x.work;
#ifdef MIG_TRACE
	fprintf(stderr, "split: ret %d work %ld of %ld aborted %d cpu %.2f ms\n", ret, x.work, x.limit, x.aborted,
	    cpu_now() - t0);
#endif
	for (int j = 0; j < s->ngpus; j++)
		if (os && os[j].owned)
			free(os[j].o);
	for (int j = 0; ly && j <= s->ngpus; j++)
		free(ly[j].st);
	free(ly);
	free(os);
	free(most);
	split_free(&x);
	return ret;
}

