/*
 * runner.h: what the runner's files share (runner.c measures, runner_worker.c
 * reads the workers' lines, runner_pool.c keeps the groups of serve workers
 * and the MPS daemon they need). Only src/bench/runner*.c include it.
 */
#ifndef GPUPACK_BENCH_RUNNER_H
#define GPUPACK_BENCH_RUNNER_H

#include "bench/bench.h"
#include "bench/wline.h"
#include "bench/workers.h"

/* What one worker said, checked. */
struct wdata {
	double t_start, t_end, t_ready, flops, late;
};

struct outcome {
	double value, elapsed, skew;
	double first;         /* the first t_start */
	double late;          /* the latest start after the shared instant, seconds */
	double setup;         /* command sent to the last t_ready; 0 unknown */
	double energy;        /* joules from the shared start to the last result; NAN unknown */
	double ewindow;       /* seconds between the two reads of the counter that gave it */
};

/* Workers that stay (see the top). */
struct bench_pool {
	struct wgroup *g;
	int n;
	char **warm;          /* per worker: the problems it has run once, "|n s b|..." */
	int last_ex, last_pt; /* the point it served last (-1 none): blamed for a bad exit */
};

static inline int
uses_mps(int mode)
{
	return mode == BM_MPS || mode == BM_MPS_CAPPED;
}

/* Processes a point runs: streams and batched are one process. */
static inline int
nworkers(int mode, int procs)
{
	return mode == BM_STREAMS || mode == BM_BATCHED ? 1 : procs;
}

/* runner_worker.c */
/* The environment of a worker for mode: the device, and for MPS the client's. */
char **bench_worker_env(struct bench_run *r, int mode, int procs);
/* The command line of one matmul worker, to start its timed part at start_at (epoch; <= 0: none). */
char *bench_worker_cmd(int size, int mode, int procs, long iters, double start_at, int cpu_ms);
/*
 * Check one worker's line, and its exit when reaped (exited: 0 while it may
 * still be tearing down after its line); fill d.
 */
int bench_check_worker(const struct wresult *w, int exited, struct wline *l, struct wdata *d);
/* Check a serve worker's ready line ({"mode":"serve","ok":true,...}). */
int bench_check_ready(struct bench_run *r, const struct wresult *w, int exited);
/* Read every worker's line into an outcome; -1 with err naming the first bad worker. */
int bench_read_outcome(struct bench_run *r, const struct wresult *res, int n, int exited, double t0,
    double start_at, struct outcome *o);

/* runner_pool.c */
/*
 * Start n serve workers for mode (capped: at 100/procs %) and wait until
 * each has its context (its ready line). NULL with err set; an MPS daemon
 * whose first clients cannot start fails every MPS point with this reason.
 */
struct bench_pool *bench_pool_open(struct bench_run *r, int mode, int procs, int n);
/*
 * End a group: close its input, and each worker must exit 0 within the
 * timeout; one that does not fails the point it served last. -1 only when
 * interrupted. Frees p.
 */
int bench_pool_close(struct bench_run *r, struct bench_pool *p);
/* Close the kept groups (before exercise 4, and at the end); -1 only when interrupted. */
int bench_pools_close(struct bench_run *r);
/* The kept group of a kind, started when first needed, started again when one of it ended. */
struct bench_pool *bench_pool_get(struct bench_run *r, int mps, int n);
/* A group that failed a command: gone; a kept one is started again when next needed. */
void bench_pool_drop(struct bench_run *r, struct bench_pool *p);
/* The first n workers of p run the point's problem once, untimed, where they have not yet. */
int bench_pool_warm(struct bench_run *r, struct bench_pool *p, const struct bench_point *pt, int n);

#endif
