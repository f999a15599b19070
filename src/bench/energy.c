/*
 * energy: bench's J column, trusted only where the GPU's energy counter is
 * fine enough for it. The counter moves in steps (NVML's every few tens of
 * ms, by many mJ), so a repeat shorter than a few of them can read 0 J
 * while the GPU burned hundreds of watts. Bench reads the counter's
 * resolution once at start (bench_energy_resolution); a repeat's joules
 * stand alone when its window spans GPU_ENERGY_MIN_UPDATES updates
 * (gpu_energy_window_ok). Otherwise the point's work is run once more,
 * lengthened so that one window spans the updates (bench_energy_factor),
 * and its joules over the factor are the J of a repeat's work; that run's
 * time is capped (bench_energy_budget), and where the cap leaves it short,
 * the point's repeats are summed, their joules over their windows together
 * giving the J per repeat; where even the sum is too short, the point has
 * no J (printed -, never 0).
 */
#include "bench/bench.h"
#include "gpu/backend.h"
#include "util/clock.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The resolution is measured for at most this long, reading every READ_S. */
#define RES_MAX_S 3.0
#define RES_READ_S 0.001
/* enough updates seen to stop early */
#define RES_CHANGES 4

int
bench_energy_resolution(struct bench_run *r)
{
	struct gpu_energy_meter m;
	uint64_t mj = 0, prev = 0;
	double t0 = clock_mono(), t;
	int changes = 0, n = 0;

	memset(&r->eres, 0, sizeof r->eres);
	r->eres_ok = 0;
	if (!r->b || !r->b->energy || r->model.on)
		return -1;
	gpu_energy_meter_init(&m);
	while ((t = clock_mono()) - t0 < RES_MAX_S && changes < RES_CHANGES && !bench_interrupted) {
		if (r->b->energy(r->b, r->setup.gpu_index, &mj) < 0) {
			err_clear();
			return -1;
		}
		/* when the counter was read: mid-call (a slow read must not shift it by its length) */
		gpu_energy_meter_feed(&m, (t + clock_mono()) / 2, mj);
		if (n++ > 0 && mj != prev)
			changes++;
		prev = mj;
		nanosleep(&(struct timespec){0, (long)(RES_READ_S * 1e9)}, NULL);
	}
	r->eres_ok = gpu_energy_meter_res(&m, &r->eres) == 0;
	return r->eres_ok ? 0 : -1;
}

void
bench_energy_stats(const struct gpu_energy_res *res, const double *joules, const double *window, int n,
    struct stats *est, int *pooled)
{
	double v[BENCH_MAX_REPEATS], sum_j = 0, sum_w = 0;
	int k = 0, alone = 1;

	*pooled = 0;
	for (int i = 0; i < n && i < BENCH_MAX_REPEATS; i++) {
		if (isnan(joules[i]) || isnan(window[i]))
			continue;
		v[k++] = joules[i];
		sum_j += joules[i];
		sum_w += window[i];
		if (!gpu_energy_window_ok(res, window[i]))
			alone = 0;
	}
	if (k > 0 && alone) {
		stats_of(v, k, est);
		return;
	}
	/* some repeat too short alone: their sum, where it is long enough, shared out evenly */
	if (k > 1 && gpu_energy_window_ok(res, sum_w)) {
		double mean = sum_j / k;

		stats_of(&mean, 1, est);
		*pooled = k;
		return;
	}
	stats_of(NULL, 0, est);
}

/* 1 when every repeat with joules spans enough updates alone (and there is one). */
static int
repeats_alone(const struct gpu_energy_res *res, const struct bench_point *p)
{
	int k = 0;

	for (int i = 0; i < p->nrep && i < BENCH_MAX_REPEATS; i++) {
		if (isnan(p->energy[i]) || isnan(p->ewindow[i]))
			continue;
		if (!gpu_energy_window_ok(res, p->ewindow[i]))
			return 0;
		k++;
	}
	return k > 0;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median time of the repeats that read the counter; NAN none. */
static double
repeat_time(const struct bench_point *p)
{
	double v[BENCH_MAX_REPEATS];
	int k = 0;

	for (int i = 0; i < p->nrep && i < BENCH_MAX_REPEATS; i++)
		if (!isnan(p->energy[i]) && p->elapsed[i] > 0)
			v[k++] = p->elapsed[i];
	if (k == 0)
		return NAN;
	qsort(v, (size_t)k, sizeof v[0], cmp_dbl);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

static int
long_ok(const struct gpu_energy_res *res, const struct bench_point *p)
{
	return p->elong > 0 && !isnan(p->elong_j) && p->elong_j >= 0 &&
	    gpu_energy_window_ok(res, p->elong_window);
}

int
bench_energy_factor(const struct gpu_energy_res *res, const struct bench_point *p, double budget_s,
    double *plan_s)
{
	double need, unit, k;

	*plan_s = 0;
	if (!res || !(res->period_s > 0) || p->nrep == 0 || repeats_alone(res, p) || long_ok(res, p))
		return 0;
	unit = repeat_time(p);  /* NAN: no repeat read the counter */
	if (p->elong > 0) {
		/* a lengthened run fell short: its own window says how long the work takes */
		if (isnan(p->elong_j) || !(p->elong_window > 0) || p->elong_window < p->elong_plan / 2)
			return 0;
		unit = p->elong_window / p->elong;
	}
	if (!(unit > 0))
		return 0;
	need = BENCH_ENERGY_AIM * GPU_ENERGY_MIN_UPDATES * res->period_s;
	k = ceil(need / unit);
	if (p->elong > 0 && k <= p->elong)
		k = p->elong + 1;
	if (k * unit > budget_s || k > 1e6)
		return 0;
	*plan_s = k * unit;
	return (int)k;
}

double
bench_energy_budget(const struct bench_config *c)
{
	return BENCH_ENERGY_GROW * c->repeats * c->target_s;
}

void
bench_energy_point(const struct gpu_energy_res *res, struct bench_point *p)
{
	bench_energy_stats(res, p->energy, p->ewindow, p->nrep, &p->est, &p->epooled);
	if (repeats_alone(res, p) || !long_ok(res, p))
		return;
	double j = p->elong_j / p->elong;

	stats_of(&j, 1, &p->est);
	p->epooled = 0;
}
