/*
 * finish: ending tasks. Asking a running task to end (--timeout, --halt
 * now, a second signal): under MPS its server's terminate_client first,
 * then SIGTERM to its process group, SIGKILL after a grace. A task that
 * exited either runs again (--retries, or for free when another MPS
 * client's fault ended it) or ends for good: one joblog record, its output
 * delivered, --halt checked.
 */
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"

#include <signal.h>
#include <stdlib.h>
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

void
finish_terminate(struct run *r, double now)
{
	if (r->terminated)
		return;
	r->terminated = 1;
	r->kill_at = now + FARM_KILL_GRACE;
	if (!r->g->mps) {
		kill(-r->pid, SIGTERM);
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

static int
halt_reached(struct farm *f)
{
	const struct farm_opts *o = f->o;
	unsigned long long ended = f->st.done + f->st.failed;
	unsigned long long n = o->halt_success ? f->st.done : f->st.failed;

	if (o->halt_when == HALT_NEVER)
		return 0;
	if (o->halt_count > 0)
		return n >= (unsigned long long)o->halt_count;
	return ended > 0 && (double)n * 100.0 >= o->halt_pct * (double)ended;
}

static void
check_halt(struct farm *f, int success, int status, double now)
{
	if (f->halt_status >= 0 || success != f->o->halt_success || !halt_reached(f))
		return;
	f->halt_status = success ? 0 : status;
	f->st.interrupted = 1;
	warnx_("--halt: %s after %llu %s", f->o->halt_when == HALT_NOW ? "ending running tasks" :
	    "waiting for running tasks", success ? f->st.done : f->st.failed,
	    success ? "successes" : "failures");
	f->stop = f->o->halt_when == HALT_NOW ? 2 : 1;
	if (f->stop == 2)
		finish_terminate_all(f, now);
}

static unsigned long long
received(struct run *r)
{
	struct stat st;
	unsigned long long n = 0;

	for (int i = 0; i < 2; i++) {
		if (r->file[i] >= 0 && fstat(r->file[i], &st) == 0)
			n += (unsigned long long)st.st_size;
		n += r->out[i].total;
	}
	return n;
}

void
finish_release(struct farm *f, struct run *r, double now)
{
	for (int i = 0; i < 2; i++) {
		close_fd(&r->fd[i]);
		close_fd(&r->file[i]);
		obuf_free(&r->out[i]);
	}
	/* a task we ended may have left children in its group */
	if (r->terminated)
		kill(-r->pid, SIGKILL);
	free(r->command);
	r->command = NULL;
	r->task = NULL;
	if (r->alone)
		r->g->solo = 0;
	r->alone = 0;
	group_end(r->g, now);
	f->st.running--;
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
		if (!r->alone && t->fault_retries < FARM_FAULT_RETRIES) {
			t->fault_retries++;
			t->suspect = 1;
			f->st.fault_retries++;
			return 1;
		}
	}
	if (t->attempts >= f->o->retries)
		return 0;
	t->attempts++;
	f->st.retried++;
	return 1;
}

void
finish_task(struct farm *f, struct run *r, double now)
{
	struct task *t = r->task;
	int exitval = 0, sig = 0, ok;
	struct joblog_rec rec;

	if (WIFEXITED(r->status))
		exitval = WEXITSTATUS(r->status);
	else if (WIFSIGNALED(r->status)) {
		exitval = -1;
		sig = WTERMSIG(r->status);
	}
	ok = exitval == 0 && sig == 0 && !r->timed_out;
	if (!ok && retry(f, r)) {
		finish_release(f, r, now);
		queue_requeue(f, t);
		return;
	}
	if (r->timed_out && exitval == 0 && sig == 0)
		exitval = -1;
	rec = (struct joblog_rec){t->seq, r->start_wall, now - r->start, received(r), exitval, sig,
	    r->command};
	if (journal_end(&f->j, &rec) < 0) {
		warnx_("%s", err_msg());
		f->fatal = err_code();
		f->stop = 1;
	}
	if (ok)
		f->st.done++;
	else
		f->st.failed++;
	deliver(f, t->seq, r->out);
	finish_release(f, r, now);
	task_free(f, t);
	check_halt(f, ok, sig ? 128 + sig : exitval < 0 ? 255 : exitval, now);
}

