/*
 * tap.h: the smallest TAP producer for the C unit tests, read by prove.
 *   ok(cond, "name %d", i); is_int(got, want, "name"); is_str(got, want, "name");
 *   return done_testing();
 */
#ifndef GPUPACK_TESTS_TAP_H
#define GPUPACK_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int __attribute__((format(printf, 2, 3)))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define is_int(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld (%s:%d)\n", g_, w_, __FILE__, __LINE__); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__)) \
		printf("#   got '%s', want '%s' (%s:%d)\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)", \
		    __FILE__, __LINE__); \
} while (0)

static inline int
done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
