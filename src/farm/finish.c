/*
 * finish: ending tasks. Asking a running task to end (--timeout, --halt
 * now, a second signal): under MPS its server's terminate_client first,
 * then SIGTERM to its process group, SIGKILL after a grace. A task that
 * exited either runs again (--retries, or for free when another MPS
 * client's fault ended it) or ends for good: one joblog record, its output
 * delivered, --halt checked.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/oom.h"
#include "farm/state.h"
#include "farm/stop.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/knob.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void
group_end(struct group *g, double now)
{
	if (--g->running == 0) {
		g->busy += now - g->busy_since;
		g->busy_since = 0;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
finish_terminate(struct run *r, double now)
{
	if (r->terminated)
		return;
	r->terminated = 1;
	r->kill_at = now + FARM_KILL_GRACE;
	if (!r->g->mps) {
		kill(-r->pid, SIGTERM);
		auto_wake(r);
		return;
	}
	farm_mps_terminate(r->g, r->pid);
	r->term_at = now + FARM_MPS_TERM_WAIT;
	r->kill_at += FARM_MPS_TERM_WAIT;
}

void
finish_terminate_all(struct farm *f, double now)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && !f->r[i].exited)
			finish_terminate(&f->r[i], now);
}

/*
 * --halt as GNU parallel 20221122 decides it, exit status included: fail=1
 * (and done=1) give the task's own status (128 + signal when killed),
 * fail=N and done=N the number of failures (101 when none failed for done=N:
 * parallel's min(undef, 101)), N% the percentage of tasks that failed,
 * success=N 0. A percentage is of every task, counted ahead.
 */
static void
check_halt(struct farm *f, struct run *r, int ok, int exitval, int sig, double now)
{
	const struct farm_opts *o = f->o;
	long long limit = -1;
	double count = (double)o->halt_count;

	if (o->halt_when == HALT_NEVER)
		return;
	if (!ok && o->halt_on == HALT_ON_FAIL)
		limit = (long long)f->st.failed;
	else if (ok && o->halt_on == HALT_ON_SUCCESS)
		limit = (long long)f->st.done;
	if (o->halt_on == HALT_ON_DONE)
		limit = (long long)(f->st.done + f->st.failed);
	if (limit < 0)
		return;
	if (o->halt_pct > 0)
		count = (double)f->total_tasks * o->halt_pct / 100.0;
	if ((double)limit < count)
		return;
	if (o->halt_on == HALT_ON_SUCCESS) {
		f->halt_status = 0;
	} else if (f->halt_status < 0) {
		if (o->halt_pct > 0)
			f->halt_status = (int)ceil((double)f->st.failed * 100.0 / (double)f->total_tasks);
		else if (o->halt_on == HALT_ON_DONE && f->st.failed == 0)
			f->halt_status = 101;
		else
			f->halt_status = f->st.failed > 101 ? 101 : (int)f->st.failed;
		if (count == 1)
			/* perl: exitstatus or (signal ? 128 + signal : 0); a timeout's -1 exits 255 */
			f->halt_status = exitval ? exitval & 0xff : sig ? 128 + sig : 0;
	}
	if (f->stop > 0 && f->halt_stopped)
		return;
	f->halt_stopped = 1;
	f->st.interrupted = 1;
	(void)r;
	warnx_("--halt: %s after %lld %s", o->halt_when == HALT_NOW ? "ending running tasks" :
	    "waiting for running tasks", limit, o->halt_on == HALT_ON_FAIL ?
	    plural((unsigned long long)limit, "failure", "failures") : o->halt_on == HALT_ON_SUCCESS ?
	    plural((unsigned long long)limit, "success", "successes") :
	    plural((unsigned long long)limit, "task done", "tasks done"));
	if (o->halt_when == HALT_NOW) {
		/* the tasks ended here are not logged: --resume runs them again, as parallel's */
		for (int i = 0; i < f->nr; i++)
			if (f->r[i].task && !f->r[i].exited)
				f->r[i].halted = 1;
		f->stop = 2;
		finish_terminate_all(f, now);
	} else if (f->stop < 1) {
		f->stop = 1;
	}
}

/* --timeout N%: the lower median of the last 999 successful runtimes (parallel's remedian). */
void
finish_record_runtime(struct farm *f, double secs)
{
	double *v;
	size_t n;

	if (f->o->timeout_pct <= 0)
		return;
	if (f->nruntimes < 999) {
		xgrow(&f->runtimes, &f->cap_runtimes, f->nruntimes + 1, sizeof *f->runtimes);
		f->runtimes[f->nruntimes++] = secs;
	} else {
		f->runtimes[f->started % 999] = secs;
	}
	n = f->nruntimes;
	v = xmalloc(n * sizeof *v);
	memcpy(v, f->runtimes, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_double);
	f->median = v[(n - 1) / 2];
	free(v);
}

/* The Receive column: the bytes the task wrote (to --results files too: they come through gpupack). */
static unsigned long long
received(struct run *r)
{
	/* parallel's Receive: the bytes of the task's stdout (--results files included: they pass through) */
	return r->out[0].raw;
}

void
finish_output_failed(struct farm *f, const char *what, int e)
{
	if (f->out_failed)
		return;
	f->out_failed = 1;
	f->st.interrupted = 1;
	if (f->stop < 1)
		f->stop = 1;
	err_set(EXIT_ENV, "%s: %s: no new task starts; the tasks whose output was lost are not "
	    "recorded: %s", what, strerror(e), f->j.path && !f->j.to_stdout ?
	    "run again with --resume when there is room" : "run them again when there is room");
	err_report();
	err_clear();
}

void
finish_uncount(struct farm *f, int ok)
{
	if (ok && f->st.done > 0)
		f->st.done--;
	else if (!ok && f->st.failed > 0)
		f->st.failed--;
}

/*
 * --results: the task's files whole before its record says it is done
 * (synced when there is a joblog to keep the promise to), and any error in
 * writing them is its output's.
 */
static void
results_close(struct farm *f, struct run *r)
{
	for (int i = 0; i < 2; i++) {
		int e = 0;

		if (r->file[i] < 0)
			continue;
		if (f->j.path && !f->j.to_stdout && fdatasync(r->file[i]) < 0 && errno != EINVAL)
			e = errno;
		if (close(r->file[i]) < 0 && !e)
			e = errno;
		r->file[i] = -1;
		if (e && !r->out_err) {
			r->out_err = e;
			r->out_what = "--results";
		}
	}
}

/*
 * The attempt's output could not be kept: no record. A shortage that
 * passes (descriptors, memory) runs it again; else the run stops starting
 * tasks and --resume runs it.
 */
static void
output_lost(struct farm *f, struct run *r, double now)
{
	struct task *t = r->task;
	char where[PATH_MAX + 16];

	if (stop_shortage(r->out_err) && f->stop == 0 &&
	    queue_rerun_own(f, t, "its output could not be kept") == 0) {
		finish_release(f, r, now);
		return;
	}
	if (r->out_what && strcmp(r->out_what, "--results") == 0 && f->o->results)
		snprintf(where, sizeof where, "--results %s", f->o->results);
	else
		str_copy(where, r->out_what ? r->out_what : "output", sizeof where);
	finish_output_failed(f, where, r->out_err);
	resdir_forget(r);
	finish_release(f, r, now);
	task_free(f, t);
}

void
finish_release(struct farm *f, struct run *r, double now)
{
	for (int i = 0; i < 2; i++) {
		close_fd(&r->fd[i]);
		close_fd(&r->file[i]);
		obuf_free(&r->out[i]);
	}
	/*
	 * A task that was ended or killed leaves nothing: its group, and the
	 * descendants that carry its number (setsid'd ones too) at once, as the
	 * run goes on; the run's end takes the orphans that carry nothing.
	 */
	if (r->terminated || (r->exited && WIFSIGNALED(r->status)))
		kill(-r->pid, SIGKILL);
	if ((r->timed_out || (r->exited && WIFSIGNALED(r->status))) && r->task) {
		guard_sweep(&f->guard, r->task->seq);
		f->sweep = 1;
	}
	guard_task_ended(&f->guard, r->slot, r->pid);
	resdir_free(r);
	free(r->command);
	r->command = NULL;
	free(r->tag);
	r->tag = NULL;
	r->out[0].tag = r->out[1].tag = NULL;
	r->task = NULL;
	r->lost = NULL;
	r->out_err = 0;
	r->out_what = NULL;
	if (r->alone)
		r->g->solo = 0;
	r->alone = 0;
	r->hold_until = 0;
	r->fault_t = 0;
	r->hang_t = 0;
	group_end(r->g, now);
	f->st.running--;
	/* what it held is free: a start that found none tries again now */
	f->short_until = 0;
}

/*
 * An attempt a stop ended: no record, not counted; --resume runs it again.
 * What it printed is shown (print), but for --halt now's (parallel prints
 * none of those).
 */
static void
drop(struct farm *f, struct run *r, int print, double now)
{
	struct task *t = r->task;

	f->dropped++;
	if (print && f->o->line_buffer)
		deliver_lines(f, r, 1);
	if (print)
		deliver(f, t->seq, r->out);
	/* what is left of its group goes with it */
	r->terminated = 1;
	resdir_forget(r);
	finish_release(f, r, now);
	task_free(f, t);
}

void
finish_fatal(struct farm *f, double now)
{
	if (f->fatal)
		return;
	err_report();
	f->fatal = err_code() ? err_code() : EXIT_INTERNAL;
	f->st.interrupted = 1;
	f->stop = 2;
	/* what is ended now is not the tasks' result: not logged, --resume runs it (as --halt now) */
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && !f->r[i].exited)
			f->r[i].halted = 1;
	finish_terminate_all(f, now);
}

/* Should a failed attempt run again? Counts the retry it takes. */
static int
retry(struct farm *f, struct run *r)
{
	struct task *t = r->task;

	if (f->stop > 0 || (r->terminated && !r->timed_out))
		return 0;
	t->suspect = 0;
	/*
	 * A fault while it ran with others: it may be a victim, so it runs
	 * again, alone, without spending --retries. A fault while it ran alone
	 * was its own: it is the culprit, and only --retries may rerun it.
	 */
	if (r->g->mps && farm_mps_fault(r->g, r->mps_off)) {
		if (r->g->fault_at == 0)
			r->g->fault_at = clock_mono();
		if (!r->alone && t->fault_retries < FARM_FAULT_RETRIES && !health_fault_contained(f, r)) {
			t->fault_retries++;
			t->suspect = 1;
			f->st.fault_retries++;
			return 1;
		}
	}
	/* --retries N: N tries in all, as GNU parallel counts them */
	if (t->attempts + 1 >= f->o->retries)
		return 0;
	t->attempts++;
	f->st.retried++;
	return 1;
}

/* --files: the output into its file; the file's name, a line, is the task's output (farm/results.h) */
static void
deliver_par_file(struct farm *f, const struct joblog_rec *rec, int ok, struct obuf out[2], double now)
{
	struct obuf line[2];
	char *path;

	if (results_par_file(&out[0], &path) < 0) {
		int e = errno;

		err_clear();
		finish_uncount(f, ok);
		finish_output_failed(f, "--files", e);
		return;
	}
	obuf_init(&line[0]);
	obuf_init(&line[1]);
	obuf_add(&line[0], path, strlen(path));
	obuf_add(&line[0], "\n", 1);
	free(path);
	deliver_done(f, rec, ok, line);
}

void
finish_task(struct farm *f, struct run *r, double now)
{
	struct task *t = r->task;
	int exitval = 0, sig = 0, ok, oom;
	struct joblog_rec rec;
	double until;

	/* GNU parallel's joblog: a task killed by a signal has Exitval 0, a timeout -1 */
	if (WIFEXITED(r->status))
		exitval = WEXITSTATUS(r->status);
	else if (WIFSIGNALED(r->status))
		sig = WTERMSIG(r->status);
	if (r->timed_out)
		exitval = -1;
	if (r->skipped)
		exitval = -2;   /* parallel's record of a task a perl replacement string skipped */
	ok = exitval == 0 && sig == 0;
	/* farm.record_stopped: the torture harness's injected fault, a stop's tasks recorded */
	if (r->halted || (r->stopped && !knob(KNOB_FARM_RECORD_STOPPED))) {
		/* gpupack ended it: not logged (nor printed, for --halt now), as in parallel */
		drop(f, r, r->stopped, now);
		return;
	}
	if (!r->timed_out && !knob(KNOB_FARM_RECORD_STOPPED)) {
		/* killed from outside: by the stop the farm is (or is about to be) told of? */
		switch (stop_verdict(r->status, r->ended_at, f->stop_at, now, &until)) {
		case STOP_WAIT:
			r->hold_until = until;
			return;
		case STOP_DROP:
			drop(f, r, 1, now);
			return;
		case STOP_RECORD:
			break;
		}
	}
	if (!ok && nodes_hold(f, r, now))
		return; /* killed: was it the farm's end? the loop finishes it soon (farm/nodes.h) */
	/* an MPS device's daemon or server that failed under it took the attempt */
	if (!ok && r->g->mps && r->fault_t == 0)
		health_task_failed(f, r, now);
	/* it says its GPU context died of a fault: the clients beside it may hang (health.c) */
	if (!ok && r->g->mps && r->fault_t == 0 && oom_fault_in_output(&r->out[1], r->file[1]))
		health_fault_said(f, r, now);
	/* a GPU fault beside other clients: a moment to see whether it took them too (health.c) */
	if (!ok && health_fault_hold(f, r, now))
		return;
	/* -j auto counts every end; a lost attempt says nothing about the packing */
	oom = auto_ended(f, r, ok || r->lost);
	if (!ok && r->lost) {
		if (f->stop == 0 && queue_rerun_own(f, t, r->lost) == 0) {
			finish_release(f, r, now);
			return;
		}
		if (f->stop > 0) {
			/* not the task's result, and the run is stopping: unrecorded, --resume runs it */
			resdir_forget(r);
			finish_release(f, r, now);
			task_free(f, t);
			return;
		}
		/* its reruns are spent: it ends as its attempt did */
	} else if (oom && f->stop == 0 && !r->terminated && queue_rerun_own(f, t, "out of memory") == 0) {
		/* out of device memory beside other tasks: gpupack's packing, not the task, failed */
		finish_release(f, r, now);
		return;
	}
	if (!ok && retry(f, r)) {
		finish_release(f, r, now);
		queue_requeue(f, t);
		return;
	}
	if (f->o->line_buffer)
		deliver_lines(f, r, 1);
	results_close(f, r);
	if (!r->out_err && resdir_keep(r) < 0) {
		r->out_err = errno ? errno : EIO;
		r->out_what = "--results";
		err_clear();
	}
	if (r->out_err) {
		output_lost(f, r, now);
		return;
	}
	if (nodes_unrecorded(f, r)) {
		/* did not finish: --resume runs it (farm/nodes.h) */
		resdir_forget(r);
		deliver(f, t->seq, r->out);
		finish_release(f, r, now);
		task_free(f, t);
		return;
	}
	rec = (struct joblog_rec){t->seq, r->start_wall, now - r->start, received(r), exitval, sig,
	    r->command, nodes_host(f)};
	if (ok)
		f->st.done++;
	else
		f->st.failed++;
	if (exitval == 0)
		finish_record_runtime(f, now - r->start);
	if (f->j.to_stdout) {
		struct sbuf b;

		sbuf_init(&b);
		journal_format(&rec, &b);
		r->out[0].tag = NULL;
		obuf_add(&r->out[0], b.buf, b.len);
		sbuf_free(&b);
	}
	/*
	 * The record is written once the output is (under -k, in its turn):
	 * output is part of a task. --results NAME.csv: the output goes into
	 * that file; --files: into a file of its own, named on stdout.
	 */
	if (f->resfile.path) {
		struct obuf none[2];

		if (results_file_add(&f->resfile, &rec, t->a.flat, t->a.nflat, r->out) < 0) {
			int e = errno;

			err_clear();
			finish_uncount(f, ok);
			finish_output_failed(f, f->results_name, e);
		} else {
			obuf_init(&none[0]);
			obuf_init(&none[1]);
			deliver_done(f, &rec, ok, none);
		}
	} else if (f->o->files) {
		deliver_par_file(f, &rec, ok, r->out, now);
	} else {
		deliver_done(f, &rec, ok, r->out);
	}
	finish_release(f, r, now);
	task_free(f, t);
	check_halt(f, r, ok, exitval, sig, now);
}
