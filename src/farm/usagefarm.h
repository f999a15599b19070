/*
 * usagefarm: per-task usage in a running farm (the plumbing of farm/usage.c):
 * samples each GPU the farm uses (energy counter, busy share, per-process
 * memory and utilization), finds which task each process belongs to (its
 * process group), hands each interval to usage_interval, and keeps a
 * record per ended attempt for --json, the summary and --results.
 * The loop calls three things: due (when to wake), tick (before it reaps)
 * and end (for each task it reaps); auto.c mark (the farm's start and end
 * with its energy readings); progress.c the printers; setup.c free.
 */
#ifndef GPUPACK_FARM_USAGEFARM_H
#define GPUPACK_FARM_USAGEFARM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

struct farm;
struct run;
struct json;
struct farm_usage;

/* Sample the devices when the last sample is old enough (the first call starts it). */
void usagefarm_tick(struct farm *f, double now);
/* Sample now whatever the time since the last (the farm's start and end: auto_energy). */
void usagefarm_mark(struct farm *f, double now);
/*
 * The energy counter of GPU gpu_index as the last sample read it: 0, or -1
 * (that sample read none). The farm's own joules are taken from the reading
 * of usagefarm_mark's sample, so the tasks' and the unattributed add up to
 * them exactly.
 */
int usagefarm_energy_last(const struct farm *f, int gpu_index, uint64_t *mj);
/* When the loop should wake for the next sample (monotonic); 0: no need (no task runs, or the
 * backend gives nothing per process). */
double usagefarm_due(struct farm *f);
/* An attempt's process was reaped at now with this status and rusage (before it is marked exited): its record. */
void usagefarm_end(struct farm *f, struct run *r, double now, int status, const struct rusage *ru);
/* --json: the per-task list, energy_step, unattributed_j, gpu_busy_s, bound. */
void usagefarm_json(const struct farm_usage *u, struct json *j, double makespan);
/* The summary: the bound beside the makespan, the 3 heaviest tasks by memory, GPU time, J. */
void usagefarm_summary(const struct farm_usage *u, FILE *out, double makespan);
/*
 * -j auto:energy: the joules of the tasks that ended on the farm's group
 * (device) so far, by their records; -1 once one of them had its joules
 * unknown (a life too short for the counter) or with no records kept.
 */
double usagefarm_ended_j(const struct farm_usage *u, int group);
void usagefarm_free(struct farm_usage *u);

#endif
