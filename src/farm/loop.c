/*
 * loop: the farm itself. One thread, one poll(2) over a signalfd (SIGCHLD,
 * SIGINT, SIGTERM, SIGUSR1) and the output pipes of running tasks. Each
 * turn it fills free slots (launch.c), reads whatever output is ready,
 * reaps exited tasks (finish.c ends them), and enforces deadlines.
 * farm/state.h says which file holds which part of a run.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

/* Read what the task printed; finish it once it exited and its pipes are drained. */
static void
drain(struct farm *f, struct run *r, int i)
{
	if (r->fd[i] < 0)
		return;
	switch (obuf_read(&r->out[i], r->fd[i])) {
	case 1:
		if (f->o->line_buffer)
			deliver_lines(f, r, 0);
		return;
	case -1:
		warnx_("%s", err_msg());
		err_clear();
		break;
	}
	close_fd(&r->fd[i]);
}

static struct run *
find_pid(struct farm *f, pid_t pid)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && f->r[i].pid == pid && !f->r[i].exited)
			return &f->r[i];
	return NULL;
}

static void
reap(struct farm *f, double now)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct run *r = find_pid(f, pid);

		if (!r) {
			guard_reaped(&f->guard, pid);
			continue;
		}
		r->exited = 1;
		r->status = status;
		/* what is in the pipes now is all the task wrote (or its children, so far) */
		drain(f, r, 0);
		drain(f, r, 1);
		finish_task(f, r, now);
	}
}

/* ---- signals and deadlines -------------------------------------------- */

static void
on_signals(struct farm *f, double now)
{
	struct signalfd_siginfo si;
	int child = 0;

	while (read(f->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGCHLD) {
			child = 1;
			continue;
		}
		f->st.interrupted = 1;
		if (f->stop == 0) {
			f->stop = 1;
			warnx_("%s: no new tasks; waiting for %d running (again to end %s)",
			    sigabbrev_np((int)si.ssi_signo), f->st.running, plural((unsigned)f->st.running,
			    "it", "them"));
		} else if (f->stop == 1) {
			f->stop = 2;
			warnx_("%s: ending %d running %s", sigabbrev_np((int)si.ssi_signo), f->st.running,
			    plural((unsigned)f->st.running, "task", "tasks"));
			finish_terminate_all(f, now);
		}
	}
	if (child)
		reap(f, now);
}

/* When task r's --timeout is up (0: never). */
static double
deadline(const struct farm *f, const struct run *r)
{
	double limit = launch_timeout(f);

	return limit > 0 && !r->timed_out ? r->start + limit : 0;
}

static void
deadlines(struct farm *f, double now)
{
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];
		double d;

		/* a killed task whose end waited to see whether the farm was stopping */
		if (r->task && r->exited && r->hold_until > 0 && (now >= r->hold_until || f->stop > 0)) {
			finish_task(f, r, now);
			continue;
		}

		if (!r->task || r->exited)
			continue;
		d = deadline(f, r);
		if (d > 0 && now >= d) {
			r->timed_out = 1;
			finish_terminate(r, now);
		}
		if (r->term_at > 0 && now >= r->term_at) {
			kill(-r->pid, SIGTERM);
			auto_wake(r);
			r->term_at = 0;
		}
		if (r->kill_at > 0 && now >= r->kill_at) {
			kill(-r->pid, SIGKILL);
			r->kill_at = now + 3600;
		}
	}
}

static void
sooner(double *next, double t)
{
	if (t > 0 && (*next == 0 || t < *next))
		*next = t;
}

/* Milliseconds until something is due; -1: nothing. */
static int
poll_timeout(struct farm *f, double now)
{
	double next = 0;

	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (!r->task || r->exited)
			continue;
		sooner(&next, deadline(f, r));
		sooner(&next, r->term_at);
		sooner(&next, r->kill_at);
	}
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && f->r[i].exited)
			sooner(&next, f->r[i].hold_until);
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].fault_at > 0)
			sooner(&next, now + 0.2);
	if (f->o->bar || f->o->eta)
		sooner(&next, now + 0.5);
	/* --delay: wake when the next task may start */
	if (f->o->delay > 0 && f->stop == 0 && (!f->st.inputs_done || f->retry))
		sooner(&next, f->next_start > now ? f->next_start : now + 0.001);
	/* -j auto's next look at the devices, while there is something to decide */
	if (auto_next(f) > 0 && (f->st.running > 0 || f->retry || !f->st.inputs_done))
		sooner(&next, auto_next(f));
	/* MPS health: when a daemon is to be asked next */
	if (health_next(f) > 0)
		sooner(&next, health_next(f));
	/*
	 * SIGCHLD alone is not trusted: a thread of a library (NVML starts one)
	 * that does not block it can take the signal from the signalfd. Tasks
	 * are also reaped on every wake-up, so at worst one is seen this late.
	 */
	if (f->st.running > 0)
		sooner(&next, now + 0.25);
	/* a farm over nodes beats and watches the others, also while it waits for them */
	if (f->nodes)
		sooner(&next, now + nodes_due(f, now));
	if (next == 0)
		return -1;
	return next <= now ? 0 : (int)((next - now) * 1000) + 1;
}

static void
wait_events(struct farm *f)
{
	struct pollfd *p = xmalloc((size_t)(1 + 2 * f->nr) * sizeof *p);
	int *who = xmalloc((size_t)(1 + 2 * f->nr) * sizeof *who), n = 0;
	double now = clock_mono();

	p[n++] = (struct pollfd){f->sigfd, POLLIN, 0};
	for (int i = 0; i < f->nr; i++)
		for (int k = 0; k < 2; k++)
			if (f->r[i].task && f->r[i].fd[k] >= 0) {
				who[n] = i * 2 + k;
				p[n++] = (struct pollfd){f->r[i].fd[k], POLLIN, 0};
			}
	if (poll(p, (nfds_t)n, poll_timeout(f, now)) > 0) {
		for (int i = 1; i < n; i++)
			if (p[i].revents)
				drain(f, &f->r[who[i] / 2], who[i] % 2);
		if (p[0].revents)
			on_signals(f, clock_mono());
	}
	reap(f, clock_mono());
	deadlines(f, clock_mono());
	nodes_tick(f, clock_mono());
	auto_tick(f, clock_mono());
	health_check(f, clock_mono());
	free(p);
	free(who);
}

/* ---- the run --------------------------------------------------------- */

static void
progress(struct farm *f, double now)
{
	if (!(f->o->bar || f->o->eta) || now - f->last_draw < 0.2)
		return;
	f->last_draw = now;
	progress_draw(&f->st, f->g, f->ng, f->o->bar, now);
}

static int
exit_status(struct farm *f)
{
	if (f->fatal)
		return FARM_EXIT_ERROR;
	if (f->halt_status >= 0)
		return f->halt_status;
	/* a signal that came after the last task started stopped nothing */
	if (f->st.interrupted && !f->halt_stopped && !(f->st.inputs_done && !f->retry && !f->suspects))
		return FARM_EXIT_ERROR;
	/* --halt that never triggered: parallel's halt() still computes the status its way */
	if (f->o->halt_when != HALT_NEVER && f->o->halt_pct > 0)
		return (int)ceil((double)f->st.failed * 100.0 / (double)(f->started ? f->started : 1));
	if (f->st.failed > 100)
		return 101;
	return (int)f->st.failed;
}

int
farm_run(struct farm_opts *o, struct gpu_backend *b)
{
	struct farm f = {.o = o, .sigfd = -1, .devnull = -1, .halt_status = -1, .next_print = 1};
	struct rusage ru;
	sigset_t old;
	int rc;

	f.j.fd = -1;
	f.guard.fd = f.guard.rec = f.guard.runs = -1;
	f.st.t0 = clock_mono();
	f.b = b;
	if (setup_signals(&f, &old) < 0 || setup_prepare(&f, b) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		setup_cleanup(&f);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return rc;
	}
	f.st.share = o->share;
	f.st.shard_k = o->shard_k;
	f.st.shard_n = o->shard_n;
	auto_energy(&f, 0);
	f.st.t0 = clock_mono();
	for (;;) {
		double now = clock_mono();

		launch_fill(&f, now);
		/* done here; in a farm over nodes, done when it is done everywhere */
		if (f.st.running == 0 && (f.stop > 0 || (f.st.inputs_done && !f.retry && !f.suspects)) &&
		    (!f.nodes || f.stop > 0 || !nodes_idle(&f, now)))
			break;
		progress(&f, now);
		wait_events(&f);
	}
	f.st.t_end = clock_mono();
	auto_energy(&f, 1);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		f.st.max_rss_kib = ru.ru_maxrss;
	if (o->bar || o->eta)
		progress_clear();
	deliver_flush(&f, 1);
	/* a farm over nodes exits with the whole farm's status (farm/nodes.h) */
	f.st.exit_status = nodes_exit_status(&f, exit_status(&f));
	if (o->bar || o->eta || o->summary)
		progress_summary(&f.st, f.g, f.ng, stderr);
	if (o->json && !f.out_broken)
		progress_json(&f.st, f.g, f.ng, stdout);
	/* a count is remembered from a run that went its whole way */
	auto_finish(&f, !f.st.interrupted && !f.fatal);
	rc = f.st.exit_status;
	setup_cleanup(&f);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
