/*
 * fuzz_mig_plan: libFuzzer harness for the MIG plan file parser
 * (mig_ops_parse in src/share/mig_apply.c), the input of `mig apply
 * PLAN_FILE`. Any input must be parsed or refused with one error, never
 * crash or leak; what parses is checked against a GPU with instances
 * (mig_ops_check), and what passes must be a valid geometry.
 *   make fuzz && make fuzz-run FUZZ=fuzz_mig_plan FUZZ_SECONDS=600
 */
#include "share/mig.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
gpu(struct mig_gpu *g)
{
	static const struct { const char *name; unsigned id; int slices, sms, max; unsigned size, n; } t[] = {
		{"1g.10gb", 19, 1, 16, 7, 1, 7}, {"1g.20gb", 15, 1, 26, 4, 2, 4}, {"2g.20gb", 14, 2, 32, 3, 2, 3},
		{"3g.40gb", 9, 3, 60, 2, 4, 2}, {"4g.40gb", 5, 4, 64, 1, 4, 1}, {"7g.80gb", 0, 7, 132, 1, 8, 1},
	};

	memset(g, 0, sizeof *g);
	snprintf(g->uuid, sizeof g->uuid, "GPU-0");
	g->mig_enabled = 1;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct mig_profile *p = &g->profiles[g->nprofiles++];

		snprintf(p->name, sizeof p->name, "%s", t[i].name);
		p->id = t[i].id;
		p->slices = t[i].slices;
		p->sms = t[i].sms;
		p->max_count = t[i].max;
		p->mem_bytes = (uint64_t)t[i].slices << 33;
		for (unsigned k = 0; k < t[i].n; k++)
			p->placements[p->nplacements++] = (struct mig_placement){k * t[i].size, t[i].size};
	}
	mig_gpu_derive(g);
	g->nexisting = 2;
	g->existing[0] = (struct mig_existing){.gi_id = 1, .profile = 3, .at = {4, 4}, .busy = 1, .npids = 1,
	    .pids = {42}};
	g->existing[1] = (struct mig_existing){.gi_id = 2, .profile = 2, .at = {0, 2}};
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mig_op *ops = NULL;
	struct mig_gpu g;
	char *text = malloc(size + 1);
	int n = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	if (mig_ops_parse("fuzz", text, &ops, &n) == 0) {
		gpu(&g);
		if (mig_ops_check(&g, 1, ops, n) == 0) {
			/* passed: the geometry after the operations must be valid */
			int prof[64], m = 0;
			struct mig_placement at[64];

			for (int e = 0; e < g.nexisting; e++) {
				int gone = 0;

				for (int i = 0; i < n; i++)
					gone |= !ops[i].create && ops[i].gi_id == g.existing[e].gi_id;
				if (!gone) {
					prof[m] = g.existing[e].profile;
					at[m++] = g.existing[e].at;
				}
			}
			for (int i = 0; i < n && m < 64; i++)
				if (ops[i].create) {
					prof[m] = mig_profile_find(&g, ops[i].profile);
					at[m++] = ops[i].at;
				}
			if (!mig_geometry_valid(&g, prof, at, m, NULL, 0))
				abort();
		}
	}
	free(ops);
	free(text);
	return 0;
}
