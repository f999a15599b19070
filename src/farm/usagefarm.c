/*
 * usagefarm: per-task usage in a running farm (see usagefarm.h, usage.h).
 *
 * Every USAGE_PERIOD seconds each GPU the farm uses is read once: its
 * energy counter (fed to the counter's resolution meter), its busy share
 * (whole GPUs; the driver keeps none for a MIG device), its processes'
 * memory (per group: a MIG device lists its own) and their utilization
 * since the last read. A process belongs to the task whose process group
 * it is in (every task leads its own: spawn.c). The interval since the
 * previous read goes to usage_interval with the tasks that ran through it.
 */
#include "farm/usagefarm.h"
#include "farm/mpsfarm.h"
#include "farm/state.h"
#include "farm/trace.h"
#include "farm/usage.h"
#include "gpu/backend.h"
#include "gpu/energy.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/knob.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define USAGE_PERIOD 0.2
#define USAGE_MAX_GPUS 64
#define USAGE_UTIL_MAX 128

struct usage_rec {
	long long seq;
	int exit, gpu;
	double wall;
	struct usage_fig cpu, mem, gpu_s, j;
};

struct usage_gpu {
	int index;                /* the driver's */
	int whole;                /* one group, the whole GPU: its busy share is the tasks' */
	int e_ok;                 /* last_mj is a reading */
	uint64_t last_mj;
	int fresh;                /* last_mj was read at the last sample (not one left out beside a fault) */
	uint64_t since_us;        /* the newest per-process utilization sample read */
	double held;              /* seconds not sampled beside an MPS fault, for the next sample */
	struct gpu_energy_meter meter;
	struct usage_dev dev;
};

struct farm_usage {
	double last_t;            /* the previous sample; 0: none yet */
	int ngpu;
	struct usage_gpu gpu[USAGE_MAX_GPUS];
	int nlive;
	struct usage_task *live;  /* one per run slot (f->r[i]) */
	struct usage_rec *rec;
	int nrec, caprec;
	int ngroup;
	double *group_j;          /* per farm group: joules of its ended tasks; NAN once one's were unknown */
	int cores;
};

static struct farm_usage *
usage_of(struct farm *f)
{
	struct farm_usage *u = f->usage;

	if (u || !f->b || f->ng == 0 || knob(KNOB_FARM_USAGE_OFF) == 1)
		return u;
	u = xcalloc(1, sizeof *u);
	for (int i = 0; i < f->ng; i++) {
		struct usage_gpu *g = NULL;

		for (int k = 0; k < u->ngpu; k++)
			if (u->gpu[k].index == f->g[i].gpu_index)
				g = &u->gpu[k];
		if (g) {
			g->whole = 0;  /* several groups on one GPU: its busy share is theirs together */
			continue;
		}
		if (u->ngpu == USAGE_MAX_GPUS)
			continue;
		g = &u->gpu[u->ngpu++];
		g->index = f->g[i].gpu_index;
		g->whole = f->g[i].gi_id < 0;
		gpu_energy_meter_init(&g->meter);
	}
	u->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	f->usage = u;
	f->st.usage = u;
	return u;
}

static struct usage_task *
live_of(struct farm_usage *u, struct farm *f, struct run *r)
{
	int i = (int)(r - f->r);

	if (u->nlive < f->nr) {
		u->live = xrealloc(u->live, (size_t)f->nr * sizeof *u->live);
		for (int k = u->nlive; k < f->nr; k++)
			u->live[k].seq = -1;
		u->nlive = f->nr;
	}
	if (u->live[i].seq != (long long)r->task->seq || u->live[i].t0 != r->start)
		usage_task_start(&u->live[i], (long long)r->task->seq, r->g->gpu_index, r->start);
	return &u->live[i];
}

/* The running task whose process group pid is in; NULL: none of the farm's. */
static int
run_of_pid(struct farm *f, pid_t pid)
{
	pid_t pg = getpgid(pid);

	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task && !f->r[i].exited && (f->r[i].pid == pid || f->r[i].pid == pg))
			return i;
	return -1;
}

/*
 * The counter's resolution, measured once at the start: read every 2 ms
 * (faster than any driver updates it) until five updates were seen, for
 * half a second at most. The farm's own reads, every USAGE_PERIOD, are not
 * fed to it: each of them sees a change, and the period would read as
 * USAGE_PERIOD (windows judged by it 10 x 0.2 s at least).
 */
static void
measure_step(struct farm *f, struct usage_gpu *g)
{
	double t0 = clock_mono(), t = t0;
	struct gpu_energy_res res;
	uint64_t mj;

	/* bounded by reads too: a clock that does not move (a test's) cannot hold the farm here */
	for (int reads = 0; reads < 250 && t - t0 < 0.5; reads++) {
		struct timespec ts = {0, 2 * 1000 * 1000};

		if (f->b->energy(f->b, g->index, &mj) < 0) {
			err_clear();
			return;
		}
		gpu_energy_meter_feed(&g->meter, t, mj);
		if (gpu_energy_meter_res(&g->meter, &res) == 0 && res.changes >= 5)
			return;
		nanosleep(&ts, NULL);
		t = clock_mono();
		if (t == t0)
			return;  /* a clock that does not move (a test's): nothing to measure against */
	}
}

/* The joules the device counted since the last read (NAN: unknown). */
static double
read_energy(struct farm *f, struct usage_gpu *g)
{
	double dj = NAN;
	uint64_t mj;

	if (!f->b->energy)
		return NAN;
	if (g->meter.seen == 0)
		measure_step(f, g);
	if (f->b->energy(f->b, g->index, &mj) == 0) {
		if (g->e_ok && mj >= g->last_mj)
			dj = (double)(mj - g->last_mj) / 1000.0;
		g->last_mj = mj;
		g->e_ok = 1;
	} else {
		err_clear();
		g->e_ok = 0;
	}
	return dj;
}

/* The device's busy share (< 0: unknown; the driver keeps none for a MIG device). */
static double
read_busy(struct farm *f, struct usage_gpu *g)
{
	unsigned gp, mp;

	if (!g->whole || !f->b->utilization)
		return -1;
	if (f->b->utilization(f->b, g->index, &gp, &mp) == 0 && gp <= 100)
		return gp / 100.0;
	err_clear();
	return -1;
}

/* Which of the running tasks who[0..n-1] pid's is (-1: none of them). */
static int
task_of_pid(struct farm *f, const int *who, int n, pid_t pid)
{
	int ri = run_of_pid(f, pid);

	for (int i = 0; ri >= 0 && i < n; i++)
		if (who[i] == ri)
			return i;
	return -1;
}

/* The processes' utilization since the last read, to the tasks (usage_attribute_util). */
static void
read_util(struct farm *f, struct usage_gpu *g, struct usage_seen *seen, const int *who, int n, double now)
{
	struct gpu_proc_util pu[USAGE_UTIL_MAX];
	struct usage_proc p[USAGE_UTIL_MAX];
	int np = -1;

	if (f->b->proc_util && (np = f->b->proc_util(f->b, g->index, &g->since_us, pu, USAGE_UTIL_MAX)) < 0)
		err_clear();
	for (int k = 0; k < np; k++)
		p[k] = (struct usage_proc){task_of_pid(f, who, n, pu[k].pid), pu[k].sm, 0};
	usage_attribute_util(seen, n, p, np, f->o->share == SHARE_MPS, now);
}

/* The processes' memory, per group (a MIG device lists its own), to the tasks. */
static void
read_mem(struct farm *f, struct usage_gpu *g, struct usage_seen *seen, const int *who, int n)
{
	for (int gi = 0; gi < f->ng && f->b->sample_procs; gi++) {
		struct usage_proc p[GPU_SAMPLE_PROCS];
		struct gpu_sample s;

		if (f->g[gi].gpu_index != g->index || f->g[gi].cap <= 0)
			continue;
		if (f->b->sample_procs(f->b, g->index, f->g[gi].gi_id, &s) < 0) {
			err_clear();
			continue;
		}
		for (int k = 0; k < s.nprocs && k < GPU_SAMPLE_PROCS; k++)
			p[k] = (struct usage_proc){task_of_pid(f, who, n, s.procs[k].pid), 0, s.procs[k].mem};
		usage_attribute_mem(seen, n, p, s.nprocs < GPU_SAMPLE_PROCS ? s.nprocs : GPU_SAMPLE_PROCS);
	}
}

static void
sample_gpu(struct farm *f, struct farm_usage *u, struct usage_gpu *g, double now, double dt)
{
	struct usage_seen seen[USAGE_UTIL_MAX];
	int who[USAGE_UTIL_MAX];
	double busy, dj, t0;
	int n = 0;

	g->fresh = 0;
	/* beside an MPS fault the driver is left alone (farm_mps_quiet); the next sample spans the gap */
	for (int gi = 0; gi < f->ng; gi++)
		if (f->g[gi].gpu_index == g->index && farm_mps_quiet(&f->g[gi], farm_log_since(f, &f->g[gi]), now)) {
			g->held += dt;
			return;
		}
	dt += g->held;
	g->held = 0;
	t0 = clock_mono();
	dj = read_energy(f, g);
	g->fresh = g->e_ok;
	busy = read_busy(f, g);
	for (int i = 0; i < f->nr && n < USAGE_UTIL_MAX; i++) {
		struct run *r = &f->r[i];

		if (!r->task || r->exited || r->g->gpu_index != g->index)
			continue;
		who[n] = i;
		seen[n++] = (struct usage_seen){live_of(u, f, r), -1, 0, 0};
	}
	read_util(f, g, seen, who, n, now);
	read_mem(f, g, seen, who, n);
	trace_read("usage", g->index, t0);
	if (dt > 0)
		usage_interval(&g->dev, seen, n, dt, busy, dj);
}

double
usagefarm_due(struct farm *f)
{
	struct farm_usage *u = f->usage;

	double period = USAGE_PERIOD;

	/*
	 * Nothing per process to see (the simulated GPUs): the loop's own wakes
	 * and each task's end sample enough for the device's busy time and energy
	 */
	if (!u || f->st.running == 0 || (!f->b->sample_procs && !f->b->proc_util))
		return 0;
	/*
	 * A long farm wakes less often (1/200 of the time it ran so far): a
	 * task's end and the loop's other wakes sample too, and a day-long farm
	 * need not turn five times a second to see its tasks' memory.
	 */
	if (u->last_t - f->st.t0 > 200 * USAGE_PERIOD)
		period = (u->last_t - f->st.t0) / 200;
	return u->last_t + period;
}

static void
sample_all(struct farm *f, struct farm_usage *u, double now)
{
	double dt = u->last_t > 0 ? now - u->last_t : 0;

	for (int k = 0; k < u->ngpu; k++)
		sample_gpu(f, u, &u->gpu[k], now, dt);
	u->last_t = now;
}

void
usagefarm_tick(struct farm *f, double now)
{
	struct farm_usage *u = usage_of(f);

	if (u && (u->last_t == 0 || now - u->last_t >= USAGE_PERIOD))
		sample_all(f, u, now);
}

void
usagefarm_mark(struct farm *f, double now)
{
	struct farm_usage *u = usage_of(f);

	if (u && now > u->last_t)
		sample_all(f, u, now);
}

int
usagefarm_energy_last(const struct farm *f, int gpu_index, uint64_t *mj)
{
	const struct farm_usage *u = f->usage;

	for (int k = 0; u && k < u->ngpu; k++)
		if (u->gpu[k].index == gpu_index && u->gpu[k].fresh) {
			*mj = u->gpu[k].last_mj;
			return 0;
		}
	return -1;
}

static struct usage_gpu *
gpu_of(struct farm_usage *u, int index)
{
	for (int k = 0; k < u->ngpu; k++)
		if (u->gpu[k].index == index)
			return &u->gpu[k];
	return NULL;
}

static void
rec_json(struct json *j, const struct usage_rec *r)
{
	json_int(j, "seq", r->seq);
	json_int(j, "exit", r->exit);
	json_int(j, "device", r->gpu);
	json_double(j, "wall_s", r->wall);
	json_double(j, "cpu_s", r->cpu.v);
	if (isnan(r->mem.v))
		json_null(j, "gpu_mem_peak");
	else
		json_uint(j, "gpu_mem_peak", (unsigned long long)r->mem.v);
	json_double(j, "gpu_s", r->gpu_s.v);
	json_double(j, "joules", r->j.v);
	json_obj_begin(j, "basis");
	{
		const struct usage_fig *fg[4] = {&r->cpu, &r->mem, &r->gpu_s, &r->j};
		const char *key[4] = {"cpu_s", "gpu_mem_peak", "gpu_s", "joules"};

		for (int i = 0; i < 4; i++) {
			json_obj_begin(j, key[i]);
			json_str(j, "basis", usage_basis_name(fg[i]->basis));
			json_str(j, "how", fg[i]->how);
			json_obj_end(j);
		}
	}
	json_obj_end(j);
}

static void
write_results(const struct usage_rec *rec, const struct run *r)
{
	struct json j;
	char *path;

	if (!r->res || !r->res->dir)
		return;
	json_init(&j, 0);
	json_obj_begin(&j, NULL);
	rec_json(&j, rec);
	json_obj_end(&j);
	sbuf_printf(&j.out, "\n");
	path = xasprintf("%s%susage.json", r->res->dir, *r->res->dir ? "/" : "");
	/* the task's record matters more than this file: a failure to write it is not the task's */
	if (write_file_atomic(path, j.out.buf, j.out.len, 0644) < 0)
		err_clear();
	free(path);
	json_free(&j);
}

void
usagefarm_end(struct farm *f, struct run *r, double now, int status, const struct rusage *ru)
{
	struct farm_usage *u = usage_of(f);
	struct usage_task *t;
	struct usage_gpu *g;
	struct usage_rec rec = {0};
	struct gpu_energy_res res;
	double cpu = -1;
	int energy_ok = 0;

	if (!u || !r->task)
		return;
	/* the interval up to its end, with it still among the running */
	if (now > u->last_t)
		sample_all(f, u, now);
	t = live_of(u, f, r);
	g = gpu_of(u, r->g->gpu_index);
	if (g && gpu_energy_meter_res(&g->meter, &res) == 0)
		energy_ok = gpu_energy_window_ok(&res, now - r->start);
	if (ru)
		cpu = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 + (double)ru->ru_stime.tv_sec +
		    ru->ru_stime.tv_usec / 1e6;
	rec.seq = t->seq;
	rec.gpu = r->g->gpu_index;
	rec.wall = now - r->start;
	rec.exit = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
	usage_task_end(t, now, rec.exit, cpu, energy_ok, &rec.cpu, &rec.mem, &rec.gpu_s, &rec.j);
	t->seq = -1;
	if (u->nrec == u->caprec) {
		u->caprec = u->caprec ? 2 * u->caprec : 64;
		u->rec = xrealloc(u->rec, (size_t)u->caprec * sizeof *u->rec);
	}
	u->rec[u->nrec++] = rec;
	{
		int gi = (int)(r->g - f->g);

		if (u->ngroup < f->ng) {
			u->group_j = xrealloc(u->group_j, (size_t)f->ng * sizeof *u->group_j);
			for (int k = u->ngroup; k < f->ng; k++)
				u->group_j[k] = 0;
			u->ngroup = f->ng;
		}
		if (gi >= 0 && gi < u->ngroup)
			u->group_j[gi] += rec.j.v;  /* NAN stays NAN */
	}
	write_results(&rec, r);
}

static int
gpus_used(const struct farm_usage *u)
{
	return u->ngpu;
}

static void
bound_of(const struct farm_usage *u, double makespan, struct usage_bound *b)
{
	double *cpu = xmalloc((size_t)(u->nrec + 1) * sizeof *cpu);
	double *gpu = xmalloc((size_t)(u->nrec + 1) * sizeof *gpu);
	double *wall = xmalloc((size_t)(u->nrec + 1) * sizeof *wall);

	for (int i = 0; i < u->nrec; i++) {
		cpu[i] = u->rec[i].cpu.v;
		gpu[i] = u->rec[i].gpu_s.v;
		wall[i] = u->rec[i].wall;
	}
	usage_bound(cpu, gpu, wall, u->nrec, u->cores, gpus_used(u), makespan, b);
	free(cpu);
	free(gpu);
	free(wall);
}

void
usagefarm_json(const struct farm_usage *u, struct json *j, double makespan)
{
	struct usage_bound b;
	double busy = 0, unattr = 0;
	int busy_known = u && u->ngpu > 0, unattr_known = busy_known;

	json_arr_begin(j, "usage");
	for (int i = 0; u && i < u->nrec; i++) {
		json_obj_begin(j, NULL);
		rec_json(j, &u->rec[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	for (int k = 0; u && k < u->ngpu; k++) {
		const struct usage_gpu *g = &u->gpu[k];

		busy_known &= g->whole && g->dev.busy_unknown == 0;
		unattr_known &= g->dev.energy_unknown == 0;
		busy += g->dev.busy_s;
		unattr += g->dev.unattributed_j;
	}
	json_double(j, "gpu_busy_s", busy_known ? busy : NAN);
	json_double(j, "unattributed_j", unattr_known ? unattr : NAN);
	json_arr_begin(j, "energy_step");
	for (int k = 0; u && k < u->ngpu; k++) {
		struct gpu_energy_res res;
		int known = gpu_energy_meter_res(&u->gpu[k].meter, &res) == 0;

		json_obj_begin(j, NULL);
		json_int(j, "gpu", u->gpu[k].index);
		json_double(j, "step_mj", res.step_mj > 0 ? (double)res.step_mj : NAN);
		json_double(j, "period_s", known ? res.period_s : NAN);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (!u) {
		json_null(j, "bound");
		return;
	}
	bound_of(u, makespan, &b);
	json_obj_begin(j, "bound");
	json_double(j, "s", b.s);
	json_str(j, "limit", b.limit);
	json_double(j, "cpu_s", b.cpu_s);
	json_double(j, "gpu_s", b.gpu_s);
	json_double(j, "longest_s", b.longest_s);
	json_int(j, "cores", b.cores);
	json_int(j, "gpus", b.gpus);
	json_double(j, "makespan_ratio", b.ratio);
	json_obj_end(j);
}

static void
heaviest(const struct farm_usage *u, FILE *out, const char *what, int field)
{
	double *v = xmalloc((size_t)(u->nrec + 1) * sizeof *v);
	int top[3], n;
	char buf[32];

	for (int i = 0; i < u->nrec; i++)
		v[i] = field == 0 ? u->rec[i].mem.v / (1 << 20) : field == 1 ? u->rec[i].gpu_s.v : u->rec[i].j.v;
	n = usage_top(v, u->nrec, 3, top);
	fprintf(out, "gpupack: run: heaviest by %s:", what);
	if (n == 0)
		fprintf(out, " - (unknown for every task)");
	for (int i = 0; i < n; i++)
		fprintf(out, "%s seq %lld %s", i ? "," : "", u->rec[top[i]].seq,
		    usage_fmt(v[top[i]], field == 0 ? 0 : 1, buf, sizeof buf));
	fprintf(out, "\n");
	free(v);
}

void
usagefarm_summary(const struct farm_usage *u, FILE *out, double makespan)
{
	struct usage_bound b;
	char s[32], c[32], g[32], l[32], r[32];

	if (!u || u->nrec == 0)
		return;
	bound_of(u, makespan, &b);
	fprintf(out, "gpupack: run: makespan %.3f s, bound %s s (%s): CPU %s s over %d cores, GPU %s s over %d "
	    "%s, longest task %s s; makespan/bound %s\n", makespan, usage_fmt(b.s, 3, s, sizeof s),
	    b.limit ? b.limit : "unknown", usage_fmt(b.cpu_s, 3, c, sizeof c), b.cores,
	    usage_fmt(b.gpu_s, 3, g, sizeof g), b.gpus, b.gpus == 1 ? "GPU" : "GPUs",
	    usage_fmt(b.longest_s, 3, l, sizeof l), usage_fmt(b.ratio, 2, r, sizeof r));
	heaviest(u, out, "GPU memory (MiB)", 0);
	heaviest(u, out, "GPU time (s)", 1);
	heaviest(u, out, "energy (J)", 2);
}

double
usagefarm_ended_j(const struct farm_usage *u, int group)
{
	if (!u || group < 0)
		return -1;
	if (group >= u->ngroup)
		return 0;
	return isnan(u->group_j[group]) ? -1 : u->group_j[group];
}

void
usagefarm_free(struct farm_usage *u)
{
	if (!u)
		return;
	free(u->group_j);
	free(u->live);
	free(u->rec);
	free(u);
}
