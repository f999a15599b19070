/*
 * fuzz_sizes: the small parsers of option values, on arbitrary strings:
 * sizes (parse_size), durations, parallel's prefixed numbers (parse_prefixed),
 * -j, --halt and --timeout in GNU parallel's forms, -d's escapes and
 * --colsep's regex translation. Checks, beyond the
 * sanitizers: every parser either accepts and says so consistently, or
 * refuses with an error set; a size accepted is below 2^62, and "G" and
 * "GB" of the same number keep their ratio (1024^3 / 1000^3).
 */
#include "farm/farm.h"
#include "farm/input.h"
#include "util/err.h"
#include "util/units.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
refused_or_ok(int rc)
{
	if (rc < 0 && err_code() == EXIT_OK)
		abort();   /* a refusal always says why */
	err_clear();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *g, *gb;
	uint64_t bytes, b1, b2;
	double sec;
	struct farm_opts o;
	regex_t re;
	size_t n;
	int rc;

	rc = parse_size(s, &bytes);
	if (rc == 0 && bytes >= (uint64_t)1 << 62)
		abort();
	refused_or_ok(rc);
	/* the same number with G and with GB: their ratio is 1024^3 / 1000^3 */
	if (size > 0 && size < 20 && strspn(s, "0123456789.") == size) {
		g = malloc(size + 4);
		gb = malloc(size + 4);
		memcpy(g, s, size);
		memcpy(gb, s, size);
		memcpy(g + size, "G", 2);
		memcpy(gb + size, "GB", 3);
		if (parse_size(g, &b1) == 0 && parse_size(gb, &b2) == 0 && b2 > 1000000 &&
		    fabs((double)b1 / (double)b2 - 1.073741824) > 1e-6)
			abort();
		err_clear();
		free(g);
		free(gb);
	}
	refused_or_ok(parse_duration(s, &sec));
	/* parallel's numbers (-n 1k, --block 1k+1k): a finite value, or refused */
	rc = parse_prefixed(s, &sec);
	if (rc == 0 && !isfinite(sec))
		abort();
	refused_or_ok(rc);
	memset(&o, 0, sizeof o);
	rc = parse_jobs(s, &o);
	if (rc == 0 && (jobs_per_device(&o, SHARE_MPS) < 1 || jobs_per_device(&o, SHARE_EXCLUSIVE) < 1))
		abort();
	refused_or_ok(rc);
	memset(&o, 0, sizeof o);
	rc = parse_halt(s, &o);
	if (rc == 0 && o.halt_when != HALT_NEVER && o.halt_count <= 0 && !(o.halt_pct > 0 && o.halt_pct <= 100))
		abort();
	refused_or_ok(rc);
	memset(&o, 0, sizeof o);
	refused_or_ok(parse_timeout(s, &o));
	free(input_unescape_delim(s, &n));
	if (input_colsep_compile(s, &re) == 0) {
		struct record r;

		input_colsep_split(&re, "a,b\tc  d", &r);
		if (r.n < 1)
			abort();
		record_free(&r);
		regfree(&re);
	}
	err_clear();
	free(s);
	return 0;
}
