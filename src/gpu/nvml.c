/*
 * nvml: the driver backend. libnvidia-ml.so.1 is loaded at run time with
 * dlopen() (no link-time dependency: gpupack runs, and says why it cannot,
 * on machines without the driver) and each call is looked up by its
 * versioned name (src/gpu/nvml_api.h). $GPUPACK_NVML_LIB names another
 * library to load instead: the tests point it at their fake NVML.
 *
 * Every NVML failure becomes one line: the call, the GPU, the driver's own
 * words, and a hint where one helps. Calls that only add detail (placement
 * of a GPU instance, PCI id, ...) degrade to "unknown" instead of failing:
 * some need root, some are missing on older drivers.
 */
#include "gpu/backend.h"
#include "gpu/nvml.h"
#include "gpu/nvml_api.h"
#include "util/err.h"
#include "util/str.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_LIB_NAME "libnvidia-ml.so.1"

/* The resolved calls; NULL where the library lacks an optional one. */
struct nvml {
	void *lib;
	int inited;
	NVML_FN(nvmlInit_v2) Init;
	NVML_FN(nvmlShutdown) Shutdown;
	NVML_FN(nvmlErrorString) ErrorString;
	NVML_FN(nvmlSystemGetDriverVersion) SystemGetDriverVersion;
	NVML_FN(nvmlSystemGetCudaDriverVersion_v2) SystemGetCudaDriverVersion;
	NVML_FN(nvmlDeviceGetCount_v2) GetCount;
	NVML_FN(nvmlDeviceGetHandleByIndex_v2) GetHandleByIndex;
	NVML_FN(nvmlDeviceGetIndex) GetIndex;
	NVML_FN(nvmlDeviceGetName) GetName;
	NVML_FN(nvmlDeviceGetUUID) GetUUID;
	NVML_FN(nvmlDeviceGetPciInfo_v3) GetPciInfo;
	NVML_FN(nvmlDeviceGetMemoryInfo) GetMemoryInfo;
	NVML_FN(nvmlDeviceGetMemoryInfo_v2) GetMemoryInfo_v2;
	NVML_FN(nvmlDeviceGetAttributes_v2) GetAttributes;
	NVML_FN(nvmlDeviceGetCudaComputeCapability) GetCudaComputeCapability;
	NVML_FN(nvmlDeviceGetNumGpuCores) GetNumGpuCores;
	NVML_FN(nvmlDeviceGetComputeMode) GetComputeMode;
	NVML_FN(nvmlDeviceGetMigMode) GetMigMode;
	NVML_FN(nvmlDeviceSetMigMode) SetMigMode;
	NVML_FN(nvmlDeviceGetUtilizationRates) GetUtilizationRates;
	NVML_FN(nvmlDeviceGetComputeRunningProcesses_v3) GetComputeRunningProcesses;
	NVML_FN(nvmlDeviceGetGpuInstanceProfileInfo) GetGpuInstanceProfileInfo;
	NVML_FN(nvmlDeviceGetGpuInstanceProfileInfoV) GetGpuInstanceProfileInfoV;
	NVML_FN(nvmlDeviceGetGpuInstancePossiblePlacements_v2) GetGpuInstancePossiblePlacements;
	NVML_FN(nvmlDeviceGetGpuInstances) GetGpuInstances;
	NVML_FN(nvmlDeviceGetGpuInstanceById) GetGpuInstanceById;
	NVML_FN(nvmlGpuInstanceGetInfo) GpuInstanceGetInfo;
	NVML_FN(nvmlGpuInstanceGetComputeInstanceProfileInfo) GpuInstanceGetComputeInstanceProfileInfo;
	NVML_FN(nvmlGpuInstanceGetComputeInstances) GpuInstanceGetComputeInstances;
	NVML_FN(nvmlGpuInstanceGetComputeInstanceById) GpuInstanceGetComputeInstanceById;
	NVML_FN(nvmlComputeInstanceGetInfo_v2) ComputeInstanceGetInfo;
	NVML_FN(nvmlDeviceGetMaxMigDeviceCount) GetMaxMigDeviceCount;
	NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex) GetMigDeviceHandleByIndex;
	NVML_FN(nvmlDeviceGetDeviceHandleFromMigDeviceHandle) GetDeviceHandleFromMigDeviceHandle;
	NVML_FN(nvmlDeviceGetGpuInstanceId) GetGpuInstanceId;
	NVML_FN(nvmlDeviceGetComputeInstanceId) GetComputeInstanceId;
	NVML_FN(nvmlDeviceCreateGpuInstanceWithPlacement) CreateGpuInstanceWithPlacement;
	NVML_FN(nvmlGpuInstanceCreateComputeInstance) GpuInstanceCreateComputeInstance;
	NVML_FN(nvmlComputeInstanceDestroy) ComputeInstanceDestroy;
	NVML_FN(nvmlGpuInstanceDestroy) GpuInstanceDestroy;
};

struct nvml_sym {
	const char *name;
	size_t off;
	int required;
};

#define SYM(field, name, req) {name, offsetof(struct nvml, field), req}

static const struct nvml_sym syms[] = {
	SYM(Init, "nvmlInit_v2", 1),
	SYM(Shutdown, "nvmlShutdown", 1),
	SYM(ErrorString, "nvmlErrorString", 1),
	SYM(SystemGetDriverVersion, "nvmlSystemGetDriverVersion", 0),
	SYM(SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2", 0),
	SYM(GetCount, "nvmlDeviceGetCount_v2", 1),
	SYM(GetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", 1),
	SYM(GetIndex, "nvmlDeviceGetIndex", 0),
	SYM(GetName, "nvmlDeviceGetName", 1),
	SYM(GetUUID, "nvmlDeviceGetUUID", 1),
	SYM(GetPciInfo, "nvmlDeviceGetPciInfo_v3", 0),
	SYM(GetMemoryInfo, "nvmlDeviceGetMemoryInfo", 0),
	SYM(GetMemoryInfo_v2, "nvmlDeviceGetMemoryInfo_v2", 0),
	SYM(GetAttributes, "nvmlDeviceGetAttributes_v2", 0),
	SYM(GetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability", 0),
	SYM(GetNumGpuCores, "nvmlDeviceGetNumGpuCores", 0),
	SYM(GetComputeMode, "nvmlDeviceGetComputeMode", 0),
	SYM(GetMigMode, "nvmlDeviceGetMigMode", 0),
	SYM(SetMigMode, "nvmlDeviceSetMigMode", 0),
	SYM(GetUtilizationRates, "nvmlDeviceGetUtilizationRates", 0),
	SYM(GetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3", 0),
	SYM(GetGpuInstanceProfileInfo, "nvmlDeviceGetGpuInstanceProfileInfo", 0),
	SYM(GetGpuInstanceProfileInfoV, "nvmlDeviceGetGpuInstanceProfileInfoV", 0),
	SYM(GetGpuInstancePossiblePlacements, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", 0),
	SYM(GetGpuInstances, "nvmlDeviceGetGpuInstances", 0),
	SYM(GetGpuInstanceById, "nvmlDeviceGetGpuInstanceById", 0),
	SYM(GpuInstanceGetInfo, "nvmlGpuInstanceGetInfo", 0),
	SYM(GpuInstanceGetComputeInstanceProfileInfo, "nvmlGpuInstanceGetComputeInstanceProfileInfo", 0),
	SYM(GpuInstanceGetComputeInstances, "nvmlGpuInstanceGetComputeInstances", 0),
	SYM(GpuInstanceGetComputeInstanceById, "nvmlGpuInstanceGetComputeInstanceById", 0),
	SYM(ComputeInstanceGetInfo, "nvmlComputeInstanceGetInfo_v2", 0),
	SYM(GetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount", 0),
	SYM(GetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex", 0),
	SYM(GetDeviceHandleFromMigDeviceHandle, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", 0),
	SYM(GetGpuInstanceId, "nvmlDeviceGetGpuInstanceId", 0),
	SYM(GetComputeInstanceId, "nvmlDeviceGetComputeInstanceId", 0),
	SYM(CreateGpuInstanceWithPlacement, "nvmlDeviceCreateGpuInstanceWithPlacement", 0),
	SYM(GpuInstanceCreateComputeInstance, "nvmlGpuInstanceCreateComputeInstance", 0),
	SYM(ComputeInstanceDestroy, "nvmlComputeInstanceDestroy", 0),
	SYM(GpuInstanceDestroy, "nvmlGpuInstanceDestroy", 0),
};

/* How a failed call is classed: reading state, or carrying out a request. */
enum { FAIL_READ, FAIL_REQUEST };

static const char *
errstr(struct nvml *n, nvmlReturn_t rc)
{
	const char *s = n->ErrorString ? n->ErrorString(rc) : NULL;

	return s && *s ? s : "unknown NVML error";
}

static const char *
hint(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_ERROR_NO_PERMISSION:
		return " (needs root)";
	case NVML_ERROR_NOT_SUPPORTED:
		return " (not supported by this GPU or driver)";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return " (is the nvidia kernel module loaded?)";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return " (the driver library and kernel module differ: reload the module or reboot)";
	case NVML_ERROR_GPU_IS_LOST:
		return " (the GPU fell off the bus: it needs a reset)";
	case NVML_ERROR_IN_USE:
		return " (processes still use it)";
	case NVML_ERROR_RESET_REQUIRED:
		return " (a GPU reset is needed)";
	default:
		return "";
	}
}

/*
 * One line for a failed call. Failures of the driver or of permission are
 * the environment's (exit 3); a request the driver refuses as impossible
 * (bad placement, no room, in use) is the caller's (exit 2).
 */
static int
fail(struct nvml *n, const char *call, int gpu, nvmlReturn_t rc, int kind)
{
	int code = EXIT_ENV;

	if (kind == FAIL_REQUEST && (rc == NVML_ERROR_INVALID_ARGUMENT ||
	    rc == NVML_ERROR_INSUFFICIENT_RESOURCES || rc == NVML_ERROR_NOT_FOUND ||
	    rc == NVML_ERROR_IN_USE))
		code = EXIT_USAGE;
	if (gpu < 0)
		return err_set(code, "%s: %s%s", call, errstr(n, rc), hint(rc));
	return err_set(code, "%s on GPU %d: %s%s", call, gpu, errstr(n, rc), hint(rc));
}

static int
missing(const char *call)
{
	return err_set(EXIT_ENV, "%s is missing from %s (driver too old?)", call, NVML_LIB_NAME);
}

static void
nvml_free(struct nvml *n)
{
	if (n->inited && n->Shutdown)
		n->Shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}

static int
nvml_load(struct nvml *n)
{
	const char *path = getenv("GPUPACK_NVML_LIB");

	if (!path || !*path)
		path = NVML_LIB_NAME;
	n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *why = dlerror();

		return err_set(EXIT_ENV, "NVIDIA driver not found: cannot load %s (%s)", path,
		    why ? why : "unknown reason");
	}
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(n->lib, syms[i].name);

		if (!p && syms[i].required)
			return missing(syms[i].name);
		/* POSIX guarantees a function pointer round-trips through void * */
		memcpy((char *)n + syms[i].off, &p, sizeof p);
	}
	return 0;
}

static int
nvml_init(struct nvml *n)
{
	nvmlReturn_t rc = n->Init();

	if (rc == NVML_ERROR_DRIVER_NOT_LOADED || rc == NVML_ERROR_LIBRARY_NOT_FOUND)
		return err_set(EXIT_ENV, "NVIDIA driver not found: nvmlInit_v2: %s%s", errstr(n, rc),
		    hint(rc));
	if (rc == NVML_ERROR_NO_PERMISSION)
		return err_set(EXIT_ENV, "nvmlInit_v2: %s (no access to /dev/nvidia*?)", errstr(n, rc));
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlInit_v2", -1, rc, FAIL_READ);
	n->inited = 1;
	return 0;
}

static int
handle(struct nvml *n, int gpu, nvmlDevice_t *h)
{
	nvmlReturn_t rc;

	if (gpu < 0)
		return err_set(EXIT_USAGE, "GPU %d: no such GPU", gpu);
	rc = n->GetHandleByIndex((unsigned)gpu, h);
	if (rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: no such GPU", gpu);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetHandleByIndex_v2", gpu, rc, FAIL_READ);
	return 0;
}

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

/* Memory of a GPU or of a MIG device: the v2 struct when the driver has it. */
static int
memory(struct nvml *n, nvmlDevice_t h, int gpu, uint64_t *total, uint64_t *used,
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
		return fail(n, "nvmlDeviceGetMemoryInfo", gpu, rc, FAIL_READ);
	}
	if (rc == NVML_ERROR_FUNCTION_NOT_FOUND)
		return missing("nvmlDeviceGetMemoryInfo_v2");
	return fail(n, "nvmlDeviceGetMemoryInfo_v2", gpu, rc, FAIL_READ);
}

static int
attributes(struct nvml *n, nvmlDevice_t h, nvmlDeviceAttributes_t *a)
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

	if (attributes(n, h, &a) == 0 && a.multiprocessorCount)
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
		return fail(n, "nvmlDeviceGetMigMode", gpu, rc, FAIL_READ);
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
		return fail(n, "nvmlDeviceGetGpuInstanceProfileInfoV", gpu, rc, FAIL_READ);
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
		return fail(n, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", gpu, rc, FAIL_READ);
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
		return fail(n, "nvmlDeviceGetMigDeviceHandleByIndex", gpu, rc, FAIL_READ);
	if ((rc = n->GetGpuInstanceId(mh, &gi_id)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetGpuInstanceId", gpu, rc, FAIL_READ);
	if ((rc = n->GetComputeInstanceId(mh, &ci_id)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetComputeInstanceId", gpu, rc, FAIL_READ);
	if ((rc = n->GetUUID(mh, uuid, sizeof uuid)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetUUID (MIG device)", gpu, rc, FAIL_READ);
	uuid[sizeof uuid - 1] = '\0';
	if (memory(n, mh, gpu, &total, &used, &free_, &reserved) < 0)
		return -1;
	attributes(n, mh, &a);
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

static int
mig_instances(struct nvml *n, nvmlDevice_t h, int gpu, struct gpu_info *g,
    const struct mig_profile *pv, int npv)
{
	unsigned max = 0;
	size_t cap = 0;
	nvmlReturn_t rc;

	if (!n->GetMaxMigDeviceCount || !n->GetMigDeviceHandleByIndex || !n->GetGpuInstanceId ||
	    !n->GetComputeInstanceId)
		return missing("nvmlDeviceGetMigDeviceHandleByIndex");
	gis_by_profile(n, h, g, &cap, pv, npv);
	if ((rc = n->GetMaxMigDeviceCount(h, &max)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetMaxMigDeviceCount", gpu, rc, FAIL_READ);
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
		return fail(n, "nvmlDeviceGetComputeRunningProcesses_v3", gpu, rc, FAIL_READ);
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

	if (handle(n, i, &h) < 0)
		return -1;
	g->index = i;
	if (n->GetIndex && n->GetIndex(h, &idx) == NVML_SUCCESS)
		g->index = (int)idx;
	if ((rc = n->GetName(h, g->name, sizeof g->name)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetName", i, rc, FAIL_READ);
	if ((rc = n->GetUUID(h, g->uuid, sizeof g->uuid)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetUUID", i, rc, FAIL_READ);
	g->name[sizeof g->name - 1] = g->uuid[sizeof g->uuid - 1] = '\0';
	memset(&pci, 0, sizeof pci);
	if (n->GetPciInfo && n->GetPciInfo(h, &pci) == NVML_SUCCESS) {
		pci.busId[sizeof pci.busId - 1] = '\0';
		str_copy(g->pci_bus_id, pci.busId, sizeof g->pci_bus_id);
	}
	if (memory(n, h, i, &g->mem_total, &g->mem_used, &g->mem_free, &g->mem_reserved) < 0)
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
	if (g->mig_current == MIG_ENABLED && mig_instances(n, h, i, g, pv, npv) < 0) {
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

/* ---- the ops ------------------------------------------------------------ */

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

static int
nvml_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags)
{
	struct nvml *n = b->priv;
	unsigned count = 0;
	nvmlReturn_t rc;

	str_copy(sys->backend, "nvml", sizeof sys->backend);
	versions(n, sys);
	if ((rc = n->GetCount(&count)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetCount_v2", -1, rc, FAIL_READ);
	if (count == 0)
		return 0;
	sys->gpus = xcalloc(count, sizeof *sys->gpus);
	sys->ngpus = (int)count;
	for (unsigned i = 0; i < count; i++)
		if (fill_gpu(n, (int)i, &sys->gpus[i], flags) < 0)
			return -1;
	return 0;
}

static int
nvml_set_mig_mode(struct gpu_backend *b, int gpu, int enable)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlReturn_t rc, activation = NVML_SUCCESS;

	if (!n->SetMigMode)
		return missing("nvmlDeviceSetMigMode");
	if (handle(n, gpu, &h) < 0)
		return -1;
	rc = n->SetMigMode(h, enable ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &activation);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlDeviceSetMigMode", gpu, rc, FAIL_REQUEST);
	if (activation != NVML_SUCCESS)
		return fail(n, "nvmlDeviceSetMigMode (activation)", gpu, activation, FAIL_REQUEST);
	return 0;
}

static int
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
		return missing("nvmlDeviceCreateGpuInstanceWithPlacement");
	if (handle(n, gpu, &h) < 0)
		return -1;
	pl.start = where->start;
	pl.size = where->size;
	rc = n->CreateGpuInstanceWithPlacement(h, profile_id, &pl, &gih);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlDeviceCreateGpuInstanceWithPlacement", gpu, rc, FAIL_REQUEST);
	memset(&info, 0, sizeof info);
	if ((rc = n->GpuInstanceGetInfo(gih, &info)) != NVML_SUCCESS)
		return fail(n, "nvmlGpuInstanceGetInfo", gpu, rc, FAIL_READ);
	*gi_id = info.id;
	return 0;
}

static int
gi_by_id(struct nvml *n, int gpu, unsigned gi_id, nvmlGpuInstance_t *gih)
{
	nvmlDevice_t h;
	nvmlReturn_t rc;

	if (!n->GetGpuInstanceById)
		return missing("nvmlDeviceGetGpuInstanceById");
	if (handle(n, gpu, &h) < 0)
		return -1;
	rc = n->GetGpuInstanceById(h, gi_id, gih);
	if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: no GPU instance %u", gpu, gi_id);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetGpuInstanceById", gpu, rc, FAIL_READ);
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
		return missing("nvmlGpuInstanceGetComputeInstanceProfileInfo");
	for (int p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
		nvmlComputeInstanceProfileInfo_t pi;
		nvmlReturn_t rc;

		memset(&pi, 0, sizeof pi);
		rc = n->GpuInstanceGetComputeInstanceProfileInfo(gih, (unsigned)p,
		    NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &pi);
		if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (rc != NVML_SUCCESS)
			return fail(n, "nvmlGpuInstanceGetComputeInstanceProfileInfo", gpu, rc, FAIL_READ);
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

static int
nvml_create_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned *ci_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlComputeInstance_t cih;
	nvmlComputeInstanceInfo_t info;
	unsigned profile_id = 0;
	nvmlReturn_t rc;

	if (!n->GpuInstanceCreateComputeInstance || !n->ComputeInstanceGetInfo)
		return missing("nvmlGpuInstanceCreateComputeInstance");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0 || whole_ci_profile(n, gpu, gih, &profile_id) < 0)
		return -1;
	rc = n->GpuInstanceCreateComputeInstance(gih, profile_id, &cih);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlGpuInstanceCreateComputeInstance", gpu, rc, FAIL_REQUEST);
	memset(&info, 0, sizeof info);
	if ((rc = n->ComputeInstanceGetInfo(cih, &info)) != NVML_SUCCESS)
		return fail(n, "nvmlComputeInstanceGetInfo_v2", gpu, rc, FAIL_READ);
	*ci_id = info.id;
	return 0;
}

static int
nvml_destroy_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned ci_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlComputeInstance_t cih;
	nvmlReturn_t rc;

	if (!n->GpuInstanceGetComputeInstanceById || !n->ComputeInstanceDestroy)
		return missing("nvmlComputeInstanceDestroy");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0)
		return -1;
	rc = n->GpuInstanceGetComputeInstanceById(gih, ci_id, &cih);
	if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: GPU instance %u has no compute instance %u", gpu, gi_id,
		    ci_id);
	if (rc != NVML_SUCCESS)
		return fail(n, "nvmlGpuInstanceGetComputeInstanceById", gpu, rc, FAIL_READ);
	if ((rc = n->ComputeInstanceDestroy(cih)) != NVML_SUCCESS)
		return fail(n, "nvmlComputeInstanceDestroy", gpu, rc, FAIL_REQUEST);
	return 0;
}

static int
nvml_destroy_gi(struct gpu_backend *b, int gpu, unsigned gi_id)
{
	struct nvml *n = b->priv;
	nvmlGpuInstance_t gih;
	nvmlReturn_t rc;

	if (!n->GpuInstanceDestroy)
		return missing("nvmlGpuInstanceDestroy");
	if (gi_by_id(n, gpu, gi_id, &gih) < 0)
		return -1;
	if ((rc = n->GpuInstanceDestroy(gih)) != NVML_SUCCESS)
		return fail(n, "nvmlGpuInstanceDestroy", gpu, rc, FAIL_REQUEST);
	return 0;
}

static int
nvml_utilization(struct gpu_backend *b, int gpu, unsigned *gpu_pct, unsigned *mem_pct)
{
	struct nvml *n = b->priv;
	nvmlDevice_t h;
	nvmlUtilization_t u;
	nvmlReturn_t rc;

	if (!n->GetUtilizationRates)
		return missing("nvmlDeviceGetUtilizationRates");
	if (handle(n, gpu, &h) < 0)
		return -1;
	memset(&u, 0, sizeof u);
	if ((rc = n->GetUtilizationRates(h, &u)) != NVML_SUCCESS)
		return fail(n, "nvmlDeviceGetUtilizationRates", gpu, rc, FAIL_READ);
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
	b->close = nvml_close;
	*out = b;
	return 0;
}
