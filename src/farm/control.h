/*
 * control: how many tasks one device runs at once under -j auto. Pure
 * logic: each step gets the device's signals (struct ctl_signals: what is
 * running, how busy the GPU and its SMs are, how many more tasks the host's
 * CPUs and memory and the device's memory take, tasks ended, out-of-memory
 * failures) and answers a count. No clock, no processes: the tests drive it
 * with made-up signals and times. ctlnode.h puts the devices of one host
 * together (their shared CPU budget); ctlmem.h says what memory admits.
 *
 * The fast signals decide first: while the GPU (SM activity under MPS,
 * the busy share under time-slicing) is not near full and the host and
 * the device's memory have room, the count grows, by half again each step
 * (doubling while the GPU is idle and the starting tasks keep the CPUs
 * busy: imports overlap; with the CPUs idle too, before any task ended, it
 * waits for them to reach the GPU instead), never past the room the host
 * and memory give. A host over its CPU budget takes the count down.
 * Completions confirm: once the GPU is saturated, a smaller count is
 * tried, and kept when it ends tasks as fast; with no GPU signal at all, a
 * larger one is tried, and kept when it ends them faster. Under the energy
 * goal (-j auto:energy) a smaller count is also kept when it ends tasks
 * nearly as fast (CTL_ENERGY_KEEP) for fewer joules each, and tried
 * whenever the GPU is busy. A task that ran out of memory sets the count
 * to what was running without it.
 * doc/run.md explains it for users.
 */
#ifndef GPUPACK_FARM_CONTROL_H
#define GPUPACK_FARM_CONTROL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Seconds between steps: the loop samples and steps no more often. */
#define CTL_TICK 0.5
/* The GPU counts as saturated from this SM activity (MPS) or busy share (time-slicing) on. */
#define CTL_SM_FULL 0.90
#define CTL_BUSY_FULL 0.95
/* The host's CPUs count as saturated from this busy share on. */
#define CTL_CPU_FULL 0.90
/* Under the energy goal, a smaller count is kept when it ends tasks at least this fast, for fewer joules. */
#define CTL_ENERGY_KEEP 0.95
/* No bound (room and mem_room). */
#define CTL_ANY INT_MAX
/* Decisions kept for --json (the first ones and the latest ones survive). */
#define CTL_LOG_MAX 256

struct ctl_config {
	int start;            /* the first count (remembered, else the share mode's old default) */
	int max;              /* never more: -j auto:N, MPS clients, memory for contexts, --total */
	int mps;              /* 1: tasks' kernels run together (MPS): SM activity says saturated */
	int energy;           /* 1: the goal is the fewest joules per task within CTL_ENERGY_KEEP of the best rate */
};

/* One step's readings of one device. Unknown: -1 (fractions). */
struct ctl_signals {
	double now;           /* seconds, monotonic */
	int running;          /* tasks holding a slot on the device (stopped at the door included) */
	int unrevealed;       /* of them, tasks not yet seen on the GPU (no context yet) */
	int paused;           /* of those, tasks stopped at the door (ctlmem.h) */
	int demand;           /* 1: a task waits for a slot here */
	unsigned long long ended; /* tasks ended on the device so far */
	double busy;          /* share of time with a kernel running */
	double sm_active;     /* share of SMs busy (GPM) */
	double cpu_busy;      /* the host's CPUs */
	int ncpu;             /* the host's CPU count; 0 unknown */
	int room;             /* more tasks the host takes (its CPUs, its memory); CTL_ANY: no bound */
	const char *room_why; /* what bounds it when 0: "CPUs saturated", "host memory" */
	int over;             /* tasks too many for the host: shed them */
	const char *over_why;
	int mem_room;         /* more tasks the device's memory admits; CTL_ANY: no bound */
	double energy;        /* joules the device used so far; -1 unknown */
	int oom;              /* tasks that failed out of device memory since the last step */
};

/* One decision: when, the count, completions per second then, the signals, and why. */
struct ctl_decision {
	double t;             /* seconds since the controller started */
	int limit;
	double rate;          /* tasks ended per second since the count last changed; -1 unknown */
	double gpu, cpu;      /* the GPU's level (SM activity or busy share) and the CPUs' busy share */
	double jpt;           /* joules per task ended since the count last changed; -1 unknown */
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
	double epoch_energy, settle_energy; /* joules at its start, at its settled part's; -1 unknown */
	int epoch_saturated;  /* the GPU was saturated at every step of it */
	double settle_t;      /* when as many tasks ended as the count (its rate counts from here); 0: not yet */
	unsigned long long settle_ended;
	/* a probe: the count and rate it is measured against */
	int probe_from;
	double probe_rate, probe_jpt;
	int probe_up;
	int up_kept;          /* the last probe went up and was kept */
	double next_probe;    /* no probe before this time */
	double probe_gap;     /* seconds between probes: doubles when one fails */
	double last_rate, last_jpt;
	int ceiling;          /* fast growth stops here: a probe found fewer tasks as fast; 0 none */
	int low;              /* steps in a row the GPU read far from saturated (the tasks changed?) */
	double chain_rate;    /* the rate before a run of kept probes down */
	int confirm_from;     /* a step up near saturation, from this count, awaits its completions; 0 none */
	double confirm_rate;  /* the rate at that count (-1: not measured) */
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
/* Signals with nothing known and no bound (the caller fills what it read). */
void ctl_signals_init(struct ctl_signals *s, double now);
/* The count held longest while tasks ran: what a later run should start from; *held its seconds. */
int ctl_settled(const struct ctl *c, double now, double *held);
void ctl_free(struct ctl *c);

#endif
