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
 *
 * Overhead is most of a run's time, so it is cut where the method allows:
 * the margin is learned from the workers' own t_ready (setup done), and a
 * repeat's workers are left to tear their CUDA contexts down while the next
 * repeat's workers set up. The next timed part still starts only after the
 * old workers are reaped: a repeat whose shared instant came before that is
 * measured again, like a late one.
 */
#include "bench/bench.h"
#include "bench/wline.h"
#include "bench/workers.h"
#include "share/mps.h"
#include "util/clock.h"
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
/* margin = learned setup x GROW + PAD: the cushion for setups a little slower than any seen */
#define MARGIN_GROW 1.10
#define MARGIN_PAD 0.04
/* first guess for P processes set up at once: each extra one adds this share of one's setup */
#define SETUP_PER_PROC 0.15

/* What one worker said, checked. */
struct wdata {
	double t_start, t_end, t_ready, flops, late;
};

struct outcome {
	double value, elapsed, skew;
	double first;         /* the first t_start */
	double late;          /* the latest start after the shared instant, seconds */
	double setup;         /* spawn to the last t_ready; 0 unknown */
	double exit;          /* the previous workers' lines read to their reaping; 0 none */
	double gone;          /* when the previous workers were reaped (epoch), 0 none */
};

static int
proc_index(const struct bench_run *r, int procs)
{
	for (int i = 0; i < r->cfg.nprocs; i++)
		if (r->cfg.procs[i] == procs)
			return i;
	return 0;
}

static int
uses_mps(int mode)
{
	return mode == BM_MPS || mode == BM_MPS_CAPPED;
}

static int
nworkers(int mode, int procs)
{
	return mode == BM_STREAMS || mode == BM_BATCHED ? 1 : procs;
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
 * How long before the shared start to spawn the workers: the longest setup
 * seen for as many processes at once, or the longest exit seen of workers
 * like the ones still exiting (they must be gone before the timed part),
 * whichever is longer, plus a cushion. Every repeat tells both (the
 * workers' t_ready; when the old ones were reaped), so the margin is tight
 * from the second repeat at each P on; a late repeat teaches the time it
 * needed and is measured again. --margin fixes it, growing only when a
 * repeat was late.
 */
static double
margin_for(const struct bench_run *r, int mode, int procs)
{
	int mps = uses_mps(mode);
	double setup = r->setup_seen[mps][setup_slot(r, mode, procs)];
	double exit = r->tail ? r->exit_seen[r->tail_mps][r->tail_slot] : 0;
	double need;

	/* workers of a kind not seen exiting yet: the longest exit of any */
	for (int c = 0; r->tail && !(exit > 0) && c < 2; c++)
		for (int s = 0; s <= r->cfg.nprocs; s++)
			exit = fmax(exit, r->exit_seen[c][s]);
	/* they exit that long after their lines were read: from now, so much less */
	if (r->tail)
		exit = fmax(0, r->tail_end + exit - clock_wall());
	need = fmax(setup, exit);

	if (r->cfg.margin_fixed > 0)
		return fmax(r->cfg.margin_fixed, need > 0 ? need * MARGIN_GROW + MARGIN_PAD : 0);
	if (!(setup > 0))
		need = fmax(setup_guess(r, mps, nworkers(mode, procs)), exit);
	return need * MARGIN_GROW + MARGIN_PAD;
}

static void
learn(double *seen, double needed)
{
	if (needed > *seen)
		*seen = needed;
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
	/* workers of an interrupted run first: MPS clients must be gone before their daemon */
	wgroup_free(r->tail);
	r->tail = NULL;
	if (!r->mps)
		return;
	if (r->setup.mps_started && mps_stop(r->mps, 10, 1) < 0)
		warnx_("stopping the MPS daemon of %s: %s", r->target.uuid, err_msg());
	free(r->mps);
	r->mps = NULL;
}

/* ---- one repeat --------------------------------------------------------- */

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

/*
 * Check one worker's line, and its exit when reaped (exited: 0 while it may
 * still be tearing down after its line); fill d.
 */
static int
check_worker(const struct wresult *w, int exited, struct wline *l, struct wdata *d)
{
	const char *end = w->out ? strchr(w->out, '\n') : NULL;
	const char *msg;
	char buf[256];
	int okv = 0, sum = 1;

	memset(l, 0, sizeof *l);
	if (!w->out || !*w->out) {
		if (!exited)
			return err_set(EXIT_TASKS, "printed nothing");
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
	if (exited && WIFSIGNALED(w->status))
		return err_set(EXIT_TASKS, "\"ok\":true but killed by signal %d", WTERMSIG(w->status));
	if (exited && (!WIFEXITED(w->status) || WEXITSTATUS(w->status) != 0))
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
read_outcome(struct bench_run *r, const struct wresult *res, int n, int exited, double t0,
    double start_at, struct outcome *o)
{
	double first = INFINITY, last_start = -INFINITY, last = -INFINITY, flops = 0, ready = 0;
	int all_ready = 1;

	memset(o, 0, sizeof *o);
	for (int i = 0; i < n; i++) {
		struct wline l;
		struct wdata d;

		if (check_worker(&res[i], exited, &l, &d) < 0) {
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
			ready = fmax(ready, d.t_ready);
		else
			all_ready = 0;  /* a gpupack-work from before t_ready */
	}
	o->first = first;
	o->elapsed = last - first;
	o->skew = last_start - first;
	if (all_ready && ready > t0)
		o->setup = ready - t0;
	if (o->elapsed <= 0)
		return err_set(EXIT_TASKS, "the workers' timed parts took no time");
	o->value = flops / o->elapsed / 1e12;
	return 0;
}

/*
 * A worker that printed a good line and then failed to exit cleanly (a
 * crash in teardown, a hang): its point is not trusted, after the fact.
 */
static void
tail_blame(struct bench_run *r)
{
	struct bench_exercise *e;
	struct bench_point *p;

	if (r->tail_ex < 0 || r->tail_pt < 0) {
		warnx_("after its result: %s", err_msg());
		return;
	}
	e = &r->ex[r->tail_ex];
	p = &e->pts[r->tail_pt];
	if (p->error)
		return;
	err_prefix("after its result");
	bench_point_fail(r, e, p);
}

/*
 * Wait for the last workers to be gone (at the latest when this returns).
 * -1 only when interrupted; a worker that does not end well fails its point.
 */
static int
tail_finish(struct bench_run *r)
{
	const struct wresult *res;
	int n, rc;

	if (!r->tail)
		return 0;
	rc = wgroup_wait(r->tail, r->cfg.timeout_s);
	if (rc < 0 && bench_interrupted) {
		wgroup_free(r->tail);
		r->tail = NULL;
		return -1;
	}
	res = wgroup_results(r->tail);
	n = wgroup_size(r->tail);
	if (rc < 0) {
		tail_blame(r);
	} else {
		for (int i = 0; i < n; i++) {
			struct wline l;
			struct wdata d;

			rc = check_worker(&res[i], 1, &l, &d);
			wline_free(&l);
			if (rc < 0) {
				err_prefix("worker %d of %d (pid %d)", i + 1, n, (int)res[i].pid);
				tail_blame(r);
				break;
			}
		}
	}
	wgroup_free(r->tail);
	r->tail = NULL;
	return 0;
}

/*
 * One run of workers that start their timed parts margin seconds from now
 * (0: as soon as each is ready). The previous workers are waited for after
 * these are spawned, so that their exit overlaps these workers' setup; these
 * are read as soon as each printed its line and left exiting as r->tail
 * (xi, pi: whose repeat, -1 none).
 */
static int
run_workers(struct bench_run *r, const struct bench_exercise *e, const struct bench_point *p,
    int xi, int pi, long iters, double margin, struct outcome *o)
{
	int n = nworkers(p->mode, p->procs), rc;
	struct wspec *spec = xcalloc((size_t)n, sizeof *spec);
	double t0 = clock_wall(), start_at = t0 + margin, gone = 0, prev_end = r->tail_end;
	struct wgroup *g;

	for (int i = 0; i < n; i++) {
		spec[i].argv = worker_argv(r, e, p->size, p->mode, p->procs, iters, start_at);
		spec[i].env = worker_env(r, p->mode, p->procs);
	}
	g = wgroup_start(spec, n);
	for (int i = 0; i < n; i++) {
		argv_free(spec[i].argv);
		env_free(spec[i].env);
	}
	free(spec);
	if (!g)
		return -1;
	if (r->tail) {
		if (tail_finish(r) < 0) {
			wgroup_free(g);
			return err_set(EXIT_INTERNAL, "interrupted");
		}
		gone = clock_wall();
	}
	rc = wgroup_lines(g, r->cfg.timeout_s + margin);
	/* a bad line: the whole story (exit status, stderr) once the workers are gone */
	if (rc == 0 && read_outcome(r, wgroup_results(g), n, 0, t0, start_at, o) < 0) {
		rc = -1;
		if (!bench_interrupted && wgroup_wait(g, r->cfg.timeout_s) == 0)
			rc = read_outcome(r, wgroup_results(g), n, 1, t0, start_at, o);
	}
	if (rc < 0) {
		wgroup_free(g);
		return -1;
	}
	o->gone = gone;
	o->exit = gone > 0 ? gone - prev_end : 0;
	r->tail = g;
	r->tail_end = clock_wall();
	r->tail_ex = xi;
	r->tail_pt = pi;
	r->tail_mps = uses_mps(p->mode);
	r->tail_slot = setup_slot(r, p->mode, p->procs);
	return 0;
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
	if (run_workers(r, &none, &p, -1, -1, 2, 0, &o) < 0) {
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
measure_point(struct bench_run *r, struct bench_exercise *e, struct bench_point *p)
{
	long iters = iters_for(e, size_index(e, p->size), p);
	int mps = uses_mps(p->mode), xi = (int)(e - r->ex), pi = (int)(p - e->pts);
	struct outcome o;

	p->iters = iters;
	if (mps && (mps_up(r) < 0 || mps_warm_up(r) < 0))
		goto fail;
	for (int attempt = 0;; attempt++) {
		double margin = margin_for(r, p->mode, p->procs);
		double *exit_seen = r->tail ? &r->exit_seen[r->tail_mps][r->tail_slot] : NULL;
		int overlap, late, fixed = r->cfg.margin_fixed > 0;

		p->margin_s = margin;
		if (run_workers(r, e, p, xi, pi, iters, margin, &o) < 0)
			goto fail;
		p->setup_s = fmax(p->setup_s, o.setup);
		/*
		 * Late: more than 5 ms or 2% of the span behind the shared start.
		 * A worker that was ready wakes within a millisecond, so anything
		 * more means setup was not done, and the processes did not overlap.
		 * Overlap: the previous workers were still exiting when this
		 * repeat's timed part began.
		 */
		late = o.late > fmax(0.005, 0.02 * o.elapsed);
		overlap = o.gone > o.first;
		if (o.setup > 0 && (!fixed || late))
			learn(&r->setup_seen[mps][setup_slot(r, p->mode, p->procs)], o.setup);
		if (exit_seen && (!fixed || overlap))
			learn(exit_seen, o.exit);
		if (!late && !overlap)
			break;
		if (attempt == LATE_RETRIES) {
			/*
			 * Late with margins that grew each time: not setup but a busy
			 * machine waking the workers late. Keep it, and say so.
			 */
			warnx_("%s N=%d %s P=%d: workers still %.0f ms late%s after %d tries (margin %.2f s); "
			    "kept", e->name, p->size, bench_mode_name(p->mode), p->procs, o.late * 1000,
			    overlap ? " or the previous ones still exiting" : "", attempt + 1, margin);
			p->late_kept++;
			break;
		}
		/* without t_ready: setting up took margin + late; give that and more, from now on */
		if (late && !(o.setup > 0))
			learn(&r->setup_seen[mps][setup_slot(r, p->mode, p->procs)], margin + o.late);
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
	/* alone: its timed part must not overlap other workers' exit */
	if (tail_finish(r) < 0)
		return err_set(EXIT_INTERNAL, "interrupted");
	/* an instant already past: the worker starts when ready and says how late, its setup time */
	if (run_workers(r, e, &p, -1, -1, k0, 0, &o) < 0)
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
				/* gpupack run's tasks: the last workers gone first */
				if (tail_finish(r) < 0 || bench_measure_command(r, e) < 0)
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
	return tail_finish(r);
}

int
bench_measure(struct bench_run *r)
{
	double t0 = clock_wall();
	int rc = measure_all(r);

	copy_reused(r);
	r->wall_s = clock_wall() - t0;
	return rc;
}
