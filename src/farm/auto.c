/*
 * auto: the farm's side of -j auto (auto.h). The signals of one device are
 * put together here from three places: the backend's sample of the device,
 * /proc for the host, and the farm's own runs, matched to the device's
 * processes by process group (each task leads its own group, so a task's
 * children count as the task).
 *
 * Where the driver lists no process of ours (a container that hides pids,
 * a driver that does not list MPS clients), the farm goes "blind": every
 * running task counts as on the GPU, and a task's footprint is the device
 * memory the farm added over the tasks running.
 */
#include "farm/auto.h"
#include "farm/control.h"
#include "farm/cost.h"
#include "farm/oom.h"
#include "farm/remember.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/host.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

/* A process with at least this much device memory has its context and data: it is on the GPU. */
#define ON_GPU_MIN (256ull << 20)
/* Seconds of running tasks after which a driver that listed none of them is taken as blind. */
#define BLIND_AFTER 20.0
/* The device counts as at its memory limit below this share free. */
#define MEM_FULL_SHARE 0.02

struct farm_auto {
	struct ctl *ctl;          /* one per group (unused where a group has no slot) */
	uint64_t *key;            /* per group: what its count is remembered under */
	uint64_t *used0;          /* per group: device memory in use before the farm */
	double next;
	struct host_cpu cpu;
	int cpu_ok;
	double running_since;     /* 0: no task has run yet */
	int seen;                 /* a task of ours appeared in a device's process list */
	int ncpu;                 /* the host's CPUs, as /proc/stat lists them */
	int blind;
};

static int
start_count(const struct farm *f, uint64_t key, int *remembered)
{
	int n = 0;

	*remembered = remember_load(key, &n);
	if (*remembered)
		return n;
	return f->o->share == SHARE_MPS ? FARM_JOBS_MPS : FARM_JOBS_TIMESLICE;
}

int
auto_setup(struct farm *f, const struct gpu_system *sys)
{
	struct farm_auto *au;
	double now = clock_mono();
	uint64_t id = setup_identity(f->o);

	if (!f->o->jobs_auto)
		return 0;
	au = xcalloc(1, sizeof *au);
	au->ctl = xcalloc((size_t)f->ng, sizeof *au->ctl);
	au->key = xcalloc((size_t)f->ng, sizeof *au->key);
	au->used0 = xcalloc((size_t)f->ng, sizeof *au->used0);
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		const struct gpu_info *gi = &sys->gpus[g->t.gpu];
		struct ctl_config cfg;
		int remembered = 0, seen = 0, n = 0;

		g->gi_id = g->t.gi >= 0 ? (int)gi->gi[g->t.gi].id : -1;
		g->mem_total = g->t.mem_total;
		g->mem_free = g->t.mem_free;
		au->used0[i] = g->t.mem_total > g->t.mem_free ? g->t.mem_total - g->t.mem_free : 0;
		if (g->cap == 0)
			continue;
		au->key[i] = remember_key(id, f->o->share, gi->name, g->mig_slices);
		/* one warning per file: a device of the same kind as an earlier one takes its count */
		for (int j = 0; j < i; j++)
			if (au->key[j] == au->key[i] && f->g[j].ctl) {
				n = f->g[j].ctl->cfg.start;
				seen = 1;
			}
		cfg.start = seen ? n : start_count(f, au->key[i], &remembered);
		cfg.max = g->cap;
		cfg.mps = f->o->share == SHARE_MPS;
		cfg.mem_task = f->o->mem ? f->o->mem + FARM_CTX_OVERHEAD : 0;
		cfg.mem_min = FARM_CTX_OVERHEAD;
		ctl_init(&au->ctl[i], &cfg, now);
		if (remembered)
			au->ctl[i].log[0].why = "remembered from an earlier run";
		g->ctl = &au->ctl[i];
		g->jobs = g->ctl->limit;
	}
	/* a first sample of each device: GPM's figures are rates between two */
	for (int i = 0; i < f->ng; i++) {
		struct gpu_sample smp;

		if (f->g[i].ctl && f->b && f->b->sample)
			f->b->sample(f->b, f->g[i].gpu_index, f->g[i].gi_id, &smp);
	}
	au->cpu_ok = host_cpu_read(&au->cpu) == 0;
	err_clear();
	au->next = now + CTL_TICK;
	f->au = au;
	return 0;
}

double
auto_next(const struct farm *f)
{
	return f->au ? f->au->next : 0;
}

/* Which of g's runs are on the GPU, and with how much memory; the footprint. */
static void
attribute(struct farm *f, struct group *g, const struct gpu_sample *smp)
{
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].g == g)
			f->r[i].gpu_mem = 0;
	for (int p = 0; p < smp->nprocs; p++) {
		pid_t pg = host_pgid(smp->procs[p].pid);

		for (int i = 0; pg > 0 && i < f->nr; i++) {
			struct run *r = &f->r[i];

			if (r->g != g || !r->task || r->exited || r->pid != pg)
				continue;
			/* a process the driver lists without its memory: on the GPU, size unknown */
			r->gpu_mem += smp->procs[p].mem ? smp->procs[p].mem : 1;
			f->au->seen = 1;
		}
	}
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (r->g != g || !r->task)
			continue;
		r->on_gpu = r->gpu_mem >= ON_GPU_MIN || r->gpu_mem == 1 || f->au->blind;
		if (r->gpu_mem > 1 && r->gpu_mem > g->footprint)
			g->footprint = r->gpu_mem;
	}
}

/* Step g's controller. gone: a run whose attempt just ended (not counted as running). */
static void
step_group(struct farm *f, int gi, double now, double cpu_busy, uint64_t host_avail,
    const struct run *gone)
{
	struct farm_auto *au = f->au;
	struct group *g = &f->g[gi];
	struct gpu_sample smp;
	struct ctl_signals s;
	uint64_t fp = 0, est;
	int have;

	memset(&smp, 0, sizeof smp);
	have = f->b && f->b->sample && f->b->sample(f->b, g->gpu_index, g->gi_id, &smp) == 0;
	if (!have) {
		err_clear();
		smp.busy = smp.sm_active = -1;
		smp.nprocs = -1;
	}
	if (have && smp.mem_total) {
		g->mem_total = smp.mem_total;
		g->mem_free = smp.mem_free;
	}
	/* a driver that never lists our processes: judge by the device's memory */
	if (!au->blind && have && g->running > 0 && (smp.nprocs < 0 ||
	    (!au->seen && au->running_since > 0 && now - au->running_since > BLIND_AFTER)))
		au->blind = 1;
	if (have && smp.nprocs >= 0)
		attribute(f, g, &smp);
	if (au->blind && g->running > 0 && smp.mem_used > au->used0[gi]) {
		uint64_t per = (smp.mem_used - au->used0[gi]) / (uint64_t)g->running;

		if (per > g->footprint)
			g->footprint = per;
	}
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].footprint > fp)
			fp = f->g[i].footprint;
	memset(&s, 0, sizeof s);
	s.now = now;
	s.demand = f->stop == 0 && !(f->st.inputs_done && !f->retry && !f->suspects);
	s.ended = g->ended;
	s.busy = smp.busy;
	s.sm_active = smp.sm_active;
	s.cpu_busy = cpu_busy;
	s.ncpu = au->ncpu;
	s.mem_total = have ? smp.mem_total : 0;
	s.mem_free = smp.mem_free;
	s.footprint = fp;
	s.host_avail = host_avail;
	s.oom = g->oom;
	est = fp > FARM_CTX_OVERHEAD ? fp : FARM_CTX_OVERHEAD;
	for (int i = 0; i < f->nr; i++) {
		const struct run *r = &f->r[i];

		if (r->g != g || !r->task || r->exited || r == gone)
			continue;
		s.running++;
		s.unrevealed += !r->on_gpu;
		/* what it will still take: the largest footprint, less what it holds */
		if (!au->blind && r->gpu_mem < est)
			s.mem_pending += est - (r->gpu_mem > 1 ? r->gpu_mem : 0);
	}
	g->jobs = ctl_step(g->ctl, &s);
	g->oom = 0;
}

/* The host's CPU busy share since the last reading, and MemAvailable. */
static void
host_signals(struct farm_auto *au, double *cpu_busy, uint64_t *avail)
{
	struct host_cpu now;

	*cpu_busy = -1;
	*avail = 0;
	if (host_cpu_read(&now) == 0) {
		if (au->cpu_ok)
			*cpu_busy = host_cpu_busy(&au->cpu, &now);
		au->cpu = now;
		au->cpu_ok = 1;
		au->ncpu = now.ncpu;
	}
	if (host_mem_available(avail) < 0)
		*avail = 0;
	err_clear();
}

void
auto_tick(struct farm *f, double now)
{
	struct farm_auto *au = f->au;
	uint64_t avail;
	double cpu;

	if (!au || now < au->next)
		return;
	au->next = now + CTL_TICK;
	if (au->running_since == 0 && f->st.running > 0)
		au->running_since = now;
	host_signals(au, &cpu, &avail);
	for (int i = 0; i < f->ng; i++)
		if (f->g[i].ctl)
			step_group(f, i, now, cpu, avail, NULL);
}

int
auto_ended(struct farm *f, struct run *r, int ok)
{
	struct group *g = r->g;
	int said, full;

	g->ended++;
	if (ok || !g->ctl || !f->au)
		return 0;
	said = oom_in_output(&r->out[1], r->file[1]);
	full = g->mem_total && (double)g->mem_free < MEM_FULL_SHARE * (double)g->mem_total;
	/* alone on the device, running out of memory was the task's own doing, not the packing's */
	if (!(said || full) || g->running < 2)
		return 0;
	/* step now, before the freed slot takes the rerun back into the same squeeze */
	g->oom++;
	step_group(f, (int)(g - f->g), clock_mono(), -1, 0, r);
	return 1;
}

void
auto_finish(struct farm *f, int remember)
{
	struct farm_auto *au = f->au;
	double now = clock_mono();

	if (!au)
		return;
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];
		double held = 0;
		int n;

		if (!g->ctl)
			continue;
		n = ctl_settled(g->ctl, now, &held);
		/* a count is worth remembering once it ran a step with tasks waiting */
		if (remember && held >= CTL_TICK)
			remember_store(au->key[i], n);
		ctl_free(g->ctl);
		g->ctl = NULL;
	}
	free(au->ctl);
	free(au->key);
	free(au->used0);
	free(au);
	f->au = NULL;
}
