/*
 * mig_int: what the planner's files share among themselves (src/share/mig*.c
 * only): the per-GPU geometry tables and the search state. Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_INT_H
#define GPUPACK_SHARE_MIG_INT_H

#include "share/mig.h"

#include <stdatomic.h>
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
	int grp;                      /* its group of identical GPUs (twins), in order */
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

/*
 * A branching constraint of the proof (mig_prove.c) besides the units per
 * class, on group grp of identical GPUs: lo <= x <= hi where x is its
 * instances of profile idx (MIG_BR_PROFILE), its GPUs with table row idx
 * (MIG_BR_ROW), its units of class k alone in an instance of profile idx
 * (MIG_BR_EXCL), its shared instances of profile idx (MIG_BR_SHARED), its
 * units of class k in those (MIG_BR_ITEM).
 */
enum { MIG_BR_PROFILE, MIG_BR_ROW, MIG_BR_EXCL, MIG_BR_SHARED, MIG_BR_ITEM };
struct mig_branch {
	int kind, grp, idx, k, lo, hi; /* idx: the profile (row for MIG_BR_ROW); k: the class (EXCL, ITEM) */
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
	int maxp;                     /* the most profiles of any GPU */
	struct kls *k;
	struct sgpu *sg;              /* [ngpus] in search order */
	/*
	 * The level of the objective being proven (1 satisfied, 2 waste, 3 SMs,
	 * 4 operations, mig_bound.c) and what a load is worth there: an
	 * instance holding n units of mem bytes in all is worth
	 * cs n - cw (its memory - mem) / GiB - cm SMs, a row -co operations,
	 * a unit of class k costs pi[k]; cconst completes the bound.
	 */
	int lvl;
	long double cs, cw, cm, co, cconst;
	long double *pi;              /* [k]: the price of a unit of class k (Lagrange multipliers) */
	long double root;             /* the bound on the level's value at the root */
	long double inc;              /* the best plan's value at this level */
	long double step;             /* the least improvement there: a unit, or waste_step */
	long double waste_step;       /* waste comes in multiples of it (GiB): the gcd of all memory sizes */
	long double mag;              /* the size of the numbers summed: rounding stays far below it */
	long double lvl_rhs[3];       /* the best plan's satisfied, waste (GiB), SMs: the earlier levels' rows */
	int *lo, *hi;                 /* [k]: the node's bounds on the units of class k placed */
	struct mig_branch *br;        /* the node's other constraints */
	int nbr;
	long double *bradj;           /* [nbr]: what one unit of each adds to a load at the prices */
	long double brconst;          /* their part of cconst */
	int *fixed;                   /* [j]: the table row GPU j must take (-1 the empty load), -2 any */
	int *grp_fixed;               /* [group]: its GPUs a dive has given loads already (NULL: none) */
	double *pool;                 /* columns of the configuration LP, mig_bound.c */
	size_t npool, pool_cap;
	size_t pool_level, pool_level_n; /* the level's first columns: the best plan's loads, the empty ones */
	double lp_obj;
	long lp_pivots, lp_solves;
	long lp_calls;                /* mig_lp_solve calls so far (mig_lp_fail_from counts them) */
	int lp_columns;               /* columns the configuration LP generated (the last level's) */
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
	int have;
	long nodes, limit;
	long budget;                  /* the whole plan's work budget (limit is the current search's) */
	int aborted;
	/* scratch for the level being filled */
	long double *dyn;             /* [ngpus * MIG_MAX_PROFILES]: best reduced value of one instance */
	long double *restbuf;         /* [ngpus * (MIG_MAX_INST + 1)] */
	long double *rest;            /* this level's: the bound of the slots from i on */
	long double thr_base;         /* this level's: the bound less GPU j's part */
	const int *cls;               /* [r]: the class of request r */
	int optimal;                  /* every level proven */
	int gap_level;                /* the first level not proven (0: none) */
	long double gap_mag;          /* mag when it stopped (its bound is root) */
	struct mig_lattice *lat;      /* the values each level can take (mig_lattice.c) */
	/*
	 * The waste level's root LP duals as the DP's prices (mig_dp.c): the
	 * waste a unit of class k takes off a load, in bytes; NULL until a
	 * root LP of the waste level is solved.
	 */
	double *dp_lp_prices;
	/*
	 * The moves a full DP run built for each GPU (mig_dp.c), kept for
	 * the next full run: NULL until one finished building a GPU's.
	 */
	struct gmap *dp_moves;        /* [ngpus] */
	int dp_moves_units;           /* the units they place at most (the run's target) */
	/* and the layers of its exact pass where it ran out of work (NULL: none) */
	struct mig_dp_saved *dp_saved;
	struct mig_memtab *dp_mt;     /* the DP's tables by instance memory (mig_dpbound.c), once per search */
	struct mig_split_job *split_job; /* the split DP beside the rest (mig_splitjob.c; NULL: none) */
	atomic_int *split_stop;       /* the split DP's copy: set, it stops (NULL: never) */
	/*
	 * The drop vectors whose bags the bags first (mig_splitdrop.c) finished:
	 * every one up to this one in their order (bags_done 0: none). A later
	 * run's best plan is no worse, so they need not be tried again.
	 */
	int bags_done;
	uint64_t bags_done_lb;
	unsigned char bags_done_d[48];
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
/* Has every row with profile `from` a twin with `to` instead, needing no more operations? */
int mig_gtable_swaps(const struct gtable *t, int from, int to);
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
/* The search of node s->lo, s->hi at level s->lvl with the current prices, within limit nodes. */
void mig_search_dfs(struct search *s, long limit);
/* s->cur with score s->sc (and s->rem) as a candidate for the best plan. */
void mig_search_offer(struct search *s);
/* -------------------------------------------------------------- mig_heur.c */

/* The first plans: first fit both ways and the unit search. */
void mig_search_first(struct search *s, const struct mig_request *reqs, int nunits);
/* s->cur, its score computed, with the units left[] not placed, as a candidate. */
void mig_search_offer_cur(struct search *s, const int *left);
/* The same as a plan of any node: the current node's bounds on the units set aside. */
void mig_search_offer_any(struct search *s, const int *left);
/* s->cur completed: the units left[] placed first fit where they go, instances shrunk, offered. */
void mig_search_complete(struct search *s, int *left);
/* Ruin and recreate: each GPU's and pair of GPUs' loads refilled first fit; a better plan becomes the best. */
void mig_search_improve(struct search *s);
/* A plan's value at level lvl (more is better). */
long double mig_level_value(const struct mig_score *sc, int lvl);
/* Could a plan of the node whose value at this level is at most bound beat the best one? */
int mig_could_beat(const struct search *s, long double bound);
/* The same for a bound already rounded (mig_lattice_round) in its own node. */
int mig_could_beat_rounded(const struct search *s, long double bound);
/* The size of the numbers the bound sums at the current prices. */
void mig_search_magnitude(struct search *s);

/* ------------------------------------------------------------ mig_lpplan.c */

struct mig_lpsol;
/* How far v is from the nearest whole number. */
double mig_lpsol_frac(double v);
/* The LP's GPUs of group grp with row row; its instances of profile p there; what they hold (kind, p, k). */
double mig_lpsol_rows(const struct mig_lpsol *sol, int grp, int row);
double mig_lpsol_profiles(const struct search *s, const struct mig_lpsol *sol, int grp, int p);
double mig_lpsol_content(const struct search *s, const struct mig_lpsol *sol, int grp, int kind, int p, int k);
/* s->fixed from the LP's whole rows per group (-1: not whole numbers). */
int mig_fix_rows(struct search *s, const struct mig_lpsol *sol);
/* The plan of a node whose LP counts are whole numbers, offered (-1: none built). */
int mig_node_plan(struct search *s, const struct mig_lpsol *sol);
/* Round the LP one GPU at a time into a plan, offered. */
void mig_dive(struct search *s, struct mig_lpsol *sol, long until);

/* -------------------------------------------------------------- mig_prove.c */

/* Every level of the objective in order; the best plan ends in s->best. */
void mig_search_run(struct search *s, const struct mig_request *reqs, int nunits);

/* ---------------------------------------------------------------- mig_dp.c */

/*
 * Levels 2 to 4 at once by dynamic programming over the GPUs, for plans
 * placing s->bs.satisfied units (proven the most), within limit work: 1 the
 * best plan is proven optimal (a better one found replaces it), 0 gave up.
 */
int mig_dp_run(struct search *s, long limit);
/*
 * The best plan improved pair of GPUs by pair, the other GPUs' loads kept
 * (the DP on each pair: exact there), within limit work.
 */
void mig_dp_improve(struct search *s, long limit);
/* The moves and layers mig_dp_run kept for its next run (s->dp_moves, s->dp_saved), freed. */
void mig_dp_moves_free(struct search *s);
/* The DP's tables by instance memory (s->dp_mt), freed. */
void mig_dp_memtab_free(struct search *s);
/* Tests only: the GPUs whose moves a DP run took from the run before, over the process. */
extern long mig_dp_moves_reused;
/* Tests only: the DP runs that went on from the layers of the run before, over the process. */
extern long mig_dp_layers_reused;
/* Level 1 not proven: one more unit placed pair of GPUs by pair, up to upto units (mig_dp.c). */
void mig_dp_improve_units(struct search *s, long limit, int upto);
/* Tests only: the plans of one more unit mig_dp_improve_units has found, over the process. */
extern long mig_dp_units_found;
/* Tests only: the better plans mig_dp_improve has found, over the process. */
extern long mig_dp_local_found;
/* Tests only: nonzero leaves the DP out, so that the branch and price is seen alone. */
extern int mig_dp_disabled;
/* Tests only: the states the DP's dominance rules dropped (mig_dpdom.c), over the process. */
extern long mig_dp_dom_dropped;
/*
 * Tests only: nonzero keeps every state of the DP's layers that the units
 * allow (no bound drops one), so that dominance alone thins them.
 */
extern int mig_dp_no_prune;
extern int mig_dp_no_memtab;   /* tests: the DP without its bounds by instance memory */
/*
 * tests: a full run of the DP blind to the best plan so far (it builds its
 * moves against no plan and prunes by the plan its own beam finds), and
 * the best plan it found itself, the beam's or the exact pass's
 * (satisfied -1: none)
 */
extern int mig_dp_blind;
extern struct mig_score mig_dp_own;
extern long mig_dp_memtab_cut; /* tests: states those bounds dropped or raised */
/*
 * Tests only: nonzero makes the DP's row walk look at every content of an
 * instance (mig_dpmoves.c), not stop at the first its bound rules out; the
 * contents it did not look at, and the moves of its walks that finished,
 * over the process.
 */
extern int mig_dp_no_stop;
extern long mig_dp_contents_unseen, mig_dp_moves_built;
/* Tests only: the best plan of the DP's last layers (satisfied -1: none, or they were not all built). */
extern struct mig_score mig_dp_found;

/*
 * Tests only: from this call of the simplex on (counted over one plan, from
 * 1), each is taken as failed, as a simplex that cannot finish would; 0
 * none. What the planner does without an LP is then seen: the objective
 * alone as the bound, the search over loads alone.
 */
extern long mig_lp_fail_from;

/* -------------------------------------------------------------- mig_split.c */

/*
 * Levels 2 to 4 at once by the DP over the GPUs that keeps the exclusive
 * units and the shared instances apart, for plans placing s->bs.satisfied
 * units (proven the most), within limit work: 1 the best plan is proven
 * optimal (a better one found replaces it), 0 gave up or does not apply
 * (GPUs of several products).
 */
int mig_split_run(struct search *s, long limit);
/*
 * Once the most units are proven, the bags (mig_splitdrop.c; beneath each
 * drop vector where the mix does not fit) first, on the calling thread,
 * within limit work: 1 the best plan is proven optimal at levels 2 to 4
 * (a better one found replaces it), 0 gave up or does not apply.
 */
int mig_split_bags_first(struct search *s, long limit);
/*
 * The split DP started beside the rest of the proof, with its own limit
 * of work, from the best plan now (on a thread of its own where one can
 * be made, else to its end here); joined: proven, the rest proved its plan
 * (the split DP is stopped and counts for nothing); 1 the split DP proved
 * its plan optimal and it is the best plan now (its work counted).
 */
void mig_split_start(struct search *s, long limit);
int mig_split_join(struct search *s, int proven);
/* Tests only: nonzero runs the split DP on the calling thread, to its end. */
extern int mig_split_serial;
/* Tests only: nonzero leaves the split DP out. */
extern int mig_split_disabled;
/*
 * Tests only: nonzero runs the split DP blind to the best plan so far (it
 * prunes by nothing but its own plans), and the best plan it found itself
 * (satisfied -1: none, or it gave up).
 */
extern int mig_split_blind;
extern struct mig_score mig_split_own;
/* Tests only: the split DP's proofs, and the better plans it found, over the process. */
extern long mig_split_proofs, mig_split_found;
/*
 * Tests only: nonzero leaves out the bags (mig_splitdrop.c), the split
 * DP's first try; their proofs over the process, and the best plan they
 * found themselves (satisfied -1: none).
 */
extern int mig_split_no_bags;
extern long mig_bag_proofs;
extern struct mig_score mig_bag_own;

/* -------------------------------------------------------------- mig_bound.c */

#define MIG_GIB 1073741824.0L

/* The bound at the current prices with units rem left; sets sg[].h. */
long double mig_bound_root(struct search *s, const int *rem);
/* The best reduced value of one instance of each profile of GPU j, for the units in rem. */
void mig_bound_instances(struct search *s, int j, const int *rem, long double *best);
/*
 * The pricing: best[p] the most one instance of profile p of GPU j can hold
 * at the prices (x, may be NULL: a content reaching it, [p * nk + k]); the
 * most GPU j's load can score (*row: its table row, -1 none).
 */
void mig_price_instances(struct search *s, int j, const int *rem, long double *best, int *x);
long double mig_price_gpu(const struct search *s, int j, const long double *best, int *row);

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

/* ------------------------------------------------------------ mig_lattice.c */

uint64_t mig_gcd64(uint64_t a, uint64_t b);
/* ord[0..n) (holding indices) sorted by key, ascending, or descending with desc (stable: few items). */
void mig_order_by(int *ord, const uint64_t *key, int n, int desc);
/* The achievable totals of SMs, operations and instance memory of s's GPUs. */
void mig_lattice_init(struct search *s);
void mig_lattice_free(struct search *s);
/* The node s->lo, s->hi begins: the waste's residues it allows. */
void mig_lattice_node(struct search *s);
/* An upper bound on the level's value in the node, moved down to a value a plan can take (-1e30: none). */
long double mig_lattice_round(const struct search *s, long double bound);

/* ------------------------------------------------------------- mig_master.c */

/*
 * Level s->lvl begins: the best plan's earlier levels become the LP's rows
 * and its loads the first columns of the pool.
 */
void mig_bound_level_start(struct search *s);
/* The LP's solution: units per class, and which pool columns it uses how much. */
struct mig_lpsol {
	double *placed;               /* [k]: units of class k */
	struct { int grp, row, col; double x; } *term; /* x GPUs of group grp with table row row (-1 none): pool column col */
	size_t nterm, cap;
};
/*
 * The bound of the node s->lo, s->hi (units of each class placed) and
 * s->br at level s->lvl: sets the prices, sg[].h and s->root (exact: a
 * Lagrangian bound at the LP's duals). sol (may be NULL) gets the LP's
 * solution. MIG_LP_OPTIMAL, MIG_LP_INFEASIBLE (no plan in the node: the
 * bound says by how much), MIG_LP_FAIL (the bound holds, sol does not).
 */
int mig_bound_node(struct search *s, struct mig_lpsol *sol);
/* What pool column col holds of a content kind (MIG_BR_EXCL, _SHARED, _ITEM) for profile p, class k. */
double mig_pool_detail(const struct search *s, int col, int kind, int p, int k);
int mig_pool_has_detail(const struct search *s);
int mig_pool_row(const struct search *s, int col);
double mig_pool_units(const struct search *s, int col, int k);

#endif
