/*
 * nvml_sample: how loaded a device is, for the farm's concurrency
 * controller: the driver's busy share (nvmlDeviceGetUtilizationRates), on
 * Hopper and later the SM activity and occupancy of GPM (two counter
 * samples, rates over the time between them), the device's memory, and the
 * processes with a context on it with their memory: compute processes and,
 * under MPS, the clients (nvmlDeviceGetMPSComputeRunningProcesses_v3).
 * And the energy a GPU used (nvmlDeviceGetTotalEnergyConsumption: a
 * millijoule counter since the driver loaded, Volta and later).
 *
 * A reading the driver refuses is left unknown (-1), never an error: the
 * controller works with what there is. Only a device that cannot be found
 * is an error.
 */
#include "gpu/nvml_lib.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

/*
 * GPM counters are read at most this often: NVIDIA asks for samples at
 * least 100 ms apart, and rates over a shorter span are noise.
 */
#define GPM_MIN_SPAN 0.1

/* The GPM state of one device: its previous sample, the figures it gave. */
struct gpm_dev {
	int gpu, gi_id;
	int off;                 /* not supported here: never asked again */
	nvmlGpmSample_t prev, next;
	double t_prev;           /* 0: no previous sample */
	double sm_active, sm_occupancy, span;
};

struct nvml_gpm {
	struct gpm_dev *dev;
	size_t n, cap;
};

void
nvml_sample_free(struct nvml *n)
{
	if (!n->gpm)
		return;
	for (size_t i = 0; i < n->gpm->n; i++) {
		struct gpm_dev *d = &n->gpm->dev[i];

		if (d->prev && n->GpmSampleFree)
			n->GpmSampleFree(d->prev);
		if (d->next && n->GpmSampleFree)
			n->GpmSampleFree(d->next);
	}
	free(n->gpm->dev);
	free(n->gpm);
	n->gpm = NULL;
}

static struct gpm_dev *
gpm_dev(struct nvml *n, nvmlDevice_t h, int gpu, int gi_id)
{
	struct gpm_dev *d;
	nvmlGpmSupport_t sup = {NVML_GPM_SUPPORT_VERSION, 0};

	if (!n->gpm)
		n->gpm = xcalloc(1, sizeof *n->gpm);
	for (size_t i = 0; i < n->gpm->n; i++)
		if (n->gpm->dev[i].gpu == gpu && n->gpm->dev[i].gi_id == gi_id)
			return &n->gpm->dev[i];
	xgrow(&n->gpm->dev, &n->gpm->cap, n->gpm->n + 1, sizeof *n->gpm->dev);
	d = &n->gpm->dev[n->gpm->n++];
	memset(d, 0, sizeof *d);
	d->gpu = gpu;
	d->gi_id = gi_id;
	d->sm_active = d->sm_occupancy = -1;
	if (!n->GpmQueryDeviceSupport || !n->GpmSampleAlloc || !n->GpmSampleGet ||
	    !n->GpmMetricsGet || !n->GpmSampleFree || (gi_id >= 0 && !n->GpmMigSampleGet) ||
	    n->GpmQueryDeviceSupport(h, &sup) != NVML_SUCCESS || !sup.isSupportedDevice ||
	    n->GpmSampleAlloc(&d->prev) != NVML_SUCCESS || n->GpmSampleAlloc(&d->next) != NVML_SUCCESS)
		d->off = 1;
	return d;
}

static nvmlReturn_t
gpm_take(struct nvml *n, nvmlDevice_t parent, int gi_id, nvmlGpmSample_t s)
{
	return gi_id >= 0 ? n->GpmMigSampleGet(parent, (unsigned)gi_id, s) : n->GpmSampleGet(parent, s);
}

/* SM activity and occupancy since the previous call (at least GPM_MIN_SPAN ago). */
static void
gpm_read(struct nvml *n, nvmlDevice_t parent, int gpu, int gi_id, struct gpu_sample *s)
{
	struct gpm_dev *d = gpm_dev(n, parent, gpu, gi_id);
	nvmlGpmMetricsGet_t *m;
	nvmlGpmSample_t t;
	double now = clock_mono();

	if (d->off)
		return;
	if (d->t_prev > 0 && now - d->t_prev < GPM_MIN_SPAN)
		goto out;
	if (gpm_take(n, parent, gi_id, d->next) != NVML_SUCCESS) {
		/* a driver that lists GPM but refuses it (no permission, a VM): stop asking */
		d->off = 1;
		return;
	}
	if (d->t_prev > 0) {
		m = xcalloc(1, sizeof *m);
		m->version = NVML_GPM_METRICS_GET_VERSION;
		m->numMetrics = 2;
		m->sample1 = d->prev;
		m->sample2 = d->next;
		m->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
		m->metrics[1].metricId = NVML_GPM_METRIC_SM_OCCUPANCY;
		d->sm_active = d->sm_occupancy = -1;
		if (n->GpmMetricsGet(m) == NVML_SUCCESS) {
			if (m->metrics[0].nvmlReturn == NVML_SUCCESS)
				d->sm_active = m->metrics[0].value / 100.0;
			if (m->metrics[1].nvmlReturn == NVML_SUCCESS)
				d->sm_occupancy = m->metrics[1].value / 100.0;
			d->span = now - d->t_prev;
		}
		free(m);
	}
	t = d->prev;
	d->prev = d->next;
	d->next = t;
	d->t_prev = now;
out:
	s->sm_active = d->sm_active;
	s->sm_occupancy = d->sm_occupancy;
	s->gpm_span = d->sm_active >= 0 ? d->span : 0;
}

/*
 * Add the processes one list call gives (compute or MPS), without repeating a
 * pid. The driver fills nothing when there are more than the buffer holds
 * (INSUFFICIENT_SIZE, with the count needed): ask again with room for them
 * all; the first GPU_SAMPLE_PROCS are enough to learn a footprint. Returns
 * the driver's answer (NVML_SUCCESS: the list was added); s is untouched
 * unless it answered.
 */
static nvmlReturn_t
add_procs(nvmlReturn_t (*list)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v2_t *), nvmlDevice_t h,
    struct gpu_sample *s)
{
	nvmlProcessInfo_v2_t *v = NULL;
	unsigned count = GPU_SAMPLE_PROCS;
	nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;

	if (!list)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	for (int tries = 0; tries < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
		unsigned want = count + 8;   /* room for processes that start meanwhile */

		v = xrealloc(v, (size_t)want * sizeof *v);
		memset(v, 0, (size_t)want * sizeof *v);
		count = want;
		rc = list(h, &count, v);
	}
	if (rc != NVML_SUCCESS) {
		free(v);
		return rc;
	}
	if (s->nprocs < 0)
		s->nprocs = 0;
	for (unsigned i = 0; i < count && i < GPU_SAMPLE_PROCS; i++) {
		int j;

		for (j = 0; j < s->nprocs; j++)
			if (s->procs[j].pid == (pid_t)v[i].pid)
				break;
		if (j < s->nprocs || s->nprocs >= GPU_SAMPLE_PROCS)
			continue;
		s->procs[j].pid = (pid_t)v[i].pid;
		s->procs[j].mem = v[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL ? 0 : v[i].usedGpuMemory;
		s->nprocs++;
	}
	free(v);
	return NVML_SUCCESS;
}

/*
 * The processes on dev: the compute list and, under MPS, the clients' list.
 * Either list failing leaves the figure unknown (-1), never a partial
 * count: without the compute list, the MPS list's answer (often none)
 * would call a busy device empty. A driver without the MPS list (an older
 * one) or one that does not support it there answers with the compute
 * list alone.
 */
static void
list_procs(struct nvml *n, nvmlDevice_t dev, struct gpu_sample *s)
{
	nvmlReturn_t rc;

	if (add_procs(n->GetComputeRunningProcesses, dev, s) != NVML_SUCCESS) {
		s->nprocs = -1;
		return;
	}
	rc = add_procs(n->GetMPSComputeRunningProcesses, dev, s);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_NOT_SUPPORTED)
		s->nprocs = -1;
}

/* The MIG device handle of GPU instance gi_id; -1 when there is none. */
static int
mig_handle(struct nvml *n, nvmlDevice_t h, int gi_id, nvmlDevice_t *out)
{
	unsigned max = 0;

	if (!n->GetMaxMigDeviceCount || !n->GetMigDeviceHandleByIndex || !n->GetGpuInstanceId ||
	    n->GetMaxMigDeviceCount(h, &max) != NVML_SUCCESS)
		return -1;
	for (unsigned i = 0; i < max; i++) {
		unsigned id;

		if (n->GetMigDeviceHandleByIndex(h, i, out) == NVML_SUCCESS &&
		    n->GetGpuInstanceId(*out, &id) == NVML_SUCCESS && (int)id == gi_id)
			return 0;
	}
	return -1;
}

/* The device's memory and processes into s; *h its GPU's handle. -1 (err set) without the device. */
static int
memory_procs(struct nvml *n, int gpu, int gi_id, struct gpu_sample *s, nvmlDevice_t *h)
{
	nvmlDevice_t dev;
	uint64_t reserved;

	memset(s, 0, sizeof *s);
	s->busy = s->sm_active = s->sm_occupancy = -1;
	s->nprocs = -1;
	if (nvml_handle(n, gpu, h) < 0)
		return -1;
	dev = *h;
	if (gi_id >= 0 && mig_handle(n, *h, gi_id, &dev) < 0)
		return err_set(EXIT_ENV, "GPU %d: no MIG device of GPU instance %d", gpu, gi_id);
	if (nvml_memory(n, dev, gpu, &s->mem_total, &s->mem_used, &s->mem_free, &reserved) < 0) {
		err_clear();
		s->mem_total = s->mem_used = s->mem_free = 0;
	}
	list_procs(n, dev, s);
	return 0;
}

int
nvml_sample(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlUtilization_t u;

	if (memory_procs(n, gpu, gi_id, s, &h) < 0)
		return -1;
	/* the driver keeps no busy share for a MIG device: NOT_SUPPORTED there */
	if (gi_id < 0 && n->GetUtilizationRates && n->GetUtilizationRates(h, &u) == NVML_SUCCESS &&
	    u.gpu <= 100)
		s->busy = u.gpu / 100.0;
	gpm_read(n, h, gpu, gi_id, s);
	return 0;
}

int
nvml_sample_procs(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s)
{
	nvmlDevice_t h;

	return memory_procs(b->priv, gpu, gi_id, s, &h);
}

int
nvml_energy(struct gpu_backend *b, int gpu, uint64_t *mj)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	unsigned long long v = 0;
	nvmlReturn_t rc;

	if (!n->GetTotalEnergyConsumption)
		return nvml_missing("nvmlDeviceGetTotalEnergyConsumption");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	if ((rc = n->GetTotalEnergyConsumption(h, &v)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetTotalEnergyConsumption", gpu, rc, FAIL_READ);
	*mj = v;
	return 0;
}

int
nvml_proc_util(struct gpu_backend *b, int gpu, uint64_t *since_us, struct gpu_proc_util *u, int max)
{
	struct nvml *n = b->priv;
	nvmlProcessUtilizationSample_t *v = NULL;
	nvmlDevice_t h;
	unsigned count = 0;
	nvmlReturn_t rc;
	int nu = 0;

	if (!n->GetProcessUtilization)
		return nvml_missing("nvmlDeviceGetProcessUtilization");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	/* the count first (a NULL buffer), then room for samples that arrive meanwhile */
	rc = n->GetProcessUtilization(h, NULL, &count, *since_us);
	if (rc == NVML_ERROR_NOT_FOUND)
		return 0;
	for (int tries = 0; tries < 4 && (rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_SUCCESS); tries++) {
		unsigned want = count + 16;

		v = xrealloc(v, (size_t)want * sizeof *v);
		memset(v, 0, (size_t)want * sizeof *v);
		count = want;
		rc = n->GetProcessUtilization(h, v, &count, *since_us);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
	}
	if (rc == NVML_ERROR_NOT_FOUND) {
		free(v);
		return 0;
	}
	if (rc != NVML_SUCCESS) {
		free(v);
		return nvml_fail(n, "nvmlDeviceGetProcessUtilization", gpu, rc, FAIL_READ);
	}
	for (unsigned i = 0; i < count; i++) {
		int j;

		if (v[i].timeStamp > *since_us)
			*since_us = v[i].timeStamp;
		for (j = 0; j < nu; j++)
			if (u[j].pid == (pid_t)v[i].pid)
				break;
		if (j == nu) {
			if (nu >= max)
				continue;
			u[nu++] = (struct gpu_proc_util){(pid_t)v[i].pid, 0, 0};
		}
		/* a running mean of the process's samples */
		u[j].samples++;
		u[j].sm += ((v[i].smUtil > 100 ? 100 : v[i].smUtil) / 100.0 - u[j].sm) / u[j].samples;
	}
	free(v);
	return nu;
}
