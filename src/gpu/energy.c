/*
 * energy: the energy counter's resolution from its readings (see energy.h).
 * The step is the smallest increment seen between two reads; the period is
 * the median time between the reads where the counter moved. Read faster
 * than the driver updates it, that is the update period; read slower, every
 * read sees a change and the median is the read interval, an upper bound:
 * windows are then judged more strictly, never less.
 */
#include "gpu/energy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
gpu_energy_step(const struct gpu_energy_reading *r, int n, struct gpu_energy_res *res)
{
	double gaps[GPU_ENERGY_KEEP * 2];
	int ngaps = 0, i;
	double last_change = NAN;

	memset(res, 0, sizeof(*res));
	for (i = 1; i < n; i++) {
		if (r[i].mj < r[i - 1].mj) {
			/* the counter restarted: what came before says nothing about the times after */
			last_change = NAN;
			continue;
		}
		if (r[i].mj == r[i - 1].mj)
			continue;
		uint64_t d = r[i].mj - r[i - 1].mj;

		if (res->step_mj == 0 || d < res->step_mj)
			res->step_mj = d;
		res->changes++;
		if (!isnan(last_change) && r[i].t > last_change) {
			if (ngaps == (int)(sizeof(gaps) / sizeof(gaps[0]))) {
				memmove(gaps, gaps + 1, (size_t)(ngaps - 1) * sizeof(gaps[0]));
				ngaps--;
			}
			gaps[ngaps++] = r[i].t - last_change;
		}
		last_change = r[i].t;
	}
	if (ngaps == 0)
		return -1;
	qsort(gaps, (size_t)ngaps, sizeof(gaps[0]), cmp_double);
	res->period_s = ngaps % 2 ? gaps[ngaps / 2] : (gaps[ngaps / 2 - 1] + gaps[ngaps / 2]) / 2;
	return 0;
}

int
gpu_energy_window_ok(const struct gpu_energy_res *res, double window_s)
{
	if (!res || !(res->period_s > 0) || !(window_s > 0))
		return 0;
	/* the period is a difference of clock readings: allow for their rounding */
	return window_s >= GPU_ENERGY_MIN_UPDATES * res->period_s * (1 - 1e-9);
}

double
gpu_energy_joules(const struct gpu_energy_res *res, const struct gpu_energy_reading *a,
    const struct gpu_energy_reading *b)
{
	if (b->mj < a->mj || !gpu_energy_window_ok(res, b->t - a->t))
		return NAN;
	return (double)(b->mj - a->mj) / 1000.0;
}

void
gpu_energy_meter_init(struct gpu_energy_meter *m)
{
	memset(m, 0, sizeof(*m));
}

void
gpu_energy_meter_feed(struct gpu_energy_meter *m, double t, uint64_t mj)
{
	struct gpu_energy_reading now = {t, mj};

	if (m->seen > 0 && !(t > m->last.t))
		return;  /* a clock that did not move: the reading adds nothing */
	if (m->seen == 0)
		m->first = now;
	if (m->seen == 0 || mj != m->last.mj) {
		if (m->n == GPU_ENERGY_KEEP) {
			memmove(m->r, m->r + 1, (size_t)(GPU_ENERGY_KEEP - 1) * sizeof(m->r[0]));
			m->n--;
		}
		/* the reading before a change has the same count as the change before it: no need to keep it */
		m->r[m->n++] = now;
	}
	m->last = now;
	m->seen++;
}

int
gpu_energy_meter_res(const struct gpu_energy_meter *m, struct gpu_energy_res *res)
{
	return gpu_energy_step(m->r, m->n, res);
}
