/*
 * test_bench_energy: bench's J (src/bench/energy.c) and the fewest-joules
 * line (src/bench/recommend.c). A repeat's J stands alone only where its
 * window spans GPU_ENERGY_MIN_UPDATES counter updates; else the repeats are
 * summed; else there is no J (never 0). A mode is named for the fewest
 * joules only when its J is below every other's by more than the spread.
 */
#include "bench/bench.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a counter that updates every 100 ms */
static const struct gpu_energy_res RES = {.step_mj = 70000, .period_s = 0.1, .changes = 5};

static void
test_stats(void)
{
	struct gpu_energy_res none = {0};
	struct stats est;
	int pooled;
	double j[3] = {100, 110, 120}, w_long[3] = {1.0, 1.1, 1.2}, w_short[3] = {0.4, 0.4, 0.4};
	double w_tiny[3] = {0.1, 0.1, 0.1}, zero[3] = {0, 0, 0}, nan3[3] = {NAN, NAN, NAN};

	bench_energy_stats(&RES, j, w_long, 3, &est, &pooled);
	ok(est.n == 3 && est.median == 110 && !pooled, "every window >= 10 updates: the median of the repeats");
	bench_energy_stats(&RES, j, w_short, 3, &est, &pooled);
	ok(est.n == 1 && fabs(est.median - 110) < 1e-9 && pooled == 3,
	    "each 4 updates, 12 together: the repeats summed, their mean (%g, %d summed)", est.median, pooled);
	bench_energy_stats(&RES, zero, w_tiny, 3, &est, &pooled);
	ok(est.n == 0 && isnan(est.median), "3 updates in all: no J, not 0");
	w_short[1] = 1.0;
	bench_energy_stats(&RES, j, w_short, 3, &est, &pooled);
	ok(est.n == 1 && pooled == 3, "one repeat short: all are summed (no median over mixed windows)");
	bench_energy_stats(&none, j, w_long, 3, &est, &pooled);
	ok(est.n == 0, "resolution unknown: nothing trusted");
	bench_energy_stats(&RES, nan3, w_long, 3, &est, &pooled);
	ok(est.n == 0, "no counter: no J");
	bench_energy_stats(&RES, j, w_short, 1, &est, &pooled);
	ok(est.n == 0, "one short repeat: nothing to sum it with, no J");
	/* the window exactly 10 updates long is enough; just under is not */
	double one[1] = {50}, w10[1] = {1.0}, w9[1] = {0.99};
	bench_energy_stats(&RES, one, w10, 1, &est, &pooled);
	ok(est.n == 1 && est.median == 50, "exactly 10 updates: trusted");
	bench_energy_stats(&RES, one, w9, 1, &est, &pooled);
	ok(est.n == 0, "9.9 updates: not");
}

static void
ex_init(struct bench_exercise *e)
{
	memset(e, 0, sizeof *e);
	e->id = EX_MATMUL;
	e->name = "matmul";
	e->unit = "TFLOP/s";
	e->modes = 1u << BM_TIMESLICE | 1u << BM_MPS | 1u << BM_BATCHED;
	e->nsizes = 1;
	e->sizes[0] = 512;
}

/* a point: times spread tspread around 10 TFLOP/s, joules j[0..n-1] (NAN: none) each over win s */
static void
put(struct bench_exercise *e, int mode, int procs, double tspread, const double *j, int n, double win)
{
	struct bench_point *p = bench_point_add(e, 512, mode, procs);
	int pooled;

	for (int i = 0; i < n; i++) {
		p->value[i] = 10 * (1 + tspread * (i - (n - 1) / 2.0) / (n > 1 ? n - 1 : 1));
		p->energy[i] = j[i];
		p->ewindow[i] = win;
	}
	p->nrep = n;
	stats_of(p->value, n, &p->st);
	bench_energy_stats(&RES, p->energy, p->ewindow, n, &p->est, &pooled);
	p->epooled = pooled;
}

static void
test_recommend(void)
{
	struct bench_exercise e;
	struct bench_rec r;
	double a[3] = {100, 101, 102}, b[3] = {150, 151, 152}, c[3] = {101.5, 102.5, 103.5};
	double zero[3] = {0, 0, 0};

	ex_init(&e);
	put(&e, BM_TIMESLICE, 1, 0.02, b, 3, 2.0);
	put(&e, BM_MPS, 2, 0.02, a, 3, 2.0);
	bench_recommend(&e, 512, &r);
	ok(r.energy_clear && r.energy_mode == BM_MPS && r.energy_procs == 2 && r.energy == 101,
	    "101 J against 151 J, spreads 2%%: mps P=2 named");
	put(&e, BM_BATCHED, 2, 0.02, c, 3, 2.0);
	bench_recommend(&e, 512, &r);
	ok(!r.energy_clear && r.energy_mode == BM_MPS && r.energy_next_mode == BM_BATCHED,
	    "101 J against 102.5 J with a 2%% spread: none clearly lower (spread %.1f%%)", 100 * r.energy_spread);
	free(e.pts);

	/* the case: repeats shorter than the counter read 0 J; they never win */
	ex_init(&e);
	put(&e, BM_TIMESLICE, 1, 0.02, b, 3, 2.0);
	put(&e, BM_MPS, 2, 0.02, zero, 3, 0.05);
	bench_recommend(&e, 512, &r);
	ok(r.energy_mode == BM_TIMESLICE && isnan(r.energy_next) && !r.energy_clear,
	    "0 J over windows under the resolution: no J; the only one with joules is not called lower");
	free(e.pts);

	/* summed repeats are one figure: the time's spread stands for theirs */
	ex_init(&e);
	put(&e, BM_TIMESLICE, 1, 0.60, b, 3, 0.5);
	put(&e, BM_MPS, 2, 0.02, a, 3, 0.5);
	bench_recommend(&e, 512, &r);
	ok(!r.energy_clear && fabs(r.energy_spread - 0.60) < 1e-9,
	    "summed: 101 J against 151 J with a 60%% time spread is not clear (spread %.2f)", r.energy_spread);
	free(e.pts);
	ex_init(&e);
	put(&e, BM_TIMESLICE, 1, 0.10, b, 3, 0.5);
	put(&e, BM_MPS, 2, 0.02, a, 3, 0.5);
	bench_recommend(&e, 512, &r);
	ok(r.energy_clear && r.energy_mode == BM_MPS, "summed: 101 J against 151 J with a 10%% spread is");
	free(e.pts);

	/* property: a named mode's J is below every other by more than the larger spread */
	srand(7);
	int bad = 0;
	for (int k = 0; k < 2000; k++) {
		ex_init(&e);
		for (int m = 0; m < 3; m++) {
			int mode = m == 0 ? BM_TIMESLICE : m == 1 ? BM_MPS : BM_BATCHED;
			double base = 50 + rand() % 100, sp = (rand() % 20) / 100.0, j[3];
			double win = rand() % 2 ? 2.0 : 0.5;

			for (int i = 0; i < 3; i++)
				j[i] = base * (1 + sp * (i - 1) / 2);
			put(&e, mode, 2, (rand() % 20) / 100.0, j, 3, win);
		}
		bench_recommend(&e, 512, &r);
		for (int i = 0; r.energy_clear && i < e.npts; i++) {
			const struct bench_point *p = &e.pts[i];
			double s;

			const struct bench_point *l = bench_point_get(&e, 512, r.energy_mode, r.energy_procs);

			if (p == l)
				continue;
			s = fmax(p->est.n > 1 ? p->est.spread : p->st.spread, l->est.n > 1 ? l->est.spread : l->st.spread);
			if (p->est.median - r.energy <= s * r.energy)
				bad++;
		}
		if (isnan(r.energy) || r.energy <= 0)
			bad++;
		free(e.pts);
	}
	ok(bad == 0, "2000 random exercises: a named mode is lower than every other by more than its spread (%d bad)",
	    bad);
}

/* a point of 3 repeats, each elapsed ela s over a window of win s, with j joules each */
static void
short_point(struct bench_point *p, double ela, double win, double j)
{
	memset(p, 0, sizeof *p);
	p->nrep = 3;
	for (int i = 0; i < BENCH_MAX_REPEATS; i++)
		p->energy[i] = p->ewindow[i] = NAN;
	for (int i = 0; i < 3; i++) {
		p->value[i] = 10;
		p->elapsed[i] = ela;
		p->ewindow[i] = win;
		p->energy[i] = j;
	}
	p->elong_j = p->elong_window = NAN;
}

/*
 * Lengthened runs: a point whose repeats are each too short for the
 * counter runs its work k times over, so that one window spans the updates
 * a J needs (10 x 100 ms, aimed 10% above: 1.1 s), within the budget.
 */
static void
test_lengthen(void)
{
	struct bench_config c;
	struct bench_point p;
	struct gpu_energy_res none = {0};
	double plan, budget;
	int k;

	bench_config_defaults(&c, 1);
	budget = bench_energy_budget(&c);
	ok(fabs(budget - BENCH_ENERGY_GROW * 3 * 0.12) < 1e-9, "--quick: a point's lengthened runs get %g s",
	    budget);

	/* 0.12 s repeats: x10 is 1.2 s, the first k whose time reaches 1.1 s */
	short_point(&p, 0.12, 0.121, 8);
	k = bench_energy_factor(&RES, &p, budget, &plan);
	ok(k == 10 && fabs(plan - 1.2) < 1e-9, "0.12 s repeats, a 100 ms counter: x10, 1.2 s (%d, %g s)", k, plan);
	bench_energy_point(&RES, &p);
	ok(p.est.n == 0, "before it runs: no J (0.363 s summed is too short)");
	/* its run: 80 J over 1.21 s, 10 times the work: 8 J a repeat's work */
	p.elong = k;
	p.elong_j = 80;
	p.elong_window = 1.21;
	bench_energy_point(&RES, &p);
	ok(p.est.n == 1 && fabs(p.est.median - 8) < 1e-9 && p.epooled == 0,
	    "the lengthened run's J over its factor: 8 J, not summed (%g, %d)", p.est.median, p.epooled);
	ok(bench_energy_factor(&RES, &p, budget - 1.21, &plan) == 0, "long enough: no further run");

	/* a run that fell short (the work went faster than said): again, longer, from its own window */
	p.elong_plan = 1.2;
	p.elong_window = 0.95;
	bench_energy_point(&RES, &p);
	ok(p.est.n == 0 && isnan(p.est.median), "a lengthened run under 10 updates is not trusted: no J, not 0");
	k = bench_energy_factor(&RES, &p, 10, &plan);
	ok(k == 12 && plan > 1.1, "short by 0.05 s: x12 from its window (0.095 s a repeat's work): %d, %g s", k, plan);
	ok(bench_energy_factor(&RES, &p, 1.0, &plan) == 0 && plan == 0, "beyond what is left of the budget: none");
	p.elong_window = 0.55;
	ok(bench_energy_factor(&RES, &p, 10, &plan) == 0,
	    "a run that took under half its plan: its time does not follow its work, not again");
	p.elong_window = 0.95;

	/* the cap too small: no run, and the J stays - (never 0) */
	short_point(&p, 0.03, 0.031, 2);
	ok(bench_energy_factor(&RES, &p, 1.0, &plan) == 0, "0.03 s repeats, a budget of 1 s: x37 is 1.11 s, too long");
	bench_energy_point(&RES, &p);
	ok(p.est.n == 0 && isnan(p.est.median), "no lengthened run, 0.093 s summed: no J, not 0");

	/* repeats each long enough: nothing to lengthen; their median is the J */
	short_point(&p, 1.2, 1.2, 80);
	ok(bench_energy_factor(&RES, &p, budget, &plan) == 0, "1.2 s repeats: nothing to lengthen");
	bench_energy_point(&RES, &p);
	ok(p.est.n == 3 && p.est.median == 80, "their median");

	/* nothing to lengthen for */
	short_point(&p, 0.12, 0.121, 8);
	ok(bench_energy_factor(&none, &p, budget, &plan) == 0, "resolution unknown: no run");
	for (int i = 0; i < 3; i++)
		p.energy[i] = NAN;
	ok(bench_energy_factor(&RES, &p, budget, &plan) == 0, "no counter read: no run");
	short_point(&p, 0.12, 0.121, 8);
	p.elong = 10;
	p.elong_window = 1.2;
	ok(bench_energy_factor(&RES, &p, budget, &plan) == 0, "a lengthened run that read no joules: not again");
	p.elong_j = 80;
	p.elong_plan = 0.9;
	p.elong_window = 0.5;
	k = bench_energy_factor(&RES, &p, 100, &plan);
	ok(k > 10, "a further run is always longer than the last (%d)", k);
}

int
main(void)
{
	test_stats();
	test_recommend();
	test_lengthen();
	return done_testing();
}
