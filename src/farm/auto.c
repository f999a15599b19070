/*
 * auto: the farm's side of -j auto (auto.h). The readings come from three
 * places: the backend's samples of the devices, /proc for the host and for
 * each task's processes (their CPU time, their wait for a CPU), and the
 * farm's own runs, matched to the devices' processes by process group
 * (each task leads its own group, so a task's children count as the task).
 * The decisions are ctlnode.c's; this file applies them: each device's
 * count, and SIGSTOP / SIGCONT to the process group of a task that waits at
 * the GPU's door.
 *
 * Where the driver lists no process of ours (a container that hides pids,
 * a driver that does not list MPS clients), the farm goes "blind": every
 * running task counts as on the GPU (none is ever stopped), and a task's
 * footprint is the device memory the farm added over the tasks running.
 */
#include "farm/auto.h"
#include "farm/control.h"
#include "farm/cost.h"
#include "farm/ctlnode.h"
#include "farm/mpsfarm.h"
#include "farm/oom.h"
#include "farm/remember.h"
#include "farm/state.h"
#include "farm/trace.h"
#include "farm/usagefarm.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/host.h"
#include "util/knob.h"
#include "util/str.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * Seconds after the device first showed the farm's work (memory in use past
 * what it held before, or processes listed) with none of the tasks listed,
 * after which the driver is taken as blind. Counted from then, not from the
 * first start: on a loaded machine tasks may take longer than that to reach
 * the GPU, and a driver that lists nothing because nothing is there yet is
 * not blind.
 */
#define BLIND_AFTER 20.0
/*
 * Seconds of readings whose process lists are all unknown (the driver
 * refused one) after which a driver whose lists answered before is taken
 * as blind; until then such a reading leaves the last one standing. One
 * that never answered is blind at its first refusal.
 */
#define UNKNOWN_FOR 3.0
/* The device counts as at its memory limit below this share free. */
#define MEM_FULL_SHARE 0.02
/*
 * Seconds with tasks stopped at the door while the others make no progress
 * (no CPU time, no task ended, every GPU idle) after which they are all
 * let go and the gate is off for the run: they may wait on one stopped.
 */
#define STALL 5.0
/* Seconds a task's processes get to stop once signalled. */
#define STOP_WAIT 0.02

static double
blind_after(void)
{
	return knob(KNOB_FARM_BLIND_AFTER) > 0 ? (double)knob(KNOB_FARM_BLIND_AFTER) : BLIND_AFTER;
}

struct farm_auto {
	struct ctlnode node;
	struct ctl_config *cfg;   /* per group */
	uint64_t *key;            /* per group: what it is remembered under */
	uint64_t *used0;          /* per group: device memory in use before the farm */
	double *unknown_since;    /* per group: its process lists unknown at every reading since (0: known) */
	int *answered;            /* per group: its process lists answered once */
	struct ctlnode_dev *dev;  /* per group: the last readings */
	struct ctlnode_host host; /* the last readings of the host */
	struct ctlnode_task *t;   /* scratch: the running tasks, for the controllers */
	struct run **who;         /* and whose each is */
	double next, watch_next;
	struct host_cpu cpu;
	int cpu_ok;
	double shown_since;       /* 0: the devices have not shown the farm's work yet */
	int seen;                 /* a task of ours appeared in a device's process list */
	int blind;
	int gate_off;             /* no task is stopped at the door any more (a stall) */
	double moved_t;           /* when the farm last made progress */
	double moved;             /* CPU seconds the running tasks used since the last step */
	unsigned long long ended; /* tasks ended, at the last step */
	int starts;               /* tasks the CPUs may start until the next step (ctlnode's) */
};

static int
start_count(const struct farm *f, uint64_t key, struct remembered *rem, int *remembered)
{
	*remembered = remember_load(key, rem);
	if (*remembered)
		return rem->count;
	return f->o->share == SHARE_MPS ? FARM_JOBS_MPS : FARM_JOBS_TIMESLICE;
}

/* A past run's footprints (the first device's that has some). */
static void
seed_footprints(struct farm_auto *au, const struct remembered *rem)
{
	if (au->node.mem.fp.n > 0)
		return;
	for (int k = 0; k < rem->nfp; k++)
		ctlmem_add(&au->node.mem.fp, (double)rem->fp[k]);
}

/* Each device with slots gets its controller, seeded with what an earlier run remembered. */
static void
attach_controllers(struct farm *f, struct farm_auto *au, const struct remembered *rem, const int *remembered)
{
	for (int i = 0; i < f->ng; i++) {
		if (f->g[i].cap == 0)
			continue;
		if (remembered[i])
			seed_footprints(au, &rem[i]);
		f->g[i].ctl = &au->node.dev[i];
		if (remembered[i])
			au->node.dev[i].log[0].why = "remembered from an earlier run";
	}
}

/* Each device starts at its controller's first count, with a first sample taken. */
static void
first_counts(struct farm *f)
{
	for (int i = 0; i < f->ng; i++) {
		struct gpu_sample smp;

		if (!f->g[i].ctl)
			continue;
		f->g[i].jobs = f->g[i].ctl->limit;
		/* a first sample of each device: GPM's figures are rates between two */
		if (f->b && f->b->sample)
			f->b->sample(f->b, f->g[i].gpu_index, f->g[i].gi_id, &smp);
	}
	err_clear();
}

int
auto_setup(struct farm *f, const struct gpu_system *sys)
{
	struct farm_auto *au;
	struct ctlnode_config nc;
	struct remembered *rem;
	uint64_t id = farm_identity(f->o), *mem_free;
	double now = clock_mono();
	int *remembered;

	if (!f->o->jobs_auto)
		return 0;
	au = xcalloc(1, sizeof *au);
	au->cfg = xcalloc((size_t)f->ng, sizeof *au->cfg);
	au->key = xcalloc((size_t)f->ng, sizeof *au->key);
	au->used0 = xcalloc((size_t)f->ng, sizeof *au->used0);
	au->unknown_since = xcalloc((size_t)f->ng, sizeof *au->unknown_since);
	au->answered = xcalloc((size_t)f->ng, sizeof *au->answered);
	au->dev = xcalloc((size_t)f->ng, sizeof *au->dev);
	rem = xcalloc((size_t)f->ng, sizeof *rem);
	remembered = xcalloc((size_t)f->ng, sizeof *remembered);
	mem_free = xcalloc((size_t)f->ng, sizeof *mem_free);
	memset(&nc, 0, sizeof nc);
	au->cpu_ok = host_cpu_read(&au->cpu) == 0;
	err_clear();
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		const struct gpu_info *gi = &sys->gpus[g->t.gpu];
		struct ctl_config *cfg = &au->cfg[i];
		int same = -1;

		g->gi_id = g->t.gi >= 0 ? (int)gi->gi[g->t.gi].id : -1;
		g->mem_total = g->t.mem_total;
		g->mem_free = mem_free[i] = g->t.mem_free;
		au->used0[i] = g->t.mem_total > g->t.mem_free ? g->t.mem_total - g->t.mem_free : 0;
		*cfg = (struct ctl_config){1, 1, f->o->share == SHARE_MPS, f->o->auto_energy};
		if (g->cap == 0)
			continue;
		au->key[i] = remember_key(id, f->o->share, f->o->auto_energy, gi->name, g->mig_slices);
		/* one warning per file: a device of the same kind as an earlier one takes its count */
		for (int j = 0; j < i && same < 0; j++)
			if (au->key[j] == au->key[i] && f->g[j].cap > 0)
				same = j;
		if (same >= 0) {
			rem[i] = rem[same];
			remembered[i] = remembered[same];
			cfg->start = au->cfg[same].start;
		} else {
			cfg->start = start_count(f, au->key[i], &rem[i], &remembered[i]);
		}
		cfg->max = g->cap;
		/* a past run's cores per task (the first device's that has them) */
		if (remembered[i] && nc.d_start == 0 && rem[i].cores_start > 0) {
			nc.d_start = rem[i].cores_start;
			nc.d_run = rem[i].cores_run;
		}
	}
	nc.ndev = f->ng;
	nc.dev = au->cfg;
	nc.mem_fixed = f->o->mem ? f->o->mem + FARM_CTX_OVERHEAD : 0;
	nc.tick = CTL_TICK;
	ctlnode_init(&au->node, &nc, now);
	attach_controllers(f, au, rem, remembered);
	/* a past run's cores per task and footprints bound where each device starts */
	ctlnode_first(&au->node, au->cpu.ncpu, mem_free);
	first_counts(f);
	au->next = now + CTL_TICK;
	au->starts = CTL_ANY;
	au->watch_next = now + CTLNODE_WATCH;
	f->au = au;
	free(rem);
	free(remembered);
	free(mem_free);
	return 0;
}

int
auto_may_start(const struct farm *f)
{
	return !f->au || f->au->starts > 0 || f->st.running == 0;
}

double
auto_next(const struct farm *f)
{
	if (!f->au)
		return 0;
	return f->au->node.watch && f->au->watch_next < f->au->next ? f->au->watch_next : f->au->next;
}

void
auto_started(struct farm *f, struct run *r, double now)
{
	if (f->au && f->au->starts != CTL_ANY && f->au->starts > 0)
		f->au->starts--;
	memset(&r->ct, 0, sizeof r->ct);
	r->ct.dev = (int)(r->g - f->g);
	r->ct.start = now;
	r->ct.cpu = r->ct.wait = -1;
	r->paused = 0;
}

/* Which of g's runs the driver lists, and with how much memory. */
static void
attribute(struct farm *f, struct group *g, const struct gpu_sample *smp)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].g == g && f->r[i].task) {
			f->r[i].ct.m.mem = 0;
			f->r[i].ct.m.on_gpu = 0;
		}
	for (int p = 0; p < smp->nprocs; p++) {
		pid_t pg = host_pgid(smp->procs[p].pid);

		for (int i = 0; pg > 0 && i < f->nr; i++) {
			struct run *r = &f->r[i];

			if (r->g != g || !r->task || r->exited || r->pid != pg)
				continue;
			/* a process the driver lists without its memory: on the GPU, size unknown */
			r->ct.m.mem += smp->procs[p].mem;
			r->ct.m.on_gpu = 1;
			f->au->seen = 1;
		}
	}
}

/* Blind: every running task on the GPU, each with its share of what the farm added. */
static void
blind_share(struct farm *f, int gi, const struct gpu_sample *smp)
{
	struct group *g = &f->g[gi];
	uint64_t per = g->running > 0 && smp->mem_used > f->au->used0[gi] ?
	    (smp->mem_used - f->au->used0[gi]) / (uint64_t)g->running : 0;

	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (r->g != g || !r->task || r->exited)
			continue;
		r->ct.m.on_gpu = 1;
		r->ct.m.mem = per;
	}
}

/*
 * Is the driver blind to our tasks (no door, footprints from the device's
 * memory)? Its process lists refused before any answered, refused for
 * UNKNOWN_FOR after, or no task of ours listed blind_after() seconds after
 * the device first showed the farm's work (a driver that never lists them:
 * judged by the device's memory).
 */
static void
blind_check(struct farm *f, int gi, const struct gpu_sample *smp, double now)
{
	struct farm_auto *au = f->au;
	const struct group *g = &f->g[gi];

	if (!au->seen && au->shown_since == 0 && g->running > 0 &&
	    (smp->nprocs > 0 || smp->mem_used > au->used0[gi]))
		au->shown_since = now;
	if (smp->nprocs >= 0) {
		au->answered[gi] = 1;
		au->unknown_since[gi] = 0;
	} else if (au->unknown_since[gi] == 0) {
		au->unknown_since[gi] = now;
	}
	if (!au->blind && g->running > 0 && ((smp->nprocs < 0 && !au->answered[gi]) ||
	    (au->unknown_since[gi] > 0 && now - au->unknown_since[gi] >= UNKNOWN_FOR) ||
	    (!au->seen && au->shown_since > 0 && now - au->shown_since > blind_after())))
		au->blind = 1;
}

/* Read device gi (full: everything; else memory and processes only) into au->dev[gi]. */
static void
read_device(struct farm *f, int gi, double now, int full)
{
	struct farm_auto *au = f->au;
	struct group *g = &f->g[gi];
	struct ctlnode_dev *d = &au->dev[gi];
	struct gpu_sample smp;
	double t0;
	uint64_t mj;
	int have;

	memset(&smp, 0, sizeof smp);
	t0 = clock_mono();
	if (full || !f->b || !f->b->sample_procs)
		have = f->b && f->b->sample && f->b->sample(f->b, g->gpu_index, g->gi_id, &smp) == 0;
	else
		have = f->b->sample_procs(f->b, g->gpu_index, g->gi_id, &smp) == 0;
	trace_read("auto", g->gpu_index, t0);
	if (!have) {
		err_clear();
		smp.busy = smp.sm_active = -1;
		smp.nprocs = -1;
	}
	if (have && smp.mem_total) {
		g->mem_total = smp.mem_total;
		g->mem_free = smp.mem_free;
	}
	if (have)
		blind_check(f, gi, &smp, now);
	/* a reading whose lists were refused, after some answered, leaves the last one standing */
	if (have && smp.nprocs >= 0 && !au->blind)
		attribute(f, g, &smp);
	if (have && au->blind)
		blind_share(f, gi, &smp);
	d->mem_total = have ? smp.mem_total : 0;
	d->mem_free = smp.mem_free;
	if (!full)
		return;
	d->busy = smp.busy;
	d->sm_active = smp.sm_active;
	d->ended = g->ended;
	d->oom = g->oom;
	g->oom = 0;
	d->energy = -1;
	/*
	 * The energy goal weighs the joules of the tasks that ended, each its
	 * own share of the device (farm/usage.h), a MIG device's too; where a
	 * task's are unknown, the device's counter over the farm.
	 */
	if (f->o->auto_energy && (d->energy = usagefarm_ended_j(f->usage, gi)) >= 0)
		return;
	/* a MIG device shares its GPU's counter: no measure of its own count */
	if (!g->en.energy_shared && g->en.energy_ok == 1 && f->b && f->b->energy &&
	    f->b->energy(f->b, g->gpu_index, &mj) == 0 && mj >= g->en.energy0)
		d->energy = (double)(mj - g->en.energy0) / 1000.0;
	err_clear();
}

/* The host's CPU busy share since the last step, and MemAvailable. */
static void
read_host(struct farm *f, double now, int full)
{
	struct farm_auto *au = f->au;
	struct ctlnode_host *h = &au->host;
	struct host_cpu c;

	h->now = now;
	h->demand = f->stop == 0 && !(f->st.inputs_done && !f->q.retry && !f->q.suspects);
	if (!full)
		return;
	h->cpu_busy = -1;
	if (host_cpu_read(&c) == 0) {
		if (au->cpu_ok)
			h->cpu_busy = host_cpu_busy(&au->cpu, &c);
		au->cpu = c;
		au->cpu_ok = 1;
		h->ncpu = c.ncpu;
	}
	if (host_mem_available(&h->host_avail) < 0)
		h->host_avail = 0;
	err_clear();
}

/* The running tasks under auto into au->t (their CPU read now); the count. skip: one left out. */
static int
gather(struct farm *f, int dev, const struct run *skip)
{
	struct farm_auto *au = f->au;
	int n = 0;

	au->t = xrealloc(au->t, (size_t)(f->nr > 0 ? f->nr : 1) * sizeof *au->t);
	au->who = xrealloc(au->who, (size_t)(f->nr > 0 ? f->nr : 1) * sizeof *au->who);
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		double was = r->ct.cpu;

		if (!r->task || r->exited || r == skip || !r->g->ctl || (dev >= 0 && r->ct.dev != dev))
			continue;
		if (host_task_cpu(r->pid, &r->ct.cpu, &r->ct.wait) < 0)
			r->ct.cpu = r->ct.wait = -1;
		if (was >= 0 && r->ct.cpu > was)
			au->moved += r->ct.cpu - was;
		r->ct.m.paused = r->paused;
		au->t[n] = r->ct;
		au->who[n++] = r;
	}
	return n;
}

/*
 * Stop r at the GPU's door: 1 when it stays stopped. A task found holding
 * a file lock once stopped (it could stop those that wait for the lock) is
 * let go at once, and asked again at the next reading; so is one that has
 * not stopped within STOP_WAIT (what it holds cannot be known).
 */
static int
stop_at_door(struct run *r)
{
	if (kill(-r->pid, SIGSTOP) < 0)
		return 0;
	if (!host_tree_stopped(r->pid, STOP_WAIT) || host_tree_locks(r->pid) != 0) {
		kill(-r->pid, SIGCONT);
		return 0;
	}
	return 1;
}

/*
 * Tasks stopped at the door while the rest of the farm stands still: they
 * may hold what the others wait for (a lock of a kind /proc/locks does not
 * list). All go, and nothing is stopped again in this run.
 */
static void
stall_check(struct farm *f, double now)
{
	struct farm_auto *au = f->au;
	unsigned long long ended = 0;
	int paused = 0, busy = 0;

	for (int i = 0; i < f->ng; i++) {
		ended += f->g[i].ended;
		busy |= f->g[i].ctl && au->dev[i].busy > 0.05;
	}
	for (int i = 0; i < f->nr; i++)
		paused += f->r[i].task && f->r[i].paused;
	if (au->moved_t == 0 || au->moved > 0.05 || ended != au->ended || busy || paused == 0)
		au->moved_t = now;
	au->moved = 0;
	au->ended = ended;
	if (now - au->moved_t < STALL)
		return;
	au->gate_off = 1;
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task)
			auto_wake(&f->r[i]);
}

/* The controllers' answers: each device's count, each task stopped at the door or let go. */
static void
apply(struct farm *f, int n, double now)
{
	struct farm_auto *au = f->au;

	for (int i = 0; i < n; i++) {
		struct run *r = au->who[i];
		/* beside a fault nothing waits stopped: the server's teardown waits on every client (health.c) */
		int stop = au->t[i].m.pause && !au->t[i].m.on_gpu && f->stop == 0 && !au->blind && !au->gate_off &&
		    !health_door_shut(r->g, now);

		r->ct = au->t[i];
		if (stop && !r->paused && stop_at_door(r)) {
			r->paused = 1;
			r->g->waited++;
			trace_event(now, "door stop seq=%llu pid=%d", r->task->seq, (int)r->pid);
		} else if (!stop && r->paused) {
			kill(-r->pid, SIGCONT);
			r->paused = 0;
			trace_event(now, "door go seq=%llu pid=%d", r->task->seq, (int)r->pid);
		}
		r->ct.m.paused = r->paused;
	}
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].ctl) {
			f->g[i].jobs = f->g[i].ctl->limit;
			f->g[i].footprint = ctlmem_expect(&au->node.mem);
			f->g[i].cores_start = au->node.d_start;
			f->g[i].cores_run = au->node.d_run;
		}
}

void
auto_tick(struct farm *f, double now)
{
	struct farm_auto *au = f->au;
	int full, n;

	if (!au || (now < au->next && !(au->node.watch && now >= au->watch_next)))
		return;
	full = now >= au->next;
	if (full)
		au->next = now + CTL_TICK;
	au->watch_next = now + CTLNODE_WATCH;
	read_host(f, now, full);
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].ctl && !farm_mps_quiet(&f->g[i], farm_log_since(f, &f->g[i]), now))
			read_device(f, i, now, full);
	n = gather(f, -1, NULL);
	if (full) {
		ctlnode_step(&au->node, &au->host, au->dev, au->t, n);
		au->starts = au->node.starts;
	} else
		ctlnode_watch(&au->node, &au->host, au->dev, au->t, n);
	apply(f, n, now);
	if (full)
		stall_check(f, now);
}

void
auto_wake(struct run *r)
{
	if (!r->paused)
		return;
	kill(-r->pid, SIGCONT);
	r->paused = 0;
	trace_event(clock_mono(), "door go seq=%llu pid=%d (all let go)", r->task->seq, (int)r->pid);
}

/*
 * Did other attempts run on r's device beside it: running still, or ended
 * after it started (a loop slow to reap sees a task that ran out of memory
 * beside others only after they ended)?
 */
static int
had_company(const struct run *r)
{
	const struct group *g = r->g;
	int n = 0;

	for (int i = 0; i < 8; i++)
		n += g->end_t[i] > r->start;
	return g->running >= 2 || n > 0;
}

int
auto_oom(const struct farm *f, const struct run *r)
{
	const struct group *g = r->g;
	int said, full;

	if (!g->ctl || !f->au)
		return 0;
	said = oom_in_output(&r->out[1], r->file[1]);
	full = g->mem_total && (double)g->mem_free < MEM_FULL_SHARE * (double)g->mem_total;
	/* alone on the device, running out of memory was the task's own doing, not the packing's */
	return (said || full) && had_company(r);
}

void
auto_ended(struct farm *f, struct run *r, int ok, double now)
{
	struct farm_auto *au = f->au;
	struct group *g = r->g;
	int gi = (int)(g - f->g), n, oom = !ok && auto_oom(f, r);

	g->end_t[g->ended % 8] = now;
	g->ended++;
	r->paused = 0;
	if (!g->ctl || !au)
		return;
	ctlnode_ended(&au->node, &r->ct, ok, now);
	if (!oom)
		return;
	/* step now, before the freed slot takes the rerun back into the same squeeze */
	au->host.now = now;
	au->dev[gi].ended = g->ended;
	au->dev[gi].oom = 1;
	n = gather(f, gi, r);
	ctlnode_oom(&au->node, gi, &au->host, au->dev, au->t, n);
	au->dev[gi].oom = 0;
	apply(f, n, now);
}

/* Up to REMEMBER_FP footprints, evenly spaced quantiles of those learnt, ascending. */
static void
quantiles(const struct ctlmem_dist *d, struct remembered *rem)
{
	double v[CTLMEM_KEEP];
	int n = d->n;

	memcpy(v, d->v, (size_t)n * sizeof *v);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	rem->nfp = n < REMEMBER_FP ? n : REMEMBER_FP;
	for (int k = 0; k < rem->nfp; k++) {
		int at = rem->nfp > 1 ? k * (n - 1) / (rem->nfp - 1) : n - 1;

		rem->fp[k] = v[at] > 0 ? (uint64_t)v[at] : 0;
	}
	/* a remembered footprint is at least a MiB (the file's unit) */
	for (int k = 0; k < rem->nfp; k++)
		if (rem->fp[k] < (1u << 20))
			rem->fp[k] = 1u << 20;
}

void
auto_finish(struct farm *f, int remember)
{
	struct farm_auto *au = f->au;
	double now = clock_mono();

	if (!au)
		return;
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].task)
			auto_wake(&f->r[i]);
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		struct remembered rem;
		double held = 0;

		if (!g->ctl)
			continue;
		memset(&rem, 0, sizeof rem);
		rem.count = ctl_settled(g->ctl, now, &held);
		rem.cores_start = au->node.d_start_n > 0 || au->node.seeded ? au->node.d_start : 0;
		rem.cores_run = au->node.d_run_n > 0 || au->node.seeded ? au->node.d_run : 0;
		quantiles(&au->node.mem.fp, &rem);
		/* worth remembering once it ran a step with tasks waiting */
		if (remember && held >= CTL_TICK)
			remember_store(au->key[i], &rem);
		g->ctl = NULL;
	}
	ctlnode_free(&au->node);
	free(au->cfg);
	free(au->key);
	free(au->used0);
	free(au->unknown_since);
	free(au->answered);
	free(au->dev);
	free(au->t);
	free(au->who);
	free(au);
	f->au = NULL;
}

void
auto_energy(struct farm *f, int end)
{
	usagefarm_mark(f, clock_mono());
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		uint64_t mj = 0;
		/* the usage sample's own reading: a counter step between two reads split them (run-usage.t) */
		int ok = usagefarm_energy_last(f, g->gpu_index, &mj) == 0 ||
		    (f->b && f->b->energy && f->b->energy(f->b, g->gpu_index, &mj) == 0);

		err_clear();
		if (!end) {
			g->en.energy0 = mj;
			g->en.energy_ok = ok;
			g->en.energy_shared = 0;
			for (int j = 0; j < f->ng; j++)
				g->en.energy_shared |= j != i && f->g[j].gpu_index == g->gpu_index && f->g[j].cap > 0;
			continue;
		}
		g->en.energy1 = mj;
		g->en.energy_ok = g->en.energy_ok && ok && mj >= g->en.energy0 ? 2 : 0;
	}
}
