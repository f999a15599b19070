/*
 * nvml_lib: loading the driver's library. libnvidia-ml.so.1 is loaded at run
 * time with dlopen() (no link-time dependency: gpupack runs, and says why it
 * cannot, on machines without the driver) and each call is looked up by its
 * versioned name (src/gpu/nvml_api.h). $GPUPACK_NVML_LIB names another
 * library to load instead: the tests point it at their fake NVML.
 *
 * Every NVML failure becomes one line: the call, the GPU, the driver's own
 * words, and a hint where one helps.
 */
#include "gpu/nvml_lib.h"
#include "util/err.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	SYM(GetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption", 0),
	SYM(GetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3", 0),
	SYM(GetMPSComputeRunningProcesses, "nvmlDeviceGetMPSComputeRunningProcesses_v3", 0),
	SYM(GetProcessUtilization, "nvmlDeviceGetProcessUtilization", 0),
	SYM(GpmQueryDeviceSupport, "nvmlGpmQueryDeviceSupport", 0),
	SYM(GpmSampleAlloc, "nvmlGpmSampleAlloc", 0),
	SYM(GpmSampleFree, "nvmlGpmSampleFree", 0),
	SYM(GpmSampleGet, "nvmlGpmSampleGet", 0),
	SYM(GpmMigSampleGet, "nvmlGpmMigSampleGet", 0),
	SYM(GpmMetricsGet, "nvmlGpmMetricsGet", 0),
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

int
nvml_fail(struct nvml *n, const char *call, int gpu, nvmlReturn_t rc, int kind)
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

int
nvml_missing(const char *call)
{
	return err_set(EXIT_ENV, "%s is missing from %s (driver too old?)", call, NVML_LIB_NAME);
}

void
nvml_free(struct nvml *n)
{
	nvml_sample_free(n);
	if (n->inited && n->Shutdown)
		n->Shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}

int
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
			return nvml_missing(syms[i].name);
		/* POSIX guarantees a function pointer round-trips through void * */
		memcpy((char *)n + syms[i].off, &p, sizeof p);
	}
	return 0;
}

int
nvml_init(struct nvml *n)
{
	nvmlReturn_t rc = n->Init();

	if (rc == NVML_ERROR_DRIVER_NOT_LOADED || rc == NVML_ERROR_LIBRARY_NOT_FOUND)
		return err_set(EXIT_ENV, "NVIDIA driver not found: nvmlInit_v2: %s%s", errstr(n, rc),
		    hint(rc));
	if (rc == NVML_ERROR_NO_PERMISSION)
		return err_set(EXIT_ENV, "nvmlInit_v2: %s (no access to /dev/nvidia*?)", errstr(n, rc));
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlInit_v2", -1, rc, FAIL_READ);
	n->inited = 1;
	return 0;
}

int
nvml_handle(struct nvml *n, int gpu, nvmlDevice_t *h)
{
	nvmlReturn_t rc;

	if (gpu < 0)
		return err_set(EXIT_USAGE, "GPU %d: no such GPU", gpu);
	rc = n->GetHandleByIndex((unsigned)gpu, h);
	if (rc == NVML_ERROR_INVALID_ARGUMENT)
		return err_set(EXIT_USAGE, "GPU %d: no such GPU", gpu);
	if (rc != NVML_SUCCESS)
		return nvml_fail(n, "nvmlDeviceGetHandleByIndex_v2", gpu, rc, FAIL_READ);
	return 0;
}
