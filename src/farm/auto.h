/*
 * auto: -j auto in the farm. The devices under it have their controllers
 * together (ctlnode.h: the host's CPUs are one budget; ctlmem.h: device
 * memory admission and the gate at the GPU's door); every CTL_TICK the
 * farm reads the devices (the backend's struct gpu_sample: busy share, SM
 * activity, memory, processes), the host (CPU busy share, MemAvailable)
 * and its own tasks (each one's CPU time and wait for a CPU, which are on
 * the GPU and with how much memory, tasks ended, out-of-memory failures),
 * and the controllers set each device's count (group.jobs) and stop or
 * start tasks at the door (SIGSTOP, SIGCONT to their process group). What
 * worked is remembered per command (remember.h). Also here: each GPU's
 * energy over the farm, for every run.
 */
#ifndef GPUPACK_FARM_AUTO_H
#define GPUPACK_FARM_AUTO_H

#include "gpu/backend.h"

struct farm;
struct run;

/* Controllers for the groups under -j auto (after their slots are made). -1 with err set. */
int auto_setup(struct farm *f, const struct gpu_system *sys);
/* Sample and step every controller when a tick is due (or watch the door when that is). */
void auto_tick(struct farm *f, double now);
/* When the next tick is due (monotonic seconds); 0: none (no device under auto). */
double auto_next(const struct farm *f);
/* 0: the host's CPUs take no more start-ups until the next step (-j auto); with nothing running, 1 */
int auto_may_start(const struct farm *f);
/* A task's attempt started on r (its controller's view of it begins). */
void auto_started(struct farm *f, struct run *r, double now);
/*
 * Did r's failed attempt run out of device memory under gpupack's packing
 * (its stderr says so, or the device was full, and others ran beside it)?
 * Then the task should run again. Asks; changes nothing.
 */
int auto_oom(const struct farm *f, const struct run *r);
/*
 * A task's attempt on r ended at now, failed (ok 0) or not: counted for
 * its device's controller, which steps down at once after an auto_oom.
 */
void auto_ended(struct farm *f, struct run *r, int ok, double now);
/* A signal is about to end r: a task stopped at the door must get it (SIGCONT after). */
void auto_wake(struct run *r);
/* Remember each device's settled count for the next run of this command; free. */
void auto_finish(struct farm *f, int remember);
/* Each GPU's energy counter: at the farm's start (0) and at its end (1), for the summary. */
void auto_energy(struct farm *f, int end);

#endif
