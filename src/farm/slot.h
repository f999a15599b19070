/*
 * slot: the places tasks run. Each selected device (a GPU, or one MIG
 * device) is a group of slots; how many depends on the share mode, -j,
 * --mem against the device's free memory and what sharing itself costs
 * (farm/cost.h), and the MPS client limit.
 */
#ifndef GPUPACK_FARM_SLOT_H
#define GPUPACK_FARM_SLOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/select.h"

struct mps_daemon;
struct ctl;

/* The GPU's energy counter (millijoules) at the farm's start and end. */
struct group_energy {
	uint64_t energy0, energy1;
	int energy_ok;            /* 1: read at the start; 2: at the end too */
	int energy_shared;        /* its GPU has other devices of the farm (MIG): the counter is theirs too */
};

/* An MPS device's health (health.c, mpsfarm.c): faults, their victims, the daemon's restarts. */
struct group_mps {
	double fault_at;          /* when a fault was seen; 0: none pending */
	double hang_from;         /* a contained fault then: its neighbours are watched for a hang; 0 none */
	double fault_said;        /* when a client last said it died of a fault (its stderr); 0 never */
	double fault_last;        /* when a fault was last said or logged (FARM_FAULT_GRACE); 0 never */
	double slow_said;         /* the fault_last a slow daemon was last reported for */
	long fault_log_off;       /* its server's log read for faults up to here; 0 not yet */
	double fail_at[2];        /* the last two failures of its clients: when, */
	unsigned long long fail_seq[2]; /* and whose (the input's number) */
	double ep_at;             /* a fault first seen in a failure then (its episode); 0 none */
	unsigned long long ep_seq;  /* and whose failure that was */
	double fault_asked;       /* when the server was last asked whether it is in FAULT */
	double fault_mute;        /* when its daemon last did not answer that; 0 it did */
	int solo;                 /* a suspect of a fault runs alone here: start nothing else */
	int mps_down;             /* no task starts here until the daemon is restarted */
	int mps_restarts;         /* restarts this run made here */
	double mps_probe_at;      /* when the daemon is asked next whether it is well */
	double mps_fast_until;    /* till then, with no server known yet, it is asked more often */
	pid_t mps_server;         /* the server seen last (0: none), and its start time */
	unsigned long long mps_server_start;
	int use_fd;               /* this run uses the daemon while it holds this (mps_use); -1 none */
};

struct group {
	struct gpu_target t;
	int gpu_index;            /* the driver's index of the (parent) GPU */
	int mig_slices;           /* compute slices of a MIG device; 0 for a whole GPU */
	int cap;                  /* slots: the most it ever runs at once */
	int jobs;                 /* tasks it may run now: cap, or under -j auto the controller's count */
	int first_slot;           /* global number ({%}) of its first slot, 1-based */
	const char *limit;        /* what bounded cap: "-j", "--mem", "mps-clients", "--total" */
	int running;
	unsigned long tasks;      /* attempts started here */
	double busy, busy_since;  /* seconds with >= 1 task running */
	/* -j auto */
	struct ctl *ctl;          /* its controller; NULL under -j N */
	int gi_id;                /* the MIG GPU instance's id (for samples); -1 for a whole GPU */
	unsigned long long ended; /* attempts that ended here */
	double end_t[8];          /* when the latest attempts ended here (a ring): who ran beside whom */
	int oom;                  /* attempts that ran out of device memory since the controller's last step */
	uint64_t mem_total, mem_free; /* at the last sample; 0: none yet */
	uint64_t footprint;       /* the footprint a task is planned at (0: none known) */
	int waited;               /* tasks stopped at the GPU's door here, in all */
	double cores_start, cores_run; /* cores a task wanted while starting, and on the GPU */
	struct group_energy en;   /* the GPU's energy counter over the farm (auto.c) */
	/* MPS */
	struct mps_daemon *mps;   /* NULL unless --share mps */
	int mps_ours;             /* started by this run: stopped at its end */
	struct group_mps h;       /* its health: faults, restarts, probes (health.c, mpsfarm.c) */
};

/*
 * Slots one device gets: min(jobs, memory, MPS clients). jobs is the -j
 * value already defaulted; mem the per-task need (0: unknown, only the
 * context overhead counts). *limit names the bound that applied.
 */
int pack_capacity(int share, int jobs, uint64_t mem, uint64_t mem_free, int mig_slices,
    const char **limit);

/* Cap the sum of caps[] at total (0: no cap), taking slots evenly. */
void pack_total(struct group *g, int n, int total);

/*
 * The device selection to use: sel (--gpus), else $CUDA_VISIBLE_DEVICES,
 * else Slurm's ($SLURM_STEP_GPUS, $SLURM_JOB_GPUS), else NULL (every
 * device). *from names where it came from.
 */
const char *slot_default_selection(const char *sel, const char **from);

#endif
