/*
 * halt: stopping the farm, the effects the rest of the farm calls and that
 * call nothing back: asking a task to end (under MPS its server's
 * terminate_client first, then SIGTERM to its process group, SIGKILL after
 * a grace), ending every running task, an error the run cannot go on with,
 * output that could not be kept. What a task's end decides is finish.c's
 * (verdict.c decides, finish.c applies); it calls these, they never call it.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/state.h"
#include "util/err.h"

#include <signal.h>
#include <string.h>

void
halt_signal(struct run *r, double now)
{
	if (r->terminated)
		return;
	r->terminated = 1;
	r->kill_at = now + FARM_KILL_GRACE;
	kill(-r->pid, SIGTERM);
	auto_wake(r);
}

void
halt_terminate(struct run *r, double now)
{
	if (r->terminated)
		return;
	if (!r->g->mps) {
		halt_signal(r, now);
		return;
	}
	r->terminated = 1;
	r->kill_at = now + FARM_KILL_GRACE;
	farm_mps_terminate(r->g, r->pid);
	r->term_at = now + FARM_MPS_TERM_WAIT;
	r->kill_at += FARM_MPS_TERM_WAIT;
}

void
halt_terminate_all(struct farm *f, double now)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && !f->r[i].exited)
			halt_terminate(&f->r[i], now);
}

void
halt_output_lost(struct farm *f, const char *what, int e)
{
	if (f->ou.out_failed)
		return;
	f->ou.out_failed = 1;
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
halt_uncount(struct farm *f, int ok)
{
	if (ok && f->st.done > 0)
		f->st.done--;
	else if (!ok && f->st.failed > 0)
		f->st.failed--;
}

void
halt_fatal(struct farm *f, double now)
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
	halt_terminate_all(f, now);
}
