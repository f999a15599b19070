/*
 * mig_lattice: the values each level of the objective can take, so that a
 * bound is moved to the next value a plan can have (doc/mig.md, "The
 * search"): an LP bound of 26.14 GiB of waste where no plan can waste
 * less than 26.50 proves a plan that wastes 26.50.
 *
 * - SMs and operations: a plan's SMs are the sum over the GPUs of the SMs
 *   of a sub-row of each GPU's table (its instances that hold units; a
 *   sub-row of a valid row is valid), its operations the sum of one row's
 *   each; the achievable totals are a Minkowski sum over the GPUs, kept as
 *   a table of the next achievable total.
 * - Waste: instance memory (a sub-row sum again, over the instances that
 *   hold memory jobs: a named profile wastes nothing and drops out) less
 *   the memory of the memory jobs placed. Instance memory is a multiple of
 *   dm, the profiles' gcd, so the waste is congruent to minus the placed
 *   memory modulo dm, and the placed memories a node allows (units of each
 *   class within its bounds) give the residues it can have. Where the node
 *   fixes every class's count, the placed memory is one number and the
 *   waste one of the achievable instance totals less it: exact.
 *
 * A bound is only ever moved to a value no plan of the node can beat, so
 * pruning with it stays exact.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The largest tables kept (entries); beyond, that rounding is left out. */
#define LAT_MAX_TOTALS (1L << 20)
#define LAT_MAX_RES 4096
/* The most steps a node's residues may take (a few hundred microseconds). */
#define LAT_MAX_WORK (1L << 20)

struct mig_lattice {
	long *smnext, nsm;            /* next[v]: the least achievable total >= v, -1 none */
	long *opnext, nop;
	long *tnext, nt;              /* instance memory totals, in dm */
	uint64_t mu, dm;              /* all memory sizes' gcd (waste's step), the profiles' */
	int nres;                     /* dm / mu; 0: no residues */
	int *resnext;                 /* [nres]: from a waste of residue r, how far to one the node allows; -1 none */
	unsigned char *res, *nres_buf;
	int fixed;                    /* the node fixes every class's count: */
	uint64_t placed;              /* the memory jobs' memory, in mu */
};

uint64_t
mig_gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void
mig_order_by(int *ord, const uint64_t *key, int n, int desc)
{
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && (desc ? key[ord[b]] > key[ord[b - 1]] : key[ord[b]] < key[ord[b - 1]]); b--) {
			int x = ord[b];

			ord[b] = ord[b - 1];
			ord[b - 1] = x;
		}
}

/* What row r of GPU j's table adds to a total: 0 SMs, 1 operations, 2 memory (in dm). */
static long
row_value(const struct search *s, const struct mig_lattice *l, int j, size_t r, int what)
{
	const struct mig_gpu *g = s->sg[j].g;
	const struct geo *x = &s->sg[j].t->geo[r];
	long v = 0;

	if (what == 1)
		return x->ops;
	for (int p = 0; p < g->nprofiles; p++) {
		long c = (long)(x->key >> (4 * p) & 15);

		v += c * (what == 0 ? g->profiles[p].sms : (long)(g->profiles[p].mem_bytes / l->dm));
	}
	return v;
}

/*
 * The Minkowski sum over the GPUs of the values of each one's rows (and 0
 * for SMs and memory: a GPU whose instances hold nothing), as next[]; NULL
 * when too large.
 */
static long *
totals(const struct search *s, const struct mig_lattice *l, int what, long *n)
{
	long size = 1, *vals = NULL, *next;
	unsigned char *have, *sum;

	for (int j = 0; j < s->ngpus; j++) {
		long most = 0;

		for (size_t r = 0; r < s->sg[j].t->ngeo; r++) {
			long v = row_value(s, l, j, r, what);

			most = v > most ? v : most;
		}
		size += most;
		if (size > LAT_MAX_TOTALS)
			return NULL;
	}
	have = xcalloc((size_t)size, 1);
	sum = xcalloc((size_t)size, 1);
	vals = xcalloc((size_t)size + 1, sizeof *vals);
	have[0] = 1;
	for (int j = 0; j < s->ngpus; j++) {
		const struct gtable *t = s->sg[j].t;
		long nv = 0;

		memset(sum, 0, (size_t)size);
		/* the distinct values of this GPU */
		for (size_t r = 0; r < t->ngeo; r++) {
			long v = row_value(s, l, j, r, what);

			if (!sum[v])
				vals[nv++] = v;
			sum[v] = 1;
		}
		if (what != 1 && !sum[0])
			vals[nv++] = 0;
		if (nv == 0)
			vals[nv++] = 0; /* no table: nothing on it */
		memset(sum, 0, (size_t)size);
		for (long v = 0; v < size; v++)
			if (have[v])
				for (long i = 0; i < nv; i++)
					if (v + vals[i] < size)
						sum[v + vals[i]] = 1;
		memcpy(have, sum, (size_t)size);
	}
	next = xcalloc((size_t)size + 1, sizeof *next);
	next[size] = -1;
	for (long v = size; v-- > 0;)
		next[v] = have[v] ? v : next[v + 1];
	free(have);
	free(sum);
	free(vals);
	*n = size;
	return next;
}

void
mig_lattice_init(struct search *s)
{
	struct mig_lattice *l = xcalloc(1, sizeof *l);
	uint64_t mu = 0, dm = 0;

	for (int j = 0; j < s->ngpus; j++) {
		for (int p = 0; p < s->sg[j].g->nprofiles; p++)
			dm = mig_gcd64(dm, s->sg[j].g->profiles[p].mem_bytes);
		for (int k = 0; k < s->nk; k++)
			if (!s->k[k].profile[0])
				mu = mig_gcd64(mu, s->sg[j].mem[k]);
	}
	l->dm = dm ? dm : 1;
	l->mu = mig_gcd64(mu, l->dm);
	l->smnext = totals(s, l, 0, &l->nsm);
	l->opnext = totals(s, l, 1, &l->nop);
	l->tnext = totals(s, l, 2, &l->nt);
	if (l->dm / l->mu <= LAT_MAX_RES && l->dm / l->mu > 1) {
		l->nres = (int)(l->dm / l->mu);
		l->resnext = xcalloc((size_t)l->nres, sizeof *l->resnext);
		l->res = xcalloc((size_t)l->nres, 1);
		l->nres_buf = xcalloc((size_t)l->nres, 1);
	}
	s->lat = l;
	mig_lattice_node(s);
}

void
mig_lattice_free(struct search *s)
{
	struct mig_lattice *l = s->lat;

	if (!l)
		return;
	free(l->smnext);
	free(l->opnext);
	free(l->tnext);
	free(l->resnext);
	free(l->res);
	free(l->nres_buf);
	free(l);
	s->lat = NULL;
}

void
mig_lattice_node(struct search *s)
{
	struct mig_lattice *l = s->lat;
	int n, fixed = 1;
	uint64_t placed = 0;
	long work = 0;

	if (!l)
		return;
	for (int k = 0; k < s->nk; k++)
		if (!s->k[k].profile[0]) {
			fixed &= s->lo[k] == s->hi[k];
			placed += (uint64_t)s->lo[k] * (s->sg[0].mem[k] / l->mu);
		}
	l->fixed = fixed;
	l->placed = placed;
	if (l->nres <= 0)
		return;
	/* the residues of the placed memory modulo dm (in mu), class by class */
	n = l->nres;
	memset(l->res, 0, (size_t)n);
	l->res[0] = 1;
	for (int k = 0; k < s->nk; k++) {
		long c = s->hi[k] - s->lo[k] + 1;

		work += (c < n ? c : n) * n;
	}
	if (work > LAT_MAX_WORK)
		memset(l->res, 1, (size_t)n); /* too much to work out here: any residue */
	for (int k = 0; k < s->nk && work <= LAT_MAX_WORK; k++) {
		int step, all = 1;

		if (s->k[k].profile[0])
			continue;
		step = (int)((s->sg[0].mem[k] / l->mu) % (uint64_t)n);
		memset(l->nres_buf, 0, (size_t)n);
		for (int c = s->lo[k], r0 = (int)(((uint64_t)s->lo[k] % (uint64_t)n) * (uint64_t)step % (uint64_t)n);
		    c <= s->hi[k]; c++, r0 = (r0 + step) % n) {
			for (int r = 0; r < n; r++)
				if (l->res[r])
					l->nres_buf[(r + r0) % n] = 1;
			if (c - s->lo[k] >= n)
				break; /* the shifts repeat */
		}
		memcpy(l->res, l->nres_buf, (size_t)n);
		for (int r = 0; r < n; r++)
			all &= l->res[r];
		if (all)
			break;
	}
	/* a waste w is possible where w + placed = 0 (mod dm): w's residue is -placed's */
	for (int r = 0; r < n; r++)
		l->nres_buf[r] = l->res[(n - r) % n];
	for (int r = 0; r < n; r++) {
		int d = 0;

		while (d < n && !l->nres_buf[(r + d) % n])
			d++;
		l->resnext[r] = d < n ? d : -1;
	}
}

/*
 * The best value at level s->lvl a plan of the node can have when bound is
 * an upper bound on it (the bound itself rounded down to a value a plan can
 * take); -1e30 where no plan of the node can reach a value the bound allows.
 */
long double
mig_lattice_round(const struct search *s, long double bound)
{
	const struct mig_lattice *l = s->lat;
	long double b = bound + 1e-14L * s->mag;

	if (!l || b < -1e29L)
		return bound;
	switch (s->lvl) {
	case 1:
		return floorl(b);
	case 2: {
		/* no plan wastes less than w0 (in mu) */
		long double w = ceill(-b * MIG_GIB / (long double)l->mu);
		uint64_t w0 = w <= 0 ? 0 : (uint64_t)w;

		if (l->fixed && l->tnext) {
			uint64_t need = l->placed + w0, t = (need * l->mu + l->dm - 1) / l->dm; /* instance memory, in dm */

			if (t >= (uint64_t)l->nt || l->tnext[t] < 0)
				return -1e30L;
			return -(long double)((uint64_t)l->tnext[t] * l->dm - l->placed * l->mu) / MIG_GIB;
		}
		if (l->nres) {
			int d = l->resnext[w0 % (uint64_t)l->nres];

			if (d < 0)
				return -1e30L;
			w0 += (uint64_t)d;
		}
		return -(long double)(w0 * l->mu) / MIG_GIB;
	}
	case 3:
	case 4: {
		long double v = ceill(-b);
		long m = v <= 0 ? 0 : (long)v, *next = s->lvl == 3 ? l->smnext : l->opnext, n = s->lvl == 3 ? l->nsm : l->nop;

		if (!next)
			return -v;
		if (m >= n || next[m] < 0)
			return -1e30L;
		return -(long double)next[m];
	}
	}
	return bound;
}
