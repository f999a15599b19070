/*
 * usage: what each task used (GPU memory, GPU time, joules, CPU time) and
 * the farm's bound, from samples the farm takes. Pure: the farm passes in
 * each interval between two samples of a device (its busy share, the
 * energy the device counted, and per running task what the driver said of
 * its processes); usage splits and sums, and says for every figure how it
 * was obtained. A figure the samples cannot give is unknown (NAN, printed
 * null or "-"), never 0 and never guessed.
 *
 * How each figure is split (doc/run.md, "Per-task usage"):
 * - a task's share of an interval is its processes' utilization over the
 *   sum of the running tasks' (NVML's per-process samples, each task's last
 *   standing USAGE_UTIL_HOLD s: usage_attribute_util) where the
 *   driver gave one for every running task (1/N where all were idle by
 *   them); else 1/N of the N tasks running, said so in its basis (under
 *   MPS the driver gives the server's samples, not its clients').
 * - GPU time: the device's busy time in the interval times the share.
 * - joules: the device's energy in the interval times the share; energy
 *   counted while no task of the farm ran is unattributed.
 * - peak memory: the largest per-process memory sample of its processes.
 * - CPU time: the kernel's (wait4's rusage, children included), exact.
 */
#ifndef GPUPACK_FARM_USAGE_H
#define GPUPACK_FARM_USAGE_H

#include <stdint.h>

enum usage_basis {
	USAGE_UNKNOWN = 0,  /* no figure */
	USAGE_EXACT,        /* counted for this task by the kernel or the driver */
	USAGE_ESTIMATE,     /* sampled, or split by a stated rule */
};

struct usage_fig {
	double v;                 /* NAN when unknown */
	enum usage_basis basis;
	const char *how;          /* a static phrase: how the figure was obtained, or why unknown */
};

struct usage_task {
	long long seq;
	int dev;                  /* the farm's device (its index in the farm's groups); -1: none */
	int exit;
	double t0, t1;            /* start and end on the farm's clock, seconds */
	double cpu_s;             /* the kernel's user + system seconds; < 0 unknown */
	/* summed by usage_interval */
	int intervals;            /* intervals seen running */
	int even;                 /* intervals split evenly (no per-process utilization) */
	int busy_unknown;         /* intervals with the device's busy share unknown */
	int energy_unknown;       /* intervals with the device's energy unknown */
	int mem_samples;          /* intervals with a per-process memory sample */
	uint64_t mem_max;
	double gpu_acc, j_acc;
	/* its processes' last utilization sample and when it came (< 0: none yet): usage_attribute_util */
	double util_last, util_at;
};

/* What one running task's processes were seen doing in an interval. */
struct usage_seen {
	struct usage_task *task;
	double util;              /* its processes' SM utilization, 0..1; < 0: the driver gave none */
	int has_mem;              /* the driver listed its processes' memory */
	uint64_t mem;             /* bytes, summed over its processes */
};

/* A process the driver listed, and which of the running tasks it is (an index into usage_seen; -1: none). */
struct usage_proc {
	int task;
	double sm;                /* its SM utilization, 0..1 (usage_attribute_util) */
	uint64_t mem;             /* its memory, bytes; 0: not given (usage_attribute_mem) */
};

struct usage_dev {
	double busy_s;            /* the device's busy seconds over the intervals with its share known */
	int busy_unknown;         /* intervals without it */
	double energy_j;          /* energy counted over the intervals */
	int energy_unknown;
	double unattributed_j;    /* energy counted while no task ran */
};

/*
 * Each process's utilization to its task, read at now (seconds): s[i].util
 * becomes the sum of its processes', for np >= 0 processes p. A task none
 * of whose processes has a sample in this read keeps its last one for
 * USAGE_UTIL_HOLD seconds (then 0): the driver samples each process on its
 * own period, longer than the farm's reads, so a read split by the samples
 * it happens to hold gives each interval to whichever tasks had one then,
 * unevenly among identical tasks (6 SGEMMs time-sliced on an H200: 2.1-2.8 s
 * each). np < 0 (the driver gave no samples), mps (the driver samples the
 * MPS server, not its clients), or samples that name no running task while
 * some ran (another user's daemon): every util is unknown (-1). A process
 * of none of the tasks goes to nobody.
 */
#define USAGE_UTIL_HOLD 2.0
void usage_attribute_util(struct usage_seen *s, int n, const struct usage_proc *p, int np, int mps, double now);

/* Each process's memory to its task: s[i].mem summed, has_mem set where any was given. */
void usage_attribute_mem(struct usage_seen *s, int n, const struct usage_proc *p, int np);

/* A new task: its start, its device. */
void usage_task_start(struct usage_task *t, long long seq, int dev, double t0);

/*
 * One interval of dt seconds on one device, the tasks s[0..n-1] running
 * through it; busy: the device's busy share (< 0 unknown); dj: the joules
 * the device counted (NAN unknown). Returns the rule used: 1 per-process
 * utilization, 2 every task idle by its samples (split evenly, the basis
 * still theirs), 0 an even split for want of samples, -1 no task ran.
 */
int usage_interval(struct usage_dev *d, struct usage_seen *s, int n, double dt, double busy, double dj);

/*
 * The figures of a task that ended at t1 with cpu_s of CPU (< 0 unknown).
 * energy_ok: the task's life is long enough for the energy counter's
 * resolution (gpu_energy_window_ok); its joules are unknown otherwise.
 */
void usage_task_end(struct usage_task *t, double t1, int exit, double cpu_s, int energy_ok,
    struct usage_fig *cpu, struct usage_fig *mem, struct usage_fig *gpu, struct usage_fig *joules);

/* The makespan no count of tasks could beat, and what sets it. */
struct usage_bound {
	double s;                 /* max(cpu_s, gpu_s, longest_s); NAN when none is known */
	const char *limit;        /* "cpu", "gpu", "longest task", or NULL */
	double cpu_s;             /* the tasks' CPU seconds over the cores */
	double gpu_s;             /* their GPU seconds over the GPUs; NAN where a task's is unknown */
	double longest_s;         /* the longest task's wall time */
	int cores, gpus;
	double makespan, ratio;   /* the farm's makespan, and makespan / s */
};

/* cpu[i], gpu[i], wall[i] of n tasks (NAN: unknown). */
void usage_bound(const double *cpu, const double *gpu, const double *wall, int n, int cores, int gpus,
    double makespan, struct usage_bound *b);

/*
 * The indices of the k largest known values of v[0..n-1] into top[], the
 * largest first; returns how many (fewer where values are unknown).
 */
int usage_top(const double *v, int n, int k, int *top);

/* Text for a figure: "%.*f" or "-" when unknown. */
const char *usage_fmt(double v, int prec, char *buf, int size);
const char *usage_basis_name(enum usage_basis b);

#endif
