/*
 * units: sizes ("10G", "512MiB", "1.5T") and durations ("30", "250ms",
 * "1h30m") as users write them, parsed strictly, and sizes for people.
 */
#ifndef GPUPACK_UTIL_UNITS_H
#define GPUPACK_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size: a number (decimals allowed) and a unit K, M, G or T, each a power
 * of 1024, optionally followed by "i", "iB" or "B" ("10G" = "10GiB" =
 * "10GB" = 10 * 2^30). "B" alone is bytes; "0" needs no unit. A bare number
 * other than 0 is refused: it is too easy to mean MiB and get bytes.
 * The result is rounded down to whole bytes and must fit in 2^62.
 */
int parse_size(const char *s, uint64_t *bytes);

/*
 * A duration: one or more number-unit pairs (ms, s, m, h, d), or a bare
 * number of seconds as GNU parallel takes it ("30", "2.5").
 */
int parse_duration(const char *s, double *seconds);

/* "80.0 GiB", "512 MiB", "0 B" into buf; returns buf. */
char *format_size(uint64_t bytes, char *buf, size_t size);
/* The same size for the MPS control protocol: whole MiB as "512M", whole GiB as "10G". */
char *format_size_mps(uint64_t bytes, char *buf, size_t size);

#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)

#endif
