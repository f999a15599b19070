/*
 * output: capture buffers that spill to disk.
 */
#include "farm/output.h"
#include "util/err.h"
#include "util/fs.h"
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
	const char *tag = b->tag, *end = b->end;

	free(b->mem);
	if (b->spill >= 0)
		close(b->spill);
	obuf_init(b);
	b->tag = tag;
	b->end = end;
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

/* Add what a task wrote, each line started with the tag. */
static int
add_tagged(struct obuf *b, const char *p, size_t n)
{
	b->raw += n;
	if (!b->tag)
		return obuf_add(b, p, n);
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) + 1 : n;

		if (!b->mid && obuf_add(b, b->tag, strlen(b->tag)) < 0)
			return -1;
		if (nl && b->end) {
			if (obuf_add(b, p, len - 1) < 0 || obuf_add(b, b->end, strlen(b->end)) < 0 ||
			    obuf_add(b, "\n", 1) < 0)
				return -1;
		} else if (obuf_add(b, p, len) < 0) {
			return -1;
		}
		b->mid = !nl;
		p += len;
		n -= len;
	}
	return 0;
}

int
obuf_end_line(struct obuf *b)
{
	if (!b->end || !b->mid)
		return 0;
	b->mid = 0;
	if (obuf_add(b, b->end, strlen(b->end)) < 0)
		return -1;
	return obuf_add(b, "\n", 1);
}

int
obuf_read(struct obuf *b, int fd)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);

		if (n > 0) {
			if (add_tagged(b, buf, (size_t)n) < 0)
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

ssize_t
obuf_pread(const struct obuf *b, char *buf, size_t n, uint64_t off)
{
	ssize_t got;

	if (off < b->len) {
		size_t take = b->len - off < n ? b->len - (size_t)off : n;

		memcpy(buf, b->mem + off, take);
		return (ssize_t)take;
	}
	if (b->spill < 0)
		return 0;
	do
		got = pread(b->spill, buf, n, (off_t)(off - b->len));
	while (got < 0 && errno == EINTR);
	return got;
}

int
obuf_ends_line(const struct obuf *b)
{
	char c = '\n';

	if (b->total == 0)
		return 1;
	if (b->spill >= 0 && b->total > b->len)
		return obuf_pread(b, &c, 1, b->total - 1) == 1 ? c == '\n' : 1;
	return b->len ? b->mem[b->len - 1] == '\n' : 1;
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

int
obuf_write_lines(struct obuf *b, int fd, int last)
{
	char *nl;
	size_t n;

	if (last || b->spill >= 0) {
		/* a line longer than memory holds is printed when it ends, with the rest */
		if (!last)
			return 0;
		if (obuf_write(b, fd) < 0)
			return -1;
		b->len = 0;
		if (b->spill >= 0) {
			close(b->spill);
			b->spill = -1;
		}
		return 0;
	}
	if (b->len == 0 || (nl = memrchr(b->mem, '\n', b->len)) == NULL)
		return 0;
	n = (size_t)(nl - b->mem) + 1;
	if (write_all(fd, b->mem, n) < 0)
		return -1;
	memmove(b->mem, b->mem + n, b->len - n);
	b->len -= n;
	return 0;
}
