/*
 * nvml_mig: MIG through NVML: the GPU and compute instances a GPU holds (as
 * MIG device handles show them to anyone, and as the privileged calls add
 * detail to), and the changes: MIG mode, creating and destroying instances.
 */
#include "gpu/backend.h"
#include "gpu/nvml_lib.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct mig_profile *
profile_by_id(const struct mig_profile *v, int nv, unsigned id)
{
	for (int i = 0; i < nv; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

/* ---- MIG instances ------------------------------------------------------ */

static struct mig_gi *
gi_find(struct gpu_info *g, unsigned id)
{
	for (int i = 0; i < g->ngi; i++)
		if (g->gi[i].id == id)
			return &g->gi[i];
	return NULL;
}

static struct mig_gi *
gi_add(struct gpu_info *g, unsigned id, size_t *cap)
{
	struct mig_gi *gi = gi_find(g, id);

	if (gi)
		return gi;
	xgrow(&g->gi, cap, (size_t)g->ngi + 1, sizeof *g->gi);
	gi = &g->gi[g->ngi++];
	memset(gi, 0, sizeof *gi);
	gi->id = id;
	gi->profile_index = -1;
	return gi;
}

static void
gi_fill_info(struct nvml *n, nvmlGpuInstance_t h, struct mig_gi *gi, const struct mig_profile *pv,
    int npv)
{
	nvmlGpuInstanceInfo_t info;
	const struct mig_profile *p;

	memset(&info, 0, sizeof info);
	if (!n->GpuInstanceGetInfo || n->GpuInstanceGetInfo(h, &info) != NVML_SUCCESS)
		return;
	gi->profile_id = info.profileId;
	gi->placement.start = info.placement.start;
	gi->placement.size = info.placement.size;
	p = profile_by_id(pv, npv, info.profileId);
	if (!p)
		return;
	gi->profile_index = p->index;
	str_copy(gi->profile, p->name, sizeof gi->profile);
	gi->sms = p->sms;
	if (!gi->mem_total)
		gi->mem_total = p->mem_bytes;
}

/*
 * GPU instances by profile: the only way to see one that has no compute
 * instance yet. Needs root (or the MIG monitor capability): without it the
 * MIG device handles below still find every instance in use.
 */
static void
gis_by_profile(struct nvml *n, nvmlDevice_t h, struct gpu_info *g, size_t *cap,
    const struct mig_profile *pv, int npv)
{
	if (!n->GetGpuInstances)
		return;
	for (int i = 0; i < npv; i++) {
		nvmlGpuInstance_t gis[MIG_MAX_PLACEMENTS * 2];
		unsigned count = sizeof gis / sizeof gis[0];

		if (n->GetGpuInstances(h, pv[i].id, gis, &count) != NVML_SUCCESS)
			continue;
		for (unsigned k = 0; k < count; k++) {
			nvmlGpuInstanceInfo_t info;

			memset(&info, 0, sizeof info);
			if (!n->GpuInstanceGetInfo || n->GpuInstanceGetInfo(gis[k], &info) != NVML_SUCCESS)
				continue;
			gi_fill_info(n, gis[k], gi_add(g, info.id, cap), pv, npv);
		}
	}
}

/* The compute-instance profile index of a CI, by matching profile ids. */
static int
ci_profile_index(struct nvml *n, nvmlGpuInstance_t gih, unsigned ci_id)
{
	nvmlComputeInstance_t cih;
	nvmlComputeInstanceInfo_t info;

	if (!n->GpuInstanceGetComputeInstanceById || !n->ComputeInstanceGetInfo ||
	    !n->GpuInstanceGetComputeInstanceProfileInfo)
		return -1;
	if (n->GpuInstanceGetComputeInstanceById(gih, ci_id, &cih) != NVML_SUCCESS)
		return -1;
	memset(&info, 0, sizeof info);
	if (n->ComputeInstanceGetInfo(cih, &info) != NVML_SUCCESS)
		return -1;
	for (int p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
		nvmlComputeInstanceProfileInfo_t pi;

		memset(&pi, 0, sizeof pi);
		if (n->GpuInstanceGetComputeInstanceProfileInfo(gih, (unsigned)p,
		    NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &pi) == NVML_SUCCESS && pi.id == info.profileId)
			return p;
	}
	return -1;
}

/* What the privileged calls add to instances found through MIG devices. */
static void
gi_details(struct nvml *n, nvmlDevice_t h, struct mig_gi *gi, const struct mig_profile *pv, int npv)
{
	nvmlGpuInstance_t gih;

	if (!n->GetGpuInstanceById || n->GetGpuInstanceById(h, gi->id, &gih) != NVML_SUCCESS)
		return;
	if (gi->profile_index < 0)
		gi_fill_info(n, gih, gi, pv, npv);
	for (int k = 0; k < gi->nci; k++)
		gi->ci[k].profile_index = ci_profile_index(n, gih, gi->ci[k].id);
}

/* One MIG device (a compute instance as CUDA sees it): 1 added, 0 none at idx. */
static int
mig_device(struct nvml *n, nvmlDevice_t h, int gpu, unsigned idx, struct gpu_info *g, size_t *cap)
{
	nvmlDevice_t mh;
	nvmlDeviceAttributes_t a;
	unsigned gi_id, ci_id;
	uint64_t total, used, free_, reserved;
	struct mig_gi *gi;
	struct mig_ci *ci;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlReturn_t rc;

	rc = n->GetMigDeviceHandleByIndex(h, idx, &mh);
	if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
		return 0;
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetMigDeviceHandleByIndex", gpu, rc, FAIL_READ);
	if ((rc = n->GetGpuInstanceId(mh, &gi_id)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetGpuInstanceId", gpu, rc, FAIL_READ);
	if ((rc = n->GetComputeInstanceId(mh, &ci_id)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetComputeInstanceId", gpu, rc, FAIL_READ);
	if ((rc = n->GetUUID(mh, uuid, sizeof uuid)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetUUID (MIG device)", gpu, rc, FAIL_READ);
	uuid[sizeof uuid - 1] = '\0';
	if (nvml_memory(n, mh, gpu, &total, &used, &free_, &reserved) < 0)
		return -1;
	nvml_attributes(n, mh, &a);
	gi = gi_add(g, gi_id, cap);
	gi->mem_total = total;
	gi->mem_used = used;
	if (gi->nci >= MIG_MAX_CI)
		return 1;
	ci = &gi->ci[gi->nci++];
	memset(ci, 0, sizeof *ci);
	ci->id = ci_id;
	ci->profile_index = -1;
	ci->slices = (int)a.computeInstanceSliceCount;
	ci->sms = (int)a.multiprocessorCount;
	str_copy(ci->uuid, uuid, sizeof ci->uuid);
	return 1;
}

static int
gi_cmp(const void *a, const void *b)
{
	const struct mig_gi *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int
nvml_mig_instances(struct nvml *n, nvmlDevice_t h, int gpu, struct gpu_info *g,
    const struct mig_profile *pv, int npv)
{
	unsigned max = 0;
	size_t cap = 0;
	nvmlReturn_t rc;

	if (!n->GetMaxMigDeviceCount || !n->GetMigDeviceHandleByIndex || !n->GetGpuInstanceId ||
	    !n->GetComputeInstanceId)
		return nvml_missing("nvmlDeviceGetMigDeviceHandleByIndex");
	gis_by_profile(n, h, g, &cap, pv, npv);
	if ((rc = n->GetMaxMigDeviceCount(h, &max)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetMaxMigDeviceCount", gpu, rc, FAIL_READ);
	for (unsigned i = 0; i < max; i++)
		if (mig_device(n, h, gpu, i, g, &cap) < 0)
			return -1;
	for (int i = 0; i < g->ngi; i++) {
		struct mig_gi *gi = &g->gi[i];

		gi_details(n, h, gi, pv, npv);
		if (!gi->sms)
			for (int k = 0; k < gi->nci; k++)
				gi->sms += gi->ci[k].sms;
	}
	if (g->ngi > 1)
		qsort(g->gi, (size_t)g->ngi, sizeof *g->gi, gi_cmp);
	return 0;
}

int
nvml_set_mig_mode(struct gpu_backend *b, int gpu, int enable)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlReturn_t rc, activation = NVML_SUCCESS;

	if (!n->SetMigMode)
		return nvml_missing("nvmlDeviceSetMigMode");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	rc = n->SetMigMode(h, enable ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &activation);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceSetMigMode", gpu, rc, FAIL_REQUEST);
	if (activation != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceSetMigMode (activation)", gpu, activation, FAIL_REQUEST);
	return 0;
}

int
nvml_create_gi(struct gpu_backend *b, int gpu, unsigned profile_id, const struct mig_placement *where,
    unsigned *gi_id)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlGpuInstance_t gih;
	nvmlGpuInstancePlacement_t pl;
	nvmlGpuInstanceInfo_t info;
	nvmlReturn_t rc;

	if (!n->CreateGpuInstanceWithPlacement || !n->GpuInstanceGetInfo)
		return nvml_missing("nvmlDeviceCreateGpuInstanceWithPlacement");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	pl.start = where->start;
	pl.size = where->size;
	rc = n->CreateGpuInstanceWithPlacement(h, profile_id, &pl, &gih);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceCreateGpuInstanceWithPlacement", gpu, rc, FAIL_REQUEST);
	memset(&info, 0, sizeof info);
	if ((rc = n->GpuInstanceGetInfo(gih, &info)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlGpuInstanceGetInfo", gpu, rc, FAIL_READ);
	*gi_id = info.id;
	return 0;
}

static int
gi_by_id(struct nvml *n, int gpu, unsigned gi_id, nvmlGpuInstance_t *gih)
{
	nvmlDevice_t h;
	nvmlReturn_t rc;

	if (!n->GetGpuInstanceById)
		return nvml_missing("nvmlDeviceGetGpuInstanceById");
	if (nvml_handle(n, gpu, &h) < 0)
		return -1;
	rc = n->GetGpuInstanceById(h, gi_id, gih);
	if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: no GPU instance %u", gpu, gi_id);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetGpuInstanceById", gpu, rc, FAIL_READ);
	return 0;
}

/*
 * The compute-instance profile that spans the whole GPU instance: the one
 * with the most slices this GPU instance supports.
 */
static int
whole_ci_profile(struct nvml *n, int gpu, nvmlGpuInstance_t gih, unsigned *profile_id)
{
	unsigned best = 0;
	int found = 0;

	if (!n->GpuInstanceGetComputeInstanceProfileInfo)
		return nvml_missing("nvmlGpuInstanceGetComputeInstanceProfileInfo");
	for (int p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
		nvmlComputeInstanceProfileInfo_t pi;
		nvmlReturn_t rc;

		memset(&pi, 0, sizeof pi);
		rc = n->GpuInstanceGetComputeInstanceProfileInfo(gih, (unsigned)p,
		    NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &pi);
		if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (rc != NVML_SUCCESS)
			return nvml_fail(n, "nvmlGpuInstanceGetComputeInstanceProfileInfo", gpu, rc, FAIL_READ);
		if (!found || pi.sliceCount > best) {
			best = pi.sliceCount;
			*profile_id = pi.id;
			found = 1;
		}
	}
	if (!found)
		return err_set(EXIT_ENV, "GPU %d: the driver offers no compute-instance profile", gpu);
	return 0;
}

int
nvml_create_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned *ci_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlComputeInstance_t cih;
	nvmlComputeInstanceInfo_t info;
	unsigned profile_id = 0;
	nvmlReturn_t rc;

	if (!n->GpuInstanceCreateComputeInstance || !n->ComputeInstanceGetInfo)
		return nvml_missing("nvmlGpuInstanceCreateComputeInstance");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0 || whole_ci_profile(n, gpu, gih, &profile_id) < 0)
		return -1;
	rc = n->GpuInstanceCreateComputeInstance(gih, profile_id, &cih);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlGpuInstanceCreateComputeInstance", gpu, rc, FAIL_REQUEST);
	memset(&info, 0, sizeof info);
	if ((rc = n->ComputeInstanceGetInfo(cih, &info)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlComputeInstanceGetInfo_v2", gpu, rc, FAIL_READ);
	*ci_id = info.id;
	return 0;
}

int
nvml_destroy_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned ci_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlComputeInstance_t cih;
	nvmlReturn_t rc;

	if (!n->GpuInstanceGetComputeInstanceById || !n->ComputeInstanceDestroy)
		return nvml_missing("nvmlComputeInstanceDestroy");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0)
		return -1;
	rc = n->GpuInstanceGetComputeInstanceById(gih, ci_id, &cih);
	if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: GPU instance %u has no compute instance %u", gpu, gi_id,
		    ci_id);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlGpuInstanceGetComputeInstanceById", gpu, rc, FAIL_READ);
	if ((rc = n->ComputeInstanceDestroy(cih)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlComputeInstanceDestroy", gpu, rc, FAIL_REQUEST);
	return 0;
}

int
nvml_destroy_gi(struct gpu_backend *b, int gpu, unsigned gi_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlReturn_t rc;

	if (!n->GpuInstanceDestroy)
		return nvml_missing("nvmlGpuInstanceDestroy");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0)
		return -1;
	if ((rc = n->GpuInstanceDestroy(gih)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlGpuInstanceDestroy", gpu, rc, FAIL_REQUEST);
	return 0;
}
