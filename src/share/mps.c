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
#include "util/proc.h"
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

static int stop_daemon(struct mps_daemon *d, double timeout, int force, int dirfd);

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

/*
 * One device's state, held while a start or stop runs: its directory and
 * the one above, opened without following a symlink (mps_dir_fd), and the
 * lock file in it, flock()ed. Everything else is done relative to dir.
 */
struct held {
	int base, dir, lock;
};

static void
release(struct held *h)
{
	if (h->lock >= 0)
		close(h->lock);
	if (h->dir >= 0)
		close(h->dir);
	if (h->base >= 0)
		close(h->base);
	h->base = h->dir = h->lock = -1;
}

static int
hold(const struct mps_daemon *d, int create, struct held *h)
{
	struct stat st;

	h->base = h->dir = h->lock = -1;
	h->dir = mps_dir_fd(d, create, &h->base);
	if (h->dir < 0)
		return -1;
	h->lock = openat(h->dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (h->lock < 0 || fstat(h->lock, &st) < 0 || !S_ISREG(st.st_mode)) {
		err_set(EXIT_ENV, "MPS state %s/lock is not a lock file of ours; refusing to use it", d->dir);
		release(h);
		return -1;
	}
	while (flock(h->lock, LOCK_EX) < 0) {
		if (errno != EINTR) {
			err_sys(EXIT_ENV, "cannot lock %s/lock", d->dir);
			release(h);
			return -1;
		}
	}
	return 0;
}

/*
 * pipe/ and log/, where they exist, must be private directories of ours:
 * a symlink, a FIFO, a file, an open or foreign directory is refused with
 * nothing changed (it was deleted and made again before).
 */
static int
check_subdirs(const struct mps_daemon *d, int dirfd)
{
	static const char *const names[] = {"pipe", "log"};

	for (int i = 0; i < 2; i++) {
		char shown[PATH_MAX + 8];
		int fd;

		snprintf(shown, sizeof shown, "%s/%s", d->dir, names[i]);
		fd = private_dir_at(dirfd, names[i], shown, 0);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno != ENOENT)
			return -1;
		err_clear();
	}
	return 0;
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
/* proc_each: a child of the daemon being replaced (a server it started): killed */
static int
kill_child(const struct proc_stat *st, void *arg)
{
	if (st->ppid == *(const pid_t *)arg)
		kill(st->pid, SIGKILL);
	return 0;
}

/*
 * A start that died half way (no record) may have left its daemon running
 * in our pipe directory: its pid file names it, and it is ours if its
 * environment names this very pipe directory.
 */
static pid_t
unrecorded_daemon(const struct mps_daemon *d, int dirfd)
{
	char entry[PATH_MAX + 32];
	pid_t pid = 0;
	int pipefd;

	pipefd = openat(dirfd, "pipe", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pipefd < 0)
		return 0;
	snprintf(entry, sizeof entry, "CUDA_MPS_PIPE_DIRECTORY=%s", d->pipe_dir);
	if (mps_read_pid_file(d, pipefd, &pid) != 0 || !proc_has_env(pid, entry))
		pid = 0;
	close(pipefd);
	err_clear();
	return pid;
}

static void
clean_stale(struct mps_daemon *d, int dirfd)
{
	if (d->pid <= 0 && (d->pid = unrecorded_daemon(d, dirfd)) > 0)
		d->start_time = mps_proc_start_time(d->pid);
	if (d->pid > 0 && mps_pid_matches(d)) {
		/*
		 * Its servers first, the daemon held still meanwhile: once it is
		 * gone they are orphans no record names, and a server it started
		 * after the last look (for clients reconnecting after their server
		 * died) was seen on an H100 to break the daemon that replaced it
		 * a few seconds later, through the pipe directory they share.
		 */
		kill(d->pid, SIGSTOP);
		proc_each(kill_child, &d->pid);
		kill(d->pid, SIGKILL);
		for (int i = 0; i < 100 && mps_pid_matches(d); i++)
			mps_sleep_ms(10);
	}
	remove_tree_at(dirfd, "pipe");
	remove_tree_at(dirfd, "log");
	unlinkat(dirfd, "daemon", 0);
	err_clear();
}

/* Do the paths the daemon and its clients use still lead to the directories we hold? */
static int
paths_hold(const struct mps_daemon *d, int dirfd, int pipefd, int logfd)
{
	if (same_dir(d->dir, dirfd) && same_dir(d->pipe_dir, pipefd) && same_dir(d->log_dir, logfd))
		return 1;
	err_prefix("MPS state changed while the daemon started (daemon stopped)");
	return 0;
}

static int
wait_for_daemon(struct mps_daemon *d, int dirfd, int pipefd, int logfd, const char *mark)
{
	double deadline = clock_mono() + mps_command_timeout();

	while (clock_mono() < deadline) {
		/* a swap sends the daemon elsewhere: no use waiting for it here */
		if (!paths_hold(d, dirfd, pipefd, logfd))
			return -1;
		if (mps_read_pid_file(d, pipefd, &d->pid) == 0 &&
		    faccessat(pipefd, "control", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (d->start_time = mps_proc_start_time(d->pid)) != 0) {
			if (proc_has_env(d->pid, mark))
				return 0;
			return err_set(EXIT_ENV, "%s/" PID_FILE " names pid %ld, which this start did not "
			    "launch (daemon stopped)", d->pipe_dir, (long)d->pid);
		}
		mps_sleep_ms(10);
	}
	{
		char why[512];

		mps_start_error(d, logfd, 0);
		str_copy(why, err_msg(), sizeof why);
		return err_set(EXIT_ENV, CONTROL_NAME " -d started no daemon in %s within %g s (%s)",
		    d->pipe_dir, mps_command_timeout(), why);
	}
}

/* A daemon a gpupack run started and that run is gone: a leftover, to be ended. */
static int
is_leftover(const struct mps_daemon *d)
{
	/* its run is gone, and no other run uses it (a run beside it keeps it until its own end) */
	return d->owner_pid > 0 && !proc_is(d->owner_pid, d->owner_start) && !mps_used_by_others(d, NULL);
}

/* <dir>/users: each process that uses the daemon holds a shared lock on its first byte */
static int
users_open(const struct mps_daemon *d, int create)
{
	char path[PATH_MAX + 8];
	struct stat st;
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/users", d->dir) >= sizeof path)
		return err_set(EXIT_ENV, "MPS state %s: path too long", d->dir);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (fd < 0)
		return errno == ENOENT && !create ? -2 : err_sys(EXIT_ENV, "cannot open %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return err_set(EXIT_ENV, "MPS state %s is not a file of ours; refusing to use it", path);
	}
	return fd;
}

static int
users_lock(int fd, short type, int wait)
{
	struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

int
mps_use(const struct mps_daemon *d)
{
	int fd = users_open(d, 1);

	if (fd < 0)
		return -1;
	/* waits while a last user stops it (mps_used_by_others' lock): then it is gone, and known so */
	if (users_lock(fd, F_RDLCK, 1) < 0) {
		err_sys(EXIT_ENV, "cannot lock %s/users", d->dir);
		close(fd);
		return -1;
	}
	return fd;
}

int
mps_used_by_others(const struct mps_daemon *d, int *last)
{
	int fd = users_open(d, 0);

	if (last)
		*last = -1;
	if (fd == -2)
		return 0;
	if (fd < 0) {
		err_clear();
		return 1;   /* unknown: taken as used (a daemon is never stopped under a run) */
	}
	if (users_lock(fd, F_WRLCK, 0) < 0) {
		close(fd);
		return 1;
	}
	/* the caller is its last user: it keeps the lock while it stops it, or lets it go now */
	if (last)
		*last = fd;
	else
		close(fd);
	return 0;
}

/* proc_each: SIGKILL a process that carries the start's mark (arg: the entry, and a count). */
struct marked {
	const char *entry;
	int n;
};

static int
kill_marked(const struct proc_stat *st, void *arg)
{
	struct marked *m = arg;

	if (st->pid != getpid() && proc_has_env(st->pid, m->entry)) {
		kill(st->pid, SIGKILL);
		m->n++;
	}
	return 0;
}

/* End every process this start launched (the daemon, a server it forked), wherever it went. */
static void
end_launched(const char *entry)
{
	for (int round = 0; round < 100; round++) {
		struct marked m = {entry, 0};

		if (proc_each(kill_marked, &m) < 0 || m.n == 0)
			break;
		mps_sleep_ms(20);
	}
	err_clear();
}

/*
 * Start the daemon in the directories held open. It is given them by path
 * (as its clients are): the same user can swap a component for a symlink
 * while it starts, and the daemon would follow it. Every process the start
 * launches carries a mark in its environment; the daemon counts as started
 * only when its pid file and socket are in the directories we hold, its pid
 * is marked, and the paths still lead there afterwards. Otherwise every
 * marked process is ended, wherever it went: a daemon is either reported
 * or stopped. gpupack's own files are all made relative to held descriptors.
 */
static int
launch_daemon(struct mps_daemon *d, int dirfd)
{
	static unsigned counter;
	char mark[96], entry[128];
	int pipefd = -1, logfd = -1, rc = -1, launched = 0;

	snprintf(mark, sizeof mark, "%ld.%llu.%u.%.0f", (long)getpid(), proc_start_time(getpid()), counter++,
	    clock_mono() * 1e9);
	snprintf(entry, sizeof entry, MPS_LAUNCH_VAR "=%s", mark);
	pipefd = private_dir_at(dirfd, "pipe", d->pipe_dir, 1);
	if (pipefd >= 0)
		logfd = private_dir_at(dirfd, "log", d->log_dir, 1);
	if (pipefd >= 0 && logfd >= 0 && paths_hold(d, dirfd, pipefd, logfd)) {
		launched = 1;
		if (mps_run_daemon(d, logfd, mark) == 0 && wait_for_daemon(d, dirfd, pipefd, logfd, entry) == 0 &&
		    paths_hold(d, dirfd, pipefd, logfd))
			rc = 0;
	}
	if (pipefd >= 0)
		close(pipefd);
	if (logfd >= 0)
		close(logfd);
	if (rc < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		if (launched)
			end_launched(entry);
		d->pid = 0;
		clean_stale(d, dirfd);
		return err_set(code, "%s", msg);
	}
	return 0;
}

static int
start_locked(struct mps_daemon *d, int dirfd, const struct mps_limits *lim, int restart, int owned,
    int *started)
{
	struct mps_daemon old = *d;
	char a[128], b[128];
	int rc;

	if (check_subdirs(d, dirfd) < 0)
		return -1;
	rc = mps_record_read(&old, dirfd);
	if (rc < 0)
		return -1; /* not a record of ours: refused, not cleaned */
	if (rc == 0) {
		int leftover;

		mps_check_alive(&old);
		/* a killed run's daemon is ended, not adopted (its clients were that run's) */
		leftover = old.alive && is_leftover(&old);
		if (old.alive && !leftover && mps_limits_equal(&old.limits, lim)) {
			*d = old;
			return 0;
		}
		if (old.alive && !leftover && !restart)
			/* advice that works from both start and exec (exec has no --restart) */
			return err_set(EXIT_USAGE, "a daemon for %s already runs with other limits (%s; "
			    "asked: %s): stop it (gpupack mps stop --gpu %s) or restart it with these "
			    "(gpupack mps start --gpu %s --restart and the limits)", d->uuid,
			    mps_limits_format(&old.limits, a, sizeof a), mps_limits_format(lim, b, sizeof b),
			    d->uuid, d->uuid);
		if (old.alive && stop_daemon(&old, 0, leftover, dirfd) < 0)
			return err_prefix("restart");
		if (!old.alive)
			clean_stale(&old, dirfd);
	} else {
		clean_stale(d, dirfd); /* leftovers of a start that died half way */
	}
	if (launch_daemon(d, dirfd) < 0)
		return -1;
	d->limits = *lim;
	if (owned) {
		d->owner_pid = getpid();
		d->owner_start = proc_start_time(getpid());
	}
	if (mps_record_write(d, dirfd) < 0 || apply_limits(d) < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		stop_daemon(d, 0, 1, dirfd);
		return err_set(code, "%s", msg);
	}
	d->alive = 1;
	*started = 1;
	return 0;
}

/* Start the daemon named name serving devices (ndev of them, comma-separated). */
static int
start_named(const char *name, const char *devices, int ndev, int gpu_index,
    const struct mps_limits *lim, int restart, int owned, struct mps_daemon *d, int *started)
{
	char path[PATH_MAX];
	struct held h;
	int rc;

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
		return err_set(EXIT_ENV, "pipe directory %s is too long for a unix socket; %s", d->pipe_dir,
		    getenv("GPUPACK_MPS_DIR") && *getenv("GPUPACK_MPS_DIR") ?
		    "GPUPACK_MPS_DIR (the Slurm plugin's state=) must be shorter" :
		    "set GPUPACK_STATE_DIR to a shorter path");
	if (hold(d, 1, &h) < 0)
		return -1;
	rc = start_locked(d, h.dir, lim, restart, owned, started);
	release(&h);
	return rc;
}

int
mps_start(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    int restart, struct mps_daemon *d, int *started)
{
	return start_named(t->uuid, t->uuid, 1, gpu_index, lim, restart, 0, d, started);
}

int
mps_start_owned(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    struct mps_daemon *d, int *started)
{
	return start_named(t->uuid, t->uuid, 1, gpu_index, lim, 0, 1, d, started);
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
	rc = start_named(name, b.buf, n, -1, lim, 0, 0, d, started);
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
stop_daemon(struct mps_daemon *d, double timeout, int force, int dirfd)
{
	struct mps_server *s = NULL;
	struct sbuf r;
	int ns = 0;

	if (!d->alive) {
		clean_stale(d, dirfd);
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
	clean_stale(d, dirfd);
	return 0;
}

int
mps_reset(struct mps_daemon *d, const pid_t *srv, const unsigned long long *srv_start, int n)
{
	struct held h;

	if (hold(d, 0, &h) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (srv[i] > 0 && proc_is(srv[i], srv_start[i]))
			kill(srv[i], SIGKILL);
	clean_stale(d, h.dir);
	d->alive = 0;
	d->pid = 0;
	release(&h);
	return 0;
}

int
mps_stop(struct mps_daemon *d, double timeout, int force)
{
	char name[GPU_UUID_LEN];
	struct held h;
	int rc;

	if (mps_uuid_dir_name(d->uuid, name, sizeof name) < 0 || hold(d, 0, &h) < 0)
		return -1;
	/* the record may have changed while we waited for the lock */
	rc = mps_record_read(d, h.dir);
	if (rc < 0) {
		release(&h);
		return -1;
	}
	if (rc == 1)
		d->pid = 0;
	mps_check_alive(d);
	rc = stop_daemon(d, timeout, force, h.dir);
	if (rc == 0)
		rc = remove_tree_at(h.base, name);
	release(&h);
	return rc;
}
