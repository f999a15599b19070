/*
 * bench: the configuration, the exercises and their points: plain data that
 * the runner fills and the writers read.
 */
#include "bench/bench.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t bench_interrupted;

static const char *const mode_names[BM_NMODES] = {
	[BM_TIMESLICE] = "timeslice",
	[BM_MPS] = "mps",
	[BM_STREAMS] = "streams",
	[BM_BATCHED] = "batched",
	[BM_MPS_CAPPED] = "mps-capped",
};

const char *
bench_mode_name(int mode)
{
	return mode >= 0 && mode < BM_NMODES ? mode_names[mode] : "?";
}

int
bench_mode_parse(const char *s)
{
	for (int i = 0; i < BM_NMODES; i++)
		if (strcmp(s, mode_names[i]) == 0)
			return i;
	return -1;
}

void
bench_config_defaults(struct bench_config *c, int quick)
{
	static const int full_sizes[] = {256, 512, 1024, 2048, 4096};
	static const int quick_sizes[] = {512, 2048};
	static const int full_procs[] = {1, 2, 4, 8, 16};
	static const int quick_procs[] = {1, 2, 4, 8};

	memset(c, 0, sizeof *c);
	c->quick = quick;
	c->nsizes = quick ? 2 : 5;
	memcpy(c->sizes, quick ? quick_sizes : full_sizes, (size_t)c->nsizes * sizeof(int));
	c->nprocs = quick ? 4 : 5;
	memcpy(c->procs, quick ? quick_procs : full_procs, (size_t)c->nprocs * sizeof(int));
	c->modes = 1u << BM_TIMESLICE | 1u << BM_MPS | 1u << BM_STREAMS | 1u << BM_BATCHED;
	c->exercises = quick ? (1u << EX_MATMUL | 1u << EX_CAPS)
	    : (1u << EX_MATMUL | 1u << EX_MIXED | 1u << EX_CAPS);
	c->repeats = 3;
	/*
	 * A launch-bound point (one process, small N) can spread 20-30% over 3
	 * repeats; its median, the baseline of every speed-up, then rests on
	 * one value. Such points get more repeats.
	 */
	c->max_repeats = quick ? 6 : 9;
	c->noisy_spread = 0.10;
	c->target_s = quick ? 0.12 : 0.3;
	/* only until the calibration has measured a worker's setup (runner.c) */
	c->margin_base = quick ? 0.8 : 1.5;
	c->margin_per_proc = 0.1;
	c->timeout_s = 300;
	c->cpu_ms = 2;
	c->mixed_size = 0;
	/* caps matter where one process leaves SMs idle: the small sizes */
	c->caps_count = quick ? 1 : 2;
	c->tasks = 0;  /* exercise 4: 2 x the largest P unless given */
}

const struct bench_point *
bench_point_get(const struct bench_exercise *e, int size, int mode, int procs)
{
	/* at P 1 there is nothing to share: one process, one matrix per call */
	if (procs == 1 && (mode == BM_STREAMS || mode == BM_BATCHED))
		mode = BM_TIMESLICE;
	if (procs == 1 && mode == BM_MPS_CAPPED)
		mode = BM_MPS;
	for (int i = 0; i < e->npts; i++) {
		const struct bench_point *p = &e->pts[i];

		if (p->size == size && p->mode == mode && p->procs == procs)
			return p;
	}
	return NULL;
}

struct bench_point *
bench_point_add(struct bench_exercise *e, int size, int mode, int procs)
{
	struct bench_point *p;

	xgrow(&e->pts, &e->cap, (size_t)e->npts + 1, sizeof *e->pts);
	p = &e->pts[e->npts++];
	memset(p, 0, sizeof *p);
	p->size = size;
	p->mode = mode;
	p->procs = procs;
	stats_of(NULL, 0, &p->st);
	stats_of(NULL, 0, &p->est);
	for (int i = 0; i < BENCH_MAX_REPEATS; i++)
		p->energy[i] = p->ewindow[i] = NAN;
	p->elong_j = p->elong_window = NAN;
	return p;
}

static double
median_of(const struct bench_exercise *e, int size, int mode, int procs)
{
	const struct bench_point *p = bench_point_get(e, size, mode, procs);

	return p && p->st.n > 0 ? p->st.median : NAN;
}

double
bench_limit(const struct bench_exercise *e, int size, int procs)
{
	if (!(e->modes & (1u << BM_BATCHED | 1u << BM_STREAMS)))
		return NAN;  /* nothing single-process measured here */
	double b = median_of(e, size, BM_BATCHED, procs);
	double s = median_of(e, size, BM_STREAMS, procs);

	if (isnan(b))
		return s;
	if (isnan(s))
		return b;
	return b > s ? b : s;
}

double
bench_limit_for(const struct bench_run *r, const struct bench_exercise *e, int size, int procs)
{
	double l = bench_limit(e, size, procs);

	if (!isnan(l) || e->id != EX_CAPS)
		return l;
	for (int x = 0; x < r->nex; x++)
		if (r->ex[x].id == EX_MATMUL)
			return bench_limit(&r->ex[x], size, procs);
	return NAN;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void
add_exercise(struct bench_run *r, int id)
{
	static const unsigned sharing = 1u << BM_TIMESLICE | 1u << BM_MPS | 1u << BM_STREAMS |
	    1u << BM_BATCHED;
	const struct bench_config *c = &r->cfg;
	struct bench_exercise *e = &r->ex[r->nex++];
	int sorted[BENCH_MAX_LIST];

	memset(e, 0, sizeof *e);
	e->id = id;
	e->unit = "TFLOP/s";
	memcpy(sorted, c->sizes, sizeof sorted);
	qsort(sorted, (size_t)c->nsizes, sizeof *sorted, cmp_int);
	switch (id) {
	case EX_MATMUL:
		e->name = "matmul";
		e->title = "matmul farm: SGEMM, aggregate TFLOP/s";
		e->modes = c->modes & sharing;
		e->nsizes = c->nsizes;
		memcpy(e->sizes, c->sizes, sizeof e->sizes);
		break;
	case EX_MIXED:
		e->name = "mixed";
		e->title = "mixed CPU+GPU tasks: SGEMM with CPU work between calls";
		e->modes = c->modes & sharing;
		e->cpu_ms = c->cpu_ms;
		e->nsizes = 1;
		e->sizes[0] = c->mixed_size > 0 ? c->mixed_size : sorted[(c->nsizes - 1) / 2];
		break;
	case EX_CAPS:
		e->name = "caps";
		e->title = "MPS caps: each of P clients capped at 100/P % of the SMs, against uncapped";
		e->modes = 1u << BM_MPS | 1u << BM_MPS_CAPPED;
		if (c->ncaps_sizes > 0) {
			e->nsizes = c->ncaps_sizes;
			memcpy(e->sizes, c->caps_sizes, sizeof e->sizes);
		} else {
			e->nsizes = c->caps_count < c->nsizes ? c->caps_count : c->nsizes;
			memcpy(e->sizes, sorted, sizeof e->sizes);
		}
		break;
	default:
		e->name = "command";
		e->title = "the user's command through gpupack run, tasks per hour";
		e->unit = "tasks/h";
		e->modes = 1u << BM_TIMESLICE | 1u << BM_MPS;
		e->nsizes = 1;
		e->sizes[0] = 0;
		break;
	}
}

void
bench_init(struct bench_run *r)
{
	r->nex = 0;
	for (int id = EX_MATMUL; id <= EX_MAX; id++)
		if (r->cfg.exercises & 1u << id)
			add_exercise(r, id);
}

/*
 * Exercise 3 measures time-slicing only with one process; its gain over
 * time-slicing at P comes from exercise 1 at the same size, measured in the
 * same run (same repeats, interleaved), when there is one.
 */
static void
borrow_timeslice(const struct bench_run *r, const struct bench_exercise *e, struct bench_rec *rec)
{
	const struct bench_point *p;

	if (!rec->valid || !isnan(rec->timeslice) || e->id != EX_CAPS)
		return;
	for (int x = 0; x < r->nex; x++) {
		if (r->ex[x].id != EX_MATMUL)
			continue;
		p = bench_point_get(&r->ex[x], rec->size, BM_TIMESLICE, rec->procs);
		if (p && p->st.n > 0) {
			rec->timeslice = p->st.median;
			rec->gain_timeslice = stats_ratio(rec->value, rec->timeslice);
		}
	}
}


void
bench_summarize(struct bench_run *r)
{
	for (int x = 0; x < r->nex; x++) {
		struct bench_exercise *e = &r->ex[x];

		for (int i = 0; i < e->npts; i++) {
			stats_of(e->pts[i].value, e->pts[i].nrep, &e->pts[i].st);
			bench_energy_point(&r->eres, &e->pts[i]);
		}
		for (int s = 0; s < e->nsizes; s++) {
			bench_recommend(e, e->sizes[s], &e->rec[s]);
			borrow_timeslice(r, e, &e->rec[s]);
		}
	}
}

void
bench_free(struct bench_run *r)
{
	for (int x = 0; x < r->nex; x++) {
		for (int i = 0; i < r->ex[x].npts; i++)
			free(r->ex[x].pts[i].error);
		free(r->ex[x].pts);
	}
	free(r->setup.cmdline);
	free(r->mps_error);
	r->setup.cmdline = r->mps_error = NULL;
	r->nex = 0;
}
