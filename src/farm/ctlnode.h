/*
 * ctlnode: the -j auto controllers of one gpupack's devices, together. The
 * host's CPUs (and memory) are one budget that every device's count draws
 * on: each task's CPU use is measured while it starts and once it is on
 * the GPU (cores per task in each phase, learnt while the CPUs are not
 * saturated), and no device raises its count past what the CPUs' room
 * (CTLNODE_ROOM times the CPUs) can start: start-up-bound tasks (Python
 * importing its libraries, CUDA making contexts) get 1.5 to 2 per core
 * across all devices, not per device. A host over budget takes counts
 * down. Device memory is ctlmem.h's: which tasks may go on to the GPU,
 * which wait at its door.
 *
 * Pure: the caller reads the host, the devices and its tasks, passes the
 * readings, and applies the answers (each device's count, each task's
 * pause). No clock, no processes: the tests drive it in simulated time.
 */
#ifndef GPUPACK_FARM_CTLNODE_H
#define GPUPACK_FARM_CTLNODE_H

#include <stdint.h>

#include "farm/control.h"
#include "farm/ctlmem.h"

/* Cores a task is taken to keep busy until measured (a Python start-up: about one). */
#define CTLNODE_CORES 1.0
/*
 * The tasks may want this many times the CPUs before the counts stop
 * rising: a task waiting on the GPU or the driver reads as a core (CUDA's
 * default schedule spins while it waits), so one task per core leaves
 * the GPU and the driver's waits unused. On an H200 with 16 cores, 48
 * PyTorch trainings: 1.5 took 40.0-42.3 s in three runs, 1.0 45.4-52.2 s
 * and -j 32 40.8-48.3 s, side by side; SGEMMs then trainings: alike
 * (bench/results/2026-11-29-auto-warm-h200.md).
 */
#define CTLNODE_ROOM 1.5
/* A host counts as over its CPU budget when the tasks want this much more than the room. */
#define CTLNODE_OVER 1.3
/*
 * Tasks starting together (not yet on a GPU) want at most this many times
 * the CPUs: past it the next start waits for a step (ctlnode.starts). On an
 * H200 with 16 cores, SGEMM tasks then PyTorch trainings: 1.5 beat the best
 * fixed count by 5-9% in three runs, no limit did not (the count, doubled
 * while the SGEMMs waited for contexts, filled at once with start-ups);
 * bench/results/2026-11-29-auto-gate-h200.md.
 */
#define CTLNODE_START_OVER 1.5
/* Until a footprint is known, at most this many tasks per device (or the device's share of the CPUs). */
#define CTLNODE_BLIND 16
/* Host memory (MemAvailable) that the farm leaves to the rest of the machine, at least. */
#define CTLNODE_HOST_RESERVE (2ull << 30)
/* Seconds between readings while a task nears the GPU's door (ctlmem's watch). */
#define CTLNODE_WATCH 0.1

/* One running task. */
struct ctlnode_task {
	int dev;                  /* its device, 0.. */
	double start;             /* when it started (seconds, the caller's clock) */
	/* readings */
	double cpu;               /* CPU seconds its processes used so far; < 0 unknown */
	double wait;              /* seconds it was ready to run but waited for a CPU; < 0 unknown */
	struct ctlmem_task m;     /* its device memory (readings: mem, on_gpu, paused); the gate's answer */
	/* kept between steps (zero when it starts) */
	double phase_t, phase_cpu, phase_wait; /* its phase (starting, on the GPU): since when, from what */
	double seen_t;            /* its last reading (a stopped task's phase does not age) */
	int phase_gpu, phased;    /* its phase is on the GPU; phase_* are set */
	double want;              /* cores it wanted in this phase so far (used, and waited for); < 0 unknown */
};

/* The host, at one step. Unknown: -1 (fractions), 0 (counts and sizes). */
struct ctlnode_host {
	double now;
	double cpu_busy;          /* the host's CPUs, busy share since the last step */
	int ncpu;
	uint64_t host_avail;      /* MemAvailable */
	int demand;               /* tasks wait for a slot */
};

/* One device, at one step. */
struct ctlnode_dev {
	double busy, sm_active;   /* -1 unknown */
	uint64_t mem_total, mem_free; /* 0 total: unknown */
	unsigned long long ended; /* tasks ended on it so far */
	int oom;                  /* tasks that ran out of its memory since the last step */
	double energy;            /* joules it used so far; -1 unknown */
};

struct ctlnode_config {
	int ndev;
	const struct ctl_config *dev; /* each device's controller */
	uint64_t mem_fixed;       /* --mem plus its context; 0 measured */
	double tick;              /* seconds between steps */
	double d_start, d_run;    /* cores per task remembered from a past run; 0 none */
};

struct ctlnode {
	int ndev;
	struct ctl *dev;          /* one controller per device */
	struct ctlmem mem;        /* footprints: the farm's one command, on every device */
	struct ctlmem_room *room; /* per device: the last admission */
	double d_start, d_run;    /* cores a task keeps busy while starting, and on the GPU */
	int d_start_n, d_run_n;   /* readings behind each (0: the prior, or a past run's) */
	int seeded;               /* they came from a past run */
	double other;             /* cores busy outside the farm's tasks (gpupack, other users); -1 unknown */
	uint64_t host_start;      /* MemAvailable at the first step */
	int rot;                  /* which device draws first on the host's room this step */
	int watch;                /* read again within CTLNODE_WATCH */
	/* the last step's budget, for the log */
	double demand_cores, cap_cores;
	int room_tasks;
	/*
	 * Tasks the host's CPUs can start before the next step, whatever the
	 * counts: the tasks starting together (not yet on a GPU) want at most
	 * CTLNODE_START_OVER of the CPUs; CTL_ANY unknown. A count raised while tasks
	 * kept the CPUs idle (waiting for the GPU) is not filled at once by
	 * tasks that each want a core to start.
	 */
	int starts;
};

void ctlnode_init(struct ctlnode *n, const struct ctlnode_config *cfg, double now);
void ctlnode_free(struct ctlnode *n);
/*
 * One step: every device's count (n->dev[i].limit) and every task's
 * m.pause. t holds every running task (of every device).
 */
void ctlnode_step(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt);
/* Between steps, while n->watch: the tasks' readings and the gate only (no count changes). */
void ctlnode_watch(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt);
/* A task's attempt ended (ok: it succeeded): its footprint is learnt. */
void ctlnode_ended(struct ctlnode *n, const struct ctlnode_task *t, int ok, double now);
/*
 * A task on device dev ran out of its memory beside others: its count
 * drops at once to the tasks on the GPU (t: the device's tasks still
 * running, the failed one left out).
 */
void ctlnode_oom(struct ctlnode *n, int dev, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt);
/*
 * Before the first step, with what a past run left (n->mem's footprints,
 * the cores per task): each device's first count bounded by its share of
 * the CPUs and by what its free memory (mem_free[i], 0 unknown) admits.
 */
void ctlnode_first(struct ctlnode *n, int ncpu, const uint64_t *mem_free);

#endif
