/*
 * ctlmem: device memory under -j auto, one device at a time. What it learns
 * from the farm's tasks: their footprints (the most device memory each
 * held, from the tasks that ended well and those whose memory stopped
 * growing), how much CPU time a task uses before it shows on the GPU (its
 * "reach"), and how long after showing its memory still grows. What it
 * answers, each step:
 *  - admission: which tasks not yet on the GPU may go on to it now: the
 *    memory still to come (the new tasks' footprints, and the growth left
 *    to the tasks there but not settled) must fit what is free, at the sum's
 *    mean plus CTLMEM_Z standard deviations of the footprints seen (a
 *    quantile of the sum, not each task at the largest); with fewer than
 *    CTLMEM_FEW seen, each counts as well above the largest of them;
 *  - the gate: a task not admitted waits at the GPU's door: it is stopped
 *    (SIGSTOP by the caller) once it used CTLMEM_GATE of the CPU time the
 *    quickest task needed to reach the GPU, before it allocates anything,
 *    and started again when admitted. Its start-up, done meanwhile, is not
 *    lost; a task already listed by the driver is never stopped;
 *  - room: how many more tasks the device may start: those memory admits,
 *    and (once the gate can hold them) as many again to warm up.
 * Until a footprint is seen nothing is known: every task goes on (the caller
 * starts few and watches them reach the GPU); once a task shows there, the
 * others wait at the door until its memory settles.
 * Pure: no clock, no processes; the caller passes readings and applies the
 * answers.
 */
#ifndef GPUPACK_FARM_CTLMEM_H
#define GPUPACK_FARM_CTLMEM_H

#include <limits.h>
#include <stdint.h>

/* Footprints and reaches kept: the latest. */
#define CTLMEM_KEEP 64
/* The memory still to come is planned at its mean plus this many standard deviations. */
#define CTLMEM_Z 2.0
/* With fewer footprints seen than this, each task counts as the largest of them. */
#define CTLMEM_FEW 4
/* Seconds without growth after which a task's memory counts as its footprint (at least). */
#define CTLMEM_SETTLE 1.0
/*
 * Memory below this is a context being made, not a footprint: a task
 * shows ~14 MiB while CUDA makes its context, then its full size.
 */
#define CTLMEM_CONTEXT (256ull << 20)
/* A task not admitted is stopped once it used this share of the least CPU time a task took to reach the GPU. */
#define CTLMEM_GATE 0.6
/* Device memory kept free: this share of the device (the driver's own, fragmentation). */
#define CTLMEM_RESERVE 0.03
/* No bound from memory. */
#define CTLMEM_ANY INT_MAX

struct ctlmem_dist {
	double v[CTLMEM_KEEP];
	int n, next;
};

struct ctlmem {
	uint64_t fixed;           /* --mem plus its context: every task's footprint, known; 0 none */
	double tick;              /* seconds between readings near the door: how far a task gets unseen */
	struct ctlmem_dist fp;    /* footprints, bytes */
	struct ctlmem_dist reach; /* CPU seconds used before showing on the GPU */
	double grow;              /* the longest a task's memory grew after it showed, seconds */
	double start_rate;        /* cores a starting task uses (the gate's margin); 0 unknown */
	int by_age;               /* reaches are in seconds of age (no CPU times read), not CPU seconds */
};

/* One task on the device, as admission sees it. */
struct ctlmem_task {
	/* readings, each step */
	uint64_t mem;             /* device memory it holds now; 0 none */
	int on_gpu;               /* the driver lists it (a context) */
	int paused;               /* stopped at the door now */
	double cpu;               /* CPU seconds its processes used; < 0 unknown */
	double age;               /* seconds since it started */
	/* kept between steps (zero when it starts) */
	uint64_t peak;
	double peak_t, shown_t;   /* when its memory last grew; when it showed on the GPU (0: not yet) */
	double reach;             /* CPU seconds it had used then; < 0 unknown */
	/* answers */
	int admit;                /* may go on to the GPU (or is there) */
	int pause;                /* should wait at the door */
};

/* The answers for one device. */
struct ctlmem_room {
	int room;                 /* more tasks it may start (CTLMEM_ANY: no bound) */
	int admitted, waiting;    /* tasks admitted (or on the GPU); not admitted */
	int gate;                 /* 1: the gate holds tasks at the door (it is armed) */
	int watch;                /* 1: a task nears the door unadmitted, or nothing is known: read soon */
	int settling;             /* 1: the others wait at the door for the first footprint (room 0) */
	uint64_t planned;         /* the memory still to come, as planned (mean + Z sd) */
};

void ctlmem_init(struct ctlmem *m, uint64_t fixed, double tick);
/* Add one value to a distribution (the oldest goes past CTLMEM_KEEP). */
void ctlmem_add(struct ctlmem_dist *d, double v);
/* Follow a task's readings at time now (its peak, when it showed, its reach). */
void ctlmem_seen(struct ctlmem *m, struct ctlmem_task *t, double now);
/* A task ended: its footprint and growth are learnt when it ended well. */
void ctlmem_ended(struct ctlmem *m, const struct ctlmem_task *t, int ok, double now);
/*
 * Admission on one device: its tasks (pointers, any order), its free memory
 * and total (total 0: the device does not say: no bound); sets each task's
 * admit and pause, fills *out.
 */
void ctlmem_admit(const struct ctlmem *m, struct ctlmem_task **t, int n, uint64_t mem_free,
    uint64_t mem_total, double now, struct ctlmem_room *out);
/* How far a task got: CPU seconds where they are read, else seconds since it started. */
double ctlmem_progress(const struct ctlmem_task *t);
/* The footprint a new task is planned at (0: none known). */
uint64_t ctlmem_expect(const struct ctlmem *m);

#endif
