/*
 * mig_dp: what the DP over the GPUs' files share (src/share/mig_dp*.c only;
 * doc/mig.md, "The search"): the packed vectors of units, a GPU's moves,
 * the layers of states, the bounds. mig_dp.c runs the DP, mig_dpmoves.c
 * builds each GPU's moves, mig_dpbound.c bounds what is still to come
 * (mig_dpmem.c by the rows' instance memory),
 * mig_dpdom.c drops the states of a layer that others dominate.
 * Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_DP_H
#define GPUPACK_SHARE_MIG_DP_H

#include "share/mig_int.h"

#include <stddef.h>
#include <stdint.h>

#define NONE UINT64_MAX
#define MAX_OPTIONS 20000   /* contents of one instance before the DP gives up */
#define MAX_REBUILD 4000000 /* steps to rebuild one GPU's load from its move (mig_dp.c load_of) */

#define BEAM 48             /* states per layer of the first, heuristic pass */
#define PRE_ITERS 10        /* subgradient steps for the first prices */
#define LAG_ITERS 60        /* and for the moves' prices */
#define TOL_BYTES 4096.0    /* against the prices' rounding: a bound loosened by 4 KiB */
#define MIG_DP_LOCAL_SHARE 8 /* a local run (mig_dp_improve) gets at most 1 / this of its work */
#define EVAL_WORK 32        /* a state's bound costs nk / EVAL_WORK work units */

/*
 * Units per class packed in one word: class k in a field of b[k] + 1 bits
 * at off[k]. A state holds each count biased by c[k] = 2^b[k] - 1 - n[k],
 * so that adding a plain vector sets the field's top (guard) bit exactly
 * when the count passes n[k]: one addition and one mask per move.
 */
struct vec {
	int nk;
	int *off, *b;
	uint64_t bias, guard;
};

/* A vector of units some load (or instance) of a GPU holds. */
struct item {
	uint64_t v;                   /* plain packed counts */
	int units;
	uint64_t mem;                 /* their memory on that GPU */
	double rc;                    /* waste less the first prices' value of the units (0 before them) */
	size_t lo;                    /* in the row walk (rows()): the least index of the last instance's content */
};

/* GPU j's moves: each vector with the best row that holds it. */
struct move {
	uint64_t v;
	int units;
	uint64_t waste;
	int sms, ops;
	const struct geo *x;          /* NULL: the empty load */
	double rc;                    /* waste less the prices pw of its units (mig_dp_order_moves) */
};

struct gmap {
	struct move *m;
	size_t n, cap;
	int maxunits;
};

struct state {
	uint64_t key;                 /* biased */
	int units;
	uint64_t waste;
	int sms, ops;
	int prev;                     /* its state in the layer before */
	int move;                     /* GPU's move that led here */
	uint64_t lb;                  /* the least waste a plan through it can have (orders the beam) */
};

struct layer {
	struct state *st;
	size_t n, cap;
};

struct dp {
	struct search *s;
	struct vec vc;
	int target;                   /* S: the units every plan of the level places */
	struct mig_score inc;         /* the best plan: only strictly better ones are kept */
	/*
	 * Where every unit is placed and each class's memory is the same on
	 * every GPU, the placed memory is one number and the instances' memory
	 * a multiple of dm, the gcd of all profiles' memories: a plan's waste
	 * is the best plan's less a multiple of dm (0: no such lattice).
	 */
	uint64_t dm;
	long work, limit;
	int aborted;
	/* lower bounds of what a unit still to place adds (over all GPUs) */
	uint64_t *wmin;               /* [k] waste; NONE: placed nowhere */
	uint64_t *smin;               /* [k] SMs, in 1/1024 */
	int *wordr, *sordr;           /* classes by wmin, by smin */
	/*
	 * Lagrangian bounds (prices pw, ps per unit of each class, for the
	 * waste and for the SMs): whatever GPUs j.. add is at least hw[j]
	 * (hs[j]) plus the prices of the units they place (the cheapest
	 * `need` of those left), for any prices; the prices only make it tight.
	 */
	double *pw, *ps, *hw, *hs;
	int *pwordr, *psordr;
	/*
	 * A second waste bound, from the waste level's root LP duals
	 * (s->dp_lp_prices) by the same steps: tighter at the root, though not
	 * for every state, so a state takes the larger (NULL: no LP prices).
	 */
	double *pl, *hl;
	int *plordr;
	const struct mig_memtab *mt;  /* the search's tables by instance memory (NULL: none) */
	/*
	 * The first prices pp (before the moves exist, preprice()): a bound
	 * L0 on the waste of every plan, hq[j] GPU j's part of it.
	 */
	double *pp, *hq, L0;
	double *cbest;                /* [j * MIG_MAX_PROFILES + p]: the least one instance of p adds at pp (1e300: none) */
	int priced;
	int ordered;                  /* the moves are in mig_dp_order_moves's order */
	/*
	 * A local run (mig_dp_improve) keeps some GPUs' loads as they are:
	 * start is the biased vector of the units those hold (where the free
	 * GPUs' moves start, so that a move past what is left trips the
	 * guard), cap[k] the units of class k left to the free GPUs.
	 */
	uint64_t start;
	const int *cap;
	int maxed;                    /* S is proven the most units any plan places (mig_dpdom.c relies on it) */
	int done;                     /* layers 0..done of the pass that ran are complete (dominance included) */
};

/*
 * The exact pass of a full run that ran out of work, for the next full
 * run (s->dp_saved): its layers 0..depth, complete, and the moves their
 * states came by (gm[j]: GPU j's, in the order the states' move indices
 * name). Those states were held against a plan no better than any later
 * run's, with bounds valid for every plan: the next run takes layer depth,
 * drops what its own plan and bounds rule out, and goes on from there.
 */
struct mig_dp_saved {
	int units;                    /* the run's target */
	int depth;
	struct layer *ly;             /* [depth + 1] */
	struct gmap *gm;              /* [depth] */
};

/* What building GPU j's moves needs: its instances' contents per profile. */
struct build {
	struct dp *d;
	int j;
	const struct gtable *t;
	struct item *opt[MIG_MAX_PROFILES];
	size_t nopt[MIG_MAX_PROFILES];
	int count[MIG_MAX_PROFILES];
	/*
	 * Profiles whose rows the walk leaves out: each content of one is a
	 * content of another profile of the same memory and no more SMs, and
	 * every row with it has a twin row with that one instead, needing no
	 * more operations, so its rows add no vector at a better value.
	 */
	unsigned char skip[MIG_MAX_PROFILES];
	/*
	 * [r] for row r of the table, at the first prices: the least the
	 * instances of any row holding r's add to it, each at its best (0:
	 * r itself), so that a partial row is bounded by its best completion.
	 */
	double *ext;
	struct gmap *g;
	struct hmap idx;              /* vector -> its move */
};

/* Units of class k in a packed vector (biased or not, as stored). */
int mig_dp_field(const struct vec *vc, uint64_t key, int k);
/* Is (waste w, m in 1/1024 SMs, o operations), a lower bound of a plan, at least the best plan's? */
int mig_dp_no_better(const struct dp *d, uint64_t w, uint64_t m, int o);
/* Spend w work; 1 once the DP's share is spent. */
int mig_dp_spend(struct dp *d, long w);

/* mig_dpmoves.c */
void mig_dp_build_init(struct dp *d, int j, struct build *b);
void mig_dp_build_free(struct build *b);
/* GPU b->j's moves into g: each vector some row holds, with the best such row. */
void mig_dp_moves(struct dp *d, struct build *b, struct gmap *g);

/* mig_dpkeep.c: what a full run keeps for the next (s->dp_moves, s->dp_saved) */
void mig_dp_moves_copy(struct gmap *dst, const struct gmap *src);
int mig_dp_moves_take(struct dp *d, int j, struct gmap *g);
void mig_dp_moves_keep(struct dp *d, int j, const struct gmap *g);
/* layer depth of the run before into ly (its moves into old[j < depth]), filtered: the depth, 0 none */
int mig_dp_resume(struct dp *d, struct layer *ly, const int *restu, struct gmap *old);
/* the exact pass ran out: its complete layers kept (arrays of ly and old[j < from] taken) */
void mig_dp_save(struct dp *d, struct layer *ly, struct gmap *gm, struct gmap *old, int from);

/* mig_dpdom.c: drops the states of layer l (GPUs 0..j-1 done, h: key -> index) another one covers */
void mig_dp_dominate(struct dp *d, struct layer *l, const struct hmap *h, int j);

/* mig_dpmem.c: the tables by instance memory, once per search (NULL: too large), and the bounds from them */
struct mig_memtab *mig_dp_memtab(struct search *s, long *work);
int mig_dp_by_memory(const struct dp *d, const int *left, int need, int j, uint64_t waste, uint64_t *lw, uint64_t *ls);

/* mig_dpbound.c */
void mig_dp_lattice(struct dp *d);
void mig_dp_bounds_init(struct dp *d);
void mig_dp_preprice(struct dp *d, struct build *bl);
void mig_dp_prices(struct dp *d, struct gmap *gm);
void mig_dp_filter_moves(struct dp *d, struct gmap *gm);
void mig_dp_order_moves(struct dp *d, struct gmap *gm);
double mig_dp_state_base(const struct dp *d, const int *left, int need, int j);
/* The units of each class a state (biased key) has not placed. */
void mig_dp_lefts(const struct dp *d, uint64_t key, int *left);
int mig_dp_rest_bounds(const struct dp *d, const int *left, int need, int j, uint64_t waste, uint64_t *lw, uint64_t *ls);

#endif
