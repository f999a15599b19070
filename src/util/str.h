/*
 * str: memory that never comes back NULL, bounded copies, a growable
 * string buffer, and strict number parsing.
 */
#ifndef GPUPACK_UTIL_STR_H
#define GPUPACK_UTIL_STR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow *p (count *cap items of size) so that it holds at least need items. */
void xgrow(void *pp, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copy src into dst[size], always NUL-terminated; returns strlen(src). */
size_t str_copy(char *dst, const char *src, size_t size);
int str_starts(const char *s, const char *prefix);
int str_ends(const char *s, const char *suffix);
/* Trim white space at both ends in place; returns s moved past leading space. */
char *str_trim(char *s);

/* "task" or "tasks" for a count: plural(n, "task", "tasks"). */
const char *plural(unsigned long long n, const char *one, const char *many);

/* Strict parsers: the whole string must be the number; -1 and err_set on failure. */
int parse_long(const char *s, long min, long max, long *out);
int parse_double(const char *s, double *out);

/* A growable NUL-terminated string. */
struct sbuf {
	char *buf;
	size_t len, cap;
};
void sbuf_init(struct sbuf *b);
void sbuf_free(struct sbuf *b);
void sbuf_add(struct sbuf *b, const char *s);
void sbuf_addn(struct sbuf *b, const char *s, size_t n);
void sbuf_addc(struct sbuf *b, char c);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
void sbuf_reset(struct sbuf *b);
/* Hand the buffer to the caller (never NULL); b is left empty. */
char *sbuf_detach(struct sbuf *b);

#endif
