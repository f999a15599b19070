/*
 * slot: how many tasks each device takes at once, and which devices.
 */
#include "farm/slot.h"
#include "farm/cost.h"
#include "farm/farm.h"

#include <stdlib.h>

static int
jobs_bound(int share, int jobs)
{
	if (jobs > 0)
		return jobs;
	if (share == SHARE_EXCLUSIVE)
		return FARM_JOBS_EXCLUSIVE;
	if (share == SHARE_MPS)
		return FARM_JOBS_MPS;
	return FARM_JOBS_TIMESLICE;
}

int
pack_capacity(int share, int jobs, uint64_t mem, uint64_t mem_free, int mig_slices,
    const char **limit)
{
	uint64_t avail = mem_free, per = mem + FARM_CTX_OVERHEAD;
	int cap = jobs_bound(share, jobs);
	long by_mem;

	*limit = "-j";
	if (share == SHARE_EXCLUSIVE)
		cap = 1;
	if (share == SHARE_MPS) {
		int clients = FARM_MPS_MAX_CLIENTS;

		if (mig_slices > 0)
			clients = FARM_MPS_MAX_CLIENTS * mig_slices / FARM_MIG_SLICES;
		if (clients < 1)
			clients = 1;
		if (cap > clients) {
			cap = clients;
			*limit = "mps-clients";
		}
		avail = avail > FARM_MPS_SERVER_MEM ? avail - FARM_MPS_SERVER_MEM : 0;
	}
	by_mem = (long)(avail / per);
	if (by_mem < cap) {
		cap = (int)by_mem;
		*limit = mem ? "--mem" : "memory";
	}
	return cap;
}

void
pack_total(struct group *g, int n, int total)
{
	int sum = 0, *take;

	for (int i = 0; i < n; i++)
		sum += g[i].cap;
	if (total <= 0 || sum <= total)
		return;
	take = calloc((size_t)n, sizeof *take);
	if (!take)
		abort();
	/* deal slots one at a time, device after device, so each gets its share */
	for (int left = total; left > 0;) {
		int dealt = 0;

		for (int i = 0; i < n && left > 0; i++)
			if (take[i] < g[i].cap) {
				take[i]++;
				left--;
				dealt = 1;
			}
		if (!dealt)
			break;
	}
	for (int i = 0; i < n; i++) {
		if (take[i] < g[i].cap)
			g[i].limit = "--total";
		g[i].cap = take[i];
	}
	free(take);
}

static const char *
nonempty_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

const char *
slot_default_selection(const char *sel, const char **from)
{
	static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"};
	const char *v;

	if (sel) {
		*from = "--gpus";
		return sel;
	}
	/* CUDA_VISIBLE_DEVICES set but empty hides every device: keep it, it is an answer */
	if ((v = getenv("CUDA_VISIBLE_DEVICES")) != NULL) {
		*from = vars[0];
		return v;
	}
	for (size_t i = 1; i < sizeof vars / sizeof vars[0]; i++)
		if ((v = nonempty_env(vars[i])) != NULL) {
			*from = vars[i];
			return v;
		}
	*from = "every device";
	return NULL;
}
