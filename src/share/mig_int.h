/*
 * mig_int: what the planner's files share among themselves (src/share/mig_*.c
 * only; doc/mig.md, "How it works"): each GPU's table of geometries, the
 * classes of identical request units, the GPUs in search order, a plan as a
 * load per GPU, and the search: the best plan so far, the work spent, what
 * the proof has shown. Not an API.
 *
 * The planner (mig_prove.c runs it): first plans (mig_heur.c,
 * mig_unitsearch.c); the configuration LP (mig_master.c, its simplex in
 * mig_lp.c), whose prices give the bound (mig_bound.c) and whose solution a
 * dive rounds into plans; the bags of instances (mig_bag*.c), the exact
 * search that proves the most units and the rest of the objective.
 */
#ifndef GPUPACK_SHARE_MIG_INT_H
#define GPUPACK_SHARE_MIG_INT_H

#include "share/mig.h"

#include <stddef.h>
#include <stdint.h>

#define MIG_GIB 1073741824.0L

/* The memory slices of a placement as a bit mask (0 if out of range). */
uint32_t mig_slice_mask(struct mig_placement at);
/* SMs a compute share needs on GPU g (0 without a share). */
int mig_need_sms(const struct mig_gpu *g, double share);
uint64_t mig_gcd64(uint64_t a, uint64_t b);
/* ord[0..n) (holding indices) sorted by key, ascending, or descending with desc (stable: few items). */
void mig_order_by(int *ord, const uint64_t *key, int n, int desc);

/* ------------------------------------------------- per-GPU geometry tables (mig_table.c) */

/* A placement a profile can take: the unit of enumeration. */
struct cand {
	int profile;
	struct mig_placement at;
	uint32_t mask;
};

/* One set of profile counts (a row) and the cheapest placement of it. */
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
/* Has every row with profile `from` a twin with `to` instead, needing no more operations? */
int mig_gtable_swaps(const struct gtable *t, int from, int to);
struct gtable *mig_tables_build(const struct mig_gpu *gpus, int ngpus);
void mig_tables_free(struct gtable *t, int ngpus);

/* ------------------------------------------------------------ mig_hmap.c */

/* An open-addressed hash from packed counts, one word or a pair (words), to indices. */
struct hmap {
	uint64_t *key;                /* [words * cap] */
	int *val;
	size_t cap, n;
	int words;
};

void mig_hm_init(struct hmap *h, size_t want, int words);
void mig_hm_free(struct hmap *h);
/* The value slot of key (a, b) (b unused with one word); a new key gets -1. */
int *mig_hm_get(struct hmap *h, uint64_t a, uint64_t b);
/* The value slot of key (a, b), NULL if absent (nothing added). */
const int *mig_hm_find(const struct hmap *h, uint64_t a, uint64_t b);

/* ------------------------------------------------------- classes, GPUs, plans */

/* A class of identical request units: the search places counts of them. */
struct kls {
	int n;                        /* units */
	int req;                      /* its first request */
	uint64_t mem;                 /* memory asked for, with its context; 0 when a profile is named */
	double share;
	char profile[MIG_NAME_LEN];   /* "" unless a profile is named */
};

/* One GPU as the search sees it: identical ones (twins) next to each other. */
struct sgpu {
	int gpu;                      /* index into the input GPUs */
	int twin;                     /* identical to the GPU before it in search order */
	int grp;                      /* its group of identical GPUs, in order */
	const struct gtable *t;
	const struct mig_gpu *g;
	uint32_t *fit;                /* [k]: profiles (bit p) a unit of class k fits alone */
	unsigned char *small;         /* [k]: class k may share an instance here (below the smallest profile) */
	int *need;                    /* [k]: SMs its share needs here */
	uint64_t *mem;                /* [k]: memory it requests here (a named profile's own) */
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
	const struct geo *x;          /* NULL: no valid geometry at all (nothing new) */
	int nslots;
	struct slot slot[MIG_MAX_INST];
};

struct price;

struct search {
	const struct mig_gpu *gpus;
	int ngpus, ngroups;
	struct gtable *tab;
	int nk;
	struct kls *k;
	const int *cls;               /* [r]: the class of request r */
	struct sgpu *sg;              /* [ngpus] in search order */
	uint64_t waste_step;          /* waste is a multiple of it: the gcd of all memory sizes */
	/* a plan being built (first plans, the dive, the bags' plans) and the best one */
	struct load *cur, *best;
	int *cntbuf, *bestbuf;        /* their slots' counts */
	struct mig_score bs;
	int have;
	long nodes, limit;            /* work spent (MIG_PIVOT_WORK and others say what counts), the budget */
	struct price *pr;             /* the bound's prices and the LP (mig_bound.c, mig_master.c) */
	/*
	 * What the proof has shown: no plan satisfies more than lb.satisfied;
	 * satisfying as many, none wastes less than lb.waste; then none uses
	 * fewer than lb.sms SMs, none needs fewer than lb.ops operations (each
	 * 0 where nothing is known). The plan is optimal where it reaches all.
	 */
	struct mig_score lb;
};

/* s->cur's load of GPU j emptied (the table's empty row, where it has one). */
void mig_load_clear(struct search *s, int j);

/* ---------------------------------------------------------------- mig_heur.c */

/* The first plans: first fit both ways, the unit search's (mig_unitsearch.c). */
void mig_first_plans(struct search *s, const struct mig_request *reqs, int nunits);
/* s->cur as a candidate for the best plan (better: copied to s->best); its score. */
struct mig_score mig_offer(struct search *s);
/* s->cur completed: the units left[] placed first fit where they go, instances shrunk, offered. */
void mig_complete(struct search *s, int *left);
/* Ruin and recreate: each GPU's and pair of GPUs' loads refilled first fit; a better plan becomes the best. */
void mig_improve(struct search *s);
/* The unit-by-unit search's best plans (least needy units first, then largest first), offered (mig_unitsearch.c). */
void mig_unit_plans(struct search *s, const struct mig_request *reqs, int nunits);

/* ------------------------------------------------- the bound (mig_bound.c, mig_master.c) */

/* A column of the configuration LP: one GPU load of a group (mig_master.c). */
struct col;

/*
 * The prices of the bound (doc/mig.md, "How it works"): at level lvl, a load
 * is worth cs per unit, -cw per GiB wasted, -cm per SM, -co per operation,
 * less pi[k] per unit of class k; the bound is cconst plus the prices of the
 * units plus each GPU's best load at those prices (h[j]). Any prices give a
 * valid bound; the LP's duals give the best.
 */
struct price {
	int lvl;                      /* 1 satisfied, 2 waste, 3 SMs, 4 operations */
	long double cs, cw, cm, co, cconst;
	long double *pi;              /* [k] */
	long double *h;               /* [j] */
	int *hi;                      /* [k]: the units of each class a load may take */
	int *grp_free;                /* [group]: its GPUs the LP loads (the dive takes them one by one) */
	long double rhs[3];           /* the earlier levels' values (satisfied, waste in GiB, SMs): rows of the LP */
	long double bound, mag;       /* the bound, and the size of the numbers it sums (its rounding is far below) */
	struct col *pool;             /* the LP's columns, kept across its solves (mig_master.c) */
	size_t npool, cap, level0;    /* ... and the first of the level's */
	long calls;                   /* simplex calls so far (mig.lp_fail_from counts them) */
};

/*
 * best[p]: the most one instance of profile p of GPU j can add at the prices
 * (an exclusive unit, or small units sharing it: a knapsack); x (may be
 * NULL): [p * nk + k] a content reaching it. The most GPU j's load adds
 * (*row: its table row, -1 the empty load).
 */
void mig_price_instances(struct search *s, int j, long double *best, int *x);
long double mig_price_gpu(const struct search *s, int j, const long double *best, int *row);
/* The bound at the current prices (pr->bound, pr->h, pr->mag). */
long double mig_bound(struct search *s);
/* A level's value of a plan (more is better). */
long double mig_level_value(const struct mig_score *sc, int lvl);

void mig_price_init(struct search *s);
void mig_price_free(struct search *s);
/* Level lvl begins: the best plan's values are the earlier levels' rows, its loads the first columns. */
void mig_lp_level(struct search *s, int lvl);
/* The LP solved by column generation, the bound priced from its duals: 0, or -1 (the bound of no prices). */
int mig_lp_bound(struct search *s);
/* Round the LP into a plan, one GPU at a time, within until work; offered. */
void mig_dive(struct search *s, long until);

/* ---------------------------------------------------------------- mig_bag*.c */

/*
 * The bags of instances for plans placing exactly S units (doc/mig.md):
 * 1 done: a better plan found is offered, and none placing S units beats
 * the best plan (first: a plan placing S units was found, or none exists);
 * 0 out of limit work, or not for these GPUs (of several products): *lb
 * gets the least waste and then SMs the best plan placing S units can
 * have, in the objective's order. Plans placing S units waste wlb at least.
 */
int mig_bags_run(struct search *s, int S, long limit, int first, uint64_t wlb, struct mig_score *lb);

/* ---------------------------------------------------------------- mig_prove.c */

/* Every level of the objective; the best plan ends in s->best, what is proven in s->lb. */
void mig_search_run(struct search *s, const struct mig_request *reqs, int nunits);

#endif
