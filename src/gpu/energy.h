/*
 * energy: how fine the GPU's energy counter is, measured from the readings
 * themselves. NVML's total-energy counter (millijoules) does not move on
 * every read: the driver updates it every few tens of milliseconds (and on
 * some boards every 100 ms or more), by steps of many millijoules. A window
 * shorter than a few updates can read 0 J while the GPU burned hundreds of
 * watts; such a window is unknown, never 0.
 *
 * Pure: readings (time, counter) in, a resolution and verdicts out; the
 * caller owns the clock and the reads.
 */
#ifndef GPUPACK_GPU_ENERGY_H
#define GPUPACK_GPU_ENERGY_H

#include <stdint.h>

/* A window is trusted only if it spans this many counter updates. */
#define GPU_ENERGY_MIN_UPDATES 10
/* Readings an energy_meter keeps where the counter changed (the oldest go). */
#define GPU_ENERGY_KEEP 64

struct gpu_energy_reading {
	double t;     /* seconds, any origin, increasing */
	uint64_t mj;  /* the counter */
};

/* The counter's resolution. step_mj and period_s are 0 where not known. */
struct gpu_energy_res {
	uint64_t step_mj;  /* smallest nonzero increment seen between two readings */
	double period_s;   /* median time between updates (an upper bound when every read changed it) */
	int changes;       /* increments seen */
};

/*
 * The resolution from readings r[0..n-1] in time order. Returns 0 when the
 * period is known (at least two increments seen), -1 when it is not (too
 * few readings, or the counter never moved): res says what was seen. A
 * counter that goes backwards (a driver reload) restarts the count there.
 */
int gpu_energy_step(const struct gpu_energy_reading *r, int n, struct gpu_energy_res *res);

/* 1 when a window of window_s seconds spans >= GPU_ENERGY_MIN_UPDATES updates; 0 when shorter or the period is unknown. */
int gpu_energy_window_ok(const struct gpu_energy_res *res, double window_s);

/*
 * Joules between two readings of the counter, or NAN where the window is
 * not trusted (too short for the resolution, period unknown, or the
 * counter went backwards).
 */
double gpu_energy_joules(const struct gpu_energy_res *res, const struct gpu_energy_reading *a,
    const struct gpu_energy_reading *b);

/*
 * The same, kept as the counter is read: feed it every reading; it keeps
 * the first, the last, and those where the counter changed.
 */
struct gpu_energy_meter {
	int n;        /* readings kept in r */
	int seen;     /* readings fed */
	struct gpu_energy_reading first, last;
	struct gpu_energy_reading r[GPU_ENERGY_KEEP];
};

void gpu_energy_meter_init(struct gpu_energy_meter *m);
void gpu_energy_meter_feed(struct gpu_energy_meter *m, double t, uint64_t mj);
/* The resolution from what was fed: as gpu_energy_step. */
int gpu_energy_meter_res(const struct gpu_energy_meter *m, struct gpu_energy_res *res);

#endif
