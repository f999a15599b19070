/*
 * workers: posix_spawn, pipes and poll. Nothing here knows what a worker
 * measures; runner_worker.c reads the lines.
 */
#include "bench/workers.h"
#include "bench/bench.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ERR_KEEP 1024

struct live {
	int out_fd, err_fd;   /* -1 once closed */
	int in_fd;            /* serve workers: their stdin; else -1 */
	struct sbuf out, err;
	int reaped;
};

static int
dropped(const char *kv)
{
	return str_starts(kv, "CUDA_VISIBLE_DEVICES=") || str_starts(kv, "CUDA_MPS_");
}

char **
env_clean(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 1, sizeof *env);
	for (size_t i = 0; i < n; i++)
		if (!dropped(environ[i]))
			env[k++] = xstrdup(environ[i]);
	return env;
}

char **
env_add(char **env, char *kv)
{
	size_t n = 0;

	while (env[n])
		n++;
	env = xrealloc(env, (n + 2) * sizeof *env);
	env[n] = kv;
	env[n + 1] = NULL;
	return env;
}

void
env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

static void
close_pair(int *p)
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

static int
spawn_one(const struct wspec *s, struct wresult *r, struct live *l, int serve)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1}, rc;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    (serve && pipe2(in, O_CLOEXEC) < 0)) {
		rc = err_sys(EXIT_ENV, "pipe");
		close_pair(out);
		close_pair(errp);
		close_pair(in);
		return rc;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
	if (serve)
		posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	else
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	{
		sigset_t none, dflt;

		sigemptyset(&none);
		sigemptyset(&dflt);
		sigaddset(&dflt, SIGINT);
		sigaddset(&dflt, SIGTERM);
		sigaddset(&dflt, SIGPIPE);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &dflt);
	}
	r->t_spawn = clock_wall();
	rc = posix_spawn(&r->pid, s->argv[0], &fa, &attr, s->argv, s->env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(out[1]);
	close(errp[1]);
	if (in[0] >= 0)
		close(in[0]);
	if (rc != 0) {
		close(out[0]);
		close(errp[0]);
		if (in[1] >= 0)
			close(in[1]);
		errno = rc;
		return err_sys(EXIT_ENV, "%s", s->argv[0]);
	}
	l->out_fd = out[0];
	l->err_fd = errp[0];
	l->in_fd = in[1];
	return 0;
}

/* Read what is there; close at end of file. Keeps the head (tail: the end) within keep bytes. */
static void
drain(int *fd, struct sbuf *b, size_t keep, int tail)
{
	char buf[4096];
	ssize_t n = read(*fd, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (!tail) {
		if (b->len < keep)
			sbuf_addn(b, buf, (size_t)n < keep - b->len ? (size_t)n : keep - b->len);
		return;
	}
	/* the last line matters (gpupack run prints its summary after the tasks' output) */
	sbuf_addn(b, buf, (size_t)n);
	if (b->len > keep) {
		memmove(b->buf, b->buf + (b->len - keep), keep);
		b->len = keep;
		b->buf[keep] = '\0';
	}
}

static void
kill_all(struct wresult *res, struct live *l, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (res[i].pid > 0 && !l[i].reaped)
			kill(res[i].pid, sig);
}

static int
reap(struct wresult *res, struct live *l, int n, int block)
{
	int left = 0;

	for (int i = 0; i < n; i++) {
		pid_t p;

		if (res[i].pid <= 0 || l[i].reaped)
			continue;
		p = waitpid(res[i].pid, &res[i].status, block ? 0 : WNOHANG);
		if (p == res[i].pid || (p < 0 && errno == ECHILD))
			l[i].reaped = 1;
		else
			left++;
	}
	return left;
}

/* Ask nicely, then not: a worker that ignores SIGTERM for 3 s is killed. */
static void
stop_all(struct wresult *res, struct live *l, int n)
{
	double until = clock_mono() + 3;

	kill_all(res, l, n, SIGTERM);
	while (reap(res, l, n, 0) > 0 && clock_mono() < until)
		usleep(20000);
	kill_all(res, l, n, SIGKILL);
	reap(res, l, n, 1);
}

static int
open_fds(struct live *l, int n, struct pollfd *pf, int *who)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (l[i].out_fd >= 0) {
			pf[k] = (struct pollfd){.fd = l[i].out_fd, .events = POLLIN};
			who[k++] = 2 * i;
		}
		if (l[i].err_fd >= 0) {
			pf[k] = (struct pollfd){.fd = l[i].err_fd, .events = POLLIN};
			who[k++] = 2 * i + 1;
		}
	}
	return k;
}

/* Has each of the first n workers printed a whole line on stdout, or closed it? */
static int
all_lines(const struct live *l, int n)
{
	for (int i = 0; i < n; i++)
		if (l[i].out_fd >= 0 && !(l[i].out.buf && strchr(l[i].out.buf, '\n')))
			return 0;
	return 1;
}

/*
 * Read the workers' output until every pipe is closed (lines > 0: until the
 * first `lines` workers have a line each), at most timeout.
 */
static int
collect(struct live *l, int n, double timeout, int lines)
{
	struct pollfd *pf = xcalloc((size_t)n * 2, sizeof *pf);
	int *who = xcalloc((size_t)n * 2, sizeof *who);
	double until = clock_mono() + timeout;
	int k, rc = 0;

	while ((k = open_fds(l, n, pf, who)) > 0 && !(lines > 0 && all_lines(l, lines))) {
		double left = until - clock_mono();

		if (bench_interrupted) {
			rc = err_set(EXIT_INTERNAL, "interrupted");
			break;
		}
		if (left <= 0) {
			rc = err_set(EXIT_INTERNAL, "workers still running after %.0f s", timeout);
			break;
		}
		if (poll(pf, (nfds_t)k, left > 0.2 ? 200 : (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			rc = err_sys(EXIT_INTERNAL, "poll");
			break;
		}
		for (int j = 0; j < k; j++) {
			int i = who[j] / 2;

			if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (who[j] % 2 == 0)
				drain(&l[i].out_fd, &l[i].out, (size_t)1 << 20, 1);
			else
				drain(&l[i].err_fd, &l[i].err, ERR_KEEP, 0);
		}
	}
	free(pf);
	free(who);
	return rc;
}

/* Reap every worker, polling: one that closed its pipes is nearly gone, but never wait forever. */
static int
reap_all(struct wresult *res, struct live *l, int n, double timeout)
{
	double until = clock_mono() + timeout;

	while (reap(res, l, n, 0) > 0) {
		if (bench_interrupted)
			return err_set(EXIT_INTERNAL, "interrupted");
		if (clock_mono() >= until)
			return err_set(EXIT_INTERNAL, "workers still running after %.0f s", timeout);
		usleep(1000);
	}
	return 0;
}

struct wgroup {
	int n;
	struct wresult *res;
	struct live *l;
};

static void
close_inputs(struct wgroup *g)
{
	for (int i = 0; i < g->n; i++) {
		if (g->l[i].in_fd >= 0)
			close(g->l[i].in_fd);
		g->l[i].in_fd = -1;
	}
}

static struct wgroup *
group_start(const struct wspec *spec, int n, int serve)
{
	struct wgroup *g = xcalloc(1, sizeof *g);

	g->n = n;
	g->res = xcalloc((size_t)n, sizeof *g->res);
	g->l = xcalloc((size_t)n, sizeof *g->l);
	for (int i = 0; i < n; i++) {
		g->l[i].out_fd = g->l[i].err_fd = g->l[i].in_fd = -1;
		sbuf_init(&g->l[i].out);
		sbuf_init(&g->l[i].err);
	}
	for (int i = 0; i < n; i++) {
		if (spawn_one(&spec[i], &g->res[i], &g->l[i], serve) < 0) {
			err_prefix("starting worker %d of %d", i + 1, n);
			wgroup_free(g);
			return NULL;
		}
	}
	return g;
}

struct wgroup *
wgroup_start(const struct wspec *spec, int n)
{
	return group_start(spec, n, 0);
}

struct wgroup *
wgroup_serve(const struct wspec *spec, int n)
{
	return group_start(spec, n, 1);
}

int
wgroup_send(struct wgroup *g, int i, const char *line)
{
	size_t len = strlen(line), done = 0;
	void (*old)(int);
	int rc = 0;

	sbuf_reset(&g->l[i].out);
	sbuf_reset(&g->l[i].err);  /* what it says about this command is what counts */
	if (g->l[i].in_fd < 0)
		return err_set(EXIT_TASKS, "worker %d of %d (pid %d) takes no commands", i + 1, g->n,
		    (int)g->res[i].pid);
	/* a worker that died: EPIPE here, not a SIGPIPE that ends bench */
	old = signal(SIGPIPE, SIG_IGN);
	while (done < len) {
		ssize_t w = write(g->l[i].in_fd, line + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EPIPE) {
			rc = err_set(EXIT_TASKS, "worker %d of %d (pid %d): ended before its next command",
			    i + 1, g->n, (int)g->res[i].pid);
			break;
		}
		if (w < 0) {
			rc = err_sys(EXIT_TASKS, "worker %d of %d (pid %d): sending it a command", i + 1,
			    g->n, (int)g->res[i].pid);
			break;
		}
		done += (size_t)w;
	}
	signal(SIGPIPE, old);
	return rc;
}

int
wgroup_lines_n(struct wgroup *g, int n, double timeout)
{
	if (collect(g->l, g->n, timeout, n < g->n ? n : g->n) < 0) {
		stop_all(g->res, g->l, g->n);
		return -1;
	}
	return 0;
}

int
wgroup_lines(struct wgroup *g, double timeout)
{
	return wgroup_lines_n(g, g->n, timeout);
}

int
wgroup_wait(struct wgroup *g, double timeout)
{
	double until = clock_mono() + timeout;

	close_inputs(g);  /* serve workers end at the end of their input */
	if (collect(g->l, g->n, timeout, 0) < 0 ||
	    reap_all(g->res, g->l, g->n, until - clock_mono()) < 0) {
		stop_all(g->res, g->l, g->n);
		return -1;
	}
	return 0;
}

int
wgroup_ended(struct wgroup *g)
{
	int n = 0;

	reap(g->res, g->l, g->n, 0);
	for (int i = 0; i < g->n; i++)
		n += g->l[i].reaped;
	return n;
}

int
wgroup_reaped(const struct wgroup *g, int i)
{
	return g->l[i].reaped;
}

int
wgroup_size(const struct wgroup *g)
{
	return g->n;
}

const struct wresult *
wgroup_results(struct wgroup *g)
{
	for (int i = 0; i < g->n; i++) {
		g->res[i].out = g->l[i].out.buf;
		g->res[i].err = g->l[i].err.buf;
	}
	return g->res;
}

void
wgroup_free(struct wgroup *g)
{
	if (!g)
		return;
	close_inputs(g);
	if (reap(g->res, g->l, g->n, 0) > 0)
		stop_all(g->res, g->l, g->n);
	for (int i = 0; i < g->n; i++) {
		if (g->l[i].out_fd >= 0)
			close(g->l[i].out_fd);
		if (g->l[i].err_fd >= 0)
			close(g->l[i].err_fd);
		sbuf_free(&g->l[i].out);
		sbuf_free(&g->l[i].err);
	}
	free(g->l);
	free(g->res);
	free(g);
}

int
workers_run(const struct wspec *spec, int n, double timeout, struct wresult *res)
{
	struct wgroup *g = wgroup_start(spec, n);
	int rc;

	memset(res, 0, (size_t)n * sizeof *res);
	if (!g)
		return -1;
	rc = wgroup_wait(g, timeout);
	for (int i = 0; i < n; i++) {
		res[i] = g->res[i];
		res[i].out = sbuf_detach(&g->l[i].out);
		res[i].err = sbuf_detach(&g->l[i].err);
	}
	wgroup_free(g);
	return rc;
}

const char *
workers_first_line(const char *s, char *buf, size_t size)
{
	size_t n = strcspn(s, "\n");

	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

void
wresults_free(struct wresult *res, int n)
{
	for (int i = 0; i < n; i++) {
		free(res[i].out);
		free(res[i].err);
		res[i].out = res[i].err = NULL;
	}
}
