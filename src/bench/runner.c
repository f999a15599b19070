/*
 * runner: the exercises measured. For each repeat, every point of every
 * exercise runs once, in the same order, so that slow drift of the GPU
 * (clocks, temperature) touches every configuration alike and ratios come
 * from one run (METHOD.md). Before the first repeat each size is calibrated
 * with one process, which also warms the caches, the driver and cuBLAS up.
 *
 * The workers are `gpupack-work serve` processes, started once and kept:
 * one group of plain processes and one of MPS clients, as many as the
 * largest P. Each sets its CUDA context up once; a point then sends its
 * matmul command to P of them. Setting a context up (a second or more for
 * 16 processes at once) was most of a run's time when every repeat started
 * new processes. Capped MPS clients are the exception: a client's cap is
 * fixed when its context is made, so each capped repeat starts its own
 * workers and ends them before the next repeat.
 *
 * One repeat of a point: the command names one shared instant (--start-at);
 * each worker sets the problem up (memory, inputs, 2 warm-up calls), sleeps
 * until that instant and runs its timed part. A worker that was not ready
 * in time makes the repeat worthless (it would not overlap the others), so
 * the repeat runs again with a longer margin. The margin is learned from
 * the workers' own t_ready. The first time a worker sees a problem (size,
 * streams, batch) it runs it once untimed, so that cuBLAS's lazily loaded
 * kernels are never in a setup the margin learns from.
 *
 * runner_worker.c reads the workers' lines; runner_pool.c keeps the groups
 * of serve workers and their MPS daemon.
 */
#include "bench/bench.h"
#include "bench/runner.h"
#include "bench/workers.h"
#include "farm/cost.h"
#include "gpu/backend.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LATE_RETRIES 3
#define CALIB_GUESS_S 0.05
#define CALIB_GUESS_FLOPS 20e12
/* margin = learned setup x GROW + PAD: the cushion for setups a little slower than any seen */
#define MARGIN_GROW 1.10
#define MARGIN_PAD 0.04
/* first guess for P processes set up at once: each extra one adds this share of one's setup */
#define SETUP_PER_PROC 0.15

/* ---- setup margins ------------------------------------------------------ */

static int
proc_index(const struct bench_run *r, int procs)
{
	for (int i = 0; i < r->cfg.nprocs; i++)
		if (r->cfg.procs[i] == procs)
			return i;
	return 0;
}

/* Where the setup time of a point is learned: by how many processes set up at once. */
static int
setup_slot(const struct bench_run *r, int mode, int procs)
{
	return nworkers(mode, procs) == 1 ? 0 : 1 + proc_index(r, procs);
}

static int
slot_workers(const struct bench_run *r, int slot)
{
	return slot == 0 ? 1 : r->cfg.procs[slot - 1];
}

/*
 * The setup time of w processes at once, never measured: scaled from the
 * most processes measured in this class (MPS or not; else the other), else
 * from the calibration. Only the first repeat at a new P uses it.
 */
static double
setup_guess(const struct bench_run *r, int mps, int w)
{
	double base = r->setup1;
	int bw = 1;

	for (int c = 0; c < 2; c++) {
		const double *seen = r->setup_seen[c == 0 ? mps : !mps];
		int found = 0;

		for (int s = 0; s <= r->cfg.nprocs; s++) {
			int sw = slot_workers(r, s);

			if (seen[s] > 0 && sw <= w && (!found || sw > bw || (sw == bw && seen[s] > base))) {
				base = seen[s];
				bw = sw;
				found = 1;
			}
		}
		if (found)
			break;
	}
	if (!(base > 0))
		return r->cfg.margin_base + r->cfg.margin_per_proc * w;
	return base * (1 + SETUP_PER_PROC * (w - 1)) / (1 + SETUP_PER_PROC * (bw - 1));
}

/*
 * How long before the shared start to send the command: the longest setup
 * seen for as many processes at once, plus a cushion. Every repeat tells it
 * (the workers' t_ready), so the margin is tight from the second repeat at
 * each P on; a late repeat teaches the time it needed and is measured again.
 * --margin fixes it, growing only when a repeat was late.
 */
static double
margin_for(const struct bench_run *r, int mode, int procs)
{
	int mps = uses_mps(mode);
	double need = r->setup_seen[mps][setup_slot(r, mode, procs)];

	if (r->cfg.margin_fixed > 0)
		return fmax(r->cfg.margin_fixed, need > 0 ? need * MARGIN_GROW + MARGIN_PAD : 0);
	if (!(need > 0))
		need = setup_guess(r, mps, nworkers(mode, procs));
	return need * MARGIN_GROW + MARGIN_PAD;
}

static void
learn(double *seen, double needed)
{
	if (needed > *seen)
		*seen = needed;
}

/* ---- one repeat --------------------------------------------------------- */

/*
 * A simulated GPU's repeat (model.c): the time the model gives the point's
 * matmuls, every one of P x iters of them; nothing runs, nobody is late.
 */
static void
model_outcome(const struct bench_run *r, const struct bench_exercise *e,
    const struct bench_point *p, long iters, struct outcome *o)
{
	double n = p->size, matmuls = (double)iters * (p->procs > 0 ? p->procs : 1);

	memset(o, 0, sizeof *o);
	o->energy = NAN;         /* modelled, not measured: no joules */
	o->ewindow = NAN;
	o->elapsed = matmuls * bench_model_call_s(&r->model, p->size, p->mode, p->procs, e->cpu_ms);
	o->value = 2 * n * n * n * matmuls / o->elapsed / 1e12;
}

/*
 * One run of the point's workers, their timed parts starting margin seconds
 * from now (0: as soon as each is ready). xi, pi: whose repeat (-1 none),
 * blamed if a worker ends badly after its line.
 */
static int
run_workers(struct bench_run *r, const struct bench_exercise *e, const struct bench_point *p,
    int xi, int pi, long iters, double margin, double timeout, struct outcome *o)
{
	int n = nworkers(p->mode, p->procs), capped = p->mode == BM_MPS_CAPPED, rc = 0, story;
	struct bench_pool *pool;
	double t0, start_at, joules = NAN, window = NAN;
	char *cmd;

	if (r->model.on) {
		model_outcome(r, e, p, iters, o);
		return 0;
	}

	/* an MPS server takes at most FARM_MPS_MAX_CLIENTS: the kept clients go first if need be */
	if (capped && r->pool[1] && r->pool[1]->n + n > FARM_MPS_MAX_CLIENTS) {
		if (bench_pool_close(r, r->pool[1]) < 0) {
			r->pool[1] = NULL;
			return err_set(EXIT_INTERNAL, "interrupted");
		}
		r->pool[1] = NULL;
	}
	pool = capped ? bench_pool_open(r, p->mode, p->procs, n) : bench_pool_get(r, uses_mps(p->mode), n);
	if (!pool)
		return -1;
	if (bench_pool_warm(r, pool, p, n) < 0) {
		bench_pool_drop(r, pool);
		return -1;
	}
	t0 = clock_wall();
	start_at = t0 + margin;
	cmd = bench_worker_cmd(p->size, p->mode, p->procs, iters, start_at, e->cpu_ms);
	for (int i = 0; i < n && rc == 0; i++)
		rc = wgroup_send(pool->g, i, cmd);
	free(cmd);
	story = rc < 0;
	pool->last_ex = xi;
	pool->last_pt = pi;
	/* the energy from the shared start (the workers wait for it) to the last result */
	if (rc == 0 && r->b) {
		double wait = start_at - clock_wall(), e0, w0;

		if (wait > 0)
			nanosleep(&(struct timespec){(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)}, NULL);
		/* the window between the two reads, each taken mid-call */
		w0 = clock_mono();
		e0 = bench_energy_now(r);
		w0 = (w0 + clock_mono()) / 2;
		rc = wgroup_lines_n(pool->g, n, timeout + margin);
		if (rc == 0) {
			double w1 = clock_mono();

			joules = bench_energy_now(r) - e0;
			window = (w1 + clock_mono()) / 2 - w0;
		}
	} else if (rc == 0) {
		rc = wgroup_lines_n(pool->g, n, timeout + margin);
	}
	if (rc == 0 && bench_read_outcome(r, wgroup_results(pool->g), n, 0, t0, start_at, o) < 0)
		rc = -1, story = 1;
	o->energy = joules;
	o->ewindow = window;
	/* a worker gone or a bad line: the whole story (exit status, stderr) once all are gone */
	if (story && !bench_interrupted && wgroup_wait(pool->g, r->cfg.timeout_s) == 0)
		bench_read_outcome(r, wgroup_results(pool->g), n, 1, t0, start_at, o);
	if (rc < 0) {
		bench_pool_drop(r, pool);
		return -1;
	}
	if (capped && bench_pool_close(r, pool) < 0)
		return err_set(EXIT_INTERNAL, "interrupted");
	return 0;
}

static long
iters_for(const struct bench_exercise *e, int size_idx, const struct bench_point *p)
{
	long k1 = e->iters1[size_idx];

	/* the same work at every P, so that time is the inverse of throughput */
	return (k1 + p->procs - 1) / p->procs;
}

static int
size_index(const struct bench_exercise *e, int size)
{
	for (int i = 0; i < e->nsizes; i++)
		if (e->sizes[i] == size)
			return i;
	return 0;
}

void
bench_note_repeat(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p,
    double value, double elapsed, double skew)
{
	p->value[p->nrep] = value;
	p->elapsed[p->nrep] = elapsed;
	p->skew[p->nrep] = skew;
	p->nrep++;
	r->done++;
	if (!r->cfg.verbose)
		return;
	fprintf(stderr, "gpupack: bench: [%d/%d] %s", r->done, r->total, e->name);
	if (p->size > 0)
		fprintf(stderr, " N=%d", p->size);
	fprintf(stderr, " %s P=%d: %.3g %s (%.2f s)\n", bench_mode_name(p->mode), p->procs, value,
	    e->unit, elapsed);
}

void
bench_note_energy(struct bench_point *p, double joules, double window_s)
{
	if (p->nrep > 0) {
		p->energy[p->nrep - 1] = joules >= 0 ? joules : NAN;
		p->ewindow[p->nrep - 1] = window_s > 0 ? window_s : NAN;
	}
}

double
bench_energy_now(struct bench_run *r)
{
	uint64_t mj;

	if (!r->b || !r->b->energy || r->b->energy(r->b, r->setup.gpu_index, &mj) < 0) {
		err_clear();
		return NAN;
	}
	return (double)mj / 1000.0;
}

void
bench_point_fail(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p)
{
	p->error = xasprintf("%s N=%d %s P=%d: %s", e->name, p->size, bench_mode_name(p->mode),
	    p->procs, err_msg());
	warnx_("%s", p->error);
	r->failed++;
}

/*
 * One run of the point's workers, iters each, measured again while workers
 * start late (up to LATE_RETRIES). extra_s: how much longer than a repeat it
 * may take. -1 with err set.
 */
static int
run_repeat(struct bench_run *r, struct bench_exercise *e, struct bench_point *p, long iters,
    double extra_s, struct outcome *o)
{
	int mps = uses_mps(p->mode), xi = (int)(e - r->ex), pi = (int)(p - e->pts);

	for (int attempt = 0;; attempt++) {
		double margin = margin_for(r, p->mode, p->procs);
		int late, fixed = r->cfg.margin_fixed > 0;

		p->margin_s = margin;
		if (run_workers(r, e, p, xi, pi, iters, margin, r->cfg.timeout_s + extra_s, o) < 0)
			return -1;
		p->setup_s = fmax(p->setup_s, o->setup);
		/*
		 * Late: more than 5 ms or 2% of the span behind the shared start.
		 * A worker that was ready wakes within a millisecond, so anything
		 * more means setup was not done, and the processes did not overlap.
		 */
		late = o->late > fmax(0.005, 0.02 * o->elapsed);
		if (o->setup > 0 && (!fixed || late))
			learn(&r->setup_seen[mps][setup_slot(r, p->mode, p->procs)], o->setup);
		if (!late)
			return 0;
		if (attempt == LATE_RETRIES) {
			/*
			 * Late with margins that grew each time: not setup but a busy
			 * machine waking the workers late. Keep it, and say so.
			 */
			warnx_("%s N=%d %s P=%d: workers still %.0f ms late after %d tries (margin %.2f s); "
			    "kept", e->name, p->size, bench_mode_name(p->mode), p->procs, o->late * 1000,
			    attempt + 1, margin);
			p->late_kept++;
			return 0;
		}
		/* without t_ready: setting up took margin + late; give that and more, from now on */
		if (late && !(o->setup > 0))
			learn(&r->setup_seen[mps][setup_slot(r, p->mode, p->procs)], margin + o->late);
		p->retries++;
	}
}

/* One repeat of one point; a failed point is recorded, not fatal (only an interrupt is). */
static int
measure_point(struct bench_run *r, struct bench_exercise *e, struct bench_point *p)
{
	struct outcome o;

	p->iters = iters_for(e, size_index(e, p->size), p);
	if (run_repeat(r, e, p, p->iters, 0, &o) < 0)
		goto fail;
	bench_note_repeat(r, e, p, o.value, o.elapsed, o.skew);
	bench_note_energy(p, o.energy, o.ewindow);
	return 0;
fail:
	if (bench_interrupted)
		return -1;
	bench_point_fail(r, e, p);
	return 0;
}

/*
 * The point's work k times over in one run, for the energy counter: its
 * joules and window are the point's lengthened run (bench_energy_point);
 * its throughput is not a repeat (a run of another length).
 */
static int
measure_long(struct bench_run *r, struct bench_exercise *e, struct bench_point *p, int k, double plan_s)
{
	struct outcome o;
	long iters = p->iters * (long)k;
	double margin = p->margin_s;  /* the JSON's margin_s is the last repeat's */
	int rc;

	if (r->cfg.verbose)
		fprintf(stderr, "gpupack: bench: [energy] %s N=%d %s P=%d: its work x%d for the energy "
		    "counter (about %.2f s)\n", e->name, p->size, bench_mode_name(p->mode), p->procs, k, plan_s);
	p->elong_runs++;
	rc = run_repeat(r, e, p, iters, plan_s, &o);
	p->margin_s = margin;
	if (rc < 0) {
		if (bench_interrupted)
			return -1;
		bench_point_fail(r, e, p);
		return 0;
	}
	p->elong = k;
	p->elong_j = o.energy >= 0 ? o.energy : NAN;
	p->elong_window = o.ewindow > 0 ? o.ewindow : NAN;
	p->elong_plan = plan_s;
	p->elong_s += fmax(plan_s, o.ewindow > 0 ? o.ewindow : 0);
	return 0;
}

/*
 * After the planned rounds (and the noisy points' extra ones): each point
 * whose repeats are each too short for the energy counter runs its work
 * once more, lengthened, for a J from one window (energy.c). A run that
 * still fell short (the work went faster than its repeats said) is tried
 * again, longer, while the budget allows. Rounds interleave the points,
 * as the repeats do. Exercise 4 (whole farms) and reused points (their
 * source is measured) are left out, and so is a simulated GPU's model.
 */
#define ENERGY_TRIES 3

static int
measure_energy(struct bench_run *r)
{
	double budget = bench_energy_budget(&r->cfg);

	if (!r->eres_ok || r->model.on)
		return 0;
	for (int t = 0; t < ENERGY_TRIES; t++)
		for (int x = 0; x < r->nex; x++)
			for (int i = 0; i < r->ex[x].npts && r->ex[x].id != EX_COMMAND; i++) {
				struct bench_exercise *e = &r->ex[x];
				struct bench_point *p = &e->pts[i];
				double plan_s;
				int k;

				if (p->error || p->reused_from || p->iters <= 0)
					continue;
				k = bench_energy_factor(&r->eres, p, budget - p->elong_s, &plan_s);
				if (k > 0 && p->iters > 100000000L / k)
					continue;  /* more than a worker counts */
				if (k > 0 && measure_long(r, e, p, k, plan_s) < 0)
					return -1;
			}
	return 0;
}

/* ---- calibration -------------------------------------------------------- */

static long
clamp_iters(double k)
{
	if (!(k >= 1))
		return 1;
	return k > 1e8 ? 100000000L : (long)ceil(k);
}

static int
calibrate(struct bench_run *r, struct bench_exercise *e, int si)
{
	int size = e->sizes[si];
	double flops1 = 2.0 * size * size * (double)size;
	double guess = CALIB_GUESS_S * CALIB_GUESS_FLOPS / flops1;
	struct bench_point p = {.size = size, .mode = BM_TIMESLICE, .procs = 1};
	struct outcome o;
	long k0;

	if (e->cpu_ms > 0)
		guess = fmin(guess, CALIB_GUESS_S * 1000 / e->cpu_ms);
	k0 = clamp_iters(fmin(guess, 1e6));
	if (k0 < 2)
		k0 = 2;
	/* an instant already past: the worker starts when ready and says how late, its setup time */
	if (run_workers(r, e, &p, -1, -1, k0, 0, r->cfg.timeout_s, &o) < 0)
		return err_prefix("%s N=%d: calibration", e->name, size);
	if (o.late > 0)
		r->setup1 = fmax(r->setup1, o.late);  /* a command's setup: the largest size's */
	e->iters1[si] = clamp_iters(r->cfg.target_s / (o.elapsed / (double)k0));
	return 0;
}

/* ---- the exercises ------------------------------------------------------ */

int
bench_wanted(const struct bench_exercise *e, int mode, int procs)
{
	if (mode == BM_TIMESLICE && procs == 1)
		return 1;  /* every exercise's baseline: one process */
	if (!(e->modes & 1u << mode))
		return 0;
	if (procs == 1 && mode != BM_MPS)
		return 0;  /* streams, batched and capped at P 1 are the same as one process */
	return 1;
}

/* Exercise 1 of this run, or NULL. */
static const struct bench_exercise *
matmul_of(const struct bench_run *r)
{
	for (int x = 0; x < r->nex; x++)
		if (r->ex[x].id == EX_MATMUL)
			return &r->ex[x];
	return NULL;
}

static int
has_size(const struct bench_exercise *e, int size)
{
	for (int i = 0; i < e->nsizes; i++)
		if (e->sizes[i] == size)
			return 1;
	return 0;
}

/*
 * Exercise 3's uncapped points and its one process are exercise 1's at the
 * same size when this run measures those there: the same configuration and
 * iterations, measured in the same repeats. They are reused, not measured
 * twice (the JSON says "reused_from"). Returns exercise 1 then, else NULL.
 */
static const struct bench_exercise *
reuse_source(const struct bench_run *r, const struct bench_exercise *e, int size, int mode,
    int procs)
{
	const struct bench_exercise *m = matmul_of(r);

	if (e->id != EX_CAPS || mode == BM_MPS_CAPPED || !m || m->cpu_ms != e->cpu_ms)
		return NULL;
	if (!has_size(m, size) || !bench_wanted(m, mode, procs))
		return NULL;
	return m;
}

static int
count_points(const struct bench_run *r, const struct bench_exercise *e)
{
	int n = 0;

	for (int s = 0; s < e->nsizes; s++)
		for (int i = 0; i < r->cfg.nprocs; i++)
			for (int m = 0; m < BM_NMODES; m++)
				n += bench_wanted(e, m, r->cfg.procs[i]) &&
				    !reuse_source(r, e, e->sizes[s], m, r->cfg.procs[i]);
	return n;
}

static int
measure_size(struct bench_run *r, struct bench_exercise *e, int si)
{
	int size = e->sizes[si];

	for (int i = 0; i < r->cfg.nprocs; i++) {
		int procs = r->cfg.procs[i];

		for (int m = 0; m < BM_NMODES; m++) {
			const struct bench_exercise *from = reuse_source(r, e, size, m, procs);
			struct bench_point *p;

			if (!bench_wanted(e, m, procs))
				continue;
			p = (struct bench_point *)bench_point_get(e, size, m, procs);
			if (!p)
				p = bench_point_add(e, size, m, procs);
			if (from) {
				p->reused_from = from->name;  /* filled in by copy_reused() */
				continue;
			}
			if (p->error)
				continue;
			if (measure_point(r, e, p) < 0)
				return -1;
		}
	}
	return 0;
}

/* Before the first repeat: K1 of each size, measured, or exercise 1's where points are reused. */
static int
calibrate_size(struct bench_run *r, struct bench_exercise *e, int si)
{
	const struct bench_exercise *m = reuse_source(r, e, e->sizes[si], BM_TIMESLICE, 1);

	if (m) {
		for (int i = 0; i < m->nsizes; i++)
			if (m->sizes[i] == e->sizes[si])
				e->iters1[si] = m->iters1[i];
		return 0;
	}
	return calibrate(r, e, si);
}

static void
copy_reused(struct bench_run *r)
{
	const struct bench_exercise *m = matmul_of(r);

	for (int x = 0; x < r->nex && m; x++) {
		struct bench_exercise *e = &r->ex[x];

		for (int i = 0; i < e->npts; i++) {
			struct bench_point *p = &e->pts[i];
			const struct bench_point *src;
			const char *from = p->reused_from;

			if (!from || !(src = bench_point_get(m, p->size, p->mode, p->procs)))
				continue;
			free(p->error);
			*p = *src;
			p->reused_from = from;
			p->error = src->error ? xstrdup(src->error) : NULL;
		}
	}
}

/*
 * After the planned rounds: points whose repeats spread more than
 * noisy_spread are measured again, in further rounds of their own (still
 * interleaved), up to max_repeats. Decided once, on the planned repeats:
 * a range only grows with more values. Exercise 4 is left out (its points
 * are whole farms) and so are reused points (their source is measured).
 */
static int
measure_noisy(struct bench_run *r)
{
	int extra = r->cfg.max_repeats - r->cfg.repeats;

	for (int x = 0; x < r->nex && extra > 0; x++) {
		struct bench_exercise *e = &r->ex[x];

		for (int i = 0; i < e->npts && e->id != EX_COMMAND; i++) {
			struct bench_point *p = &e->pts[i];
			struct stats st;

			if (p->error || p->reused_from || p->nrep < 2)
				continue;
			stats_of(p->value, p->nrep, &st);
			if (st.spread > r->cfg.noisy_spread) {
				p->noisy = 1;
				r->total += extra;
			}
		}
	}
	for (int k = 0; k < extra; k++)
		for (int x = 0; x < r->nex; x++)
			for (int i = 0; i < r->ex[x].npts; i++) {
				struct bench_point *p = &r->ex[x].pts[i];

				if (p->noisy && !p->error && measure_point(r, &r->ex[x], p) < 0)
					return -1;
			}
	return 0;
}

static int
measure_all(struct bench_run *r)
{
	r->total = 0;
	for (int x = 0; x < r->nex; x++)
		r->total += r->cfg.repeats * (r->ex[x].id == EX_COMMAND ?
		    2 * r->cfg.nprocs : count_points(r, &r->ex[x]));
	for (int rep = 0; rep < r->cfg.repeats; rep++) {
		for (int x = 0; x < r->nex; x++) {
			struct bench_exercise *e = &r->ex[x];

			if (e->id == EX_COMMAND) {
				/* gpupack run's tasks get the GPU (and the MPS client slots) alone */
				if (bench_pools_close(r) < 0 || bench_measure_command(r, e) < 0)
					return -1;
				continue;
			}
			for (int s = 0; s < e->nsizes; s++) {
				if (rep == 0 && calibrate_size(r, e, s) < 0)
					return -1;
				if (measure_size(r, e, s) < 0)
					return -1;
			}
		}
	}
	if (measure_noisy(r) < 0 || measure_energy(r) < 0)
		return -1;
	return bench_pools_close(r);
}

int
bench_measure(struct bench_run *r)
{
	double t0 = clock_wall();
	int rc;

	/* the counter's resolution first: what each repeat's joules can be trusted for */
	bench_energy_resolution(r);
	rc = measure_all(r);

	copy_reused(r);
	r->wall_s = clock_wall() - t0;
	return rc;
}
