/*
 * test_farm_control: the -j auto controller against a simulated device, in
 * simulated time. Each shape is a farm (start-up time and its CPU use, GPU
 * work, how k tasks together speed up, SM activity, memory per task); the
 * same farm runs with the controller and with every fixed count 1..48, and
 * the controller must come within 0.9 of the best fixed count, stay under
 * its bounds, and back off when the device runs out of memory.
 *
 * TEST_CONTROL_VERBOSE=1 prints each run's decisions and makespans.
 */
#include "tap.h"
#include "farm/control.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIB_ ((uint64_t)1 << 20)
#define GIB_ ((uint64_t)1 << 30)
#define DT 0.01
#define MAXT 256

struct shape {
	const char *name;
	int ntasks;
	double start_cpu_s;   /* start-up: seconds of CPU work (one core), then ... */
	double start_wait_s;  /* ... seconds of waiting (CUDA init: no CPU, no GPU) */
	double gpu_s;         /* GPU work, seconds alone */
	double gpu_cpu;       /* cores a task keeps busy while on the GPU (a spinning sync) */
	int ks;               /* tasks on the GPU at which it saturates */
	double gain;          /* speed of ks tasks together, in tasks alone */
	double fall;          /* speed lost per task beyond ks */
	double sm1;           /* SM activity of one task */
	int signals;          /* 2: SM activity and busy share; 1: busy only; 0: none */
	int mps;
	uint64_t mem;         /* device memory per task */
	uint64_t dev_mem;
	int ncpu;
	double hetero;        /* > 0: task i's GPU work is gpu_s * (1 + hetero * (i % 5)) / ... */
	int wait_shared;      /* 1: the waits share one server (contexts made by the MPS server):
	                       * k tasks waiting at once each wait k times as long */
};

struct task {
	int phase;            /* 0 start-up, 1 on the GPU */
	double cpu_left, wait_left, gpu_left;
	int seq;
};

static double
speed(const struct shape *sh, int k)
{
	double r;

	if (k <= 0)
		return 0;
	if (sh->ks <= 1)
		r = sh->gain;
	else if (k <= sh->ks)
		r = 1 + (sh->gain - 1) * (k - 1) / (sh->ks - 1);
	else
		r = sh->gain - sh->fall * (k - sh->ks);
	return r < 0.3 ? 0.3 : r;
}

static double
sm_of(const struct shape *sh, int k)
{
	double v;

	if (k <= 0)
		return 0;
	v = sh->ks <= 1 ? sh->sm1 : sh->sm1 + (1 - sh->sm1) * (k - 1) / (sh->ks - 1);
	return v > 1 ? 1 : v;
}

static double
gpu_work(const struct shape *sh, int seq)
{
	if (sh->hetero <= 0)
		return sh->gpu_s;
	/* one task in seven is long */
	return seq % 7 == 3 ? sh->gpu_s * sh->hetero : sh->gpu_s * (0.5 + 0.25 * (seq % 4));
}

struct result {
	double makespan;
	int max_limit, min_limit, final_limit, ooms, lost;
	struct ctl ctl;
};

static int verbose;
static int sim_start; /* > 0: the controller's first count (a remembered one) */

/* Run the farm: fixed > 0 a fixed count, else the controller. */
static void
simulate(const struct shape *sh, int fixed, struct result *res)
{
	struct task run[MAXT];
	int nrun = 0, next = 0, queue[1024], nq = 0, ended = 0, oom_pending = 0, limit;
	double t = 0, tick = 0, acc_busy = 0, acc_sm = 0, acc_cpu = 0, acc_n = 0;
	uint64_t used = 0, footprint = 0;
	unsigned long long nended = 0;
	struct ctl_config cfg = {4, 48, sh->mps, 0, 600 * MIB_};

	memset(res, 0, sizeof *res);
	if (!sh->mps)
		cfg.start = 2;
	if (sim_start > 0)
		cfg.start = sim_start;
	ctl_init(&res->ctl, &cfg, 0);
	limit = fixed > 0 ? fixed : res->ctl.limit;
	res->min_limit = res->max_limit = limit;
	while (ended < sh->ntasks && t < 2000) {
		int k = 0;
		double cpu_demand = 0, cpu_share;
		int nwait = 0;

		/* fill */
		while (nrun < limit && (nq > 0 || next < sh->ntasks)) {
			struct task *x = &run[nrun++];
			int seq = nq > 0 ? queue[--nq] : next++;

			x->phase = 0;
			x->seq = seq;
			x->cpu_left = sh->start_cpu_s;
			x->wait_left = sh->start_wait_s;
			x->gpu_left = gpu_work(sh, seq);
		}
		for (int i = 0; i < nrun; i++) {
			if (run[i].phase == 1)
				k++;
			cpu_demand += run[i].phase == 1 ? sh->gpu_cpu : run[i].cpu_left > 0 ? 1 : 0;
			nwait += run[i].phase == 0 && run[i].cpu_left <= 0;
		}
		cpu_share = cpu_demand > sh->ncpu ? sh->ncpu / cpu_demand : 1;
		for (int i = 0; i < nrun; i++) {
			struct task *x = &run[i];

			if (x->phase == 0) {
				if (x->cpu_left > 0)
					x->cpu_left -= DT * cpu_share;
				else
					x->wait_left -= sh->wait_shared && nwait > 1 ? DT / nwait : DT;
				if (x->cpu_left <= 0 && x->wait_left <= 0) {
					if (used + sh->mem > sh->dev_mem) {
						/* out of memory: it fails, and runs again later */
						queue[nq++] = x->seq;
						*x = run[--nrun];
						i--;
						oom_pending++;
						res->ooms++;
						continue;
					}
					used += sh->mem;
					if (sh->mem > footprint)
						footprint = sh->mem;
					x->phase = 1;
				}
			} else {
				x->gpu_left -= DT * speed(sh, k) / k;
				if (x->gpu_left <= 0) {
					used -= sh->mem;
					*x = run[--nrun];
					i--;
					ended++;
					nended++;
				}
			}
		}
		acc_busy += k > 0;
		acc_sm += sm_of(sh, k);
		acc_cpu += cpu_demand * (cpu_share < 1 ? cpu_share : 1) / sh->ncpu;
		acc_n++;
		t += DT;
		if (fixed == 0 && t - tick >= CTL_TICK) {
			struct ctl_signals s;
			int unrev = 0;

			for (int i = 0; i < nrun; i++)
				unrev += run[i].phase == 0;
			memset(&s, 0, sizeof s);
			s.now = t;
			s.running = nrun;
			s.unrevealed = unrev;
			s.demand = nq > 0 || next < sh->ntasks;
			s.ended = nended;
			s.busy = sh->signals >= 1 ? acc_busy / acc_n : -1;
			s.sm_active = sh->signals >= 2 ? acc_sm / acc_n : -1;
			s.cpu_busy = acc_cpu / acc_n;
			s.ncpu = sh->ncpu;
			s.mem_total = sh->dev_mem;
			s.mem_free = sh->dev_mem - used;
			s.footprint = footprint;
			s.mem_pending = (uint64_t)unrev * (footprint > 600 * MIB_ ? footprint : 600 * MIB_);
			s.host_avail = 64 * GIB_;
			s.oom = oom_pending;
			oom_pending = 0;
			limit = ctl_step(&res->ctl, &s);
			if (getenv("TEST_CONTROL_SIGNALS") && fixed == 0)
				printf("#     t %.2f run %d unrev %d free %.1f G pend %.1f G fp %.1f G oom %d -> %d\n", t,
				    s.running, s.unrevealed, s.mem_free / 1e9, s.mem_pending / 1e9, s.footprint / 1e9,
				    s.oom, limit);
			if (limit > res->max_limit)
				res->max_limit = limit;
			if (limit < res->min_limit)
				res->min_limit = limit;
			tick = t;
			acc_busy = acc_sm = acc_cpu = acc_n = 0;
		}
	}
	res->makespan = t;
	res->final_limit = limit;
	res->lost = sh->ntasks - ended;
}

/* The controller against every fixed count; returns best-fixed / auto. */
static double
compare(const struct shape *sh, int *best_j, struct result *autor)
{
	struct result r;
	double best = 1e9;

	for (int j = 1; j <= 48; j++) {
		simulate(sh, j, &r);
		ctl_free(&r.ctl);
		/* a fixed count that loses tasks to memory is not a fair best: they would fail */
		if (r.ooms == 0 && r.makespan < best) {
			best = r.makespan;
			*best_j = j;
		}
	}
	simulate(sh, 0, autor);
	if (verbose) {
		printf("# %s: best fixed -j %d %.2f s; auto %.2f s (limits %d..%d, final %d, %d ooms); "
		    "ratio %.3f\n", sh->name, *best_j, best, autor->makespan, autor->min_limit,
		    autor->max_limit, autor->final_limit, autor->ooms, best / autor->makespan);
		for (size_t i = 0; i < autor->ctl.nlog; i++)
			printf("#   %7.2f s  %3d  rate %6.2f  gpu %5.2f cpu %5.2f  %s\n", autor->ctl.log[i].t,
			    autor->ctl.log[i].limit, autor->ctl.log[i].rate, autor->ctl.log[i].gpu,
			    autor->ctl.log[i].cpu, autor->ctl.log[i].why);
	}
	return best / autor->makespan;
}

static const struct shape shapes[] = {
	/* name, n, cpu_s, wait_s, gpu_s, gpu_cpu, ks, gain, fall, sm1, signals, mps, mem, dev, ncpu, hetero, wait_shared */
	{"rising then flat (SGEMM n=512 under MPS)", 200, 0.3, 0.2, 1.0, 1, 6, 2.0, 0, 0.65, 2, 1,
	    600 * MIB_, 80 * GIB_, 16, 0, 0},
	{"rising then falling", 200, 0.3, 0.2, 1.0, 1, 6, 3.0, 0.25, 0.4, 2, 1, 600 * MIB_, 80 * GIB_, 16, 0, 0},
	{"flat from 1 (SGEMM n=4096)", 60, 0.3, 0.2, 1.0, 1, 1, 1.0, 0.02, 0.97, 2, 1, 800 * MIB_,
	    80 * GIB_, 16, 0, 0},
	{"start-up bound (PyTorch, 16 CPUs)", 32, 4.0, 5.0, 0.8, 1, 8, 1.5, 0, 0.5, 2, 1, GIB_, 80 * GIB_,
	    16, 0, 0},
	{"memory: a sixth of the device each", 30, 0.3, 0.2, 1.5, 1, 4, 1.3, 0, 0.3, 2, 1, 14 * GIB_,
	    80 * GIB_, 16, 0, 0},
	{"heterogeneous durations", 60, 0.3, 0.2, 0.5, 1, 3, 1.6, 0, 0.7, 2, 1, GIB_, 80 * GIB_, 16, 6, 0},
	{"time-slicing, busy share only", 120, 0.3, 0.2, 0.5, 1, 1, 1.0, 0.03, 0.6, 1, 0, GIB_, 80 * GIB_,
	    16, 0, 0},
	{"memory found late: a quarter of the device after 5 s of start-up", 40, 1.0, 4.0, 1.0, 1, 4, 1.5, 0,
	    0.4, 2, 1, 20 * GIB_, 80 * GIB_, 16, 0, 0},
	{"no GPU signal, rising then flat", 300, 0.3, 0.2, 1.0, 1, 6, 4.0, 0, 0.5, 0, 1, 600 * MIB_,
	    80 * GIB_, 16, 0, 0},
	/*
	 * Seen on two H200s (32 CPUs): 24 SGEMM n=512 tasks per GPU whose start-up
	 * (a CUDA context through the MPS server) keeps the CPUs nearly idle: the
	 * GPU looked idle for 1.5 s, the count doubled to 32, all 24 ran at once,
	 * 1.3x slower than 3 at a time. Many clients at once are slower here.
	 */
	{"start-up without CPU, few tasks, many CPUs, falling", 24, 0.05, 1.0, 0.6, 0.3, 4, 3.0, 0.08, 0.5,
	    2, 1, 600 * MIB_, 140 * GIB_, 32, 0, 0},
	{"start-up without CPU, contexts made together", 120, 0.05, 0.6, 0.3, 0.3, 4, 3.0, 0.04, 0.5, 2, 1,
	    600 * MIB_, 80 * GIB_, 16, 0, 1},
};

/*
 * The first steps, signal by signal: a GPU that reads idle before any task
 * ended doubles the count only while the tasks starting keep the CPUs busy
 * (imports overlap); tasks that wait on the driver with the CPUs idle are
 * waited for (seen on two H200s: doubling blind put 24 tasks per GPU on at
 * once, 1.3x slower than 3).
 */
static double first_busy;   /* the busy share the driver reports in first_steps */
static int first_timeslice; /* first_steps without MPS */

static int
first_steps(double cores_each, int ncpu, int sm_after)
{
	struct ctl c;
	struct ctl_config cfg = {4, 48, 1, 0, 600 * MIB_};
	struct ctl_signals s;
	int limit = 4;

	cfg.mps = !first_timeslice;
	ctl_init(&c, &cfg, 0);
	for (int i = 1; i <= 3; i++) {
		memset(&s, 0, sizeof s);
		s.now = 0.5 * i;
		s.running = limit;
		s.unrevealed = limit;
		s.demand = 1;
		s.busy = first_busy;
		s.sm_active = i >= sm_after ? 0.4 : 0;
		s.cpu_busy = cores_each * limit / ncpu < 1 ? cores_each * limit / ncpu : 1;
		s.ncpu = ncpu;
		s.mem_total = s.mem_free = 140 * GIB_;
		s.host_avail = 64 * GIB_;
		limit = ctl_step(&c, &s);
	}
	ctl_free(&c);
	return limit;
}

static void
test_first_steps(void)
{
	/* half a core per starting task (CUDA contexts through MPS), GPU idle for 1.5 s: no blind doubling */
	is_int(first_steps(0.5, 32, 99), 4, "tasks starting with the CPUs idle, GPU idle: the count waits");
	/* the same once the GPU shows work: it grows, by half */
	ok(first_steps(0.5, 32, 2) > 4 && first_steps(0.5, 32, 2) < 16,
	    "once the GPU shows work the count grows, not by doubling (%d)", first_steps(0.5, 32, 2));
	/* one core per starting task (PyTorch imports): doubling, 4 8 16 32 */
	is_int(first_steps(1.0, 32, 99), 32, "start-ups busy on the CPUs, GPU idle: the count doubles");
	/* the CPUs full: start-ups still overlap, up to twice the CPUs */
	is_int(first_steps(1.0, 4, 99), 8, "CPUs full of start-ups: up to twice the CPUs");
	/* under MPS a GPU busy all the time says nothing: SM activity (40%) does, and leaves room */
	first_busy = 1;
	ok(first_steps(0.5, 32, 2) > 4, "MPS, busy 100%% but SMs 40%% active: the count grows (%d)",
	    first_steps(0.5, 32, 2));
	/* time-sliced, the busy share is the GPU's signal: busy all the time, no room for more */
	first_timeslice = 1;
	is_int(first_steps(1.0, 32, 99), 4, "time-sliced and busy 100%%: the count stays");
	/* and busy a third of the time: the busy share, the only GPU signal there, leaves room */
	first_busy = 0.3;
	ok(first_steps(1.0, 32, 99) > 4, "time-sliced and busy 30%%: the count grows (%d)", first_steps(1.0, 32, 99));
	first_busy = 0;
	first_timeslice = 0;
}

/*
 * Start-ups bound by 4 CPUs on a loaded machine: the GPU idle, the CPUs
 * full, except on ticks where the launcher is between two tasks (a slot
 * empty for a tick, the CPUs read below full: dips[i]). Returns the highest
 * count; *why gets the first reason the ramp gave for stopping.
 */
static int
startup_dips(const double *dips, int n, const char **why)
{
	struct ctl c;
	struct ctl_config cfg = {4, 48, 1, 0, 600 * MIB_};
	struct ctl_signals s;
	int limit = 4, most = 4;

	ctl_init(&c, &cfg, 0);
	for (int i = 0; i < n; i++) {
		memset(&s, 0, sizeof s);
		s.now = 0.5 * (i + 1);
		s.running = dips[i] < 0 ? limit - 1 : limit;
		s.demand = 1;
		s.busy = -1;
		s.sm_active = 0.01;
		s.cpu_busy = dips[i] < 0 ? 1 : dips[i];
		s.ncpu = 4;
		s.ended = (unsigned long long)i + 1;
		s.mem_total = s.mem_free = 80 * GIB_;
		s.host_avail = 64 * GIB_;
		limit = ctl_step(&c, &s);
		most = limit > most ? limit : most;
	}
	*why = "";
	for (size_t i = 0; i < c.nlog; i++)
		if (strcmp(c.log[i].why, "start") && strcmp(c.log[i].why, "GPU idle")) {
			*why = c.log[i].why;
			break;
		}
	ctl_free(&c);
	return most;
}

static void
test_startup_dips(void)
{
	/* -1: a slot empty on that tick (the launcher late), CPUs full; 0.4, 0.3: two ticks' dip */
	static const double steady[] = {0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	static const double dips[] = {0.5, -1, 1, 1, 0.87, 1, 0.73, 1, 0.8, 0.65, 1, 0.4, 0.3, 1, 0.9, 0.85};
	/* 0.3 for 2.5 s: the tasks moved on */
	static const double freed[] = {0.5, 1, 1, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3};
	const char *why;

	is_int(startup_dips(steady, 10, &why), 8, "CPUs full of start-ups: up to twice the CPUs, 8");
	is_str(why, "CPUs saturated", "and the CPUs are what stopped it");
	is_int(startup_dips(dips, 16, &why), 8, "the CPUs dipping below full on some ticks: still 8");
	is_str(why, "CPUs saturated", "a slot empty for a tick is not what stopped the ramp");
	/* the CPUs truly freed (the tasks moved on): the count grows again */
	ok(startup_dips(freed, 9, &why) > 8, "the CPUs freed for longer than a dip: it grows");
}

/*
 * The devices of tests/cli/run-auto.t (fake-work's simulated GPU: fakedev.h's
 * curve, sm, start_ms, task_mib, dev_mib, ncpu), here in simulated time: the
 * count each curve settles on, how far it wanders, and why it stops. The CLI
 * test keeps one real-time check that the signals reach the controller.
 * A task's work is fakedev's work units at speed 1 alone; start_ms is CPU
 * time of one core; the tasks keep 0.1 CPU busy on the GPU (fakedev's
 * default) on the 16 CPUs fakedev's host has unless said.
 */
static const struct shape cli_flat = {"run-auto.t: rising then flat", 60, 0.1, 0, 0.3, 0.1, 6, 6, 0, 0.17,
	2, 1, 700 * MIB_, 40000 * MIB_, 16, 0, 0};
static const struct shape cli_falling = {"run-auto.t: rising then falling", 150, 0.1, 0, 0.3, 0.1, 6, 6,
	0.45, 0.17, 2, 1, 700 * MIB_, 40000 * MIB_, 16, 0, 0};
static const struct shape cli_flat1 = {"run-auto.t: flat from 1", 80, 0.05, 0, 0.1, 0.1, 1, 1, 0, 1, 2, 1,
	700 * MIB_, 40000 * MIB_, 16, 0, 0};
static const struct shape cli_startup = {"run-auto.t: start-up bound, 4 CPUs", 32, 1.5, 0, 0.05, 0, 64, 64, 0,
	0.01, 2, 1, 700 * MIB_, 60000 * MIB_, 4, 0, 0};
static const struct shape cli_oom = {"run-auto.t: out of memory, a remembered 8 where 5 fit", 30, 0.1, 0, 0.4,
	0.1, 8, 8, 0, 0.12, 2, 1, 900 * MIB_, 5000 * MIB_, 16, 0, 0};	/* starts at 8: sim_start */

/* Whether the controller's log gives why (a prefix) for a decision. */
static int
said(const struct ctl *c, const char *why)
{
	for (size_t i = 0; i < c->nlog; i++)
		if (strncmp(c->log[i].why, why, strlen(why)) == 0)
			return 1;
	return 0;
}

static void
cli_run(const struct shape *sh, struct result *r, int *settled)
{
	simulate(sh, 0, r);
	*settled = ctl_settled(&r->ctl, r->makespan, NULL);
	if (verbose) {
		printf("# %s: settled %d, limits %d..%d, final %d, %d ooms, %.2f s\n", sh->name, *settled,
		    r->min_limit, r->max_limit, r->final_limit, r->ooms, r->makespan);
		for (size_t i = 0; i < r->ctl.nlog; i++)
			printf("#   %7.2f s  %3d  gpu %5.2f cpu %5.2f  %s\n", r->ctl.log[i].t, r->ctl.log[i].limit,
			    r->ctl.log[i].gpu, r->ctl.log[i].cpu, r->ctl.log[i].why);
	}
}

static void
test_cli_rising_flat(void)
{
	struct result r;
	int s;

	cli_run(&cli_flat, &r, &s);
	ok(s >= 5 && s <= 9, "%s: settles near the knee, 6 (settled %d)", cli_flat.name, s);
	ok(r.max_limit <= 12, "%s: and does not run on towards the 48 clients (at most %d)", cli_flat.name,
	    r.max_limit);
	is_int(r.lost, 0, "%s: no task lost", cli_flat.name);
	ctl_free(&r.ctl);
}

static void
test_cli_rising_falling(void)
{
	struct result r;
	int s;

	cli_run(&cli_falling, &r, &s);
	ok(s >= 5 && s <= 8, "%s: settles near the peak, 6 (settled %d)", cli_falling.name, s);
	ok(r.max_limit <= 12, "%s: and never wanders far onto the falling side (at most %d)", cli_falling.name,
	    r.max_limit);
	is_int(r.lost, 0, "%s: no task lost", cli_falling.name);
	ctl_free(&r.ctl);
}

static void
test_cli_flat_from_1(void)
{
	struct result r;
	int s;

	cli_run(&cli_flat1, &r, &s);
	ok(r.max_limit <= 6, "%s: grows little past its start (4) when one task saturates (at most %d)",
	    cli_flat1.name, r.max_limit);
	ok(said(&r.ctl, "GPU saturated") || said(&r.ctl, "more tasks ended no faster"),
	    "%s: the GPU (saturated, or no faster with more) holds it", cli_flat1.name);
	ctl_free(&r.ctl);
}

static void
test_cli_startup_bound(void)
{
	struct result r;
	int s;

	cli_run(&cli_startup, &r, &s);
	ok(said(&r.ctl, "CPUs saturated"), "%s: the CPUs' saturation stops the count", cli_startup.name);
	ok(r.max_limit <= 8, "%s: busy CPUs let in start-ups only up to twice their number, 8 (at most %d)",
	    cli_startup.name, r.max_limit);
	ctl_free(&r.ctl);
}

static void
test_cli_oom(void)
{
	struct result r;
	int s;

	sim_start = 8;
	cli_run(&cli_oom, &r, &s);
	sim_start = 0;
	ok(r.ooms >= 1 && said(&r.ctl, "out of memory"), "%s: tasks ran out of memory, and it saw them (%d)",
	    cli_oom.name, r.ooms);
	ok(r.final_limit <= 5, "%s: the count came down to what fits, 5 (final %d)", cli_oom.name, r.final_limit);
	is_int(r.lost, 0, "%s: no task lost", cli_oom.name);
	ctl_free(&r.ctl);
}

int
main(void)
{
	verbose = getenv("TEST_CONTROL_VERBOSE") != NULL;
	test_first_steps();
	test_startup_dips();
	test_cli_rising_flat();
	test_cli_rising_falling();
	test_cli_flat_from_1();
	test_cli_startup_bound();
	test_cli_oom();
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct result a;
		int best_j = 0;
		double ratio = compare(&shapes[i], &best_j, &a);

		ok(ratio >= 0.9, "%s: best fixed (-j %d) / auto = %.3f >= 0.9", shapes[i].name, best_j, ratio);
		is_int(a.lost, 0, "%s: no task lost", shapes[i].name);
		ok(a.max_limit <= 48, "%s: never above the cap (max %d)", shapes[i].name, a.max_limit);
		ctl_free(&a.ctl);
	}
	return done_testing();
}
