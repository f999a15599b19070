/*
 * mig: MIG geometry (src/share/mig*.c). The planner turns requests (COUNTxPROFILE,
 * COUNTxMEMORY, request files) into a geometry for several GPUs at once;
 * apply and clear drive the backend's instance operations.
 *
 * The planner is pure: it works on the plain structs below, built by the
 * caller from a snapshot (or by tests from data/mig-profiles.csv), and never
 * calls the backend. See doc/mig.md for the objective.
 */
#ifndef GPUPACK_SHARE_MIG_H
#define GPUPACK_SHARE_MIG_H

#include <stdint.h>
#include <stdio.h>

#include "gpu/backend.h"
#include "share/ctxcost.h" /* MIG_CONTEXT_RESERVE: what the planner adds to a job's MEMORY */

#define MIG_MAX_PROFILES 16   /* profiles per GPU the planner handles */
#define MIG_MAX_INST 16       /* instances per GPU */
#define MIG_MAX_REQUESTS 4096 /* request units (after counts) per plan */


/* An instance already on a GPU. Busy ones (with processes) are fixed. */
struct mig_existing {
	unsigned gi_id;
	int profile;                  /* index into the GPU's profiles[] */
	struct mig_placement at;
	int busy;
	int npids;
	int pids[8];                  /* some of its processes, for messages */
	int nci;
	unsigned ci[MIG_MAX_CI];      /* its compute instances (destroyed first) */
};

/* One GPU as the planner sees it. */
struct mig_gpu {
	int index;                    /* the driver's index */
	int sys_pos;                  /* position in the snapshot (the backend ops take index) */
	char uuid[GPU_UUID_LEN];
	char name[GPU_NAME_LEN];
	int mig_enabled;
	int nprofiles;
	struct mig_profile profiles[MIG_MAX_PROFILES];
	int compute_slices;           /* 7 (4 on A30): the largest profile's slices */
	int mem_slices;               /* 8 (4 on A30): the end of the furthest placement */
	int full_sms;                 /* SMs of the whole GPU (the largest profile's) */
	int nexisting;
	struct mig_existing existing[MIG_MAX_INST];
};

/* One job class: count units each wanting a profile, or memory (+ compute share). */
struct mig_request {
	int count;
	char profile[MIG_NAME_LEN];   /* "" when memory is asked for */
	uint64_t mem_bytes;           /* 0 when a profile is named */
	double share;                 /* of a whole GPU's SMs, 0 < share <= 1; 0: none given */
	char label[64];               /* "3x1g.10gb", "file:12" */
};

/* Where one unit of a request went. */
struct mig_unit {
	int request;                  /* index into the requests */
	int gpu;                      /* index into the plan's GPUs; -1 unsatisfied */
	int inst;                     /* index into that GPU's instances */
	int thread_pct;               /* MPS active thread percentage when shared, else 100 */
	uint64_t mem_limit;           /* MPS pinned memory limit when shared, else 0 */
	char why[256];                /* why unsatisfied */
};

enum mig_inst_state {
	MIG_INST_NEW,                 /* to be created */
	MIG_INST_KEEP,                /* an idle existing instance the plan reuses */
	MIG_INST_IDLE,                /* an idle existing instance left alone, holding no request */
	MIG_INST_BUSY,                /* has processes: fixed, holds no request */
	MIG_INST_DESTROY,             /* an idle existing instance in the way */
};

struct mig_inst {
	int profile;                  /* index into the GPU's profiles[] */
	struct mig_placement at;
	int state;                    /* enum mig_inst_state */
	unsigned gi_id;               /* existing ones */
	int nunits;                   /* request units inside */
	uint64_t mem_used;            /* requested memory inside */
	int shared;                   /* several units through MPS */
};

struct mig_gpu_plan {
	int ninst;
	struct mig_inst inst[2 * MIG_MAX_INST];
};

/* The objective, compared lexicographically (doc/mig.md). */
struct mig_score {
	int satisfied;                /* more is better */
	uint64_t waste;               /* instance memory minus requested, of instances that hold requests */
	int sms;                      /* SMs of instances that hold requests */
	int ops;                      /* creates + destroys */
};

struct mig_plan {
	int ngpus;
	struct mig_gpu_plan *gpus;    /* one per input GPU */
	int nunits;
	struct mig_unit *units;
	struct mig_score score;
	int optimal;                  /* the search finished: the plan is optimal */
	long nodes;                   /* work units spent (MIG_NODE_LIMIT) */
	/*
	 * Where the proof stopped: 0 optimal, else the first level of the
	 * objective not proven (1 satisfied, 2 waste, 3 SMs, 4 operations), and
	 * what the bound says there (each equals the plan's own when proven).
	 */
	int gap_level;
	int bound_satisfied;          /* no plan satisfies more */
	uint64_t bound_waste;         /* satisfying as many, none wastes less */
	int bound_sms;                /* ... and wasting as little, none uses fewer SMs */
	int bound_ops;                /* ... and using as few, none needs fewer operations */
};

/*
 * The planner's work budget, in work units (an LP pivot counts by its
 * size, MIG_PIVOT_WORK; a bag, a packing state, a search node one or a
 * fraction): some 100 ms of CPU at most on this 2-core machine for 50
 * jobs over 8 GPUs (bench/results/mig-plan.md). When it runs out the plan
 * is the best so far, with the bound that says how far from optimal it
 * can be. Work, not time: the same input always gives the same plan.
 */
#define MIG_NODE_LIMIT 700000L
/* mig plan --effort N: N times MIG_NODE_LIMIT, N at most this */
#define MIG_EFFORT_MAX 1000
/* What the proof's LP work costs in work units: a pivot (times m (n + m) / 1024), a pricing. */
#define MIG_PIVOT_WORK 100L
#define MIG_PRICE_WORK 20L
/*
 * One LP's column generation stops, with the duals it has (a looser bound,
 * still valid), once it has spent 1 / this of the budget: an LP of
 * thousands of columns could otherwise take seconds.
 */
#define MIG_LP_SHARE 8L

/* Fill compute_slices, mem_slices and full_sms from the profiles. */
void mig_gpu_derive(struct mig_gpu *g);
/* Index of the profile named name (case-insensitive) or -1. */
int mig_profile_find(const struct mig_gpu *g, const char *name);

/*
 * Is this set of instances (profile indices and placements) a valid geometry
 * of g? Placements from the profile's list, no two overlapping in memory
 * slices, compute slices within the GPU's, counts within max_count.
 * why (may be NULL) gets the first reason it is not.
 */
int mig_geometry_valid(const struct mig_gpu *g, const int *profile,
    const struct mig_placement *at, int n, char *why, size_t whylen);

/*
 * Parse one spec: COUNTxPROFILE ("3x1g.10gb") or COUNTxMEMORY ("4x20G").
 * Profile names are checked later, against the GPUs.
 */
int mig_parse_spec(const char *spec, struct mig_request *r);
/*
 * Parse a request file's text: one job class a line, "COUNT MEMORY|PROFILE
 * [SHARE]", # comments. name is used in "name:line: why" errors. *out is
 * malloc'd (free it even on failure).
 */
int mig_parse_requests(const char *name, const char *text, struct mig_request **out, int *n);

/*
 * Plan: every unit of every request placed, or said why not. Profile names
 * must exist on at least one GPU (EXIT_USAGE otherwise). node_limit 0 means
 * MIG_NODE_LIMIT.
 */
int mig_plan(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    long node_limit, struct mig_plan *out);
void mig_plan_free(struct mig_plan *p);
/* a < b: a is the better score. */
int mig_score_better(const struct mig_score *a, const struct mig_score *b);

/* Build the planner's GPUs from a snapshot taken with profiles and processes. */
int mig_gpus_from_system(const struct gpu_system *sys, struct mig_gpu **out, int *n);

/*
 * The plan file: what `mig plan --save` writes and `mig apply` reads back.
 * Line based (doc/mig.md):
 *   gpupack-mig-plan 1
 *   gpu UUID
 *   destroy GI_ID PROFILE START+SIZE
 *   create PROFILE START+SIZE
 */
struct mig_op {
	int create;                   /* 1 create, 0 destroy */
	char uuid[GPU_UUID_LEN];
	char profile[MIG_NAME_LEN];
	struct mig_placement at;
	unsigned gi_id;               /* destroy */
};

/* The operations of a plan, destroys first, in a stable order. *out malloc'd. */
void mig_plan_ops(const struct mig_gpu *gpus, const struct mig_plan *p, struct mig_op **out, int *n);
void mig_ops_write(const struct mig_op *ops, int n, FILE *f);
int mig_ops_parse(const char *name, const char *text, struct mig_op **out, int *n);

/*
 * Check operations against the GPUs as they are now: the GPUs and profiles
 * exist, destroyed instances exist and are idle, and the geometry after the
 * operations is valid. Nothing is changed.
 */
int mig_ops_check(const struct mig_gpu *gpus, int ngpus, const struct mig_op *ops, int n);

/*
 * Apply: destroy, then create each GPU instance at its placement and its
 * compute instance. On a failure, undo what this call created (newest first)
 * and return -1 with the failing operation named. Destroyed idle instances
 * are recreated at their placement where possible.
 * log (may be NULL) gets one line per operation done.
 */
int mig_apply(struct gpu_backend *b, const struct mig_gpu *gpus, int ngpus,
    const struct mig_op *ops, int n, FILE *log);

/*
 * Clear: destroy compute and GPU instances of the selected GPUs (sel[i]
 * nonzero). Refuses, changing nothing, if any of them has processes,
 * naming the pids.
 */
int mig_clear(struct gpu_backend *b, const struct gpu_system *sys, const int *sel, FILE *log);

/* "create gpu-instance 3g.71gb at 0+4 on GPU 0 (GPU-...)" into buf. */
char *mig_op_describe(const struct mig_gpu *gpus, int ngpus, const struct mig_op *op,
    char *buf, size_t size);

#endif
