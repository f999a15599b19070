/*
 * fakenvml: a test double of libnvidia-ml.so.1. It exports the NVML calls
 * gpupack resolves, under the same versioned names and with the same
 * argument conventions (versioned structs, count-in/count-out buffers,
 * NOT_FOUND for empty MIG device slots), answering from a small fixed
 * machine, so CI runs src/gpu/nvml*.c's real code paths without a GPU.
 *
 * Built as $(B)/tests/fakenvml/libnvidia-ml.so.1; gpupack loads it through
 * GPUPACK_NVML_LIB (or LD_LIBRARY_PATH). Configured by the environment:
 *
 *   FAKENVML_MACHINE  h200 (default): one H200, MIG off, its measured
 *                     profile table. h100-mig: two H100s; GPU 0 with MIG on
 *                     (3g.40gb and 1g.10gb with compute instances, one more
 *                     1g.10gb without), GPU 1 with MIG pending, exclusive-process.
 *   FAKENVML_FAIL     "call=code[,call=code...]": that call returns that NVML
 *                     error ("nvmlInit_v2=9", "nvmlDeviceGetMemoryInfo_v2=4");
 *                     "call=code/K": only every K-th call does (a driver
 *                     that fails now and then).
 *   FAKENVML_SLOW     "call=ms[,call=ms...]": that call takes that long (a
 *                     driver busy tearing a fault's clients down).
 *   FAKENVML_OLD      1: behave like a driver that predates the versioned
 *                     structs (the V/_v2 calls answer ARGUMENT_VERSION_MISMATCH).
 *   FAKENVML_CUDA     the driver's CUDA version as NVML gives it (default 13000).
 *   FAKENVML_NPROCS   processes on each GPU without MIG (default 2): the first
 *                     is the caller itself, the others dead pids.
 *   FAKENVML_ENERGY_STEP_MS  the energy counter moves only every that many ms,
 *                     as real drivers update it (default: on every read).
 *   FAKENVML_PROC_UTIL  nvmlDeviceGetProcessUtilization's answers: "each"
 *                     (default) a sample per process, "mps" the MPS server's
 *                     alone (what the driver gives under MPS), "none"
 *                     NOT_SUPPORTED (a driver with no per-process data).
 *   FAKENVML_DEVICE   a simulated device's directory (tests/tools/fakedev.h):
 *                     GPU 0 then reports what fake-work's farm tasks do on it:
 *                     busy while any is on the GPU, GPM SM activity for their
 *                     count, their memory and their processes (as compute
 *                     processes and as MPS clients).
 * GPM (nvmlGpmSampleGet and nvmlGpmMetricsGet: SM activity and occupancy) is
 * supported on every GPU handle; the metrics between two samples are the
 * simulated device's SM activity averaged between them (0 without
 * FAKENVML_DEVICE); the busy share, since the previous reading.
 * nvmlDeviceGetTotalEnergyConsumption counts millijoules: with
 * FAKENVML_DEVICE, GPU 0 draws the device's idle_w plus (busy_w - idle_w)
 * times its SM activity, integrated; otherwise each GPU a steady 100 W;
 * the old-ABI build lacks the call.
 *
 * Two more builds test what a library without some symbols does to gpupack:
 * -DFAKENVML_OLD_ABI (old/) lacks the calls newer drivers added (the _v2/_v3/V
 * versions, placements, creation with placement): optional, so fields go
 * unknown; -DFAKENVML_NO_COUNT (broken/) lacks nvmlDeviceGetCount_v2, which
 * gpupack requires.
 *
 * The version fields are checked against literal values worked out by hand
 * from nvml.h's documented layouts, not against our own header's macros,
 * so a slip in src/gpu/nvml_api.h shows up here.
 */
#include "gpu/nvml_api.h"
#include "../tools/fakedev.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
/* helpers of calls that the old-ABI build leaves out */
#define OLD_ABI_UNUSED __attribute__((unused))

/* sizeof | version << 24, computed by hand: 4 + 4 pad + 4 * 8 = 40; 11 * 4 + 4 pad + 8 + 96 = 152 */
#define MEMORY_V2_VERSION 0x02000028u
#define GI_PROFILE_V2_VERSION 0x02000098u

enum { GPU_MAGIC = 0x47505530, GI_MAGIC = 0x47490000, CI_MAGIC = 0x43490000 };

#define MAX_GPUS 2
#define MAX_GI 8
#define MAX_CI 4
#define MAX_PROF 8

struct fprof {
	int index;
	unsigned id;
	const char *name;
	unsigned slices;
	unsigned long long mem_mib;
	unsigned sms;
	unsigned count;
	unsigned size;            /* memory slices of one instance */
	unsigned starts[8];
	unsigned nstarts;
};

struct fgi;

struct fci {
	int magic;
	int used;
	unsigned id;
	unsigned profile;         /* compute-instance profile index = id */
	unsigned slices;
	unsigned sms;
	char uuid[64];
	struct fgi *gi;
	int nprocs;
};

struct fgpu;

struct fgi {
	int magic;
	int used;
	unsigned id;
	const struct fprof *prof;
	unsigned start;
	struct fgpu *gpu;
	struct fci ci[MAX_CI];
};

struct fgpu {
	int magic;
	const char *name;
	const char *uuid;
	const char *bus;
	unsigned long long total, reserved, used;
	unsigned sms;
	int cc_major, cc_minor;
	int compute_mode;
	int mig_supported;
	unsigned mig_current, mig_pending;
	const struct fprof *prof;
	int nprof;
	struct fgi gi[MAX_GI];
	unsigned next_gi_id;
};

static const struct fprof h200_profiles[] = {
	{0, 19, "MIG 1g.18gb", 1, 16384, 16, 7, 1, {0, 1, 2, 3, 4, 5, 6}, 7},
	{1, 14, "MIG 2g.35gb", 2, 33280, 32, 3, 2, {0, 2, 4}, 3},
	{2, 9, "MIG 3g.71gb", 3, 71424, 60, 2, 4, {0, 4}, 2},
	{3, 5, "MIG 4g.71gb", 4, 71424, 64, 1, 4, {0}, 1},
	{4, 0, "MIG 7g.141gb", 7, 143360, 132, 1, 8, {0}, 1},
	{7, 20, "MIG 1g.18gb+me", 1, 16384, 16, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 7},
	{9, 15, "MIG 1g.35gb", 1, 33280, 26, 4, 2, {0, 2, 4, 6}, 4},
};

static const struct fprof h100_profiles[] = {
	{0, 19, "MIG 1g.10gb", 1, 9984, 16, 7, 1, {0, 1, 2, 3, 4, 5, 6}, 7},
	{1, 14, "MIG 2g.20gb", 2, 20096, 32, 3, 2, {0, 2, 4}, 3},
	{2, 9, "MIG 3g.40gb", 3, 40320, 60, 2, 4, {0, 4}, 2},
	{3, 5, "MIG 4g.40gb", 4, 40320, 64, 1, 4, {0}, 1},
	{4, 0, "MIG 7g.80gb", 7, 80896, 132, 1, 8, {0}, 1},
	{7, 20, "MIG 1g.10gb+me", 1, 9984, 16, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 7},
	{9, 15, "MIG 1g.20gb", 1, 20096, 26, 4, 2, {0, 2, 4, 6}, 4},
};

#define NPROF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct fgpu gpus[MAX_GPUS];
static int ngpus;
static int initialized;

/* ---- configuration ---------------------------------------------------- */

/* FAKENVML_CALLS=FILE: one line per call that can fail, "SECONDS NAME" (wall clock). */
static void
log_call(const char *call)
{
	const char *path = getenv("FAKENVML_CALLS");
	struct timespec ts;
	FILE *fp;

	if (!path || !*path || (fp = fopen(path, "a")) == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(fp, "%ld.%03ld %s\n", (long)ts.tv_sec, ts.tv_nsec / 1000000L, call);
	fclose(fp);
}

/*
 * In a "call=value[,call=value...]" list (FAKENVML_FAIL, FAKENVML_SLOW),
 * where call's value starts, and its place in the list; NULL: not listed.
 */
static const char *
spec_find(const char *spec, const char *call, int *at)
{
	size_t len = strlen(call);

	for (int i = 0; spec && *spec; i++) {
		if (strncmp(spec, call, len) == 0 && spec[len] == '=') {
			*at = i;
			return spec + len + 1;
		}
		spec = strchr(spec, ',');
		if (spec)
			spec++;
	}
	return NULL;
}

/* The error FAKENVML_FAIL asks this call to return, or NVML_SUCCESS; FAKENVML_SLOW's wait first. */
static nvmlReturn_t
injected(const char *call)
{
	/* calls so far of each entry of the spec (its place in the list) */
	static unsigned long seen[32];
	const char *v;
	char *end;
	int i;

	log_call(call);
	if ((v = spec_find(getenv("FAKENVML_SLOW"), call, &i)) != NULL && atol(v) > 0)
		nanosleep(&(struct timespec){atol(v) / 1000, (atol(v) % 1000) * 1000000L}, NULL);
	if ((v = spec_find(getenv("FAKENVML_FAIL"), call, &i)) != NULL) {
		long code = strtol(v, &end, 10), every = *end == '/' ? atol(end + 1) : 1;
		unsigned long n = i < 32 ? __atomic_add_fetch(&seen[i], 1, __ATOMIC_RELAXED) : 1;

		return every <= 1 || n % (unsigned long)every == 0 ? (nvmlReturn_t)code : NVML_SUCCESS;
	}
	return NVML_SUCCESS;
}

#define INJECT(call) do { \
	nvmlReturn_t inj_ = injected(call); \
	if (inj_ != NVML_SUCCESS) \
		return inj_; \
} while (0)

OLD_ABI_UNUSED static int
old_driver(void)
{
	const char *s = getenv("FAKENVML_OLD");

	return s && strcmp(s, "1") == 0;
}

static const struct fprof *
prof_by_id(const struct fgpu *g, unsigned id)
{
	for (int i = 0; i < g->nprof; i++)
		if (g->prof[i].id == id)
			return &g->prof[i];
	return NULL;
}

static struct fgi *
add_gi(struct fgpu *g, unsigned id, unsigned prof_id, unsigned start)
{
	for (int i = 0; i < MAX_GI; i++) {
		struct fgi *gi = &g->gi[i];

		if (gi->used)
			continue;
		memset(gi, 0, sizeof *gi);
		gi->magic = GI_MAGIC;
		gi->used = 1;
		gi->id = id;
		gi->prof = prof_by_id(g, prof_id);
		gi->start = start;
		gi->gpu = g;
		return gi;
	}
	return NULL;
}

static struct fci *
add_ci(struct fgi *gi, unsigned id, unsigned slices)
{
	for (int i = 0; i < MAX_CI; i++) {
		struct fci *ci = &gi->ci[i];

		if (ci->used)
			continue;
		memset(ci, 0, sizeof *ci);
		ci->magic = CI_MAGIC;
		ci->used = 1;
		ci->id = id;
		ci->profile = slices == 7 ? 4 : slices - 1;
		ci->slices = slices;
		ci->sms = gi->prof->sms * slices / gi->prof->slices;
		ci->gi = gi;
		snprintf(ci->uuid, sizeof ci->uuid, "MIG-5eed0000-0000-4000-8000-%04u%04u%04u",
		    (unsigned)(gi->gpu - gpus), gi->id, id);
		return ci;
	}
	return NULL;
}

static void
machine_h200(void)
{
	struct fgpu *g = &gpus[0];

	ngpus = 1;
	g->name = "NVIDIA H200";
	g->uuid = "GPU-1d5a3c2e-7b11-4c9e-9f00-0000000000c8";
	g->bus = "00000000:19:00.0";
	g->total = 143771ull << 20;
	g->reserved = 568ull << 20;
	g->used = g->reserved + (4ull << 20);
	g->sms = 132;
	g->cc_major = 9;
	g->cc_minor = 0;
	g->compute_mode = NVML_COMPUTEMODE_DEFAULT;
	g->mig_supported = 1;
	g->prof = h200_profiles;
	g->nprof = NPROF(h200_profiles);
}

static void
machine_h100_mig(void)
{
	struct fgpu *g;
	struct fgi *gi;

	ngpus = 2;
	for (int i = 0; i < 2; i++) {
		g = &gpus[i];
		g->name = "NVIDIA H100 80GB HBM3";
		g->total = 81559ull << 20;
		g->reserved = 512ull << 20;
		g->used = g->reserved;
		g->sms = 132;
		g->cc_major = 9;
		g->mig_supported = 1;
		g->prof = h100_profiles;
		g->nprof = NPROF(h100_profiles);
	}
	g = &gpus[0];
	g->uuid = "GPU-aaaaaaaa-1111-4222-8333-000000000000";
	g->bus = "00000000:1B:00.0";
	g->mig_current = g->mig_pending = NVML_DEVICE_MIG_ENABLE;
	g->compute_mode = NVML_COMPUTEMODE_DEFAULT;
	gi = add_gi(g, 1, 9, 0);              /* 3g.40gb at 0+4 */
	add_ci(gi, 0, 3)->nprocs = 1;
	gi = add_gi(g, 5, 19, 4);             /* 1g.10gb at 4+1 */
	add_ci(gi, 0, 1);
	add_gi(g, 6, 19, 5);                  /* 1g.10gb at 5+1, no compute instance */
	g->next_gi_id = 7;
	g = &gpus[1];
	g->uuid = "GPU-bbbbbbbb-1111-4222-8333-000000000001";
	g->bus = "00000000:2A:00.0";
	g->mig_current = NVML_DEVICE_MIG_DISABLE;
	g->mig_pending = NVML_DEVICE_MIG_ENABLE;
	g->compute_mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
	g->next_gi_id = 1;
}

/* ---- handles ------------------------------------------------------------ */

static struct fgpu *
as_gpu(nvmlDevice_t d)
{
	struct fgpu *g = (struct fgpu *)(void *)d;

	return g && g->magic == GPU_MAGIC ? g : NULL;
}

static struct fci *
as_mig(nvmlDevice_t d)
{
	struct fci *c = (struct fci *)(void *)d;

	return c && c->magic == CI_MAGIC && c->used ? c : NULL;
}

static struct fgi *
as_gi(nvmlGpuInstance_t h)
{
	struct fgi *gi = (struct fgi *)(void *)h;

	return gi && gi->magic == GI_MAGIC && gi->used ? gi : NULL;
}

static struct fci *
as_ci(nvmlComputeInstance_t h)
{
	struct fci *c = (struct fci *)(void *)h;

	return c && c->magic == CI_MAGIC && c->used ? c : NULL;
}

#define NEED_INIT() do { if (!initialized) return NVML_ERROR_UNINITIALIZED; } while (0)

static nvmlReturn_t
put_str(char *buf, unsigned len, const char *s)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

/* ---- init, system ------------------------------------------------------- */

/*
 * The real library starts a thread of its own in nvmlInit (seen on the
 * lent H200, driver 580). A thread that does not block SIGCHLD takes the
 * signals a signalfd was waiting for: the fake does the same, so that CI
 * catches a farm that relies on the signal alone.
 */
static void *
driver_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static pthread_t driver_tid;
static int driver_running;

static void
start_driver_thread(void)
{
	if (!driver_running && pthread_create(&driver_tid, NULL, driver_thread, NULL) == 0)
		driver_running = 1;
}

/* Before the library can be unloaded (dlclose), its thread must be gone. */
static void
stop_driver_thread(void)
{
	if (!driver_running)
		return;
	pthread_cancel(driver_tid);
	pthread_join(driver_tid, NULL);
	driver_running = 0;
}

EXPORT nvmlReturn_t
nvmlInit_v2(void)
{
	const char *m = getenv("FAKENVML_MACHINE");

	INJECT("nvmlInit_v2");
	start_driver_thread();
	memset(gpus, 0, sizeof gpus);
	for (int i = 0; i < MAX_GPUS; i++)
		gpus[i].magic = GPU_MAGIC;
	if (!m || !*m || strcmp(m, "h200") == 0)
		machine_h200();
	else if (strcmp(m, "h100-mig") == 0)
		machine_h100_mig();
	else
		return NVML_ERROR_UNKNOWN;
	initialized = 1;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlShutdown(void)
{
	NEED_INIT();
	stop_driver_thread();
	initialized = 0;
	return NVML_SUCCESS;
}

EXPORT const char *
nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_IN_USE: return "In use by another client";
	case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
	default: return "Unknown Error";
	}
}

EXPORT nvmlReturn_t
nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	NEED_INIT();
	INJECT("nvmlSystemGetDriverVersion");
	return put_str(buf, len, "580.159.04");
}

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	NEED_INIT();
	INJECT("nvmlSystemGetCudaDriverVersion_v2");
	*v = getenv("FAKENVML_CUDA") ? atoi(getenv("FAKENVML_CUDA")) : 13000;
	return NVML_SUCCESS;
}
#endif

#ifndef FAKENVML_NO_COUNT
EXPORT nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned *count)
{
	NEED_INIT();
	INJECT("nvmlDeviceGetCount_v2");
	*count = (unsigned)ngpus;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned idx, nvmlDevice_t *h)
{
	NEED_INIT();
	INJECT("nvmlDeviceGetHandleByIndex_v2");
	if (idx >= (unsigned)ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*h = (nvmlDevice_t)(void *)&gpus[idx];
	return NVML_SUCCESS;
}

/* ---- device queries ----------------------------------------------------- */

EXPORT nvmlReturn_t
nvmlDeviceGetIndex(nvmlDevice_t d, unsigned *idx)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	*idx = (unsigned)(g - gpus);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len)
{
	struct fgpu *g = as_gpu(d);
	struct fci *c = as_mig(d);
	char name[128];

	NEED_INIT();
	INJECT("nvmlDeviceGetName");
	if (g)
		return put_str(buf, len, g->name);
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(name, sizeof name, "%s %s", c->gi->gpu->name, c->gi->prof->name);
	return put_str(buf, len, name);
}

EXPORT nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned len)
{
	struct fgpu *g = as_gpu(d);
	struct fci *c = as_mig(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetUUID");
	if (g)
		return put_str(buf, len, g->uuid);
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	return put_str(buf, len, c->uuid);
}

EXPORT nvmlReturn_t
nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetPciInfo_v3");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof *pci);
	snprintf(pci->busId, sizeof pci->busId, "%s", g->bus);
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", g->bus + 4);
	pci->pciDeviceId = 0x233510de;
	return NVML_SUCCESS;
}

/* The simulated device of FAKENVML_DEVICE, read now: 1, or 0 when there is none. */
static int
model(const struct fgpu *g, struct fakedev_conf *c, struct fakedev_state *s)
{
	const char *dir = getenv("FAKENVML_DEVICE");
	int fd;

	if (!dir || !*dir || g != &gpus[0] || fakedev_conf_load(dir, c) < 0 ||
	    (fd = fakedev_lock(dir, 0)) < 0)
		return 0;
	fakedev_read(fd, s);
	close(fd);
	return 1;
}

static struct fakedev_state model_state;

/* Memory of a GPU, or of the GPU instance a MIG device lives in. */
static nvmlReturn_t
mem_of(nvmlDevice_t d, unsigned long long *total, unsigned long long *reserved,
    unsigned long long *used)
{
	struct fgpu *g = as_gpu(d);
	struct fci *c = as_mig(d);

	if (g) {
		struct fakedev_conf conf;

		*total = g->total;
		*reserved = g->reserved;
		*used = g->used;
		if (model(g, &conf, &model_state)) {
			*total = (unsigned long long)conf.dev_mib << 20;
			*reserved = 0;
			*used = (unsigned long long)fakedev_used_mib(&model_state) << 20;
		}
		return NVML_SUCCESS;
	}
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	*total = c->gi->prof->mem_mib << 20;
	*reserved = 0;
	*used = (13ull + 100ull * (unsigned)c->nprocs) << 20;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	unsigned long long total, reserved, used;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetMemoryInfo");
	if ((rc = mem_of(d, &total, &reserved, &used)) != NVML_SUCCESS)
		return rc;
	m->total = total;
	m->used = used;
	m->free = total - used;
	return NVML_SUCCESS;
}

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	unsigned long long total, reserved, used;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetMemoryInfo_v2");
	if (old_driver() || m->version != MEMORY_V2_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if ((rc = mem_of(d, &total, &reserved, &used)) != NVML_SUCCESS)
		return rc;
	m->total = total;
	m->reserved = reserved;
	m->used = used;
	m->free = total - used;
	return NVML_SUCCESS;
}
#endif

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a)
{
	struct fgpu *g = as_gpu(d);
	struct fci *c = as_mig(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetAttributes_v2");
	memset(a, 0, sizeof *a);
	/* "This API currently only supports MIG device handles" (nvml.h) */
	if (g)
		return NVML_ERROR_NOT_SUPPORTED;
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	a->multiprocessorCount = c->sms;
	a->gpuInstanceSliceCount = c->gi->prof->slices;
	a->computeInstanceSliceCount = c->slices;
	a->memorySizeMB = c->gi->prof->mem_mib;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t
nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = g->cc_major;
	*minor = g->cc_minor;
	return NVML_SUCCESS;
}

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceGetNumGpuCores(nvmlDevice_t d, unsigned *cores)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetNumGpuCores");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cores = g->sms * 128;  /* Hopper */
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t
nvmlDeviceGetComputeMode(nvmlDevice_t d, int *mode)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetComputeMode");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mode = g->compute_mode;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pend)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetMigMode");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!g->mig_supported)
		return NVML_ERROR_NOT_SUPPORTED;
	*cur = g->mig_current;
	*pend = g->mig_pending;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceSetMigMode(nvmlDevice_t d, unsigned mode, nvmlReturn_t *activation)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceSetMigMode");
	if (!g || !activation || mode > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < MAX_GI && mode == NVML_DEVICE_MIG_DISABLE; i++)
		if (g->gi[i].used) {
			*activation = NVML_ERROR_IN_USE;
			return NVML_SUCCESS;
		}
	g->mig_current = g->mig_pending = mode;
	*activation = NVML_SUCCESS;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetUtilizationRates");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	u->gpu = 42;
	u->memory = 7;
	{
		struct fakedev_conf c;

		static double last_t, last_busy;
		double sm, busy, t;

		if (model(g, &c, &model_state)) {
			/* the share of time busy since the last reading, as the driver's period */
			fakedev_integrals(&c, &model_state, &sm, &busy, &t);
			u->gpu = last_t > 0 && t > last_t ? (unsigned)(100 * (busy - last_busy) / (t - last_t) + 0.5) :
			    (fakedev_on_gpu(&model_state) > 0 ? 100 : 0);
			if (u->gpu > 100)
				u->gpu = 100;
			u->memory = u->gpu / 2;
			last_t = t;
			last_busy = busy;
		}
	}
	return NVML_SUCCESS;
}

/*
 * Count in, count out, as NVML does: too small a buffer gets
 * INSUFFICIENT_SIZE and the count needed.
 */
OLD_ABI_UNUSED static nvmlReturn_t
put_procs(unsigned n, unsigned gi, unsigned ci, unsigned *count, nvmlProcessInfo_v2_t *v)
{
	unsigned have = *count;

	*count = n;
	if (n > have || (n && !v))
		return NVML_ERROR_INSUFFICIENT_SIZE;
	for (unsigned i = 0; i < n; i++) {
		v[i].pid = i == 0 ? (unsigned)getpid() : 0x3ffffff0u + i;
		v[i].usedGpuMemory = i == 1 ? NVML_VALUE_NOT_AVAILABLE_ULL : (512ull + i) << 20;
		v[i].gpuInstanceId = gi;
		v[i].computeInstanceId = ci;
	}
	return NVML_SUCCESS;
}

#ifndef FAKENVML_OLD_ABI
/* The simulated device's tasks on the GPU, count in, count out. */
static nvmlReturn_t
model_procs(unsigned *count, nvmlProcessInfo_v2_t *v)
{
	unsigned have = *count, n = 0;

	for (int i = 0; i < model_state.n; i++)
		if (model_state.task[i].phase == 1) {
			if (n < have && v) {
				v[n].pid = (unsigned)model_state.task[i].pid;
				v[n].usedGpuMemory = (unsigned long long)model_state.task[i].mib << 20;
				v[n].gpuInstanceId = NVML_NO_INSTANCE_ID;
				v[n].computeInstanceId = NVML_NO_INSTANCE_ID;
			}
			n++;
		}
	*count = n;
	return n > have ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_v2_t *v)
{
	struct fgpu *g = as_gpu(d);
	struct fakedev_conf c;

	NEED_INIT();
	INJECT("nvmlDeviceGetMPSComputeRunningProcesses_v3");
	if (!g && !as_mig(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g && model(g, &c, &model_state))
		return model_procs(count, v);
	*count = 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_v2_t *v)
{
	struct fgpu *g = as_gpu(d);
	struct fci *c = as_mig(d);
	const char *np = getenv("FAKENVML_NPROCS");
	struct fakedev_conf conf;

	NEED_INIT();
	INJECT("nvmlDeviceGetComputeRunningProcesses_v3");
	if (g && model(g, &conf, &model_state))
		return model_procs(count, v);
	if (c)
		return put_procs((unsigned)c->nprocs, c->gi->id, c->id, count, v);
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g->mig_current == NVML_DEVICE_MIG_ENABLE)
		return put_procs(0, 0, 0, count, v);
	return put_procs(np ? (unsigned)atoi(np) : 2, NVML_NO_INSTANCE_ID, NVML_NO_INSTANCE_ID, count, v);
}
#endif

/* FAKENVML_ENERGY_STEP_MS: the energy counter moves only every that many ms (0: on every read). */
OLD_ABI_UNUSED static double
energy_step_ms(void)
{
	const char *v = getenv("FAKENVML_ENERGY_STEP_MS");

	return v ? atof(v) : 0;
}

#ifndef FAKENVML_OLD_ABI
static unsigned long long energy_now(struct fgpu *g);

EXPORT nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetTotalEnergyConsumption");
	if (!g || !mj)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (energy_step_ms() > 0) {
		/* a driver that updates the counter every step: the value read at the start of this step */
		static long long bucket = -1;
		static unsigned long long held;
		long long now = (long long)(fakedev_now() * 1000.0 / energy_step_ms());

		if (now != bucket) {
			bucket = now;
			held = energy_now(g);
		}
		*mj = held;
		return NVML_SUCCESS;
	}
	*mj = energy_now(g);
	return NVML_SUCCESS;
}

static unsigned long long
energy_now(struct fgpu *g)
{
	struct fakedev_conf c;
	struct timespec ts;

	if (model(g, &c, &model_state)) {
		double sm, busy, t;

		/* idle power all along (a counter from the clock's epoch), the rest as its SMs were active */
		fakedev_integrals(&c, &model_state, &sm, &busy, &t);
		return (unsigned long long)(1000.0 * (c.idle_w * t + (c.busy_w - c.idle_w) * sm));
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 100000ull + (unsigned long long)ts.tv_nsec / 10000ull;
}

/*
 * Per-process utilization, one sample per process and call, stamped now.
 * FAKENVML_PROC_UTIL: unset or "each": every process on the GPU has its
 * own (under FAKENVML_DEVICE the tasks on the GPU share it evenly);
 * "mps": what the driver gives under MPS, the server's sample alone (a
 * pid no task has, at the device's busy share), none of its clients';
 * "none": NOT_SUPPORTED, as on a MIG-enabled GPU (which answers so too).
 */
EXPORT nvmlReturn_t
nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *u, unsigned *count,
    unsigned long long last_seen)
{
	struct fgpu *g = as_gpu(d);
	const char *mode = getenv("FAKENVML_PROC_UTIL");
	unsigned long long now = (unsigned long long)(fakedev_now() * 1e6);
	struct fakedev_conf c;
	unsigned pid[FAKEDEV_TASKS + 8], sm[FAKEDEV_TASKS + 8], n = 0, have;

	NEED_INIT();
	INJECT("nvmlDeviceGetProcessUtilization");
	if (!g || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if ((mode && strcmp(mode, "none") == 0) || g->mig_current == NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	if (now <= last_seen)
		return NVML_ERROR_NOT_FOUND;
	if (model(g, &c, &model_state)) {
		int on = fakedev_on_gpu(&model_state);

		if (mode && strcmp(mode, "mps") == 0) {
			if (on > 0) {
				pid[n] = 0x3fffffe0u;
				sm[n++] = 99;
			}
		} else
			for (int i = 0; i < model_state.n && n < FAKEDEV_TASKS; i++)
				if (model_state.task[i].phase == 1) {
					pid[n] = (unsigned)model_state.task[i].pid;
					sm[n++] = (unsigned)(100 / on);
				}
	} else if (mode && strcmp(mode, "mps") == 0) {
		pid[n] = 0x3fffffe0u;
		sm[n++] = 42;
	} else {
		pid[n] = (unsigned)getpid();
		sm[n++] = 30;
		pid[n] = 0x3ffffff2u;
		sm[n++] = 10;
	}
	if (n == 0)
		return NVML_ERROR_NOT_FOUND;
	have = *count;
	*count = n;
	if (!u || n > have)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	for (unsigned i = 0; i < n; i++)
		u[i] = (nvmlProcessUtilizationSample_t){pid[i], now, sm[i], sm[i] / 2, 0, 0};
	return NVML_SUCCESS;
}
#endif

/* ---- GPM --------------------------------------------------------------- */

#ifndef FAKENVML_OLD_ABI
struct nvmlGpmSample_st {
	int magic;
	double sm_int, t;         /* the device's SM activity integrated up to when it was taken */
	double sm;                /* and at that moment (no simulated device: 0) */
};

enum { SAMPLE_MAGIC = 0x47504d53 };

EXPORT nvmlReturn_t
nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *sup)
{
	NEED_INIT();
	INJECT("nvmlGpmQueryDeviceSupport");
	if (!sup || (!as_gpu(d) && !as_mig(d)))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sup->version != 1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	sup->isSupportedDevice = 1;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpmSampleAlloc(nvmlGpmSample_t *out)
{
	NEED_INIT();
	INJECT("nvmlGpmSampleAlloc");
	if (!out || !(*out = calloc(1, sizeof **out)))
		return NVML_ERROR_INVALID_ARGUMENT;
	(*out)->magic = SAMPLE_MAGIC;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpmSampleFree(nvmlGpmSample_t s)
{
	NEED_INIT();
	if (!s || s->magic != SAMPLE_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->magic = 0;
	free(s);
	return NVML_SUCCESS;
}

static nvmlReturn_t
take(nvmlDevice_t d, nvmlGpmSample_t s)
{
	struct fgpu *g = as_gpu(d);
	struct fakedev_conf c;

	if (!g || !s || s->magic != SAMPLE_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->sm = s->sm_int = 0;
	s->t = fakedev_now();
	if (model(g, &c, &model_state)) {
		double busy;

		s->sm = fakedev_sm(&c, fakedev_on_gpu(&model_state));
		fakedev_integrals(&c, &model_state, &s->sm_int, &busy, &s->t);
	}
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s)
{
	NEED_INIT();
	INJECT("nvmlGpmSampleGet");
	return take(d, s);
}

EXPORT nvmlReturn_t
nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned gi, nvmlGpmSample_t s)
{
	NEED_INIT();
	INJECT("nvmlGpmMigSampleGet");
	(void)gi;
	return take(d, s);
}

EXPORT nvmlReturn_t
nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
	double sm;

	NEED_INIT();
	INJECT("nvmlGpmMetricsGet");
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != 1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (m->numMetrics > NVML_GPM_METRIC_MAX || !m->sample1 || !m->sample2 ||
	    m->sample1->magic != SAMPLE_MAGIC || m->sample2->magic != SAMPLE_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* the average between the samples, as the counters give it */
	sm = m->sample2->t > m->sample1->t ? (m->sample2->sm_int - m->sample1->sm_int) /
	    (m->sample2->t - m->sample1->t) : m->sample2->sm;
	for (unsigned i = 0; i < m->numMetrics; i++) {
		nvmlGpmMetric_t *x = &m->metrics[i];

		x->nvmlReturn = NVML_SUCCESS;
		if (x->metricId == NVML_GPM_METRIC_SM_UTIL)
			x->value = 100 * sm;
		else if (x->metricId == NVML_GPM_METRIC_SM_OCCUPANCY)
			x->value = 25 * sm;
		else
			x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
	}
	return NVML_SUCCESS;
}
#endif

/* ---- MIG profiles ------------------------------------------------------- */

static nvmlReturn_t
find_prof(nvmlDevice_t d, unsigned index, const struct fprof **out)
{
	struct fgpu *g = as_gpu(d);

	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!g->mig_supported)
		return NVML_ERROR_NOT_SUPPORTED;
	if (index >= NVML_GPU_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < g->nprof; i++)
		if (g->prof[i].index == (int)index) {
			*out = &g->prof[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned index, nvmlGpuInstanceProfileInfo_t *info)
{
	const struct fprof *p = NULL;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetGpuInstanceProfileInfo");
	if ((rc = find_prof(d, index, &p)) != NVML_SUCCESS)
		return rc;
	memset(info, 0, sizeof *info);
	info->id = p->id;
	info->sliceCount = p->slices;
	info->instanceCount = p->count;
	info->multiprocessorCount = p->sms;
	info->copyEngineCount = p->slices;
	info->memorySizeMB = p->mem_mib;
	return NVML_SUCCESS;
}

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned index, nvmlGpuInstanceProfileInfo_v2_t *info)
{
	const struct fprof *p = NULL;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetGpuInstanceProfileInfoV");
	if (old_driver() || info->version != GI_PROFILE_V2_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if ((rc = find_prof(d, index, &p)) != NVML_SUCCESS)
		return rc;
	memset(info, 0, sizeof *info);
	info->version = GI_PROFILE_V2_VERSION;
	info->id = p->id;
	info->sliceCount = p->slices;
	info->instanceCount = p->count;
	info->multiprocessorCount = p->sms;
	info->copyEngineCount = p->slices;
	info->memorySizeMB = p->mem_mib;
	snprintf(info->name, sizeof info->name, "%s", p->name);
	return NVML_SUCCESS;
}
#endif

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t d, unsigned id, nvmlGpuInstancePlacement_t *pl,
    unsigned *count)
{
	struct fgpu *g = as_gpu(d);
	const struct fprof *p;

	NEED_INIT();
	INJECT("nvmlDeviceGetGpuInstancePossiblePlacements_v2");
	if (!g || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(p = prof_by_id(g, id)))
		return NVML_ERROR_NOT_SUPPORTED;
	if (!pl) {
		*count = p->nstarts;
		return NVML_SUCCESS;
	}
	if (*count < p->nstarts)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	for (unsigned i = 0; i < p->nstarts; i++) {
		pl[i].start = p->starts[i];
		pl[i].size = p->size;
	}
	*count = p->nstarts;
	return NVML_SUCCESS;
}
#endif

/* ---- GPU and compute instances ------------------------------------------ */

static nvmlReturn_t
need_mig(struct fgpu *g)
{
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g->mig_current != NVML_DEVICE_MIG_ENABLE)
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstances(nvmlDevice_t d, unsigned id, nvmlGpuInstance_t *out, unsigned *count)
{
	struct fgpu *g = as_gpu(d);
	unsigned n = 0;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetGpuInstances");
	if ((rc = need_mig(g)) != NVML_SUCCESS)
		return rc;
	for (int i = 0; i < MAX_GI; i++) {
		if (!g->gi[i].used || g->gi[i].prof->id != id)
			continue;
		if (n >= *count)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		out[n++] = (nvmlGpuInstance_t)(void *)&g->gi[i];
	}
	*count = n;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned id, nvmlGpuInstance_t *out)
{
	struct fgpu *g = as_gpu(d);
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetGpuInstanceById");
	if ((rc = need_mig(g)) != NVML_SUCCESS)
		return rc;
	for (int i = 0; i < MAX_GI; i++)
		if (g->gi[i].used && g->gi[i].id == id) {
			*out = (nvmlGpuInstance_t)(void *)&g->gi[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t
nvmlGpuInstanceGetInfo(nvmlGpuInstance_t h, nvmlGpuInstanceInfo_t *info)
{
	struct fgi *gi = as_gi(h);

	NEED_INIT();
	INJECT("nvmlGpuInstanceGetInfo");
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(info, 0, sizeof *info);
	info->device = (nvmlDevice_t)(void *)gi->gpu;
	info->id = gi->id;
	info->profileId = gi->prof->id;
	info->placement.start = gi->start;
	info->placement.size = gi->prof->size;
	return NVML_SUCCESS;
}

static const unsigned ci_slices[] = {1, 2, 3, 4, 7};

EXPORT nvmlReturn_t
nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t h, unsigned index, unsigned eng,
    nvmlComputeInstanceProfileInfo_t *info)
{
	struct fgi *gi = as_gi(h);

	NEED_INIT();
	INJECT("nvmlGpuInstanceGetComputeInstanceProfileInfo");
	if (!gi || eng != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED ||
	    index >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (index >= sizeof ci_slices / sizeof ci_slices[0] || ci_slices[index] > gi->prof->slices)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof *info);
	info->id = index;
	info->sliceCount = ci_slices[index];
	info->instanceCount = gi->prof->slices / ci_slices[index];
	info->multiprocessorCount = gi->prof->sms * ci_slices[index] / gi->prof->slices;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t h, unsigned id, nvmlComputeInstance_t *out,
    unsigned *count)
{
	struct fgi *gi = as_gi(h);
	unsigned n = 0;

	NEED_INIT();
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < MAX_CI; i++) {
		if (!gi->ci[i].used || gi->ci[i].profile != id)
			continue;
		if (n >= *count)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		out[n++] = (nvmlComputeInstance_t)(void *)&gi->ci[i];
	}
	*count = n;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t h, unsigned id, nvmlComputeInstance_t *out)
{
	struct fgi *gi = as_gi(h);

	NEED_INIT();
	INJECT("nvmlGpuInstanceGetComputeInstanceById");
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < MAX_CI; i++)
		if (gi->ci[i].used && gi->ci[i].id == id) {
			*out = (nvmlComputeInstance_t)(void *)&gi->ci[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t
nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t h, nvmlComputeInstanceInfo_t *info)
{
	struct fci *c = as_ci(h);

	NEED_INIT();
	INJECT("nvmlComputeInstanceGetInfo_v2");
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(info, 0, sizeof *info);
	info->device = (nvmlDevice_t)(void *)c->gi->gpu;
	info->gpuInstance = (nvmlGpuInstance_t)(void *)c->gi;
	info->id = c->id;
	info->profileId = c->profile;
	info->placement.size = c->slices;
	return NVML_SUCCESS;
}

/* ---- MIG devices: the compute instances in use, numbered 0.. per GPU ----- */

EXPORT nvmlReturn_t
nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *count)
{
	struct fgpu *g = as_gpu(d);

	NEED_INIT();
	INJECT("nvmlDeviceGetMaxMigDeviceCount");
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = g->mig_current == NVML_DEVICE_MIG_ENABLE ? 7 : 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned idx, nvmlDevice_t *out)
{
	struct fgpu *g = as_gpu(d);
	unsigned n = 0;
	nvmlReturn_t rc;

	NEED_INIT();
	INJECT("nvmlDeviceGetMigDeviceHandleByIndex");
	if ((rc = need_mig(g)) != NVML_SUCCESS)
		return rc;
	for (int i = 0; i < MAX_GI; i++)
		for (int k = 0; k < MAX_CI && g->gi[i].used; k++) {
			if (!g->gi[i].ci[k].used)
				continue;
			if (n++ == idx) {
				*out = (nvmlDevice_t)(void *)&g->gi[i].ci[k];
				return NVML_SUCCESS;
			}
		}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t
nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t d, nvmlDevice_t *out)
{
	struct fci *c = as_mig(d);

	NEED_INIT();
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	*out = (nvmlDevice_t)(void *)c->gi->gpu;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned *id)
{
	struct fci *c = as_mig(d);

	NEED_INIT();
	if (!c)
		return NVML_ERROR_NOT_SUPPORTED;
	*id = c->gi->id;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned *id)
{
	struct fci *c = as_mig(d);

	NEED_INIT();
	if (!c)
		return NVML_ERROR_NOT_SUPPORTED;
	*id = c->id;
	return NVML_SUCCESS;
}

/* ---- changes (root only on a real card) --------------------------------- */

OLD_ABI_UNUSED static int
overlaps(const struct fgpu *g, unsigned start, unsigned size)
{
	for (int i = 0; i < MAX_GI; i++) {
		const struct fgi *gi = &g->gi[i];

		if (gi->used && start < gi->start + gi->prof->size && gi->start < start + size)
			return 1;
	}
	return 0;
}

#ifndef FAKENVML_OLD_ABI
EXPORT nvmlReturn_t
nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned id, const nvmlGpuInstancePlacement_t *pl,
    nvmlGpuInstance_t *out)
{
	struct fgpu *g = as_gpu(d);
	const struct fprof *p;
	struct fgi *gi;
	nvmlReturn_t rc;
	int valid = 0;

	NEED_INIT();
	INJECT("nvmlDeviceCreateGpuInstanceWithPlacement");
	if ((rc = need_mig(g)) != NVML_SUCCESS)
		return rc;
	if (!pl || !(p = prof_by_id(g, id)))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < p->nstarts; i++)
		valid |= p->starts[i] == pl->start && p->size == pl->size;
	if (!valid)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (overlaps(g, pl->start, pl->size) || !(gi = add_gi(g, g->next_gi_id, id, pl->start)))
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	g->next_gi_id++;
	*out = (nvmlGpuInstance_t)(void *)gi;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t
nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t h, unsigned id, nvmlComputeInstance_t *out)
{
	struct fgi *gi = as_gi(h);
	struct fci *c;
	unsigned next = 0, used = 0;

	NEED_INIT();
	INJECT("nvmlGpuInstanceCreateComputeInstance");
	if (!gi || id >= sizeof ci_slices / sizeof ci_slices[0] || ci_slices[id] > gi->prof->slices)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < MAX_CI; i++)
		if (gi->ci[i].used) {
			used += gi->ci[i].slices;
			if (gi->ci[i].id >= next)
				next = gi->ci[i].id + 1;
		}
	if (used + ci_slices[id] > gi->prof->slices || !(c = add_ci(gi, next, ci_slices[id])))
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	*out = (nvmlComputeInstance_t)(void *)c;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlComputeInstanceDestroy(nvmlComputeInstance_t h)
{
	struct fci *c = as_ci(h);

	NEED_INIT();
	INJECT("nvmlComputeInstanceDestroy");
	if (!c)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (c->nprocs)
		return NVML_ERROR_IN_USE;
	c->used = 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlGpuInstanceDestroy(nvmlGpuInstance_t h)
{
	struct fgi *gi = as_gi(h);

	NEED_INIT();
	INJECT("nvmlGpuInstanceDestroy");
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < MAX_CI; i++)
		if (gi->ci[i].used)
			return NVML_ERROR_IN_USE;
	gi->used = 0;
	return NVML_SUCCESS;
}
