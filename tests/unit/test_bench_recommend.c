/*
 * test_bench_recommend: the recommendation from medians (src/bench/recommend.c)
 * and the point look-ups it relies on (src/bench/bench.c): never more than 2%
 * below the best point, the simpler one among those, gains computed from the
 * right baselines.
 */
#include "bench/bench.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
ex_init(struct bench_exercise *e, unsigned modes)
{
	memset(e, 0, sizeof *e);
	e->pts = NULL;
	e->id = EX_MATMUL;
	e->name = "matmul";
	e->unit = "TFLOP/s";
	e->modes = modes;
	e->nsizes = 1;
	e->sizes[0] = 512;
}

static void
put(struct bench_exercise *e, int mode, int procs, double median)
{
	struct bench_point *p = bench_point_add(e, 512, mode, procs);
	double v[3] = {median * 0.99, median, median * 1.01};

	memcpy(p->value, v, sizeof v);
	p->nrep = 3;
	stats_of(p->value, p->nrep, &p->st);
}

static const unsigned ALL = 1u << BM_TIMESLICE | 1u << BM_MPS | 1u << BM_STREAMS | 1u << BM_BATCHED;

static void
test_cases(void)
{
	struct bench_exercise e;
	struct bench_rec r;

	ex_init(&e, ALL);
	bench_recommend(&e, 512, &r);
	ok(!r.valid, "nothing measured: no recommendation");

	put(&e, BM_TIMESLICE, 1, 10);
	put(&e, BM_TIMESLICE, 4, 9);
	put(&e, BM_MPS, 1, 10);
	put(&e, BM_MPS, 4, 30);
	put(&e, BM_BATCHED, 4, 30.5);
	put(&e, BM_STREAMS, 4, 25);
	bench_recommend(&e, 512, &r);
	ok(r.valid, "a recommendation");
	ok(r.mode == BM_MPS && r.procs == 4, "mps P=4 within 2%% of batched P=4 is simpler: %s P=%d",
	    bench_mode_name(r.mode), r.procs);
	ok(r.best_mode == BM_BATCHED && r.best_procs == 4 && r.best == 30.5, "best is reported");
	ok(fabs(r.gain_one - 3.0) < 1e-9, "gain over one process: 30 / 10");
	ok(fabs(r.gain_timeslice - 30.0 / 9) < 1e-9, "gain over time-slicing at the same P");

	/* now batched is 5% better: the simpler one no longer qualifies */
	for (int i = 0; i < 3; i++)
		e.pts[4].value[i] = 31.5;
	stats_of(e.pts[4].value, 3, &e.pts[4].st);
	bench_recommend(&e, 512, &r);
	ok(r.mode == BM_BATCHED && r.procs == 4, "5%% better wins over simpler");
	ok(r.value == r.best, "the recommendation is the best then");

	/* P=1 within 2% of everything: one process is the answer */
	free(e.pts);
	ex_init(&e, ALL);
	put(&e, BM_TIMESLICE, 1, 50);
	put(&e, BM_MPS, 1, 50.2);
	put(&e, BM_MPS, 2, 50.5);
	put(&e, BM_BATCHED, 2, 50.9);
	bench_recommend(&e, 512, &r);
	ok(r.mode == BM_TIMESLICE && r.procs == 1, "a saturated GPU: one process, no sharing");
	ok(fabs(r.gain_one - 1) < 1e-12, "its gain over one process is 1");

	/* fewer processes beat a simpler mode at more */
	free(e.pts);
	ex_init(&e, ALL);
	put(&e, BM_TIMESLICE, 1, 10);
	put(&e, BM_TIMESLICE, 8, 40);
	put(&e, BM_MPS, 2, 40.2);
	bench_recommend(&e, 512, &r);
	ok(r.mode == BM_MPS && r.procs == 2, "mps P=2 before timeslice P=8 when equal");

	/* a failed point (no repeats) is never recommended */
	free(e.pts);
	ex_init(&e, ALL);
	put(&e, BM_TIMESLICE, 1, 10);
	bench_point_add(&e, 512, BM_MPS, 2);
	bench_recommend(&e, 512, &r);
	ok(r.valid && r.mode == BM_TIMESLICE, "a point without repeats is skipped");

	/* another size's points are not mixed in */
	free(e.pts);
	ex_init(&e, ALL);
	put(&e, BM_TIMESLICE, 1, 10);
	{
		struct bench_point *p = bench_point_add(&e, 4096, BM_MPS, 2);

		p->value[0] = 1000;
		p->nrep = 1;
		stats_of(p->value, 1, &p->st);
	}
	bench_recommend(&e, 512, &r);
	ok(r.mode == BM_TIMESLICE && r.value == 10, "only the size asked about counts");
	free(e.pts);
}

static void
test_aliases(void)
{
	struct bench_exercise e;

	ex_init(&e, ALL);
	put(&e, BM_TIMESLICE, 1, 10);
	put(&e, BM_MPS, 1, 11);
	ok(bench_point_get(&e, 512, BM_BATCHED, 1) == &e.pts[0], "batched at P=1 is one process");
	ok(bench_point_get(&e, 512, BM_STREAMS, 1) == &e.pts[0], "streams at P=1 is one process");
	ok(bench_point_get(&e, 512, BM_MPS_CAPPED, 1) == &e.pts[1], "capped at 100%% is uncapped");
	ok(bench_point_get(&e, 512, BM_MPS, 2) == NULL, "unmeasured is NULL");
	ok(fabs(bench_limit(&e, 512, 1) - 10) < 1e-12, "the limit at P=1 is one process");
	put(&e, BM_BATCHED, 2, 30);
	put(&e, BM_STREAMS, 2, 33);
	ok(fabs(bench_limit(&e, 512, 2) - 33) < 1e-12, "the limit is the better of batched and streams");
	e.modes = 1u << BM_TIMESLICE | 1u << BM_MPS;
	ok(isnan(bench_limit(&e, 512, 2)), "no limit where no single-process mode is measured");
	free(e.pts);
	ok(bench_mode_parse("mps") == BM_MPS && bench_mode_parse("batched") == BM_BATCHED,
	    "mode names parse");
	ok(bench_mode_parse("MPS") < 0 && bench_mode_parse("") < 0, "unknown modes do not");
}

/* Random medians: the pick is always >= 98% of the best, and no simpler point also is. */
static void
test_property(void)
{
	static const int procs[] = {1, 2, 4, 8, 16};
	int bad = 0;

	srand(42);
	for (int round = 0; round < 2000; round++) {
		struct bench_exercise e;
		struct bench_rec r;

		ex_init(&e, ALL);
		for (int m = 0; m < BM_MPS_CAPPED; m++)
			for (int i = 0; i < 5; i++)
				if ((procs[i] > 1 || m <= BM_MPS) && rand() % 4)
					put(&e, m, procs[i], 1 + rand() % 1000 / 10.0);
		if (!bench_point_get(&e, 512, BM_TIMESLICE, 1))
			put(&e, BM_TIMESLICE, 1, 5);
		bench_recommend(&e, 512, &r);
		if (!r.valid || r.value < r.best * 0.98 || r.value < r.best * 0.95)
			bad++;
		for (int i = 0; i < e.npts; i++)
			if (e.pts[i].st.median >= r.best * 0.98 && e.pts[i].procs < r.procs)
				bad++;
		free(e.pts);
	}
	ok(bad == 0, "2000 random exercises: always within 2%% of the best, fewest processes (%d bad)",
	    bad);
}

int
main(void)
{
	test_cases();
	test_aliases();
	test_property();
	return done_testing();
}
