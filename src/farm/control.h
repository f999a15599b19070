/*
 * control: how many tasks one device runs at once under -j auto. Pure
 * logic: each step gets the device's signals (struct ctl_signals: what is
 * running, how busy the GPU, its SMs and the host's CPUs are, memory, tasks
 * ended, out-of-memory failures) and answers a count. No clock, no
 * processes: the tests drive it with made-up signals and times.
 *
 * The fast signals decide first: while neither the GPU (SM activity under
 * MPS, the busy share under time-slicing) nor the CPUs nor memory are near
 * full, the count grows, by half again each step (doubling while the GPU
 * is idle and the starting tasks keep the CPUs busy: imports overlap; with
 * the CPUs idle too, before any task ended, it waits for them to reach the
 * GPU instead); a saturated resource
 * stops it (the CPUs only past twice their number of tasks while the GPU
 * is idle: start-up work overlaps well); memory bounds it by the largest
 * footprint a task has shown.
 * Completions confirm: once the GPU is saturated, a smaller count is
 * tried, and kept when it ends tasks as fast; with no GPU signal at all, a
 * larger one is tried, and kept when it ends them faster. A task that ran
 * out of memory sets the count to what was running without it.
 * doc/run.md explains it for users.
 */
#ifndef GPUPACK_FARM_CONTROL_H
#define GPUPACK_FARM_CONTROL_H

#include <stddef.h>
#include <stdint.h>

/* Seconds between steps: the loop samples and steps no more often. */
#define CTL_TICK 0.5
/* The GPU counts as saturated from this SM activity (MPS) or busy share (time-slicing) on. */
#define CTL_SM_FULL 0.90
#define CTL_BUSY_FULL 0.95
/* The host's CPUs count as saturated from this busy share on. */
#define CTL_CPU_FULL 0.90
/* Room left on the device per task, over the largest footprint seen. */
#define CTL_MEM_MARGIN 1.10
/*
 * Tasks at most while none has shown how much device memory it takes
 * (without --mem): this many, or twice the CPUs where that is more.
 */
#define CTL_BLIND_MAX 16
/* Host memory (MemAvailable) that the farm leaves to the rest of the machine. */
#define CTL_HOST_RESERVE (2ull << 30)
/* Decisions kept for --json (the first ones and the latest ones survive). */
#define CTL_LOG_MAX 256

struct ctl_config {
	int start;            /* the first count (remembered, else the share mode's old default) */
	int max;              /* never more: -j auto:N, MPS clients, memory for contexts, --total */
	int mps;              /* 1: tasks' kernels run together (MPS): SM activity says saturated */
	uint64_t mem_task;    /* device memory one task needs when --mem says so (with its context); 0: measured */
	uint64_t mem_min;     /* what any task takes at least (a CUDA context) */
};

/* One step's readings of one device. Unknown: -1 (fractions) or 0 (sizes). */
struct ctl_signals {
	double now;           /* seconds, monotonic */
	int running;          /* tasks running on the device */
	int unrevealed;       /* of them, tasks not yet seen on the GPU (no context yet) */
	int demand;           /* 1: a task waits for a slot here */
	unsigned long long ended; /* tasks ended on the device so far */
	double busy;          /* share of time with a kernel running */
	double sm_active;     /* share of SMs busy (GPM) */
	double cpu_busy;      /* the host's CPUs */
	int ncpu;             /* the host's CPU count; 0 unknown */
	uint64_t mem_total;   /* the device's memory: 0 when the device does not say */
	uint64_t mem_free;    /* device memory free now */
	uint64_t footprint;   /* the largest device memory one task of this farm has held */
	uint64_t mem_pending; /* what running tasks will still take, by that footprint */
	uint64_t host_avail;  /* the host's MemAvailable */
	int oom;              /* tasks that failed out of device memory since the last step */
};

/* One decision: when, the count, completions per second then, the signals, and why. */
struct ctl_decision {
	double t;             /* seconds since the controller started */
	int limit;
	double rate;          /* tasks ended per second since the count last changed; -1 unknown */
	double gpu, cpu;      /* the GPU's level (SM activity or busy share) and the CPUs' busy share */
	const char *why;
};

enum ctl_phase { CTL_RAMP, CTL_HOLD, CTL_PROBE };

struct ctl {
	struct ctl_config cfg;
	int limit;
	int phase;            /* enum ctl_phase */
	double t0;
	/* the epoch: since the count last changed */
	double epoch_t;
	unsigned long long epoch_ended;
	int epoch_saturated;  /* the GPU was saturated at every step of it */
	double settle_t;      /* when as many tasks ended as the count (its rate counts from here); 0: not yet */
	unsigned long long settle_ended;
	/* a probe: the count and rate it is measured against */
	int probe_from;
	double probe_rate;
	int probe_up;
	int up_kept;          /* the last probe went up and was kept */
	double next_probe;    /* no probe before this time */
	double probe_gap;     /* seconds between probes: doubles when one fails */
	double last_rate;
	int ceiling;          /* fast growth stops here: a probe found fewer tasks as fast; 0 none */
	double chain_rate;    /* the rate before a run of kept probes down */
	int confirm_from;     /* a step up near saturation, from this count, awaits its completions; 0 none */
	double confirm_rate;  /* the rate at that count (-1: not measured) */
	double cpu_full_t;    /* the last step that read the CPUs full; 0 none */
	uint64_t host_start;  /* MemAvailable at the first step */
	int oom_hold;         /* after running out of memory: grow only once tasks ended */
	unsigned long long oom_ended;
	/* the count held longest (what is remembered for the next run) */
	double held_since;
	int best_limit;
	double best_held, *held;  /* seconds at each count, 1..max */
	struct ctl_decision *log;
	size_t nlog, dropped;
};

void ctl_init(struct ctl *c, const struct ctl_config *cfg, double now);
/* One step: the count for the device from now on. */
int ctl_step(struct ctl *c, const struct ctl_signals *s);
/* The count held longest while tasks ran: what a later run should start from; *held its seconds. */
int ctl_settled(const struct ctl *c, double now, double *held);
void ctl_free(struct ctl *c);

#endif
