/*
 * mig_int: what the planner's files share among themselves (src/share/mig*.c
 * only): the per-GPU geometry tables and the search state. Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_INT_H
#define GPUPACK_SHARE_MIG_INT_H

#include "share/mig.h"

#include <stddef.h>
#include <stdint.h>

/* The memory slices of a placement as a bit mask (0 if out of range). */
uint32_t mig_slice_mask(struct mig_placement at);

/* ------------------------------------------------- per-GPU geometry tables (mig_table.c) */

/* A placement a profile can take: the unit of enumeration. */
struct cand {
	int profile;
	struct mig_placement at;
	uint32_t mask;
};

/* One set of profile counts and the cheapest placement of it. */
struct geo {
	uint64_t key;                 /* 4 bits of count per profile */
	int ops;
	int seq;                      /* enumeration order, for stable ties */
	int n;
	unsigned char cand[MIG_MAX_INST];
};

struct gtable {
	int ncand;
	struct cand cand[MIG_MAX_PROFILES * MIG_MAX_PLACEMENTS];
	struct geo *geo;
	size_t ngeo, cap;
	/* what the busy instances take */
	uint32_t busy_mask;
	int busy_slices;
	int busy_count[MIG_MAX_PROFILES];
	int shared;                   /* geo belongs to an earlier GPU's table */
};

struct sunit {
	int req;
	uint64_t mem;                 /* requested memory (a named profile's on that GPU) */
	double share;
	int placeable;                /* fits some profile of some GPU */
};

struct open_inst {
	int profile;
	uint64_t mem_left;
	int sms_left;                 /* for units with a share */
	int nunits;
	int exclusive;                /* holds a unit that may not share */
};

struct gstate {
	uint64_t key;
	int nopen;
	struct open_inst open[MIG_MAX_INST];
};

struct search {
	const struct mig_gpu *gpus;
	int ngpus;
	const struct mig_request *reqs;
	struct gtable *tab;
	int *cls;                     /* symmetry class of each GPU */
	int *named;                   /* [unit * ngpus + gpu]: profile index, -1 none on that GPU, -2 not named */
	uint64_t *minmem;             /* smallest profile memory of each GPU */
	struct sunit *units;
	int nunits;
	long *suffix_placeable;
	uint64_t *suffix_small;       /* memory of units from u on that could share */
	/* for the bounds: what the units from u on need at the least */
	uint64_t *suffix_minwaste;    /* memory wasted by the big ones, each in its best-fitting profile */
	long *suffix_minsms;
	int *nbig;                    /* big (never shared) placeable units from u on */
	int *sumc, *summ;             /* [u * (nunits + 1) + k]: compute / memory slices of the k
	                                 least needy big units from u on; NULL when too many units */
	int freeC, freeM;             /* compute and memory slices not yet taken, all GPUs */
	int *psize;                   /* [g * MIG_MAX_PROFILES + p]: a profile's smallest placement */
	unsigned char *fit;           /* [(u * ngpus + g) * MIG_MAX_PROFILES + k]: fitting profiles, cheapest first */
	unsigned char *nfit;          /* [u * ngpus + g] */
	/* the current partial plan */
	struct gstate *gs;
	int *ag, *ai;
	int sat, sms;
	uint64_t waste_excl, resid_shared;
	/* the best so far */
	struct gstate *best_gs;
	int *best_ag, *best_ai;
	struct mig_score best;
	int have_best;                /* best holds a score (maybe another search's) */
	int found;                    /* best_* hold this search's plan */
	int ascending;                /* units least needy first */
	long nodes, limit;
	int aborted;
};

/* -------------------------------------------------------------- mig_table.c */

/* Is existing instance e the given profile at the given placement? */
int mig_same_place(const struct mig_existing *e, int profile, struct mig_placement at);
/*
 * Operations to reach busy + chosen from what exists; keep_unused (may be
 * NULL) gets which idle instances stay untouched.
 */
int mig_count_ops(const struct mig_gpu *g, const struct gtable *t, const unsigned char *chosen, int n,
    int *keep_unused);
const struct geo *mig_gtable_find(const struct gtable *t, uint64_t key);
struct gtable *mig_tables_build(const struct mig_gpu *gpus, int ngpus);
void mig_tables_free(struct gtable *t, int ngpus);

/* ------------------------------------------------------------- mig_search.c */

/* SMs a compute share needs on GPU g (0 without a share). */
int mig_need_sms(const struct mig_gpu *g, double share);
int mig_check_requests(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    int *nunits);
void mig_search_init(struct search *s, const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs,
    int nunits, struct gtable *tab, long limit, int ascending);
void mig_search_unit(struct search *s, int u);
void mig_search_free(struct search *s);

#endif
