/*
 * usagewatch: reads one device for gpu_usage (see usagewatch.h).
 */
#include "gpu/usagewatch.h"
#include "util/clock.h"
#include "util/err.h"

#include <string.h>

void
gpu_watch_init(struct gpu_usage_watch *w, struct gpu_backend *b, int gpu, int gi_id,
    int (*mine)(pid_t, void *), void *arg)
{
	memset(w, 0, sizeof *w);
	w->b = b;
	w->gpu = gpu;
	w->gi_id = gi_id;
	w->mine = mine;
	w->arg = arg;
	w->dev_peak = -1;
	gpu_usage_init(&w->u);
	/* a MIG device's counter is its whole GPU's */
	w->u.counter_shared = gi_id >= 0;
}

void
gpu_watch_energy(struct gpu_usage_watch *w)
{
	uint64_t mj;
	double t = clock_mono();

	if (!w->b->energy || w->b->energy(w->b, w->gpu, &mj) < 0) {
		err_clear();
		return;
	}
	/* when it was read: mid-call */
	gpu_usage_feed_energy(&w->u, (t + clock_mono()) / 2, mj);
}

void
gpu_watch_procs(struct gpu_usage_watch *w)
{
	struct gpu_sample s;

	if (w->b->sample_procs && w->b->sample_procs(w->b, w->gpu, w->gi_id, &s) == 0) {
		gpu_usage_feed_sample(&w->u, &s, w->mine, w->arg);
		if ((double)s.mem_used > w->dev_peak)
			w->dev_peak = (double)s.mem_used;
		return;
	}
	err_clear();
	gpu_usage_feed_sample(&w->u, NULL, w->mine, w->arg);
	if (w->b->sample && w->b->sample(w->b, w->gpu, w->gi_id, &s) == 0) {
		if ((double)s.mem_used > w->dev_peak)
			w->dev_peak = (double)s.mem_used;
	} else
		err_clear();
}
