/*
 * nvml_api: our own declarations of the few NVML calls, types and constants
 * gpupack uses, written from NVIDIA's documented API (nvml.h, the NVML API
 * reference). No NVIDIA header is copied or needed: nvml_lib.c loads the library
 * with dlopen() and looks each function up by its versioned name.
 *
 * Layouts must match the driver's ABI exactly; the static asserts below pin
 * the sizes that the versioned structs encode in their version field
 * (NVML_STRUCT_VERSION: sizeof | version << 24), so a layout slip fails the
 * build instead of every call at run time.
 *
 * Only src/gpu/nvml*.c and the test double (tests/fakenvml/) include this.
 */
#ifndef GPUPACK_GPU_NVML_API_H
#define GPUPACK_GPU_NVML_API_H

typedef int nvmlReturn_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_UNKNOWN = 999,
};

/* Opaque handles: pointers to the driver's own structs. */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

/* gpuInstanceId / computeInstanceId of a process not on a MIG device. */
#define NVML_NO_INSTANCE_ID 0xFFFFFFFFu
/* usedGpuMemory when the driver cannot tell. */
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull

#define NVML_STRUCT_VERSION(data, ver) \
	((unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((unsigned int)(ver) << 24)))

/* Compute modes (nvmlComputeMode_t); src/gpu/backend.h uses the same values. */
enum {
	NVML_COMPUTEMODE_DEFAULT = 0,
	NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
	NVML_COMPUTEMODE_PROHIBITED = 2,
	NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* GPU-instance profile indices (not ids: the ids come from the profile info). */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7 /* +me: with a media extension */
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9 /* one compute slice, two memory slices */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX 0xA
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX 0xB
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX 0xC
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME 0xD
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME 0xE
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME 0xF
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME 0x10
/* As of driver 580; older drivers answer the indices they do not know with an error. */
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x11

#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x8

#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* nvmlDeviceGetMemoryInfo (v1, unversioned). */
typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: adds the version and what the driver reserves. */
typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;        /* includes reserved */
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

/* What nvmlDeviceGetComputeRunningProcesses_v3 fills (nvml.h: nvmlProcessInfo_v2_t). */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/*
 * What nvmlDeviceGetProcessUtilization fills: one sample per process and
 * driver period, timeStamp in microseconds (the CPU's clock), the shares
 * in percent of that period.
 */
typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp;
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/*
 * GPM (GPU performance monitoring, Hopper and later): a sample is a snapshot
 * of the device's counters; nvmlGpmMetricsGet turns two samples into rates
 * over the time between them. The metric array is sized for CUDA 13's
 * header (333 ids); the library reads numMetrics entries of it.
 */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

typedef struct nvmlGpmSupport_st {
	unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_METRIC_SM_UTIL 2       /* percent of SMs busy */
#define NVML_GPM_METRIC_SM_OCCUPANCY 3  /* percent of warps resident of the possible */
#define NVML_GPM_METRIC_MAX 333

typedef struct nvmlGpmMetric_st {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn;
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
	unsigned int version;           /* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics;
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

/* nvmlDeviceGetAttributes_v2: on a whole GPU or on a MIG device handle. */
typedef struct nvmlDeviceAttributes_st {
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
	unsigned int gpuInstanceSliceCount;
	unsigned int computeInstanceSliceCount;
	unsigned long long memorySizeMB;  /* MiB */
} nvmlDeviceAttributes_t;

typedef struct nvmlGpuInstancePlacement_st {
	unsigned int start;             /* first memory slice */
	unsigned int size;              /* memory slices */
} nvmlGpuInstancePlacement_t;

/* nvmlDeviceGetGpuInstanceProfileInfo (v1, no version field, no name). */
typedef struct nvmlGpuInstanceProfileInfo_st {
	unsigned int id;
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;  /* MiB */
} nvmlGpuInstanceProfileInfo_t;

/* nvmlDeviceGetGpuInstanceProfileInfoV with .version = nvmlGpuInstanceProfileInfo_v2. */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
	unsigned int version;
	unsigned int id;
	unsigned int isP2pSupported;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int copyEngineCount;
	unsigned int decoderCount;
	unsigned int encoderCount;
	unsigned int jpegCount;
	unsigned int ofaCount;
	unsigned long long memorySizeMB;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* "MIG 1g.18gb" */
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2)

typedef struct nvmlGpuInstanceInfo_st {
	nvmlDevice_t device;
	unsigned int id;
	unsigned int profileId;
	nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
	unsigned int start;             /* first compute slice within the GPU instance */
	unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
	unsigned int id;
	unsigned int sliceCount;
	unsigned int instanceCount;
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
	nvmlDevice_t device;
	nvmlGpuInstance_t gpuInstance;
	unsigned int id;
	unsigned int profileId;
	nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

/* The sizes the version fields encode (x86-64 and aarch64 Linux, LP64). */
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152, "nvmlGpuInstanceProfileInfo_v2_t layout");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "nvmlGpuInstanceProfileInfo_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t layout");
_Static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t layout");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");

/*
 * The functions, as pointer types: nvml_lib.c resolves each by the exact symbol
 * name in the comment. NVML_FN(name) is the type of that symbol.
 */
#define NVML_FN(name) nvml_fn_##name

typedef nvmlReturn_t (*NVML_FN(nvmlInit_v2))(void);
typedef nvmlReturn_t (*NVML_FN(nvmlShutdown))(void);
typedef const char *(*NVML_FN(nvmlErrorString))(nvmlReturn_t);
typedef nvmlReturn_t (*NVML_FN(nvmlSystemGetDriverVersion))(char *, unsigned int);
typedef nvmlReturn_t (*NVML_FN(nvmlSystemGetCudaDriverVersion_v2))(int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetCount_v2))(unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetHandleByIndex_v2))(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetIndex))(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetName))(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetUUID))(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetPciInfo_v3))(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMemoryInfo))(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMemoryInfo_v2))(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetAttributes_v2))(nvmlDevice_t, nvmlDeviceAttributes_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetCudaComputeCapability))(nvmlDevice_t, int *, int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetNumGpuCores))(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetComputeMode))(nvmlDevice_t, int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMigMode))(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceSetMigMode))(nvmlDevice_t, unsigned int, nvmlReturn_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetUtilizationRates))(nvmlDevice_t, nvmlUtilization_t *);
/* millijoules the GPU used since the driver loaded (Volta and later) */
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetTotalEnergyConsumption))(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetComputeRunningProcesses_v3))(nvmlDevice_t, unsigned int *,
    nvmlProcessInfo_v2_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMPSComputeRunningProcesses_v3))(nvmlDevice_t, unsigned int *,
    nvmlProcessInfo_v2_t *);
/* samples newer than the last argument (0: every one kept); NOT_FOUND: none newer */
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetProcessUtilization))(nvmlDevice_t, nvmlProcessUtilizationSample_t *,
    unsigned int *, unsigned long long);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmQueryDeviceSupport))(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmSampleAlloc))(nvmlGpmSample_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmSampleFree))(nvmlGpmSample_t);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmSampleGet))(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmMigSampleGet))(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
typedef nvmlReturn_t (*NVML_FN(nvmlGpmMetricsGet))(nvmlGpmMetricsGet_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstanceProfileInfo))(nvmlDevice_t, unsigned int,
    nvmlGpuInstanceProfileInfo_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstanceProfileInfoV))(nvmlDevice_t, unsigned int,
    nvmlGpuInstanceProfileInfo_v2_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstancePossiblePlacements_v2))(nvmlDevice_t, unsigned int,
    nvmlGpuInstancePlacement_t *, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstances))(nvmlDevice_t, unsigned int, nvmlGpuInstance_t *,
    unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstanceById))(nvmlDevice_t, unsigned int, nvmlGpuInstance_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceGetInfo))(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceGetComputeInstanceProfileInfo))(nvmlGpuInstance_t, unsigned int,
    unsigned int, nvmlComputeInstanceProfileInfo_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceGetComputeInstances))(nvmlGpuInstance_t, unsigned int,
    nvmlComputeInstance_t *, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceGetComputeInstanceById))(nvmlGpuInstance_t, unsigned int,
    nvmlComputeInstance_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlComputeInstanceGetInfo_v2))(nvmlComputeInstance_t, nvmlComputeInstanceInfo_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMaxMigDeviceCount))(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex))(nvmlDevice_t, unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetDeviceHandleFromMigDeviceHandle))(nvmlDevice_t, nvmlDevice_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetGpuInstanceId))(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceGetComputeInstanceId))(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*NVML_FN(nvmlDeviceCreateGpuInstanceWithPlacement))(nvmlDevice_t, unsigned int,
    const nvmlGpuInstancePlacement_t *, nvmlGpuInstance_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceCreateComputeInstance))(nvmlGpuInstance_t, unsigned int,
    nvmlComputeInstance_t *);
typedef nvmlReturn_t (*NVML_FN(nvmlComputeInstanceDestroy))(nvmlComputeInstance_t);
typedef nvmlReturn_t (*NVML_FN(nvmlGpuInstanceDestroy))(nvmlGpuInstance_t);

#endif
