/*
 * mig_plan_bench: time the MIG planner on N request units over G GPUs of one
 * product from data/mig-profiles.csv, for several random mixes. Used by
 * bench/mig-plan.sh; prints one markdown table row per mix and a summary.
 * Some GPUs are partly in use: GPU 1 has a busy instance of the first
 * profile (processes: the plan must leave it), GPU 5 an idle one (the plan
 * may reuse or destroy it).
 *
 *   mig_plan_bench CSV PRODUCT GPUS UNITS MIXES [HARD_CLASSES [NODE_LIMIT]]
 *
 * MIG_PLAN_BENCH_ONLY=N plans mix N alone (the mixes come from the seed, so
 * mix N is the same), to look at one mix (under a debugger, callgrind);
 * MIG_PLAN_BENCH_SEED=N (N > 0) draws other mixes than the bench's, to check
 * that a change helps beyond the mixes it was measured on.
 *
 * HARD_CLASSES > 0: every mix has that many classes of distinct sizes.
 */
#include "share/mig.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long rng = 88172645463325252ULL;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static int
load(const char *path, const char *product, struct mig_gpu *g)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	memset(g, 0, sizeof *g);
	while (fgets(line, sizeof line, f)) {
		char *fld[10], *save = NULL, *tok, *psave = NULL;
		struct mig_profile *p;
		int n = 0;

		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#')
			continue;
		for (tok = strtok_r(line, ",", &save); tok && n < 10; tok = strtok_r(NULL, ",", &save))
			fld[n++] = tok;
		if (n < 9 || strcmp(fld[0], product) != 0 || g->nprofiles == MIG_MAX_PROFILES)
			continue;
		p = &g->profiles[g->nprofiles++];
		p->index = atoi(fld[1]);
		p->id = (unsigned)atoi(fld[2]);
		str_copy(p->name, fld[3], sizeof p->name);
		p->slices = atoi(fld[4]);
		p->mem_bytes = (uint64_t)atoll(fld[5]) << 20;
		p->sms = atoi(fld[6]);
		p->max_count = atoi(fld[7]);
		for (tok = strtok_r(fld[8], " ", &psave); tok && p->nplacements < MIG_MAX_PLACEMENTS;
		    tok = strtok_r(NULL, " ", &psave))
			if (sscanf(tok, "%u+%u", &p->placements[p->nplacements].start,
			    &p->placements[p->nplacements].size) == 2)
				p->nplacements++;
	}
	fclose(f);
	mig_gpu_derive(g);
	return g->nprofiles ? 0 : -1;
}

static const double mem_menu[] = {1, 2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 70, 80, 96, 120};
static const double small_menu[] = {1, 2, 3, 4, 6, 8, 12};
static const double share_menu[] = {0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5};

static uint64_t
min_mem(const struct mig_gpu *g)
{
	uint64_t m = UINT64_MAX;

	for (int p = 0; p < g->nprofiles; p++)
		m = g->profiles[p].mem_bytes < m ? g->profiles[p].mem_bytes : m;
	return m;
}

/*
 * A node's queue (the generator bench/results/mig-plan.md states): 3 to 10
 * job classes (or exactly `classes` of distinct sizes when hard), `units`
 * jobs split among them at random, each class one of: a named profile
 * (a quarter), a job of a memory size from a menu of common sizes up to the
 * largest profile, with a compute share half the time (45%), a small job
 * below the smallest profile that shares an instance through MPS, with a
 * share half the time (30%).
 */
static int
mix(const struct mig_gpu *g, int units, int hard, struct mig_request *r)
{
	int n = hard ? hard : 3 + (int)rnd(8), left = units;
	uint64_t most = 0, least = min_mem(g) - MIG_CONTEXT_RESERVE;

	for (int p = 0; p < g->nprofiles; p++)
		most = g->profiles[p].mem_bytes > most ? g->profiles[p].mem_bytes : most;
	most -= MIG_CONTEXT_RESERVE;
	for (int c = 0; c < n; c++) {
		struct mig_request *q = &r[c];
		unsigned kind = rnd(20);

		memset(q, 0, sizeof *q);
		q->count = c == n - 1 ? left : 1 + (int)rnd((unsigned)(left - (n - 1 - c) > 1 ? 2 * left / (n - c) : 1));
		if (q->count > left - (n - 1 - c))
			q->count = left - (n - 1 - c);
		left -= q->count;
		if (hard) {
			/* distinct sizes: 1 GiB apart from 1 GiB on, some small, most not */
			q->mem_bytes = (uint64_t)(1 + c * (most >> 30) / (unsigned)n) << 30;
			q->share = c % 3 == 0 ? share_menu[rnd(8)] : 0;
		} else if (kind < 5) {
			int p;

			do
				p = (int)rnd((unsigned)g->nprofiles);
			while (strstr(g->profiles[p].name, "+me"));
			str_copy(q->profile, g->profiles[p].name, sizeof q->profile);
		} else if (kind < 14) {
			do
				q->mem_bytes = (uint64_t)(mem_menu[rnd(17)] * 1073741824.0);
			while (q->mem_bytes > most);
			q->share = rnd(2) ? share_menu[rnd(8)] : 0;
		} else {
			do
				q->mem_bytes = (uint64_t)(small_menu[rnd(7)] * 1073741824.0);
			while (q->mem_bytes >= least);
			q->share = rnd(2) ? share_menu[rnd(3)] : 0;
		}
		snprintf(q->label, sizeof q->label, "class%d", c + 1);
	}
	return n;
}

/* Memory the mix asks for (its jobs and contexts, named profiles at their size) over the GPUs' memory. */
static double
demand(const struct mig_gpu *gpus, int ngpus, const struct mig_request *r, int n)
{
	double want = 0, have = 0;

	for (int c = 0; c < n; c++) {
		uint64_t m = r[c].mem_bytes + MIG_CONTEXT_RESERVE;

		if (r[c].profile[0])
			m = gpus[0].profiles[mig_profile_find(&gpus[0], r[c].profile)].mem_bytes;
		want += (double)r[c].count * (double)m;
	}
	for (int g = 0; g < ngpus; g++) {
		uint64_t most = 0;

		for (int p = 0; p < gpus[g].nprofiles; p++)
			most = gpus[g].profiles[p].mem_bytes > most ? gpus[g].profiles[p].mem_bytes : most;
		have += (double)most;
	}
	return want / have;
}

/*
 * With $MIG_PLAN_BENCH_DUMP set to a directory, each mix is also written
 * there as a topology of the bench's GPUs (PRODUCT-N.topo) and a request
 * file (PRODUCT-N.req), for tests/tools/mig_check.py.
 */
static void
dump(const char *dir, const char *product, int m, const struct mig_gpu *gpus, int ngpus,
    const struct mig_request *r, int n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s-%d.req", dir, product, m);
	if (!(f = fopen(path, "w")))
		return;
	for (int c = 0; c < n; c++) {
		if (r[c].profile[0])
			fprintf(f, "%d %s\n", r[c].count, r[c].profile);
		else if (r[c].share > 0)
			fprintf(f, "%d %lluM %g\n", r[c].count, (unsigned long long)(r[c].mem_bytes >> 20), r[c].share);
		else
			fprintf(f, "%d %lluM\n", r[c].count, (unsigned long long)(r[c].mem_bytes >> 20));
	}
	fclose(f);
	snprintf(path, sizeof path, "%s/%s-%d.topo", dir, product, m);
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "gpupack-topology 1\n# mig_plan_bench: %s mix %d\ndriver 580.159.04\ncuda 13.0\n", product, m);
	for (int g = 0; g < ngpus; g++) {
		const struct mig_gpu *x = &gpus[g];

		fprintf(f, "\ngpu %d\n  uuid GPU-00000000-0000-0000-0000-%012d\n  name %s\n  pci 00000000:%02X:00.0\n", g, g,
		    product, 16 + g);
		fprintf(f, "  memory total=%lluMiB used=0 reserved=0\n  sms %d\n  compute-capability 9.0\n"
		    "  compute-mode default\n  mig current=%s pending=%s\n",
		    (unsigned long long)(x->profiles[x->nprofiles - 1].mem_bytes >> 20), x->full_sms,
		    x->nexisting ? "enabled" : "disabled", x->nexisting ? "enabled" : "disabled");
		for (int p = 0; p < x->nprofiles; p++) {
			const struct mig_profile *pr = &x->profiles[p];

			fprintf(f, "  profile index=%d id=%u name=%s slices=%d memory=%lluMiB sms=%d max=%d placements=", pr->index,
			    pr->id, pr->name, pr->slices, (unsigned long long)(pr->mem_bytes >> 20), pr->sms, pr->max_count);
			for (int k = 0; k < pr->nplacements; k++)
				fprintf(f, "%s%u+%u", k ? "," : "", pr->placements[k].start, pr->placements[k].size);
			fprintf(f, "\n");
		}
		for (int e = 0; e < x->nexisting; e++) {
			const struct mig_existing *ex = &x->existing[e];

			fprintf(f, "  gi id=%u profile=%s placement=%u+%u used=0\n  ci gi=%u id=0 uuid=MIG-%08d-0000-0000-0000-%012d\n",
			    ex->gi_id, x->profiles[ex->profile].name, ex->at.start, ex->at.size, ex->gi_id, g, e);
			if (ex->busy)
				fprintf(f, "  process pid=%d name=job memory=1024MiB gi=%u ci=0\n", ex->pids[0], ex->gi_id);
		}
	}
	fclose(f);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of this process: what a plan costs, whatever else the shared machine runs. */
static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	struct mig_gpu base, *gpus;
	struct mig_request req[64];
	double worst = 0, total = 0, cworst = 0, ctotal = 0;
	int ngpus, units, mixes, proven = 0;
	int hard = argc >= 7 ? atoi(argv[6]) : 0;
	long limit = argc == 8 ? atol(argv[7]) : 0;

	if (argc < 6 || argc > 8 || hard < 0 || hard > 64) {
		fprintf(stderr, "usage: mig_plan_bench CSV PRODUCT GPUS UNITS MIXES [HARD_CLASSES [NODE_LIMIT]]\n");
		return 2;
	}
	if (load(argv[1], argv[2], &base) < 0) {
		fprintf(stderr, "mig_plan_bench: no profiles for %s in %s\n", argv[2], argv[1]);
		return 2;
	}
	if (getenv("MIG_PLAN_BENCH_SEED"))
		rng += (unsigned long long)atoll(getenv("MIG_PLAN_BENCH_SEED")) * 0x9E3779B97F4A7C15ULL;
	ngpus = atoi(argv[3]);
	units = atoi(argv[4]);
	mixes = atoi(argv[5]);
	if (ngpus < 1 || ngpus > 64 || units < 1 || units > 300 || mixes < 1)
		return 2;
	gpus = calloc((size_t)ngpus, sizeof *gpus);
	for (int i = 0; i < ngpus; i++) {
		gpus[i] = base;
		gpus[i].index = gpus[i].sys_pos = i;
		snprintf(gpus[i].uuid, sizeof gpus[i].uuid, "GPU-bench-%d", i);
		if (i == 1 || i == 5) {
			struct mig_existing *e = &gpus[i].existing[gpus[i].nexisting++];

			memset(e, 0, sizeof *e);
			e->gi_id = 1;
			e->profile = 0;
			e->at = base.profiles[0].placements[i == 1 ? 0 : 1];
			e->busy = i == 1;
			e->npids = e->busy;
			e->pids[0] = 4242;
		}
	}
	printf("| mix | classes | demand/memory | satisfied | waste GiB | SMs | ops | proven optimal | work | CPU ms | wall ms |\n"
	    "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int m = 0; m < mixes; m++) {
		struct mig_plan p;
		int n = mix(&base, units, hard, req);
		double t0 = now_ms(), c0 = cpu_ms(), dt, dc;
		char gap[96];

		if (getenv("MIG_PLAN_BENCH_ONLY") && atoi(getenv("MIG_PLAN_BENCH_ONLY")) != m + 1)
			continue; /* that mix alone (the mixes come from the seed, not from the plans) */
		if (mig_plan(gpus, ngpus, req, n, limit, &p) < 0) {
			fprintf(stderr, "mig_plan_bench: %s\n", err_msg());
			return 4;
		}
		dt = now_ms() - t0;
		dc = cpu_ms() - c0;
		if (getenv("MIG_PLAN_BENCH_DUMP"))
			dump(getenv("MIG_PLAN_BENCH_DUMP"), argv[2], m + 1, gpus, ngpus, req, n);
		total += dt;
		worst = dt > worst ? dt : worst;
		ctotal += dc;
		cworst = dc > cworst ? dc : cworst;
		proven += p.optimal;
		switch (p.gap_level) {
		case 0:
			snprintf(gap, sizeof gap, "yes");
			break;
		case 1:
			snprintf(gap, sizeof gap, "no: satisfied <= %d", p.bound_satisfied);
			break;
		case 2:
			snprintf(gap, sizeof gap, "no: waste >= %.2f GiB", p.bound_waste / 1073741824.0);
			break;
		case 3:
			snprintf(gap, sizeof gap, "no: SMs >= %d", p.bound_sms);
			break;
		default:
			snprintf(gap, sizeof gap, "no: operations >= %d", p.bound_ops);
			break;
		}
		printf("| %d | %d | %.2f | %d of %d | %.2f | %d | %d | %s | %ld | %.1f | %.1f |\n", m + 1, n,
		    demand(gpus, ngpus, req, n), p.score.satisfied, p.nunits, p.score.waste / 1073741824.0, p.score.sms,
		    p.score.ops, gap, p.nodes, dc, dt);
		mig_plan_free(&p);
	}
	printf("\nmixes %d, GPUs %d x %s, units %d: CPU mean %.1f ms, worst %.1f ms; wall mean %.1f ms, worst %.1f ms; "
	    "proven optimal %d of %d\n", mixes, ngpus, argv[2], units, ctotal / mixes, cworst, total / mixes, worst, proven,
	    mixes);
	free(gpus);
	return 0;
}
