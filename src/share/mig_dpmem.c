/*
 * mig_dpmem: the DP's bounds by the rows' instance memory (mig_dp.c; doc/mig.md,
 * "The DP over the GPUs"). Not an API.
 */
#include "share/mig.h"
#include "share/mig_dp.h"
#include "util/str.h"

#include <limits.h>
#include <stdint.h>
#ifdef MIG_TRACE
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

int mig_dp_no_memtab;

/*
 * What any GPUs j.. can have, by the instance memory of their rows: a plan
 * places its units in instances whose memory is at least theirs, and wastes
 * the difference; so the memory the GPUs still to come give their rows is
 * at least the least their units can ask for, and for a plan no worse in
 * waste than the best one, at most the most they can ask for plus the waste
 * still allowed. Over rows only (which units, ignored), tabulated once per
 * search: the memory totals some rows of GPUs j.. reach, and the fewest SMs
 * such rows have (dm: the profiles' gcd; M: the most in all).
 */
#define MT_MAX (1L << 16)   /* the most memory totals kept (in dm); beyond, no table */
#define MT_WINDOW 512       /* the widest range of totals (in dm) a state's SM bound looks through */

struct mig_memtab {
	uint64_t dm;
	long M;
	int *sms;                     /* [j * (M + 1) + m]: the fewest SMs of rows of GPUs j.. with m dm of instances; INT_MAX: none */
	long *next;                   /* [j * (M + 1) + m]: the least reachable total >= m, -1 none */
	uint64_t *kmin, *kmax;        /* [k]: class k's memory, least and most over the GPUs */
	int *upord, *downord;         /* classes by kmin ascending, by kmax descending */
};

void
mig_dp_memtab_free(struct search *s)
{
	struct mig_memtab *t = s->dp_mt;

	if (!t)
		return;
	free(t->sms);
	free(t->next);
	free(t->kmin);
	free(t->upord);
	free(t);
	s->dp_mt = NULL;
}

struct mig_memtab *
mig_dp_memtab(struct search *s, long *work)
{
	struct mig_memtab *t;
	uint64_t dm = 0, top = 0;
	int G = s->ngpus, nk = s->nk;
	long M;

	if (s->dp_mt)
		return s->dp_mt;
	for (int j = 0; j < G; j++) {
		uint64_t most = 0;

		for (int p = 0; p < s->sg[j].g->nprofiles; p++) {
			dm = mig_gcd64(dm, s->sg[j].g->profiles[p].mem_bytes);
			most = s->sg[j].g->profiles[p].mem_bytes > most ? s->sg[j].g->profiles[p].mem_bytes : most;
		}
		top += most * 7;
	}
	if (!dm || top / dm > (uint64_t)MT_MAX)
		return NULL;
	t = xcalloc(1, sizeof *t);
	t->dm = dm;
	/* the rows' memory: the largest row holds at most 7 instances of the largest profile */
	M = 0;
	for (int j = 0; j < G; j++) {
		const struct gtable *tb = s->sg[j].t;
		long most = 0;

		for (size_t r = 0; r < tb->ngeo; r++) {
			uint64_t mem = 0;

			for (int p = 0; p < s->sg[j].g->nprofiles; p++)
				mem += (tb->geo[r].key >> (4 * p) & 15) * s->sg[j].g->profiles[p].mem_bytes;
			most = (long)(mem / dm) > most ? (long)(mem / dm) : most;
		}
		M += most;
	}
	t->M = M;
	t->sms = xcalloc((size_t)(G + 1) * (size_t)(M + 1), sizeof *t->sms);
	t->next = xcalloc((size_t)(G + 1) * (size_t)(M + 1), sizeof *t->next);
	int *row = xcalloc((size_t)M + 1, sizeof *row);   /* one GPU's fewest SMs per memory */

	/* GPU by GPU from the last, over the totals reached so far only (they are few: dm is small) */
	long *reach = xcalloc((size_t)M + 1, sizeof *reach), nreach = 1, *nreach_buf = xcalloc((size_t)M + 1, sizeof *nreach_buf);
	long *rmem = xcalloc((size_t)M + 1, sizeof *rmem), nrow;

	for (long m = 0; m <= M; m++)
		t->sms[(size_t)G * (size_t)(M + 1) + (size_t)m] = m ? INT_MAX : 0;
	reach[0] = 0;
	for (int j = G - 1; j >= 0; j--) {
		const struct gtable *tb = s->sg[j].t;
		int *cur = t->sms + (size_t)j * (size_t)(M + 1), *nx = cur + M + 1;
		long n2 = 0;

		for (long m = 0; m <= M; m++)
			row[m] = m ? INT_MAX : 0;         /* the empty row */
		for (size_t r = 0; r < tb->ngeo; r++) {
			uint64_t mem = 0;
			int sms = 0;

			for (int p = 0; p < s->sg[j].g->nprofiles; p++) {
				uint64_t c = tb->geo[r].key >> (4 * p) & 15;

				mem += c * s->sg[j].g->profiles[p].mem_bytes;
				sms += (int)c * s->sg[j].g->profiles[p].sms;
			}
			if (sms < row[mem / dm])
				row[mem / dm] = sms;
		}
		nrow = 0;
		for (long a = 0; a <= M; a++)
			if (row[a] != INT_MAX)
				rmem[nrow++] = a;
		for (long m = 0; m <= M; m++)
			cur[m] = INT_MAX;
		for (long i = 0; i < nreach; i++)
			for (long q = 0; q < nrow; q++) {
				long m = reach[i], a = rmem[q];

				if (m + a > M)
					break;
				if (cur[m + a] == INT_MAX)
					nreach_buf[n2++] = m + a;
				if (nx[m] + row[a] < cur[m + a])
					cur[m + a] = nx[m] + row[a];
			}
		*work += (nreach * nrow + (long)tb->ngeo + M) / 16 + 1;
		memcpy(reach, nreach_buf, sizeof *reach * (size_t)n2);
		nreach = n2;
	}
	for (int j = 0; j <= G; j++) {
		const int *cur = t->sms + (size_t)j * (size_t)(M + 1);
		long *nt = t->next + (size_t)j * (size_t)(M + 1), n = -1;

		for (long m = M; m >= 0; m--) {
			if (cur[m] != INT_MAX)
				n = m;
			nt[m] = n;
		}
	}
	free(reach);
	free(nreach_buf);
	free(rmem);
	free(row);
	t->kmin = xcalloc((size_t)nk * 2 + 1, sizeof *t->kmin);
	t->kmax = t->kmin + nk;
	t->upord = xcalloc((size_t)nk * 2 + 1, sizeof *t->upord);
	t->downord = t->upord + nk;
	for (int k = 0; k < nk; k++) {
		t->kmin[k] = UINT64_MAX;
		for (int j = 0; j < G; j++) {
			uint64_t m = s->sg[j].mem[k];

			t->kmin[k] = m < t->kmin[k] ? m : t->kmin[k];
			t->kmax[k] = m > t->kmax[k] ? m : t->kmax[k];
		}
		t->upord[k] = t->downord[k] = k;
	}
	mig_order_by(t->upord, t->kmin, nk, 0);
	mig_order_by(t->downord, t->kmax, nk, 1);
	s->dp_mt = t;
#ifdef MIG_TRACE
	fprintf(stderr, "memtab: dm %llu M %ld\n", (unsigned long long)dm, M);
#endif
	return t;
}

/* The memory of `need` of the units left[], taking classes in order ord by size sz. */
static uint64_t
mem_of(const int *left, int need, int nk, const uint64_t *sz, const int *ord)
{
	uint64_t sum = 0;

	for (int i = 0; i < nk && need > 0; i++) {
		int k = ord[i], c = left[k] < need ? left[k] : need;

		sum += (uint64_t)c * sz[k];
		need -= c;
	}
	return sum;
}

/*
 * The memory bounds on GPUs j.. for a state of waste `waste` whose units
 * left[] need `need` more: *lw raised to the least waste their rows allow,
 * *ls to the fewest SMs of rows within the waste still allowed. 0: no row
 * of theirs can hold the memory their units ask for, or none within the
 * waste allowed (no plan through it is better).
 */
long mig_dp_memtab_cut;

int
mig_dp_by_memory(const struct dp *d, const int *left, int need, int j, uint64_t waste, uint64_t *lw, uint64_t *ls)
{
	const struct mig_memtab *t = d->mt;
	uint64_t pmin, pmax, dm;
	long lo, hi, m0, M;

	if (!t)
		return 1;
	dm = t->dm;
	M = t->M;
	pmin = mem_of(left, need, d->vc.nk, t->kmin, t->upord);
	pmax = mem_of(left, need, d->vc.nk, t->kmax, t->downord);
	lo = (long)((pmin + dm - 1) / dm);
	if (lo > M || (m0 = t->next[(size_t)j * (size_t)(M + 1) + (size_t)lo]) < 0) {
		mig_dp_memtab_cut++;
		return 0;
	}
	if ((uint64_t)m0 * dm > pmax && (uint64_t)m0 * dm - pmax > *lw) {
		*lw = (uint64_t)m0 * dm - pmax;
		mig_dp_memtab_cut++;
	}
	if (waste > d->inc.waste)
		return 1;
	hi = (long)((d->inc.waste - waste + pmax) / dm);
	hi = hi < M ? hi : M;
	if (m0 > hi) {
		mig_dp_memtab_cut++;
		return 0;
	}
	if (hi - m0 <= MT_WINDOW) {
		const int *sm = t->sms + (size_t)j * (size_t)(M + 1);
		int least = INT_MAX;

		const long *nt = t->next + (size_t)j * (size_t)(M + 1);

		for (long m = m0; m >= 0 && m <= hi; m = m < M ? nt[m + 1] : -1)
			least = sm[m] < least ? sm[m] : least;
		if (least != INT_MAX && (uint64_t)least * 1024 > *ls) {
			*ls = (uint64_t)least * 1024;
			mig_dp_memtab_cut++;
		}
	}
	return 1;
}
