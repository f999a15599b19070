/*
 * full-disk.so: an LD_PRELOAD shim that makes one file behave as if its disk
 * filled up, for the tests of torn and short-written joblogs.
 *
 *   FULLDISK_FILE=PATH   the file (matched by device and inode at each write)
 *   FULLDISK_UNDER=DIR   or every regular file whose path is under DIR/
 *                        (each on its own: a --results tree, a joblog and
 *                        the files beside it)
 *   FULLDISK_AT=BYTES    its size when the disk is full
 *
 * A write() that would grow the file past BYTES writes only what fits (a
 * short write, as a nearly full disk gives) and the next one fails with
 * ENOSPC, as write(2) does. Other files are untouched. Only write() is
 * wrapped: gpupack writes its joblog, its --results files and its output
 * with write().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n);

static ssize_t (*real_write)(int, const void *, size_t);

/* Is fd's file under dir (by the path /proc gives the descriptor)? */
static int
is_under(int fd, const char *dir)
{
	char link[64], path[4096];
	size_t n = strlen(dir);
	ssize_t len;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof path - 1);
	if (len < 0)
		return 0;
	path[len] = '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static int
is_target(int fd, off_t *size)
{
	const char *path = getenv("FULLDISK_FILE"), *dir = getenv("FULLDISK_UNDER");
	struct stat a, b;

	if ((!path && !dir) || fstat(fd, &a) < 0 || !S_ISREG(a.st_mode))
		return 0;
	*size = a.st_size;
	if (dir)
		return is_under(fd, dir);
	if (stat(path, &b) < 0)
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	const char *at = getenv("FULLDISK_AT");
	off_t size, limit;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (!at || !is_target(fd, &size))
		return real_write(fd, buf, n);
	limit = (off_t)atoll(at);
	/* O_APPEND writes land at the end: what fits below the limit is written */
	if (size >= limit) {
		errno = ENOSPC;
		return -1;
	}
	if (size + (off_t)n > limit)
		n = (size_t)(limit - size);
	return real_write(fd, buf, n);
}
