/*
 * finish: ending tasks. A task that exited either runs again (--retries,
 * or for free when another MPS client's fault ended it) or ends for good:
 * one joblog record, its output delivered, --halt checked. verdict.c
 * decides which (end_decide); apply() here does it. Asking running tasks
 * to end, and stopping the farm, are halt.c's, which calls nothing here.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/oom.h"
#include "farm/state.h"
#include "farm/stop.h"
#include "farm/trace.h"
#include "farm/verdict.h"
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

/*
 * --halt as GNU parallel 20221122 decides it, exit status included: fail=1
 * (and done=1) give the task's own status (128 + signal when killed),
 * fail=N and done=N the number of failures (101 when none failed for done=N:
 * parallel's min(undef, 101)), N% the percentage of tasks that failed,
 * success=N 0. A percentage is of every task, counted ahead.
 */
static void
check_halt(struct farm *f, int ok, int exitval, int sig, double now)
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
		f->ht.halt_status = 0;
	} else if (f->ht.halt_status < 0) {
		if (o->halt_pct > 0)
			f->ht.halt_status = (int)ceil((double)f->st.failed * 100.0 / (double)f->total_tasks);
		else if (o->halt_on == HALT_ON_DONE && f->st.failed == 0)
			f->ht.halt_status = 101;
		else
			f->ht.halt_status = f->st.failed > 101 ? 101 : (int)f->st.failed;
		if (count == 1)
			/* perl: exitstatus or (signal ? 128 + signal : 0); a timeout's -1 exits 255 */
			f->ht.halt_status = exitval ? exitval & 0xff : sig ? 128 + sig : 0;
	}
	if (f->stop > 0 && f->ht.halt_stopped)
		return;
	f->ht.halt_stopped = 1;
	f->st.interrupted = 1;
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
		halt_terminate_all(f, now);
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
	if (f->rt.nruntimes < 999) {
		xgrow(&f->rt.runtimes, &f->rt.cap_runtimes, f->rt.nruntimes + 1, sizeof *f->rt.runtimes);
		f->rt.runtimes[f->rt.nruntimes++] = secs;
	} else {
		f->rt.runtimes[f->started % 999] = secs;
	}
	n = f->rt.nruntimes;
	v = xmalloc(n * sizeof *v);
	memcpy(v, f->rt.runtimes, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_double);
	f->rt.median = v[(n - 1) / 2];
	free(v);
}

/* The Receive column: the bytes the task wrote (to --results files too: they come through gpupack). */
static unsigned long long
received(struct run *r)
{
	/* parallel's Receive: the bytes of the task's stdout (--results files included: they pass through) */
	return r->out[0].raw;
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
		f->guard.sweep = 1;
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
	if (r->m.alone)
		r->g->h.solo = 0;
	r->m.alone = 0;
	r->hold_until = 0;
	r->m.fault_t = 0;
	r->m.fault_hold = 0;
	r->m.hang_t = 0;
	group_end(r->g, now);
	f->st.running--;
	/* what it held is free: a start that found none tries again now */
	f->sh.short_until = 0;
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
		halt_uncount(f, ok);
		halt_output_lost(f, "--files", e);
		return;
	}
	obuf_init(&line[0]);
	obuf_init(&line[1]);
	obuf_add(&line[0], path, strlen(path));
	obuf_add(&line[0], "\n", 1);
	free(path);
	deliver_done(f, rec, ok, line);
}

/* ---- the end of an attempt: facts, the verdict (farm/verdict.h), its effects ---- */

/* What the verdict is decided from: the attempt's own facts, asked of the parts that know them. */
static void
gather(struct farm *f, struct run *r, struct end_facts *x, double now)
{
	const struct task *t = r->task;
	int ok;

	*x = (struct end_facts){.status = r->status, .timed_out = r->timed_out, .skipped = r->skipped,
		.ended = r->ended_at, .halted = r->halted, .stopped = r->stopped, .terminated = r->terminated,
		.was_held = r->hold_until > 0, .fault_held = r->m.fault_t, .mps = r->g->mps != NULL,
		.alone = r->m.alone, .attempts = t->attempts, .own_reruns = t->own_reruns,
		.fault_retries = t->fault_retries, .culprit = -1};
	ok = end_ok(x);
	x->node_kill = !ok && nodes_killed(f, r);
	if (!ok && x->mps && r->m.fault_t == 0) {
		/* it says its GPU context died of a fault: the clients beside it may hang (health.c) */
		if (oom_fault_in_output(&r->out[1], r->file[1]))
			health_fault_said(f, r, now);
		/* an MPS device's daemon or server that failed under it took the attempt (r->lost) */
		health_task_failed(f, r, now);
	}
	x->lost = r->lost;
	if (!ok && x->mps) {
		/* its server logged a fault since it started, or a client said one then (health.c) */
		x->logged = farm_mps_fault(r->g, r->m.mps_off);
		x->fault = x->logged || r->g->h.fault_said >= r->start;
		x->others = health_others(f, r);
		x->contained = health_fault_contained(f, r);
		x->first = x->fault && health_fault_first(r, now);
		x->culprit = x->fault ? farm_mps_culprit(r->g, r->m.mps_off, r->pid) : -1;
	}
	x->oom = !ok && !r->lost && auto_oom(f, r);
	/* --ctag, --color: a last line without its newline gets one, as in parallel */
	if (obuf_end_line(&r->out[0]) < 0 || obuf_end_line(&r->out[1]) < 0)
		r->out_err = 1;
	if (f->o->line_buffer && !x->halted)
		deliver_lines(f, r, 1);
	results_close(f, r);
	x->out_err = r->out_err;
	x->node_unrecorded = nodes_unrecorded(f, r);
}

/* The record: the joblog's columns, then the output and the record together (deliver.c). */
static void
record(struct farm *f, struct run *r, int ok, double now)
{
	struct task *t = r->task;
	int exitval = 0, sig = 0;
	struct joblog_rec rec;

	/* GNU parallel's joblog: a task killed by a signal has Exitval 0, a timeout -1 */
	if (WIFEXITED(r->status))
		exitval = WEXITSTATUS(r->status);
	else if (WIFSIGNALED(r->status))
		sig = WTERMSIG(r->status);
	if (r->timed_out)
		exitval = -1;
	if (r->skipped)
		exitval = -2;   /* parallel's record of a task a perl replacement string skipped */
	/* --round-robin, --bin: what the task was given is known at its end */
	if (pipe_spread(&f->o->pipe) != PIPE_BLOCKS)
		r->sent = farm_block_bytes(f, t);
	rec = (struct joblog_rec){t->seq, r->start_wall, now - r->start, received(r), exitval, sig,
	    r->command, nodes_host(f), r->sent};
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
	if (f->res.file.path) {
		struct obuf none[2];

		if (results_file_add(&f->res.file, &rec, t->a.flat, t->a.nflat, r->out) < 0) {
			int e = errno;

			err_clear();
			halt_uncount(f, ok);
			halt_output_lost(f, f->res.name, e);
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
	check_halt(f, ok, exitval, sig, now);
}

/* Its output could not be kept: no record; no new task starts, said once in one line. */
static void
output_lost(struct farm *f, struct run *r)
{
	char where[PATH_MAX + 16];

	if (r->out_what && strcmp(r->out_what, "--results") == 0 && f->o->results)
		snprintf(where, sizeof where, "--results %s", f->o->results);
	else
		str_copy(where, r->out_what ? r->out_what : "output", sizeof where);
	halt_output_lost(f, where, r->out_err);
	resdir_forget(r);
}

/* Not recorded: --resume runs it again. What it printed is shown (print); what is left of it ends. */
static void
unrecorded(struct farm *f, struct run *r, const struct end_decision *d)
{
	if (d->dropped)
		f->dropped++;
	if (d->print)
		deliver(f, r->task->seq, r->out);
	r->terminated = 1;
	resdir_forget(r);
}

/* An end that waits: its slot stays taken; the loop decides again at d->until (or at a stop). */
static void
hold(struct farm *f, struct run *r, const struct end_decision *d, double now)
{
	r->hold_until = d->until;
	r->m.fault_hold = d->hold == HOLD_FAULT || d->hold == HOLD_LATE || d->hold == HOLD_LOG;
	if (d->hold == HOLD_FAULT || d->hold == HOLD_LATE)
		r->m.fault_t = now;
	if (d->hold == HOLD_FAULT)
		health_fault_held(f, r, now);
}

/* The verdict's effects, each once: count the end, then record, requeue or forget; free the slot. */
static void
apply(struct farm *f, struct run *r, const struct end_decision *d, double now)
{
	struct task *t = r->task;
	enum end_verdict v = d->v;

	if (v == END_WAIT) {
		hold(f, r, d, now);
		return;
	}
	/* -j auto counts every end; a lost attempt says nothing about the packing */
	auto_ended(f, r, d->ok || r->lost, now);
	if (r->g->mps && !d->ok && farm_mps_fault(r->g, r->m.mps_off)) {
		health_fault_seen(r->g, now);
		/* a fault its server logged only while its end was held (HOLD_LATE): the others are watched now */
		if (r->m.fault_t > 0 && r->g->h.hang_from < r->m.fault_t)
			health_fault_held(f, r, now);
	}
	if (d->spent)
		warnx_("input %llu: %s again, after %d reruns: not run again", t->seq,
		    r->lost ? r->lost : "out of memory", t->own_reruns);
	if (v == END_RECORD && resdir_keep(r) < 0) {
		/* the files could not take their names: the output is lost after all */
		r->out_err = errno ? errno : EIO;
		r->out_what = "--results";
		err_clear();
		v = END_OUTPUT_LOST;
	}
	switch (v) {
	case END_RECORD:
		record(f, r, d->ok, now);
		break;
	case END_RETRY:
		t->attempts++;
		f->st.retried++;
		t->suspect = 0;
		break;
	case END_SUSPECT:
		t->fault_retries++;
		t->suspect = d->alone;
		f->st.fault_retries++;
		break;
	case END_RERUN:
		queue_rerun_own(f, t, d->why);
		break;
	case END_UNRECORDED:
		unrecorded(f, r, d);
		break;
	case END_OUTPUT_LOST:
		output_lost(f, r);
		break;
	case END_WAIT:
		break;
	}
	finish_release(f, r, now);
	if (v == END_RETRY || v == END_SUSPECT)
		queue_requeue(f, t);
	else if (v != END_RERUN)
		task_free(f, t);
}

/* GPUPACK_TRACE: the facts an end was decided from, and the verdict (farm/trace.h) */
static void
trace_end(const struct run *r, const struct end_facts *x, const struct end_farm *s,
    const struct end_decision *d, double now)
{
	static const char *const holds[] = {"", " hold=stop", " hold=node", " hold=fault", " hold=late",
		" hold=log"};
	char how[32];

	if (!trace_on())
		return;
	if (WIFSIGNALED(x->status))
		snprintf(how, sizeof how, "signal:%d", WTERMSIG(x->status));
	else
		snprintf(how, sizeof how, "exit:%d", WIFEXITED(x->status) ? WEXITSTATUS(x->status) : -1);
	trace_event(now, "end seq=%llu pid=%d gpu=%d %s ran=%.3f timed_out=%d terminated=%d lost=%s "
	    "stop=%d mps=%d fault=%d logged=%d culprit=%d others=%d first=%d contained=%d alone=%d "
	    "oom=%d held=%.3f attempts=%d fault_retries=%d own_reruns=%d -> %s%s%s%s%s",
	    r->task->seq, (int)r->pid, r->g->gpu_index, how, x->ended - r->start, x->timed_out, x->terminated,
	    x->lost ? "yes" : "no", s->stop, x->mps, x->fault, x->logged, x->culprit, x->others, x->first,
	    x->contained, x->alone, x->oom, x->fault_held > 0 ? x->fault_held - r->start : 0, x->attempts,
	    x->fault_retries, x->own_reruns, end_name(d->v), d->v == END_WAIT ? holds[d->hold] : "",
	    d->v == END_SUSPECT && d->alone ? " alone" : "", d->v == END_RERUN ? " why=" : "",
	    d->v == END_RERUN && d->why ? d->why : "");
}

void
finish_task(struct farm *f, struct run *r, double now)
{
	struct end_facts x;
	struct end_farm s = {f->stop, f->stop_at, f->o->retries};
	struct end_decision d;

	gather(f, r, &x, now);
	d = end_decide(&x, &s, now);
	trace_end(r, &x, &s, &d, now);
	apply(f, r, &d, now);
}
