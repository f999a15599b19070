/*
 * fuzz_mig_requests: libFuzzer harness for the MIG request parsers
 * (mig_parse_requests, mig_parse_spec in src/share/mig_request.c). Any input must be
 * parsed or refused with one error, never crash or leak; what parses is
 * planned on one H200 (profiles as data/mig-profiles.csv measured them) with a
 * small search budget, and the plan must account for every unit.
 *   make fuzz && make fuzz-run FUZZ=fuzz_mig_requests FUZZ_SECONDS=600
 */
#include "share/mig.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
profile(struct mig_gpu *g, int index, unsigned id, const char *name, int slices, uint64_t mib, int sms,
    int max, unsigned size, const unsigned *starts, int n)
{
	struct mig_profile *p = &g->profiles[g->nprofiles++];

	memset(p, 0, sizeof *p);
	p->index = index;
	p->id = id;
	snprintf(p->name, sizeof p->name, "%s", name);
	p->slices = slices;
	p->mem_bytes = mib << 20;
	p->sms = sms;
	p->max_count = max;
	for (int k = 0; k < n; k++)
		p->placements[p->nplacements++] = (struct mig_placement){starts[k], size};
}

static void
h200(struct mig_gpu *g, int idx)
{
	static const unsigned s1[] = {0, 1, 2, 3, 4, 5, 6}, s2[] = {0, 2, 4, 6}, s3[] = {0, 4}, s0[] = {0};

	memset(g, 0, sizeof *g);
	g->index = g->sys_pos = idx;
	snprintf(g->uuid, sizeof g->uuid, "GPU-fuzz-%d", idx);
	profile(g, 0, 19, "1g.18gb", 1, 16384, 16, 7, 1, s1, 7);
	profile(g, 7, 20, "1g.18gb+me", 1, 16384, 16, 1, 1, s1, 7);
	profile(g, 9, 15, "1g.35gb", 1, 33280, 26, 4, 2, s2, 4);
	profile(g, 1, 14, "2g.35gb", 2, 33280, 32, 3, 2, s2, 3);
	profile(g, 2, 9, "3g.71gb", 3, 71424, 60, 2, 4, s3, 2);
	profile(g, 3, 5, "4g.71gb", 4, 71424, 64, 1, 4, s0, 1);
	profile(g, 4, 0, "7g.141gb", 7, 143360, 132, 1, 8, s0, 1);
	mig_gpu_derive(g);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mig_request *r = NULL, one;
	struct mig_gpu g[1];
	struct mig_plan p;
	char *text = malloc(size + 1);
	int n = 0, sat = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	(void)mig_parse_spec(text, &one);
	if (mig_parse_requests("fuzz", text, &r, &n) == 0 && n > 0) {
		h200(&g[0], 0);
		if (mig_plan(g, 1, r, n, 500, &p) == 0) {
			long units = 0;

			for (int i = 0; i < n; i++)
				units += r[i].count;
			for (int u = 0; u < p.nunits; u++)
				sat += p.units[u].gpu >= 0;
			if (p.nunits != units || sat != p.score.satisfied)
				abort();
			mig_plan_free(&p);
		}
	}
	free(r);
	free(text);
	return 0;
}
