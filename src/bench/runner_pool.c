/*
 * runner_pool: the serve workers kept for the whole run (runner.c says why):
 * one group of plain processes and one of MPS clients, started when first
 * needed, started again when one of them ended, closed with a clean exit
 * checked; and the MPS daemon those clients need, started once.
 */
#include "bench/bench.h"
#include "bench/runner.h"
#include "bench/wline.h"
#include "bench/workers.h"
#include "share/mps.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

static void pool_free(struct bench_pool *p);

void
bench_cleanup(struct bench_run *r)
{
	/* workers of an interrupted run first: MPS clients must be gone before their daemon */
	for (int k = 0; k < 2; k++) {
		pool_free(r->pool[k]);
		r->pool[k] = NULL;
	}
	if (!r->mps)
		return;
	if (r->setup.mps_started && mps_stop(r->mps, 10, 1) < 0)
		warnx_("stopping the MPS daemon of %s: %s", r->target.uuid, err_msg());
	free(r->mps);
	r->mps = NULL;
}

/* ---- groups of serve workers ------------------------------------------- */

static void
pool_free(struct bench_pool *p)
{
	if (!p)
		return;
	wgroup_free(p->g);
	for (int i = 0; i < p->n; i++)
		free(p->warm[i]);
	free(p->warm);
	free(p);
}

/* A worker that printed a good line and then ended badly: its last point is not trusted. */
static void
pool_blame(struct bench_run *r, const struct bench_pool *p)
{
	struct bench_exercise *e;
	struct bench_point *pt;

	if (p->last_ex < 0 || p->last_pt < 0) {
		warnx_("after its result: %s", err_msg());
		return;
	}
	e = &r->ex[p->last_ex];
	pt = &e->pts[p->last_pt];
	if (pt->error)
		return;
	err_prefix("after its result");
	bench_point_fail(r, e, pt);
}

/* How worker i of p ended (it was reaped), into err. */
static int
ended_how(const struct bench_pool *p, int i)
{
	const struct wresult *w = &wgroup_results(p->g)[i];

	if (WIFSIGNALED(w->status))
		return err_set(EXIT_TASKS, "worker %d of %d (pid %d): killed by signal %d", i + 1, p->n,
		    (int)w->pid, WTERMSIG(w->status));
	return err_set(EXIT_TASKS, "worker %d of %d (pid %d): exit status %d", i + 1, p->n,
	    (int)w->pid, WEXITSTATUS(w->status));
}

/* The first worker of p that ended, or -1; err says how. Reaps without waiting. */
static int
pool_ended(struct bench_pool *p)
{
	if (wgroup_ended(p->g) == 0)
		return -1;
	for (int i = 0; i < p->n; i++)
		if (wgroup_reaped(p->g, i)) {
			ended_how(p, i);
			return i;
		}
	return -1;
}

int
bench_pool_close(struct bench_run *r, struct bench_pool *p)
{
	const struct wresult *res;
	int rc;

	if (!p)
		return 0;
	rc = wgroup_wait(p->g, r->cfg.timeout_s);
	if (rc < 0 && bench_interrupted) {
		pool_free(p);
		return -1;
	}
	if (rc < 0) {
		pool_blame(r, p);
	} else {
		res = wgroup_results(p->g);
		for (int i = 0; i < p->n; i++) {
			if (WIFEXITED(res[i].status) && WEXITSTATUS(res[i].status) == 0)
				continue;
			ended_how(p, i);
			pool_blame(r, p);
			break;
		}
	}
	pool_free(p);
	return 0;
}

int
bench_pools_close(struct bench_run *r)
{
	int rc = 0;

	for (int k = 0; k < 2; k++) {
		if (bench_pool_close(r, r->pool[k]) < 0)
			rc = -1;
		r->pool[k] = NULL;
	}
	return rc;
}

/* The first worker whose ready line is bad (err set), or -1. */
static int
check_ready_all(struct bench_run *r, struct bench_pool *p, int exited)
{
	for (int i = 0; i < p->n; i++)
		if (bench_check_ready(r, &wgroup_results(p->g)[i], exited) < 0)
			return i;
	return -1;
}

struct bench_pool *
bench_pool_open(struct bench_run *r, int mode, int procs, int n)
{
	struct wspec *spec = xcalloc((size_t)n, sizeof *spec);
	struct bench_pool *p;
	double t0 = clock_wall();
	int rc = 0, i = -1;

	if (uses_mps(mode) && mps_up(r) < 0) {
		free(spec);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		spec[i].argv = xcalloc(3, sizeof *spec[i].argv);
		spec[i].argv[0] = xstrdup(r->cfg.work);
		spec[i].argv[1] = xstrdup("serve");
		spec[i].env = bench_worker_env(r, mode, procs);
	}
	p = xcalloc(1, sizeof *p);
	p->n = n;
	p->warm = xcalloc((size_t)n, sizeof *p->warm);
	p->last_ex = p->last_pt = -1;
	p->g = wgroup_serve(spec, n);
	for (i = 0; i < n; i++) {
		env_free(spec[i].argv);
		env_free(spec[i].env);
	}
	free(spec);
	r->pools_started++;
	if (!p->g)
		goto fail;
	i = -1;
	rc = wgroup_lines(p->g, r->cfg.timeout_s);
	if (rc == 0 && (i = check_ready_all(r, p, 0)) >= 0) {
		int again;

		rc = -1;
		/* the whole story (exit status, stderr) once the workers are gone */
		if (!bench_interrupted && wgroup_wait(p->g, r->cfg.timeout_s) == 0 &&
		    (again = check_ready_all(r, p, 1)) >= 0)
			i = again;
	}
	if (rc < 0) {
		if (i >= 0)
			err_prefix("worker %d of %d (pid %d)", i + 1, n, (int)wgroup_results(p->g)[i].pid);
		err_prefix("starting %d %s (%s serve)", n, uses_mps(mode) ? "MPS clients" :
		    n == 1 ? "worker" : "workers", r->cfg.work);
		goto fail;
	}
	r->pool_ready_s = fmax(r->pool_ready_s, clock_wall() - t0);
	return p;
fail:
	if (uses_mps(mode) && mode != BM_MPS_CAPPED && !bench_interrupted && !r->mps_error) {
		r->mps_error = xstrdup(err_msg());
		r->mps_code = err_code();
	}
	pool_free(p);
	return NULL;
}

/* The most workers one kind needs (plain: one process too; MPS: uncapped clients). */
static int
pool_size(const struct bench_run *r, int mps)
{
	int n = 1;

	for (int x = 0; x < r->nex; x++)
		for (int i = 0; i < r->cfg.nprocs; i++)
			for (int m = 0; m < BM_NMODES; m++)
				if (m != BM_MPS_CAPPED && uses_mps(m) == mps && bench_wanted(&r->ex[x], m,
				    r->cfg.procs[i]) && nworkers(m, r->cfg.procs[i]) > n)
					n = nworkers(m, r->cfg.procs[i]);
	return n;
}

struct bench_pool *
bench_pool_get(struct bench_run *r, int mps, int n)
{
	struct bench_pool **pp = &r->pool[mps];

	if (mps && r->mps_error)
		return err_set(r->mps_code, "%s", r->mps_error), NULL;
	if (*pp && pool_ended(*pp) >= 0) {
		/* it died after its last line (or was killed): that point is not trusted */
		pool_blame(r, *pp);
		pool_free(*pp);
		*pp = NULL;
	}
	if (*pp && (*pp)->n < n) {
		if (bench_pool_close(r, *pp) < 0) {
			*pp = NULL;
			return err_set(EXIT_INTERNAL, "interrupted"), NULL;
		}
		*pp = NULL;
	}
	if (!*pp) {
		int size = pool_size(r, mps);

		*pp = bench_pool_open(r, mps ? BM_MPS : BM_TIMESLICE, 1, size > n ? size : n);
	}
	return *pp;
}

void
bench_pool_drop(struct bench_run *r, struct bench_pool *p)
{
	for (int k = 0; k < 2; k++)
		if (r->pool[k] == p)
			r->pool[k] = NULL;
	pool_free(p);
}

int
bench_pool_warm(struct bench_run *r, struct bench_pool *p, const struct bench_point *pt, int n)
{
	char sig[64], *cmd;
	int sent = 0, rc = 0;

	snprintf(sig, sizeof sig, "|%d %d %d|", pt->size, pt->mode == BM_STREAMS ? pt->procs : 1,
	    pt->mode == BM_BATCHED ? pt->procs : 1);
	/* no --cpu-ms: it would only take time */
	cmd = bench_worker_cmd(pt->size, pt->mode, pt->procs, 1, 0, 0);
	for (int i = 0; i < n && rc == 0; i++) {
		if (p->warm[i] && strstr(p->warm[i], sig))
			continue;
		rc = wgroup_send(p->g, i, cmd);
		sent = 1;
	}
	free(cmd);
	/* the workers not sent anything still hold their last line: only the others are awaited */
	if (rc == 0 && sent)
		rc = wgroup_lines_n(p->g, n, r->cfg.timeout_s);
	for (int i = 0; rc == 0 && sent && i < n; i++) {
		struct wline l;
		struct wdata d;

		if (p->warm[i] && strstr(p->warm[i], sig))
			continue;
		rc = bench_check_worker(&wgroup_results(p->g)[i], 0, &l, &d);
		wline_free(&l);
		if (rc < 0) {
			err_prefix("worker %d of %d (pid %d)", i + 1, n,
			    (int)wgroup_results(p->g)[i].pid);
			break;
		}
		{
			char *old = p->warm[i];

			p->warm[i] = xasprintf("%s%s", old ? old : "", sig);
			free(old);
		}
	}
	return rc;
}

