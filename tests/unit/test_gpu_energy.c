/*
 * test_gpu_energy: the energy counter's resolution from its readings, and
 * which windows it trusts (src/gpu/energy.c).
 */
#include "gpu/energy.h"
#include "tap.h"

#include <math.h>

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

/* A counter that moves by step_mj every period_s, read every read_s from t0 for n reads. */
static int
counter(struct gpu_energy_reading *r, int n, double t0, double read_s, double period_s, uint64_t step_mj)
{
	int i;

	for (i = 0; i < n; i++) {
		double t = t0 + i * read_s;

		r[i].t = t;
		r[i].mj = 1000000 + (uint64_t)floor(t / period_s + 1e-9) * step_mj;
	}
	return n;
}

static void
test_step(void)
{
	struct gpu_energy_reading r[400];
	struct gpu_energy_res res;

	/* read every 10 ms, the driver updates every 100 ms by 25 J (250 W) */
	counter(r, 400, 0.005, 0.010, 0.100, 25000);
	ok(gpu_energy_step(r, 400, &res) == 0, "a counter seen moving many times: the period is known");
	is_int(res.step_mj, 25000, "step: the increment of one update");
	ok(near(res.period_s, 0.100), "period: the time between updates (got %g)", res.period_s);
	ok(res.changes >= 38, "every update seen (%d)", res.changes);

	ok(gpu_energy_window_ok(&res, 1.0), "a window of 10 periods is trusted");
	ok(!gpu_energy_window_ok(&res, 0.99), "a window just under 10 periods is not");
	ok(!gpu_energy_window_ok(&res, 0), "an empty window is not");

	/* read slower than the updates: every read sees a change; the period is an upper bound */
	counter(r, 50, 0, 0.250, 0.100, 25000);
	ok(gpu_energy_step(r, 50, &res) == 0 && near(res.period_s, 0.250),
	    "read slower than updated: the period reads as the read interval (%g)", res.period_s);
	ok(res.step_mj >= 50000, "and the step is several updates (%llu)", (unsigned long long)res.step_mj);
}

static void
test_unknown(void)
{
	struct gpu_energy_reading r[20];
	struct gpu_energy_res res;
	int i;

	ok(gpu_energy_step(NULL, 0, &res) == -1 && res.step_mj == 0 && res.period_s == 0,
	    "no readings: nothing known");
	for (i = 0; i < 20; i++)
		r[i] = (struct gpu_energy_reading){i * 0.01, 5000};
	ok(gpu_energy_step(r, 20, &res) == -1 && res.changes == 0, "a counter that never moved: unknown");
	ok(!gpu_energy_window_ok(&res, 1e6), "with the period unknown no window is trusted");
	ok(isnan(gpu_energy_joules(&res, &r[0], &r[19])), "and its joules are unknown, not 0");

	r[10].mj = 6000;
	for (i = 11; i < 20; i++)
		r[i].mj = 6000;
	ok(gpu_energy_step(r, 20, &res) == -1 && res.changes == 1 && res.step_mj == 1000,
	    "one increment: the step is seen, the period is not");
}

static void
test_restart(void)
{
	struct gpu_energy_reading r[6] = {
		{0.0, 9000}, {0.1, 9500}, {0.2, 100}, {0.3, 600}, {0.4, 1100}, {0.5, 1600},
	};
	struct gpu_energy_res res;

	ok(gpu_energy_step(r, 6, &res) == 0 && res.step_mj == 500 && near(res.period_s, 0.1),
	    "a counter that restarts (driver reload) is not read as a huge or negative step");
	res.period_s = 0.01;
	ok(isnan(gpu_energy_joules(&res, &r[1], &r[2])), "a window across the restart is unknown");
	ok(near(gpu_energy_joules(&res, &r[2], &r[5]), 1.5), "a window after it counts (%g J)",
	    gpu_energy_joules(&res, &r[2], &r[5]));
}

static void
test_joules(void)
{
	struct gpu_energy_reading r[400];
	struct gpu_energy_res res;

	counter(r, 400, 0.005, 0.010, 0.100, 25000);
	gpu_energy_step(r, 400, &res);
	/* 50 ms: the counter may or may not have moved; either way the answer is unknown */
	ok(isnan(gpu_energy_joules(&res, &r[0], &r[5])), "a window under one update: unknown (never 0)");
	ok(isnan(gpu_energy_joules(&res, &r[0], &r[50])), "a window of 5 updates: unknown");
	ok(near(gpu_energy_joules(&res, &r[0], &r[200]), 500),
	    "a window of 20 updates: its joules (%g)", gpu_energy_joules(&res, &r[0], &r[200]));
}

static void
test_meter(void)
{
	struct gpu_energy_reading r[2000];
	struct gpu_energy_meter m;
	struct gpu_energy_res a, b;
	int i;

	gpu_energy_meter_init(&m);
	ok(gpu_energy_meter_res(&m, &a) == -1, "an empty meter knows nothing");
	counter(r, 2000, 0.003, 0.010, 0.070, 14000);
	for (i = 0; i < 2000; i++)
		gpu_energy_meter_feed(&m, r[i].t, r[i].mj);
	gpu_energy_meter_feed(&m, r[1999].t, r[1999].mj + 5);  /* same time: ignored */
	ok(m.seen == 2000 && m.n == GPU_ENERGY_KEEP, "the meter keeps a bounded number of readings (%d)", m.n);
	ok(gpu_energy_meter_res(&m, &a) == 0 && gpu_energy_step(r, 2000, &b) == 0,
	    "the meter and the whole series both know the period");
	ok(a.step_mj == b.step_mj && fabs(a.period_s - b.period_s) <= 0.011,
	    "and agree (%llu mJ / %g s against %llu mJ / %g s)", (unsigned long long)a.step_mj, a.period_s,
	    (unsigned long long)b.step_mj, b.period_s);
	ok(m.first.t == r[0].t && m.last.mj == r[1999].mj, "first and last readings are kept");
}

int
main(void)
{
	test_step();
	test_unknown();
	test_restart();
	test_joules();
	test_meter();
	return done_testing();
}
