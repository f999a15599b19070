/*
 * backend: choosing between the driver and the simulation, and what every
 * snapshot owns.
 */
#include "gpu/backend.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

int
gpu_open(const char *sim_file, struct gpu_backend **out)
{
	const char *env = getenv("GPUPACK_SIM");

	*out = NULL;
	if (sim_file && *sim_file)
		return gpu_sim_open(sim_file, out);
	if (env && *env)
		return gpu_sim_open(env, out);
	return gpu_nvml_open(out);
}

void
gpu_close(struct gpu_backend *b)
{
	if (b && b->close)
		b->close(b);
}

int
gpu_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags)
{
	memset(sys, 0, sizeof *sys);
	if (b->snapshot(b, sys, flags) < 0) {
		gpu_system_free(sys);
		return -1;
	}
	return 0;
}

void
gpu_system_free(struct gpu_system *sys)
{
	for (int i = 0; i < sys->ngpus; i++) {
		free(sys->gpus[i].gi);
		free(sys->gpus[i].profiles);
		free(sys->gpus[i].procs);
	}
	free(sys->gpus);
	memset(sys, 0, sizeof *sys);
}

const char *
compute_mode_name(int mode)
{
	switch (mode) {
	case COMPUTE_DEFAULT: return "default";
	case COMPUTE_EXCLUSIVE_THREAD: return "exclusive-thread";
	case COMPUTE_PROHIBITED: return "prohibited";
	case COMPUTE_EXCLUSIVE_PROCESS: return "exclusive-process";
	default: return "unknown";
	}
}

const char *
mig_mode_name(int mode)
{
	switch (mode) {
	case MIG_ENABLED: return "enabled";
	case MIG_DISABLED: return "disabled";
	default: return "unsupported";
	}
}
