/*
 * knob: the table of test-only switches and counters (knob.h says why).
 */
#include "util/knob.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

struct knob_row {
	const char *name;
	const char *what;
};

static const struct knob_row rows[KNOB_N] = {
	[KNOB_MIG_LP_FAIL_FROM] = {"mig.lp_fail_from", "switch: every simplex call of a plan from this one (1-based) fails"},
	[KNOB_MIG_BAGS_OFF] = {"mig.bags_off", "switch: leave the bags out (the LP's bounds and the first plans alone)"},
	[KNOB_MIG_BAGS_BLIND] = {"mig.bags_blind", "switch: the bags blind to the best plan so far (they find their own)"},
	[KNOB_MIG_BAG_PROOFS] = {"mig.bag_proofs", "counter: plans the bags proved optimal"},
	[KNOB_MIG_BAG_UNITS] = {"mig.bag_units", "counter: plans of one unit more the bags found"},
	[KNOB_FARM_FAULT_RESTART] = {"farm.fault_restart_s",
	    "switch: seconds an MPS server may stay in FAULT before its restart (0: 10)"},
	[KNOB_FARM_FAULT_HANG] = {"farm.fault_hang_s",
	    "switch: seconds without CPU time after which a client that ran beside a fault counts as hung (0: 10)"},
	[KNOB_FARM_FAULT_GRACE] = {"farm.fault_grace_s",
	    "switch: seconds an MPS control daemon may stay silent after a fault before its restart (0: 60)"},
	[KNOB_FARM_START_OVER] = {"farm.start_over_pct", "switch: percent of the CPUs that tasks starting "
	    "together may want under -j auto (0: CTLNODE_START_OVER; -1: no limit), for bench/auto.sh's VARIANTS"},
	[KNOB_FARM_CPU_ROOM] = {"farm.cpu_room_pct", "switch: percent of the CPUs the tasks may want before "
	    "-j auto's count stops rising (0: CTLNODE_ROOM, 150), for bench/auto.sh's VARIANTS"},
	[KNOB_FARM_BLIND_AFTER] = {"farm.blind_after_s", "switch: seconds after a device first shows the "
	    "farm's work, none of its tasks listed, before -j auto takes the driver as blind (0: 20)"},
	[KNOB_FARM_USAGE_OFF] = {"farm.usage_off", "switch: 1, the per-task usage sampler reads no driver "
	    "(no usage records), for tests/gpu/fault-farm.sh's comparison of a farm without its reads"},
};

static _Atomic long values[KNOB_N];
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static int
find(const char *name, size_t len)
{
	for (int i = 0; i < KNOB_N; i++)
		if (strlen(rows[i].name) == len && strncmp(rows[i].name, name, len) == 0)
			return i;
	return -1;
}

/* Parse spec; set the knobs only when apply and the whole spec is good. */
static int
parse(const char *spec, int apply)
{
	const char *p = spec;

	while (*p) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return err_set(EXIT_USAGE, "knobs '%s': expected name=value[,name=value...]", spec);
		int id = find(p, (size_t)(eq - p));
		if (id < 0)
			return err_set(EXIT_USAGE, "knobs '%s': no knob named '%.*s' (gpupack --knobs lists them)",
			               spec, (int)(eq - p), p);
		char num[32], *stop;
		size_t n = (size_t)(end - eq - 1);
		if (n == 0 || n >= sizeof num)
			return err_set(EXIT_USAGE, "knobs '%s': %s wants a whole number", spec, rows[id].name);
		memcpy(num, eq + 1, n);
		num[n] = '\0';
		errno = 0;
		long v = strtol(num, &stop, 10);
		if (errno || *stop)
			return err_set(EXIT_USAGE, "knobs '%s': %s wants a whole number", spec, rows[id].name);
		if (apply)
			atomic_store(&values[id], v);
		p = *end ? end + 1 : end;
	}
	return 0;
}

static void
read_env(void)
{
	const char *s = getenv("GPUPACK_KNOBS");

	/* a bad GPUPACK_KNOBS is a test's mistake: said, and nothing set */
	if (s && *s && parse(s, 0) < 0) {
		err_report();
		err_clear();
		return;
	}
	if (s && *s)
		parse(s, 1);
}

long
knob(enum knob_id id)
{
	pthread_once(&env_once, read_env);
	return atomic_load(&values[id]);
}

void
knob_put(enum knob_id id, long value)
{
	pthread_once(&env_once, read_env);
	atomic_store(&values[id], value);
}

long
knob_add(enum knob_id id, long n)
{
	pthread_once(&env_once, read_env);
	return atomic_fetch_add(&values[id], n) + n;
}

int
knob_set(const char *name, long value)
{
	int id = find(name, strlen(name));

	if (id < 0)
		return err_set(EXIT_USAGE, "no knob named '%s'", name);
	knob_put((enum knob_id)id, value);
	return 0;
}

int
knob_parse(const char *spec)
{
	pthread_once(&env_once, read_env);
	if (parse(spec, 0) < 0)
		return -1;
	return parse(spec, 1);
}

void
knob_reset(void)
{
	pthread_once(&env_once, read_env);
	for (int i = 0; i < KNOB_N; i++)
		atomic_store(&values[i], 0);
}

void
knob_list(FILE *out)
{
	for (int i = 0; i < KNOB_N; i++)
		fprintf(out, "%-22s %6ld  %s\n", rows[i].name, knob((enum knob_id)i), rows[i].what);
}

const char *
knob_name(enum knob_id id)
{
	return rows[id].name;
}
