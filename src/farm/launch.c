/*
 * launch: start tasks on free slots. The slot is the least loaded device's
 * (suspects of an MPS fault wait for an idle server and run alone there);
 * the task gets its command line from the template (exec'd directly when it
 * needs no shell), its environment (CUDA_VISIBLE_DEVICES, GPUPACK_*,
 * PARALLEL_SEQ and PARALLEL_JOBSLOT, the MPS client's), its stdout and
 * stderr (pipes, --results files as GNU parallel lays them out, or ours
 * under -u) and its own process group. --dry-run prints each command
 * instead.
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/shell.h"
#include "farm/spawn.h"
#include "farm/state.h"
#include "farm/stop.h"
#include "farm/trace.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* ---- slots ----------------------------------------------------------- */

/* The least loaded device with a free slot, and that slot; NULL when none. */
static struct run *
pick_slot(struct farm *f, double now)
{
	struct group *best = NULL;
	double best_load = 2;

	if (!auto_may_start(f))
		return NULL;
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		double load;

		if (g->running >= g->jobs || g->h.solo || farm_mps_blocked(g, now) || !health_ready(f, g, now))
			continue;
		load = (double)g->running / g->jobs;
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

		if (g->mps && g->running == 0 && g->cap > 0 && !farm_mps_blocked(g, now) &&
		    health_ready(f, g, now))
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
	if (strcmp(name, f->ex.exec_name) != 0 || !f->ex.exec_name[0]) {
		str_copy(f->ex.exec_name, name, sizeof f->ex.exec_name);
		f->ex.exec_found = spawn_resolve(name, f->ex.exec_path, sizeof f->ex.exec_path) == 0;
	}
	return f->ex.exec_found ? f->ex.exec_path : NULL;
}

void
launch_vals(const struct farm *f, const struct task *t, int slot, const char *gpu,
    struct job_vals *v, int *status)
{
	*status = 0;
	*v = (struct job_vals){t->a.flat, t->a.nflat, t->a.nrec, t->seq, slot, gpu, f->o->ts.noarg,
	    f->total_tasks, status, 0};
	static char *cat_value[] = {"$PARALLEL_TMP"};

	/* --pipe: the value is the block's file, the task's stdin, not an argument */
	if (f->o->pipe.on && !f->o->pipe.tee && !f->o->pipe.cat)
		v->n = 0;
	/* --cat: {} is $PARALLEL_TMP, the block's file in the task's environment, as in parallel */
	if (f->o->pipe.on && !f->o->pipe.tee && f->o->pipe.cat && v->n > 0) {
		v->v = cat_value;
		v->n = 1;
		v->raw = 1;
	}
}

/* A task's command line (under --retry-failed the joblog's lines are the inputs, and {} the command). */
static char *
task_line(const struct farm *f, const struct job_vals *v)
{
	return tmpl_build_cmd(&f->cmd, v);
}

/*
 * What to exec for a line: its words when the shell would run it as one
 * plain command of a program on PATH, else the shell with -c (as GNU
 * parallel runs every line).
 */
static char **
line_argv(struct farm *f, const char *line, const char **path)
{
	char **argv = shell_direct_argv(line);

	if (argv && (*path = resolve(f, argv[0])) != NULL)
		return argv;
	shell_argv_free(argv);
	argv = xcalloc(4, sizeof *argv);
	argv[0] = xstrdup(f->shell);
	argv[1] = xstrdup("-c");
	argv[2] = xstrdup(line);
	*path = f->shell;
	return argv;
}

/* Descriptors the child gets as stdout and stderr: results files, ours (-u), or pipes. */
static int
task_fds(struct farm *f, struct run *r, const struct job_vals *v, int child[2])
{
	int p[2];

	r->fd[0] = r->fd[1] = r->file[0] = r->file[1] = -1;
	/* --results: through pipes too, so that a write that fails (a full disk) is gpupack's to see */
	if (f->o->results && resdir_open(f, r, v) < 0)
		return -1;
	if (f->o->ungroup && !f->o->results) {
		/* with --json stdout carries the summary alone: a task's stdout is stderr */
		child[0] = f->o->json ? 2 : 1;
		child[1] = 2;
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
	/* the run's token: how a killed run's leftovers are found (guard.h) */
	extra[n++] = xstrdup(f->guard.env);
	/* what GNU parallel tells its jobs */
	extra[n++] = xasprintf("PARALLEL_SEQ=%llu", r->task->seq);
	extra[n++] = xasprintf("PARALLEL_JOBSLOT=%d", r->slot);
	extra[n++] = xasprintf("PARALLEL_PID=%ld", (long)getpid());
	/* the host is this one: parallel's ":" (what --plus's {host} and {sshlogin} give) */
	extra[n++] = xstrdup("PARALLEL_SSHHOST=:");
	extra[n++] = xstrdup("PARALLEL_SSHLOGIN=:");
	if (f->o->slot_var)
		extra[n++] = xasprintf("%s=%d", f->o->slot_var, r->slot - 1);
	if (f->o->pipe.on && !f->o->pipe.tee && f->o->pipe.cat && r->task->a.nflat > 0)
		extra[n++] = xasprintf("PARALLEL_TMP=%s", r->task->a.flat[0]);
	if (r->g->mps)
		n += farm_mps_env(r->g, f->o->sm_pct, f->o->mem, extra + n);
	return n;
}

/*
 * A task's stdin: /dev/null, or under --pipe its block (--tee: all of
 * stdin) through a pipe, as parallel gives it (a program may tell a pipe
 * from a file: wc pads its counts otherwise). cat(1) writes the file into
 * the pipe and exits (a task that stops reading ends it by SIGPIPE). -1
 * with err set.
 */
static int
task_stdin(struct farm *f, const struct task *t)
{
	const char *file = f->o->pipe.tee ? f->o->tee_file : f->o->pipe.on && !f->o->pipe.cat &&
	    t->a.nflat > 0 ? t->a.flat[0] : NULL;
	char *argv[] = {"cat", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	int fd, p[2], rc;
	pid_t pid;

	if (!file)
		return f->devnull;
	/* --round-robin, --bin: the fifo itself (gpupack holds a reader, so this does not wait) */
	if (pipe_spread(&f->o->pipe) != PIPE_BLOCKS) {
		if ((fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
			if (fd >= 0)
				close(fd);
			return err_sys(EXIT_ENV, "--round-robin: %s", file);
		}
		return fd;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(EXIT_ENV, "--pipe: %s", file);
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(fd);
		return err_sys(EXIT_ENV, "pipe");
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	/* the farm's blocked signals are not cat's: SIGPIPE ends it when the task stops reading */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &none);
	sigaddset(&none, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(&pid, "cat", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(fd);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		errno = rc;
		return err_sys(EXIT_ENV, "--pipe: cat");
	}
	return p[0];
}

/* --filter: does every filter hold for this task (perl's truth)? Errors: *status TMPL_FAILED. */
static int
filters_pass(struct farm *f, const struct job_vals *v, int *status)
{
	int pass = 1;

	for (int i = 0; i < f->o->nfilters && pass && !(*status & TMPL_FAILED); i++) {
		char *code = tmpl_build(&f->filt[i], v);

		if (perl_test(&f->perl, code, &pass) < 0)
			*status |= TMPL_FAILED;
		free(code);
	}
	return pass;
}

/*
 * A task's environment: gpupack's without the variables the farm sets
 * (filtered once: filtering it for every task was half of what a task cost
 * gpupack), then the task's own.
 */
static char **
task_envp(struct farm *f, char **extra, int nextra)
{
	char **env;

	if (!f->envk.base_env) {
		f->envk.base_env = spawn_env(NULL, 0, f->envk.keys, f->envk.nkeys);
		while (f->envk.base_env[f->envk.nbase_env])
			f->envk.nbase_env++;
	}
	env = xmalloc((f->envk.nbase_env + (size_t)nextra + 1) * sizeof *env);
	memcpy(env, f->envk.base_env, f->envk.nbase_env * sizeof *env);
	memcpy(env + f->envk.nbase_env, extra, (size_t)nextra * sizeof *env);
	env[f->envk.nbase_env + (size_t)nextra] = NULL;
	return env;
}

/* What `tput CAP </dev/tty` prints, as parallel asks it (else dflt). */
static char *
tput(const char *cap, const char *dflt)
{
	char cmd[64], buf[64];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof cmd, "sh -c \"tput %s </dev/tty\" 2>/dev/null", cap);
	if ((p = popen(cmd, "r")) != NULL) {
		n = fread(buf, 1, sizeof buf - 1, p);
		pclose(p);
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return xstrdup(n > 0 ? buf : dflt);
}

/*
 * --ctag, --color: parallel's colours, background and foreground, chosen by
 * the task's seq from its list (readable pairs, reordered so that
 * neighbours differ: by index % 23, then index % 7 descending).
 */
static void
seq_color(unsigned long long seq, char *out, size_t size)
{
	static const int dark[][2] = {{6, 7}, {9, 11}, {13, 15}, {40, 51}, {75, 87}, {113, 123}, {147, 159},
	    {171, 182}, {185, 231}, {249, 254}};
	static const int light[][2] = {{1, 9}, {12, 13}, {16, 45}, {52, 81}, {88, 114}, {124, 149}, {160, 178},
	    {180, 180}, {182, 184}, {196, 214}, {232, 250}};
	int bg[512], fg[512], n = 0, order[512], k;

	for (size_t i = 0; i < sizeof dark / sizeof dark[0]; i++)
		for (int c = dark[i][0]; c <= dark[i][1]; c++, n++)
			bg[n] = c, fg[n] = 0;
	for (size_t i = 0; i < sizeof light / sizeof light[0]; i++)
		for (int c = light[i][0]; c <= light[i][1]; c++, n++)
			bg[n] = c, fg[n] = 231;
	/* a stable sort by (i % 23, -(i % 7)), as perl's */
	k = 0;
	for (int a = 0; a < 23; a++)
		for (int b = 6; b >= 0; b--)
			for (int i = 0; i < n; i++)
				if (i % 23 == a && i % 7 == b)
					order[k++] = i;
	k = order[seq % (unsigned long long)n];
	snprintf(out, size, "\033[48;5;%03d;38;5;%03dm", bg[k], fg[k]);
}

/* The tag every output line of the task starts with (--tag, --tagstring, --ctag); NULL: none. */
static char *
task_tag(struct farm *f, const struct job_vals *v, unsigned long long seq)
{
	char *t, *tag, color[64];

	if (!f->o->tag && !f->o->color)
		return NULL;
	t = f->o->tag ? tmpl_build(&f->tagt, v) : NULL;
	if (!f->o->color) {
		tag = xasprintf("%s\t", t);
		free(t);
		return tag;
	}
	if (!f->ou.color_eol) {
		f->ou.color_eol = tput("el", "\033[K");
		f->ou.color_reset = tput("sgr0", "\033[m");
	}
	seq_color(seq, color, sizeof color);
	tag = xasprintf("%s%s%s%s", color, f->ou.color_eol, t ? t : "", t ? "\t" : "");
	free(t);
	return tag;
}

double
launch_timeout(const struct farm *f)
{
	if (f->o->timeout_pct <= 0)
		return f->o->timeout;
	if (f->rt.nruntimes == 0)
		return 1e6;      /* parallel: no median yet, no limit to speak of */
	/*
	 * at least 2 s: parallel's timeouts are that accurate (its tutorial), so
	 * a task of a few ms that a busy machine delays is not ended for it
	 */
	return fmax(2.0, f->o->timeout_pct / 100.0 * f->rt.median);
}

/*
 * --pipe: the bytes given to the task, GNU parallel's Send column (0 for
 * any other task): its block's, or under --round-robin and --bin what was
 * written to its fifo so far (finish.c asks again at its end).
 */
unsigned long long
farm_block_bytes(const struct farm *f, const struct task *t)
{
	if (!f->o->pipe.on || f->o->pipe.tee || t->a.nflat == 0)
		return 0;
	return pipe_sent(t->a.flat[0]);
}

/* -v: the command line is the first line of the task's output; --dry-run's print on stderr too */
static void
say_line(struct farm *f, struct run *r, const char *line)
{
	if (f->o->verbose && !f->o->results) {
		if (f->o->ungroup) {
			dprintf(f->o->json ? 2 : 1, "%s\n", line);
		} else {
			obuf_add(&r->out[0], r->tag ? r->tag : "", r->tag ? strlen(r->tag) : 0);
			obuf_add(&r->out[0], line, strlen(line));
			obuf_add(&r->out[0], "\n", 1);
		}
	}
	if (f->o->print_commands)
		dprintf(2, "%s\n", line);
}

/* It runs: its slot, its group, the watchdog and -j auto know it; line is its command's now. */
static void
started(struct farm *f, struct run *r, char *line, double now)
{
	r->term_at = r->kill_at = 0;
	r->exited = r->timed_out = r->terminated = r->halted = r->stopped = 0;
	auto_started(f, r, now);
	r->command = line;
	guard_task_started(&f->guard, r->slot, r->pid, r->task->seq);
	health_started(r->g, now);
	group_start(r->g, now);
	f->st.running++;
	f->started++;
	if (f->o->delay > 0)
		f->next_start = now + f->o->delay;
}

/* It did not start: what was made for it goes, and the slot is free. */
static void
not_started(struct run *r)
{
	for (int i = 0; i < 2; i++) {
		close_fd(&r->fd[i]);
		close_fd(&r->file[i]);
		obuf_free(&r->out[i]);
	}
	resdir_free(r);
	free(r->tag);
	r->tag = NULL;
	r->task = NULL;
}

/*
 * --wd DIR for a task: its replacement strings expanded, made (mkdir -p) when it is not
 * there, as parallel does. malloc'd; NULL with err set (EXIT_ENV) when it cannot be.
 */
static char *
task_workdir(struct farm *f, const struct job_vals *v)
{
	char *wd = tmpl_build(&f->wdt, v);
	struct stat st;

	for (char *p = wd + 1; *wd && *p; p++) {
		if (*p == '/' && p[-1] != '/') {
			*p = '\0';
			(void)mkdir(wd, 0777);   /* what failed shows below */
			*p = '/';
		}
	}
	if (*wd)
		(void)mkdir(wd, 0777);
	if (!*wd)
		errno = ENOENT;
	else if (stat(wd, &st) == 0 && !S_ISDIR(st.st_mode))
		errno = ENOTDIR;
	else if (stat(wd, &st) == 0 && access(wd, X_OK) == 0)
		return wd;
	err_sys(EXIT_ENV, "--wd %s: cannot change into it", *wd ? wd : "''");
	free(wd);
	return NULL;
}

/* Start t on r; -1 with err set and *e the errno that failed it (0: none). */
/*
 * Task t on r: its values (in v, which keeps a pointer to status: the
 * caller's, alive while the task's strings are expanded), its tag and its
 * command line (returned).
 * NULL when a perl replacement string failed: its error ends the run.
 * skip() and a failed --filter run the task as true (parallel).
 */
static char *
task_words(struct farm *f, struct run *r, struct task *t, struct job_vals *v, int *status)
{
	char *line;

	r->task = t;
	launch_vals(f, t, r->slot, r->g->t.uuid, v, status);
	line = task_line(f, v);
	r->tag = task_tag(f, v, t->seq);
	r->skipped = (*status & TMPL_SKIP) != 0 || !filters_pass(f, v, status);
	if (*status & TMPL_FAILED) {
		free(line);
		free(r->tag);
		r->tag = NULL;
		r->task = NULL;
		return NULL;
	}
	r->out[0].tag = r->out[1].tag = r->tag;
	r->out[0].end = r->out[1].end = f->o->color ? f->ou.color_reset : NULL;
	r->out[0].mid = r->out[1].mid = 0;
	return line;
}

static int
launch(struct farm *f, struct run *r, struct task *t, double now, int *e)
{
	char *extra[16 + 64], **argv = NULL, **envp, *line, *sh_argv[4] = {NULL, "-c", NULL, NULL};
	char *wd = NULL;
	const char *path;
	int nextra, child[2] = {-1, -1}, rc = 0, in;
	struct spawn_req req;
	struct job_vals v;
	int status;

	if ((line = task_words(f, r, t, &v, &status)) == NULL)
		return -1;
	nextra = task_env(f, r, extra);
	for (int i = 0; i < f->o->nenv; i++)
		extra[nextra + i] = f->o->env[i];
	envp = task_envp(f, extra, nextra + f->o->nenv);
	*e = 0;
	if (f->o->workdir && (wd = task_workdir(f, &v)) == NULL) {
		*e = EINVAL;
		rc = -1;
		goto out;
	}
	if (task_fds(f, r, &v, child) < 0) {
		*e = errno;
		rc = -1;
		goto out;
	}
	say_line(f, r, line);
	argv = line_argv(f, r->skipped ? "true" : line, &path);
	sh_argv[0] = f->shell;
	sh_argv[2] = line;
	if ((in = task_stdin(f, t)) < 0) {
		rc = -1;
		goto out;
	}
	r->sent = farm_block_bytes(f, t);
	req = (struct spawn_req){path, argv, envp, in, child[0], child[1], f->shell,
	    path == f->shell ? NULL : sh_argv, wd, f->o->nice};
	if (r->g->mps)
		r->m.mps_off = farm_mps_log_offset(r->g);
	r->start_wall = clock_wall();
	r->start = now;
	r->pid = spawn_task(&req);
	if (in != f->devnull)
		close(in);
	/* spreading: the task has its fifo; gpupack's read end goes (a task that ends: EPIPE) */
	if (pipe_spread(&f->o->pipe) != PIPE_BLOCKS && t->a.nflat > 0)
		inputs_block_done(&f->o->ts.in, t->a.flat[0]);
	if (r->pid < 0) {
		*e = errno;
		rc = -1;
		goto out;
	}
	started(f, r, line, now);
	trace_event(now, "start seq=%llu pid=%d gpu=%d attempts=%d fault_retries=%d own_reruns=%d alone=%d",
	    t->seq, (int)r->pid, r->g->gpu_index, t->attempts, t->fault_retries, t->own_reruns, r->m.alone);
	line = NULL;
out:
	if (f->o->results || !f->o->ungroup) {
		close_fd(&child[0]);
		close_fd(&child[1]);
	}
	for (int i = 0; i < nextra; i++)
		free(extra[i]);
	free(envp);
	free(line);
	free(wd);
	shell_argv_free(argv);
	if (rc < 0)
		not_started(r);
	return rc;
}

static void cannot_start(struct farm *f, int e);

/* --dry-run: what each task would run, in order, on the first device */
static void
dry_run(struct farm *f)
{
	struct task *t;

	while (f->stop == 0 && (t = queue_next(f)) != NULL) {
		struct job_vals v;
		char *line, *tag;
		struct obuf out[2];
		int status;

		launch_vals(f, t, 1, f->g[0].t.uuid, &v, &status);
		if (f->o->results) {
			/* parallel prints nothing then: each task's directory has its seq and an empty stderr */
			if (resdir_dry(f, t, &v) < 0) {
				int e = errno;

				cannot_start(f, e);
			}
			f->st.done++;
			task_free(f, t);
			continue;
		}
		line = task_line(f, &v);
		tag = task_tag(f, &v, t->seq);
		if (status & TMPL_FAILED) {
			warnx_("%s", err_msg());
			f->fatal = err_code();
			f->stop = 1;
		}
		obuf_init(&out[0]);
		obuf_init(&out[1]);
		out[0].tag = tag;
		obuf_add(&out[0], tag ? tag : "", tag ? strlen(tag) : 0);
		obuf_add(&out[0], line, strlen(line));
		obuf_add(&out[0], "\n", 1);
		f->st.done++;
		deliver(f, t->seq, out);
		free(line);
		free(tag);
		task_free(f, t);
	}
}

/*
 * No process, descriptor or memory to start t now: it waits first in line,
 * and the farm tries again later (at once when a running task ends). 0, or
 * -1 when waiting is over (nothing ran for STOP_SHORT_WAIT s).
 */
static int
shortage(struct farm *f, struct run *r, struct task *t, double now)
{
	if (f->st.running > 0 || f->sh.short_n == 0)
		f->sh.short_since = now;
	f->sh.short_n++;
	f->sh.short_until = stop_backoff(f->sh.short_n, f->sh.short_since, now, f->st.running > 0);
	if (f->sh.short_until == 0) {
		err_prefix("for %.0f s with no task running", STOP_SHORT_WAIT);
		return -1;
	}
	if (!f->sh.short_said++)
		warnx_("cannot start a task now (%s): %s (said once)", err_msg(), f->st.running > 0 ?
		    "trying again as running tasks end" : "trying again");
	err_clear();
	if (r->m.alone) {
		/* a suspect goes back where it was */
		r->m.alone = 0;
		r->g->h.solo = 0;
		t->next = f->q.suspects;
		f->q.suspects = t;
		if (!f->q.suspects_tail)
			f->q.suspects_tail = t;
		return 0;
	}
	t->next = f->q.retry;
	f->q.retry = t;
	if (!f->q.retry_tail)
		f->q.retry_tail = t;
	return 0;
}

/* A task could not start, for good: one error line; no new task starts, the running ones end. */
static void
cannot_start(struct farm *f, int e)
{
	char msg[1024];

	f->fatal = err_code() ? err_code() : EXIT_INTERNAL;
	f->stop = 1;
	f->st.interrupted = 1;
	if (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS) {
		/* a full disk: what ran is recorded, the rest waits for --resume */
		str_copy(msg, err_msg(), sizeof msg);
		err_set(f->fatal, "%s; no new task starts: %s", msg, f->j.path && !f->j.to_stdout ?
		    "run again with --resume when there is room" : "run again when there is room");
	}
	err_report();
	err_clear();
}

void
launch_fill(struct farm *f, double now)
{
	if (f->o->dry_run) {
		dry_run(f);
		return;
	}
	while (f->stop == 0 && f->sh.short_until <= now) {
		struct run *r;
		struct task *t;
		int e;

		if (f->q.suspects) {
			/*
			 * A fault ended these tasks, and the server cannot say whose
			 * illegal address it was. Each runs again as the only client
			 * of an idle server: the innocent ones finish, the culprit
			 * faults alone and is known. Nothing else starts meanwhile.
			 */
			if ((r = idle_mps_slot(f, now)) == NULL)
				return;
			t = f->q.suspects;
			f->q.suspects = t->next;
			if (!f->q.suspects)
				f->q.suspects_tail = NULL;
			r->m.alone = 1;
			r->g->h.solo = 1;
		} else if (f->o->delay > 0 && now < f->next_start - 0.008) {
			/*
			 * --delay: the loop wakes when the next start is due; but not
			 * after the last task: one more is looked for now, and kept
			 * first in line (none: the run ends with its running tasks).
			 */
			if (!f->q.retry && !f->q.suspects && (t = queue_next(f)) != NULL)
				queue_requeue(f, t);
			return;
		} else if (!hostlimit_ready(&f->o->host, now)) {
			/* --load, --noswap, --memfree: the loop looks again within a second */
			return;
		} else if ((r = pick_slot(f, now)) == NULL || (t = queue_next(f)) == NULL) {
			return;
		}
		if (launch(f, r, t, now, &e) < 0) {
			if (stop_shortage(e) && shortage(f, r, t, now) == 0)
				return;
			if (r->m.alone)
				r->g->h.solo = r->m.alone = 0;
			cannot_start(f, e);
			task_free(f, t);
			return;
		}
		f->sh.short_n = 0;
		f->sh.short_until = 0;
	}
}

