/*
 * runner: the exercises measured. For each repeat, every point of every
 * exercise runs once, in the same order, so that slow drift of the GPU
 * (clocks, temperature) touches every configuration alike and ratios come
 * from one run (METHOD.md). Before the first repeat each size is calibrated
 * with one process, which also warms the caches, the driver and cuBLAS up.
 *
 * One repeat of a point: P workers are started, each sets up, then sleeps
 * until one shared instant (--start-at) and runs its timed part. A worker
 * that was not ready in time makes the repeat worthless (it would not
 * overlap the others), so the repeat runs again with a longer margin.
 */
#include "bench/bench.h"
#include "bench/wline.h"
#include "bench/workers.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LATE_RETRIES 3
#define CALIB_GUESS_S 0.05
#define CALIB_GUESS_FLOPS 20e12

/* What one worker said, checked. */
struct wdata {
	double t_start, t_end, t_ready, flops, late;
};

struct outcome {
	double value, elapsed, skew;
	double late;          /* the latest start after the shared instant, seconds */
	double setup;         /* longest setup (t_ready - spawn), 0 unknown */
};

static int
proc_index(const struct bench_run *r, int procs)
{
	for (int i = 0; i < r->cfg.nprocs; i++)
		if (r->cfg.procs[i] == procs)
			return i;
	return 0;
}

/*
 * How long before the shared start to spawn the workers. Learned, not
 * guessed where possible: the calibration run is started with an instant
 * already past, so its lateness is exactly one process's setup time; P
 * processes set up side by side take somewhat longer each. A point whose
 * workers were late anyway teaches the setup time of that P (margin plus
 * lateness), and it never shrinks again.
 */
static double
margin_for(const struct bench_run *r, int procs, int mps)
{
	int i = proc_index(r, procs);
	double m;

	if (r->cfg.margin_fixed > 0)
		m = r->cfg.margin_fixed;
	else if (r->setup1 > 0)
		m = r->setup1 * (1 + 0.05 * (procs - 1)) * 1.25 + 0.1;
	else
		m = r->cfg.margin_base + r->cfg.margin_per_proc * procs;
	if (r->setup_seen[mps][i] > 0)
		m = fmax(m, r->setup_seen[mps][i] * 1.25 + 0.1);
	return m;
}

/* ---- MPS ---------------------------------------------------------------- */

static int
mps_up(struct bench_run *r)
{
	struct mps_limits lim = {.sm_pct = 0, .mem_bytes = 0, .priority = MPS_PRIO_UNSET};
	int started = 0;

	/* tried once: every MPS point fails with the same reason, without starting again */
	if (r->mps_error)
		return err_set(r->mps_code, "%s", r->mps_error);
	if (r->mps)
		return 0;
	r->mps = xcalloc(1, sizeof *r->mps);
	if (mps_start(&r->target, r->setup.gpu_index, &lim, 0, r->mps, &started) < 0) {
		free(r->mps);
		r->mps = NULL;
		err_prefix("starting the MPS daemon");
		r->mps_error = xstrdup(err_msg());
		r->mps_code = err_code();
		return -1;
	}
	r->setup.mps_started = started;
	return 0;
}

void
bench_cleanup(struct bench_run *r)
{
	if (!r->mps)
		return;
	if (r->setup.mps_started && mps_stop(r->mps, 10, 1) < 0)
		warnx_("stopping the MPS daemon of %s: %s", r->target.uuid, err_msg());
	free(r->mps);
	r->mps = NULL;
}

/* ---- one repeat --------------------------------------------------------- */

static int
uses_mps(int mode)
{
	return mode == BM_MPS || mode == BM_MPS_CAPPED;
}

static char **
worker_env(struct bench_run *r, int mode, int procs)
{
	char **env = env_clean();
	char *mps_env[8];
	int n;

	env = env_add(env, xasprintf("CUDA_VISIBLE_DEVICES=%s", r->target.uuid));
	if (!uses_mps(mode))
		return env;
	n = mps_client_env(r->mps, mode == BM_MPS_CAPPED ? 100.0 / procs : 0, 0, mps_env);
	for (int i = 0; i < n; i++)
		env = env_add(env, mps_env[i]);
	return env;
}

/* argv of one matmul worker, to start its timed part at start_at (epoch seconds). */
static char **
worker_argv(const struct bench_run *r, const struct bench_exercise *e, int size, int mode,
    int procs, long iters, double start_at)
{
	char **argv = xcalloc(20, sizeof *argv);
	int k = 0;

	argv[k++] = xstrdup(r->cfg.work);
	argv[k++] = xstrdup("matmul");
	argv[k++] = xstrdup("--n");
	argv[k++] = xasprintf("%d", size);
	argv[k++] = xstrdup("--iters");
	argv[k++] = xasprintf("%ld", iters);
	argv[k++] = xstrdup("--start-at");
	argv[k++] = xasprintf("%.3f", start_at);
	if (e->cpu_ms > 0) {
		argv[k++] = xstrdup("--cpu-ms");
		argv[k++] = xasprintf("%d", e->cpu_ms);
	}
	if (procs > 1 && (mode == BM_STREAMS || mode == BM_BATCHED)) {
		argv[k++] = xstrdup(mode == BM_STREAMS ? "--streams" : "--batched");
		argv[k++] = xasprintf("%d", procs);
	}
	return argv;
}

static void
argv_free(char **argv)
{
	env_free(argv);
}

static int
nworkers(int mode, int procs)
{
	return mode == BM_STREAMS || mode == BM_BATCHED ? 1 : procs;
}

/* Check one worker's exit and line; fill d. */
static int
check_worker(const struct wresult *w, struct wline *l, struct wdata *d)
{
	const char *end = w->out ? strchr(w->out, '\n') : NULL;
	const char *msg;
	char buf[256];
	int okv = 0, sum = 1;

	if (!w->out || !*w->out) {
		if (WIFSIGNALED(w->status))
			return err_set(EXIT_TASKS, "killed by signal %d", WTERMSIG(w->status));
		return err_set(EXIT_TASKS, "printed nothing (exit %d)%s%s", WEXITSTATUS(w->status),
		    *w->err ? ": " : "", workers_first_line(w->err, buf, sizeof buf));
	}
	if (end && end[1])
		return err_set(EXIT_TASKS, "printed more than one line");
	if (wline_parse(w->out, l) < 0)
		return err_prefix("its output is not a JSON line");
	msg = wline_str(l, "error");
	if (wline_bool(l, "ok", &okv) < 0 || !okv)
		return err_set(EXIT_TASKS, "not ok: %s", msg ? msg : "no error given");
	if (!WIFEXITED(w->status) || WEXITSTATUS(w->status) != 0)
		return err_set(EXIT_TASKS, "\"ok\":true but exit status %d", WEXITSTATUS(w->status));
	if (wline_bool(l, "checksum_ok", &sum) == 0 && !sum)
		return err_set(EXIT_TASKS, "wrong result (checksum_ok false)");
	if (wline_num(l, "t_start", &d->t_start) < 0 || wline_num(l, "t_end", &d->t_end) < 0 ||
	    d->t_end < d->t_start)
		return err_set(EXIT_TASKS, "no valid t_start and t_end");
	if (wline_num(l, "flops", &d->flops) < 0 || d->flops <= 0)
		return err_set(EXIT_TASKS, "no flops");
	d->late = -1;
	if (wline_num(l, "late_ms", &d->late) == 0)
		d->late /= 1000;
	d->t_ready = 0;
	wline_num(l, "t_ready", &d->t_ready);
	return 0;
}

static void
note_device(struct bench_run *r, const struct wline *l)
{
	const char *dev = wline_str(l, "device");
	const char *uuid = wline_str(l, "uuid");
	double rt;

	if (dev && !r->setup.work_device[0])
		str_copy(r->setup.work_device, dev, sizeof r->setup.work_device);
	if (wline_num(l, "runtime_version", &rt) == 0)
		r->setup.work_runtime = rt;
	if (uuid && strcasecmp(uuid, r->target.uuid) != 0 && !r->setup.uuid_warned) {
		/* said once: the worker ran somewhere else than we asked */
		warnx_("worker reports device %s, bench asked for %s", uuid, r->target.uuid);
		r->setup.uuid_warned = 1;
	}
}

/* Read every worker's line into an outcome; -1 with err naming the first bad worker. */
static int
read_outcome(struct bench_run *r, const struct wresult *res, int n, double start_at,
    struct outcome *o)
{
	double first = INFINITY, last_start = -INFINITY, last = -INFINITY, flops = 0;

	memset(o, 0, sizeof *o);
	for (int i = 0; i < n; i++) {
		struct wline l;
		struct wdata d;

		if (check_worker(&res[i], &l, &d) < 0) {
			wline_free(&l);
			return err_prefix("worker %d of %d (pid %d)", i + 1, n, (int)res[i].pid);
		}
		note_device(r, &l);
		wline_free(&l);
		first = fmin(first, d.t_start);
		last_start = fmax(last_start, d.t_start);
		last = fmax(last, d.t_end);
		flops += d.flops;
		o->late = fmax(o->late, d.late >= 0 ? d.late : d.t_start - start_at);
		if (d.t_ready > 0)
			o->setup = fmax(o->setup, d.t_ready - res[i].t_spawn);
	}
	o->elapsed = last - first;
	o->skew = last_start - first;
	if (o->elapsed <= 0)
		return err_set(EXIT_TASKS, "the workers' timed parts took no time");
	o->value = flops / o->elapsed / 1e12;
	return 0;
}

static int
run_workers(struct bench_run *r, const struct bench_exercise *e, const struct bench_point *p,
    long iters, double start_at, struct outcome *o)
{
	int n = nworkers(p->mode, p->procs), rc;
	struct wspec *spec = xcalloc((size_t)n, sizeof *spec);
	struct wresult *res = xcalloc((size_t)n, sizeof *res);

	for (int i = 0; i < n; i++) {
		spec[i].argv = worker_argv(r, e, p->size, p->mode, p->procs, iters, start_at);
		spec[i].env = worker_env(r, p->mode, p->procs);
	}
	rc = workers_run(spec, n, r->cfg.timeout_s + (start_at > 0 ? start_at - now_epoch() : 0), res);
	if (rc == 0)
		rc = read_outcome(r, res, n, start_at, o);
	wresults_free(res, n);
	for (int i = 0; i < n; i++) {
		argv_free(spec[i].argv);
		env_free(spec[i].env);
	}
	free(spec);
	free(res);
	return rc;
}

/*
 * The MPS server starts with its first client, which then takes much
 * longer to set up than any later one. One small client first, so that
 * no point pays for the server (and no margin learns from it). A daemon
 * that cannot serve fails here, once, for every MPS point.
 */
static int
mps_warm_up(struct bench_run *r)
{
	struct bench_exercise none = {.name = "mps warm-up"};
	struct bench_point p = {.size = 256, .mode = BM_MPS, .procs = 1};
	struct outcome o;

	if (r->mps_warm)
		return 0;
	if (run_workers(r, &none, &p, 2, now_epoch(), &o) < 0) {
		err_prefix("the first MPS client");
		r->mps_error = xstrdup(err_msg());
		r->mps_code = err_code();
		return -1;
	}
	r->mps_warm = 1;
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
bench_point_fail(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p)
{
	p->error = xasprintf("%s N=%d %s P=%d: %s", e->name, p->size, bench_mode_name(p->mode),
	    p->procs, err_msg());
	warnx_("%s", p->error);
	r->failed++;
}

/* One repeat of one point; a failed point is recorded, not fatal (only an interrupt is). */
static int
measure_point(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p)
{
	long iters = iters_for(e, size_index(e, p->size), p);
	int pi = proc_index(r, p->procs), mps = uses_mps(p->mode);
	struct outcome o;

	p->iters = iters;
	if (mps && (mps_up(r) < 0 || mps_warm_up(r) < 0))
		goto fail;
	for (int attempt = 0;; attempt++) {
		double margin = margin_for(r, p->procs, mps);
		double start_at = now_epoch() + margin;

		if (run_workers(r, e, p, iters, start_at, &o) < 0)
			goto fail;
		if (o.setup > r->setup_seen[mps][pi])
			r->setup_seen[mps][pi] = o.setup;  /* workers that report t_ready */
		/*
		 * Late: more than 5 ms or 2% of the span behind the shared start.
		 * A worker that was ready wakes within a millisecond, so anything
		 * more means setup was not done, and the processes did not overlap.
		 */
		if (o.late <= fmax(0.005, 0.02 * o.elapsed))
			break;
		if (attempt == LATE_RETRIES) {
			/*
			 * Late with margins that grew each time: not setup but a busy
			 * machine waking the workers late. Keep it, and say so.
			 */
			warnx_("%s N=%d %s P=%d: workers still %.0f ms late after %d tries (margin %.1f s); "
			    "kept", e->name, p->size, bench_mode_name(p->mode), p->procs, o.late * 1000,
			    attempt + 1, margin);
			p->late_kept++;
			break;
		}
		/* setting up took margin + late: give that and more, from now on */
		r->setup_seen[mps][pi] = fmax(r->setup_seen[mps][pi], margin + o.late);
		p->retries++;
	}
	bench_note_repeat(r, e, p, o.value, o.elapsed, o.skew);
	return 0;
fail:
	if (bench_interrupted)
		return -1;
	bench_point_fail(r, e, p);
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
	if (run_workers(r, e, &p, k0, now_epoch(), &o) < 0)
		return err_prefix("%s N=%d: calibration", e->name, size);
	if (o.late > 0)
		r->setup1 = o.late;  /* the latest: the first one also loaded cuBLAS from disk */
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

static int
count_points(const struct bench_run *r, const struct bench_exercise *e)
{
	int n = 0;

	for (int s = 0; s < e->nsizes; s++)
		for (int i = 0; i < r->cfg.nprocs; i++)
			for (int m = 0; m < BM_NMODES; m++)
				n += bench_wanted(e, m, r->cfg.procs[i]);
	return n;
}

static int
measure_size(struct bench_run *r, struct bench_exercise *e, int si)
{
	int size = e->sizes[si];

	for (int i = 0; i < r->cfg.nprocs; i++) {
		int procs = r->cfg.procs[i];

		for (int m = 0; m < BM_NMODES; m++) {
			struct bench_point *p;

			if (!bench_wanted(e, m, procs))
				continue;
			p = (struct bench_point *)bench_point_get(e, size, m, procs);
			if (!p)
				p = bench_point_add(e, size, m, procs);
			if (p->error)
				continue;
			if (measure_point(r, e, p) < 0)
				return -1;
		}
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
				if (bench_measure_command(r, e) < 0)
					return -1;
				continue;
			}
			for (int s = 0; s < e->nsizes; s++) {
				if (rep == 0 && calibrate(r, e, s) < 0)
					return -1;
				if (measure_size(r, e, s) < 0)
					return -1;
			}
		}
	}
	return 0;
}

int
bench_measure(struct bench_run *r)
{
	double t0 = now_epoch();
	int rc = measure_all(r);

	r->wall_s = now_epoch() - t0;
	return rc;
}
