/*
 * mig_fixture.h: what the planner's unit tests share, written separately
 * from src/share/mig*.c: the products of data/mig-profiles.csv, the rules
 * of a valid plan (placements, overlaps, slices, counts, what goes where,
 * the score) and a validator built on them, an exhaustive search that
 * gives the optimum of small request mixes, and reproducible random mixes.
 * Header only (each unit test is one file, as the Makefile builds them),
 * so its functions are static and marked unused: a test that leaves some
 * unused is not warned.
 */
#ifndef GPUPACK_TEST_MIG_FIXTURE_H
#define GPUPACK_TEST_MIG_FIXTURE_H

#include "share/mig.h"
#include "util/err.h"
#include "util/str.h"
#include "tap.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FIXTURE static __attribute__((unused))

/*
 * The sanitizer pass of make check (GPUPACK_TEST_PASS=san, or a build
 * named *-san): loops that only repeat the first pass's search space on
 * more seeds shrink there, as tests/cli/mig-check.t does.
 */
FIXTURE int
san_pass(void)
{
	const char *p = getenv("GPUPACK_TEST_PASS"), *b = getenv("GPUPACK_BUILD");
	size_t n = b ? strlen(b) : 0;

	return (p && strcmp(p, "san") == 0) || (n >= 4 && strcmp(b + n - 4, "-san") == 0);
}

/* ------------------------------------------------------------ the CSV */

#define MAX_PRODUCTS 16

struct product {
	char name[64];
	struct mig_gpu gpu;
};

static struct product products[MAX_PRODUCTS];
static int nproducts;

FIXTURE struct product *
product_get(const char *name)
{
	for (int i = 0; i < nproducts; i++)
		if (strcmp(products[i].name, name) == 0)
			return &products[i];
	if (nproducts == MAX_PRODUCTS)
		return NULL;
	str_copy(products[nproducts].name, name, sizeof products[0].name);
	return &products[nproducts++];
}

FIXTURE int
csv_row(char *line)
{
	char *f[12], *save = NULL, *tok;
	int n = 0;
	struct product *pr;
	struct mig_profile *p;

	for (tok = strtok_r(line, ",", &save); tok && n < 12; tok = strtok_r(NULL, ",", &save))
		f[n++] = tok;
	if (n < 9 || strcmp(f[0], "gpu") == 0)
		return 0;
	if (!(pr = product_get(f[0])) || pr->gpu.nprofiles == MIG_MAX_PROFILES)
		return -1;
	p = &pr->gpu.profiles[pr->gpu.nprofiles++];
	memset(p, 0, sizeof *p);
	p->index = atoi(f[1]);
	p->id = (unsigned)atoi(f[2]);
	str_copy(p->name, f[3], sizeof p->name);
	p->slices = atoi(f[4]);
	p->mem_bytes = (uint64_t)atoll(f[5]) << 20;
	p->sms = atoi(f[6]);
	p->max_count = atoi(f[7]);
	for (char *pl = strtok_r(f[8], " ", &save); pl; pl = strtok_r(NULL, " ", &save)) {
		unsigned a, b;

		if (sscanf(pl, "%u+%u", &a, &b) != 2 || p->nplacements == MIG_MAX_PLACEMENTS)
			return -1;
		p->placements[p->nplacements++] = (struct mig_placement){a, b};
	}
	return 0;
}

FIXTURE int
load_csv(void)
{
	const char *src = getenv("GPUPACK_SRC");
	char path[4096], line[1024];
	FILE *f;

	snprintf(path, sizeof path, "%s/data/mig-profiles.csv", src ? src : ".");
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		if (csv_row(line) < 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	for (int i = 0; i < nproducts; i++) {
		struct mig_gpu *g = &products[i].gpu;

		g->index = 0;
		str_copy(g->uuid, "GPU-", sizeof g->uuid);
		str_copy(g->uuid + 4, products[i].name, sizeof g->uuid - 4);
		str_copy(g->name, products[i].name, sizeof g->name);
		g->mig_enabled = 1;
		mig_gpu_derive(g);
	}
	return 0;
}

/* A copy of a product as GPU number idx of a test machine. */
FIXTURE struct mig_gpu
gpu_of(const struct product *p, int idx)
{
	struct mig_gpu g = p->gpu;

	g.index = idx;
	g.sys_pos = idx;
	snprintf(g.uuid, sizeof g.uuid, "GPU-%s-%d", p->name, idx);
	return g;
}

/* ------------------------------------------- the rules, written again here */

/* The GPU's compute slices: those of its largest profile (the whole GPU). */
FIXTURE int
t_compute_slices(const struct mig_gpu *g)
{
	int m = 0;

	for (int p = 0; p < g->nprofiles; p++)
		m = g->profiles[p].slices > m ? g->profiles[p].slices : m;
	return m;
}

FIXTURE int
t_full_sms(const struct mig_gpu *g)
{
	int m = 0;

	for (int p = 0; p < g->nprofiles; p++)
		m = g->profiles[p].sms > m ? g->profiles[p].sms : m;
	return m;
}

FIXTURE uint64_t
t_min_mem(const struct mig_gpu *g)
{
	uint64_t m = UINT64_MAX;

	for (int p = 0; p < g->nprofiles; p++)
		m = g->profiles[p].mem_bytes < m ? g->profiles[p].mem_bytes : m;
	return m;
}

/* What a memory request takes on the device: MEMORY plus its context (doc/mig.md). */
FIXTURE uint64_t
t_foot(const struct mig_request *rq)
{
	return rq->mem_bytes + MIG_CONTEXT_RESERVE;
}

FIXTURE int
t_need(const struct mig_gpu *g, double share)
{
	double x = share * t_full_sms(g);
	int n = (int)x;

	if (share <= 0)
		return 0;
	return x - n > 1e-9 ? n + 1 : n;
}

FIXTURE int __attribute__((format(printf, 2, 3)))
t_fail(char *why, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return 0;
	va_start(ap, fmt);
	vsnprintf(why, 256, fmt, ap);
	va_end(ap);
	return 0;
}

FIXTURE int
t_overlap(struct mig_placement a, struct mig_placement b)
{
	return a.start < b.start + b.size && b.start < a.start + a.size;
}

/* Instances given as profile indices and placements: a valid geometry? */
FIXTURE int
t_valid(const struct mig_gpu *g, const int *prof, const struct mig_placement *at, int n, char *why)
{
	int slices = 0;

	for (int i = 0; i < n; i++) {
		const struct mig_profile *p = &g->profiles[prof[i]];
		int listed = 0, same = 0;

		for (int k = 0; k < p->nplacements; k++)
			listed |= p->placements[k].start == at[i].start && p->placements[k].size == at[i].size;
		if (!listed)
			return t_fail(why, "%s not placeable at %u+%u", p->name, at[i].start, at[i].size);
		for (int j = 0; j < n; j++) {
			if (j != i && t_overlap(at[i], at[j]))
				return t_fail(why, "instances %d and %d overlap", i, j);
			same += prof[j] == prof[i];
		}
		if (same > p->max_count)
			return t_fail(why, "%d x %s > max %d", same, p->name, p->max_count);
		slices += p->slices;
	}
	if (slices > t_compute_slices(g))
		return t_fail(why, "%d slices", slices);
	return 1;
}

/* Is there a placement for these profile counts (with fixed instances)? */
FIXTURE int
t_realize(const struct mig_gpu *g, int *prof, struct mig_placement *at, int nfixed, int n, int i)
{
	char why[256] = "";

	if (i == n)
		return t_valid(g, prof, at, n, why);
	for (int k = 0; k < g->profiles[prof[i]].nplacements; k++) {
		at[i] = g->profiles[prof[i]].placements[k];
		if (i > nfixed && prof[i] == prof[i - 1] && at[i].start <= at[i - 1].start)
			continue; /* same profile: placements in order */
		if (t_valid(g, prof, at, i + 1, NULL) && t_realize(g, prof, at, nfixed, n, i + 1))
			return 1;
	}
	return 0;
}

/*
 * The validator: the plan is a valid geometry for every GPU, keeps busy
 * instances, puts units only where they fit, and its score is what it says.
 */
FIXTURE int
validate(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p, char *why)
{
	struct mig_score sc = {0, 0, 0, 0};
	int per_req[64] = {0};

	if (p->ngpus != ngpus)
		return sprintf(why, "ngpus"), 0;
	for (int g = 0; g < ngpus; g++) {
		const struct mig_gpu *gpu = &gpus[g];
		const struct mig_gpu_plan *gp = &p->gpus[g];
		int prof[64], n = 0;
		struct mig_placement at[64];
		uint64_t memin[64] = {0};
		int smsin[64] = {0}, nin[64] = {0}, named[64] = {0}, big[64] = {0};

		for (int i = 0; i < gp->ninst; i++) {
			const struct mig_inst *in = &gp->inst[i];

			if (in->state != MIG_INST_DESTROY) {
				prof[n] = in->profile;
				at[n++] = in->at;
			}
			sc.ops += in->state == MIG_INST_NEW || in->state == MIG_INST_DESTROY;
		}
		if (!t_valid(gpu, prof, at, n, why))
			return 0;
		/* every existing instance is accounted for, busy ones kept */
		for (int e = 0; e < gpu->nexisting; e++) {
			int found = 0;

			for (int i = 0; i < gp->ninst; i++) {
				const struct mig_inst *in = &gp->inst[i];

				if (in->state == MIG_INST_NEW || in->gi_id != gpu->existing[e].gi_id)
					continue;
				found++;
				if (in->profile != gpu->existing[e].profile || in->at.start != gpu->existing[e].at.start)
					return sprintf(why, "instance %u moved", in->gi_id), 0;
				if (gpu->existing[e].busy && in->state != MIG_INST_BUSY)
					return sprintf(why, "busy instance %u not kept", in->gi_id), 0;
				if (!gpu->existing[e].busy && in->state == MIG_INST_BUSY)
					return sprintf(why, "idle instance %u called busy", in->gi_id), 0;
			}
			if (found != 1)
				return sprintf(why, "existing instance %u listed %d times", gpu->existing[e].gi_id, found), 0;
		}
		for (int u = 0; u < p->nunits; u++) {
			const struct mig_unit *un = &p->units[u];
			const struct mig_request *rq = &reqs[un->request];
			uint64_t mem;

			if (un->gpu != g)
				continue;
			if (un->inst < 0 || un->inst >= gp->ninst)
				return sprintf(why, "unit %d: bad instance", u), 0;
			if (gp->inst[un->inst].state != MIG_INST_NEW && gp->inst[un->inst].state != MIG_INST_KEEP)
				return sprintf(why, "unit %d in an instance that is not new or reused", u), 0;
			mem = t_foot(rq);
			if (rq->profile[0]) {
				if (strcasecmp(gpu->profiles[gp->inst[un->inst].profile].name, rq->profile) != 0)
					return sprintf(why, "unit %d: wants %s", u, rq->profile), 0;
				mem = gpu->profiles[gp->inst[un->inst].profile].mem_bytes;
				named[un->inst] = 1;
			}
			big[un->inst] |= rq->profile[0] || mem >= t_min_mem(gpu);
			memin[un->inst] += mem;
			smsin[un->inst] += t_need(gpu, rq->share);
			nin[un->inst]++;
			if (un->thread_pct < 1 || un->thread_pct > 100)
				return sprintf(why, "unit %d: thread pct %d", u, un->thread_pct), 0;
		}
		for (int i = 0; i < gp->ninst; i++) {
			const struct mig_profile *pr = &gpu->profiles[gp->inst[i].profile];

			if (gp->inst[i].state == MIG_INST_NEW && nin[i] == 0)
				return sprintf(why, "GPU %d: a new instance holds nothing", g), 0;
			if (nin[i] == 0)
				continue;
			if (memin[i] > pr->mem_bytes || smsin[i] > pr->sms)
				return sprintf(why, "GPU %d instance %d overfull", g, i), 0;
			if (nin[i] > 1 && (named[i] || big[i]))
				return sprintf(why, "GPU %d instance %d shares a unit that may not share", g, i), 0;
			sc.waste += pr->mem_bytes - memin[i];
			sc.sms += pr->sms;
			sc.satisfied += nin[i];
		}
	}
	if (p->nunits > 0 && nreqs > 64)
		return sprintf(why, "too many requests for the validator"), 0;
	for (int u = 0; u < p->nunits; u++) {
		per_req[p->units[u].request]++;
		if (p->units[u].gpu < 0 && !p->units[u].why[0])
			return sprintf(why, "unit %d unsatisfied without a reason", u), 0;
	}
	for (int r = 0; r < nreqs; r++)
		if (per_req[r] != reqs[r].count)
			return sprintf(why, "request %d: %d units, want %d", r, per_req[r], reqs[r].count), 0;
	if (sc.satisfied != p->score.satisfied || sc.waste != p->score.waste || sc.sms != p->score.sms ||
	    sc.ops != p->score.ops)
		return sprintf(why, "score (%d,%llu,%d,%d) but plan says (%d,%llu,%d,%d)", sc.satisfied,
		    (unsigned long long)sc.waste, sc.sms, sc.ops, p->score.satisfied,
		    (unsigned long long)p->score.waste, p->score.sms, p->score.ops), 0;
	return 1;
}

/* ------------------------------------------------------ exhaustive search */

struct bin {
	int gpu, profile, n, big;
	uint64_t mem;
	int sms;
};

struct brute {
	const struct mig_gpu *gpus;
	int ngpus;
	const struct mig_request *reqs;
	int unit_req[16];
	int nunits;
	struct bin bins[32];
	int nbins;
	int sat;
	struct mig_score best;
	int have;
	/* realizable profile counts, remembered: key -> 1 yes, 2 no */
	uint64_t memo_key[4096];
	unsigned char memo_val[4096];
};

FIXTURE int
brute_gpu_ok(struct brute *b, int g)
{
	int prof[32], n = 0, ans;
	struct mig_placement at[32];
	uint64_t key = (uint64_t)g + 1;
	unsigned h;

	for (int i = 0; i < b->nbins; i++)
		if (b->bins[i].gpu == g) {
			prof[n++] = b->bins[i].profile;
			key += (uint64_t)1 << (4 + 4 * b->bins[i].profile);
		}
	for (h = (unsigned)(key * 2654435761u) % 4096; b->memo_val[h]; h = (h + 1) % 4096)
		if (b->memo_key[h] == key)
			return b->memo_val[h] == 1;
	/* sort the profiles so that equal ones are adjacent */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && prof[j - 1] > prof[j]; j--) {
			int t = prof[j];
			prof[j] = prof[j - 1];
			prof[j - 1] = t;
		}
	ans = t_realize(&b->gpus[g], prof, at, 0, n, 0);
	b->memo_key[h] = key;
	b->memo_val[h] = ans ? 1 : 2;
	return ans;
}

FIXTURE void
brute_leaf(struct brute *b)
{
	struct mig_score sc = {b->sat, 0, 0, b->nbins};

	for (int i = 0; i < b->nbins; i++) {
		sc.waste += b->gpus[b->bins[i].gpu].profiles[b->bins[i].profile].mem_bytes - b->bins[i].mem;
		sc.sms += b->gpus[b->bins[i].gpu].profiles[b->bins[i].profile].sms;
	}
	if (!b->have || sc.satisfied > b->best.satisfied ||
	    (sc.satisfied == b->best.satisfied && (sc.waste < b->best.waste ||
	    (sc.waste == b->best.waste && (sc.sms < b->best.sms ||
	    (sc.sms == b->best.sms && sc.ops < b->best.ops)))))) {
		b->best = sc;
		b->have = 1;
	}
}

FIXTURE void
brute_unit(struct brute *b, int u)
{
	const struct mig_request *rq;

	if (u == b->nunits) {
		brute_leaf(b);
		return;
	}
	rq = &b->reqs[b->unit_req[u]];
	brute_unit(b, u + 1); /* left out */
	for (int g = 0; g < b->ngpus; g++) {
		const struct mig_gpu *gpu = &b->gpus[g];
		int need = t_need(gpu, rq->share);
		int small = !rq->profile[0] && t_foot(rq) < t_min_mem(gpu);

		for (int i = 0; i < b->nbins; i++) {
			struct bin *x = &b->bins[i];
			const struct mig_profile *pr = &gpu->profiles[x->profile];

			if (x->gpu != g || x->big || !small || x->mem + t_foot(rq) > pr->mem_bytes ||
			    x->sms + need > pr->sms)
				continue;
			x->n++;
			x->mem += t_foot(rq);
			x->sms += need;
			b->sat++;
			brute_unit(b, u + 1);
			b->sat--;
			x->sms -= need;
			x->mem -= t_foot(rq);
			x->n--;
		}
		for (int p = 0; p < gpu->nprofiles; p++) {
			const struct mig_profile *pr = &gpu->profiles[p];
			struct bin *x = &b->bins[b->nbins];

			if (rq->profile[0] ? strcasecmp(rq->profile, pr->name) != 0
			    : (t_foot(rq) > pr->mem_bytes || need > pr->sms))
				continue;
			x->gpu = g;
			x->profile = p;
			x->n = 1;
			x->big = !small;
			x->mem = rq->profile[0] ? pr->mem_bytes : t_foot(rq);
			x->sms = need;
			b->nbins++;
			if (brute_gpu_ok(b, g)) {
				b->sat++;
				brute_unit(b, u + 1);
				b->sat--;
			}
			b->nbins--;
		}
	}
}

FIXTURE struct mig_score
brute_force(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs)
{
	static struct brute b;

	memset(&b, 0, sizeof b);
	b.gpus = gpus;
	b.ngpus = ngpus;
	b.reqs = reqs;
	for (int r = 0; r < nreqs; r++)
		for (int k = 0; k < reqs[r].count; k++)
			b.unit_req[b.nunits++] = r;
	brute_unit(&b, 0);
	return b.best;
}

/* 1 where the exhaustive optimum best beats a bound p reports (at its first level not proven). */
FIXTURE int
bound_beaten(const struct mig_plan *p, const struct mig_score *best)
{
	switch (p->gap_level) {
	case 1:
		return best->satisfied > p->bound_satisfied;
	case 2:
		return best->satisfied != p->score.satisfied || best->waste < p->bound_waste;
	case 3:
		return best->satisfied != p->score.satisfied || best->waste != p->score.waste ||
		    best->sms < p->bound_sms;
	case 4:
		return best->satisfied != p->score.satisfied || best->waste != p->score.waste ||
		    best->sms != p->score.sms || best->ops < p->bound_ops;
	default:
		return mig_score_better(best, &p->score) || mig_score_better(&p->score, best);
	}
}

/* ------------------------------------------------------- random request mixes */

static unsigned long long rng_state;

FIXTURE unsigned
rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng_state >> 33) % n);
}

FIXTURE void
random_request(const struct mig_gpu *g, struct mig_request *r, int maxcount)
{
	memset(r, 0, sizeof *r);
	r->count = 1 + (int)rnd((unsigned)maxcount);
	switch (rnd(4)) {
	case 0:
		str_copy(r->profile, g->profiles[rnd((unsigned)g->nprofiles)].name, sizeof r->profile);
		break;
	case 1: /* small: may share */
		r->mem_bytes = (uint64_t)(1 + rnd(8)) << 29;
		if (rnd(2))
			r->share = (1 + rnd(20)) / 100.0;
		break;
	default: /* up to a bit more than the whole GPU */
		r->mem_bytes = ((uint64_t)(1 + rnd(150)) << 30) % (t_min_mem(g) * 9) + ((uint64_t)1 << 29);
		if (rnd(3) == 0)
			r->share = (1 + rnd(100)) / 100.0;
		break;
	}
	snprintf(r->label, sizeof r->label, "r%u", rnd(1000));
}

/* Random existing instances: a valid geometry, some busy. */
FIXTURE void
random_existing(struct mig_gpu *g)
{
	int prof[MIG_MAX_INST];
	struct mig_placement at[MIG_MAX_INST];
	char why[256] = "";

	g->nexisting = 0;
	for (int tries = 0; tries < 6 && g->nexisting < MIG_MAX_INST; tries++) {
		int p = (int)rnd((unsigned)g->nprofiles), n = g->nexisting;

		prof[n] = p;
		at[n] = g->profiles[p].placements[rnd((unsigned)g->profiles[p].nplacements)];
		if (!t_valid(g, prof, at, n + 1, why))
			continue;
		memset(&g->existing[n], 0, sizeof g->existing[n]);
		g->existing[n].gi_id = (unsigned)(n + 1);
		g->existing[n].profile = p;
		g->existing[n].at = at[n];
		g->existing[n].busy = rnd(2);
		g->existing[n].npids = g->existing[n].busy;
		g->existing[n].pids[0] = 1000 + n;
		g->nexisting++;
	}
}

/* A small mix for the exhaustive search: 1 or 2 fresh GPUs of product pi, up to 5 or 4 units; *nr requests. */
FIXTURE int
small_mix(int pi, int seed, struct mig_gpu *g, struct mig_request *r, int *nr)
{
	int ng = 1 + (int)(seed % 2), units = 0, maxunits = ng == 1 ? 5 : 4;

	for (int i = 0; i < ng; i++)
		g[i] = gpu_of(&products[pi], i); /* fresh: the exhaustive search knows no existing instances */
	for (*nr = 0; *nr < 4 && units < maxunits; (*nr)++) {
		random_request(&g[0], &r[*nr], maxunits - units);
		units += r[*nr].count;
	}
	return ng;
}

/* Do a plan's score a and the exhaustive optimum b differ? If so, says how on a TAP comment line. */
FIXTURE int
differs(const char *product, int seed, const char *what, const struct mig_score *a, const struct mig_score *b)
{
	if (!mig_score_better(a, b) && !mig_score_better(b, a))
		return 0;
	printf("# %s seed %d: %s (%d,%llu,%d,%d) exhaustive (%d,%llu,%d,%d)\n", product, seed, what, a->satisfied,
	    (unsigned long long)a->waste, a->sms, a->ops, b->satisfied, (unsigned long long)b->waste, b->sms, b->ops);
	return 1;
}

/*
 * The 125 small mixes (small_mix, on every product; 25 in the sanitizer
 * pass) planned within budget (0: the default) against the exhaustive
 * optimum: the same score, and proven optimal by the planner. who names
 * the planner's setting in the test's lines; work[product] (NULL: not
 * kept) adds up the work spent.
 */
FIXTURE void
check_optimal(long budget, const char *who, long *work)
{
	int worse = 0, cases = 0, notopt = 0, twins = 0;

	for (int pi = 0; pi < nproducts; pi++)
		for (int seed = 1; seed <= (san_pass() ? 5 : 25); seed++) {
			struct mig_gpu g[2];
			struct mig_request r[4];
			struct mig_plan p;
			struct mig_score best;
			int ng, nr;

			rng_state = (unsigned long long)seed * 104729 + (unsigned long long)pi * 31;
			ng = small_mix(pi, seed, g, r, &nr);
			if (mig_plan(g, ng, r, nr, budget, &p) < 0) {
				printf("# mig_plan: %s\n", err_msg());
				continue;
			}
			best = brute_force(g, ng, r, nr);
			cases++;
			twins += ng == 2;
			notopt += !p.optimal;
			if (work)
				work[pi] += p.nodes;
			worse += differs(products[pi].name, seed, "plan", &p.score, &best);
			mig_plan_free(&p);
		}
	is_int(worse, 0, "%d small mixes on every product (%d on two twin GPUs)%s: the plan's score equals the "
	    "exhaustive optimum", cases, twins, who);
	is_int(notopt, 0, "... and the planner proved each optimal itself%s", who);
}

/* mig_plan at the default budget; a failure said on a TAP comment line. */
FIXTURE int
plan_one(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    struct mig_plan *p)
{
	int rc = mig_plan(gpus, ngpus, reqs, nreqs, 0, p);

	if (rc < 0)
		printf("# mig_plan: %s\n", err_msg());
	return rc;
}

#endif
