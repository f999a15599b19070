/*
 * mig_plan: the planner's entry point. Checks the requests, groups them into
 * classes of identical units and the GPUs into groups of identical ones,
 * builds the geometry tables, runs the search (mig_prove.c) within the work
 * budget, and turns its best loads into the plan: each GPU's instances
 * (busy, new, reused, idle, destroyed), where each unit went or why not,
 * the MPS limits of units that share an instance, and what is proven.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The instances of GPU g for load ld; slot_inst[i] gets the instance of slot i. */
static void
build_gpu(const struct search *s, int g, const struct load *ld, struct mig_gpu_plan *gp, int *slot_inst)
{
	const struct mig_gpu *gpu = &s->gpus[g];
	const struct gtable *t = &s->tab[g];
	const struct geo *x = ld->x;
	int taken[MIG_MAX_INST] = {0}, reused[MIG_MAX_INST] = {0}, keep_unused[MIG_MAX_INST];
	int first_chosen;

	gp->ninst = 0;
	for (int e = 0; e < gpu->nexisting; e++)
		if (gpu->existing[e].busy) {
			struct mig_inst *in = &gp->inst[gp->ninst++];

			memset(in, 0, sizeof *in);
			in->profile = gpu->existing[e].profile;
			in->at = gpu->existing[e].at;
			in->state = MIG_INST_BUSY;
			in->gi_id = gpu->existing[e].gi_id;
		}
	first_chosen = gp->ninst;
	for (int i = 0; x && i < x->n; i++) {
		const struct cand *c = &t->cand[x->cand[i]];
		struct mig_inst *in = &gp->inst[gp->ninst++];

		memset(in, 0, sizeof *in);
		in->profile = c->profile;
		in->at = c->at;
		in->state = MIG_INST_NEW;
		for (int e = 0; e < gpu->nexisting; e++)
			if (!gpu->existing[e].busy && !reused[e] && mig_same_place(&gpu->existing[e], c->profile, c->at)) {
				reused[e] = 1;
				in->state = MIG_INST_KEEP;
				in->gi_id = gpu->existing[e].gi_id;
				break;
			}
	}
	for (int o = 0; o < ld->nslots; o++) {
		slot_inst[o] = -1;
		for (int i = first_chosen; i < gp->ninst; i++)
			if (!taken[i - first_chosen] && gp->inst[i].profile == ld->slot[o].profile) {
				taken[i - first_chosen] = 1;
				slot_inst[o] = i;
				break;
			}
	}
	if (x)
		mig_count_ops(gpu, t, x->cand, x->n, keep_unused);
	else
		for (int e = 0; e < MIG_MAX_INST; e++)
			keep_unused[e] = 1; /* no valid geometry at all: touch nothing */
	for (int e = 0; e < gpu->nexisting; e++) {
		struct mig_inst *in;

		if (gpu->existing[e].busy || reused[e])
			continue;
		in = &gp->inst[gp->ninst++];
		memset(in, 0, sizeof *in);
		in->profile = gpu->existing[e].profile;
		in->at = gpu->existing[e].at;
		in->gi_id = gpu->existing[e].gi_id;
		in->state = keep_unused[e] ? MIG_INST_IDLE : MIG_INST_DESTROY;
	}
}

int
mig_need_sms(const struct mig_gpu *g, double share)
{
	if (share <= 0)
		return 0;
	return (int)ceil(share * g->full_sms - 1e-9);
}

uint64_t
mig_gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void
mig_order_by(int *ord, const uint64_t *key, int n, int desc)
{
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && (desc ? key[ord[b]] > key[ord[b - 1]] : key[ord[b]] < key[ord[b - 1]]); b--) {
			int x = ord[b];

			ord[b] = ord[b - 1];
			ord[b - 1] = x;
		}
}

int
mig_score_better(const struct mig_score *a, const struct mig_score *b)
{
	if (a->satisfied != b->satisfied)
		return a->satisfied > b->satisfied;
	if (a->waste != b->waste)
		return a->waste < b->waste;
	if (a->sms != b->sms)
		return a->sms < b->sms;
	return a->ops < b->ops;
}

/* ------------------------------------------------------------------ setup */

static int
check_requests(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs, int *nunits)
{
	long total = 0;

	if (ngpus <= 0)
		return err_set(EXIT_USAGE, "no MIG-capable GPU selected");
	for (int r = 0; r < nreqs; r++) {
		int found = 0;

		if (reqs[r].count < 1)
			return err_set(EXIT_USAGE, "request %s: count must be at least 1", reqs[r].label);
		total += reqs[r].count;
		if (!reqs[r].profile[0])
			continue;
		for (int g = 0; g < ngpus; g++)
			found |= mig_profile_find(&gpus[g], reqs[r].profile) >= 0;
		if (!found)
			return err_set(EXIT_USAGE, "request %s: no selected GPU has a profile named '%s'",
			    reqs[r].label, reqs[r].profile);
	}
	if (total > MIG_MAX_REQUESTS)
		return err_set(EXIT_USAGE, "more than %d requests in all", MIG_MAX_REQUESTS);
	*nunits = (int)total;
	return 0;
}

/* Requests that ask for the same thing are one class; cls[r] gets request r's. */
static int
make_classes(const struct mig_request *reqs, int nreqs, struct kls *k, int *cls)
{
	int n = 0;

	for (int r = 0; r < nreqs; r++) {
		int c;

		for (c = 0; c < n; c++)
			if (reqs[r].profile[0] ? strcasecmp(k[c].profile, reqs[r].profile) == 0
			    : !k[c].profile[0] && k[c].mem == reqs[r].mem_bytes && k[c].share == reqs[r].share)
				break;
		if (c == n) {
			memset(&k[n], 0, sizeof k[n]);
			k[n].req = r;
			k[n].mem = reqs[r].profile[0] ? 0 : reqs[r].mem_bytes;
			k[n].share = reqs[r].share;
			str_copy(k[n].profile, reqs[r].profile, sizeof k[n].profile);
			n++;
		}
		k[c].n += reqs[r].count;
		cls[r] = c;
	}
	return n;
}

static uint64_t
min_mem(const struct mig_gpu *g)
{
	uint64_t m = UINT64_MAX;

	for (int p = 0; p < g->nprofiles; p++)
		m = g->profiles[p].mem_bytes < m ? g->profiles[p].mem_bytes : m;
	return m;
}

/* What class k may take on GPU sg->g. */
static void
class_on_gpu(const struct search *s, struct sgpu *sg, int k)
{
	const struct kls *c = &s->k[k];
	const struct mig_gpu *g = sg->g;

	sg->fit[k] = 0;
	sg->small[k] = 0;
	sg->need[k] = 0;
	sg->mem[k] = c->mem;
	if (c->profile[0]) {
		int p = mig_profile_find(g, c->profile);

		if (p >= 0) {
			sg->fit[k] = 1u << p;
			sg->mem[k] = g->profiles[p].mem_bytes;
		}
		return;
	}
	sg->need[k] = mig_need_sms(g, c->share);
	sg->small[k] = c->mem < min_mem(g);
	for (int p = 0; p < g->nprofiles && !sg->small[k]; p++)
		if (c->mem <= g->profiles[p].mem_bytes && sg->need[k] <= g->profiles[p].sms)
			sg->fit[k] |= 1u << p;
}

static void
search_init(struct search *s, const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    struct gtable *tab, int *cls, long limit)
{
	size_t ng = (size_t)ngpus, nk, slots = ng * MIG_MAX_INST;
	int *placed = xcalloc(ng, sizeof *placed), j = 0;
	uint64_t d = 0;

	memset(s, 0, sizeof *s);
	s->gpus = gpus;
	s->ngpus = ngpus;
	s->tab = tab;
	s->limit = limit;
	s->cls = cls;
	s->k = xcalloc((size_t)nreqs + 1, sizeof *s->k);
	s->nk = make_classes(reqs, nreqs, s->k, cls);
	nk = (size_t)s->nk + 1;
	s->sg = xcalloc(ng, sizeof *s->sg);
	/* identical GPUs next to each other, twins of the first */
	for (int g = 0; g < ngpus; g++)
		for (int h = g; h < ngpus && (h > g || !placed[g]); h++) {
			struct sgpu *sg;

			if (placed[h] || (h != g && !mig_gpu_twin(&gpus[g], &gpus[h])))
				continue;
			sg = &s->sg[j++];
			placed[h] = 1;
			sg->gpu = h;
			sg->twin = h != g;
			sg->g = &gpus[h];
			sg->t = &tab[h];
		}
	free(placed);
	for (j = 0; j < ngpus; j++) {
		struct sgpu *sg = &s->sg[j];

		sg->fit = xcalloc(nk, sizeof *sg->fit);
		sg->small = xcalloc(nk, sizeof *sg->small);
		sg->need = xcalloc(nk, sizeof *sg->need);
		sg->mem = xcalloc(nk, sizeof *sg->mem);
		for (int k = 0; k < s->nk; k++)
			class_on_gpu(s, sg, k);
		sg->grp = j == 0 ? 0 : s->sg[j - 1].grp + !sg->twin;
		s->ngroups = sg->grp + 1;
		/* waste is a sum of profile and job memory sizes: a multiple of their gcd */
		for (int p = 0; p < sg->g->nprofiles; p++)
			d = mig_gcd64(d, sg->g->profiles[p].mem_bytes);
		for (int k = 0; k < s->nk; k++)
			d = mig_gcd64(d, sg->mem[k]);
	}
	s->waste_step = d ? d : 1;
	s->cur = xcalloc(ng, sizeof *s->cur);
	s->best = xcalloc(ng, sizeof *s->best);
	s->cntbuf = xcalloc(slots * nk, sizeof *s->cntbuf);
	s->bestbuf = xcalloc(slots * nk, sizeof *s->bestbuf);
	for (j = 0; j < ngpus; j++)
		for (int i = 0; i < MIG_MAX_INST; i++) {
			s->cur[j].slot[i].cnt = s->cntbuf + ((size_t)j * MIG_MAX_INST + (size_t)i) * nk;
			s->best[j].slot[i].cnt = s->bestbuf + ((size_t)j * MIG_MAX_INST + (size_t)i) * nk;
		}
}

static void
search_free(struct search *s)
{
	for (int j = 0; j < s->ngpus; j++) {
		free(s->sg[j].fit);
		free(s->sg[j].small);
		free(s->sg[j].need);
		free(s->sg[j].mem);
	}
	free(s->sg);
	free(s->k);
	free(s->cur);
	free(s->best);
	free(s->cntbuf);
	free(s->bestbuf);
}

/* ------------------------------------------------------------ the plan */

/*
 * Why a unit of class k is not placed. A job that does not fit a profile
 * because of its CUDA context (or because a profile named 40gb holds 39.5
 * GiB) is told which profile it needs and which one it missed.
 */
static void
why_unsatisfied(const struct search *s, const struct mig_request *rq, int k, char *why, size_t len)
{
	const struct mig_profile *holds = NULL, *below = NULL;
	uint64_t maxmem = 0, need = rq->mem_bytes + MIG_CONTEXT_RESERVE;
	int placeable = 0;
	char a[16], b[16], c[16];

	if (rq->profile[0]) {
		snprintf(why, len, "no room left for another %s on the selected GPUs", rq->profile);
		return;
	}
	for (int j = 0; j < s->ngpus; j++) {
		placeable |= s->sg[j].fit[k] != 0 || s->sg[j].small[k];
		for (int p = 0; p < s->sg[j].g->nprofiles; p++) {
			const struct mig_profile *pr = &s->sg[j].g->profiles[p];

			maxmem = pr->mem_bytes > maxmem ? pr->mem_bytes : maxmem;
			if (s->sg[j].fit[k] >> p & 1 && (!holds || pr->mem_bytes < holds->mem_bytes))
				holds = pr;
			if (pr->mem_bytes < need && (!below || pr->mem_bytes > below->mem_bytes ||
			    (pr->mem_bytes == below->mem_bytes && pr->slices < below->slices)))
				below = pr;
		}
	}
	format_size(rq->mem_bytes, a, sizeof a);
	format_size(MIG_CONTEXT_RESERVE, c, sizeof c);
	if (need > maxmem)
		snprintf(why, len, "%s and its %s CUDA context are more memory than any profile has (at most %s)", a, c,
		    format_size(maxmem, b, sizeof b));
	else if (!placeable)
		snprintf(why, len, "no profile has both %s and a %.2f compute share", a, rq->share);
	else if (holds && below && rq->mem_bytes <= below->mem_bytes)
		snprintf(why, len, "no room left for a %s; %s would fit a %s (%s) but for its %s CUDA context", holds->name,
		    a, below->name, format_size(below->mem_bytes, b, sizeof b), c);
	else if (holds && below)
		snprintf(why, len, "no room left for a %s, the smallest profile that holds %s and its %s CUDA context "
		    "(a %s has %s)", holds->name, a, c, below->name, format_size(below->mem_bytes, b, sizeof b));
	else
		snprintf(why, len, "no room left on the selected GPUs");
}

/* MPS limits of the units that share an instance: caps, not reservations. */
static void
share_limits(const struct mig_gpu *gpus, const struct mig_request *reqs, const uint64_t *umem, struct mig_plan *p)
{
	for (int u = 0; u < p->nunits; u++) {
		struct mig_unit *un = &p->units[u];
		const struct mig_inst *in;
		const struct mig_gpu *g;
		int need;

		if (un->gpu < 0)
			continue;
		g = &gpus[un->gpu];
		in = &p->gpus[un->gpu].inst[un->inst];
		un->thread_pct = 100;
		un->mem_limit = 0;
		if (!in->shared)
			continue;
		un->mem_limit = umem[u];
		need = mig_need_sms(g, reqs[un->request].share);
		if (need > 0) {
			int sms = g->profiles[in->profile].sms;

			un->thread_pct = (int)((100L * need + sms - 1) / sms);
			if (un->thread_pct > 100)
				un->thread_pct = 100;
		} else {
			un->thread_pct = 100 / in->nunits;
			if (un->thread_pct < 1)
				un->thread_pct = 1;
		}
	}
}

/* The next unit of class k not placed yet (units are in request order), or -1. */
static int
next_unit(const struct mig_plan *p, const int *cls, int k, int *cursor)
{
	for (; *cursor < p->nunits; (*cursor)++)
		if (cls[p->units[*cursor].request] == k && p->units[*cursor].gpu == -2)
			return (*cursor)++;
	return -1;
}

static void
put_unit(struct mig_plan *p, int u, int g, int inst, uint64_t mem, uint64_t *umem)
{

	struct mig_inst *in = &p->gpus[g].inst[inst];

	p->units[u].gpu = g;
	p->units[u].inst = inst;
	umem[u] = mem;
	in->nunits++;
	in->mem_used += mem;
	in->shared = in->nunits > 1;
}

static void
build_plan(const struct search *s, const struct mig_request *reqs, int nreqs, const int *cls,
    struct mig_plan *p)
{
	int *cursor = xcalloc((size_t)s->nk + 1, sizeof *cursor), u = 0;
	uint64_t *umem = xcalloc((size_t)p->nunits + 1, sizeof *umem);

	p->ngpus = s->ngpus;
	p->gpus = xcalloc((size_t)s->ngpus, sizeof *p->gpus);
	for (int r = 0; r < nreqs; r++)
		for (int i = 0; i < reqs[r].count; i++, u++) {
			p->units[u].request = r;
			p->units[u].gpu = -2; /* not placed yet */
			p->units[u].inst = -1;
		}
	for (int g = 0; g < s->ngpus; g++)
		for (int j = 0; j < s->ngpus; j++) {
			const struct load *ld = &s->best[j];
			int map[MIG_MAX_INST];

			if (s->sg[j].gpu != g)
				continue;
			build_gpu(s, g, ld, &p->gpus[g], map);
			for (int i = 0; i < ld->nslots; i++) {
				const struct slot *sl = &ld->slot[i];

				if (sl->big >= 0) {
					put_unit(p, next_unit(p, cls, sl->big, &cursor[sl->big]), g, map[i], s->sg[j].mem[sl->big],
					    umem);
					continue;
				}
				for (int k = 0; k < s->nk; k++)
					for (int c = 0; c < sl->cnt[k]; c++)
						put_unit(p, next_unit(p, cls, k, &cursor[k]), g, map[i], s->sg[j].mem[k], umem);
			}
		}
	for (u = 0; u < p->nunits; u++)
		if (p->units[u].gpu == -2) {
			p->units[u].gpu = -1;
			why_unsatisfied(s, &reqs[p->units[u].request], cls[p->units[u].request], p->units[u].why,
			    sizeof p->units[u].why);
		}
	share_limits(s->gpus, reqs, umem, p);
	free(umem);
	free(cursor);
}

/*
 * Where the proof stopped: the first level of the objective at which the
 * plan does not reach what is proven (s->lb; 0: none, optimal), and what
 * is proven up to there. A level after the first one not proven has no
 * bound worth saying (0).
 */
static void
plan_bound(const struct search *s, struct mig_plan *p)
{
	const struct mig_score *b = &s->lb, *sc = &p->score;

	p->gap_level = sc->satisfied < b->satisfied ? 1 : sc->waste > b->waste ? 2 : sc->sms > b->sms ? 3 :
	    sc->ops > b->ops ? 4 : 0;
	p->optimal = p->gap_level == 0;
	p->bound_satisfied = b->satisfied;
	p->bound_waste = p->gap_level == 1 ? 0 : b->waste;
	p->bound_sms = p->gap_level && p->gap_level <= 2 ? 0 : b->sms;
	p->bound_ops = p->gap_level && p->gap_level <= 3 ? 0 : b->ops;
}

int
mig_plan(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    long node_limit, struct mig_plan *out)
{
	struct search s;
	struct gtable *tab;
	struct mig_request *eff;
	int nunits = 0, *cls;

	memset(out, 0, sizeof *out);
	if (check_requests(gpus, ngpus, reqs, nreqs, &nunits) < 0)
		return -1;
	tab = mig_tables_build(gpus, ngpus);
	cls = xcalloc((size_t)nreqs + 1, sizeof *cls);
	/* what each unit takes on the device: its MEMORY and its context; a named profile, itself */
	eff = xcalloc((size_t)nreqs + 1, sizeof *eff);
	for (int r = 0; r < nreqs; r++) {
		eff[r] = reqs[r];
		if (!eff[r].profile[0])
			eff[r].mem_bytes += MIG_CONTEXT_RESERVE;
	}
	search_init(&s, gpus, ngpus, eff, nreqs, tab, cls, node_limit > 0 ? node_limit : MIG_NODE_LIMIT);
	mig_search_run(&s, eff, nunits);
	out->nunits = nunits;
	out->units = xcalloc((size_t)nunits + 1, sizeof *out->units);
	out->score = s.bs;
	out->nodes = s.nodes;
	build_plan(&s, reqs, nreqs, cls, out);
	plan_bound(&s, out);
	free(cls);
	free(eff);
	search_free(&s);
	mig_tables_free(tab, ngpus);
	return 0;
}

void
mig_plan_free(struct mig_plan *p)
{
	free(p->gpus);
	free(p->units);
	memset(p, 0, sizeof *p);
}
