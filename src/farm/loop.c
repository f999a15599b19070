/*
 * loop: the farm itself. One thread, one poll(2) over a signalfd (SIGCHLD,
 * SIGINT, SIGTERM, SIGHUP, SIGUSR1) and the output pipes of running tasks. Each
 * turn it fills free slots (launch.c), reads whatever output is ready,
 * reaps exited tasks (finish.c ends them), and enforces deadlines.
 * farm/state.h says which file holds which part of a run.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/state.h"
#include "farm/usagefarm.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

/* The output could not be kept: the attempt will not be recorded (finish.c). */
static void
output_failed(struct run *r, int e, const char *what)
{
	if (r->out_err)
		return;
	r->out_err = e ? e : EIO;
	r->out_what = what;
}

/* What failed when a task's output could not spill to a temporary file. */
static const char *
spill_what(void)
{
	static char what[PATH_MAX + 64];
	const char *dir = getenv("TMPDIR");

	snprintf(what, sizeof what, "temporary file for task output in %s",
	    dir && *dir ? dir : "/tmp");
	return what;
}

/*
 * --results: what the task wrote goes to its file as it comes. After a
 * write error the rest is read and dropped (the task runs on, unrecorded).
 * 1 more may come, 0 end of file.
 */
static int
to_results(struct run *r, int i)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(r->fd[i], buf, sizeof buf);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 1 : (output_failed(r, errno, "--results"), 0);
		if (n == 0)
			return 0;
		r->out[i].raw += (uint64_t)n;
		if (!r->out_err && write_all(r->file[i], buf, (size_t)n) < 0)
			output_failed(r, errno, "--results");
		if ((size_t)n < sizeof buf)
			return 1;
	}
}

/* Read what the task printed; finish it once it exited and its pipes are drained. */
static void
drain(struct farm *f, struct run *r, int i)
{
	int e;

	if (r->fd[i] < 0)
		return;
	if (r->file[i] >= 0) {
		if (to_results(r, i) == 0)
			close_fd(&r->fd[i]);
		return;
	}
	switch (obuf_read(&r->out[i], r->fd[i])) {
	case 1:
		if (f->o->line_buffer)
			deliver_lines(f, r, 0);
		return;
	case -1:
		/* no room for what it prints (TMPDIR full, no descriptor): it is not recorded */
		e = errno;
		err_clear();
		output_failed(r, e, spill_what());
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

/*
 * Every task that exited is seen to have exited before any is finished:
 * tasks that ended at the same instant as a failure that halts the run
 * (--halt now) ended on their own, and are recorded as such.
 */
static void
reap(struct farm *f, double now)
{
	struct run **ended = xmalloc((size_t)(f->nr + 1) * sizeof *ended);
	int n = 0, status;
	struct rusage ru;
	pid_t pid;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		struct run *r = find_pid(f, pid);

		if (!r) {
			guard_reaped(&f->guard, pid);
			continue;
		}
		usagefarm_end(f, r, now, status, &ru);
		r->exited = 1;
		r->status = status;
		r->ended_at = now;
		/* what is in the pipes now is all the task wrote (or its children, so far) */
		drain(f, r, 0);
		drain(f, r, 1);
		ended[n++] = r;
	}
	for (int i = 0; i < n; i++)
		finish_task(f, ended[i], now);
	free(ended);
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
		if (f->stop_at == 0)
			f->stop_at = now;
		if (f->stop == 0) {
			f->stop = 1;
			f->ht.hup = si.ssi_signo == SIGHUP;
			warnx_("%s: no new tasks; waiting for %d running (again to end %s)",
			    sigabbrev_np((int)si.ssi_signo), f->st.running, plural((unsigned)f->st.running,
			    "it", "them"));
		} else if (f->stop == 1) {
			f->stop = 2;
			warnx_("%s: ending %d running %s", sigabbrev_np((int)si.ssi_signo), f->st.running,
			    plural((unsigned)f->st.running, "task", "tasks"));
			/* what we end now did not finish: no record, --resume runs it (as parallel) */
			for (int i = 0; i < f->nr; i++)
				if (f->r[i].task && !f->r[i].exited)
					f->r[i].stopped = 1;
			halt_terminate_all(f, now);
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

		/*
		 * A held end: decided at its time, or at once when the farm stops:
		 * a stop answers what a killed task waited to learn. A fault's hold
		 * waits on through a first signal's stop (verdict.h rule 3: its
		 * server's word decides what the fault took), not through a second.
		 */
		if (r->task && r->exited && r->hold_until > 0 && (now >= r->hold_until ||
		    (f->stop_at > 0 && (!r->m.fault_hold || f->stop > 1)))) {
			finish_task(f, r, now);
			continue;
		}

		if (!r->task || r->exited)
			continue;
		d = deadline(f, r);
		if (d > 0 && now >= d) {
			r->timed_out = 1;
			f->guard.sweep = 1;
			halt_terminate(r, now);
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
		if (f->g[i].h.fault_at > 0)
			sooner(&next, now + 0.2);
	if (f->prog.mode != PROGRESS_NONE)
		sooner(&next, now + 0.5);
	sooner(&next, usagefarm_due(f));
	/* a start that found no process or descriptor to spare: try again then */
	if (f->sh.short_until > 0 && f->stop == 0)
		sooner(&next, f->sh.short_until);
	/* --delay: wake when the next task may start */
	if (f->o->delay > 0 && f->stop == 0 && (!f->st.inputs_done || f->q.retry))
		sooner(&next, f->next_start > now ? f->next_start : now + 0.001);
	/* --load, --noswap, --memfree held a task back: look at the host again */
	if (hostlimit_on(&f->o->host) && f->stop == 0 && (!f->st.inputs_done || f->q.retry))
		sooner(&next, now + 1.0);
	/* -j auto's next look at the devices, while there is something to decide */
	if (auto_next(f) > 0 && (f->st.running > 0 || f->q.retry || !f->st.inputs_done))
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
	usagefarm_tick(f, clock_mono());
	reap(f, clock_mono());
	deadlines(f, clock_mono());
	nodes_tick(f, clock_mono());
	auto_tick(f, clock_mono());
	health_check(f, clock_mono());
	free(p);
	free(who);
}

/* ---- the run --------------------------------------------------------- */

/* The line again, at most every 0.2 s, and at once when task output cleared it. */
static void
progress(struct farm *f, double now)
{
	struct run *newest = NULL;
	struct sbuf arg;

	if (f->prog.mode == PROGRESS_NONE || (now - f->ou.last_draw < 0.2 && f->prog.drawn))
		return;
	f->ou.last_draw = now;
	/* the bar shows the input of the task started last, as parallel's */
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && (!newest || f->r[i].start > newest->start))
			newest = &f->r[i];
	sbuf_init(&arg);
	for (int i = 0; newest && i < newest->task->a.nflat; i++) {
		if (i > 0)
			sbuf_addc(&arg, ' ');
		sbuf_add(&arg, newest->task->a.flat[i]);
	}
	progress_draw(&f->prog, &f->st, f->g, f->ng, now, arg.buf);
	sbuf_free(&arg);
}

static int
exit_status(struct farm *f)
{
	if (f->fatal || f->ou.out_failed)
		return FARM_EXIT_ERROR;
	if (f->ht.halt_status >= 0)
		return f->ht.halt_status;
	/* tasks a stop ended are not done */
	if (f->dropped > 0)
		return FARM_EXIT_ERROR;
	/* SIGHUP alone (no second signal): GNU parallel exits with its tasks' status */
	if (f->ht.hup && f->stop == 1)
		return f->st.failed > 100 ? 101 : (int)f->st.failed;
	/* a signal that came after the last task started stopped nothing */
	if (f->st.interrupted && !f->ht.halt_stopped && !(f->st.inputs_done && !f->q.retry && !f->q.suspects))
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
	struct farm f = {.o = o, .sigfd = -1, .devnull = -1, .ht.halt_status = -1, .ou.next_print = 1};
	struct rusage ru;
	sigset_t old;
	int rc;

	f.j.fd = -1;
	f.lock.fd = -1;
	f.guard.fd = f.guard.rec = f.guard.runs = -1;
	f.st.t0 = clock_mono();
	f.b = b;
	if (setup_signals(&f, &old) < 0 || setup_prepare(&f, b) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		/* refused before it began: a joblog the lock created goes too */
		joblock_abandon(&f.lock);
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
		if (f.st.running == 0 && (f.stop > 0 || (f.st.inputs_done && !f.q.retry && !f.q.suspects)) &&
		    (!f.nodes || f.stop > 0 || !nodes_idle(&f, now)))
			break;
		progress(&f, now);
		wait_events(&f);
	}
	f.st.t_end = clock_mono();
	auto_energy(&f, 1);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		f.st.max_rss_kib = ru.ru_maxrss;
	deliver_flush(&f, 1);
	progress_end(&f.prog, &f.st, f.g, f.ng, f.st.t_end);
	if (f.dropped > 0 && f.stop_at > 0)
		warnx_("%llu %s the stop ended %s not recorded: --resume runs %s again", f.dropped,
		    plural(f.dropped, "task", "tasks"), plural(f.dropped, "is", "are"),
		    plural(f.dropped, "it", "them"));
	/* a farm over nodes exits with the whole farm's status (farm/nodes.h) */
	f.st.exit_status = nodes_exit_status(&f, exit_status(&f));
	if (o->bar || o->eta || o->progress || o->summary)
		progress_summary(&f.st, f.g, f.ng, stderr);
	if (o->json && !f.ou.out_broken)
		progress_json(&f.st, f.g, f.ng, stdout);
	/* a count is remembered from a run that went its whole way */
	auto_finish(&f, !f.st.interrupted && !f.fatal);
	rc = f.st.exit_status;
	/* a run that was stopped, or ended tasks early, leaves nothing of theirs running */
	if (f.st.interrupted || f.fatal || f.dropped > 0)
		f.guard.sweep = 1;
	setup_cleanup(&f);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
