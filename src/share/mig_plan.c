/*
 * mig_plan: the planner's entry point. Checks the requests, builds the
 * geometry tables, runs the searches within the node budget, and turns the
 * best placement found into the plan: each GPU's instances (busy, new,
 * reused, idle, destroyed), where each unit went or why not, and the MPS
 * limits of units that share an instance.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <stdlib.h>
#include <string.h>

static void
build_gpu(const struct search *s, int g, struct mig_gpu_plan *gp, int *open_to_inst)
{
	const struct mig_gpu *gpu = &s->gpus[g];
	const struct gtable *t = &s->tab[g];
	const struct gstate *st = &s->best_gs[g];
	const struct geo *x = mig_gtable_find(t, st->key);
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
	for (int o = 0; o < st->nopen; o++) {
		open_to_inst[o] = -1;
		for (int i = first_chosen; i < gp->ninst; i++)
			if (!taken[i - first_chosen] && gp->inst[i].profile == st->open[o].profile) {
				taken[i - first_chosen] = 1;
				open_to_inst[o] = i;
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

static void
why_unsatisfied(const struct search *s, int u, char *why, size_t len)
{
	const struct mig_request *rq = &s->reqs[s->units[u].req];
	uint64_t maxmem = 0;
	int maxsms = 0;
	char a[32], b[32];

	if (rq->profile[0]) {
		snprintf(why, len, "no room left for another %s on the selected GPUs", rq->profile);
		return;
	}
	for (int g = 0; g < s->ngpus; g++)
		for (int p = 0; p < s->gpus[g].nprofiles; p++) {
			const struct mig_profile *pr = &s->gpus[g].profiles[p];

			if (pr->mem_bytes > maxmem)
				maxmem = pr->mem_bytes;
			if (pr->sms - mig_need_sms(&s->gpus[g], rq->share) > maxsms)
				maxsms = pr->sms - mig_need_sms(&s->gpus[g], rq->share);
		}
	if (rq->mem_bytes > maxmem)
		snprintf(why, len, "%s is more memory than any profile has (at most %s)",
		    format_size(rq->mem_bytes, a, sizeof a), format_size(maxmem, b, sizeof b));
	else if (!s->units[u].placeable)
		snprintf(why, len, "no profile has both %s and a %.2f compute share",
		    format_size(rq->mem_bytes, a, sizeof a), rq->share);
	else
		snprintf(why, len, "no room left on the selected GPUs");
}

/* MPS limits for the units that share an instance. */
static void
share_limits(const struct search *s, struct mig_plan *p)
{
	for (int u = 0; u < p->nunits; u++) {
		struct mig_unit *un = &p->units[u];
		const struct mig_inst *in;
		const struct mig_gpu *g;
		int need;

		if (un->gpu < 0)
			continue;
		g = &s->gpus[un->gpu];
		in = &p->gpus[un->gpu].inst[un->inst];
		un->thread_pct = 100;
		un->mem_limit = 0;
		if (!in->shared)
			continue;
		un->mem_limit = s->units[u].mem;
		need = mig_need_sms(g, s->units[u].share);
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

static void
build_plan(const struct search *s, struct mig_plan *p)
{
	p->ngpus = s->ngpus;
	p->gpus = xcalloc((size_t)s->ngpus, sizeof *p->gpus);
	p->nunits = s->nunits;
	p->units = xcalloc((size_t)s->nunits + 1, sizeof *p->units);
	p->score = s->best;
	p->optimal = !s->aborted;
	p->nodes = s->nodes;
	for (int g = 0; g < s->ngpus; g++) {
		int map[MIG_MAX_INST];

		build_gpu(s, g, &p->gpus[g], map);
		for (int u = 0; u < s->nunits; u++) {
			struct mig_inst *in;

			if (s->best_ag[u] != g)
				continue;
			p->units[u].gpu = g;
			p->units[u].inst = map[s->best_ai[u]];
			in = &p->gpus[g].inst[p->units[u].inst];
			in->nunits++;
			in->mem_used += s->units[u].mem;
			in->shared = in->nunits > 1;
		}
	}
	for (int u = 0; u < s->nunits; u++) {
		p->units[u].request = s->units[u].req;
		if (s->best_ag[u] < 0) {
			p->units[u].gpu = p->units[u].inst = -1;
			why_unsatisfied(s, u, p->units[u].why, sizeof p->units[u].why);
		}
	}
	share_limits(s, p);
}

/*
 * Two searches share the node budget. The first takes the least needy units
 * first, which satisfies many quickly when the GPUs cannot hold everything;
 * the second, largest first (better packing), starts from the first one's
 * score and keeps a plan only if strictly better. When either finishes, the
 * plan is optimal.
 */
int
mig_plan(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    long node_limit, struct mig_plan *out)
{
	struct search a, b, *s = &a;
	struct gtable *tab;
	int nunits = 0, optimal;
	long limit = node_limit > 0 ? node_limit : MIG_NODE_LIMIT;

	memset(out, 0, sizeof *out);
	memset(&b, 0, sizeof b);
	if (mig_check_requests(gpus, ngpus, reqs, nreqs, &nunits) < 0)
		return -1;
	tab = mig_tables_build(gpus, ngpus);
	mig_search_init(&a, gpus, ngpus, reqs, nunits, tab, limit / 4 + 1, 1);
	mig_search_unit(&a, 0);
	optimal = !a.aborted;
	if (a.aborted) {
		mig_search_init(&b, gpus, ngpus, reqs, nunits, tab, limit - a.nodes + 1, 0);
		b.best = a.best;
		b.have_best = a.have_best;
		mig_search_unit(&b, 0);
		optimal = !b.aborted;
		if (b.found || !a.found)
			s = &b;
	}
	if (!s->found) {
		/* cut off before the first leaf: nothing placed is always a plan */
		for (int u = 0; u < nunits; u++)
			s->best_ag[u] = s->best_ai[u] = -1;
		memset(s->best_gs, 0, sizeof *s->best_gs * (size_t)ngpus);
	}
	build_plan(s, out);
	out->optimal = optimal;
	out->nodes = a.nodes + b.nodes;
	if (!s->found) {
		memset(&out->score, 0, sizeof out->score);
		for (int g = 0; g < ngpus; g++)
			for (int i = 0; i < out->gpus[g].ninst; i++)
				out->score.ops += out->gpus[g].inst[i].state == MIG_INST_DESTROY;
	}
	mig_search_free(&a);
	if (a.aborted)
		mig_search_free(&b);
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
