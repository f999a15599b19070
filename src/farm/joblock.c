/*
 * joblock: the lock that keeps one farm per joblog (farm/joblock.h says
 * the protocol and what it guarantees where).
 */
#include "farm/joblock.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GATE 0
#define MEMBERS 1

/*
 * Lock (type F_RDLCK, F_WRLCK, F_UNLCK) one byte without waiting: 0, or -1
 * with errno (EAGAIN or EACCES: another holds it). Open file description
 * locks where the kernel has them (they belong to the descriptor, not to
 * the process: nothing else gpupack opens or closes can drop them).
 */
static int
lock_byte(int fd, short type, off_t at)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	fl.l_pid = 0;
	return fcntl(fd, F_SETLK, &fl);
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

/* Is fd still the file at path (the last member of a farm may have removed it)? */
static int
still_there(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && a.st_nlink > 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino;
}

/* Open FILE.lock and hold its gate: 0, or -1 with err set. */
static int
open_gate(struct joblock *l)
{
	for (int tries = 0; tries < (int)(JOBLOCK_GATE_WAIT * 100); tries++) {
		l->fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
		if (l->fd < 0)
			return err_sys(EXIT_ENV, "cannot open %s", l->path);
		if (lock_byte(l->fd, F_WRLCK, GATE) == 0) {
			if (still_there(l->fd, l->path))
				return 0;
			lock_byte(l->fd, F_UNLCK, GATE);
		} else if (!busy(errno)) {
			int e = errno;

			close(l->fd);
			l->fd = -1;
			errno = e;
			return err_sys(EXIT_ENV, "cannot lock %s", l->path);
		}
		close(l->fd);
		l->fd = -1;
		sleep_ms(10);
	}
	return err_set(EXIT_ENV, "%s: another gpupack held it for %.0f s while joining or leaving its farm "
	    "(a hung filesystem?)", l->path, JOBLOCK_GATE_WAIT);
}

/* The running farm's text: "KEY\tPID\tHOST\n". */
static void
read_owner(int fd, char *key, size_t ksize, char *who, size_t wsize)
{
	char buf[512], *tab;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	*key = *who = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if ((tab = strchr(buf, '\t')) == NULL)
		return;
	*tab = '\0';
	str_copy(key, buf, ksize);
	str_copy(who, tab + 1, wsize);
	if ((tab = strchr(who, '\t')) != NULL)
		*tab = ' ';
}

static int
write_owner(int fd, const char *key)
{
	char host[256], line[1024];
	int n;

	if (gethostname(host, sizeof host) < 0)
		str_copy(host, "?", sizeof host);
	host[sizeof host - 1] = '\0';
	n = snprintf(line, sizeof line, "%s\t%ld\t%s\n", key, (long)getpid(), host);
	if (n < 0 || (size_t)n >= sizeof line || ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)n, 0) != n)
		return -1;
	return 0;
}

int
joblock_take(struct joblock *l, const char *joblog, const char *key, long place)
{
	char own[64], running[256], who[300];
	int rc = 0;

	l->fd = -1;
	l->first = 0;
	l->path = xasprintf("%s.lock", joblog);
	if (!key) {
		/* a farm of its own: a key nobody else has */
		snprintf(own, sizeof own, "single.%ld.%ld", (long)getpid(), (long)time(NULL));
		key = own;
	}
	if (open_gate(l) < 0) {
		free(l->path);
		l->path = NULL;
		return -1;
	}
	if (lock_byte(l->fd, F_WRLCK, MEMBERS) == 0) {
		/* nobody runs: we begin the farm */
		l->first = 1;
		if (write_owner(l->fd, key) < 0 || lock_byte(l->fd, F_RDLCK, MEMBERS) < 0)
			rc = err_sys(EXIT_ENV, "cannot write %s", l->path);
	} else if (!busy(errno)) {
		rc = err_sys(EXIT_ENV, "cannot lock %s", l->path);
	} else {
		read_owner(l->fd, running, sizeof running, who, sizeof who);
		if (strcmp(running, key) != 0)
			rc = err_set(EXIT_USAGE, "--joblog '%s': another farm runs on it (gpupack pid %s); wait "
			    "for it to end, or use another joblog", joblog, *who ? who : "unknown");
		else if (lock_byte(l->fd, F_RDLCK, MEMBERS) < 0)
			rc = err_sys(EXIT_ENV, "cannot lock %s", l->path);
	}
	if (rc == 0 && place >= 0 && lock_byte(l->fd, F_WRLCK, 2 + (off_t)place) < 0)
		rc = busy(errno) ? err_set(EXIT_USAGE, "--joblog '%s': its shard %ld runs already (a "
		    "gpupack of the same split); wait for it to end", joblog, place) :
		    err_sys(EXIT_ENV, "cannot lock %s", l->path);
	lock_byte(l->fd, F_UNLCK, GATE);
	if (rc < 0) {
		close(l->fd);
		l->fd = -1;
		free(l->path);
		l->path = NULL;
	}
	return rc;
}

void
joblock_release(struct joblock *l)
{
	if (l->fd < 0) {
		free(l->path);
		l->path = NULL;
		return;
	}
	/* the last member out removes the file: under the gate, so no one joins meanwhile */
	if (lock_byte(l->fd, F_WRLCK, GATE) == 0) {
		if (lock_byte(l->fd, F_WRLCK, MEMBERS) == 0 && still_there(l->fd, l->path))
			unlink(l->path);
		lock_byte(l->fd, F_UNLCK, GATE);
	}
	close(l->fd);
	l->fd = -1;
	free(l->path);
	l->path = NULL;
}
