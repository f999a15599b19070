/*
 * farm: the task farm behind `gpupack run`. cmd/run.c fills a farm_opts from
 * the command line; farm_run() places, spawns, reaps, retries, journals and
 * reports, and returns the exit status (GNU parallel's codes for the tasks).
 */
#ifndef GPUPACK_FARM_FARM_H
#define GPUPACK_FARM_FARM_H

#include <stdint.h>

#include "farm/task.h"
#include "gpu/backend.h"

/*
 * Any error other than failed tasks (bad usage, no device, an unwritable
 * joblog, a signal that stopped the run early): GNU parallel's 255. The
 * one-line message says which.
 */
#define FARM_EXIT_ERROR 255

enum share_mode { SHARE_DEFAULT = -1, SHARE_EXCLUSIVE, SHARE_TIMESLICE, SHARE_MPS };

enum halt_when { HALT_NEVER, HALT_SOON, HALT_NOW };

struct farm_opts {
	char **cmd;              /* the command template */
	int ncmd;
	int shell;               /* --shell: run through sh -c */
	struct inputs in;
	const char *gpus;        /* --gpus SEL, or NULL */
	int share;               /* enum share_mode */
	int jobs;                /* -j per device; 0: the share mode's default */
	int total;               /* --total; 0: no cap */
	uint64_t mem;            /* --mem per task; 0: not given */
	double sm_pct;           /* --sm; 0: not given */
	char **env;              /* --env NAME=VALUE */
	int nenv;
	const char *joblog;      /* without a leading '+' */
	int joblog_append;       /* +FILE */
	int resume, resume_failed;
	int retries;
	double timeout;          /* seconds; 0: none */
	int halt_when;           /* enum halt_when */
	int halt_success;        /* success=N rather than fail=N */
	long halt_count;         /* N, or 0 */
	double halt_pct;         /* N%, or 0 */
	const char *results;     /* --results DIR */
	int keep_order;          /* -k */
	int bar, eta, json, summary;
	int dry_run;             /* print each command instead of running it */
	unsigned long shard_k;   /* --shard K/N: this instance runs inputs with (seq - 1) % N == K */
	unsigned long shard_n;   /* 0: no --shard */
	char *joblog_owned;      /* --joblog with {shard} replaced (malloc'd), or NULL */
};

const char *share_name(int share);
/* Parse "now,fail=3", "soon,fail=10%", "never", "2" (GNU parallel's forms). */
int parse_halt(const char *s, struct farm_opts *o);
/*
 * Parse --shard: "K/N" (0 <= K < N, K counting from 0 as SLURM_PROCID does)
 * or "slurm" ($SLURM_PROCID of $SLURM_NTASKS, as under srun).
 */
int parse_shard(const char *s, struct farm_opts *o);
/*
 * Replace {shard} in --joblog by K (so that each shard of a run keeps its own
 * joblog). Call after every option was read. -1 with err set when {shard}
 * comes without --shard.
 */
int shard_joblog(struct farm_opts *o);

/* Run the farm on the devices of backend b. */
int farm_run(struct farm_opts *o, struct gpu_backend *b);

/*
 * Block the signals the farm reads through its signalfd. Call it before
 * the GPU backend is opened: threads a library starts (NVML does) inherit
 * the mask and so cannot take those signals away from the farm.
 */
void farm_block_signals(void);

#endif
