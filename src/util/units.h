/*
 * units: sizes ("10G", "512MiB", "1.5T") and durations ("30", "250ms",
 * "1h30m") as users write them, parsed strictly, and sizes for people.
 */
#ifndef GPUPACK_UTIL_UNITS_H
#define GPUPACK_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size: a number (decimals allowed) and a unit. K, M, G, T, alone or with
 * "i" or "iB", are powers of 1024 ("10G" = "10GiB" = 10 * 2^30, as Slurm and
 * nvidia-smi mean them); KB, MB, GB, TB are powers of 1000 ("20GB" = 20 *
 * 10^9, as in the MIG profile name 1g.20gb); case does not matter. "B" alone
 * is bytes; "0" needs no unit. A bare number other than 0 is refused: it is
 * too easy to mean MiB and get bytes. The result is rounded down to whole
 * bytes and must fit in 2^62. Every --help that takes a size says so
 * (SIZE_HELP).
 */
int parse_size(const char *s, uint64_t *bytes);
/* The convention in a few words, for --help texts. */
#define SIZE_HELP "K M G T (and Ki Mi Gi Ti) are powers of 1024, KB MB GB TB of 1000"

/*
 * A duration: one or more number-unit pairs (ms, s, m, h, d), or a bare
 * number of seconds as GNU parallel takes it ("30", "2.5").
 */
int parse_duration(const char *s, double *seconds);

/*
 * A number as GNU parallel reads -n, -s, -L, --block, --memfree: its unit
 * prefixes spelled out (k m g t p e z y x are powers of 1000; K M G T ...
 * and ki Ki mi ... of 1024), then perl's arithmetic on the result: "1k+1k"
 * is 2000, "2*1M" 2097152, "-10" -10. Numbers, + - * / % **, parentheses.
 * -1 with err set (EXIT_USAGE) for anything else.
 */
int parse_prefixed(const char *s, double *out);

/* "80.0 GiB", "512 MiB", "0 B" into buf; returns buf. */
char *format_size(uint64_t bytes, char *buf, size_t size);
/* The same size for the MPS control protocol: whole MiB as "512M", whole GiB as "10G". */
char *format_size_mps(uint64_t bytes, char *buf, size_t size);

#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)

#endif
