/*
 * str: allocation wrappers, bounded copies, the string buffer, and strict
 * number parsing. Running out of memory is not an error gpupack recovers
 * from: it prints one line and exits 4.
 */
#include "util/str.h"
#include "util/err.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
out_of_memory(size_t n)
{
	fprintf(stderr, "gpupack: out of memory allocating %zu bytes\n", n);
	exit(EXIT_INTERNAL);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *
xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (!p)
		out_of_memory(count * size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

void
xgrow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t n = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (n < need)
		n *= 2;
	*p = xrealloc(*p, n * size);
	*cap = n;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	struct sbuf b;
	va_list ap;

	sbuf_init(&b);
	va_start(ap, fmt);
	sbuf_vprintf(&b, fmt, ap);
	va_end(ap);
	return sbuf_detach(&b);
}

size_t
str_copy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t k = n < size - 1 ? n : size - 1;
		memcpy(dst, src, k);
		dst[k] = '\0';
	}
	return n;
}

int
str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
str_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

char *
str_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return err_set(EXIT_USAGE, "'%s' is not a number", s ? s : "");
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end)
		return err_set(EXIT_USAGE, "'%s' is not a whole number", s);
	if (errno == ERANGE || v < min || v > max)
		return err_set(EXIT_USAGE, "%s is out of range (%ld to %ld)", s, min, max);
	*out = v;
	return 0;
}

int
parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return err_set(EXIT_USAGE, "'%s' is not a number", s ? s : "");
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || v != v)
		return err_set(EXIT_USAGE, "'%s' is not a number", s);
	*out = v;
	return 0;
}

void
sbuf_init(struct sbuf *b)
{
	b->cap = 64;
	b->len = 0;
	b->buf = xmalloc(b->cap);
	b->buf[0] = '\0';
}

void
sbuf_free(struct sbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

static void
sbuf_reserve(struct sbuf *b, size_t extra)
{
	if (!b->buf)
		sbuf_init(b);
	if (b->len + extra + 1 > b->cap) {
		while (b->len + extra + 1 > b->cap)
			b->cap *= 2;
		b->buf = xrealloc(b->buf, b->cap);
	}
}

void
sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
	sbuf_reserve(b, n);
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void
sbuf_add(struct sbuf *b, const char *s)
{
	sbuf_addn(b, s, strlen(s));
}

void
sbuf_addc(struct sbuf *b, char c)
{
	sbuf_addn(b, &c, 1);
}

void
sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	sbuf_reserve(b, 0);
	va_copy(aq, ap);
	n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		sbuf_reserve(b, (size_t)n);
		vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void
sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
sbuf_reset(struct sbuf *b)
{
	if (!b->buf)
		sbuf_init(b);
	b->len = 0;
	b->buf[0] = '\0';
}

char *
sbuf_detach(struct sbuf *b)
{
	char *p;

	if (!b->buf)
		sbuf_init(b);
	p = b->buf;
	b->buf = NULL;
	b->len = b->cap = 0;
	return p;
}

const char *
plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
