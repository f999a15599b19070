/*
 * opts: option values of the farm that need parsing beyond a number:
 * -j (auto, auto:N, or GNU parallel's forms), --halt and --timeout in GNU
 * parallel's forms, share mode names, --shard.
 */
#include "farm/cost.h"
#include "farm/farm.h"
#include "farm/slot.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <math.h>

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
	o->halt_on = v < 0 ? HALT_ON_SUCCESS : HALT_ON_FAIL;
	o->halt_count = v == 0 ? 0 : 1;
	o->halt_pct = 0;
	return 0;
}

static int
halt_bad(const char *s)
{
	return err_set(EXIT_USAGE, "--halt '%s': want never, now|soon,fail=N, now|soon,fail=N%%, "
	    "now|soon,success=N[%%] or now|soon,done=N[%%] (N from 1)", s);
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
		n = strlen(s);
		/* parallel: --halt 5% is soon,fail=5% */
		if (n > 1 && n < sizeof num && s[n - 1] == '%') {
			o->halt_when = HALT_SOON;
			o->halt_on = HALT_ON_FAIL;
			v = s;
			goto number;
		}
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
		o->halt_on = HALT_ON_FAIL;
	else if (str_starts(v, "success="))
		o->halt_on = HALT_ON_SUCCESS;
	else if (str_starts(v, "done="))
		o->halt_on = HALT_ON_DONE;
	else
		return halt_bad(s);
	v = strchr(v, '=') + 1;
number:
	n = strlen(v);
	if (n == 0 || n >= sizeof num)
		return halt_bad(s);
	memcpy(num, v, n + 1);
	o->halt_count = 0;
	o->halt_pct = 0;
	if (num[n - 1] == '%') {
		num[n - 1] = '\0';
		/* parallel takes whole percentages only (\d+%) */
		if (parse_long(num, 1, 100, &count) < 0) {
			err_clear();
			return halt_bad(s);
		}
		pct = (double)count;
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

static int
jobs_bad(const char *s)
{
	return err_set(EXIT_USAGE, "-j '%s': want auto, auto:N (at most N), auto:energy[:N], N (tasks per "
	    "device), 0 (as many as fit), N%% of the default, +N or -N from it", s);
}

/* auto:N's N: digits only, 1..FARM_AUTO_MAX_LIMIT; -1 otherwise. */
static int
auto_cap(const char *s, int *out)
{
	long v = 0;

	if (!*s || strlen(s) > 9)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v < 1 || v > FARM_AUTO_MAX_LIMIT)
		return -1;
	*out = (int)v;
	return 0;
}

int
parse_jobs(const char *s, struct farm_opts *o)
{
	size_t n = strlen(s);
	long v;
	double pct;
	char num[32];
	int cap = 0;

	o->auto_max = 0;
	o->auto_energy = 0;
	if (strcmp(s, "auto") == 0 || strncmp(s, "auto:", 5) == 0) {
		/* auto:energy, auto:energy:N: the goal is joules per task */
		int energy = strncmp(s + 4, ":energy", 7) == 0 && (s[11] == '\0' || s[11] == ':');
		const char *capv = energy ? (s[11] ? s + 12 : NULL) : s[4] == ':' ? s + 5 : NULL;

		if (capv && auto_cap(capv, &cap) < 0)
			return err_set(EXIT_USAGE, "-j '%s': want auto:N or auto:energy:N with N from 1 to %d "
			    "(the most tasks per device the controller may choose)", s, FARM_AUTO_MAX_LIMIT);
		o->jobs_form = JOBS_AUTO;
		o->jobs = 0;
		o->auto_max = cap;
		o->auto_energy = energy;
		return 0;
	}
	if (n == 0 || n >= sizeof num)
		return jobs_bad(s);
	memcpy(num, s, n + 1);
	if (num[n - 1] == '%') {
		num[n - 1] = '\0';
		if (parse_double(num, &pct) < 0 || !(pct > 0 && pct <= 100000) || num[0] == '-' ||
		    num[0] == '+') {
			err_clear();
			return jobs_bad(s);
		}
		o->jobs_form = JOBS_PCT;
		o->jobs_arg = pct;
		return 0;
	}
	if (num[0] == '+' || num[0] == '-') {
		if (parse_long(num + 1, 0, 100000, &v) < 0 || num[1] < '0' || num[1] > '9') {
			err_clear();
			return jobs_bad(s);
		}
		o->jobs_form = num[0] == '+' ? JOBS_PLUS : JOBS_MINUS;
		o->jobs_arg = (double)v;
		return 0;
	}
	if (parse_long(num, 0, 100000, &v) < 0) {
		err_clear();
		return jobs_bad(s);
	}
	o->jobs_form = v == 0 ? JOBS_MAX : JOBS_COUNT;
	o->jobs = (int)v;
	return 0;
}

/* The share mode's slots per device when -j does not say: what "all CPUs" is to parallel. */
static int
jobs_default(int share)
{
	if (share == SHARE_EXCLUSIVE)
		return FARM_JOBS_EXCLUSIVE;
	if (share == SHARE_MPS)
		return FARM_JOBS_MPS;
	return FARM_JOBS_TIMESLICE;
}

int
jobs_per_device(const struct farm_opts *o, int share)
{
	int base = jobs_default(share);
	double v;

	switch (o->jobs_form) {
	case JOBS_AUTO:
		/* the controller's cap: packing bounds it further */
		return o->auto_max ? o->auto_max : FARM_AUTO_MAX;
	case JOBS_COUNT:
		return o->jobs;
	case JOBS_MAX:
		/* as many as memory and the MPS client limit allow (packing bounds it) */
		return FARM_JOBS_MAX;
	case JOBS_PCT:
		v = ceil(base * o->jobs_arg / 100.0);
		break;
	case JOBS_PLUS:
		v = base + o->jobs_arg;
		break;
	case JOBS_MINUS:
		v = base - o->jobs_arg;
		break;
	default:
		return base;
	}
	if (v < 1)
		v = 1;
	return v > FARM_JOBS_MAX ? FARM_JOBS_MAX : (int)v;
}

void
jobs_note(const struct farm_opts *o, int share, const struct group *g, int ng)
{
	struct sbuf b;
	int base = jobs_default(share), same = 1;
	double raw = o->jobs_form == JOBS_PCT ? base * o->jobs_arg / 100 : o->jobs_form == JOBS_PLUS ?
	    base + o->jobs_arg : base - o->jobs_arg;

	if (o->jobs_form != JOBS_PCT && o->jobs_form != JOBS_PLUS && o->jobs_form != JOBS_MINUS &&
	    o->jobs_form != JOBS_MAX)
		return;
	for (int i = 1; i < ng; i++)
		same &= g[i].cap == g[0].cap;
	sbuf_init(&b);
	sbuf_add(&b, "-j ");
	if (o->jobs_form == JOBS_MAX)
		sbuf_add(&b, "0:");
	else
		sbuf_printf(&b, "%s%g%s:", o->jobs_form == JOBS_PLUS ? "+" : o->jobs_form == JOBS_MINUS ?
		    "-" : "", o->jobs_arg, o->jobs_form == JOBS_PCT ? "%" : "");
	if (same && ng > 0)
		sbuf_printf(&b, " %d %s per device", g[0].cap, plural((unsigned)g[0].cap, "task", "tasks"));
	else
		for (int i = 0; i < ng; i++)
			sbuf_printf(&b, "%s %d on device %d", i ? "," : "", g[i].cap, g[i].gpu_index);
	if (o->jobs_form == JOBS_MAX)
		sbuf_add(&b, " (as many as fit)");
	else if (o->jobs_form == JOBS_PCT)
		sbuf_printf(&b, " (%g%% of %s's %d, rounded up)", o->jobs_arg, share_name(share), base);
	else
		sbuf_printf(&b, " (%s's %d %s %g%s)", share_name(share), base, o->jobs_form == JOBS_PLUS ?
		    "plus" : "less", o->jobs_arg, raw < 1 ? ", at least 1" : "");
	warnx_("%s", b.buf);
	sbuf_free(&b);
}

int
parse_timeout(const char *s, struct farm_opts *o)
{
	size_t n = strlen(s);
	double pct;
	char num[32];

	if (n > 1 && n < sizeof num && s[n - 1] == '%') {
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (parse_double(num, &pct) < 0 || !(pct > 0) || num[0] == '-' || num[0] == '+') {
			err_clear();
			return err_set(EXIT_USAGE, "--timeout '%s': want a duration or N%% (of the median "
			    "runtime of the tasks that succeeded)", s);
		}
		o->timeout_pct = pct;
		return 0;
	}
	if (parse_duration(s, &o->timeout) < 0)
		return err_prefix("--timeout");
	return o->timeout > 0 ? 0 : err_set(EXIT_USAGE, "--timeout '%s': must be above 0", s);
}

static int
shard_bad(const char *s)
{
	/* parallel's --shard COLUMN [perl] spreads --pipe's lines over the slots by a column */
	if (!strchr(s, '/'))
		return err_set(EXIT_USAGE, "--shard '%s': gpupack's --shard is K/N or slurm (this run's "
		    "share of the inputs); GNU parallel's --shard COLUMN (--pipe lines spread by a "
		    "column's value) is not supported: split the input by that column first", s);
	return err_set(EXIT_USAGE, "--shard '%s': want K/N with 0 <= K < N (K counts from 0, as "
	    "SLURM_PROCID does), or slurm", s);
}

/* A count: digits only, at most max. */
static int
shard_num(const char *s, size_t n, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_shard(const char *s, struct farm_opts *o)
{
	const char *slash;
	unsigned long k, n;

	if (strcmp(s, "slurm") == 0) {
		const char *id = getenv("SLURM_PROCID"), *nt = getenv("SLURM_NTASKS");

		if (!id || !nt || !*id || !*nt)
			return err_set(EXIT_USAGE, "--shard slurm: SLURM_PROCID and SLURM_NTASKS are not "
			    "set (run it as a task of srun)");
		if (shard_num(id, strlen(id), 999999999UL, &k) < 0 ||
		    shard_num(nt, strlen(nt), 1000000UL, &n) < 0 || n == 0 || k >= n)
			return err_set(EXIT_USAGE, "--shard slurm: SLURM_PROCID '%s' of SLURM_NTASKS '%s' "
			    "is not a task number below the task count", id, nt);
	} else {
		slash = strchr(s, '/');
		if (!slash || shard_num(s, (size_t)(slash - s), 999999999UL, &k) < 0 ||
		    shard_num(slash + 1, strlen(slash + 1), 1000000UL, &n) < 0 || n == 0 || k >= n)
			return shard_bad(s);
	}
	o->shard_k = k;
	o->shard_n = n;
	return 0;
}
