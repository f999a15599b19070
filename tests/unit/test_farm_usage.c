/*
 * test_farm_usage: per-task GPU time, joules and memory split from a
 * device's samples, the unknown cases, and the farm's bound
 * (src/farm/usage.c).
 */
#include "farm/usage.h"
#include "tap.h"

#include <math.h>

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void
test_split_by_util(void)
{
	struct usage_task a, b;
	struct usage_dev d = {0};
	struct usage_fig cpu, mem, gpu, j;
	int i;

	usage_task_start(&a, 1, 0, 0);
	usage_task_start(&b, 2, 0, 0);
	for (i = 0; i < 10; i++) {
		struct usage_seen s[2] = {
			{&a, 0.30, 1, (uint64_t)(1 + i) << 20},
			{&b, 0.60, 1, 4u << 20},
		};

		is_int(usage_interval(&d, s, 2, 0.5, 0.9, 100), 1, "interval %d split by per-process utilization", i);
	}
	/* one interval with no task: its energy is nobody's */
	is_int(usage_interval(&d, NULL, 0, 0.5, 0, 40), -1, "an interval with no task running");
	usage_task_end(&a, 5, 0, 3.25, 1, &cpu, &mem, &gpu, &j);
	ok(cpu.basis == USAGE_EXACT && near(cpu.v, 3.25), "CPU time: the kernel's, exact");
	ok(mem.basis == USAGE_ESTIMATE && near(mem.v, 10 << 20), "peak memory: the largest sample (%g)", mem.v);
	ok(gpu.basis == USAGE_ESTIMATE && near(gpu.v, 10 * 0.5 * 0.9 / 3), "GPU time: busy x 1/3 (%g)", gpu.v);
	ok(j.basis == USAGE_ESTIMATE && near(j.v, 1000.0 / 3), "joules: energy x 1/3 (%g)", j.v);
	is_str(j.how, "device energy split by per-process utilization", "and it says how");
	usage_task_end(&b, 5, 0, 1, 1, &cpu, &mem, &gpu, &j);
	ok(near(j.v, 2000.0 / 3) && near(gpu.v, 10 * 0.5 * 0.9 * 2 / 3), "the other task gets 2/3");
	ok(near(d.busy_s, 4.5) && near(d.energy_j, 1040) && near(d.unattributed_j, 40),
	    "the device: busy 4.5 s, 1040 J, 40 J unattributed");
	ok(near(a.j_acc + b.j_acc + d.unattributed_j, d.energy_j), "tasks + unattributed = the counter");
	ok(near(a.gpu_acc + b.gpu_acc, d.busy_s), "tasks' GPU time sums to the busy time");
}

static void
test_split_even(void)
{
	struct usage_task a, b, c;
	struct usage_dev d = {0};
	struct usage_fig cpu, mem, gpu, j;

	usage_task_start(&a, 1, 0, 0);
	usage_task_start(&b, 2, 0, 0);
	usage_task_start(&c, 3, 0, 0);
	/* under MPS: the driver gives the server's utilization, none of its clients' */
	struct usage_seen s[3] = {{&a, -1, 1, 1 << 30}, {&b, -1, 1, 2u << 30}, {&c, 0.5, 1, 3u << 30}};

	is_int(usage_interval(&d, s, 3, 1, 0.99, 300), 0, "one task without a utilization sample: an even split");
	usage_task_end(&a, 1, 0, 0.5, 1, &cpu, &mem, &gpu, &j);
	ok(near(j.v, 100) && near(gpu.v, 0.33), "each gets a third (%g J, %g s)", j.v, gpu.v);
	is_str(gpu.how, "device busy time split evenly among the tasks running", "and says so");
	ok(mem.basis == USAGE_ESTIMATE && near(mem.v, 1 << 30), "memory per process is still its own");

	/* all idle by their samples: no weights, an even split */
	struct usage_seen z[2] = {{&a, 0, 0, 0}, {&b, 0, 0, 0}};

	is_int(usage_interval(&d, z, 2, 1, 0, 50), 2, "every task at 0%% by its samples: split evenly");
	{
		struct usage_task p, q;
		struct usage_dev e = {0};
		struct usage_seen y[2] = {{&p, 0, 0, 0}, {&q, 0, 0, 0}};

		usage_task_start(&p, 4, 0, 0);
		usage_task_start(&q, 5, 0, 0);
		usage_interval(&e, y, 2, 1, 0, 50);
		y[0].util = 0.8;
		usage_interval(&e, y, 2, 1, 0.8, 100);
		usage_task_end(&p, 2, 0, 1, 1, &cpu, &mem, &gpu, &j);
		ok(near(j.v, 125) && near(gpu.v, 0.8), "an idle interval split evenly, a busy one by use (%g J)", j.v);
		is_str(j.how, "device energy split by per-process utilization", "the basis stays the driver's");
	}
}

static void
test_unknown(void)
{
	struct usage_task t, u, w;
	struct usage_dev d = {0};
	struct usage_fig cpu, mem, gpu, j;

	/* a driver with no per-process data, no busy share, no energy (a MIG device) */
	usage_task_start(&t, 7, 0, 0);
	struct usage_seen s[1] = {{&t, -1, 0, 0}};

	usage_interval(&d, s, 1, 1, -1, NAN);
	usage_task_end(&t, 1, 0, -1, 1, &cpu, &mem, &gpu, &j);
	ok(cpu.basis == USAGE_UNKNOWN && isnan(cpu.v), "no rusage: CPU time unknown");
	ok(mem.basis == USAGE_UNKNOWN && isnan(mem.v), "no per-process memory: unknown, not 0");
	is_str(mem.how, "the driver lists no per-process memory", "and says why");
	ok(gpu.basis == USAGE_UNKNOWN && isnan(gpu.v), "no busy share: GPU time unknown");
	ok(j.basis == USAGE_UNKNOWN && isnan(j.v), "no energy: joules unknown");
	ok(d.busy_unknown == 1 && d.energy_unknown == 1 && d.unattributed_j == 0, "the device counts its gaps");

	/* a task shorter than one sample */
	usage_task_start(&u, 8, 0, 0);
	usage_task_end(&u, 0.01, 0, 0.01, 1, &cpu, &mem, &gpu, &j);
	ok(isnan(gpu.v) && isnan(j.v) && isnan(mem.v), "a task no sample saw: every GPU figure unknown");
	is_str(j.how, "no sample in the task's life", "and says why");

	/* energy known but the task too short for the counter's resolution */
	usage_task_start(&w, 9, 0, 0);
	struct usage_seen v[1] = {{&w, 0.5, 1, 1}};

	usage_interval(&d, v, 1, 0.2, 0.5, 0);
	usage_task_end(&w, 0.2, 0, 0.1, 0, &cpu, &mem, &gpu, &j);
	ok(isnan(j.v) && j.basis == USAGE_UNKNOWN, "a life under the counter's resolution: joules unknown, never 0");
	ok(near(gpu.v, 0.1), "its GPU time is still known");
}

static void
test_bound(void)
{
	double cpu[3] = {30, 20, 10}, gpu[3] = {5, 5, 5}, wall[3] = {12, 14, 9};
	struct usage_bound b;

	usage_bound(cpu, gpu, wall, 3, 4, 1, 21, &b);
	ok(near(b.cpu_s, 15) && near(b.gpu_s, 15) && near(b.longest_s, 14), "cpu/cores, gpu/gpus, longest");
	ok(near(b.s, 15) && near(b.ratio, 21.0 / 15), "the bound is the largest; makespan over it");
	is_str(b.limit, "cpu", "ties go to the CPU, named first");
	usage_bound(cpu, gpu, wall, 3, 8, 1, 21, &b);
	is_str(b.limit, "gpu", "fewer cores' work: bound by the GPU");
	wall[1] = 40;
	usage_bound(cpu, gpu, wall, 3, 8, 1, 41, &b);
	ok(near(b.s, 40) && b.limit && b.limit[0] == 'l', "one long task bounds the farm");
	gpu[2] = NAN;
	wall[1] = 14;
	usage_bound(cpu, gpu, wall, 3, 8, 1, 21, &b);
	ok(isnan(b.gpu_s) && near(b.s, 14), "a task's GPU time unknown: the GPU term is unknown, not a smaller sum");
	usage_bound(NULL, NULL, NULL, 0, 8, 1, 0, &b);
	ok(isnan(b.s) && b.limit == NULL && isnan(b.ratio), "no tasks: no bound");
}

static void
test_top(void)
{
	double v[6] = {3, NAN, 9, 1, 9, 4};
	int top[3], n;

	n = usage_top(v, 6, 3, top);
	ok(n == 3 && top[0] == 2 && top[1] == 4 && top[2] == 5, "the 3 largest, ties in task order");
	n = usage_top(v, 2, 3, top);
	ok(n == 1 && top[0] == 0, "unknown values are left out");
	{
		char buf[16];

		is_str(usage_fmt(NAN, 1, buf, sizeof buf), "-", "unknown prints -");
		is_str(usage_fmt(0, 1, buf, sizeof buf), "0.0", "a known 0 prints 0");
	}
	is_str(usage_basis_name(USAGE_ESTIMATE), "estimate", "basis names");
}

static void
test_attribute(void)
{
	struct usage_task a, b;
	struct usage_seen s[2] = {{&a, -1, 0, 0}, {&b, -1, 0, 0}};
	/* a's two processes, another user's, b's */
	struct usage_proc p[4] = {{0, 0.25, 1 << 20}, {0, 0.5, 2 << 20}, {-1, 0.9, 8 << 20}, {1, 0.125, 0}};

	usage_task_start(&a, 1, 0, 0);
	usage_task_start(&b, 2, 0, 0);
	usage_attribute_util(s, 2, p, 4, 0, 0.5);
	ok(near(s[0].util, 0.75) && near(s[1].util, 0.125), "each process's utilization to its task, none to another user's");
	usage_attribute_util(s, 2, p, 0, 0, 0.7);
	ok(near(s[0].util, 0.75) && near(s[1].util, 0.125), "no process sampled in this read: each task's last sample stands");
	usage_attribute_util(s, 2, p + 1, 1, 0, 2.5);
	ok(near(s[0].util, 0.5) && near(s[1].util, 0.125), "a's new sample replaces its last; b's still stands");
	usage_attribute_util(s, 2, p, 0, 0, 0.5 + USAGE_UTIL_HOLD + 0.1);
	ok(near(s[0].util, 0.5) && s[1].util == 0, "past %g s without a sample: idle (0, known)", USAGE_UTIL_HOLD);
	usage_attribute_util(s, 2, p, 0, 0, 10);
	ok(s[0].util == 0 && s[1].util == 0, "no process sampled for long: every task idle (0, known)");
	usage_attribute_util(s, 2, p, -1, 0, 10);
	ok(s[0].util < 0 && s[1].util < 0, "no samples from the driver: unknown");
	usage_attribute_util(s, 2, p, 4, 1, 10);
	ok(s[0].util < 0 && s[1].util < 0, "under MPS the samples are the server's: unknown");
	usage_attribute_util(s, 2, p + 2, 1, 0, 10);
	ok(s[0].util < 0 && s[1].util < 0, "samples that name none of the running tasks: unknown, not 0");
	usage_attribute_mem(s, 2, p, 4);
	ok(s[0].has_mem && s[0].mem == (3u << 20), "a task's processes' memory summed");
	ok(!s[1].has_mem && s[1].mem == 0, "a process listed without memory gives none");
}

/*
 * 6 identical time-sliced tasks, each 1/6 of the SMs: the driver samples
 * each process every 0.3 s on its own phase, the farm reads every 0.2 s
 * for 15 s. Split by the samples each read happens to hold, a task's GPU
 * time follows the phases (on an H200: 2.11-2.84 s for 6 identical
 * SGEMMs); with each task's last sample standing, it is even.
 */
static void
test_aliasing(void)
{
	enum { N = 6 };
	struct usage_task t[N];
	struct usage_dev d = {0};
	double lo = 1e9, hi = 0, sum = 0;

	for (int i = 0; i < N; i++)
		usage_task_start(&t[i], i + 1, 0, 0);
	for (int r = 1; r <= 75; r++) {
		double now = 0.2 * r;
		struct usage_seen s[N];
		struct usage_proc p[N];
		int np = 0;

		for (int i = 0; i < N; i++) {
			/* a sample of process i in (now - 0.2, now]: at 0.07 i + 0.3 k */
			double k = floor((now - 0.07 * i) / 0.3), at = 0.07 * i + 0.3 * k;

			s[i] = (struct usage_seen){&t[i], -1, 0, 0};
			if (at > now - 0.2 + 1e-9 && at >= 0)
				p[np++] = (struct usage_proc){i, 1.0 / N, 0};
		}
		usage_attribute_util(s, N, p, np, 0, now);
		usage_interval(&d, s, N, 0.2, 1.0, NAN);
	}
	for (int i = 0; i < N; i++) {
		lo = fmin(lo, t[i].gpu_acc);
		hi = fmax(hi, t[i].gpu_acc);
		sum += t[i].gpu_acc;
	}
	ok(near(sum, d.busy_s), "6 identical tasks' GPU time sums to the busy time (%g s)", sum);
	ok((hi - lo) / (sum / N) <= 0.05, "and splits evenly though each read holds some of their samples: "
	    "%.3f-%.3f s", lo, hi);
}

int
main(void)
{
	test_split_by_util();
	test_split_even();
	test_unknown();
	test_bound();
	test_top();
	test_attribute();
	test_aliasing();
	return done_testing();
}
