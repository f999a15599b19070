/*
 * mig_bag: what the bags' files share (src/share/mig_bag*.c only; doc/mig.md,
 * "How it works"). mig_bagmix.c sets up the mix as the bags see it (the
 * units exclusive or small, packed counts, each profile's fullest content,
 * a plan offered), mig_bag.c enumerates the bags of instances and tries
 * them (the GPUs holding a bag, its plan), mig_bagpack.c gives a bag's
 * instances the units (the exclusive ones, then the small ones packed),
 * mig_bagdrop.c runs them, beneath each drop vector where not every unit
 * is placed. Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_BAG_H
#define GPUPACK_SHARE_MIG_BAG_H

#include "share/mig_int.h"

#include <limits.h>
#include <stdint.h>

#define MAX_FIELDS 24         /* classes of one kind (exclusive, small), profiles */
#define MAX_CONTENTS 20000    /* the fullest contents of one shared instance, before giving up */
#define NO_ROW INT_MAX
#define MAX_BAGS 200000       /* bags kept after the cheap checks, before giving up */
#define MAX_HALL 1024         /* sets of exclusive classes checked */
#define ROUNDING 1e-6         /* what a bound in double may be below its exact value (only ever loosens it) */

/*
 * Counts in one word: field i of b[i] bits at off[i], with a guard bit
 * above it. A biased vector holds count + 2^b - 1 - cap, so that an
 * addition past cap sets the guard bit.
 */
struct pack {
	int n;
	int off[MAX_FIELDS], b[MAX_FIELDS], cap[MAX_FIELDS];
	uint64_t one[MAX_FIELDS], field[MAX_FIELDS], bias, guard;
};

int mig_pack_init(struct pack *pk, int n, const int *cap);

/* Field i of a plain vector. */
static inline int
pk_get(const struct pack *pk, uint64_t v, int i)
{
	return (int)((v & pk->field[i]) >> pk->off[i]);
}

/*
 * The mix as the bags see it, for plans placing S units: each class either
 * exclusive (alone in an instance: a named profile, or a job too large to
 * share) or small (sharing instances through MPS), on GPUs of one product.
 */
struct bagrun {
	struct search *s;
	const struct mig_gpu *g;      /* the product */
	int S, ns;                    /* units every plan places; small units in all */
	struct mig_score inc;         /* only strictly better plans count */
	long work, limit;
	int aborted;
	int first;                    /* any plan placing S units will do: stop at the first */
	int ne, nsm;                  /* exclusive classes, small classes */
	int ecls[MAX_FIELDS], scls[MAX_FIELDS]; /* their classes */
	struct pack pe, psm;          /* exclusive counts, small units */
	int np;
	unsigned char skip[MIG_MAX_PROFILES]; /* profiles another stands for: their rows add nothing */
	uint64_t smem[MAX_FIELDS];    /* a small class's memory */
	int sneed[MAX_FIELDS];        /* and SMs */
	int sorder[MAX_FIELDS];       /* small classes by memory, most first */
	uint64_t fill[MIG_MAX_PROFILES]; /* the most small memory one shared instance of p holds */
	int smost[MIG_MAX_PROFILES];  /* the most small units it holds */
};

static inline int
spend(struct bagrun *x, long w)
{
	x->work += w;
	if (x->work > x->limit)
		x->aborted = 1;
	return x->aborted;
}

/* Is (w, sms, ops), a lower bound of a plan's value, at least the best plan's? */
static inline int
no_better(const struct bagrun *x, uint64_t w, int sms, int ops)
{
	if (w != x->inc.waste)
		return w > x->inc.waste;
	if (sms != x->inc.sms)
		return sms > x->inc.sms;
	return ops >= x->inc.ops;
}

/* mig_bagmix.c: set up for S units (-1: not for these GPUs), and a plan offered. */
int mig_bagrun_init(struct bagrun *x, struct search *s, int S, long limit, int first);
/*
 * s->cur from each GPU's row and which exclusive class each instance holds
 * (role[j][i], -1: shared), the shared ones given the small contents cnt[]
 * (plain) of profiles prof[], ninst of them, in order per profile; offered:
 * 1 where it has value want (the best plan now, unless the bags are blind).
 */
int mig_bag_offer(struct bagrun *x, const struct geo *const *row, const signed char (*role)[MIG_MAX_INST],
    const int *prof, const uint64_t *cnt, int ninst, const struct mig_score *want);

/* A row of a GPU's table as the bags see it. */
struct brow {
	const struct geo *g;          /* NULL: the empty load */
	int ops, sl;                  /* operations, compute slices */
	unsigned char n[MIG_MAX_PROFILES];
};

/* A bag: instances per profile, their memory and SMs. */
struct bagc {
	uint64_t mem;
	int sms;
	unsigned char n[MIG_MAX_PROFILES];
};

/* A set of exclusive classes for Hall's condition. */
struct hall {
	uint32_t mask;                /* profiles some class of the set fits */
	int units;                    /* the set's units */
	int depth;                    /* the enumeration has decided every profile of mask past prof[depth - 1] */
};

/* The fewest operations with which GPUs j.. hold a bag's instances, and the row of GPU j (remembered). */
struct held {
	int ops, row;                 /* NO_ROW: they cannot; row -1: none */
};

/* What the GPUs can hold: set up once a run. */
struct bagcap {
	int np, prof[MIG_MAX_PROFILES]; /* the profiles used (none another stands for), most memory first */
	int maxc[MIG_MAX_PROFILES];     /* [p]: the most instances of p all GPUs' rows have */
	uint64_t dm;                  /* the gcd of the profiles' memories: a bag's memory is a multiple */
	uint64_t capmem;              /* the most instance memory all GPUs' rows have */
	long capsms;                  /* and SMs */
	int *sufmax;                  /* [j * MIG_MAX_PROFILES + p]: the most instances of p GPUs j.. have */
	int *sufsl;                   /* [j]: the most compute slices GPUs j.. have */
	struct brow **rows;           /* [j]: GPU j's rows */
	size_t *nrows;
	struct pack pr;               /* instances per profile, any number of GPUs */
	struct hmap memo;             /* (instances, j) -> held[] */
	struct held *held;
	size_t nm, mcap;
	/* [i]: what the profiles prof[i..] have at their most: memory, small fill, units, SMs, instances */
	uint64_t restmem[MIG_MAX_PROFILES + 1], restfill[MIG_MAX_PROFILES + 1];
	long restmost[MIG_MAX_PROFILES + 1], restsms[MIG_MAX_PROFILES + 1];
	int restn[MIG_MAX_PROFILES + 1];
	double perslice[4][MIG_MAX_PROFILES + 1]; /* [0..3][i]: the most fill, units, SMs, instances a compute slice of prof[i..] has */
};

/* What the units placed need: those of the mix, or all but a drop vector's. */
struct bagneed {
	int ec[MAX_FIELDS], sc[MAX_FIELDS]; /* units placed of each exclusive, small class */
	uint64_t P;                   /* the placed units' memory */
	uint64_t smem;                /* the small units' */
	long sneed;                   /* SMs their shares need */
	int eunits, ns;               /* units placed: exclusive ones, small ones */
	uint64_t ew[MAX_FIELDS];      /* [c]: the least an exclusive unit of class c wastes */
	uint32_t efit[MAX_FIELDS];    /* [c]: profiles exclusive class c fits */
	int holds[MAX_FIELDS][MIG_MAX_PROFILES]; /* [a][p]: the most units of small class a one instance of p holds */
	/* what the exclusive units' instances take at least: small fill, units, SMs, each small class's room */
	uint64_t minfill;
	int minmost;
	long minsms, minroom[MAX_FIELDS];
	struct hall *hl;
	int nhall;
};

struct bags {
	struct bagrun *x;
	struct bagcap gp;
	struct bagneed u;
	uint64_t lo, hi;              /* the bags' memory lies in [lo, hi] */
	unsigned char cur[MIG_MAX_PROFILES]; /* the bag being enumerated */
	struct bagc *c;               /* the bags kept */
	size_t nc, ccap;
	/* the bag tried: its exclusive units' instances, the instances left */
	int e[MAX_FIELDS][MIG_MAX_PROFILES], ebest[MAX_FIELDS][MIG_MAX_PROFILES];
	unsigned char avail[MIG_MAX_PROFILES];
	struct hmap ycache;           /* Y -> 0: the small units do not all go in */
	/* the packing found: a content (plain) per instance of Y, and its profile */
	int yprof[MIG_MAX_INST * 64];
	uint64_t ycnt[MIG_MAX_INST * 64];
	int ninst;
	/* the bag being tried: no plan of these units below it (memory, then SMs) is better than the best */
	uint64_t at_mem;
	int at_sms;
};

/* mig_bag.c: set up (the GPUs, once), the units placed (-1: one fits no instance), the bags tried (-1: out of work) */
int mig_bags_init(struct bags *b, struct bagrun *x);
int mig_bags_units(struct bags *b, const int *ec, const int *sc);
void mig_bags_free(struct bags *b);
int mig_bags_try(struct bags *b, int *found);

/* mig_bagpack.c: exclusive class c's units from profile q on, left to give, then the small ones: 1 all placed */
int mig_bags_exclusive(struct bags *b, int c, int q, int left);

#endif
