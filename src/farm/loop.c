/*
 * loop: the farm itself. One thread, one poll(2) over a signalfd (SIGCHLD,
 * SIGINT, SIGTERM, SIGUSR1) and the output pipes of running tasks. Each
 * turn it fills free slots from the retry queue and the input stream, reads
 * whatever output is ready, reaps exited tasks, and enforces deadlines.
 *
 * A running task owns one slot (struct run); slots are numbered 1.. across
 * devices ({%}). A task ends once: its final attempt writes one joblog
 * record (fdatasync'd) and prints its output whole.
 */
#include "farm/farm.h"
#include "farm/cost.h"
#include "farm/journal.h"
#include "farm/mpsfarm.h"
#include "farm/output.h"
#include "farm/progress.h"
#include "farm/slot.h"
#include "farm/spawn.h"
#include "gpu/select.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct task {
	unsigned long long seq;
	char **args;
	int attempts;            /* attempts that counted against --retries */
	int fault_retries;       /* attempts another client's fault ended */
	int suspect;             /* a fault ended its last attempt: the next one runs alone */
	struct task *next;
};

struct run {
	struct task *task;       /* NULL: the slot is free */
	struct group *g;
	int slot;                /* {%}, 1-based */
	pid_t pid;
	int fd[2];               /* read ends of the stdout and stderr pipes; -1 closed */
	int file[2];             /* --results files; -1 none */
	struct obuf out[2];
	double start_wall, start, deadline, term_at, kill_at; /* term_at: SIGTERM due */
	int exited, status, timed_out, terminated;
	char *command;           /* for the joblog */
	long mps_off;
	int alone;               /* a suspect's attempt, the only client of its server */
};

/* Finished output waiting for its turn under -k. */
struct held {
	unsigned long long seq;
	struct obuf out[2];
	struct held *next;
};

struct farm {
	struct farm_opts *o;
	struct group *g;
	int ng;
	struct run *r;
	int nr;
	struct journal j;
	struct task *retry, *retry_tail;
	struct task *suspects, *suspects_tail; /* tasks a fault ended, each to run alone */
	struct farm_stats st;
	int sigfd, devnull;
	int stop;                /* 0 running; 1 no new tasks; 2 end the running ones */
	int halt_status;         /* -1: no halt */
	int fatal;               /* an error ended launching: its exit code */
	int has_ph;
	char exec_name[256], exec_path[PATH_MAX];
	int exec_found;
	const char **keys;
	int nkeys;
	struct held *held;
	unsigned long long next_print;
	int out_broken;
	double last_draw;
};

/* ---- output ---------------------------------------------------------- */

static void
emit(struct farm *f, struct obuf out[2])
{
	if (!f->out_broken && obuf_write(&out[0], 1) < 0)
		f->out_broken = 1;
	if (obuf_write(&out[1], 2) < 0)
		return;
}

static void
flush_held(struct farm *f, int all)
{
	while (f->held && (all || f->held->seq == f->next_print)) {
		struct held *h = f->held;

		emit(f, h->out);
		f->next_print = h->seq + 1;
		f->held = h->next;
		obuf_free(&h->out[0]);
		obuf_free(&h->out[1]);
		free(h);
	}
}

/* Hand a finished task's output on: now, or in seq order under -k. */
static void
deliver(struct farm *f, unsigned long long seq, struct obuf out[2])
{
	struct held *h, **p;

	if (!f->o->keep_order) {
		emit(f, out);
		obuf_free(&out[0]);
		obuf_free(&out[1]);
		return;
	}
	h = xcalloc(1, sizeof *h);
	h->seq = seq;
	h->out[0] = out[0];
	h->out[1] = out[1];
	obuf_init(&out[0]);
	obuf_init(&out[1]);
	for (p = &f->held; *p && (*p)->seq < seq; p = &(*p)->next)
		;
	h->next = *p;
	*p = h;
	flush_held(f, 0);
}

/* ---- tasks ----------------------------------------------------------- */

static void
task_free(struct farm *f, struct task *t)
{
	args_free(t->args, f->o->in.nsrc);
	free(t);
}

static void
enqueue(struct task **head, struct task **tail, struct task *t)
{
	t->next = NULL;
	if (*tail)
		(*tail)->next = t;
	else
		*head = t;
	*tail = t;
}

static void
requeue(struct farm *f, struct task *t)
{
	if (t->suspect)
		enqueue(&f->suspects, &f->suspects_tail, t);
	else
		enqueue(&f->retry, &f->retry_tail, t);
}

static struct task *
next_task(struct farm *f)
{
	struct task *t;
	char **args;
	unsigned long long seq;
	int r;

	if ((t = f->retry) != NULL) {
		f->retry = t->next;
		if (!f->retry)
			f->retry_tail = NULL;
		return t;
	}
	while (!f->st.inputs_done) {
		r = inputs_next(&f->o->in, &args, &seq);
		if (r <= 0) {
			f->st.inputs_done = 1;
			if (r < 0) {
				warnx_("%s", err_msg());
				f->fatal = err_code();
				f->stop = 1;
			}
			return NULL;
		}
		f->st.inputs = seq;
		if (f->o->shard_n > 0 && (seq - 1) % f->o->shard_n != f->o->shard_k) {
			/* another shard's: not run, not journaled, not counted as skipped */
			f->st.others++;
		} else if (!journal_skip(&f->j, seq)) {
			t = xcalloc(1, sizeof *t);
			t->seq = seq;
			t->args = args;
			return t;
		} else {
			f->st.skipped++;
		}
		/* not run here: -k must not wait for its output */
		args_free(args, f->o->in.nsrc);
		if (f->o->keep_order) {
			struct obuf none[2];

			obuf_init(&none[0]);
			obuf_init(&none[1]);
			deliver(f, seq, none);
		}
	}
	return NULL;
}

/* ---- slots ----------------------------------------------------------- */

/* The least loaded device with a free slot, and that slot; NULL when none. */
static struct run *
pick_slot(struct farm *f, double now)
{
	struct group *best = NULL;
	double best_load = 2;

	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		double load;

		if (g->running >= g->cap || g->solo || farm_mps_blocked(g, now))
			continue;
		load = (double)g->running / g->cap;
		if (load < best_load) {
			best = g;
			best_load = load;
		}
	}
	if (!best)
		return NULL;
	for (int s = 0; s < best->cap; s++)
		if (!f->r[best->first_slot - 1 + s].task)
			return &f->r[best->first_slot - 1 + s];
	return NULL;
}

/* The first slot of an MPS device with nothing running, for a suspect; NULL when none. */
static struct run *
idle_mps_slot(struct farm *f, double now)
{
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];

		if (g->mps && g->running == 0 && g->cap > 0 && !farm_mps_blocked(g, now))
			return &f->r[g->first_slot - 1];
	}
	return NULL;
}

static void
group_start(struct group *g, double now)
{
	if (g->running++ == 0)
		g->busy_since = now;
	g->tasks++;
}

static void
group_end(struct group *g, double now)
{
	if (--g->running == 0) {
		g->busy += now - g->busy_since;
		g->busy_since = 0;
	}
}

/* ---- launching ------------------------------------------------------- */

static const char *
resolve(struct farm *f, const char *name)
{
	if (strcmp(name, f->exec_name) != 0 || !f->exec_name[0]) {
		str_copy(f->exec_name, name, sizeof f->exec_name);
		f->exec_found = spawn_resolve(name, f->exec_path, sizeof f->exec_path) == 0;
	}
	return f->exec_found ? f->exec_path : NULL;
}

static char *
command_line(char **argv, int shell)
{
	struct sbuf b;

	if (shell)
		return xstrdup(argv[2]);
	sbuf_init(&b);
	for (int i = 0; argv[i]; i++) {
		if (i > 0)
			sbuf_addc(&b, ' ');
		shell_quote(&b, argv[i]);
	}
	return sbuf_detach(&b);
}

static int
open_results(struct farm *f, struct run *r, unsigned long long seq)
{
	static const char *const name[2] = {"stdout", "stderr"};
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%llu", f->o->results, seq);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "--results %s", path);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%llu/%s", f->o->results, seq, name[i]);
		r->file[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (r->file[i] < 0)
			return err_sys(EXIT_ENV, "--results %s", path);
	}
	return 0;
}

/* Descriptors the child gets as stdout and stderr: results files or pipes. */
static int
task_fds(struct farm *f, struct run *r, int child[2])
{
	int p[2];

	r->fd[0] = r->fd[1] = r->file[0] = r->file[1] = -1;
	if (f->o->results) {
		if (open_results(f, r, r->task->seq) < 0)
			return -1;
		child[0] = r->file[0];
		child[1] = r->file[1];
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return err_sys(EXIT_ENV, "pipe");
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		r->fd[i] = p[0];
		child[i] = p[1];
	}
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int
task_env(struct farm *f, struct run *r, char **extra)
{
	int n = 0;

	extra[n++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", r->g->t.uuid);
	extra[n++] = xasprintf("GPUPACK_SEQ=%llu", r->task->seq);
	extra[n++] = xasprintf("GPUPACK_SLOT=%d", r->slot);
	extra[n++] = xasprintf("GPUPACK_GPU=%s", r->g->t.uuid);
	if (r->g->mps)
		n += farm_mps_env(r->g, f->o->sm_pct, f->o->mem, extra + n);
	return n;
}

static int
launch(struct farm *f, struct run *r, struct task *t, double now)
{
	struct task_vars v = {t->args, f->o->in.nsrc, t->seq, r->slot, r->g->t.uuid, 0};
	char *extra[16 + 64], **argv, **envp;
	int nextra, child[2] = {-1, -1}, rc = 0;
	struct spawn_req req;

	r->task = t;
	argv = template_argv(f->o->cmd, f->o->ncmd, f->has_ph, f->o->shell, &v);
	nextra = task_env(f, r, extra);
	for (int i = 0; i < f->o->nenv; i++)
		extra[nextra + i] = f->o->env[i];
	envp = spawn_env(extra, nextra + f->o->nenv, f->keys, f->nkeys);
	if (task_fds(f, r, child) < 0) {
		rc = -1;
		goto out;
	}
	req = (struct spawn_req){resolve(f, argv[0]), argv, envp, f->devnull, child[0], child[1]};
	if (r->g->mps)
		r->mps_off = farm_mps_log_offset(r->g);
	r->start_wall = clock_wall();
	r->start = now;
	r->pid = spawn_task(&req);
	if (r->pid < 0) {
		rc = -1;
		goto out;
	}
	r->deadline = f->o->timeout > 0 ? now + f->o->timeout : 0;
	r->term_at = r->kill_at = 0;
	r->exited = r->timed_out = r->terminated = 0;
	r->command = command_line(argv, f->o->shell);
	group_start(r->g, now);
	f->st.running++;
out:
	if (!f->o->results) {
		close_fd(&child[0]);
		close_fd(&child[1]);
	}
	for (int i = 0; i < nextra; i++)
		free(extra[i]);
	free(envp);
	args_free(argv, -1);
	if (rc < 0) {
		for (int i = 0; i < 2; i++) {
			close_fd(&r->fd[i]);
			close_fd(&r->file[i]);
		}
		r->task = NULL;
	}
	return rc;
}

/* --dry-run: what each task would run, in order, on the first device */
static void
dry_run(struct farm *f)
{
	struct task *t;

	while (f->stop == 0 && (t = next_task(f)) != NULL) {
		struct task_vars v = {t->args, f->o->in.nsrc, t->seq, 1, f->g[0].t.uuid, 0};
		char **argv = template_argv(f->o->cmd, f->o->ncmd, f->has_ph, f->o->shell, &v);
		char *line = command_line(argv, f->o->shell);
		struct obuf out[2];

		obuf_init(&out[0]);
		obuf_init(&out[1]);
		obuf_add(&out[0], line, strlen(line));
		obuf_add(&out[0], "\n", 1);
		f->st.done++;
		deliver(f, t->seq, out);
		free(line);
		args_free(argv, -1);
		task_free(f, t);
	}
}

static void
fill(struct farm *f, double now)
{
	if (f->o->dry_run) {
		dry_run(f);
		return;
	}
	while (f->stop == 0) {
		struct run *r;
		struct task *t;

		if (f->suspects) {
			/*
			 * A fault ended these tasks, and the server cannot say whose
			 * illegal address it was. Each runs again as the only client
			 * of an idle server: the innocent ones finish, the culprit
			 * faults alone and is known. Nothing else starts meanwhile.
			 */
			if ((r = idle_mps_slot(f, now)) == NULL)
				return;
			t = f->suspects;
			f->suspects = t->next;
			if (!f->suspects)
				f->suspects_tail = NULL;
			r->alone = 1;
			r->g->solo = 1;
		} else if ((r = pick_slot(f, now)) == NULL || (t = next_task(f)) == NULL) {
			return;
		}
		if (launch(f, r, t, now) < 0) {
			warnx_("%s", err_msg());
			f->fatal = err_code() ? err_code() : EXIT_INTERNAL;
			f->stop = 1;
			task_free(f, t);
			return;
		}
	}
}

/* ---- ending tasks ---------------------------------------------------- */

/* End a task: under MPS terminate_client first; SIGTERM to its group; SIGKILL after a grace. */
static void
terminate(struct run *r, double now)
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

static void
terminate_all(struct farm *f, double now)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && !f->r[i].exited)
			terminate(&f->r[i], now);
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
		terminate_all(f, now);
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

static void
release(struct farm *f, struct run *r, double now)
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

static void
finish(struct farm *f, struct run *r, double now)
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
		release(f, r, now);
		requeue(f, t);
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
	release(f, r, now);
	task_free(f, t);
	check_halt(f, ok, sig ? 128 + sig : exitval < 0 ? 255 : exitval, now);
}

/* Read what the task printed; finish it once it exited and its pipes are drained. */
static void
drain(struct farm *f, struct run *r, int i)
{
	if (r->fd[i] < 0)
		return;
	switch (obuf_read(&r->out[i], r->fd[i])) {
	case 1:
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

		if (!r)
			continue;
		r->exited = 1;
		r->status = status;
		/* what is in the pipes now is all the task wrote (or its children, so far) */
		drain(f, r, 0);
		drain(f, r, 1);
		finish(f, r, now);
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
			warnx_("%s: no new tasks; waiting for %d running (again to end them)",
			    sigabbrev_np((int)si.ssi_signo), f->st.running);
		} else if (f->stop == 1) {
			f->stop = 2;
			warnx_("%s: ending %d running tasks", sigabbrev_np((int)si.ssi_signo), f->st.running);
			terminate_all(f, now);
		}
	}
	if (child)
		reap(f, now);
}

static void
deadlines(struct farm *f, double now)
{
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (!r->task || r->exited)
			continue;
		if (r->deadline > 0 && now >= r->deadline && !r->timed_out) {
			r->timed_out = 1;
			terminate(r, now);
		}
		if (r->term_at > 0 && now >= r->term_at) {
			kill(-r->pid, SIGTERM);
			r->term_at = 0;
		}
		if (r->kill_at > 0 && now >= r->kill_at) {
			kill(-r->pid, SIGKILL);
			r->kill_at = now + 3600;
		}
	}
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
		if (r->deadline > 0 && !r->timed_out && (next == 0 || r->deadline < next))
			next = r->deadline;
		if (r->term_at > 0 && (next == 0 || r->term_at < next))
			next = r->term_at;
		if (r->kill_at > 0 && (next == 0 || r->kill_at < next))
			next = r->kill_at;
	}
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].fault_at > 0 && (next == 0 || now + 0.2 < next))
			next = now + 0.2;
	if ((f->o->bar || f->o->eta) && (next == 0 || now + 0.5 < next))
		next = now + 0.5;
	/*
	 * SIGCHLD alone is not trusted: a thread of a library (NVML starts one)
	 * that does not block it can take the signal from the signalfd. Tasks
	 * are also reaped on every wake-up, so at worst one is seen this late.
	 */
	if (f->st.running > 0 && (next == 0 || now + 0.25 < next))
		next = now + 0.25;
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
	free(p);
	free(who);
}

/* ---- setup ----------------------------------------------------------- */

static void
farm_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
}

void
farm_block_signals(void)
{
	sigset_t set;

	farm_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static int
setup_signals(struct farm *f, sigset_t *old)
{
	sigset_t set;

	farm_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
	signal(SIGPIPE, SIG_IGN);
	f->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (f->sigfd < 0)
		return err_sys(EXIT_INTERNAL, "signalfd");
	f->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (f->devnull < 0)
		return err_sys(EXIT_ENV, "/dev/null");
	return 0;
}

static int
select_targets(struct farm *f, const struct gpu_system *sys, struct gpu_target **t, int *n)
{
	const char *from, *sel = slot_default_selection(f->o->gpus, &from);

	if (sel && strcmp(from, "CUDA_VISIBLE_DEVICES") == 0 &&
	    (!*sel || str_starts(sel, "-1") || strcmp(sel, "NoDevFiles") == 0))
		return err_set(EXIT_ENV, "CUDA_VISIBLE_DEVICES='%s' hides every device; "
		    "unset it or give --gpus", sel);
	if (gpu_select(sys, sel, t, n) < 0)
		return err_prefix("%s", strcmp(from, "--gpus") == 0 ? "--gpus" : from);
	if (*n == 0) {
		free(*t);
		return err_set(EXIT_ENV, "no GPU to run on (%s)", sys->backend);
	}
	return 0;
}

static int
make_groups(struct farm *f, const struct gpu_system *sys, struct gpu_target *t, int n)
{
	int slot = 1, any = 0;
	uint64_t best = 0;

	f->g = xcalloc((size_t)n, sizeof *f->g);
	f->ng = n;
	for (int i = 0; i < n; i++) {
		struct group *g = &f->g[i];
		const struct gpu_info *gi = &sys->gpus[t[i].gpu];

		g->t = t[i];
		g->gpu_index = gi->index;
		g->mig_slices = t[i].gi >= 0 ? gi->gi[t[i].gi].ci[t[i].ci].slices : 0;
		g->cap = pack_capacity(f->o->share, f->o->jobs, f->o->mem, t[i].mem_free, g->mig_slices,
		    &g->limit);
		if (t[i].mem_free > best)
			best = t[i].mem_free;
	}
	pack_total(f->g, n, f->o->total);
	for (int i = 0; i < n; i++) {
		f->g[i].first_slot = slot;
		slot += f->g[i].cap;
		any |= f->g[i].cap > 0;
	}
	f->nr = slot - 1;
	if (!any) {
		char a[32], b[32];

		return err_set(EXIT_USAGE, "no selected device has room for one task: --mem %s plus "
		    "%s of context per task, largest free memory %s", format_size(f->o->mem, a, sizeof a),
		    format_size(FARM_CTX_OVERHEAD, b, sizeof b), format_size(best, b, sizeof b));
	}
	f->r = xcalloc((size_t)f->nr, sizeof *f->r);
	for (int i = 0; i < f->ng; i++)
		for (int s = 0; s < f->g[i].cap; s++) {
			struct run *r = &f->r[f->g[i].first_slot - 1 + s];

			r->g = &f->g[i];
			r->slot = f->g[i].first_slot + s;
			r->fd[0] = r->fd[1] = r->file[0] = r->file[1] = -1;
			obuf_init(&r->out[0]);
			obuf_init(&r->out[1]);
		}
	return 0;
}

static int
check_options(struct farm *f)
{
	struct farm_opts *o = f->o;

	if (o->share == SHARE_DEFAULT)
		o->share = farm_mps_available() ? SHARE_MPS : SHARE_TIMESLICE;
	if (o->sm_pct > 0 && o->share != SHARE_MPS)
		return err_set(EXIT_USAGE, "--sm needs --share mps (it is an MPS thread percentage)");
	if (o->share == SHARE_EXCLUSIVE && o->jobs > 1)
		return err_set(EXIT_USAGE, "--share exclusive runs one task per device: -j %d "
		    "asks for more (use --share mps or timeslice)", o->jobs);
	return 0;
}

static void
env_keys(struct farm *f)
{
	static const char *const fixed[] = {"CUDA_VISIBLE_DEVICES=", "GPUPACK_SEQ=", "GPUPACK_SLOT=",
		"GPUPACK_GPU=", "CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="};
	int nf = (int)(sizeof fixed / sizeof fixed[0]);

	f->keys = xcalloc((size_t)(nf + f->o->nenv), sizeof *f->keys);
	for (int i = 0; i < nf; i++)
		f->keys[f->nkeys++] = fixed[i];
	for (int i = 0; i < f->o->nenv; i++)
		f->keys[f->nkeys++] = xstrndup(f->o->env[i], (size_t)(strchr(f->o->env[i], '=') - f->o->env[i] + 1));
}

/*
 * Which command a joblog belongs to: the template, --shell, and the kinds of
 * the input sources. Not their values: as with parallel, inputs may grow at
 * the end between runs (a task is its seq).
 */
static uint64_t
identity(const struct farm_opts *o)
{
	uint64_t h = JOURNAL_HASH_INIT;

	h = journal_hash(h, o->shell ? "sh" : "argv", o->shell ? 3 : 5);
	for (int i = 0; i < o->ncmd; i++)
		h = journal_hash(h, o->cmd[i], strlen(o->cmd[i]) + 1);
	for (int i = 0; i < o->in.nsrc; i++)
		h = journal_hash(h, o->in.src[i].name ? "file" : "args", 5);
	return h;
}

static int
prepare(struct farm *f, struct gpu_backend *b)
{
	struct gpu_system sys;
	struct gpu_target *t = NULL;
	int n = 0, rc;

	if (check_options(f) < 0)
		return -1;
	if (gpu_snapshot(b, &sys, 0) < 0)
		return -1;
	rc = select_targets(f, &sys, &t, &n);
	if (rc == 0)
		rc = make_groups(f, &sys, t, n);
	free(t);
	gpu_system_free(&sys);
	if (rc < 0)
		return -1;
	if (f->o->results && mkdir(f->o->results, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_USAGE, "--results %s", f->o->results);
	if (inputs_open(&f->o->in) < 0)
		return -1;
	if (f->o->share == SHARE_MPS && farm_mps_setup(f->g, f->ng) < 0)
		return -1;
	if (journal_open(&f->j, f->o->joblog, f->o->joblog_append, f->o->resume, f->o->resume_failed,
	    identity(f->o)) < 0) {
		farm_mps_teardown(f->g, f->ng);
		return -1;
	}
	env_keys(f);
	f->has_ph = 0;
	for (int i = 0; i < f->o->ncmd; i++)
		f->has_ph |= template_has_placeholder(f->o->cmd[i]);
	return 0;
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
	if (f->st.interrupted && !(f->st.inputs_done && !f->retry && !f->suspects))
		return FARM_EXIT_ERROR;
	if (f->st.failed > 100)
		return 101;
	return (int)f->st.failed;
}

static void
cleanup(struct farm *f)
{
	struct task *t;

	/* nothing outlives the run: tasks still here are ended (an error path) */
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (r->task && !r->exited) {
			kill(-r->pid, SIGKILL);
			waitpid(r->pid, NULL, 0);
		}
		if (r->task) {
			task_free(f, r->task);
			r->terminated = 0;
			release(f, r, clock_mono());
		}
	}
	while ((t = f->suspects) != NULL) {
		f->suspects = t->next;
		task_free(f, t);
	}
	while ((t = f->retry) != NULL) {
		f->retry = t->next;
		task_free(f, t);
	}
	flush_held(f, 1);
	farm_mps_teardown(f->g, f->ng);
	journal_close(&f->j);
	for (int i = 8; i < f->nkeys; i++)
		free((char *)f->keys[i]);
	free(f->keys);
	free(f->r);
	free(f->g);
	if (f->sigfd >= 0)
		close(f->sigfd);
	if (f->devnull >= 0)
		close(f->devnull);
}

int
farm_run(struct farm_opts *o, struct gpu_backend *b)
{
	struct farm f = {.o = o, .sigfd = -1, .devnull = -1, .halt_status = -1, .next_print = 1};
	struct rusage ru;
	sigset_t old;
	int rc;

	f.j.fd = -1;
	f.st.t0 = clock_mono();
	if (setup_signals(&f, &old) < 0 || prepare(&f, b) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		cleanup(&f);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return rc;
	}
	f.st.share = o->share;
	f.st.shard_k = o->shard_k;
	f.st.shard_n = o->shard_n;
	f.st.t0 = clock_mono();
	for (;;) {
		double now = clock_mono();

		fill(&f, now);
		if (f.st.running == 0 && (f.stop > 0 || (f.st.inputs_done && !f.retry && !f.suspects)))
			break;
		progress(&f, now);
		wait_events(&f);
	}
	f.st.t_end = clock_mono();
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		f.st.max_rss_kib = ru.ru_maxrss;
	if (o->bar || o->eta)
		progress_clear();
	flush_held(&f, 1);
	f.st.exit_status = exit_status(&f);
	if (o->bar || o->eta || o->summary)
		progress_summary(&f.st, f.g, f.ng, stderr);
	if (o->json && !f.out_broken)
		progress_json(&f.st, f.g, f.ng, stdout);
	rc = f.st.exit_status;
	cleanup(&f);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
