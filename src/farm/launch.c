/*
 * launch: start tasks on free slots. The slot is the least loaded device's
 * (suspects of an MPS fault wait for an idle server and run alone there);
 * the task gets its command line from the template, its environment
 * (CUDA_VISIBLE_DEVICES, GPUPACK_*, the MPS client's), its stdout and
 * stderr (pipes, or --results files) and its own process group. --dry-run
 * prints each command instead.
 */
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/spawn.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* ---- starting one task ------------------------------------------------ */

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

	while (f->stop == 0 && (t = queue_next(f)) != NULL) {
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

void
launch_fill(struct farm *f, double now)
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
		} else if ((r = pick_slot(f, now)) == NULL || (t = queue_next(f)) == NULL) {
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

