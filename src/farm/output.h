/*
 * output: one task's stdout or stderr, captured whole: in memory up to
 * OUTPUT_MEM_MAX, then in an unlinked temporary file, so a task that
 * prints gigabytes costs disk, not memory.
 */
#ifndef GPUPACK_FARM_OUTPUT_H
#define GPUPACK_FARM_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OUTPUT_MEM_MAX (1u << 20)

struct obuf {
	char *mem;
	size_t len, cap;
	int spill;            /* temporary file, -1: none */
	uint64_t total;       /* bytes captured */
	uint64_t raw;         /* bytes the task wrote (before --tag) */
	const char *tag;      /* --tag: put in front of every line; NULL: none */
	const char *end;      /* --ctag, --color: put before every newline (and one added at the end) */
	int mid;              /* with tag: the last byte added was not a newline */
};

void obuf_init(struct obuf *b);
void obuf_free(struct obuf *b);   /* and leave it empty, ready for reuse */
/*
 * Read what fd has now (non-blocking): 1 more may come, 0 end of file, -1
 * error (err set). With b->tag set, every line read starts with it.
 */
/* --ctag, --color: an unterminated last line ends as the others (parallel adds its newline). */
int obuf_end_line(struct obuf *b);
int obuf_read(struct obuf *b, int fd);
/*
 * --line-buffer: write the whole lines b holds to fd now and keep the
 * unfinished one (all of it when last). -1 with errno on a write error.
 */
int obuf_write_lines(struct obuf *b, int fd, int last);
/* Append bytes (used by tests and by obuf_read). */
int obuf_add(struct obuf *b, const char *p, size_t n);
/* Up to n bytes of what b captured, from offset off: the count, 0 at the end, -1 with errno. */
ssize_t obuf_pread(const struct obuf *b, char *buf, size_t n, uint64_t off);
/* Does what b captured end with a newline (or is it empty)? */
int obuf_ends_line(const struct obuf *b);
/* Write everything captured to fd. -1 with errno on a write error (EPIPE and the like). */
int obuf_write(const struct obuf *b, int fd);

#endif
