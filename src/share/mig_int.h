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

/* ------------------------------------------------------ the search (mig_search.c, mig_bound.c) */

/* A class of identical request units: the search places counts of them. */
struct kls {
	int n;                        /* units */
	int req;                      /* its first request */
	uint64_t mem;                 /* memory asked for; 0 when a profile is named */
	double share;
	char profile[MIG_NAME_LEN];   /* "" unless a profile is named */
};

/* One GPU as the search sees it (they are searched in class order). */
struct sgpu {
	int gpu;                      /* index into the input GPUs */
	int twin;                     /* identical to the GPU before it in search order */
	const struct gtable *t;
	const struct mig_gpu *g;
	uint32_t *fit;                /* [k]: profiles (bit p) a unit of class k fits alone */
	unsigned char *small;         /* [k]: class k may share an instance here */
	int *need;                    /* [k]: SMs its share needs here */
	uint64_t *mem;                /* [k]: memory it requests here (a named profile's own) */
	int *order;                   /* [k]: classes by reduced value per byte, best first */
	long double h;                /* the most reduced value this GPU can add (at the prices) */
	int *korder;                  /* [p * nk + i]: exclusive classes for profile p, best first */
	int *nkorder;                 /* [p] */
	int *conf;                    /* table rows by their bound, best first */
};

/* What one instance of a GPU's load holds. */
struct slot {
	int profile;
	int big;                      /* class of its one exclusive unit, or -1: shared units */
	int *cnt;                     /* [k]: units of class k in it when shared */
	int nunits;
	uint64_t mem;                 /* requested memory inside */
	int need;                     /* SMs the shares inside need */
};

/* A GPU's load: a row of its table and what each instance holds. */
struct load {
	const struct geo *x;
	int nslots;
	struct slot slot[MIG_MAX_INST];
};

struct search {
	const struct mig_gpu *gpus;
	int ngpus;
	struct gtable *tab;
	int nk;
	struct kls *k;
	struct sgpu *sg;              /* [ngpus] in search order */
	long double big, sbig;        /* the scales that make one number of (satisfied, waste, SMs) */
	long double *pi;              /* [k]: the price of a unit of class k (Lagrange multipliers) */
	long double root;             /* the bound on the value at the root */
	int *rem;                     /* [k]: units of class k not placed yet */
	/* the partial plan */
	struct load *cur;             /* [ngpus] */
	int *cntbuf;                  /* cnt arrays of cur */
	struct mig_score sc;
	long double val;
	/* the best plan */
	struct load *best;
	int *bestbuf;
	struct mig_score bs;
	long double bval;
	int have;
	long nodes, limit;
	int aborted;
	/* scratch for the level being filled */
	long double *dyn;             /* [ngpus * MIG_MAX_PROFILES]: best reduced value of one instance */
	long double *restbuf;         /* [ngpus * (MIG_MAX_INST + 1)] */
	long double *rest;            /* this level's: the bound of the slots from i on */
	long double thr_base;         /* this level's: the bound less GPU j's part */
	const int *cls;               /* [r]: the class of request r */
	int optimal;                  /* the last run finished */
};

/* ------------------------------------------------ the first plans (mig_unitsearch.c) */

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

struct usearch {
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
/* Same profiles, same instances in the same state (ids aside): interchangeable GPUs. */
int mig_gpu_twin(const struct mig_gpu *a, const struct mig_gpu *b);
const struct geo *mig_gtable_find(const struct gtable *t, uint64_t key);
struct gtable *mig_tables_build(const struct mig_gpu *gpus, int ngpus);
void mig_tables_free(struct gtable *t, int ngpus);

/* -------------------------------------------------------- mig_unitsearch.c */

void mig_usearch_init(struct usearch *s, const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs,
    int nunits, struct gtable *tab, long limit, int ascending);
void mig_usearch_unit(struct usearch *s, int u);
void mig_usearch_free(struct usearch *s);

/* ------------------------------------------------------------- mig_search.c */

/* SMs a compute share needs on GPU g (0 without a share). */
int mig_need_sms(const struct mig_gpu *g, double share);
/* The value of an instance of profile p holding n units of mem bytes in all. */
long double mig_inst_value(const struct search *s, const struct mig_profile *pr, int n, uint64_t mem);
/* Branch and bound from the root; the best plan ends in s->best. */
void mig_search_run(struct search *s, const struct mig_request *reqs, int nunits);

/* -------------------------------------------------------------- mig_bound.c */

/*
 * The Lagrangian bound: prices for the units (s->pi) that make the bound
 * low, each GPU's most reduced value (sg[].h) and the root bound (s->root).
 * target: the value of a known plan.
 */
void mig_bound_prices(struct search *s, long double target);
/* The best reduced value of one instance of each profile of GPU j, for the units in rem. */
void mig_bound_instances(const struct search *s, int j, const int *rem, long double *best);

#endif
