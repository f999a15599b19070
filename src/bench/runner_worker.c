/*
 * runner_worker: one matmul worker as the runner sees it: its environment
 * and command line, and the JSON line it answers with, checked (ok, one
 * line, a clean exit, a right checksum, times that make sense) and summed
 * over a point's workers into one outcome.
 */
#include "bench/bench.h"
#include "bench/runner.h"
#include "bench/wline.h"
#include "bench/workers.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

char **
bench_worker_env(struct bench_run *r, int mode, int procs)
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

char *
bench_worker_cmd(int size, int mode, int procs, long iters, double start_at, int cpu_ms)
{
	struct sbuf b;

	sbuf_init(&b);
	sbuf_printf(&b, "matmul --n %d --iters %ld", size, iters);
	if (start_at > 0)
		sbuf_printf(&b, " --start-at %.3f", start_at);
	if (cpu_ms > 0)
		sbuf_printf(&b, " --cpu-ms %d", cpu_ms);
	if (procs > 1 && (mode == BM_STREAMS || mode == BM_BATCHED))
		sbuf_printf(&b, " %s %d", mode == BM_STREAMS ? "--streams" : "--batched", procs);
	sbuf_addc(&b, '\n');
	return sbuf_detach(&b);
}

/* A worker that printed no line: why, as far as its exit (once exited) and stderr tell. */
static int
no_line(const struct wresult *w, int exited)
{
	char buf[256];

	if (!exited)
		return err_set(EXIT_TASKS, "printed nothing");
	if (WIFSIGNALED(w->status))
		return err_set(EXIT_TASKS, "killed by signal %d", WTERMSIG(w->status));
	return err_set(EXIT_TASKS, "printed nothing (exit %d)%s%s", WEXITSTATUS(w->status),
	    *w->err ? ": " : "", workers_first_line(w->err, buf, sizeof buf));
}

/* A parsed line must say "ok":true; else its "error". */
static int
line_ok(const struct wline *l)
{
	const char *msg = wline_str(l, "error");
	int okv = 0;

	if (wline_bool(l, "ok", &okv) < 0 || !okv)
		return err_set(EXIT_TASKS, "not ok: %s", msg ? msg : "no error given");
	return 0;
}

int
bench_check_worker(const struct wresult *w, int exited, struct wline *l, struct wdata *d)
{
	const char *end = w->out ? strchr(w->out, '\n') : NULL;
	int sum = 1;

	memset(l, 0, sizeof *l);
	if (!w->out || !*w->out)
		return no_line(w, exited);
	if (end && end[1])
		return err_set(EXIT_TASKS, "printed more than one line");
	if (wline_parse(w->out, l) < 0)
		return err_prefix("its output is not a JSON line");
	if (line_ok(l) < 0)
		return -1;
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

int
bench_read_outcome(struct bench_run *r, const struct wresult *res, int n, int exited, double t0,
    double start_at, struct outcome *o)
{
	double first = INFINITY, last_start = -INFINITY, last = -INFINITY, flops = 0, ready = 0;
	int all_ready = 1;

	memset(o, 0, sizeof *o);
	for (int i = 0; i < n; i++) {
		struct wline l;
		struct wdata d;

		if (bench_check_worker(&res[i], exited, &l, &d) < 0) {
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

int
bench_check_ready(struct bench_run *r, const struct wresult *w, int exited)
{
	struct wline l;

	if (!w->out || !*w->out)
		return no_line(w, exited);
	if (wline_parse(w->out, &l) < 0)
		return err_prefix("its output is not a JSON line");
	if (line_ok(&l) < 0) {
		wline_free(&l);
		return -1;
	}
	note_device(r, &l);
	wline_free(&l);
	return 0;
}
