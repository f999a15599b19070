/*
 * opts: option values of the farm that need parsing beyond a number:
 * --halt in GNU parallel's forms, and share mode names.
 */
#include "farm/farm.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

const char *
share_name(int share)
{
	switch (share) {
	case SHARE_EXCLUSIVE:
		return "exclusive";
	case SHARE_TIMESLICE:
		return "timeslice";
	case SHARE_MPS:
		return "mps";
	default:
		return "default";
	}
}

/* GNU parallel's old numeric forms: 0 never, 1 soon,fail=1, 2 now,fail=1, -1/-2 on success. */
static int
halt_legacy(long v, struct farm_opts *o)
{
	o->halt_when = v == 0 ? HALT_NEVER : labs(v) == 1 ? HALT_SOON : HALT_NOW;
	o->halt_success = v < 0;
	o->halt_count = v == 0 ? 0 : 1;
	o->halt_pct = 0;
	return 0;
}

static int
halt_bad(const char *s)
{
	return err_set(EXIT_USAGE, "--halt '%s': want never, now|soon,fail=N, now|soon,fail=N%% "
	    "or now|soon,success=N", s);
}

int
parse_halt(const char *s, struct farm_opts *o)
{
	const char *comma = strchr(s, ','), *v;
	char num[32];
	size_t n;
	long count;
	double pct;

	if (strcmp(s, "never") == 0)
		return halt_legacy(0, o);
	if (!comma) {
		if (parse_long(s, -2, 2, &count) < 0) {
			err_clear();
			return halt_bad(s);
		}
		return halt_legacy(count, o);
	}
	if (strncmp(s, "now,", 4) == 0)
		o->halt_when = HALT_NOW;
	else if (strncmp(s, "soon,", 5) == 0)
		o->halt_when = HALT_SOON;
	else
		return halt_bad(s);
	v = comma + 1;
	if (str_starts(v, "fail="))
		o->halt_success = 0;
	else if (str_starts(v, "success="))
		o->halt_success = 1;
	else
		return halt_bad(s);
	v = strchr(v, '=') + 1;
	n = strlen(v);
	if (n == 0 || n >= sizeof num)
		return halt_bad(s);
	memcpy(num, v, n + 1);
	o->halt_count = 0;
	o->halt_pct = 0;
	if (num[n - 1] == '%') {
		num[n - 1] = '\0';
		if (parse_double(num, &pct) < 0 || !(pct > 0 && pct <= 100)) {
			err_clear();
			return halt_bad(s);
		}
		o->halt_pct = pct;
		return 0;
	}
	if (parse_long(num, 1, 1000000000L, &count) < 0) {
		err_clear();
		return halt_bad(s);
	}
	o->halt_count = count;
	return 0;
}
