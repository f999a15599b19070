/*
 * backend: what hardware exists, as plain data, and the few operations that
 * change it (MIG instances). Two implementations answer the same ops:
 * nvml.c (the driver, through dlopen) and sim.c (a topology file).
 *
 * Nothing above src/gpu/ sees an NVML type: everything is copied into the
 * structs below. A snapshot is taken whole, used, and freed.
 */
#ifndef GPUPACK_GPU_BACKEND_H
#define GPUPACK_GPU_BACKEND_H

#include <stdint.h>
#include <sys/types.h>

#define GPU_UUID_LEN 96
#define GPU_NAME_LEN 96
#define MIG_NAME_LEN 32
#define MIG_MAX_PLACEMENTS 8
#define MIG_MAX_CI 8

/* Values as NVML's nvmlComputeMode_t. */
enum compute_mode {
	COMPUTE_UNKNOWN = -1,
	COMPUTE_DEFAULT = 0,
	COMPUTE_EXCLUSIVE_THREAD = 1, /* deprecated by NVIDIA */
	COMPUTE_PROHIBITED = 2,
	COMPUTE_EXCLUSIVE_PROCESS = 3,
};

enum mig_mode {
	MIG_UNSUPPORTED = -1,
	MIG_DISABLED = 0,
	MIG_ENABLED = 1,
};

struct mig_placement {
	unsigned start, size; /* in memory slices */
};

/* A GPU-instance profile the device supports. */
struct mig_profile {
	int index;            /* NVML_GPU_INSTANCE_PROFILE_* (0..) */
	unsigned id;          /* nvmlGpuInstanceProfileInfo.id */
	char name[MIG_NAME_LEN]; /* "1g.18gb", "1g.18gb+me" */
	int slices;           /* compute slices (of 7; of 4 on A30) */
	int copy_engines;
	uint64_t mem_bytes;   /* memory of one instance */
	int sms;              /* multiprocessors of one instance */
	int max_count;        /* instances of this profile on an empty GPU */
	int nplacements;
	struct mig_placement placements[MIG_MAX_PLACEMENTS];
};

/* A compute instance: the MIG device CUDA sees (MIG-<uuid>). */
struct mig_ci {
	unsigned id;
	int profile_index;    /* NVML_COMPUTE_INSTANCE_PROFILE_* */
	int slices;
	int sms;
	char uuid[GPU_UUID_LEN];
};

/* A GPU instance and its compute instances. */
struct mig_gi {
	unsigned id;
	int profile_index;
	unsigned profile_id;
	char profile[MIG_NAME_LEN];
	struct mig_placement placement;
	uint64_t mem_total, mem_used;
	int sms;
	int nci;
	struct mig_ci ci[MIG_MAX_CI];
};

/* A process using a GPU (or one of its MIG instances: gi_id >= 0). */
struct gpu_process {
	pid_t pid;
	int gi_id, ci_id;     /* -1 where it runs on the whole GPU */
	uint64_t mem_used;
	char name[64];
};

struct gpu_info {
	int index;            /* the driver's index (nvidia-smi's) */
	char uuid[GPU_UUID_LEN];
	char name[GPU_NAME_LEN];
	char pci_bus_id[32];
	uint64_t mem_total, mem_used, mem_free, mem_reserved; /* bytes */
	int sms;
	int cc_major, cc_minor;
	int compute_mode;     /* enum compute_mode */
	int mig_current, mig_pending; /* enum mig_mode */
	int ngi;
	struct mig_gi *gi;
	int nprofiles;        /* filled with GPU_SNAP_PROFILES */
	struct mig_profile *profiles;
	int nprocs;           /* filled with GPU_SNAP_PROCESSES */
	struct gpu_process *procs;
};

/*
 * The load of one device (a whole GPU, or a MIG device) at one moment, for
 * the farm's concurrency controller. What the driver does not give is -1
 * (or nprocs -1). Fractions are 0..1.
 */
#define GPU_SAMPLE_PROCS 64

struct gpu_proc_mem {
	pid_t pid;
	uint64_t mem;         /* bytes of device memory; 0 where the driver does not say */
};

struct gpu_sample {
	double busy;          /* share of the driver's last period (1/6 s to 1 s) with a kernel running; -1 on MIG */
	double sm_active;     /* GPM: share of SMs busy since this device's previous sample; -1 without GPM */
	double sm_occupancy;  /* GPM: resident warps of the possible, same span; -1 */
	double gpm_span;      /* seconds the GPM figures cover; 0: none yet */
	uint64_t mem_total, mem_used, mem_free; /* bytes, of the GPU or of the MIG device */
	int nprocs;           /* processes with a context here (compute and MPS clients); -1 unknown */
	struct gpu_proc_mem procs[GPU_SAMPLE_PROCS];
};

/* One process's share of a GPU's SMs, from the driver's per-process samples. */
struct gpu_proc_util {
	pid_t pid;
	double sm;            /* 0..1: the mean of its samples in the span asked for */
	int samples;
};

struct gpu_system {
	char backend[300];      /* "nvml" or "sim:<file>" */
	char driver_version[32];
	char cuda_version[16];  /* the driver's CUDA version, "13.0" */
	int ngpus;
	struct gpu_info *gpus;
};

enum {
	GPU_SNAP_PROFILES = 1 << 0,  /* MIG profiles and placements */
	GPU_SNAP_PROCESSES = 1 << 1, /* processes per GPU and instance */
};

/*
 * The ops. Each returns 0, or -1 with err_set() called (EXIT_ENV for
 * driver and permission failures, EXIT_USAGE for bad requests).
 */
struct gpu_backend {
	const char *name;
	void *priv;
	int (*snapshot)(struct gpu_backend *b, struct gpu_system *sys, unsigned flags);
	int (*set_mig_mode)(struct gpu_backend *b, int gpu, int enable);
	int (*create_gi)(struct gpu_backend *b, int gpu, unsigned profile_id,
	    const struct mig_placement *where, unsigned *gi_id);
	/* The compute instance that spans the whole GPU instance. */
	int (*create_ci)(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned *ci_id);
	int (*destroy_ci)(struct gpu_backend *b, int gpu, unsigned gi_id, unsigned ci_id);
	int (*destroy_gi)(struct gpu_backend *b, int gpu, unsigned gi_id);
	/* GPU and memory utilization in percent over the driver's last sample period. */
	int (*utilization)(struct gpu_backend *b, int gpu, unsigned *gpu_pct, unsigned *mem_pct);
	/*
	 * The load of GPU gpu (driver index), or of its MIG GPU instance gi_id
	 * (-1: the whole GPU). NULL where the backend has no such readings.
	 */
	int (*sample)(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s);
	/* The cheap part of sample: memory and processes only (busy and SM activity -1). NULL: none. */
	int (*sample_procs)(struct gpu_backend *b, int gpu, int gi_id, struct gpu_sample *s);
	/*
	 * The energy GPU gpu (driver index) used since its driver loaded, in
	 * millijoules: a counter; a MIG device has its GPU's. -1 (err set)
	 * where the GPU keeps none (before Volta, a driver without the call).
	 * NULL where the backend has no such reading.
	 */
	int (*energy)(struct gpu_backend *b, int gpu, uint64_t *mj);
	/*
	 * The processes with a utilization sample on GPU gpu (driver index)
	 * newer than *since_us (the driver's timestamps, microseconds; 0: all
	 * it keeps), at most max of them into u; *since_us becomes the newest
	 * seen. Returns how many (0: no process had a sample). -1 (err set)
	 * where the driver keeps none (a MIG-enabled GPU, an old driver).
	 * Under MPS the driver gives the server's samples, not its clients'.
	 * NULL where the backend has no such reading.
	 */
	int (*proc_util)(struct gpu_backend *b, int gpu, uint64_t *since_us, struct gpu_proc_util *u, int max);
	void (*close)(struct gpu_backend *b);
};

/*
 * Open the simulation when sim_file (or else $GPUPACK_SIM_WRITE or
 * $GPUPACK_SIM) names a topology file, otherwise NVML. A simulation writes
 * its changes to a copy in the state directory (src/gpu/sim.c), or to the
 * file itself when in_place (--sim-write, $GPUPACK_SIM_WRITE). No driver:
 * -1 with EXIT_ENV and one line saying so.
 */
int gpu_open(const char *sim_file, int in_place, struct gpu_backend **out);
/*
 * A simulated machine's tools: gpupack's stand-ins, installed in
 * <prefix>/libexec/gpupack/NAME (beside the binary first, so an install can
 * move), or in a build tree's tests/tools/BUILD_NAME. -1 with err set.
 */
int gpu_sim_tool(const char *name, const char *build_name, char *out, size_t size);
/*
 * MPS on a simulated machine is the stand-in daemon (sim-mps-control: the
 * documented control protocol, real processes and sockets, no GPU): point
 * GPUPACK_MPS_CONTROL at it, unless it is set. -1 with err set.
 */
int gpu_sim_mps(void);
void gpu_close(struct gpu_backend *b);
int gpu_snapshot(struct gpu_backend *b, struct gpu_system *sys, unsigned flags);
void gpu_system_free(struct gpu_system *sys);

/* Backend constructors (gpu_open picks one). */
int gpu_nvml_open(struct gpu_backend **out);
int gpu_sim_open(const char *file, int in_place, struct gpu_backend **out);

/* Names for tables and JSON. */
const char *compute_mode_name(int mode);  /* "default", "exclusive-process", ... */
const char *mig_mode_name(int mode);      /* "enabled", "disabled", "unsupported" */

#endif
