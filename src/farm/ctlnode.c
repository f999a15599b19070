/*
 * ctlnode: the devices' controllers and the host's budget (ctlnode.h says
 * what it decides from what). Each step: the tasks' CPU rates, the cores a
 * task wants in each phase, the CPUs and host memory left (the room, in
 * tasks), device memory admission per device (ctlmem.c), then each
 * device's controller (control.c) with its share of the room: the devices
 * take turns drawing first, so that none starves the others.
 */
#include "farm/ctlnode.h"
#include "util/knob.h"
#include "util/str.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weight of a new reading in the cores-per-task and other-load averages. */
#define EWMA 0.5
/* Busy share from which the host counts as over budget (with the tasks wanting CTLNODE_OVER more). */
#define OVER_BUSY 0.97
/* Cores a task wants, at least: the room in tasks is bounded by this. */
#define CORES_MIN 0.05

void
ctlnode_init(struct ctlnode *n, const struct ctlnode_config *cfg, double now)
{
	memset(n, 0, sizeof *n);
	n->ndev = cfg->ndev;
	n->dev = xcalloc((size_t)(cfg->ndev > 0 ? cfg->ndev : 1), sizeof *n->dev);
	n->room_tasks = n->starts = CTL_ANY;
	for (int i = 0; i < cfg->ndev; i++)
		ctl_init(&n->dev[i], &cfg->dev[i], now);
	/* near the door, tasks are read every CTLNODE_WATCH seconds */
	ctlmem_init(&n->mem, cfg->mem_fixed, CTLNODE_WATCH);
	n->seeded = cfg->d_start > 0;
	n->d_start = cfg->d_start > 0 ? cfg->d_start : CTLNODE_CORES;
	n->d_run = cfg->d_run > 0 ? cfg->d_run : CTLNODE_CORES;
	n->other = -1;
	n->mem.start_rate = n->d_start;
}

void
ctlnode_free(struct ctlnode *n)
{
	for (int i = 0; i < n->ndev; i++)
		ctl_free(&n->dev[i]);
	free(n->dev);
	free(n->room);
	n->dev = NULL;
	n->room = NULL;
}

/*
 * The most a starting task counts for in the budget: what a task on the
 * GPU wants, at least one core. A start-up's burst (a threaded import:
 * 1.4 cores each, 2 and more in its first second, on the H100 and H200) is
 * over in seconds and its work is done either way; what the count must
 * fit is the farm's steady load. Counted at its burst, 16 PyTorch
 * trainings on 16 cores crept from 8 to 15 over 9 s (0.87-0.90 of all 16
 * at once); counted so, they all start within a second.
 */
static double
start_cost(const struct ctlnode *n)
{
	return n->d_run > CTLNODE_CORES ? n->d_run : CTLNODE_CORES;
}

/* The CPUs' room: CTLNODE_ROOM, or the knob's percent (bench/auto.sh's VARIANTS). */
static double
cpu_room(void)
{
	return knob(KNOB_FARM_CPU_ROOM) > 0 ? knob(KNOB_FARM_CPU_ROOM) / 100.0 : CTLNODE_ROOM;
}

void
ctlnode_first(struct ctlnode *n, int ncpu, const uint64_t *mem_free)
{
	for (int i = 0; i < n->ndev; i++) {
		struct ctl *c = &n->dev[i];
		int start = c->limit;

		/* its share of the CPUs, at the cores a task wanted in a past run (not a guess) */
		if (ncpu > 0 && n->ndev > 0 && n->seeded) {
			double d = n->d_start < start_cost(n) ? n->d_start : start_cost(n);

			d = d > n->d_run ? d : n->d_run;
			int cpu = (int)floor(CTLNODE_OVER * cpu_room() * ncpu / n->ndev / (d > CORES_MIN ? d : CORES_MIN));

			if (cpu >= 1 && cpu < start)
				start = cpu;
		}
		/* the footprints seen before: what the device's free memory admits */
		if (mem_free && mem_free[i] > 0 && (n->mem.fixed || n->mem.fp.n > 0)) {
			struct ctlmem_room r;

			ctlmem_admit(&n->mem, NULL, 0, mem_free[i], mem_free[i], 0, &r);
			if (r.room != CTLMEM_ANY && r.room - (r.gate ? 2 : 0) < start)
				start = r.room - (r.gate ? 2 : 0) > 1 ? r.room - (r.gate ? 2 : 0) : 1;
		}
		if (start < 1)
			start = 1;
		c->limit = c->cfg.start = c->log[0].limit = start;
	}
}

/* An average that a new reading moves by EWMA; the first reading sets it. */
static void
average(double *avg, int *nseen, double x)
{
	*avg = *nseen > 0 ? (1 - EWMA) * *avg + EWMA * x : x;
	(*nseen)++;
}

/* A phase younger than this says too little of what a task wants: the average for its phase stands in. */
#define PHASE_MIN 0.5

/* Each task's phase (starting, on the GPU), the cores it wanted in it, its memory. */
static void
readings(struct ctlnode *n, const struct ctlnode_host *h, struct ctlnode_task *t, int nt)
{
	for (int i = 0; i < nt; i++) {
		struct ctlnode_task *x = &t[i];
		double dt;

		x->m.cpu = x->cpu;
		x->m.age = h->now - x->start;
		ctlmem_seen(&n->mem, &x->m, h->now);
		/* time stopped at the door is no time the task could use a CPU */
		if (x->m.paused && x->phased)
			x->phase_t += h->now - x->seen_t;
		x->seen_t = h->now;
		if (!x->phased || x->phase_gpu != (x->m.on_gpu != 0)) {
			/* a new phase: its average starts over (the first from the task's start) */
			x->phase_t = x->phased ? h->now : x->start;
			x->phase_gpu = x->m.on_gpu != 0;
			x->phase_cpu = x->phased ? x->cpu : 0;
			x->phase_wait = x->phased ? x->wait : 0;
			x->phased = 1;
			x->want = -1;
		}
		dt = h->now - x->phase_t;
		if (x->cpu < 0 || dt < PHASE_MIN || x->m.paused) {
			if (dt < PHASE_MIN)
				x->want = -1;
			continue;
		}
		x->want = (x->cpu - x->phase_cpu + (x->wait >= 0 && x->phase_wait >= 0 ?
		    x->wait - x->phase_wait : 0)) / dt;
	}
}

/*
 * What a starting task and one on the GPU want, from the tasks' own
 * averages over their phases: the CPU time they used and the time they
 * waited for a CPU (where the kernel says: then what they wanted is known
 * however busy the CPUs are). Without the waits, a task on saturated CPUs
 * got less than it wanted: it wants at least what it got. Where the
 * tasks' CPU times are not read, the busy CPUs are shared among them.
 */
static void
learn_cores(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_task *t, int nt)
{
	double ws = 0, wg = 0, used = h->cpu_busy * h->ncpu;
	int ns = 0, ng = 0, nknown = 0, active = 0, waits = 1, contended;

	if (h->cpu_busy < 0 || h->ncpu <= 0)
		return;
	contended = h->cpu_busy >= CTL_CPU_FULL;
	for (int i = 0; i < nt; i++) {
		if (t[i].m.paused)
			continue;
		active++;
		if (t[i].want < 0)
			continue;
		nknown++;
		waits = waits && t[i].wait >= 0;
		if (t[i].m.on_gpu) {
			ng++;
			wg += t[i].want;
		} else {
			ns++;
			ws += t[i].want;
		}
	}
	if (active == 0)
		return;
	if (nknown == 0) {
		int none = 1;

		for (int i = 0; i < nt; i++)
			none = none && t[i].cpu < 0;
		if (!none || contended)
			return;
		/* no per-task readings at all: the busy CPUs, shared alike */
		average(&n->d_start, &n->d_start_n, used / active);
		n->d_run = n->d_start;
		n->mem.start_rate = n->d_start;
		return;
	}
	if (ns > 0) {
		if (!contended || waits)
			average(&n->d_start, &n->d_start_n, ws / ns);
		else if (ws / ns > n->d_start)
			n->d_start = ws / ns;
	}
	if (ng > 0) {
		if (!contended || waits)
			average(&n->d_run, &n->d_run_n, wg / ng);
		else if (wg / ng > n->d_run)
			n->d_run = wg / ng;
	}
	n->mem.start_rate = n->d_start;
}

/* What a task wants now: its own average over its phase, else its phase's (raw: a start-up's burst too). */
static double
wants(const struct ctlnode *n, const struct ctlnode_task *t, int raw)
{
	double w;

	if (t->m.pause)
		return 0;
	w = t->want >= 0 ? t->want : t->m.on_gpu ? n->d_run : n->d_start;
	return raw || t->m.on_gpu || w <= start_cost(n) ? w : start_cost(n);
}

/* The share of the CPUs that tasks starting together may want; < 0: no bound. */
static double
start_over(void)
{
	long k = knob(KNOB_FARM_START_OVER);

	return k < 0 ? -1 : k > 0 ? k / 100.0 : CTLNODE_START_OVER;
}

/*
 * The host's room in tasks: the CPUs left (their count, less what is busy
 * outside the farm, less what the running tasks want), and host memory
 * left (at what one task took on average). Over budget: *over tasks.
 */
static int
host_room(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_task *t, int nt,
    const char **why, int *over, const char **over_why)
{
	double want = 0, got = 0, starting = 0, cap, used = 0;
	double each = n->d_start < start_cost(n) ? n->d_start : start_cost(n);
	int room = CTL_ANY, active = 0, measured = 1;
	uint64_t reserve = CTLNODE_HOST_RESERVE, per;

	*over = 0;
	*why = *over_why = NULL;
	n->starts = CTL_ANY;
	for (int i = 0; i < nt; i++) {
		if (t[i].m.pause)
			continue;
		active++;
		want += wants(n, &t[i], 0);
		got += wants(n, &t[i], 1);
		starting += t[i].m.on_gpu ? 0 : wants(n, &t[i], 0);
		measured = measured && t[i].cpu >= 0;
	}
	if (each < CORES_MIN)
		each = CORES_MIN;
	/* outside the farm: what is busy beyond what its tasks got (they got at most what they want) */
	if (h->cpu_busy >= 0 && h->ncpu > 0 && measured && active > 0) {
		double other;

		used = h->cpu_busy * h->ncpu;
		other = used - (got < h->ncpu ? got : h->ncpu);
		other = other > 0 ? other : 0;
		n->other = n->other < 0 ? other : (1 - EWMA) * n->other + EWMA * other;
	}
	cap = h->ncpu - (n->other > 0 ? n->other : 0);
	n->demand_cores = want;
	n->cap_cores = cap;
	if (h->cpu_busy >= 0 && h->ncpu > 0) {
		/*
		 * what the tasks want fills the CPUs (or, where their CPU use is
		 * not read, the CPUs read saturated)
		 */
		double rf = cpu_room(), f = start_over();

		room = (!measured && h->cpu_busy >= CTL_CPU_FULL) || want >= rf * cap ? 0 :
		    (int)floor((rf * cap - want) / each + 1e-9);
		*why = "CPUs saturated";
		if (h->cpu_busy >= OVER_BUSY && want > CTLNODE_OVER * rf * cap && active > 1) {
			*over = (int)ceil((want - CTLNODE_OVER * rf * cap) / (want / active));
			*over_why = "CPUs over budget: fewer";
		}
		/*
		 * the starts: tasks starting together want at most CTLNODE_START_OVER
		 * of the CPUs (those on the GPU aside: their spinning waits count less)
		 */
		if (f >= 0)
			n->starts = starting >= f * h->ncpu ? 0 : (int)floor((f * h->ncpu - starting) / each + 1e-9);
	}
	if (h->host_avail == 0)
		return room;
	if (n->host_start == 0)
		n->host_start = h->host_avail;
	if (n->host_start / 20 > reserve)
		reserve = n->host_start / 20;
	if (h->host_avail < reserve && nt > 1) {
		*over = *over > 1 ? *over : 1;
		*over_why = "host memory low";
		*why = "host memory";
		return 0;
	}
	/* what one task took, on average, since the start */
	per = nt > 0 && n->host_start > h->host_avail ? (n->host_start - h->host_avail) / (uint64_t)nt : 0;
	if (per > 0 && h->host_avail > reserve && (h->host_avail - reserve) / per < (uint64_t)room) {
		room = (int)((h->host_avail - reserve) / per);
		*why = "host memory";
	}
	return room;
}

/* The furthest on first, as the door orders them. */
static int
by_progress(const void *a, const void *b)
{
	double x = ctlmem_progress(&(*(const struct ctlnode_task *const *)a)->m);
	double y = ctlmem_progress(&(*(const struct ctlnode_task *const *)b)->m);

	return x > y ? -1 : x < y;
}

/*
 * Tasks the door lets go resume their start-ups: with the tasks starting,
 * they want at most start_over() of the CPUs, as new starts do; the least
 * advanced stay stopped until a later reading (one always goes).
 */
static void
hold_starts(struct ctlnode *n, const struct ctlnode_host *h, struct ctlnode_task *t, int nt)
{
	double f = start_over(), starting = 0;
	struct ctlnode_task **go;
	int ngo = 0;

	if (f < 0 || h->ncpu <= 0)
		return;
	go = xcalloc((size_t)(nt > 0 ? nt : 1), sizeof *go);
	for (int i = 0; i < nt; i++) {
		if (t[i].m.on_gpu || t[i].m.pause)
			continue;
		if (t[i].m.paused)
			go[ngo++] = &t[i];
		else
			starting += wants(n, &t[i], 0);
	}
	qsort(go, (size_t)ngo, sizeof *go, by_progress);
	for (int i = 0; i < ngo; i++) {
		double w = wants(n, go[i], 0);

		if (starting > 0 && starting + w > f * h->ncpu)
			go[i]->m.pause = 1;
		else
			starting += w;
	}
	free(go);
}

/* Device memory admission on each device; *watch when a task nears the door. */
static void
admit_all(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt)
{
	struct ctlmem_task **mine = xcalloc((size_t)(nt > 0 ? nt : 1), sizeof *mine);

	if (!n->room)
		n->room = xcalloc((size_t)(n->ndev > 0 ? n->ndev : 1), sizeof *n->room);
	n->watch = 0;
	for (int i = 0; i < n->ndev; i++) {
		int k = 0;

		for (int j = 0; j < nt; j++)
			if (t[j].dev == i)
				mine[k++] = &t[j].m;
		ctlmem_admit(&n->mem, mine, k, d[i].mem_free, d[i].mem_total, h->now, &n->room[i]);
		n->watch |= n->room[i].watch;
	}
	free(mine);
}

/*
 * Until a footprint is known, the most a device starts (its share of the
 * CPUs where more). While the first footprint settles, the others wait at
 * the door, stopped before they allocate: twice that, so that start-ups
 * go on in the CPUs the waiting ones leave idle (the CPUs' room bounds
 * them). On an H200, 15 of 16 PyTorch trainings waited there 4 s with the
 * CPUs 19% busy (bench/results/auto-history.md).
 */
static int
blind_room(const struct ctlnode *n, const struct ctlnode_host *h, int started, int settling)
{
	int cap = CTLNODE_BLIND;

	if (h->ncpu > 0 && n->ndev > 0 && h->ncpu / n->ndev > cap)
		cap = h->ncpu / n->ndev;
	if (settling)
		cap *= 2;
	return cap > started ? cap - started : 0;
}

static void
dev_signals(const struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d, int i,
    const struct ctlnode_task *t, int nt, struct ctl_signals *s)
{
	ctl_signals_init(s, h->now);
	for (int j = 0; j < nt; j++) {
		if (t[j].dev != i)
			continue;
		s->running++;
		s->unrevealed += !t[j].m.on_gpu;
		s->paused += t[j].m.paused;
	}
	s->demand = h->demand;
	s->ended = d[i].ended;
	s->busy = d[i].busy;
	s->sm_active = d[i].sm_active;
	s->cpu_busy = h->cpu_busy;
	s->ncpu = h->ncpu;
	s->energy = d[i].energy;
	s->oom = d[i].oom;
	if (n->room) {
		const struct ctlmem_room *r = &n->room[i];

		s->mem_room = r->room == CTLMEM_ANY ? blind_room(n, h, s->running, 0) :
		    r->settling ? blind_room(n, h, s->running, 1) : r->room;
	}
}

void
ctlnode_step(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt)
{
	const char *why, *over_why;
	int over, room, left, total = 0;

	readings(n, h, t, nt);
	learn_cores(n, h, t, nt);
	/* the gate first: a task it lets go again wants its CPU again */
	admit_all(n, h, d, t, nt);
	hold_starts(n, h, t, nt);
	room = host_room(n, h, t, nt, &why, &over, &over_why);
	n->room_tasks = room;
	for (int i = 0; i < n->ndev; i++)
		total += n->dev[i].limit;
	left = room;
	for (int k = 0; k < n->ndev; k++) {
		int i = (n->rot + k) % n->ndev, before = n->dev[i].limit;
		struct ctl_signals s;

		dev_signals(n, h, d, i, t, nt, &s);
		/* an even share of what is left among the devices still to draw */
		s.room = left == CTL_ANY ? CTL_ANY : (left + (n->ndev - k) - 1) / (n->ndev - k);
		s.room_why = why;
		s.over = over > 0 && total > 0 ? (int)ceil((double)over * before / total) : 0;
		s.over_why = over_why;
		ctl_step(&n->dev[i], &s);
		if (left != CTL_ANY && n->dev[i].limit > before)
			left -= n->dev[i].limit - before < left ? n->dev[i].limit - before : left;
	}
	n->rot = n->ndev > 0 ? (n->rot + 1) % n->ndev : 0;
}

void
ctlnode_watch(struct ctlnode *n, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt)
{
	readings(n, h, t, nt);
	admit_all(n, h, d, t, nt);
	hold_starts(n, h, t, nt);
}

void
ctlnode_ended(struct ctlnode *n, const struct ctlnode_task *t, int ok, double now)
{
	ctlmem_ended(&n->mem, &t->m, ok, now);
}

void
ctlnode_oom(struct ctlnode *n, int dev, const struct ctlnode_host *h, const struct ctlnode_dev *d,
    struct ctlnode_task *t, int nt)
{
	struct ctl_signals s;

	if (dev < 0 || dev >= n->ndev)
		return;
	dev_signals(n, h, d, dev, t, nt, &s);
	s.oom = s.oom > 0 ? s.oom : 1;
	ctl_step(&n->dev[dev], &s);
}
