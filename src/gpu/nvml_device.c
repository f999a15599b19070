/*
 * nvml_device: reading one GPU through NVML into struct gpu_info: name,
 * uuid, memory, SMs, compute and MIG modes, the MIG profile table, and the
 * processes on it; and the snapshot of every GPU. Calls that only add detail
 * (placement of a GPU instance, PCI id, ...) degrade to "unknown" instead of
 * failing: some need root, some are missing on older drivers.
 */
#include "gpu/backend.h"
#include "gpu/nvml.h"
#include "gpu/nvml_lib.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

/*
 * The profile name when the driver gives none (nvmlGpuInstanceProfileInfo
 * v1): slices and memory rounded up to whole GiB, with the variant suffix
 * nvidia-smi uses. The driver's own name (v2) is preferred: its memory
 * figure is the marketing size, which no formula reproduces on every
 * product (the H200's 16 GiB slice is "1g.18gb").
 */
void
gpu_nvml_profile_name(int index, unsigned slices, unsigned long long mem_mib, char *buf, size_t size)
{
	const char *suffix = "";
	unsigned long long gb = (mem_mib + 1023) / 1024;

	switch (index) {
	case NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1:
	case NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		suffix = "+me";
		break;
	case NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX:
	case NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX:
	case NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		suffix = "+gfx";
		break;
	case NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME:
	case NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		suffix = "-me";
		break;
	case NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME:
	case NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		suffix = "+me.all";
		break;
	default:
		break;
	}
	snprintf(buf, size, "%ug.%llugb%s", slices, gb, suffix);
}

/* The driver's profile name without its "MIG " prefix. */
void
gpu_nvml_strip_name(const char *name, char *buf, size_t size)
{
	while (*name == ' ')
		name++;
	if (strncmp(name, "MIG ", 4) == 0)
		name += 4;
	while (*name == ' ')
		name++;
	str_copy(buf, name, size);
}

/* ---- one GPU ---------------------------------------------------------- */

int
nvml_memory(struct nvml *n, nvmlDevice_t h, int gpu, uint64_t *total, uint64_t *used,
    uint64_t *free_, uint64_t *reserved)
{
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;

	if (n->GetMemoryInfo_v2) {
		nvmlMemory_v2_t m;

		memset(&m, 0, sizeof m);
		m.version = nvmlMemory_v2;
		rc = n->GetMemoryInfo_v2(h, &m);
		if (rc == NVML_SUCCESS) {
			*total = m.total;
			*used = m.used;
			*free_ = m.free;
			*reserved = m.reserved;
			return 0;
		}
	}
	/* older drivers: no v2 symbol, or one that does not know this version */
	if (n->GetMemoryInfo && (rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
	    rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH || rc == NVML_ERROR_NOT_SUPPORTED)) {
		nvmlMemory_t m;

		memset(&m, 0, sizeof m);
		rc = n->GetMemoryInfo(h, &m);
		if (rc == NVML_SUCCESS) {
			*total = m.total;
			*used = m.used;
			*free_ = m.free;
			*reserved = 0;
			return 0;
		}
		return nvml_fail(n, "nvmlDeviceGetMemoryInfo", gpu, rc, FAIL_READ);
	}
	if (rc == NVML_ERROR_FUNCTION_NOT_FOUND)
		return nvml_missing("nvmlDeviceGetMemoryInfo_v2");
	return nvml_fail(n, "nvmlDeviceGetMemoryInfo_v2", gpu, rc, FAIL_READ);
}

int
nvml_attributes(struct nvml *n, nvmlDevice_t h, nvmlDeviceAttributes_t *a)
{
	memset(a, 0, sizeof *a);
	if (!n->GetAttributes)
		return -1;
	return n->GetAttributes(h, a) == NVML_SUCCESS ? 0 : -1;
}

/* CUDA cores per SM by compute capability, as CUDA's samples tabulate them; 0 unknown. */
int
gpu_nvml_cores_per_sm(int major, int minor)
{
	if (major == 7 || (major == 8 && minor == 0))
		return 64;      /* Volta, Turing, GA100 */
	if (major == 6)
		return minor == 0 ? 64 : 128;
	if (major >= 8 && major <= 12)
		return 128;     /* GA10x, Ada, Hopper, Blackwell */
	return 0;
}

/*
 * SMs of a whole GPU. nvmlDeviceGetAttributes_v2 is documented for MIG
 * device handles only; where it does not answer for a whole GPU, the core
 * count over the cores per SM of its architecture does (H100: 16896 / 128).
 */
static int
gpu_sms(struct nvml *n, nvmlDevice_t h, const struct gpu_info *g)
{
	nvmlDeviceAttributes_t a;
	unsigned cores = 0;
	int per_sm = gpu_nvml_cores_per_sm(g->cc_major, g->cc_minor);

	if (nvml_attributes(n, h, &a) == 0 && a.multiprocessorCount)
		return (int)a.multiprocessorCount;
	if (!n->GetNumGpuCores || per_sm == 0 || n->GetNumGpuCores(h, &cores) != NVML_SUCCESS)
		return 0;
	return (int)cores / per_sm;
}

static int
compute_mode(struct nvml *n, nvmlDevice_t h)
{
	int mode;

	if (!n->GetComputeMode || n->GetComputeMode(h, &mode) != NVML_SUCCESS)
		return COMPUTE_UNKNOWN;
	if (mode < COMPUTE_DEFAULT || mode > COMPUTE_EXCLUSIVE_PROCESS)
		return COMPUTE_UNKNOWN;
	return mode;
}

static int
mig_modes(struct nvml *n, nvmlDevice_t h, int gpu, struct gpu_info *g)
{
	unsigned cur, pend;
	nvmlReturn_t rc;

	g->mig_current = g->mig_pending = MIG_UNSUPPORTED;
	if (!n->GetMigMode)
		return 0;
	rc = n->GetMigMode(h, &cur, &pend);
	if (rc == NVML_ERROR_NOT_SUPPORTED)
		return 0;
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetMigMode", gpu, rc, FAIL_READ);
	g->mig_current = cur == NVML_DEVICE_MIG_ENABLE ? MIG_ENABLED : MIG_DISABLED;
	g->mig_pending = pend == NVML_DEVICE_MIG_ENABLE ? MIG_ENABLED : MIG_DISABLED;
	return 0;
}

/* One GPU-instance profile: 1 filled, 0 not on this GPU, -1 error. */
static int
profile_info(struct nvml *n, nvmlDevice_t h, int gpu, int index, struct mig_profile *p)
{
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	nvmlGpuInstanceProfileInfo_v2_t v2;

	memset(p, 0, sizeof *p);
	memset(&v2, 0, sizeof v2);
	if (n->GetGpuInstanceProfileInfoV) {
		v2.version = nvmlGpuInstanceProfileInfo_v2;
		rc = n->GetGpuInstanceProfileInfoV(h, (unsigned)index, &v2);
	}
	if ((rc == NVML_ERROR_FUNCTION_NOT_FOUND || rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) &&
	    n->GetGpuInstanceProfileInfo) {
		nvmlGpuInstanceProfileInfo_t v1;

		memset(&v1, 0, sizeof v1);
		rc = n->GetGpuInstanceProfileInfo(h, (unsigned)index, &v1);
		v2.id = v1.id;
		v2.sliceCount = v1.sliceCount;
		v2.instanceCount = v1.instanceCount;
		v2.multiprocessorCount = v1.multiprocessorCount;
		v2.copyEngineCount = v1.copyEngineCount;
		v2.memorySizeMB = v1.memorySizeMB;
		v2.name[0] = '\0';
	}
	/* indices this GPU (or this driver) does not have */
	if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT ||
	    rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
		return 0;
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetGpuInstanceProfileInfoV", gpu, rc, FAIL_READ);
	p->index = index;
	p->id = v2.id;
	v2.name[sizeof v2.name - 1] = '\0';
	if (v2.name[0])
		gpu_nvml_strip_name(v2.name, p->name, sizeof p->name);
	else
		gpu_nvml_profile_name(index, v2.sliceCount, v2.memorySizeMB, p->name, sizeof p->name);
	p->slices = (int)v2.sliceCount;
	p->copy_engines = (int)v2.copyEngineCount;
	p->mem_bytes = (uint64_t)v2.memorySizeMB << 20;
	p->sms = (int)v2.multiprocessorCount;
	p->max_count = (int)v2.instanceCount;
	return 1;
}

/* Placements of one profile; where NVML will not say (root only), none. */
static int
placements(struct nvml *n, nvmlDevice_t h, int gpu, struct mig_profile *p)
{
	nvmlGpuInstancePlacement_t pl[32];
	unsigned count = sizeof pl / sizeof pl[0];
	nvmlReturn_t rc;

	p->nplacements = 0;
	if (!n->GetGpuInstancePossiblePlacements)
		return 0;
	rc = n->GetGpuInstancePossiblePlacements(h, p->id, pl, &count);
	if (rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_NOT_SUPPORTED)
		return 0;
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", gpu, rc, FAIL_READ);
	for (unsigned i = 0; i < count && i < MIG_MAX_PLACEMENTS; i++) {
		p->placements[i].start = pl[i].start;
		p->placements[i].size = pl[i].size;
		p->nplacements++;
	}
	return 0;
}

/* The profile table; placements only when asked for (they cost a call each). */
static int
profiles(struct nvml *n, nvmlDevice_t h, int gpu, int with_placements, struct mig_profile **out,
    int *nout)
{
	struct mig_profile *v = NULL;
	size_t cap = 0;
	int cnt = 0;

	*out = NULL;
	*nout = 0;
	for (int i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT; i++) {
		struct mig_profile p;
		int r = profile_info(n, h, gpu, i, &p);

		if (r < 0 || (r > 0 && with_placements && placements(n, h, gpu, &p) < 0)) {
			free(v);
			return -1;
		}
		if (r == 0)
			continue;
		xgrow(&v, &cap, (size_t)cnt + 1, sizeof *v);
		v[cnt++] = p;
	}
	*out = v;
	*nout = cnt;
	return 0;
}

/* ---- processes ---------------------------------------------------------- */

static void
proc_name(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	str_copy(buf, "", size);
	snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * Processes on one device handle (a GPU, or a MIG device with its ids).
 * On the H200 the driver reported none while MPS clients ran: zero is an
 * answer, not an error.
 */
static int
procs_on(struct nvml *n, nvmlDevice_t h, int gpu, int gi_id, int ci_id, struct gpu_info *g,
    size_t *cap)
{
	nvmlProcessInfo_v2_t *v = NULL;
	unsigned count = 16;
	nvmlReturn_t rc;

	for (int tries = 0; tries < 4; tries++) {
		unsigned want = count;

		v = xrealloc(v, (size_t)want * sizeof *v);
		memset(v, 0, (size_t)want * sizeof *v);
		rc = n->GetComputeRunningProcesses(h, &count, v);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
		/* processes came and went between the two calls: ask again, with room */
		count = count > want ? count + 8 : want * 2;
	}
	if (rc == NVML_ERROR_NOT_SUPPORTED) {
		free(v);
		return 0;
	}
	if (rc != NVML_SUCCESS) {
		free(v);
		return nvml_fail(n, "nvmlDeviceGetComputeRunningProcesses_v3", gpu, rc, FAIL_READ);
	}
	for (unsigned i = 0; i < count; i++) {
		struct gpu_process *p;

		xgrow(&g->procs, cap, (size_t)g->nprocs + 1, sizeof *g->procs);
		p = &g->procs[g->nprocs++];
		memset(p, 0, sizeof *p);
		p->pid = (pid_t)v[i].pid;
		p->mem_used = v[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL ? 0 : v[i].usedGpuMemory;
		p->gi_id = gi_id;
		p->ci_id = ci_id;
		if (gi_id < 0 && v[i].gpuInstanceId != NVML_NO_INSTANCE_ID) {
			p->gi_id = (int)v[i].gpuInstanceId;
			p->ci_id = (int)v[i].computeInstanceId;
		}
		proc_name(p->pid, p->name, sizeof p->name);
	}
	free(v);
	return 0;
}

static int
processes(struct nvml *n, nvmlDevice_t h, int gpu, struct gpu_info *g)
{
	size_t cap = 0;
	unsigned max = 0;

	if (!n->GetComputeRunningProcesses)
		return 0;
	if (g->mig_current != MIG_ENABLED)
		return procs_on(n, h, gpu, -1, -1, g, &cap);
	/* under MIG the parent answers for no one: ask each MIG device */
	if (!n->GetMaxMigDeviceCount || !n->GetMigDeviceHandleByIndex ||
	    n->GetMaxMigDeviceCount(h, &max) != NVML_SUCCESS)
		return 0;
	for (unsigned i = 0; i < max; i++) {
		nvmlDevice_t mh;
		unsigned gi_id, ci_id;

		if (n->GetMigDeviceHandleByIndex(h, i, &mh) != NVML_SUCCESS ||
		    n->GetGpuInstanceId(mh, &gi_id) != NVML_SUCCESS ||
		    n->GetComputeInstanceId(mh, &ci_id) != NVML_SUCCESS)
			continue;
		if (procs_on(n, mh, gpu, (int)gi_id, (int)ci_id, g, &cap) < 0)
			return -1;
	}
	return 0;
}

/*
 * Profiles are read when asked for, and when MIG is on to name the
 * instances. Only in the first case is failing to read them an error:
 * `gpupack devices` must not fail where the instances could just go unnamed.
 */
static int
instance_profiles(struct nvml *n, nvmlDevice_t h, int gpu, const struct gpu_info *g, unsigned flags,
    struct mig_profile **pv, int *npv)
{
	int asked = (flags & GPU_SNAP_PROFILES) != 0;

	*pv = NULL;
	*npv = 0;
	if (g->mig_current == MIG_UNSUPPORTED || (!asked && g->mig_current != MIG_ENABLED))
		return 0;
	if (profiles(n, h, gpu, asked, pv, npv) == 0)
		return 0;
	if (asked)
		return -1;
	err_clear();
	return 0;
}

static int
fill_gpu(struct nvml *n, int i, struct gpu_info *g, unsigned flags)
{
	nvmlDevice_t h;
	nvmlPciInfo_t pci;
	unsigned idx;
	nvmlReturn_t rc;
	struct mig_profile *pv = NULL;
	int npv = 0;

	if (nvml_handle(n, i, &h) < 0)
		return -1;
	g->index = i;
	if (n->GetIndex && n->GetIndex(h, &idx) == NVML_SUCCESS)
		g->index = (int)idx;
	if ((rc = n->GetName(h, g->name, sizeof g->name)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetName", i, rc, FAIL_READ);
	if ((rc = n->GetUUID(h, g->uuid, sizeof g->uuid)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetUUID", i, rc, FAIL_READ);
	g->name[sizeof g->name - 1] = g->uuid[sizeof g->uuid - 1] = '\0';
	memset(&pci, 0, sizeof pci);
	if (n->GetPciInfo && n->GetPciInfo(h, &pci) == NVML_SUCCESS) {
		pci.busId[sizeof pci.busId - 1] = '\0';
		str_copy(g->pci_bus_id, pci.busId, sizeof g->pci_bus_id);
	}
	if (nvml_memory(n, h, i, &g->mem_total, &g->mem_used, &g->mem_free, &g->mem_reserved) < 0)
		return -1;
	if (!n->GetCudaComputeCapability ||
	    n->GetCudaComputeCapability(h, &g->cc_major, &g->cc_minor) != NVML_SUCCESS)
		g->cc_major = g->cc_minor = 0;
	g->sms = gpu_sms(n, h, g);
	g->compute_mode = compute_mode(n, h);
	if (mig_modes(n, h, i, g) < 0)
		return -1;
	if (instance_profiles(n, h, i, g, flags, &pv, &npv) < 0)
		return -1;
	if (g->mig_current == MIG_ENABLED && nvml_mig_instances(n, h, i, g, pv, npv) < 0) {
		free(pv);
		return -1;
	}
	if (flags & GPU_SNAP_PROFILES) {
		g->profiles = pv;
		g->nprofiles = npv;
	} else {
		free(pv);
	}
	if ((flags & GPU_SNAP_PROCESSES) && processes(n, h, i, g) < 0)
		return -1;
	return 0;
}

/* ---- the snapshot ------------------------------------------------------- */

static void
versions(struct nvml *n, struct gpu_system *sys)
{
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int v;

	if (n->SystemGetDriverVersion && n->SystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS) {
		buf[sizeof buf - 1] = '\0';
		str_copy(sys->driver_version, buf, sizeof sys->driver_version);
	}
	/* 13000 -> "13.0" */
	if (n->SystemGetCudaDriverVersion && n->SystemGetCudaDriverVersion(&v) == NVML_SUCCESS && v > 0)
		snprintf(sys->cuda_version, sizeof sys->cuda_version, "%d.%d", v / 1000, (v % 1000) / 10);
}

int
nvml_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags)
{
	struct nvml *n = b->priv;
	unsigned count = 0;
	nvmlReturn_t rc;

	str_copy(sys->backend, "nvml", sizeof sys->backend);
	versions(n, sys);
	if ((rc = n->GetCount(&count)) != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetCount_v2", -1, rc, FAIL_READ);
	if (count == 0)
		return 0;
	sys->gpus = xcalloc(count, sizeof *sys->gpus);
	sys->ngpus = (int)count;
	for (unsigned i = 0; i < count; i++)
		if (fill_gpu(n, (int)i, &sys->gpus[i], flags) < 0)
			return -1;
	return 0;
}
