/*
 * backend: choosing between the driver and the simulation, and what every
 * snapshot owns.
 */
#include "gpu/backend.h"
#include "util/err.h"
#include "util/str.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUPACK_DATADIR
#define GPUPACK_DATADIR "/usr/local/share/gpupack"
#endif

/*
 * --sim NAME: a file as given, else a topology by name (h100-80gb, or
 * h100-80gb.topo) among the installed ones: beside the binary
 * (<bin>/../share/gpupack/topologies, so an install can move), where make
 * install put them (GPUPACK_DATADIR), and a build tree's topologies/.
 */
static const char *
sim_path(const char *name, char *out, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;
	const char *dirs[3];
	int nd = 0;

	if (strchr(name, '/') || access(name, F_OK) == 0)
		return name;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
	} else {
		exe[0] = '\0';
	}
	dirs[nd++] = "share";
	dirs[nd++] = GPUPACK_DATADIR "/topologies";
	dirs[nd++] = "tree";
	for (int i = 0; i < nd; i++) {
		for (int ext = 0; ext < 2; ext++) {
			const char *suffix = ext ? ".topo" : "";

			if (strcmp(dirs[i], "share") == 0)
				snprintf(out, size, "%s/../share/gpupack/topologies/%s%s", exe, name, suffix);
			else if (strcmp(dirs[i], "tree") == 0)
				snprintf(out, size, "%s/../topologies/%s%s", exe, name, suffix);
			else
				snprintf(out, size, "%s/%s%s", dirs[i], name, suffix);
			if ((dirs[i][0] == '/' || exe[0]) && access(out, R_OK) == 0)
				return out;
		}
	}
	return name;   /* not found: the error names what was asked */
}

int
gpu_open(const char *sim_file, int in_place, struct gpu_backend **out)
{
	const char *env = getenv("GPUPACK_SIM"), *wenv = getenv("GPUPACK_SIM_WRITE");
	char path[PATH_MAX];

	*out = NULL;
	if (sim_file && *sim_file)
		return gpu_sim_open(sim_path(sim_file, path, sizeof path), in_place, out);
	if (env && *env && wenv && *wenv)
		return err_set(EXIT_USAGE, "GPUPACK_SIM and GPUPACK_SIM_WRITE are both set: name one machine");
	if (wenv && *wenv)
		return gpu_sim_open(sim_path(wenv, path, sizeof path), 1, out);
	if (env && *env)
		return gpu_sim_open(sim_path(env, path, sizeof path), 0, out);
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
