/*
 * backend: choosing between the driver and the simulation, and what every
 * snapshot owns.
 */
#include "gpu/backend.h"
#include "util/err.h"
#include "util/str.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUPACK_DATADIR
#define GPUPACK_DATADIR "/usr/local/share/gpupack"
#endif
#ifndef GPUPACK_LIBEXECDIR
#define GPUPACK_LIBEXECDIR "/usr/local/libexec/gpupack"
#endif

/* The directories where installed topologies may be ("" when the binary's own is unknown). */
static int
sim_dirs(char dirs[3][PATH_MAX])
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	int nd = 0;

	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		if (snprintf(dirs[nd], PATH_MAX, "%s/../share/gpupack/topologies", exe) < PATH_MAX)
			nd++;
	}
	snprintf(dirs[nd++], PATH_MAX, "%s", GPUPACK_DATADIR "/topologies");
	if (n > 0 && snprintf(dirs[nd], PATH_MAX, "%s/../topologies", exe) < PATH_MAX)
		nd++;
	return nd;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the installed topologies, ", "-separated, into b (the first directory that has any). */
static void
sim_names(struct sbuf *b)
{
	char dirs[3][PATH_MAX];
	int nd = sim_dirs(dirs);

	for (int i = 0; i < nd && b->len == 0; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		char *names[256];
		int n = 0;

		if (!d)
			continue;
		while ((e = readdir(d)) != NULL && n < 256) {
			size_t len = strlen(e->d_name);

			if (len > 5 && strcmp(e->d_name + len - 5, ".topo") == 0)
				names[n++] = xstrndup(e->d_name, len - 5);
		}
		closedir(d);
		qsort(names, (size_t)n, sizeof *names, by_name);
		for (int k = 0; k < n; k++) {
			sbuf_printf(b, "%s%s", k ? ", " : "", names[k]);
			free(names[k]);
		}
	}
}

/*
 * --sim NAME: a file as given, else a topology by name (h100-80gb, or
 * h100-80gb.topo) among the installed ones: beside the binary
 * (<bin>/../share/gpupack/topologies, so an install can move), where make
 * install put them (GPUPACK_DATADIR), and a build tree's topologies/.
 * Neither: -1, the error listing the names there are.
 */
static int
sim_path(const char *name, char *out, size_t size)
{
	char dirs[3][PATH_MAX];
	int nd;
	struct sbuf known;

	if (strchr(name, '/') || access(name, F_OK) == 0) {
		snprintf(out, size, "%s", name);
		return 0;
	}
	nd = sim_dirs(dirs);
	for (int i = 0; i < nd; i++) {
		for (int ext = 0; ext < 2; ext++) {
			int len = snprintf(out, size, "%s/%s%s", dirs[i], name, ext ? ".topo" : "");

			if (len > 0 && (size_t)len < size && access(out, R_OK) == 0)
				return 0;
		}
	}
	sbuf_init(&known);
	sim_names(&known);
	if (known.len)
		err_set(EXIT_USAGE, "simulated machine '%s': no such file, nor a topology of that name "
		    "(known: %s)", name, known.buf);
	else
		err_set(EXIT_USAGE, "simulated machine '%s': no such file, and no installed topologies "
		    "were found", name);
	sbuf_free(&known);
	return -1;
}

int
gpu_sim_tool(const char *name, const char *build_name, char *out, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	int len;

	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		len = snprintf(out, size, "%s/../libexec/gpupack/%s", exe, name);
		if (len > 0 && (size_t)len < size && access(out, X_OK) == 0)
			return 0;
		len = snprintf(out, size, "%s/tests/tools/%s", exe, build_name);
		if (len > 0 && (size_t)len < size && access(out, X_OK) == 0)
			return 0;
	}
	len = snprintf(out, size, "%s/%s", GPUPACK_LIBEXECDIR, name);
	if (len > 0 && (size_t)len < size && access(out, X_OK) == 0)
		return 0;
	return err_set(EXIT_ENV, "gpupack's %s (the stand-in a simulated machine uses) is not installed "
	    "beside gpupack nor in %s (make install puts it there)", name, GPUPACK_LIBEXECDIR);
}

int
gpu_sim_mps(void)
{
	char path[PATH_MAX];
	const char *env = getenv("GPUPACK_MPS_CONTROL");

	if (env && *env)
		return 0;
	if (gpu_sim_tool("sim-mps-control", "fake-mps-control", path, sizeof path) < 0)
		return -1;
	return setenv("GPUPACK_MPS_CONTROL", path, 1) < 0 ? err_sys(EXIT_INTERNAL, "setenv") : 0;
}

int
gpu_open(const char *sim_file, int in_place, struct gpu_backend **out)
{
	const char *env = getenv("GPUPACK_SIM"), *wenv = getenv("GPUPACK_SIM_WRITE");
	char path[PATH_MAX];

	*out = NULL;
	if (sim_file && *sim_file)
		return sim_path(sim_file, path, sizeof path) < 0 ? -1 : gpu_sim_open(path, in_place, out);
	if (env && *env && wenv && *wenv)
		return err_set(EXIT_USAGE, "GPUPACK_SIM and GPUPACK_SIM_WRITE are both set: name one machine");
	if (wenv && *wenv)
		return sim_path(wenv, path, sizeof path) < 0 ? -1 : gpu_sim_open(path, 1, out);
	if (env && *env)
		return sim_path(env, path, sizeof path) < 0 ? -1 : gpu_sim_open(path, 0, out);
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
