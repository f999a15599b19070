/*
 * output: capture buffers that spill to disk.
 */
#include "farm/output.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
obuf_init(struct obuf *b)
{
	memset(b, 0, sizeof *b);
	b->spill = -1;
}

void
obuf_free(struct obuf *b)
{
	free(b->mem);
	if (b->spill >= 0)
		close(b->spill);
	obuf_init(b);
}

static int
open_spill(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof path, "%s/gpupack-out.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return err_sys(EXIT_ENV, "temporary file for task output in %s", dir);
	unlink(path);
	return fd;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
obuf_add(struct obuf *b, const char *p, size_t n)
{
	b->total += n;
	if (b->spill < 0 && b->len + n <= OUTPUT_MEM_MAX) {
		xgrow(&b->mem, &b->cap, b->len + n + 1, 1);
		memcpy(b->mem + b->len, p, n);
		b->len += n;
		return 0;
	}
	if (b->spill < 0 && (b->spill = open_spill()) < 0)
		return -1;
	if (write_all(b->spill, p, n) < 0)
		return err_sys(EXIT_ENV, "temporary file for task output");
	return 0;
}

int
obuf_read(struct obuf *b, int fd)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);

		if (n > 0) {
			if (obuf_add(b, buf, (size_t)n) < 0)
				return -1;
			if ((size_t)n < sizeof buf)
				return 1;
			continue;
		}
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 1;
		return err_sys(EXIT_INTERNAL, "reading task output");
	}
}

int
obuf_write(const struct obuf *b, int fd)
{
	char buf[65536];
	off_t off = 0;

	if (b->len && write_all(fd, b->mem, b->len) < 0)
		return -1;
	if (b->spill < 0)
		return 0;
	for (;;) {
		ssize_t n = pread(b->spill, buf, sizeof buf, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		if (write_all(fd, buf, (size_t)n) < 0)
			return -1;
		off += n;
	}
}
