/*
 * usagewatch: reads one device for gpu_usage (gpu/usage.h) while a command
 * or a job runs: its energy counter and its processes. Shared by `mps exec
 * --usage` (src/cmd/mps.c) and the Slurm plugin's per-job sampler
 * (src/slurm/jobusage.c); the caller decides how often.
 */
#ifndef GPUPACK_GPU_USAGEWATCH_H
#define GPUPACK_GPU_USAGEWATCH_H

#include "gpu/backend.h"
#include "gpu/usage.h"

struct gpu_usage_watch {
	struct gpu_backend *b;
	int gpu, gi_id;                   /* driver index; GPU instance id, -1 a whole GPU */
	int (*mine)(pid_t pid, void *arg); /* is pid one of the watched command's or job's */
	void *arg;
	double dev_peak;                  /* the device's used memory at its most; -1 never read */
	struct gpu_usage u;
};

/* Ready to watch device gpu (gi_id: its GPU instance, -1 the whole GPU) through b. */
void gpu_watch_init(struct gpu_usage_watch *w, struct gpu_backend *b, int gpu, int gi_id,
    int (*mine)(pid_t, void *), void *arg);
/* One reading of the energy counter (none where the device keeps none). */
void gpu_watch_energy(struct gpu_usage_watch *w);
/*
 * One sample of the device's processes; where the driver gives no
 * per-process list, the device's used memory alone (dev_peak).
 */
void gpu_watch_procs(struct gpu_usage_watch *w);

#endif
