/*
 * test_nvml: the NVML backend (src/gpu/nvml*.c) driven end to end through
 * the fake libnvidia-ml.so.1 (tests/fakenvml/): loading, every snapshot
 * field, the MIG instance walk, the changes, fallbacks for older drivers,
 * and the one-line errors. The H200 profile table is checked against the
 * measured rows of data/mig-profiles.csv.
 */
#include "gpu/backend.h"
#include "gpu/nvml.h"
#include "util/err.h"
#include "tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char lib[4096], lib_old[4096], lib_broken[4096];

static void
setup(const char *machine, const char *fail, const char *old, const char *nprocs)
{
	setenv("GPUPACK_NVML_LIB", lib, 1);
	if (machine)
		setenv("FAKENVML_MACHINE", machine, 1);
	else
		unsetenv("FAKENVML_MACHINE");
	if (fail)
		setenv("FAKENVML_FAIL", fail, 1);
	else
		unsetenv("FAKENVML_FAIL");
	if (old)
		setenv("FAKENVML_OLD", old, 1);
	else
		unsetenv("FAKENVML_OLD");
	if (nprocs)
		setenv("FAKENVML_NPROCS", nprocs, 1);
	else
		unsetenv("FAKENVML_NPROCS");
	err_clear();
}

/* Open and snapshot; 0 or -1 with the error recorded. */
static int
snap(struct gpu_backend **b, struct gpu_system *sys, unsigned flags)
{
	memset(sys, 0, sizeof *sys);
	*b = NULL;
	if (gpu_nvml_open(b) < 0)
		return -1;
	if (gpu_snapshot(*b, sys, flags) < 0) {
		gpu_close(*b);
		*b = NULL;
		return -1;
	}
	return 0;
}

static const struct mig_profile *
prof(const struct gpu_info *g, int index)
{
	for (int i = 0; i < g->nprofiles; i++)
		if (g->profiles[i].index == index)
			return &g->profiles[i];
	return NULL;
}

static void
self_comm(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/comm", "r");

	buf[0] = '\0';
	if (f && fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* Each measured H200 row of data/mig-profiles.csv, against the snapshot. */
static void
check_csv(const struct gpu_info *g, const char *src)
{
	char path[4096], line[512];
	FILE *f;
	int rows = 0;

	snprintf(path, sizeof path, "%s/data/mig-profiles.csv", src);
	f = fopen(path, "r");
	if (!ok(f != NULL, "open %s", path))
		return;
	while (fgets(line, sizeof line, f)) {
		char *fld[10], *save = NULL, *tok, pl[64] = "", nm[32];
		const struct mig_profile *p;
		int nf = 0;

		if (line[0] == '#' || strncmp(line, "H200-141GB,", 11) != 0 || !strstr(line, "measured"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, ",", &save); tok && nf < 10; tok = strtok_r(NULL, ",", &save))
			fld[nf++] = tok;
		if (!ok(nf == 10, "csv row has 10 fields"))
			continue;
		rows++;
		snprintf(nm, sizeof nm, "%s", fld[3]);
		p = prof(g, atoi(fld[1]));
		if (!ok(p != NULL, "profile index %s present", fld[1]))
			continue;
		is_int(p->id, atoi(fld[2]), "%s: id", nm);
		is_str(p->name, nm, "%s: name", nm);
		is_int(p->slices, atoi(fld[4]), "%s: slices", nm);
		is_int(p->mem_bytes, (long long)atoll(fld[5]) << 20, "%s: memory", nm);
		is_int(p->sms, atoi(fld[6]), "%s: SMs", nm);
		is_int(p->max_count, atoi(fld[7]), "%s: max count", nm);
		for (int i = 0; i < p->nplacements; i++) {
			size_t len = strlen(pl);

			snprintf(pl + len, sizeof pl - len, "%s%u+%u", i ? " " : "", p->placements[i].start,
			    p->placements[i].size);
		}
		is_str(pl, fld[8], "%s: placements", nm);
	}
	fclose(f);
	is_int(rows, 7, "seven measured H200 rows checked");
	is_int(g->nprofiles, rows, "no profile beyond the measured ones");
}

static void
test_h200(const char *src)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	const struct gpu_info *g;
	char comm[64];

	setup(NULL, NULL, NULL, NULL);
	if (!ok(snap(&b, &sys, GPU_SNAP_PROFILES | GPU_SNAP_PROCESSES) == 0, "h200: snapshot (%s)",
	    err_msg()))
		return;
	is_str(sys.backend, "nvml", "backend name");
	is_str(sys.driver_version, "580.159.04", "driver version");
	is_str(sys.cuda_version, "13.0", "CUDA version 13000 -> 13.0");
	is_int(sys.ngpus, 1, "one GPU");
	g = &sys.gpus[0];
	is_int(g->index, 0, "index");
	is_str(g->uuid, "GPU-1d5a3c2e-7b11-4c9e-9f00-0000000000c8", "uuid");
	is_str(g->name, "NVIDIA H200", "name");
	is_str(g->pci_bus_id, "00000000:19:00.0", "PCI bus id");
	is_int(g->mem_total, 143771ll << 20, "memory total in bytes");
	is_int(g->mem_reserved, 568ll << 20, "reserved memory from the v2 struct");
	is_int(g->mem_used, 572ll << 20, "memory used");
	is_int(g->mem_free, g->mem_total - g->mem_used, "memory free");
	is_int(g->sms, 132, "SMs: 16896 cores / 128 per SM (attributes answer MIG devices only)");
	is_int(g->cc_major, 9, "cc major");
	is_int(g->cc_minor, 0, "cc minor");
	is_int(g->compute_mode, COMPUTE_DEFAULT, "compute mode");
	is_int(g->mig_current, MIG_DISABLED, "MIG current");
	is_int(g->mig_pending, MIG_DISABLED, "MIG pending");
	is_int(g->ngi, 0, "no GPU instances with MIG off");
	check_csv(g, src);
	is_int(g->nprocs, 2, "two processes");
	self_comm(comm, sizeof comm);
	if (g->nprocs == 2) {
		is_int(g->procs[0].pid, getpid(), "process pid");
		is_str(g->procs[0].name, comm, "process name from /proc/PID/comm");
		is_int(g->procs[0].mem_used, 512ll << 20, "process memory");
		is_int(g->procs[0].gi_id, -1, "no GPU instance off MIG");
		is_int(g->procs[0].ci_id, -1, "no compute instance off MIG");
		is_int(g->procs[1].mem_used, 0, "memory not available -> 0");
		is_str(g->procs[1].name, "", "a gone process has no name");
	}
	gpu_system_free(&sys);

	memset(&sys, 0, sizeof sys);
	ok(gpu_snapshot(b, &sys, 0) == 0, "snapshot without flags");
	is_int(sys.gpus[0].nprofiles, 0, "no profiles unless asked");
	ok(sys.gpus[0].profiles == NULL, "profiles NULL unless asked");
	is_int(sys.gpus[0].nprocs, 0, "no processes unless asked");
	gpu_system_free(&sys);
	gpu_close(b);

	setenv("FAKENVML_CUDA", "12080", 1);
	if (ok(snap(&b, &sys, 0) == 0, "CUDA 12.8: snapshot")) {
		is_str(sys.cuda_version, "12.8", "CUDA version 12080 -> 12.8");
		gpu_system_free(&sys);
		gpu_close(b);
	}
	unsetenv("FAKENVML_CUDA");

	setup(NULL, NULL, NULL, "40");
	if (ok(snap(&b, &sys, GPU_SNAP_PROCESSES) == 0, "40 processes: snapshot")) {
		is_int(sys.gpus[0].nprocs, 40, "more processes than the first buffer holds");
		gpu_system_free(&sys);
		gpu_close(b);
	}
	setup(NULL, NULL, NULL, "0");
	if (ok(snap(&b, &sys, GPU_SNAP_PROCESSES) == 0, "no processes: snapshot")) {
		is_int(sys.gpus[0].nprocs, 0, "zero processes is an answer");
		gpu_system_free(&sys);
		gpu_close(b);
	}
}

static void
test_mig(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	const struct gpu_info *g;
	const struct mig_gi *gi;

	setup("h100-mig", NULL, NULL, NULL);
	if (!ok(snap(&b, &sys, GPU_SNAP_PROFILES | GPU_SNAP_PROCESSES) == 0, "h100-mig: snapshot (%s)",
	    err_msg()))
		return;
	is_int(sys.ngpus, 2, "two GPUs");
	g = &sys.gpus[0];
	is_int(g->mig_current, MIG_ENABLED, "GPU 0: MIG on");
	is_int(g->mig_pending, MIG_ENABLED, "GPU 0: MIG pending on");
	is_int(g->nprofiles, 7, "GPU 0: seven profiles");
	is_int(g->ngi, 3, "GPU 0: three GPU instances (one without a compute instance)");
	if (g->ngi == 3) {
		is_int(g->gi[0].id, 1, "sorted by id: 1");
		is_int(g->gi[1].id, 5, "sorted by id: 5");
		is_int(g->gi[2].id, 6, "sorted by id: 6");
		gi = &g->gi[0];
		is_str(gi->profile, "3g.40gb", "GI 1: profile name");
		is_int(gi->profile_id, 9, "GI 1: profile id");
		is_int(gi->profile_index, 2, "GI 1: profile index");
		is_int(gi->placement.start, 0, "GI 1: placement start");
		is_int(gi->placement.size, 4, "GI 1: placement size");
		is_int(gi->mem_total, 40320ll << 20, "GI 1: memory from the MIG device");
		is_int(gi->mem_used, 113ll << 20, "GI 1: memory used");
		is_int(gi->sms, 60, "GI 1: SMs");
		is_int(gi->nci, 1, "GI 1: one compute instance");
		is_int(gi->ci[0].id, 0, "CI id");
		is_int(gi->ci[0].sms, 60, "CI SMs");
		is_int(gi->ci[0].slices, 3, "CI slices");
		is_int(gi->ci[0].profile_index, 2, "CI profile index (3 slices)");
		is_str(gi->ci[0].uuid, "MIG-5eed0000-0000-4000-8000-000000010000", "CI uuid (MIG-...)");
		gi = &g->gi[2];
		is_str(gi->profile, "1g.10gb", "GI 6: profile");
		is_int(gi->placement.start, 5, "GI 6: placement start");
		is_int(gi->nci, 0, "GI 6: no compute instance");
		is_int(gi->mem_total, 9984ll << 20, "GI 6: memory from its profile");
	}
	is_int(g->nprocs, 1, "GPU 0: one process, found on its MIG device");
	if (g->nprocs == 1) {
		is_int(g->procs[0].gi_id, 1, "process GI id");
		is_int(g->procs[0].ci_id, 0, "process CI id");
	}
	g = &sys.gpus[1];
	is_int(g->mig_current, MIG_DISABLED, "GPU 1: MIG off");
	is_int(g->mig_pending, MIG_ENABLED, "GPU 1: MIG pending on");
	is_int(g->compute_mode, COMPUTE_EXCLUSIVE_PROCESS, "GPU 1: exclusive-process");
	is_int(g->ngi, 0, "GPU 1: no GPU instances");
	is_int(g->nprofiles, 7, "GPU 1: profiles with MIG off");
	gpu_system_free(&sys);
	gpu_close(b);

	/* without --profiles, profiles that cannot be read leave instances unnamed */
	setup("h100-mig", "nvmlDeviceGetGpuInstanceProfileInfoV=4", NULL, NULL);
	if (ok(snap(&b, &sys, 0) == 0, "profiles unreadable, not asked for: snapshot (%s)", err_msg())) {
		/* found through their MIG devices; one without a compute instance has none */
		is_int(sys.gpus[0].ngi, 2, "instances in use still listed");
		is_str(sys.gpus[0].gi[0].profile, "", "instance profile unknown");
		is_int(sys.gpus[0].gi[0].sms, 60, "instance SMs from its compute instances");
		gpu_system_free(&sys);
		gpu_close(b);
	}
	ok(snap(&b, &sys, GPU_SNAP_PROFILES) < 0, "profiles unreadable, asked for: an error");
	is_int(err_code(), EXIT_ENV, "profiles unreadable: exit 3");
}

static void
test_changes(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct mig_placement at = {6, 1}, clash = {4, 1};
	unsigned gi_id = 0, ci_id = 99, u1 = 0, u2 = 0;

	setup("h100-mig", NULL, NULL, NULL);
	if (!ok(gpu_nvml_open(&b) == 0, "h100-mig: open"))
		return;
	ok(b->create_gi(b, 0, 19, &at, &gi_id) == 0, "create 1g.10gb at 6+1 (%s)", err_msg());
	is_int(gi_id, 7, "new GPU instance id");
	ok(b->create_ci(b, 0, gi_id, &ci_id) == 0, "create its compute instance (%s)", err_msg());
	is_int(ci_id, 0, "new compute instance id");
	if (ok(gpu_snapshot(b, &sys, 0) == 0, "snapshot after create")) {
		const struct gpu_info *g = &sys.gpus[0];

		is_int(g->ngi, 4, "four GPU instances");
		if (g->ngi == 4) {
			is_int(g->gi[3].id, 7, "the new one last");
			is_int(g->gi[3].nci, 1, "with one compute instance");
			is_int(g->gi[3].ci[0].sms, 16, "spanning its 16 SMs");
		}
		gpu_system_free(&sys);
	}
	err_clear();
	ok(b->create_gi(b, 0, 19, &clash, &gi_id) < 0, "overlapping placement refused");
	is_int(err_code(), EXIT_USAGE, "overlap: exit 2");
	ok(strstr(err_msg(), "nvmlDeviceCreateGpuInstanceWithPlacement on GPU 0: Insufficient resources") != NULL,
	    "overlap: names the call, the GPU and the reason: %s", err_msg());
	ok(b->destroy_gi(b, 0, 7) < 0, "GPU instance with a compute instance: refused");
	is_int(err_code(), EXIT_USAGE, "in use: exit 2");
	ok(b->destroy_ci(b, 0, 7, 0) == 0, "destroy compute instance (%s)", err_msg());
	ok(b->destroy_gi(b, 0, 7) == 0, "destroy GPU instance (%s)", err_msg());
	ok(b->destroy_gi(b, 0, 99) < 0, "unknown GPU instance");
	is_int(err_code(), EXIT_USAGE, "unknown GPU instance: exit 2");
	ok(strstr(err_msg(), "no GPU instance 99") != NULL, "unknown GPU instance: %s", err_msg());
	ok(b->destroy_ci(b, 0, 1, 5) < 0, "unknown compute instance");
	is_int(err_code(), EXIT_USAGE, "unknown compute instance: exit 2");
	ok(b->create_gi(b, 1, 19, &at, &gi_id) < 0, "create on a GPU with MIG off");
	is_int(err_code(), EXIT_ENV, "MIG off: exit 3");
	ok(strstr(err_msg(), "Not Supported (not supported by this GPU or driver)") != NULL,
	    "MIG off: hint: %s", err_msg());
	ok(b->set_mig_mode(b, 1, 1) == 0, "enable MIG on GPU 1");
	ok(b->set_mig_mode(b, 0, 0) < 0, "disable MIG with instances left: refused");
	ok(strstr(err_msg(), "activation") != NULL, "activation status reported: %s", err_msg());
	ok(b->utilization(b, 0, &u1, &u2) == 0, "utilization");
	is_int(u1, 42, "GPU utilization");
	is_int(u2, 7, "memory utilization");
	ok(b->utilization(b, 5, &u1, &u2) < 0, "GPU 5 does not exist");
	is_int(err_code(), EXIT_USAGE, "no such GPU: exit 2");
	gpu_close(b);

	setup("h100-mig", "nvmlDeviceCreateGpuInstanceWithPlacement=4", NULL, NULL);
	if (ok(gpu_nvml_open(&b) == 0, "open again")) {
		ok(b->create_gi(b, 0, 19, &at, &gi_id) < 0, "create without permission");
		is_int(err_code(), EXIT_ENV, "no permission: exit 3");
		ok(strstr(err_msg(), "Insufficient Permissions (needs root)") != NULL, "hint: %s", err_msg());
		gpu_close(b);
	}
}

static void
test_old_driver(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	const struct mig_profile *p;

	setup(NULL, NULL, "1", NULL);
	if (!ok(snap(&b, &sys, GPU_SNAP_PROFILES) == 0, "old driver: snapshot (%s)", err_msg()))
		return;
	is_int(sys.gpus[0].mem_total, 143771ll << 20, "v1 memory: total");
	is_int(sys.gpus[0].mem_reserved, 0, "v1 memory: no reserved figure");
	is_int(sys.gpus[0].nprofiles, 7, "v1 profiles: all seven");
	p = prof(&sys.gpus[0], 7);
	if (ok(p != NULL, "v1: index 7"))
		is_str(p->name, "1g.16gb+me", "v1: name derived from slices and memory");
	p = prof(&sys.gpus[0], 9);
	if (ok(p != NULL, "v1: index 9"))
		is_str(p->name, "1g.33gb", "v1: memory rounded up to GiB");
	gpu_system_free(&sys);
	gpu_close(b);
}

static void
expect_fail(const char *fail, int code, const char *want, const char *name)
{
	struct gpu_backend *b;
	struct gpu_system sys;

	setup(NULL, fail, NULL, NULL);
	ok(snap(&b, &sys, GPU_SNAP_PROFILES | GPU_SNAP_PROCESSES) < 0, "%s: fails", name);
	is_int(err_code(), code, "%s: exit code", name);
	ok(strstr(err_msg(), want) != NULL, "%s: message: %s", name, err_msg());
	ok(strchr(err_msg(), '\n') == NULL, "%s: one line", name);
}

static void
test_errors(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;

	setup(NULL, NULL, NULL, NULL);
	setenv("GPUPACK_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	ok(gpu_nvml_open(&b) < 0, "no library");
	is_int(err_code(), EXIT_ENV, "no library: exit 3");
	ok(strncmp(err_msg(), "NVIDIA driver not found: cannot load /nonexistent/libnvidia-ml.so.1 (", 69) == 0,
	    "no library: message: %s", err_msg());

	expect_fail("nvmlInit_v2=9", EXIT_ENV, "NVIDIA driver not found: nvmlInit_v2: Driver Not Loaded",
	    "init: driver not loaded");
	expect_fail("nvmlInit_v2=999", EXIT_ENV, "nvmlInit_v2: Unknown Error", "init: unknown error");
	expect_fail("nvmlDeviceGetMemoryInfo_v2=4", EXIT_ENV,
	    "nvmlDeviceGetMemoryInfo_v2 on GPU 0: Insufficient Permissions (needs root)", "memory: no permission");
	expect_fail("nvmlDeviceGetCount_v2=15", EXIT_ENV, "nvmlDeviceGetCount_v2: GPU is lost", "count: GPU lost");
	expect_fail("nvmlDeviceGetUUID=999", EXIT_ENV, "nvmlDeviceGetUUID on GPU 0: Unknown Error", "uuid");
	expect_fail("nvmlDeviceGetGpuInstanceProfileInfoV=4", EXIT_ENV,
	    "nvmlDeviceGetGpuInstanceProfileInfoV on GPU 0: Insufficient Permissions (needs root)",
	    "profiles: no permission");
	expect_fail("nvmlDeviceGetComputeRunningProcesses_v3=4", EXIT_ENV,
	    "nvmlDeviceGetComputeRunningProcesses_v3 on GPU 0: Insufficient Permissions", "processes: no permission");

	/* optional calls degrade to "unknown" */
	setup(NULL, "nvmlDeviceGetMigMode=3,nvmlDeviceGetComputeMode=3,nvmlDeviceGetPciInfo_v3=3,"
	    "nvmlDeviceGetNumGpuCores=3", NULL, NULL);
	if (ok(snap(&b, &sys, GPU_SNAP_PROFILES) == 0, "unsupported optional calls: snapshot")) {
		is_int(sys.gpus[0].mig_current, MIG_UNSUPPORTED, "MIG not supported");
		is_int(sys.gpus[0].compute_mode, COMPUTE_UNKNOWN, "compute mode unknown");
		is_str(sys.gpus[0].pci_bus_id, "", "PCI bus id unknown");
		is_int(sys.gpus[0].sms, 0, "SMs unknown");
		is_int(sys.gpus[0].nprofiles, 0, "no profiles without MIG");
		gpu_system_free(&sys);
		gpu_close(b);
	}
	setup(NULL, "nvmlDeviceGetGpuInstancePossiblePlacements_v2=4", NULL, NULL);
	if (ok(snap(&b, &sys, GPU_SNAP_PROFILES) == 0, "placements need root: snapshot still works")) {
		is_int(sys.gpus[0].nprofiles, 7, "profiles listed");
		is_int(sys.gpus[0].profiles[0].nplacements, 0, "placements unknown");
		gpu_system_free(&sys);
		gpu_close(b);
	}
}

/* Libraries that lack symbols: optional ones leave fields unknown, required ones stop. */
static void
test_missing_symbols(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct mig_placement at = {6, 1};
	unsigned gi_id = 0;

	setup("h100-mig", NULL, NULL, NULL);
	setenv("GPUPACK_NVML_LIB", lib_old, 1);
	if (ok(snap(&b, &sys, GPU_SNAP_PROFILES | GPU_SNAP_PROCESSES) == 0, "old ABI: snapshot (%s)",
	    err_msg())) {
		const struct gpu_info *g = &sys.gpus[0];

		is_str(sys.cuda_version, "", "old ABI: CUDA version unknown");
		is_int(g->mem_total, 81559ll << 20, "old ABI: memory through nvmlDeviceGetMemoryInfo");
		is_int(g->mem_reserved, 0, "old ABI: reserved unknown");
		is_int(g->sms, 0, "old ABI: SMs unknown without nvmlDeviceGetAttributes_v2");
		is_int(g->nprofiles, 7, "old ABI: profiles through the v1 call");
		if (g->nprofiles > 2) {
			is_str(g->profiles[2].name, "3g.40gb", "old ABI: derived name");
			is_int(g->profiles[2].nplacements, 0, "old ABI: placements unknown");
		}
		is_int(g->ngi, 3, "old ABI: GPU instances still found");
		if (g->ngi == 3) {
			is_int(g->gi[0].sms, 60, "old ABI: GI SMs from the v1 profile");
			is_int(g->gi[0].ci[0].sms, 0, "old ABI: CI SMs unknown");
		}
		is_int(g->nprocs, 0, "old ABI: no process list without the _v3 call");
		ok(b->create_gi(b, 0, 19, &at, &gi_id) < 0, "old ABI: no creation with placement");
		is_int(err_code(), EXIT_ENV, "old ABI: missing call: exit 3");
		is_str(err_msg(), "nvmlDeviceCreateGpuInstanceWithPlacement is missing from libnvidia-ml.so.1 "
		    "(driver too old?)", "old ABI: missing call named");
		gpu_system_free(&sys);
		gpu_close(b);
	}
	setup(NULL, NULL, NULL, NULL);
	setenv("GPUPACK_NVML_LIB", lib_broken, 1);
	ok(gpu_nvml_open(&b) < 0, "broken: a required call missing");
	is_int(err_code(), EXIT_ENV, "broken: exit 3");
	is_str(err_msg(), "nvmlDeviceGetCount_v2 is missing from libnvidia-ml.so.1 (driver too old?)",
	    "broken: the missing call named");
}

static void
test_names(void)
{
	char buf[32];

	gpu_nvml_strip_name("MIG 1g.18gb", buf, sizeof buf);
	is_str(buf, "1g.18gb", "strip MIG prefix");
	gpu_nvml_strip_name("7g.141gb", buf, sizeof buf);
	is_str(buf, "7g.141gb", "no prefix: unchanged");
	gpu_nvml_profile_name(4, 7, 40192, buf, sizeof buf);
	is_str(buf, "7g.40gb", "A100 40GB 7g: 40192 MiB -> 40gb");
	gpu_nvml_profile_name(0, 1, 4864, buf, sizeof buf);
	is_str(buf, "1g.5gb", "A100 40GB 1g: 4864 MiB -> 5gb");
	gpu_nvml_profile_name(13, 1, 4864, buf, sizeof buf);
	is_str(buf, "1g.5gb-me", "no-ME variant");
	is_int(gpu_nvml_cores_per_sm(9, 0), 128, "Hopper: 128 cores per SM");
	is_int(gpu_nvml_cores_per_sm(8, 0), 64, "A100: 64 cores per SM (6912 / 64 = 108)");
	is_int(gpu_nvml_cores_per_sm(8, 6), 128, "GA10x: 128 cores per SM");
	is_int(gpu_nvml_cores_per_sm(7, 0), 64, "Volta: 64 cores per SM");
	is_int(gpu_nvml_cores_per_sm(3, 5), 0, "Kepler: unknown");
}

/* Descriptors open now. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

/*
 * A farm samples the devices every tick for hours (-j auto): one snapshot
 * must leave no descriptor behind. With few to spare, 200 snapshots still
 * name the process each time.
 */
static void
test_snapshots_leave_nothing_open(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct rlimit old, low;
	char comm[64] = "";
	int bad = 0, before, after;
	FILE *f = fopen("/proc/self/comm", "r");

	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	setup(NULL, NULL, NULL, NULL);
	if (!ok(snap(&b, &sys, GPU_SNAP_PROCESSES) == 0, "a first snapshot (%s)", err_msg()))
		return;
	gpu_system_free(&sys);
	before = open_fds();
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)before + 24;
	setrlimit(RLIMIT_NOFILE, &low);
	for (int i = 0; i < 200; i++) {
		memset(&sys, 0, sizeof sys);
		if (gpu_snapshot(b, &sys, GPU_SNAP_PROCESSES) < 0 || sys.gpus[0].nprocs < 1 ||
		    strcmp(sys.gpus[0].procs[0].name, comm) != 0)
			bad++;
		gpu_system_free(&sys);
	}
	after = open_fds();
	setrlimit(RLIMIT_NOFILE, &old);
	is_int(bad, 0, "200 snapshots with %d descriptors to spare: each names the process", 24);
	is_int(after, before, "and leave as many descriptors open as before");
	gpu_close(b);
}

/* The load samples -j auto reads (nvml_sample.c): busy share, GPM, memory, processes. */
static void
test_sample(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct gpu_sample s;

	setup(NULL, NULL, NULL, NULL);
	if (!ok(snap(&b, &sys, 0) == 0, "h200: open for samples"))
		return;
	gpu_system_free(&sys);
	if (!ok(b->sample != NULL, "the NVML backend samples"))
		return;
	is_int(b->sample(b, 0, -1, &s), 0, "a sample of GPU 0");
	is_int((int)(s.busy * 100 + 0.5), 42, "busy share: the driver's 42%%");
	is_int(s.mem_total, 143771ll << 20, "memory total");
	is_int(s.mem_used, 572ll << 20, "memory used");
	is_int(s.nprocs, 2, "two processes");
	is_int(s.procs[0].pid, getpid(), "the first is this one");
	is_int(s.procs[0].mem, 512ll << 20, "with its 512 MiB");
	is_int(s.procs[1].mem, 0, "memory the driver does not give: 0");
	ok(s.sm_active == -1 && s.gpm_span == 0, "GPM: nothing yet from a first sample");
	usleep(150 * 1000);   /* GPM figures cover at least 0.1 s */
	is_int(b->sample(b, 0, -1, &s), 0, "a second sample");
	ok(s.sm_active == 0 && s.sm_occupancy == 0 && s.gpm_span > 0,
	    "GPM: idle SMs over the span since the first (%g %g %g)", s.sm_active, s.sm_occupancy, s.gpm_span);
	setenv("FAKENVML_NPROCS", "80", 1);
	is_int(b->sample(b, 0, -1, &s), 0, "a sample with 80 processes");
	is_int(s.nprocs, GPU_SAMPLE_PROCS, "more than the first buffer holds: the first GPU_SAMPLE_PROCS kept");
	is_int(s.procs[0].pid, getpid(), "this one among them");
	unsetenv("FAKENVML_NPROCS");
	/* a list the driver refuses: the count is unknown, never the other list's "none" */
	setenv("FAKENVML_FAIL", "nvmlDeviceGetComputeRunningProcesses_v3=999", 1);
	is_int(b->sample(b, 0, -1, &s), 0, "a sample whose compute list fails");
	is_int(s.nprocs, -1, "compute list failed, the MPS list answered none: processes unknown, not 0");
	setenv("FAKENVML_FAIL", "nvmlDeviceGetMPSComputeRunningProcesses_v3=999", 1);
	is_int(b->sample(b, 0, -1, &s), 0, "a sample whose MPS list fails");
	is_int(s.nprocs, -1, "MPS list failed: the compute list's 2 are not the whole count, unknown");
	setenv("FAKENVML_FAIL", "nvmlDeviceGetMPSComputeRunningProcesses_v3=3", 1);
	is_int(b->sample(b, 0, -1, &s), 0, "a sample where the MPS list is not supported");
	is_int(s.nprocs, 2, "MPS list not supported: the compute list's 2 stand");
	unsetenv("FAKENVML_FAIL");
	is_int(b->sample(b, 0, -1, &s), 0, "both lists answer again");
	is_int(s.nprocs, 2, "both answer: 2 processes");
	ok(b->sample(b, 5, -1, &s) < 0, "no GPU 5: an error");
	err_clear();
	gpu_close(b);

	setup("h100-mig", NULL, NULL, NULL);
	if (!ok(snap(&b, &sys, 0) == 0, "h100-mig: open for samples"))
		return;
	if (ok(sys.ngpus > 0 && sys.gpus[0].ngi > 0, "h100-mig: a GPU instance to sample")) {
		int gi = (int)sys.gpus[0].gi[0].id;

		is_int(b->sample(b, 0, gi, &s), 0, "a sample of a MIG GPU instance");
		ok(s.busy == -1, "no busy share on a MIG device");
		ok(s.mem_total > 0 && s.mem_total < sys.gpus[0].mem_total, "the MIG device's own memory");
		ok(b->sample(b, 0, 999, &s) < 0, "no such GPU instance: an error");
		err_clear();
	}
	gpu_system_free(&sys);
	gpu_close(b);
}

/* Per-process utilization (nvmlDeviceGetProcessUtilization) and the energy counter's steps. */
static void
test_proc_util(void)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct gpu_proc_util u[8];
	uint64_t since = 0, since2, mj0 = 0, mj1 = 0;
	int n;

	setup(NULL, NULL, NULL, NULL);
	unsetenv("FAKENVML_PROC_UTIL");
	if (!ok(snap(&b, &sys, 0) == 0, "h200: open for per-process samples"))
		return;
	gpu_system_free(&sys);
	if (!ok(b->proc_util != NULL, "the NVML backend reads per-process utilization"))
		return;
	n = b->proc_util(b, 0, &since, u, 8);
	is_int(n, 2, "a sample for each process");
	ok(n >= 1 && u[0].pid == getpid() && u[0].sm > 0.299 && u[0].sm < 0.301 && u[0].samples == 1,
	    "this process at 30%% of the SMs");
	ok(since > 0, "the newest timestamp is kept for the next read");
	since2 = since;
	ok(b->proc_util(b, 0, &since2, u, 1) == 1 && since2 >= since, "room for one: one, no overflow");
	setenv("FAKENVML_PROC_UTIL", "mps", 1);
	n = b->proc_util(b, 0, &since, u, 8);
	ok(n == 1 && u[0].pid != getpid(), "under MPS: the server's sample alone, none of its clients'");
	setenv("FAKENVML_PROC_UTIL", "none", 1);
	err_clear();
	ok(b->proc_util(b, 0, &since, u, 8) < 0 && err_msg()[0], "a driver with none: an error, not 0 (%s)",
	    err_msg());
	err_clear();
	unsetenv("FAKENVML_PROC_UTIL");
	ok(b->proc_util(b, 5, &since, u, 8) < 0, "no GPU 5: an error");
	err_clear();

	/* a counter that the driver updates every second: of three pairs of reads back to back, at most
	 * one can straddle an update however slow the machine is */
	setenv("FAKENVML_ENERGY_STEP_MS", "1000", 1);
	{
		int same = 0;

		for (int i = 0; i < 3; i++) {
			b->energy(b, 0, &mj0);
			b->energy(b, 0, &mj1);
			same += mj0 == mj1;
		}
		ok(same >= 2, "FAKENVML_ENERGY_STEP_MS: the counter holds between its updates (%d of 3)", same);
		usleep(1100 * 1000);
		b->energy(b, 0, &mj1);
		ok(mj1 > mj0, "and moves after one (%llu > %llu)", (unsigned long long)mj1, (unsigned long long)mj0);
	}
	unsetenv("FAKENVML_ENERGY_STEP_MS");
	gpu_close(b);

	setup("h100-mig", NULL, NULL, NULL);
	if (ok(snap(&b, &sys, 0) == 0, "h100-mig: open")) {
		ok(b->proc_util(b, 0, &since, u, 8) < 0, "a MIG-enabled GPU: no per-process utilization");
		err_clear();
		gpu_system_free(&sys);
		gpu_close(b);
	}
}

int
main(void)
{
	const char *build = getenv("GPUPACK_BUILD");
	const char *src = getenv("GPUPACK_SRC");

	if (!build || !src) {
		printf("1..0 # SKIP GPUPACK_BUILD and GPUPACK_SRC not set (run through make test)\n");
		return 0;
	}
	snprintf(lib, sizeof lib, "%s/tests/fakenvml/libnvidia-ml.so.1", build);
	snprintf(lib_old, sizeof lib_old, "%s/tests/fakenvml/old/libnvidia-ml.so.1", build);
	snprintf(lib_broken, sizeof lib_broken, "%s/tests/fakenvml/broken/libnvidia-ml.so.1", build);
	test_names();
	test_h200(src);
	test_mig();
	test_changes();
	test_old_driver();
	test_errors();
	test_missing_symbols();
	test_snapshots_leave_nothing_open();
	test_sample();
	test_proc_util();
	return done_testing();
}
