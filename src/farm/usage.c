/*
 * usage: each task's share of its device, interval by interval, and the
 * farm's bound (see usage.h for the rules; doc/run.md for what users see).
 */
#include "farm/usage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void
usage_task_start(struct usage_task *t, long long seq, int dev, double t0)
{
	memset(t, 0, sizeof(*t));
	t->seq = seq;
	t->dev = dev;
	t->t0 = t0;
	t->t1 = NAN;
	t->cpu_s = -1;
	t->util_at = -1;
}

void
usage_attribute_util(struct usage_seen *s, int n, const struct usage_proc *p, int np, int mps, double now)
{
	int matched = 0;

	/* unknown until a sample of its processes comes (np < 0: none will) */
	for (int i = 0; i < n; i++)
		s[i].util = -1;
	for (int k = 0; k < np; k++)
		if (p[k].task >= 0 && p[k].task < n) {
			if (s[p[k].task].util < 0)
				s[p[k].task].util = 0;
			s[p[k].task].util += p[k].sm;
			matched++;
		}
	if (mps || (np > 0 && matched == 0)) {
		for (int i = 0; i < n; i++)
			s[i].util = -1;
		return;
	}
	for (int i = 0; i < n && np >= 0; i++) {
		struct usage_task *t = s[i].task;

		if (s[i].util >= 0) {
			t->util_last = s[i].util;
			t->util_at = now;
		} else {
			s[i].util = t->util_at >= 0 && now - t->util_at <= USAGE_UTIL_HOLD ? t->util_last : 0;
		}
	}
}

void
usage_attribute_mem(struct usage_seen *s, int n, const struct usage_proc *p, int np)
{
	for (int k = 0; k < np; k++)
		if (p[k].task >= 0 && p[k].task < n && p[k].mem > 0) {
			s[p[k].task].has_mem = 1;
			s[p[k].task].mem += p[k].mem;
		}
}

int
usage_interval(struct usage_dev *d, struct usage_seen *s, int n, double dt, double busy, double dj)
{
	double sum = 0;
	int by_util = n > 0, idle;

	if (busy >= 0)
		d->busy_s += busy * dt;
	else
		d->busy_unknown++;
	if (isnan(dj))
		d->energy_unknown++;
	else
		d->energy_j += dj;
	if (n == 0) {
		if (!isnan(dj))
			d->unattributed_j += dj;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (s[i].util < 0)
			by_util = 0;
		else
			sum += s[i].util;
	}
	/*
	 * every task idle by its own samples (starting up, between kernels):
	 * the driver did say, so the basis stands; nothing to weigh by, so the
	 * interval (its idle power, its busy share if any) is split evenly
	 */
	idle = by_util && !(sum > 0);
	for (int i = 0; i < n; i++) {
		struct usage_task *t = s[i].task;
		double share = by_util && !idle ? s[i].util / sum : 1.0 / n;

		t->intervals++;
		t->even += !by_util;
		if (busy >= 0)
			t->gpu_acc += busy * dt * share;
		else
			t->busy_unknown++;
		if (isnan(dj))
			t->energy_unknown++;
		else
			t->j_acc += dj * share;
		if (s[i].has_mem) {
			t->mem_samples++;
			if (s[i].mem > t->mem_max)
				t->mem_max = s[i].mem;
		}
	}
	return idle ? 2 : by_util;
}

static void
fig(struct usage_fig *f, double v, enum usage_basis b, const char *how)
{
	f->v = b == USAGE_UNKNOWN ? NAN : v;
	f->basis = b;
	f->how = how;
}

void
usage_task_end(struct usage_task *t, double t1, int exit, double cpu_s, int energy_ok,
    struct usage_fig *cpu, struct usage_fig *mem, struct usage_fig *gpu, struct usage_fig *joules)
{
	t->t1 = t1;
	t->exit = exit;
	t->cpu_s = cpu_s;
	if (cpu_s >= 0)
		fig(cpu, cpu_s, USAGE_EXACT, "kernel: user + system time of the task and its children");
	else
		fig(cpu, 0, USAGE_UNKNOWN, "the kernel gave no resource usage");

	if (t->mem_samples > 0)
		fig(mem, (double)t->mem_max, USAGE_ESTIMATE, "largest per-process memory sample");
	else if (t->intervals > 0)
		fig(mem, 0, USAGE_UNKNOWN, "the driver lists no per-process memory");
	else
		fig(mem, 0, USAGE_UNKNOWN, "no sample in the task's life");

	if (t->intervals == 0)
		fig(gpu, 0, USAGE_UNKNOWN, "no sample in the task's life");
	else if (t->busy_unknown > 0)
		fig(gpu, 0, USAGE_UNKNOWN, "the driver gives no busy time for this device");
	else if (t->even > 0)
		fig(gpu, t->gpu_acc, USAGE_ESTIMATE, "device busy time split evenly among the tasks running");
	else
		fig(gpu, t->gpu_acc, USAGE_ESTIMATE, "device busy time split by per-process utilization");

	if (t->intervals == 0)
		fig(joules, 0, USAGE_UNKNOWN, "no sample in the task's life");
	else if (t->energy_unknown > 0)
		fig(joules, 0, USAGE_UNKNOWN, "the driver gives no energy for this device");
	else if (!energy_ok)
		fig(joules, 0, USAGE_UNKNOWN, "the task's life is under 10 updates of the energy counter");
	else if (t->even > 0)
		fig(joules, t->j_acc, USAGE_ESTIMATE, "device energy split evenly among the tasks running");
	else
		fig(joules, t->j_acc, USAGE_ESTIMATE, "device energy split by per-process utilization");
}

void
usage_bound(const double *cpu, const double *gpu, const double *wall, int n, int cores, int gpus,
    double makespan, struct usage_bound *b)
{
	double c = 0, g = 0, w = NAN;
	int c_unknown = n == 0, g_unknown = n == 0 || gpus <= 0;

	memset(b, 0, sizeof(*b));
	for (int i = 0; i < n; i++) {
		if (isnan(cpu[i]))
			c_unknown = 1;
		else
			c += cpu[i];
		if (isnan(gpu[i]))
			g_unknown = 1;
		else
			g += gpu[i];
		if (!isnan(wall[i]) && (isnan(w) || wall[i] > w))
			w = wall[i];
	}
	b->cores = cores;
	b->gpus = gpus;
	b->cpu_s = c_unknown || cores <= 0 ? NAN : c / cores;
	b->gpu_s = g_unknown ? NAN : g / gpus;
	b->longest_s = w;
	b->s = NAN;
	b->limit = NULL;
	if (!isnan(b->cpu_s)) {
		b->s = b->cpu_s;
		b->limit = "cpu";
	}
	if (!isnan(b->gpu_s) && (isnan(b->s) || b->gpu_s > b->s)) {
		b->s = b->gpu_s;
		b->limit = "gpu";
	}
	if (!isnan(w) && (isnan(b->s) || w > b->s)) {
		b->s = w;
		b->limit = "longest task";
	}
	b->makespan = makespan;
	b->ratio = b->s > 0 && makespan >= 0 ? makespan / b->s : NAN;
}

int
usage_top(const double *v, int n, int k, int *top)
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		int j;

		if (isnan(v[i]))
			continue;
		/* insertion into the k largest so far; ties keep the earlier task first */
		for (j = m; j > 0 && v[top[j - 1]] < v[i]; j--)
			if (j < k)
				top[j] = top[j - 1];
		if (j < k) {
			top[j] = i;
			if (m < k)
				m++;
		}
	}
	return m;
}

const char *
usage_fmt(double v, int prec, char *buf, int size)
{
	if (isnan(v))
		snprintf(buf, (size_t)size, "-");
	else
		snprintf(buf, (size_t)size, "%.*f", prec, v);
	return buf;
}

const char *
usage_basis_name(enum usage_basis b)
{
	switch (b) {
	case USAGE_EXACT:
		return "exact";
	case USAGE_ESTIMATE:
		return "estimate";
	default:
		return "unknown";
	}
}
