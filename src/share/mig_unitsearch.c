/*
 * mig_unitsearch: first plans. A depth-first branch and bound that puts
 * request units one at a time, each into an instance already opened (MPS
 * sharing of small units), a new instance of some profile on some GPU
 * (allowed when the GPU's new counts are a row of its geometry table), or
 * nowhere, with bounds from the free slices of all GPUs. Within a small
 * budget it finds good plans fast, for the proof to start from; it proves
 * nothing itself.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sunit {
	int req;
	uint64_t mem;                 /* requested memory (a named profile's on that GPU) */
	double share;
	int placeable;                /* fits some profile of some GPU */
};

struct open_inst {
	int profile;
	uint64_t mem_left;
	int sms_left;                 /* for units with a share */
	int nunits;
	int exclusive;                /* holds a unit that may not share */
};

struct gstate {
	uint64_t key;
	int nopen;
	struct open_inst open[MIG_MAX_INST];
};

struct usearch {
	const struct mig_gpu *gpus;
	int ngpus;
	const struct mig_request *reqs;
	struct gtable *tab;
	int *cls;                     /* symmetry class of each GPU */
	int *named;                   /* [unit * ngpus + gpu]: profile index, -1 none on that GPU, -2 not named */
	uint64_t *minmem;             /* smallest profile memory of each GPU */
	struct sunit *units;
	int nunits;
	/* what the units from u on need at the least, for the bounds */
	long *suffix_placeable;
	uint64_t *suffix_small;       /* memory of those that could share */
	uint64_t *suffix_minwaste;    /* memory wasted by the big ones, each in its best-fitting profile */
	long *suffix_minsms;
	int *nbig;                    /* big (never shared) placeable units */
	int *sumc, *summ;             /* [u * (nunits + 1) + k]: compute / memory slices of the k
	                                 least needy big units from u on; NULL when too many units */
	int freeC, freeM;             /* compute and memory slices not yet taken, all GPUs */
	int *psize;                   /* [g * MIG_MAX_PROFILES + p]: a profile's smallest placement */
	unsigned char *fit;           /* [(u * ngpus + g) * MIG_MAX_PROFILES + k]: fitting profiles, cheapest first */
	unsigned char *nfit;          /* [u * ngpus + g] */
	/* the current partial plan and the best: GPU states, unit -> GPU, instance */
	struct gstate *gs, *best_gs;
	int *ag, *ai, *best_ag, *best_ai;
	int sat, sms;
	uint64_t waste_excl, resid_shared;
	struct mig_score best;
	int have_best;                /* best holds a score (maybe another search's) */
	int found;                    /* best_* hold this search's plan */
	int ascending;                /* units least needy first */
	long nodes, limit;
	int aborted;
};

static void unit(struct usearch *s, int u);

/* ------------------------------------------------------------------ search */

static int
is_small(const struct usearch *s, int u, int g)
{
	return s->named[u * s->ngpus + g] == -2 && s->units[u].mem < s->minmem[g];
}

/* Could unit u live alone in an instance of profile p on GPU g? */
static int
fits_profile(const struct usearch *s, int u, int g, int p)
{
	const struct mig_profile *pr = &s->gpus[g].profiles[p];
	int named = s->named[u * s->ngpus + g];

	if (named != -2)
		return named == p;
	return s->units[u].mem <= pr->mem_bytes && mig_need_sms(&s->gpus[g], s->units[u].share) <= pr->sms;
}

static void
leaf(struct usearch *s)
{
	struct mig_score sc = {s->sat, s->waste_excl + s->resid_shared, s->sms, 0};

	for (int g = 0; g < s->ngpus; g++) {
		const struct geo *x = mig_gtable_find(&s->tab[g], s->gs[g].key);

		sc.ops += x ? x->ops : 0;
	}
	if (s->have_best && !mig_score_better(&sc, &s->best))
		return;
	s->best = sc;
	s->have_best = s->found = 1;
	memcpy(s->best_gs, s->gs, sizeof *s->gs * (size_t)s->ngpus);
	memcpy(s->best_ag, s->ag, sizeof *s->ag * (size_t)s->nunits);
	memcpy(s->best_ai, s->ai, sizeof *s->ai * (size_t)s->nunits);
}

/* The most k with sums[k] <= cap, sums ascending from sums[0] = 0. */
static int
most_within(const int *sums, int n, int cap)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (sums[mid] <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Can the rest still beat the best? The optimistic completion: every small
 * unit placed, as many big ones as the free slices of all GPUs could hold
 * (each in its least needy profile), and, when that is all of them, each
 * wasting and using at least what its best-fitting profile does.
 */
static int
promising(const struct usearch *s, int u)
{
	struct mig_score opt;
	uint64_t fill = s->suffix_small[u];
	int big = s->nbig[u], fit = big;

	if (!s->have_best)
		return 1;
	if (s->sumc) {
		const int *c = s->sumc + (size_t)u * (size_t)(s->nunits + 1);
		const int *m = s->summ + (size_t)u * (size_t)(s->nunits + 1);
		int fc = most_within(c, big, s->freeC), fm = most_within(m, big, s->freeM);

		fit = fc < fm ? fc : fm;
	}
	opt.satisfied = s->sat + (int)s->suffix_placeable[u] - (big - fit);
	opt.waste = s->waste_excl + (s->resid_shared > fill ? s->resid_shared - fill : 0);
	opt.sms = s->sms;
	opt.ops = 0;
	if (fit == big && opt.satisfied == s->best.satisfied) {
		/* a tie on the count needs every big unit placed */
		opt.waste += s->suffix_minwaste[u];
		opt.sms += (int)s->suffix_minsms[u];
	}
	return mig_score_better(&opt, &s->best);
}

/* Identical units (one request) go in non-decreasing (gpu, instance) order. */
static int
order_ok(const struct usearch *s, int u, int g, int i)
{
	if (u == 0 || s->units[u - 1].req != s->units[u].req)
		return 1;
	if (s->ag[u - 1] < 0)
		return 0;
	return g > s->ag[u - 1] || (g == s->ag[u - 1] && i >= s->ai[u - 1]);
}


static void
try_existing(struct usearch *s, int u, int g, int i)
{
	struct open_inst *o = &s->gs[g].open[i];
	int need = mig_need_sms(&s->gpus[g], s->units[u].share);
	uint64_t mem = s->units[u].mem;

	if (o->exclusive || !is_small(s, u, g) || mem > o->mem_left || need > o->sms_left)
		return;
	o->mem_left -= mem;
	o->sms_left -= need;
	o->nunits++;
	s->resid_shared -= mem;
	s->sat++;
	s->ag[u] = g;
	s->ai[u] = i;
	unit(s, u + 1);
	s->sat--;
	s->resid_shared += mem;
	o->nunits--;
	o->sms_left += need;
	o->mem_left += mem;
}

static void
try_new(struct usearch *s, int u, int g, int p)
{
	struct gstate *st = &s->gs[g];
	const struct mig_profile *pr = &s->gpus[g].profiles[p];
	uint64_t key = st->key + ((uint64_t)1 << (4 * p));
	int excl = !is_small(s, u, g);
	struct open_inst *o;

	if (st->nopen >= MIG_MAX_INST || ((st->key >> (4 * p)) & 15) == 15 || !mig_gtable_find(&s->tab[g], key))
		return;
	o = &st->open[st->nopen++];
	o->profile = p;
	o->mem_left = pr->mem_bytes - s->units[u].mem;
	o->sms_left = pr->sms - mig_need_sms(&s->gpus[g], s->units[u].share);
	o->nunits = 1;
	o->exclusive = excl;
	st->key = key;
	s->freeC -= pr->slices;
	s->freeM -= s->psize[g * MIG_MAX_PROFILES + p];
	if (excl)
		s->waste_excl += o->mem_left;
	else
		s->resid_shared += o->mem_left;
	s->sms += pr->sms;
	s->sat++;
	s->ag[u] = g;
	s->ai[u] = st->nopen - 1;
	unit(s, u + 1);
	s->sat--;
	s->sms -= pr->sms;
	if (excl)
		s->waste_excl -= o->mem_left;
	else
		s->resid_shared -= o->mem_left;
	st->key -= (uint64_t)1 << (4 * p);
	s->freeC += pr->slices;
	s->freeM += s->psize[g * MIG_MAX_PROFILES + p];
	st->nopen--;
}

/* An empty GPU is tried only when no earlier GPU of its class is empty. */
static int
first_of_class(const struct usearch *s, int g)
{
	if (s->gs[g].nopen > 0 || s->cls[g] < 0)
		return 1;
	for (int h = 0; h < g; h++)
		if (s->cls[h] == s->cls[g] && s->gs[h].nopen == 0)
			return 0;
	return 1;
}

/* Profiles of GPU g by memory, then SMs, then index: cheapest first. */
static int
profile_order(const struct mig_gpu *g, int *order)
{
	int n = g->nprofiles;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			const struct mig_profile *a = &g->profiles[order[j - 1]], *b = &g->profiles[order[j]];

			if (a->mem_bytes < b->mem_bytes || (a->mem_bytes == b->mem_bytes && a->sms <= b->sms))
				break;
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	return n;
}

static void
unit(struct usearch *s, int u)
{
	if (s->aborted)
		return;
	if (++s->nodes > s->limit) {
		s->aborted = 1;
		return;
	}
	if (u == s->nunits) {
		leaf(s);
		return;
	}
	if (!promising(s, u))
		return;
	if (s->units[u].placeable) {
		/* sharing an instance first: it wastes the least */
		for (int g = 0; g < s->ngpus; g++)
			for (int i = 0; is_small(s, u, g) && i < s->gs[g].nopen; i++)
				if (order_ok(s, u, g, i))
					try_existing(s, u, g, i);
		for (int g = 0; g < s->ngpus; g++) {
			size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

			if (!first_of_class(s, g) || !order_ok(s, u, g, s->gs[g].nopen))
				continue;
			for (int k = 0; k < s->nfit[ug]; k++)
				try_new(s, u, g, s->fit[ug * MIG_MAX_PROFILES + (size_t)k]);
		}
	}
	s->ag[u] = -1;
	s->ai[u] = -1;
	unit(s, u + 1);
}

/* ------------------------------------------------------------- the planner */

static int
unit_cmp(const void *a, const void *b)
{
	const struct sunit *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem > y->mem ? -1 : 1;
	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->req - y->req;
}

static int
unit_cmp_asc(const void *a, const void *b)
{
	const struct sunit *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->share != y->share)
		return x->share < y->share ? -1 : 1;
	return x->req - y->req;
}

/* Symmetry classes: GPUs with equal profile tables and no instances. */
static void
classify(struct usearch *s)
{
	for (int g = 0; g < s->ngpus; g++) {
		const struct mig_gpu *a = &s->gpus[g];

		s->cls[g] = -1;
		if (a->nexisting > 0)
			continue;
		s->cls[g] = g;
		for (int h = 0; h < g; h++) {
			const struct mig_gpu *b = &s->gpus[h];

			if (s->cls[h] >= 0 && b->nprofiles == a->nprofiles &&
			    memcmp(b->profiles, a->profiles, sizeof a->profiles[0] * (size_t)a->nprofiles) == 0) {
				s->cls[g] = s->cls[h];
				break;
			}
		}
	}
}

/* Each unit's fitting profiles on each GPU, cheapest first. */
static void
make_fits(struct usearch *s)
{
	for (int g = 0; g < s->ngpus; g++) {
		int order[MIG_MAX_PROFILES], n = profile_order(&s->gpus[g], order);

		for (int p = 0; p < s->gpus[g].nprofiles; p++) {
			const struct mig_profile *pr = &s->gpus[g].profiles[p];
			int m = 0;

			for (int k = 0; k < pr->nplacements; k++)
				if (m == 0 || (int)pr->placements[k].size < m)
					m = (int)pr->placements[k].size;
			s->psize[g * MIG_MAX_PROFILES + p] = m;
		}
		for (int u = 0; u < s->nunits; u++) {
			size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

			for (int k = 0; k < n; k++)
				if (fits_profile(s, u, g, order[k]))
					s->fit[ug * MIG_MAX_PROFILES + s->nfit[ug]++] = (unsigned char)order[k];
		}
	}
}

/* A big unit: may share on no GPU. */
static int
is_big(const struct usearch *s, int u)
{
	for (int g = 0; g < s->ngpus; g++)
		if (is_small(s, u, g))
			return 0;
	return s->units[u].placeable;
}

/* The least a big unit needs anywhere: compute slices, memory slices, waste, SMs. */
static void
least_need(const struct usearch *s, int u, int *cs, int *ms, uint64_t *waste, int *sms)
{
	*cs = *ms = *sms = INT32_MAX;
	*waste = UINT64_MAX;
	for (int g = 0; g < s->ngpus; g++) {
		size_t ug = (size_t)u * (size_t)s->ngpus + (size_t)g;

		for (int k = 0; k < s->nfit[ug]; k++) {
			int p = s->fit[ug * MIG_MAX_PROFILES + (size_t)k];
			const struct mig_profile *pr = &s->gpus[g].profiles[p];
			uint64_t w = pr->mem_bytes - s->units[u].mem;

			*cs = pr->slices < *cs ? pr->slices : *cs;
			*ms = s->psize[g * MIG_MAX_PROFILES + p] < *ms ? s->psize[g * MIG_MAX_PROFILES + p] : *ms;
			*waste = w < *waste ? w : *waste;
			*sms = pr->sms < *sms ? pr->sms : *sms;
		}
	}
}

/* Insert v into the ascending list a[0..n) and rebuild its prefix sums. */
static void
insert_sorted(int *a, int n, int v, int *sums)
{
	int i = n;

	while (i > 0 && a[i - 1] > v) {
		a[i] = a[i - 1];
		i--;
	}
	a[i] = v;
	sums[0] = 0;
	for (i = 0; i <= n; i++)
		sums[i + 1] = sums[i] + a[i];
}

static void
make_bounds(struct usearch *s)
{
	size_t w = (size_t)s->nunits + 1;
	int *lc = xcalloc(w, sizeof *lc), *lm = xcalloc(w, sizeof *lm), n = 0;

	/* the slice sums cost nunits^2 ints: only for searches that size */
	if (s->nunits <= 512) {
		s->sumc = xcalloc(w * w, sizeof *s->sumc);
		s->summ = xcalloc(w * w, sizeof *s->summ);
	}
	for (int u = s->nunits - 1; u >= 0; u--) {
		int cs, ms, sms;
		uint64_t waste;

		s->suffix_minwaste[u] = s->suffix_minwaste[u + 1];
		s->suffix_minsms[u] = s->suffix_minsms[u + 1];
		if (s->sumc) {
			memcpy(s->sumc + (size_t)u * w, s->sumc + (size_t)(u + 1) * w, w * sizeof *s->sumc);
			memcpy(s->summ + (size_t)u * w, s->summ + (size_t)(u + 1) * w, w * sizeof *s->summ);
		}
		if (!is_big(s, u)) {
			s->nbig[u] = n;
			continue;
		}
		least_need(s, u, &cs, &ms, &waste, &sms);
		s->suffix_minwaste[u] += waste;
		s->suffix_minsms[u] += sms;
		if (s->sumc) {
			insert_sorted(lc, n, cs, s->sumc + (size_t)u * w);
			insert_sorted(lm, n, ms, s->summ + (size_t)u * w);
		}
		s->nbig[u] = ++n;
	}
	s->nbig[s->nunits] = 0;
	free(lc);
	free(lm);
}

static void
make_units(struct usearch *s)
{
	int u = 0;

	for (int r = 0; s->reqs && u < s->nunits; r++)
		for (int k = 0; k < s->reqs[r].count; k++, u++) {
			s->units[u].req = r;
			s->units[u].mem = s->reqs[r].mem_bytes;
			s->units[u].share = s->reqs[r].share;
			if (s->reqs[r].profile[0])
				for (int g = 0; g < s->ngpus; g++) {
					int p = mig_profile_find(&s->gpus[g], s->reqs[r].profile);

					if (p >= 0) {
						s->units[u].mem = s->gpus[g].profiles[p].mem_bytes;
						break;
					}
				}
		}
	qsort(s->units, (size_t)s->nunits, sizeof *s->units, s->ascending ? unit_cmp_asc : unit_cmp);
	for (u = 0; u < s->nunits; u++) {
		const struct mig_request *rq = &s->reqs[s->units[u].req];

		for (int g = 0; g < s->ngpus; g++)
			s->named[u * s->ngpus + g] = rq->profile[0] ? mig_profile_find(&s->gpus[g], rq->profile) : -2;
		for (int g = 0; g < s->ngpus && !s->units[u].placeable; g++)
			for (int p = 0; p < s->gpus[g].nprofiles && !s->units[u].placeable; p++)
				s->units[u].placeable = fits_profile(s, u, g, p);
	}
	s->suffix_placeable[s->nunits] = 0;
	s->suffix_small[s->nunits] = 0;
	for (u = s->nunits - 1; u >= 0; u--) {
		int small = 0;

		for (int g = 0; g < s->ngpus; g++)
			small |= is_small(s, u, g);
		s->suffix_placeable[u] = s->suffix_placeable[u + 1] + s->units[u].placeable;
		s->suffix_small[u] = s->suffix_small[u + 1] + (small ? s->units[u].mem : 0);
	}
	make_fits(s);
	make_bounds(s);
}

static void
usearch_init(struct usearch *s, const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs,
    int nunits, struct gtable *tab, long limit, int ascending)
{
	size_t nu = (size_t)nunits, ng = (size_t)ngpus;

	memset(s, 0, sizeof *s);
	s->gpus = gpus;
	s->ngpus = ngpus;
	s->reqs = reqs;
	s->nunits = nunits;
	s->limit = limit;
	s->ascending = ascending;
	s->tab = tab;
	s->cls = xcalloc(ng, sizeof *s->cls);
	s->minmem = xcalloc(ng, sizeof *s->minmem);
	s->named = xcalloc(nu * ng + 1, sizeof *s->named);
	s->units = xcalloc(nu + 1, sizeof *s->units);
	s->suffix_placeable = xcalloc(nu + 1, sizeof *s->suffix_placeable);
	s->suffix_small = xcalloc(nu + 1, sizeof *s->suffix_small);
	s->suffix_minwaste = xcalloc(nu + 1, sizeof *s->suffix_minwaste);
	s->suffix_minsms = xcalloc(nu + 1, sizeof *s->suffix_minsms);
	s->nbig = xcalloc(nu + 1, sizeof *s->nbig);
	s->psize = xcalloc(ng * MIG_MAX_PROFILES, sizeof *s->psize);
	s->fit = xcalloc(nu * ng * MIG_MAX_PROFILES + 1, 1);
	s->nfit = xcalloc(nu * ng + 1, 1);
	s->gs = xcalloc(ng, sizeof *s->gs);
	s->best_gs = xcalloc(ng, sizeof *s->best_gs);
	s->ag = xcalloc(nu + 1, sizeof *s->ag);
	s->ai = xcalloc(nu + 1, sizeof *s->ai);
	s->best_ag = xcalloc(nu + 1, sizeof *s->best_ag);
	s->best_ai = xcalloc(nu + 1, sizeof *s->best_ai);
	for (int g = 0; g < ngpus; g++) {
		s->minmem[g] = UINT64_MAX;
		for (int p = 0; p < gpus[g].nprofiles; p++)
			if (gpus[g].profiles[p].mem_bytes < s->minmem[g])
				s->minmem[g] = gpus[g].profiles[p].mem_bytes;
	}
	classify(s);
	make_units(s);
	for (int g = 0; g < ngpus; g++) {
		int busy_m = 0;

		for (uint32_t m = s->tab[g].busy_mask; m; m &= m - 1)
			busy_m++;
		s->freeC += gpus[g].compute_slices - s->tab[g].busy_slices;
		s->freeM += gpus[g].mem_slices - busy_m;
	}
}

static void
usearch_free(struct usearch *s)
{
	free(s->cls);
	free(s->minmem);
	free(s->named);
	free(s->units);
	free(s->suffix_placeable);
	free(s->suffix_small);
	free(s->suffix_minwaste);
	free(s->suffix_minsms);
	free(s->nbig);
	free(s->sumc);
	free(s->summ);
	free(s->psize);
	free(s->fit);
	free(s->nfit);
	free(s->gs);
	free(s->best_gs);
	free(s->ag);
	free(s->ai);
	free(s->best_ag);
	free(s->best_ai);
}

/* The unit search's best plan as loads in s->cur, offered. */
static void
seed(struct search *s, const struct usearch *us)
{
	if (!us->found)
		return;
	for (int j = 0; j < s->ngpus; j++) {
		const struct sgpu *sg = &s->sg[j];
		const struct gstate *st = &us->best_gs[sg->gpu];
		struct load *ld = &s->cur[j];

		ld->x = mig_gtable_find(sg->t, st->key);
		ld->nslots = st->nopen;
		for (int o = 0; o < st->nopen; o++) {
			struct slot *sl = &ld->slot[o];

			sl->profile = st->open[o].profile;
			sl->big = -1;
			sl->nunits = 0;
			sl->mem = 0;
			sl->need = 0;
			memset(sl->cnt, 0, sizeof *sl->cnt * (size_t)s->nk);
			for (int u = 0; u < us->nunits; u++) {
				int k = s->cls[us->units[u].req];

				if (us->best_ag[u] != sg->gpu || us->best_ai[u] != o)
					continue;
				if (st->open[o].exclusive)
					sl->big = k;
				else
					sl->cnt[k]++;
				sl->nunits++;
				sl->mem += sg->mem[k];
				sl->need += sg->need[k];
			}
		}
	}
	mig_offer(s);
}

void
mig_unit_plans(struct search *s, const struct mig_request *reqs, int nunits)
{
	struct usearch a, b;
	long limit = s->limit / 64 + 1;

	usearch_init(&a, s->gpus, s->ngpus, reqs, nunits, s->tab, limit, 1);
	unit(&a, 0);
	s->nodes += a.nodes;
	seed(s, &a);
	usearch_init(&b, s->gpus, s->ngpus, reqs, nunits, s->tab, limit, 0);
	b.best = a.best;
	b.have_best = a.have_best;
	unit(&b, 0);
	s->nodes += b.nodes;
	seed(s, &b);
	usearch_free(&a);
	usearch_free(&b);
}
