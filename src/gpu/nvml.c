/*
 * nvml: the driver backend, as the ops table of struct gpu_backend. The work
 * is in nvml_lib.c (loading libnvidia-ml.so.1 with dlopen, one-line errors),
 * nvml_device.c (reading GPUs), nvml_mig.c (MIG instances and changes) and
 * nvml_sample.c (how loaded a device is and the energy it used, for the
 * farm's controller).
 */
#include "gpu/backend.h"
#include "gpu/nvml.h"
#include "gpu/nvml_lib.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

static int
nvml_utilization(struct gpu_backend *b, int gpu, unsigned *gpu_pct, unsigned *mem_pct)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlUtilization_t u;
	nvmlReturn_t rc;

	if (!n->GetUtilizationRates)
		return nvml_missing("nvmlDeviceGetUtilizationRates");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	memset(&u, 0, sizeof u);
	if ((rc = n->GetUtilizationRates(h, &u)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetUtilizationRates", gpu, rc, FAIL_READ);
	*gpu_pct = u.gpu;
	*mem_pct = u.memory;
	return 0;
}

static void
nvml_close(struct gpu_backend *b)
{
	nvml_free(b->priv);
	free(b);
}

int
gpu_nvml_open(struct gpu_backend **out)
{
	struct nvml *n = xcalloc(1, sizeof *n);
	struct gpu_backend *b;

	*out = NULL;
	if (nvml_load(n) < 0 || nvml_init(n) < 0) {
		nvml_free(n);
		return -1;
	}
	b = xcalloc(1, sizeof *b);
	b->name = "nvml";
	b->priv = n;
	b->snapshot = nvml_snapshot;
	b->set_mig_mode = nvml_set_mig_mode;
	b->create_gi = nvml_create_gi;
	b->create_ci = nvml_create_ci;
	b->destroy_ci = nvml_destroy_ci;
	b->destroy_gi = nvml_destroy_gi;
	b->utilization = nvml_utilization;
	b->sample = nvml_sample;
	b->sample_procs = nvml_sample_procs;
	b->energy = nvml_energy;
	b->proc_util = nvml_proc_util;
	b->close = nvml_close;
	*out = b;
	return 0;
}
