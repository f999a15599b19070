/*
 * mig_plan_bench: time the MIG planner on N request units over G GPUs of one
 * product from data/mig-profiles.csv, for several random mixes. Used by
 * bench/mig-plan.sh; prints one markdown table row per mix and a summary.
 * Some GPUs are partly in use: GPU 1 has a busy instance of the first
 * profile (processes: the plan must leave it), GPU 5 an idle one (the plan
 * may reuse or destroy it).
 *
 *   mig_plan_bench CSV PRODUCT GPUS UNITS MIXES [NODE_LIMIT]
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

/* A mix of about units request units: named profiles, memory, small shared ones. */
static int
mix(const struct mig_gpu *g, int units, struct mig_request *r)
{
	int n = 0;

	while (units > 0) {
		struct mig_request *q = &r[n++];

		memset(q, 0, sizeof *q);
		q->count = 1 + (int)rnd(units < 6 ? (unsigned)units : 6);
		units -= q->count;
		switch (rnd(3)) {
		case 0:
			str_copy(q->profile, g->profiles[rnd((unsigned)g->nprofiles)].name, sizeof q->profile);
			break;
		case 1:
			q->mem_bytes = (uint64_t)(1 + rnd(8)) << 30;
			q->share = rnd(2) ? (1 + rnd(10)) / 100.0 : 0;
			break;
		default:
			q->mem_bytes = (uint64_t)(1 + rnd((unsigned)(g->profiles[0].mem_bytes >> 30) * 4)) << 30;
			break;
		}
		snprintf(q->label, sizeof q->label, "class%d", n);
	}
	return n;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	struct mig_gpu base, *gpus;
	struct mig_request req[64];
	double worst = 0, total = 0;
	int ngpus, units, mixes, proven = 0;
	long limit = argc == 7 ? atol(argv[6]) : 0;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: mig_plan_bench CSV PRODUCT GPUS UNITS MIXES [NODE_LIMIT]\n");
		return 2;
	}
	if (load(argv[1], argv[2], &base) < 0) {
		fprintf(stderr, "mig_plan_bench: no profiles for %s in %s\n", argv[2], argv[1]);
		return 2;
	}
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
	printf("| mix | classes | units | satisfied | bound | waste GiB | waste bound GiB | nodes | optimal | ms |\n"
	    "|---|---|---|---|---|---|---|---|---|---|\n");
	for (int m = 0; m < mixes; m++) {
		struct mig_plan p;
		int n = mix(&base, units, req);
		double t0 = now_ms(), dt;

		if (mig_plan(gpus, ngpus, req, n, limit, &p) < 0) {
			fprintf(stderr, "mig_plan_bench: %s\n", err_msg());
			return 4;
		}
		dt = now_ms() - t0;
		total += dt;
		worst = dt > worst ? dt : worst;
		proven += p.optimal;
		printf("| %d | %d | %d | %d | %d | %.2f | %.2f | %ld | %s | %.2f |\n", m + 1, n, p.nunits, p.score.satisfied,
		    p.bound_satisfied, p.score.waste / 1073741824.0,
		    p.bound_satisfied == p.score.satisfied ? p.bound_waste / 1073741824.0 : 0.0, p.nodes,
		    p.optimal ? "yes" : "no (node limit)", dt);
		mig_plan_free(&p);
	}
	printf("\nmixes %d, GPUs %d x %s, units %d: mean %.2f ms, worst %.2f ms, proven optimal %d of %d\n", mixes,
	    ngpus, argv[2], units, total / mixes, worst, proven, mixes);
	free(gpus);
	return 0;
}
