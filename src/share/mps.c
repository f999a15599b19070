/*
 * mps: the life of a private MPS control daemon: start (with its default
 * limits), restart with other limits, stop (clients first, then the daemon
 * and its servers, by force if asked), and the cleanup of a daemon that
 * died. A lock file in the device's directory serializes start and stop of
 * one device. The other mps_*.c files hold the record on disk, the control
 * program, the parsers of its replies, clients and foreign daemons.
 */
#include "share/mps.h"
#include "share/mps_internal.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int stop_daemon(struct mps_daemon *d, double timeout, int force);

/* ---- start ------------------------------------------------------------ */

int
mps_limits_check(const struct mps_limits *lim)
{
	if (isnan(lim->sm_pct) || lim->sm_pct < 0 || lim->sm_pct > 100)
		return err_set(EXIT_USAGE, "thread percentage %g is outside 1..100", lim->sm_pct);
	if (lim->priority != MPS_PRIO_UNSET && lim->priority != MPS_PRIO_NORMAL &&
	    lim->priority != MPS_PRIO_LOW)
		return err_set(EXIT_USAGE, "priority %d is not normal (0) or low (1)", lim->priority);
	return 0;
}

int
mps_limits_equal(const struct mps_limits *a, const struct mps_limits *b)
{
	int pa = a->priority == MPS_PRIO_UNSET ? MPS_PRIO_NORMAL : a->priority;
	int pb = b->priority == MPS_PRIO_UNSET ? MPS_PRIO_NORMAL : b->priority;
	double sa = a->sm_pct > 0 ? a->sm_pct : 100, sb = b->sm_pct > 0 ? b->sm_pct : 100;

	return fabs(sa - sb) < 1e-9 && a->mem_bytes == b->mem_bytes && pa == pb;
}

char *
mps_limits_format(const struct mps_limits *lim, char *buf, size_t size)
{
	char mem[32];

	snprintf(buf, size, "sm %g%%, mem %s, priority %s", lim->sm_pct > 0 ? lim->sm_pct : 100,
	    lim->mem_bytes ? format_size(lim->mem_bytes, mem, sizeof mem) : "unlimited",
	    lim->priority == MPS_PRIO_LOW ? "low" : "normal");
	return buf;
}

/* Hold the per-device lock (a file in the device's directory); returns the fd. */
static int
lock_dir(const struct mps_daemon *d)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof path, "%s/lock", d->dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot open %s", path);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return err_sys(EXIT_ENV, "cannot lock %s", path);
		}
	}
	return fd;
}

static void
unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int
apply_limits(const struct mps_daemon *d)
{
	struct sbuf r;
	char cmd[128], size[32];
	int rc = 0;

	sbuf_init(&r);
	if (d->limits.sm_pct > 0) {
		snprintf(cmd, sizeof cmd, "set_default_active_thread_percentage %g", d->limits.sm_pct);
		rc = mps_command(d, cmd, &r);
	}
	/* by the ordinals the daemon sees: its visible devices, renumbered from 0 */
	for (int i = 0; rc == 0 && d->limits.mem_bytes > 0 && i < (d->ndevices > 0 ? d->ndevices : 1); i++) {
		snprintf(cmd, sizeof cmd, "set_default_device_pinned_mem_limit %d %s", i,
		    format_size_mps(mps_pinned_limit(d->limits.mem_bytes), size, sizeof size));
		rc = mps_command(d, cmd, &r);
	}
	if (rc == 0 && d->limits.priority != MPS_PRIO_UNSET) {
		snprintf(cmd, sizeof cmd, "set_default_client_priority %d", d->limits.priority);
		rc = mps_command(d, cmd, &r);
	}
	sbuf_free(&r);
	return rc < 0 ? err_prefix("applying limits") : 0;
}

/* Kill our own daemon process (verified by start time) and clear its directories. */
static void
clean_stale(struct mps_daemon *d)
{
	if (d->pid > 0 && mps_pid_matches(d)) {
		kill(d->pid, SIGKILL);
		for (int i = 0; i < 100 && mps_pid_matches(d); i++)
			mps_sleep_ms(10);
	}
	remove_tree(d->pipe_dir);
	remove_tree(d->log_dir);
	{
		char path[PATH_MAX + 16];

		snprintf(path, sizeof path, "%s/daemon", d->dir);
		unlink(path);
	}
	err_clear();
}

static int
wait_for_daemon(struct mps_daemon *d)
{
	double deadline = clock_mono() + mps_command_timeout();
	char sock[PATH_MAX + 32];

	snprintf(sock, sizeof sock, "%s/control", d->pipe_dir);
	while (clock_mono() < deadline) {
		if (mps_read_pid_file(d, &d->pid) == 0 && access(sock, F_OK) == 0 &&
		    (d->start_time = mps_proc_start_time(d->pid)) != 0)
			return 0;
		mps_sleep_ms(10);
	}
	{
		char why[512];

		mps_start_error(d, 0);
		str_copy(why, err_msg(), sizeof why);
		return err_set(EXIT_ENV, CONTROL_NAME " -d started no daemon in %s within %g s (%s)",
		    d->pipe_dir, mps_command_timeout(), why);
	}
}

static int
start_locked(struct mps_daemon *d, const struct mps_limits *lim, int restart, int *started)
{
	struct mps_daemon old = *d;
	char a[128], b[128];

	if (mps_record_read(&old) == 0) {
		mps_check_alive(&old);
		if (old.alive && mps_limits_equal(&old.limits, lim)) {
			*d = old;
			return 0;
		}
		if (old.alive && !restart)
			/* advice that works from both start and exec (exec has no --restart) */
			return err_set(EXIT_USAGE, "a daemon for %s already runs with other limits (%s; "
			    "asked: %s): stop it (gpupack mps stop --gpu %s) or restart it with these "
			    "(gpupack mps start --gpu %s --restart and the limits)", d->uuid,
			    mps_limits_format(&old.limits, a, sizeof a), mps_limits_format(lim, b, sizeof b),
			    d->uuid, d->uuid);
		if (old.alive && stop_daemon(&old, 0, 0) < 0)
			return err_prefix("restart");
		if (!old.alive)
			clean_stale(&old);
	} else {
		err_clear();
		clean_stale(d); /* leftovers of a start that died half way */
	}
	if (private_dir(d->pipe_dir) < 0 || private_dir(d->log_dir) < 0)
		return -1;
	if (mps_run_control(d, NULL, 1, NULL) < 0 || wait_for_daemon(d) < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		clean_stale(d);
		return err_set(code, "%s", msg);
	}
	d->limits = *lim;
	if (mps_record_write(d) < 0 || apply_limits(d) < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		stop_daemon(d, 0, 1);
		return err_set(code, "%s", msg);
	}
	d->alive = 1;
	*started = 1;
	return 0;
}

/* Start the daemon named name serving devices (ndev of them, comma-separated). */
static int
start_named(const char *name, const char *devices, int ndev, int gpu_index,
    const struct mps_limits *lim, int restart, struct mps_daemon *d, int *started)
{
	char path[PATH_MAX];
	int lk, rc;

	*started = 0;
	if (mps_limits_check(lim) < 0)
		return -1;
	if (mps_control_path(path, sizeof path) < 0)
		return -1;
	memset(d, 0, sizeof *d);
	if (str_copy(d->devices, devices, sizeof d->devices) >= sizeof d->devices)
		return err_set(EXIT_USAGE, "too many devices for one MPS daemon: %.64s...", devices);
	d->ndevices = ndev;
	if (mps_daemon_paths(d, name) < 0)
		return -1;
	d->gpu_index = gpu_index;
	d->limits.priority = MPS_PRIO_UNSET;
	if (strlen(d->pipe_dir) + 1 + strlen(LONGEST_SOCKET) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return err_set(EXIT_ENV, "pipe directory %s is too long for a unix socket; "
		    "set GPUPACK_STATE_DIR to a shorter path", d->pipe_dir);
	if (private_dir(d->dir) < 0)
		return -1;
	lk = lock_dir(d);
	if (lk < 0)
		return -1;
	rc = start_locked(d, lim, restart, started);
	unlock_dir(lk);
	return rc;
}

int
mps_start(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    int restart, struct mps_daemon *d, int *started)
{
	return start_named(t->uuid, t->uuid, 1, gpu_index, lim, restart, d, started);
}

int
mps_start_set(const char *name, const char *const *uuids, int n, const struct mps_limits *lim,
    struct mps_daemon *d, int *started)
{
	struct sbuf b;
	int rc;

	*started = 0;
	if (n < 1)
		return err_set(EXIT_USAGE, "an MPS daemon for no device");
	sbuf_init(&b);
	for (int i = 0; i < n; i++)
		sbuf_printf(&b, "%s%s", i ? "," : "", uuids[i]);
	rc = start_named(name, b.buf, n, -1, lim, 0, d, started);
	sbuf_free(&b);
	return rc;
}

/* ---- stop ------------------------------------------------------------- */

static int
wait_no_clients(const struct mps_daemon *d, double timeout, struct mps_server **s, int *ns)
{
	double deadline = clock_mono() + timeout;

	for (;;) {
		if (mps_servers(d, s, ns) < 0)
			return -1;
		if (mps_count_clients(*s, *ns) == 0 || clock_mono() >= deadline)
			return 0;
		mps_servers_free(*s, *ns);
		*s = NULL;
		*ns = 0;
		mps_sleep_ms(100);
	}
}

static int
clients_error(const struct mps_daemon *d, const struct mps_server *s, int ns, double timeout)
{
	struct sbuf b;
	int shown = 0;

	sbuf_init(&b);
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < s[i].nclients; j++)
			if (shown++ < 16)
				sbuf_printf(&b, "%s%ld", b.len ? " " : "", (long)s[i].clients[j].pid);
	err_set(EXIT_TASKS, "daemon of %s still has %d client(s) after %g s (pids %s); "
	    "left running: wait, or use --force", d->uuid, mps_count_clients(s, ns), timeout, b.buf);
	sbuf_free(&b);
	return -1;
}

static void
terminate_all(const struct mps_daemon *d, const struct mps_server *s, int ns)
{
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < s[i].nclients; j++)
			if (mps_terminate_client(d, s[i].pid, s[i].clients[j].pid) < 0) {
				warnx_("%s", err_msg());
				err_clear();
			}
}

/* Wait for a process that is not our child to end; 1 when it is still there. */
static int
wait_gone(pid_t pid, double deadline)
{
	while (pid > 0 && mps_proc_start_time(pid) != 0) {
		/* a zombie of ours counts as gone */
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		if (clock_mono() >= deadline)
			return 1;
		mps_sleep_ms(20);
	}
	return 0;
}

static void
kill_left(const struct mps_daemon *d, const struct mps_server *s, int ns)
{
	double deadline = clock_mono() + 5;
	int left = 0;

	if (wait_gone(d->pid, deadline) && mps_pid_matches(d)) {
		kill(d->pid, SIGTERM);
		left = 1;
	}
	for (int i = 0; i < ns; i++)
		if (wait_gone(s[i].pid, deadline)) {
			kill(s[i].pid, SIGTERM);
			left = 1;
		}
	if (!left)
		return;
	deadline = clock_mono() + 2;
	if (wait_gone(d->pid, deadline) && mps_pid_matches(d))
		kill(d->pid, SIGKILL);
	for (int i = 0; i < ns; i++)
		if (wait_gone(s[i].pid, deadline))
			kill(s[i].pid, SIGKILL);
	warnx_("the daemon of %s did not quit in time; killed", d->uuid);
}

/*
 * Quit the daemon (clients first: wait, then with force terminate them),
 * wait for it and its servers, and remove its pipe and log directories and
 * record; the device directory and its lock stay (the caller holds the lock).
 */
static int
stop_daemon(struct mps_daemon *d, double timeout, int force)
{
	struct mps_server *s = NULL;
	struct sbuf r;
	int ns = 0;

	if (!d->alive) {
		clean_stale(d);
		return 0;
	}
	if (wait_no_clients(d, timeout, &s, &ns) < 0)
		return -1;
	if (mps_count_clients(s, ns) > 0 && !force) {
		clients_error(d, s, ns, timeout);
		mps_servers_free(s, ns);
		return -1;
	}
	if (mps_count_clients(s, ns) > 0) {
		struct mps_server *s2 = NULL;
		int ns2 = 0;

		terminate_all(d, s, ns);
		/* terminated clients exit on their own; give them a moment */
		if (wait_no_clients(d, 5, &s2, &ns2) == 0)
			mps_servers_free(s2, ns2);
		err_clear();
	}
	sbuf_init(&r);
	/* quit -t: the daemon forces its servers down after that long (seen working on 580) */
	if (mps_command(d, force ? "quit -t 5" : "quit", &r) < 0) {
		err_clear();
		if (mps_command(d, "quit", &r) < 0) {
			warnx_("%s", err_msg());
			err_clear();
		}
	}
	sbuf_free(&r);
	kill_left(d, s, ns);
	mps_servers_free(s, ns);
	d->alive = 0;
	clean_stale(d);
	return 0;
}

int
mps_stop(struct mps_daemon *d, double timeout, int force)
{
	int lk = lock_dir(d), rc;

	if (lk < 0)
		return -1;
	/* the record may have changed while we waited for the lock */
	if (mps_record_read(d) == 1)
		d->pid = 0;
	err_clear();
	mps_check_alive(d);
	rc = stop_daemon(d, timeout, force);
	if (rc == 0)
		rc = remove_tree(d->dir);
	unlock_dir(lk);
	return rc;
}
