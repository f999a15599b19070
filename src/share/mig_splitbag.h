/*
 * mig_splitbag: what the bags' files share (src/share/mig_splitbag*.c and
 * mig_splitdrop.c only; doc/mig.md, "The bags" and "The drop vectors"):
 * the bags' state, set up once per run and again for the units each drop
 * vector places. mig_splitbag.c enumerates the bags and tries them (the
 * GPUs holding them, the plan), mig_splitbagpack.c gives a bag's
 * instances the units (the exclusive ones, then the small ones packed),
 * mig_splitdrop.c runs them, beneath each drop vector where the mix does
 * not fit. Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_SPLITBAG_H
#define GPUPACK_SHARE_MIG_SPLITBAG_H

#include "share/mig_split.h"

#include <limits.h>
#include <stdint.h>

#define NO_ROW INT_MAX
#define MAX_BAGS 200000       /* bags kept after the cheap checks, before giving up */
#define MAX_HALL 1024         /* sets of exclusive classes checked */
#define ROUNDING 1e-6         /* what a bound in double may be below its exact value (only ever loosens it) */

struct brow {
	const struct geo *g;          /* NULL: the empty load */
	int ops, sl;                  /* operations, compute slices */
	unsigned char n[MIG_MAX_PROFILES];
};

struct bagc {
	uint64_t mem;
	int sms;
	unsigned char n[MIG_MAX_PROFILES];
};

struct hall {
	uint32_t mask;                /* profiles some class of the set fits */
	int units;                    /* the set's units */
	int depth;                    /* the enumeration has decided every profile of mask past prof[depth - 1] */
};

struct bags {
	struct split *x;
	int np, prof[MIG_MAX_PROFILES]; /* the profiles used (none another stands for), most memory first */
	int maxc[MIG_MAX_PROFILES];     /* [p]: the most instances of p all GPUs' rows have */
	uint64_t restmem[MIG_MAX_PROFILES + 1]; /* [i]: the most memory of profiles prof[i..] */
	uint64_t restfill[MIG_MAX_PROFILES + 1]; /* the most small memory they hold */
	long restmost[MIG_MAX_PROFILES + 1], restsms[MIG_MAX_PROFILES + 1]; /* small units, SMs */
	int restn[MIG_MAX_PROFILES + 1]; /* instances */
	double perslice[4][MIG_MAX_PROFILES + 1]; /* [0..3][i]: the most fill, small units, SMs, instances a compute slice of prof[i..] has */
	uint64_t P, lo, hi;           /* the placed units' memory; the bags' memory lies in [lo, hi] */
	uint64_t smem;                /* the small units' */
	long sneed;                   /* SMs their shares need */
	int eunits, ns;               /* units placed: exclusive ones, small ones */
	int ec[MAX_FIELDS], sc[MAX_FIELDS]; /* units placed of each exclusive, small class */
	uint64_t ew[MAX_FIELDS];      /* [c]: the least an exclusive unit of class c wastes */
	uint64_t dm;                  /* the gcd of the profiles' memories: a bag's memory is a multiple */
	uint32_t efit[MAX_FIELDS];    /* [c]: profiles exclusive class c fits */
	uint64_t minfill;             /* the least fill the exclusive units' instances take */
	int holds[MAX_FIELDS][MIG_MAX_PROFILES]; /* [a][p]: the most units of small class a one instance of p holds */
	int minmost;
	long minsms;                  /* and SMs */
	long minroom[MAX_FIELDS];     /* and units of each small class they could have held */
	struct hall *hl;
	int nhall;
	unsigned char cur[MIG_MAX_PROFILES];
	struct bagc *c;
	size_t nc, cap;
	/* the GPUs' rows, and which bags of instances GPUs j.. hold (remembered) */
	struct brow **rows;
	size_t *nrows;
	int *sufmax;                  /* [j * MIG_MAX_PROFILES + p]: the most instances of p GPUs j.. have */
	int *sufsl;                   /* [j]: the most compute slices GPUs j.. have */
	uint64_t capmem;              /* the most instance memory all GPUs' rows have */
	long capsms;                  /* and SMs */
	struct pack pr;               /* instances per profile, any number of GPUs */
	struct hmap memo;             /* (rest, j) -> its entry */
	struct held {
		int ops, row;         /* the fewest operations (NO_ROW: none), with row of GPU j first (-1: none) */
	} *held;
	size_t nm, mcap;
	/* the exclusive units' instances of the bag tried */
	int e[MAX_FIELDS][MIG_MAX_PROFILES];
	int ebest[MAX_FIELDS][MIG_MAX_PROFILES];
	unsigned char avail[MIG_MAX_PROFILES];
	struct hmap ycache;           /* Y -> 0: the small units do not all go in */
	/* the packing found: a content (plain) per instance of Y, and its profile */
	int yprof[MIG_MAX_INST * 64];
	uint64_t ycnt[MIG_MAX_INST * 64];
	int ninst;
	long tried, nopack, nohold;   /* bags tried, not packed, not held (the trace's) */
	long pcheap, pcache, pslack, pwork; /* packs(): cheap no, cache no, slack_pack calls, work in them (trace) */
};

/* mig_splitbag.c: set up (the GPUs, once), the units placed (-1: one fits no instance), the bags tried (-1: out of work) */
int mig_bags_init(struct bags *b, struct split *x);
int mig_bags_units(struct bags *b, const int *ec, const int *sc);
void mig_bags_free(struct bags *b);
int mig_bags_try(struct bags *b, struct mig_score *best, int *found);

/* mig_splitbagpack.c: exclusive class c's units from profile q on, left to give, then the small ones: 1 all placed */
int mig_bags_exclusive(struct bags *b, int c, int q, int left);

#endif
