/*
 * test_gpu_usage: one command's usage (src/gpu/usage.c) from fed samples,
 * counter readings and rusage: every field, and each unknown case (no
 * per-process data, its processes never listed or listed without memory,
 * no counter, a window under the counter's resolution): the field says
 * so and no figure is invented.
 */
#include "gpu/usage.h"
#include "tap.h"

#include <math.h>
#include <string.h>

/* the command's tree: pids 100..199 */
static int
mine(pid_t pid, void *arg)
{
	(void)arg;
	return pid >= 100 && pid < 200;
}

static void
sample(struct gpu_sample *s, int n, const pid_t *pids, const uint64_t *mem)
{
	memset(s, 0, sizeof *s);
	s->nprocs = n;
	for (int i = 0; i < n; i++) {
		s->procs[i].pid = pids[i];
		s->procs[i].mem = mem[i];
	}
}

/* a counter that moves 700 mJ every 10 ms (70 W), read every 2 ms from t0 for secs */
static void
counter(struct gpu_usage *u, double t0, double secs)
{
	for (double t = 0; t <= secs + 1e-9; t += 0.002)
		gpu_usage_feed_energy(u, t0 + t, 1000000 + 700 * (uint64_t)(t / 0.01 + 1e-9));
}

static void
test_fields(void)
{
	struct gpu_usage u;
	struct gpu_sample s;
	pid_t p1[3] = {100, 150, 900};
	uint64_t m1[3] = {1u << 30, 512u << 20, 8u << 30}, m2[3] = {2u << 30, 0, 8u << 30};

	gpu_usage_init(&u);
	sample(&s, 3, p1, m1);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	m2[1] = 256u << 20;
	sample(&s, 3, p1, m2);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	counter(&u, 5.0, 1.0);
	gpu_usage_finish(&u, 1.0, 0.25, 0.05);
	ok(u.wall_s.quality == GPU_USAGE_EXACT && u.wall_s.value == 1.0, "wall: exact");
	ok(u.cpu_s.quality == GPU_USAGE_EXACT && fabs(u.cpu_s.value - 0.30) < 1e-12, "CPU: user + system, exact");
	ok(u.peak_mem.quality == GPU_USAGE_ESTIMATE && u.peak_mem.value == (double)((2u << 30) + (256u << 20)),
	    "peak memory: the most its processes held at once (2.25 GiB), not another's 8 GiB: %.0f",
	    u.peak_mem.value);
	ok(u.energy_j.quality == GPU_USAGE_ESTIMATE && fabs(u.energy_j.value - 70.0) < 1.0,
	    "energy: 70 W over 1 s = %.1f J, an estimate (another process was on the device)", u.energy_j.value);
	ok(strstr(u.energy_j.why, "other processes") != NULL, "energy: says others shared it");

	/* alone on the device: the energy is the device's and exact */
	gpu_usage_init(&u);
	sample(&s, 2, p1, m1);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	counter(&u, 0, 0.5);
	gpu_usage_finish(&u, 0.5, 0, 0);
	ok(u.energy_j.quality == GPU_USAGE_EXACT && fabs(u.energy_j.value - 35.0) < 1.0,
	    "alone: energy exact (%.1f J)", u.energy_j.value);

	/* alone on a MIG device: the counter is the whole GPU's, an estimate */
	gpu_usage_init(&u);
	u.counter_shared = 1;
	sample(&s, 2, p1, m1);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	counter(&u, 0, 0.5);
	gpu_usage_finish(&u, 0.5, 0, 0);
	ok(u.energy_j.quality == GPU_USAGE_ESTIMATE && strstr(u.energy_j.why, "whole GPU"),
	    "a MIG device: the GPU's energy, an estimate");
}

static void
test_unknowns(void)
{
	struct gpu_usage u;
	struct gpu_sample s;
	pid_t other[1] = {900}, p[1] = {120};
	uint64_t m[1] = {1u << 30}, zero[1] = {0};

	/* no per-process data at all */
	gpu_usage_init(&u);
	gpu_usage_feed_sample(&u, NULL, mine, NULL);
	gpu_usage_finish(&u, 2.0, NAN, NAN);
	ok(u.peak_mem.quality == GPU_USAGE_UNKNOWN && isnan(u.peak_mem.value), "no per-process data: memory unknown");
	ok(u.cpu_s.quality == GPU_USAGE_UNKNOWN && isnan(u.cpu_s.value), "no rusage: CPU unknown");
	ok(u.energy_j.quality == GPU_USAGE_UNKNOWN && isnan(u.energy_j.value) &&
	    strstr(u.energy_j.why, "no energy counter"), "no counter: energy unknown (%s)", u.energy_j.why);

	/* the driver lists processes, never its own: not 0, unknown */
	gpu_usage_init(&u);
	sample(&s, 1, other, m);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	gpu_usage_finish(&u, 1.0, 0, 0);
	ok(u.peak_mem.quality == GPU_USAGE_UNKNOWN && isnan(u.peak_mem.value),
	    "its processes never listed: memory unknown, not 0 (%s)", u.peak_mem.why);

	/* listed, without their memory (a driver that does not say) */
	gpu_usage_init(&u);
	sample(&s, 1, p, zero);
	gpu_usage_feed_sample(&u, &s, mine, NULL);
	gpu_usage_finish(&u, 1.0, 0, 0);
	ok(u.peak_mem.quality == GPU_USAGE_UNKNOWN && isnan(u.peak_mem.value), "listed without memory: unknown");

	/* a life under 10 counter updates: unknown, never 0 */
	gpu_usage_init(&u);
	counter(&u, 0, 0.05);
	gpu_usage_finish(&u, 0.05, 0, 0);
	ok(u.energy_j.quality == GPU_USAGE_UNKNOWN && isnan(u.energy_j.value) && strstr(u.energy_j.why, "under 10"),
	    "50 ms of a 10 ms counter: unknown (%s)", u.energy_j.why);

	/* a counter that never moves: its resolution is not known */
	gpu_usage_init(&u);
	for (int i = 0; i < 100; i++)
		gpu_usage_feed_energy(&u, i * 0.01, 5000);
	gpu_usage_finish(&u, 1.0, 0, 0);
	ok(u.energy_j.quality == GPU_USAGE_UNKNOWN && isnan(u.energy_j.value), "a counter that never moves: unknown");
}

static void
test_output(void)
{
	struct gpu_usage u;
	char buf[4096];
	FILE *f;

	gpu_usage_init(&u);
	counter(&u, 0, 0.05);
	gpu_usage_finish(&u, 0.05, 0.01, 0);
	f = fmemopen(buf, sizeof buf, "w");
	gpu_usage_print(&u, "train.py", f);
	fclose(f);
	ok(strstr(buf, "usage of train.py") && strstr(buf, "GPU energy   -") && !strstr(buf, " 0.0 J"),
	    "printed: the unknown energy is -, never 0 J");
	f = fmemopen(buf, sizeof buf, "w");
	gpu_usage_json(&u, "train.py", 3, "GPU-x", f);
	fclose(f);
	ok(strstr(buf, "\"exit_status\": 3") && strstr(buf, "\"quality\": \"unknown\"") &&
	    strstr(buf, "\"value\": null"), "JSON: exit status, unknown as null with its quality");
}

int
main(void)
{
	test_fields();
	test_unknowns();
	test_output();
	return done_testing();
}
