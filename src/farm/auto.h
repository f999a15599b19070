/*
 * auto: -j auto in the farm. Each device under it has a controller
 * (control.h); every CTL_TICK the farm samples the device (the backend's
 * struct gpu_sample: busy share, SM activity, memory, processes), the host
 * (CPU busy share, MemAvailable) and its own tasks (which of them are on
 * the GPU and with how much memory, tasks ended, out-of-memory failures),
 * and the controller sets the device's count (group.jobs). The count that
 * worked is remembered per command (remember.h).
 */
#ifndef GPUPACK_FARM_AUTO_H
#define GPUPACK_FARM_AUTO_H

#include "gpu/backend.h"

struct farm;
struct run;

/* Controllers for the groups under -j auto (after their slots are made). -1 with err set. */
int auto_setup(struct farm *f, const struct gpu_system *sys);
/* Sample and step every controller when a tick is due. */
void auto_tick(struct farm *f, double now);
/* When the next tick is due (monotonic seconds); 0: none (no device under auto). */
double auto_next(const struct farm *f);
/*
 * A task's attempt on r ended, failed (ok 0) or not: counted for its
 * device's controller. 1 when the failure was the device running out of
 * memory under gpupack's packing (the task should run again), else 0.
 */
int auto_ended(struct farm *f, struct run *r, int ok);
/* Remember each device's settled count for the next run of this command; free. */
void auto_finish(struct farm *f, int remember);

#endif
