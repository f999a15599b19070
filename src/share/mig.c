/*
 * mig: MIG profiles and the geometry rules, as data: which sets of
 * instances (profiles at placements) a GPU can hold. Everything else of
 * MIG builds on these: the request parsers (mig_request.c), the per-GPU
 * geometry tables (mig_table.c), the search (mig_search.c), the plan it
 * gives (mig_plan.c), and apply/clear (mig_apply.c). All pure: no backend
 * calls.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/err.h"
#include "util/str.h"

#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- profiles */

void
mig_gpu_derive(struct mig_gpu *g)
{
	g->compute_slices = g->mem_slices = g->full_sms = 0;
	for (int p = 0; p < g->nprofiles; p++) {
		const struct mig_profile *pr = &g->profiles[p];

		if (pr->slices > g->compute_slices)
			g->compute_slices = pr->slices;
		if (pr->sms > g->full_sms)
			g->full_sms = pr->sms;
		for (int k = 0; k < pr->nplacements; k++) {
			int end = (int)(pr->placements[k].start + pr->placements[k].size);

			if (end > g->mem_slices)
				g->mem_slices = end;
		}
	}
}

int
mig_profile_find(const struct mig_gpu *g, const char *name)
{
	for (int p = 0; p < g->nprofiles; p++)
		if (strcasecmp(g->profiles[p].name, name) == 0)
			return p;
	return -1;
}

uint32_t
mig_slice_mask(struct mig_placement at)
{
	if (at.size == 0 || at.size > 32 || at.start >= 32 || at.start + at.size > 32)
		return 0;
	if (at.size == 32)
		return 0xffffffffu;
	return ((1u << at.size) - 1) << at.start;
}

static int
placement_allowed(const struct mig_profile *pr, struct mig_placement at)
{
	for (int k = 0; k < pr->nplacements; k++)
		if (pr->placements[k].start == at.start && pr->placements[k].size == at.size)
			return 1;
	return 0;
}

int
mig_geometry_valid(const struct mig_gpu *g, const int *profile,
    const struct mig_placement *at, int n, char *why, size_t whylen)
{
	int count[MIG_MAX_PROFILES] = {0}, slices = 0;
	uint32_t used = 0;
	char dummy[8];

	if (!why) {
		why = dummy;
		whylen = sizeof dummy;
	}
	for (int i = 0; i < n; i++) {
		const struct mig_profile *pr;
		uint32_t m;

		if (profile[i] < 0 || profile[i] >= g->nprofiles) {
			snprintf(why, whylen, "unknown profile");
			return 0;
		}
		pr = &g->profiles[profile[i]];
		if (!placement_allowed(pr, at[i])) {
			snprintf(why, whylen, "%s cannot be placed at %u+%u", pr->name, at[i].start, at[i].size);
			return 0;
		}
		m = mig_slice_mask(at[i]);
		if (used & m) {
			snprintf(why, whylen, "%s at %u+%u overlaps another instance", pr->name,
			    at[i].start, at[i].size);
			return 0;
		}
		used |= m;
		slices += pr->slices;
		if (++count[profile[i]] > pr->max_count) {
			snprintf(why, whylen, "more than %d instances of %s", pr->max_count, pr->name);
			return 0;
		}
	}
	if (slices > g->compute_slices) {
		snprintf(why, whylen, "%d compute slices used, the GPU has %d", slices, g->compute_slices);
		return 0;
	}
	return 1;
}
