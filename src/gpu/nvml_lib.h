/*
 * nvml_lib.h: the loaded NVML library as the nvml*.c files share it: the
 * resolved calls, and the one-line errors every failed call becomes. Only
 * src/gpu/nvml*.c include it; nothing above src/gpu/ sees an NVML type.
 */
#ifndef GPUPACK_GPU_NVML_LIB_H
#define GPUPACK_GPU_NVML_LIB_H

#include <stdint.h>

#include "gpu/backend.h"
#include "gpu/nvml_api.h"

#define NVML_LIB_NAME "libnvidia-ml.so.1"

/* The resolved calls; NULL where the library lacks an optional one. */
struct nvml_gpm;

struct nvml {
	void *lib;
	int inited;
	struct nvml_gpm *gpm;      /* nvml_sample.c's previous GPM samples */
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
	NVML_FN(nvmlDeviceGetTotalEnergyConsumption) GetTotalEnergyConsumption;
	NVML_FN(nvmlDeviceGetComputeRunningProcesses_v3) GetComputeRunningProcesses;
	NVML_FN(nvmlDeviceGetMPSComputeRunningProcesses_v3) GetMPSComputeRunningProcesses;
	NVML_FN(nvmlDeviceGetProcessUtilization) GetProcessUtilization;
	NVML_FN(nvmlGpmQueryDeviceSupport) GpmQueryDeviceSupport;
	NVML_FN(nvmlGpmSampleAlloc) GpmSampleAlloc;
	NVML_FN(nvmlGpmSampleFree) GpmSampleFree;
	NVML_FN(nvmlGpmSampleGet) GpmSampleGet;
	NVML_FN(nvmlGpmMigSampleGet) GpmMigSampleGet;
	NVML_FN(nvmlGpmMetricsGet) GpmMetricsGet;
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

/* How a failed call is classed: reading state, or carrying out a request. */
enum { FAIL_READ, FAIL_REQUEST };

/* nvml_lib.c */
/* dlopen the library ($GPUPACK_NVML_LIB or libnvidia-ml.so.1), resolve the calls, nvmlInit. */
int nvml_load(struct nvml *n);
int nvml_init(struct nvml *n);
/* nvmlShutdown when initialised, dlclose, free n. */
void nvml_free(struct nvml *n);
/*
 * One line for a failed call. Failures of the driver or of permission are
 * the environment's (exit 3); a request the driver refuses as impossible
 * (bad placement, no room, in use) is the caller's (exit 2). gpu < 0: none.
 */
int nvml_fail(struct nvml *n, const char *call, int gpu, nvmlReturn_t rc, int kind);
/* An optional call this driver lacks, where it is needed. */
int nvml_missing(const char *call);
/* The handle of GPU gpu (driver index); an unknown index is EXIT_USAGE. */
int nvml_handle(struct nvml *n, int gpu, nvmlDevice_t *h);

/* nvml_device.c */
/* Memory of a GPU or of a MIG device: the v2 struct when the driver has it. */
int nvml_memory(struct nvml *n, nvmlDevice_t h, int gpu, uint64_t *total, uint64_t *used,
    uint64_t *free_, uint64_t *reserved);
/* nvmlDeviceGetAttributes_v2 (MIG device handles); -1 where it does not answer. */
int nvml_attributes(struct nvml *n, nvmlDevice_t h, nvmlDeviceAttributes_t *a);
int nvml_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags);

/* nvml_sample.c */
/* The load of one device: utilization, GPM, memory, processes (struct gpu_sample). */
int nvml_sample(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s);
/* Its memory and processes only. */
int nvml_sample_procs(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s);
/* The GPU's energy counter, millijoules since the driver loaded. */
int nvml_energy(struct gpu_backend *b, int gpu, uint64_t *mj);
/* Per-process SM utilization since *since_us (backend.h: proc_util). */
int nvml_proc_util(struct gpu_backend *b, int gpu, uint64_t *since_us, struct gpu_proc_util *u, int max);
/* Free the GPM samples kept between calls. */
void nvml_sample_free(struct nvml *n);

/* nvml_mig.c */
/* The GPU and compute instances of a GPU in MIG mode, named from the profiles pv. */
int nvml_mig_instances(struct nvml *n, nvmlDevice_t h, int gpu, struct gpu_info *g,
    const struct mig_profile *pv, int npv);
int nvml_set_mig_mode(struct gpu_backend *b, int gpu, int enable);
int nvml_create_gi(struct gpu_backend *b, int gpu, unsigned profile_id,
    const struct mig_placement *where, unsigned *gi_id);
int nvml_create_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned *ci_id);
int nvml_destroy_ci(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned ci_id);
int nvml_destroy_gi(struct gpu_backend *b, int gpu, unsigned gi_id);

#endif
