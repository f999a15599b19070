/*
 * command: exercise 4, the user's own command as the task. Each point is
 * one `gpupack run` of T tasks at concurrency P under one share mode; its
 * throughput is what run's --json summary says, in tasks per hour. Going
 * through run (rather than spawning the command here) measures what the
 * user will get from the farm, slots, MPS daemon and all.
 *
 * The command is wrapped as `env GPUPACK_BENCH_TASK={#} CMD ...`: the
 * placeholder stops run from appending the input to the user's arguments
 * (GNU parallel's rule), and tells each task its number. run -q keeps the
 * user's words as they were given (an argv, not a shell line).
 */
#include "bench/bench.h"
#include "bench/wline.h"
#include "bench/workers.h"
#include "util/err.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static int
tasks_of(const struct bench_run *r)
{
	int maxp = 1;

	if (r->cfg.tasks > 0)
		return r->cfg.tasks;
	for (int i = 0; i < r->cfg.nprocs; i++)
		if (r->cfg.procs[i] > maxp)
			maxp = r->cfg.procs[i];
	return maxp * 2 < 4 ? 4 : maxp * 2;
}

static char **
run_argv(const struct bench_run *r, int mode, int procs, int tasks)
{
	size_t n = 20 + (size_t)r->cfg.ncmd + (size_t)tasks;
	char **argv = xcalloc(n, sizeof *argv);
	size_t k = 0;

	argv[k++] = xstrdup(r->cfg.self);
	if (r->cfg.sim) {
		argv[k++] = xstrdup("--sim");
		argv[k++] = xstrdup(r->cfg.sim);
	}
	argv[k++] = xstrdup("run");
	argv[k++] = xstrdup("-q");
	argv[k++] = xstrdup("--share");
	argv[k++] = xstrdup(mode == BM_MPS ? "mps" : "timeslice");
	argv[k++] = xstrdup("-j");
	argv[k++] = xasprintf("%d", procs);
	argv[k++] = xstrdup("--json");
	argv[k++] = xstrdup("--gpus");
	argv[k++] = xstrdup(r->target.uuid);
	argv[k++] = xstrdup("--");
	argv[k++] = xstrdup("env");
	argv[k++] = xstrdup("GPUPACK_BENCH_TASK={#}");
	for (int i = 0; i < r->cfg.ncmd; i++)
		argv[k++] = xstrdup(r->cfg.cmd[i]);
	argv[k++] = xstrdup(":::");
	for (int i = 1; i <= tasks; i++)
		argv[k++] = xasprintf("%d", i);
	return argv;
}

/* The last line of s (the tasks' own output comes before run's summary). */
static const char *
last_line(char *s)
{
	size_t n = strlen(s);
	char *p;

	while (n > 0 && s[n - 1] == '\n')
		s[--n] = '\0';
	p = strrchr(s, '\n');
	return p ? p + 1 : s;
}

/* Read run's summary: tasks per hour, and the makespan. */
static int
read_summary(const struct wresult *w, int tasks, double *per_hour, double *makespan, double *jpt)
{
	struct wline l;
	double done = 0, failed = 0, rate = 0;
	char buf[256];

	if (!w->out || !*w->out || wline_parse(last_line(w->out), &l) < 0) {
		if (w->err && *w->err)
			return err_set(EXIT_TASKS, "gpupack run: %s", workers_first_line(w->err, buf, sizeof buf));
		return err_set(EXIT_TASKS, "gpupack run printed no JSON summary (exit %d)",
		    WIFEXITED(w->status) ? WEXITSTATUS(w->status) : 128 + WTERMSIG(w->status));
	}
	if (wline_num(&l, "failed", &failed) == 0 && failed > 0) {
		wline_free(&l);
		return err_set(EXIT_TASKS, "%.0f of %d %s failed", failed, tasks, plural((unsigned)tasks, "task",
		    "tasks"));
	}
	if (!WIFEXITED(w->status) || WEXITSTATUS(w->status) != 0) {
		wline_free(&l);
		return err_set(EXIT_TASKS, "gpupack run exited %d",
		    WIFEXITED(w->status) ? WEXITSTATUS(w->status) : 128 + WTERMSIG(w->status));
	}
	if (wline_num(&l, "makespan_s", makespan) < 0 || *makespan <= 0) {
		wline_free(&l);
		return err_set(EXIT_TASKS, "gpupack run's summary has no makespan_s");
	}
	if (wline_num(&l, "tasks", &done) < 0)
		done = tasks;
	if (wline_num(&l, "tasks_per_s", &rate) < 0 || rate <= 0)
		rate = done / *makespan;
	/* the run's own joules per task (null where the GPU keeps no counter) */
	if (wline_num(&l, "j_per_task", jpt) < 0)
		*jpt = NAN;
	wline_free(&l);
	if (done != tasks)
		return err_set(EXIT_TASKS, "gpupack run ran %.0f tasks, not %d", done, tasks);
	*per_hour = rate * 3600;
	return 0;
}

static int
measure_one(struct bench_run *r, struct bench_exercise *e, struct bench_point *p)
{
	int tasks = tasks_of(r), rc;
	struct wspec spec = {run_argv(r, p->mode, p->procs, tasks), env_clean()};
	struct wresult res;
	double per_hour = 0, makespan = 0, jpt = NAN;

	p->iters = tasks;
	rc = workers_run(&spec, 1, r->cfg.timeout_s, &res);
	if (rc == 0)
		rc = read_summary(&res, tasks, &per_hour, &makespan, &jpt);
	wresults_free(&res, 1);
	env_free(spec.argv);
	env_free(spec.env);
	if (rc < 0) {
		if (bench_interrupted)
			return -1;
		bench_point_fail(r, e, p);
		return 0;
	}
	bench_note_repeat(r, e, p, per_hour, makespan, 0);
	bench_note_energy(p, jpt, makespan);
	return 0;
}

int
bench_measure_command(struct bench_run *r, struct bench_exercise *e)
{
	for (int i = 0; i < r->cfg.nprocs; i++) {
		for (int m = 0; m < BM_NMODES; m++) {
			int procs = r->cfg.procs[i];
			struct bench_point *p;

			if (!bench_wanted(e, m, procs))
				continue;
			p = (struct bench_point *)bench_point_get(e, 0, m, procs);
			if (!p)
				p = bench_point_add(e, 0, m, procs);
			if (p->error)
				continue;
			if (measure_one(r, e, p) < 0)
				return -1;
		}
	}
	return 0;
}
