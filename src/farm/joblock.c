/*
 * joblock: the lock that keeps one farm per joblog, on the joblog itself
 * (farm/joblock.h says the protocol and what it guarantees where).
 */
#include "farm/joblock.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Far past any joblog's size: the ranges never touch what a reader of the file sees. */
#define BASE    (1LL << 40)
#define GATE    BASE
#define MEMBERS (BASE + 1)
#define PLACE   (BASE + 16)
#define KEY     (BASE + (1LL << 32))
#define PID     (BASE + (1LL << 33))
#define SPAN    (1LL << 31)

/*
 * Lock (type F_RDLCK, F_WRLCK, F_UNLCK) one byte without waiting: 0, or -1
 * with errno (EAGAIN or EACCES: another holds it). Open file description
 * locks where the kernel has them (they belong to the descriptor, not to
 * the process: nothing else gpupack opens or closes can drop them).
 */
static int
lock_byte(int fd, short type, long long at)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)at, .l_len = 1};

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	fl.l_pid = 0;
	return fcntl(fd, F_SETLK, &fl);
}

/* Would a write lock on [at, at + len) meet another's lock? Its start then (else -1). */
static long long
held_at(int fd, long long at, long long len)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)at, .l_len = (off_t)len};

	if (fcntl(fd, F_OFD_GETLK, &fl) < 0) {
		fl.l_pid = 0;
		if (fcntl(fd, F_GETLK, &fl) < 0)
			return -1;
	}
	return fl.l_type == F_UNLCK ? -1 : (long long)fl.l_start;
}

static int
busy(int e)
{
	return e == EAGAIN || e == EACCES;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* FNV-1a of the key, into the KEY range. */
static long long
key_byte(const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return KEY + (long long)(h % (uint64_t)SPAN);
}

/*
 * Open the joblog for its locks, creating it empty when it is not there
 * (through a dangling symlink too, as the journal does). 1 open, 0 not a
 * regular file or not to be opened: no lock (the journal refuses it).
 */
static int
open_log(struct joblock *l)
{
	int flags = O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;

	l->fd = open(l->path, flags | O_CREAT | O_EXCL, 0644);
	l->created = l->fd >= 0;
	if (l->fd < 0 && errno == EEXIST && (l->fd = open(l->path, flags)) < 0 && errno == ENOENT) {
		l->fd = open(l->path, flags | O_CREAT, 0644);
		l->created = l->fd >= 0;
	}
	/* what cannot be opened (a directory, no such directory, no permission) the journal says */
	if (l->fd < 0)
		return 0;
	if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(l->fd);
		l->fd = -1;
		return 0;
	}
	return 1;
}

/* Hold the gate: 0, or -1 with err set. */
static int
take_gate(struct joblock *l)
{
	for (int tries = 0; tries < (int)(JOBLOCK_GATE_WAIT * 100); tries++) {
		if (lock_byte(l->fd, F_WRLCK, GATE) == 0)
			return 0;
		if (!busy(errno))
			return err_sys(EXIT_ENV, "--joblog '%s': cannot lock it", l->path);
		sleep_ms(10);
	}
	return err_set(EXIT_ENV, "--joblog '%s': another gpupack held its lock for %.0f s while joining or "
	    "leaving its farm (a hung filesystem?)", l->path, JOBLOCK_GATE_WAIT);
}

/* FILE.lock: "KEY\tPID\tHOST\n", for the message a refused gpupack gives. Best effort. */
static void
write_text(const struct joblock *l, const char *key)
{
	char host[256], line[1024];
	int n, fd;

	if (gethostname(host, sizeof host) < 0)
		str_copy(host, "?", sizeof host);
	host[sizeof host - 1] = '\0';
	n = snprintf(line, sizeof line, "%s\t%ld\t%s\n", key ? key : "single", (long)getpid(), host);
	fd = open(l->text, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) != n)
			if (ftruncate(fd, 0) < 0)
				errno = 0; /* the lines are said again, whole, next time */
		close(fd);
	}
}

/* Who runs the farm that holds it: "pid P" and, where FILE.lock names P, its host. */
static void
holder(const struct joblock *l, char *who, size_t size)
{
	long long at = held_at(l->fd, PID, SPAN);
	char buf[512], *tab;
	long pid = at >= 0 ? (long)(at - PID) : -1;
	ssize_t n = -1;
	int fd;

	if (pid <= 0) {
		str_copy(who, "unknown", size);
		return;
	}
	snprintf(who, size, "%ld", pid);
	fd = open(l->text, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
	}
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* KEY \t PID \t HOST: the host only when the pid is the holder's */
	if ((tab = strchr(buf, '\t')) == NULL || strtol(tab + 1, &tab, 10) != pid || *tab != '\t')
		return;
	snprintf(who, size, "%ld %s", pid, tab + 1);
}

/* Under the gate: become the first member, join the farm of key, or be refused. */
static int
enter(struct joblock *l, const char *key, long place)
{
	const char *joblog = l->path;
	char who[300];

	if (lock_byte(l->fd, F_WRLCK, MEMBERS) == 0) {
		/* nobody runs: we begin the farm */
		l->first = 1;
		write_text(l, key);
	} else if (!busy(errno)) {
		return err_sys(EXIT_ENV, "--joblog '%s': cannot lock it", joblog);
	} else if (!key || held_at(l->fd, key_byte(key), 1) < 0) {
		holder(l, who, sizeof who);
		return err_set(EXIT_USAGE, "--joblog '%s': another farm runs on it (gpupack pid %s); wait "
		    "for it to end, or use another joblog", joblog, who);
	}
	if (lock_byte(l->fd, F_RDLCK, MEMBERS) < 0 || (key && lock_byte(l->fd, F_RDLCK, key_byte(key)) < 0) ||
	    lock_byte(l->fd, F_RDLCK, PID + getpid()) < 0)
		return err_sys(EXIT_ENV, "--joblog '%s': cannot lock it", joblog);
	if (place >= 0 && place < SPAN / 2 && lock_byte(l->fd, F_WRLCK, PLACE + place) < 0)
		return busy(errno) ? err_set(EXIT_USAGE, "--joblog '%s': its shard %ld runs already (a "
		    "gpupack of the same split); wait for it to end", joblog, place) :
		    err_sys(EXIT_ENV, "--joblog '%s': cannot lock it", joblog);
	return 0;
}

/* Forget the names (no lock held). */
static void
forget(struct joblock *l)
{
	free(l->path);
	free(l->text);
	l->path = l->text = NULL;
}

int
joblock_take(struct joblock *l, const struct joblog_desc *d, const char *key, long place)
{
	int rc;

	*l = (struct joblock){.fd = -1, .path = xstrdup(d->path), .text = xstrdup(d->lock)};
	rc = open_log(l);
	if (rc <= 0) {
		forget(l);
		return rc;
	}
	if (take_gate(l) < 0) {
		joblock_abandon(l);
		return -1;
	}
	rc = enter(l, key, place);
	lock_byte(l->fd, F_UNLCK, GATE);
	if (rc < 0)
		joblock_abandon(l);
	return rc;
}

static void
leave(struct joblock *l, int abandon)
{
	struct stat st;
	char real[PATH_MAX];

	if (l->fd < 0) {
		forget(l);
		return;
	}
	/* the last member out removes FILE.lock: under the gate, so no one joins meanwhile */
	if (lock_byte(l->fd, F_WRLCK, GATE) == 0) {
		if (lock_byte(l->fd, F_WRLCK, MEMBERS) == 0) {
			unlink(l->text);
			/* refused before it began: the empty joblog it made goes (through a link: the file) */
			if (abandon && l->created && fstat(l->fd, &st) == 0 && st.st_size == 0 && st.st_nlink > 0 &&
			    realpath(l->path, real) != NULL)
				unlink(real);
		}
		lock_byte(l->fd, F_UNLCK, GATE);
	}
	close(l->fd);
	l->fd = -1;
	forget(l);
}

void
joblock_release(struct joblock *l)
{
	leave(l, 0);
}

void
joblock_abandon(struct joblock *l)
{
	leave(l, 1);
}
