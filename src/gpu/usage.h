/*
 * usage (gpu_usage_*): what one command used over its life on one device,
 * for `gpupack mps exec --usage`: wall time, CPU time, peak GPU memory and
 * the GPU's energy, each marked exact, estimate or unknown with why. Not
 * the farm's per-task figures (src/farm/usage.c): one command, its process
 * tree, one device.
 *
 * Pure: the caller runs the command, reads the clock, the rusage, the
 * device's samples and its energy counter, and feeds them here.
 */
#ifndef GPUPACK_GPU_USAGE_H
#define GPUPACK_GPU_USAGE_H

#include "gpu/backend.h"
#include "gpu/energy.h"

#include <stdio.h>
#include <sys/types.h>

enum gpu_usage_quality { GPU_USAGE_UNKNOWN, GPU_USAGE_ESTIMATE, GPU_USAGE_EXACT };

struct gpu_usage_field {
	double value;        /* NAN when unknown */
	int quality;         /* enum gpu_usage_quality */
	char why[160];       /* how it was had, or why it is unknown */
};

struct gpu_usage {
	struct gpu_usage_field wall_s, cpu_s, peak_mem, energy_j;
	/* what the samples said so far */
	int samples;         /* samples of the device's processes fed */
	int samples_mem;     /* of those, ones where the driver gave the command's memory */
	int others_seen;     /* other processes on the device in some sample */
	int mine_seen;       /* samples that listed one of its processes */
	double peak_bytes;   /* the most the command's processes held at once, in a sample */
	int procs_unknown;   /* a sample could not be had (no per-process data) */
	struct gpu_energy_meter meter;
	int energy_reads;    /* counter reads fed; 0: none (no counter) */
	int counter_shared;  /* set by the caller: the counter is a whole GPU's, the device a MIG part of it */
};

void gpu_usage_init(struct gpu_usage *u);
/*
 * One sample of the device's processes; mine(pid, arg) says whether a pid is
 * the command's (it or a descendant). s NULL: no sample could be had.
 */
void gpu_usage_feed_sample(struct gpu_usage *u, const struct gpu_sample *s, int (*mine)(pid_t, void *),
    void *arg);
/* One reading of the device's energy counter at t seconds (the same clock as the wall time). */
void gpu_usage_feed_energy(struct gpu_usage *u, double t, uint64_t mj);
/* The end: wall seconds, CPU seconds from the kernel's rusage (NAN none); fills the four fields. */
void gpu_usage_finish(struct gpu_usage *u, double wall_s, double user_s, double sys_s);

const char *gpu_usage_quality_name(int q);  /* "exact", "estimate", "unknown" */
/* The lines printed at the command's end, for command name cmd and its exit status. */
void gpu_usage_print(const struct gpu_usage *u, const char *cmd, FILE *f);
/* The same as one JSON object (with the exit status and the device's uuid). */
int gpu_usage_json(const struct gpu_usage *u, const char *cmd, int exit_status, const char *uuid, FILE *f);

#endif
