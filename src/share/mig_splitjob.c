/*
 * mig_splitjob: the split DP (mig_split.c) beside the rest of the proof,
 * on a thread of its own (doc/mig.md, "The split DP").
 *
 * Once level 1 is proven, the split DP and the DP over units with the
 * branch and price (mig_prove.c) are two searches with budgets of their
 * own, on a copy of the search each: the split DP's copy shares the
 * read-only parts (GPUs, tables, classes) and has its own plan buffers,
 * and it starts from the best plan at that point. Their results are merged
 * by a rule that does not look at the clock: where the rest proves its
 * plan optimal, that plan stands (and the split DP, no longer needed, is
 * stopped); else where the split DP proved, its plan (the optimum) stands,
 * proven; else the rest's plan and bounds. So the plan, its proof and the
 * work reported are the same with one core or two (mig_split_serial runs
 * the split DP first, to its end, on the calling thread); two cores only
 * take less time: the 2-core machine the bench runs on plans in the time
 * of the slower search, not of both.
 */
#include "share/mig.h"
#include "share/mig_int.h"
#include "util/str.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct mig_split_job {
	struct search c;              /* the split DP's view of the search */
	long limit;
	int ret;                      /* mig_split_run's, once joined */
	int threaded;
	pthread_t th;
	atomic_int stop;
};

int mig_split_serial;

static void *
job_main(void *arg)
{
	struct mig_split_job *job = arg;

	job->ret = mig_split_run(&job->c, job->limit);
	return NULL;
}

/* Loads ld[] with their counts in buf (nk per slot), copied from src/srcbuf. */
static void
loads_copy(const struct search *s, struct load *ld, int *buf, const struct load *src, const int *srcbuf)
{
	size_t nk = (size_t)s->nk + 1;

	memcpy(buf, srcbuf, sizeof *buf * (size_t)s->ngpus * MIG_MAX_INST * nk);
	for (int j = 0; j < s->ngpus; j++) {
		ld[j] = src[j];
		for (int i = 0; i < MIG_MAX_INST; i++)
			ld[j].slot[i].cnt = buf + ((size_t)j * MIG_MAX_INST + (size_t)i) * nk;
	}
}

void
mig_split_start(struct search *s, long limit)
{
	struct mig_split_job *job;
	size_t nk = (size_t)s->nk + 1, slots = (size_t)s->ngpus * MIG_MAX_INST;

	if (s->split_job || mig_split_disabled || !s->have)
		return;
	job = xcalloc(1, sizeof *job);
	job->c = *s;
	job->c.cur = xcalloc((size_t)s->ngpus + 1, sizeof *job->c.cur);
	job->c.best = xcalloc((size_t)s->ngpus + 1, sizeof *job->c.best);
	job->c.cntbuf = xcalloc(slots * nk, sizeof *job->c.cntbuf);
	job->c.bestbuf = xcalloc(slots * nk, sizeof *job->c.bestbuf);
	loads_copy(s, job->c.cur, job->c.cntbuf, s->cur, s->cntbuf);
	loads_copy(s, job->c.best, job->c.bestbuf, s->best, s->bestbuf);
	job->c.rem = xcalloc(nk, sizeof *job->c.rem);
	job->c.lo = xcalloc(nk, sizeof *job->c.lo);
	job->c.hi = xcalloc(nk, sizeof *job->c.hi);
	memcpy(job->c.lo, s->lo, sizeof *s->lo * (size_t)s->nk);
	memcpy(job->c.hi, s->hi, sizeof *s->hi * (size_t)s->nk);
	/* what the rest goes on writing: not the split DP's (it uses none of it) */
	job->c.dp_lp_prices = NULL;
	job->c.dp_moves = NULL;
	job->c.dp_saved = NULL;
	job->c.dp_mt = NULL;
	job->c.nodes = 0;
	job->c.split_job = NULL;
	job->c.split_stop = &job->stop;
	job->limit = limit;
	atomic_init(&job->stop, 0);
	s->split_job = job;
	job->threaded = !mig_split_serial && pthread_create(&job->th, NULL, job_main, job) == 0;
	if (!job->threaded)
		job_main(job);
}

int
mig_split_join(struct search *s, int proven)
{
	struct mig_split_job *job = s->split_job;
	int took = 0;

	if (!job)
		return 0;
	if (job->threaded) {
		if (proven)
			atomic_store(&job->stop, 1);
		pthread_join(job->th, NULL);
	}
	if (!proven) {
		/* its whole run counts (its end did not depend on the rest's) */
		s->nodes += job->c.nodes;
		if (job->ret == 1) {
			took = 1;
			if (mig_score_better(&job->c.bs, &s->bs)) {
				loads_copy(s, s->best, s->bestbuf, job->c.best, job->c.bestbuf);
				s->bs = job->c.bs;
				s->have = 1;
			}
		}
	}
	free(job->c.cur);
	free(job->c.best);
	free(job->c.cntbuf);
	free(job->c.bestbuf);
	free(job->c.rem);
	free(job->c.lo);
	free(job->c.hi);
	free(job);
	s->split_job = NULL;
	return took;
}
