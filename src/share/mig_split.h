/*
 * mig_split: what the split DP's files share (src/share/mig_split*.c only;
 * doc/mig.md, "The split DP"): packed counts, a hash from two words, a
 * GPU's options, the layers' states, the inner DP's sets, the bounds'
 * tables. mig_split.c runs it (set up, the outer layers, the last layer
 * valued), mig_splitopt.c builds each GPU's options, mig_splitpack.c
 * packs the small units into the shared instances (the inner DP) and
 * rebuilds the plan, mig_splitbound.c bounds what GPUs still to come add.
 * Not an API.
 */
#ifndef GPUPACK_SHARE_MIG_SPLIT_H
#define GPUPACK_SHARE_MIG_SPLIT_H

#include "share/mig_int.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_CONTENTS 20000   /* the fullest contents of one shared instance, before giving up */
#define MAX_FIELDS 24        /* classes of one side, profiles */

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

int mig_split_pack_init(struct pack *pk, int n, const int *cap);

/* Field i of a plain vector. */
static inline int
pk_get(const struct pack *pk, uint64_t v, int i)
{
	return (int)((v & pk->field[i]) >> pk->off[i]);
}

/* Field i of a biased vector. */
static inline int
pk_count(const struct pack *pk, uint64_t v, int i)
{
	return pk_get(pk, v, i) - (((1 << pk->b[i]) - 1) - pk->cap[i]);
}

/* Biased u plus plain c, each field held at its cap. */
static inline uint64_t
pk_add_sat(const struct pack *pk, uint64_t u, uint64_t c)
{
	uint64_t v = u + c, g = v & pk->guard;

	for (int i = 0; g && i < pk->n; i++)
		if (g >> (pk->off[i] + pk->b[i]) & 1) {
			v = (v & ~(pk->field[i] | (pk->one[i] << pk->b[i]))) | pk->field[i];
			g &= ~(pk->one[i] << pk->b[i]);
		}
	return v;
}


struct ctab {
	int maxe, nt;                 /* exclusive units 0..maxe, memory steps 0..nt-1 */
	uint32_t *sw, *sv;            /* [e * nt + q], in MiB rounded down (a bound stays one); CT_NO: none */
	uint16_t *sm, *so;            /* [e * nt + q]: the least SMs, operations (suffix minima too) */
};

#define CT_NONE UINT64_MAX
#define CT_NO UINT32_MAX
#define CT_STEPS 4096
#define CT_CELLS (1 << 21)
#define CT_SHARE 3           /* the completions table may take this part of the run's work at most */

/* A GPU's option: a row of its table and, per instance, an exclusive class or shared. */
struct opt {
	uint64_t e, y;                /* plain: exclusive units per class, shared instances per profile */
	uint64_t w, ymem, yfill;      /* exclusive waste; shared instances' memory, and the most they can hold */
	int ycap, eu, sms, ops;       /* the most small units the shared ones hold; exclusive units */
	int ysms;                     /* the shared instances' SMs */
	const struct geo *x;          /* NULL: the empty load */
	unsigned char role[MIG_MAX_INST]; /* per instance of x: exclusive class, or SHARED */
};
#define SHARED 0xff

struct ost {
	struct opt *o;
	size_t n, cap;
	int owned;                    /* not a twin's */
	int most;                     /* the most units (exclusive and small) one of them holds */
};

struct sst {
	uint64_t e, y;                /* e biased */
	uint64_t w, ymem, yfill;
	int ycap, eu, sms, ops, ysms;
	int prev, opt;
	uint64_t lb;
};

struct slayer {
	struct sst *st;
	size_t n, cap;
};

/* The most-filled vectors of small units a multiset Y of shared instances holds (biased). */
struct rset {
	uint64_t y;
	int parent, prof;             /* Y less one instance of prof: parent's set (-1: Y empty) */
	size_t at, n;                 /* its vectors: vec[at .. at + n) */
};

struct split {
	struct search *s;
	const struct mig_gpu *g;      /* the product */
	int S, ns;                    /* units every plan places; small units in all */
	struct mig_score inc;         /* only strictly better plans count */
	long work, limit;
	int aborted;
	int ne, nsm;                  /* exclusive classes, small classes */
	int ecls[MAX_FIELDS], scls[MAX_FIELDS]; /* their classes */
	struct pack pe, pyk, psm;     /* exclusive counts, shared instances per profile, small units */
	int np;
	unsigned char skip[MIG_MAX_PROFILES];
	uint64_t smem[MAX_FIELDS];    /* a small class's memory */
	int sneed[MAX_FIELDS];        /* and SMs */
	int sorder[MAX_FIELDS];       /* small classes by memory, most first */
	uint64_t *pmax;               /* [c]: the memory of the c largest small units */
	uint64_t fill[MIG_MAX_PROFILES]; /* the most small memory one shared instance of p holds */
	int smost[MIG_MAX_PROFILES];  /* the most small units it holds */
	/* [c * (umax + 1) + u]: the most memory of c small units needing u SMs at most (NULL: too large) */
	uint64_t *pmaxu;
	int umax;
	struct ctab *ct;              /* [j]: what GPUs j.. can add (mig_split_completions()); NULL: none */
	uint64_t dq;                  /* its memory step */
	int exact;                    /* every option's shared memory a whole number of steps */
	/* the inner DP */
	uint64_t *cont[MIG_MAX_PROFILES]; /* each profile's fullest contents (plain small vectors) */
	size_t ncont[MIG_MAX_PROFILES];
	struct rset *rs;
	size_t nrs, rscap;
	struct hmap rmap;             /* Y -> its set */
	uint64_t *vec;                /* the sets' vectors */
	int *from, *via;              /* each one's vector in the parent set, and the content added */
	size_t nvec, veccap, fromcap, viacap;
};

static inline int
spend(struct split *x, long w)
{
	x->work += w;
	if (x->work > x->limit || (x->s->split_stop && atomic_load_explicit(x->s->split_stop, memory_order_relaxed)))
		x->aborted = 1;
	return x->aborted;
}

/* Is (w, sms, ops), a lower bound of a plan's value, at least the best plan's? */
static inline int
no_better(const struct split *x, uint64_t w, int sms, int ops)
{
	if (w != x->inc.waste)
		return w > x->inc.waste;
	if (sms != x->inc.sms)
		return sms > x->inc.sms;
	return ops >= x->inc.ops;
}


/* mig_splitopt.c: the profiles another stands for (x->skip), GPU j's options */
void mig_split_skips(struct split *x);
void mig_split_options(struct split *x, int j, struct ost *os);

/* mig_splitpack.c: the most a shared instance holds, the inner DP, the plan */
void mig_split_limits(struct split *x);
int64_t mig_split_most_packed(struct split *x, uint64_t y, int c, size_t *best);
int mig_split_plan(struct split *x, struct slayer *ly, struct ost *os, int at, size_t vi, int c,
    const struct mig_score *want);
int mig_split_loads(struct split *x, const struct opt *const *o, const int *prof, const uint64_t *cnt, int ninst,
    const struct mig_score *want);

/* mig_splitdrop.c: the bags of instances, beneath each drop vector where the mix does not fit (1: proven) */
int mig_split_bags(struct split *x);

/* mig_splitbound.c: a state's own bound, and the completions table's (what GPUs j.. add) */
void mig_split_completions(struct split *x, const struct ost *os);
void mig_split_cut(struct split *x, struct slayer *l, int j);
uint64_t mig_split_lb(const struct split *x, const struct sst *st);

#endif
