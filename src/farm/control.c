/*
 * control: the -j auto controller of one device (control.h says what it
 * decides from what). Everything here is arithmetic on the signals of one
 * step and a little state; the caller owns time and processes.
 */
#include "farm/control.h"
#include "util/str.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/*
 * Completions an epoch needs before its rate is compared: twice the count
 * (every slot turned over twice), at least 8, over at least 2 s. A farm too
 * short for that is decided by the fast signals alone.
 */
#define EPOCH_MIN_ENDED 8
#define EPOCH_MIN_SECONDS 2.0
/* A smaller count is kept when it ends tasks at least this fast; a larger one when this much faster. */
#define PROBE_DOWN_KEEP 0.97
#define PROBE_UP_KEEP 1.05
/* Seconds before the first probe, and the gap's ceiling as failed probes double it. */
#define PROBE_GAP 4.0
#define PROBE_GAP_MAX 64.0
/* Near a resource's limit the count grows by one, not by half. */
#define NEAR 0.7
/*
 * Steps in a row with the GPU far from saturated (under half of it) after
 * which what the probes learnt is dropped: the farm's tasks changed (a
 * phase of start-up-bound tasks after GPU-bound ones).
 */
#define LOW_STEPS 4
/*
 * Cores a starting task keeps busy, on average, for start-ups to count as
 * CPU work (imports: about one core each) that overlaps well when more run
 * at once. Below it, tasks starting wait on something else (the driver, the
 * MPS server making contexts): on two H200s 24 SGEMM tasks per GPU kept
 * 0.3-0.5 cores each busy while the GPU read idle for 1.5 s; doubling then
 * put all 24 on at once, 1.3x slower than 3 at a time. PyTorch start-ups
 * kept 1.0-1.5 cores each busy on an H100.
 */
#define START_CPU 0.8

void
ctl_init(struct ctl *c, const struct ctl_config *cfg, double now)
{
	memset(c, 0, sizeof *c);
	c->cfg = *cfg;
	if (c->cfg.max < 1)
		c->cfg.max = 1;
	c->limit = cfg->start < 1 ? 1 : cfg->start > c->cfg.max ? c->cfg.max : cfg->start;
	c->phase = CTL_RAMP;
	c->t0 = c->epoch_t = c->held_since = now;
	c->epoch_saturated = 1;
	c->probe_gap = PROBE_GAP;
	c->next_probe = now + PROBE_GAP;
	c->last_rate = c->last_jpt = -1;
	c->epoch_energy = c->settle_energy = -1;
	c->held = xcalloc((size_t)c->cfg.max + 1, sizeof *c->held);
	c->log = xcalloc(CTL_LOG_MAX, sizeof *c->log);
	c->log[c->nlog++] = (struct ctl_decision){0, c->limit, -1, -1, -1, -1, "start"};
}

void
ctl_signals_init(struct ctl_signals *s, double now)
{
	memset(s, 0, sizeof *s);
	s->now = now;
	s->busy = s->sm_active = s->cpu_busy = s->energy = -1;
	s->room = s->mem_room = CTL_ANY;
}

void
ctl_free(struct ctl *c)
{
	free(c->held);
	free(c->log);
	c->held = NULL;
	c->log = NULL;
}

/*
 * Tasks ended per second in the epoch: counted from its settled part (once
 * as many tasks ended as the count, the tasks running are the new count's),
 * else from its start.
 */
static double
epoch_rate(const struct ctl *c, const struct ctl_signals *s)
{
	double t = c->settle_t > 0 ? c->settle_t : c->epoch_t, dt = s->now - t;
	unsigned long long e = c->settle_t > 0 ? c->settle_ended : c->epoch_ended;

	return dt > 0 ? (double)(s->ended - e) / dt : -1;
}

/* Joules per task ended in the epoch (its settled part, as the rate); -1 unknown. */
static double
epoch_jpt(const struct ctl *c, const struct ctl_signals *s)
{
	double e0 = c->settle_t > 0 ? c->settle_energy : c->epoch_energy;
	unsigned long long n = s->ended - (c->settle_t > 0 ? c->settle_ended : c->epoch_ended);

	return e0 >= 0 && s->energy >= e0 && n > 0 ? (s->energy - e0) / (double)n : -1;
}

/* Has the epoch's settled part seen enough to compare its rate? */
static int
epoch_measured(const struct ctl *c, const struct ctl_signals *s)
{
	unsigned long long need = (unsigned long long)(2 * c->limit > EPOCH_MIN_ENDED ? 2 * c->limit :
	    EPOCH_MIN_ENDED);

	return c->settle_t > 0 && s->ended - c->settle_ended >= need &&
	    s->now - c->settle_t >= EPOCH_MIN_SECONDS;
}

/*
 * The rate a step up is checked against: the epoch's, once measured; else,
 * where at least a count's worth of tasks ended in it over a second, that
 * rougher one (a step with none would pass unchecked); else none (-1).
 */
static double
baseline(const struct ctl *c, const struct ctl_signals *s)
{
	if (epoch_measured(c, s))
		return epoch_rate(c, s);
	if (s->ended >= c->epoch_ended + (unsigned long long)c->limit && s->now - c->epoch_t >= 1.0)
		return (double)(s->ended - c->epoch_ended) / (s->now - c->epoch_t);
	return -1;
}

static void
note(struct ctl *c, const struct ctl_signals *s, double gpu, const char *why)
{
	struct ctl_decision d = {s->now - c->t0, c->limit, c->last_rate, gpu, s->cpu_busy, c->last_jpt, why};

	/* the first decisions and the latest one: the start and where it went */
	if (c->nlog < CTL_LOG_MAX) {
		c->log[c->nlog++] = d;
	} else {
		c->log[CTL_LOG_MAX - 1] = d;
		c->dropped++;
	}
}

/* Move to count n (a new epoch), saying why. */
static void
set(struct ctl *c, const struct ctl_signals *s, double gpu, int n, const char *why)
{
	if (n < 1)
		n = 1;
	if (n > c->cfg.max)
		n = c->cfg.max;
	c->last_rate = epoch_rate(c, s);
	c->last_jpt = epoch_jpt(c, s);
	if (n != c->limit) {
		c->limit = n;
		c->epoch_t = s->now;
		c->epoch_ended = s->ended;
		c->epoch_energy = s->energy;
		c->epoch_saturated = 1;
		c->settle_t = 0;
	}
	note(c, s, gpu, why);
}

/*
 * Time at each count while tasks ran: what to remember. The farm's tail
 * counts too: a farm whose tasks all started while the count ramped up
 * settles on the top of the ramp, which is where its next run should start.
 */
static void
account(struct ctl *c, const struct ctl_signals *s)
{
	if ((s->demand || s->running > 0) && c->limit >= 1 && c->limit <= c->cfg.max)
		c->held[c->limit] += s->now - c->held_since;
	c->held_since = s->now;
}

int
ctl_settled(const struct ctl *c, double now, double *held)
{
	int best = c->limit;
	double most = 0;

	for (int n = 1; n <= c->cfg.max; n++) {
		double h = c->held[n] + (n == c->limit ? now - c->held_since : 0);

		if (h > most) {
			most = h;
			best = n;
		}
	}
	if (held)
		*held = most;
	return best;
}

/* A probe has run long enough: keep its count or go back. */
static void
probe_end(struct ctl *c, const struct ctl_signals *s, double gpu)
{
	double rate = epoch_rate(c, s), jpt = epoch_jpt(c, s);
	int kept = c->probe_up ? rate >= PROBE_UP_KEEP * c->probe_rate :
	    rate >= PROBE_DOWN_KEEP * c->probe_rate;

	/* the energy goal: fewer tasks nearly as fast, for fewer joules each */
	if (!c->probe_up && !kept && c->cfg.energy && jpt >= 0 && c->probe_jpt >= 0 && jpt < c->probe_jpt &&
	    rate >= CTL_ENERGY_KEEP * c->probe_rate)
		kept = 2;
	c->phase = CTL_HOLD;
	c->up_kept = kept && c->probe_up;
	if (kept) {
		c->last_rate = rate;
		c->last_jpt = jpt;
		note(c, s, gpu, c->probe_up ? "more tasks ended faster: kept" : kept == 2 ?
		    "fewer tasks, fewer joules each, nearly as fast: kept" : "fewer tasks ended as fast: kept");
		/*
		 * fewer did as well: the fast signals may read "not saturated"
		 * here, but more tasks were shown not to help. Until the next
		 * probe, they do not grow it past this.
		 */
		c->ceiling = c->probe_up ? 0 : c->limit;
		/* the next probe down is held to the rate before this one: no slow slide */
		if (!c->probe_up && c->probe_rate > c->chain_rate)
			c->chain_rate = c->probe_rate;
		/* a new epoch here, already settled; the next probe may go further */
		c->epoch_t = c->settle_t = s->now;
		c->epoch_ended = c->settle_ended = s->ended;
		c->epoch_energy = c->settle_energy = s->energy;
		c->epoch_saturated = 1;
	} else {
		set(c, s, gpu, c->probe_from, c->probe_up ? "more tasks ended no faster: back" :
		    "fewer tasks ended slower: back");
		c->ceiling = 0;
		c->chain_rate = 0;
		c->probe_gap = c->probe_gap * 2 > PROBE_GAP_MAX ? PROBE_GAP_MAX : c->probe_gap * 2;
	}
	/* more helped: measure the next step up at once (the new epoch still needs its completions) */
	c->next_probe = c->up_kept ? s->now : s->now + c->probe_gap;
}

static void
probe_start(struct ctl *c, const struct ctl_signals *s, double gpu, int up)
{
	int from = c->limit, to;

	c->probe_rate = epoch_rate(c, s);
	c->probe_jpt = epoch_jpt(c, s);
	if (!up && c->ceiling > 0 && c->chain_rate > c->probe_rate)
		c->probe_rate = c->chain_rate;
	c->probe_from = from;
	c->probe_up = up;
	c->phase = CTL_PROBE;
	/* up by half, or double after a step up that helped; down by a quarter */
	to = up ? from + (c->up_kept ? from : from / 2 > 1 ? from / 2 : 1) :
	    from - (from / 4 > 1 ? from / 4 : 1);
	set(c, s, gpu, to, up ? "no GPU signal: trying more" : c->cfg.energy && !c->epoch_saturated ?
	    "energy: trying fewer" : "GPU saturated: trying fewer");
}

/* The GPU's level and the level at which it counts as saturated (*full); -1 unknown. */
static double
gpu_level(const struct ctl *c, const struct ctl_signals *s, double *full)
{
	/*
	 * SM activity where kernels of many tasks overlap (MPS), else the busy
	 * share. Under MPS without SM activity, a GPU busy all the time may
	 * still take more kernels at once: only a busy share below full says
	 * anything, and then that it is not saturated.
	 */
	*full = 0;
	if ((c->cfg.mps || s->busy < 0) && s->sm_active >= 0) {
		*full = CTL_SM_FULL;
		return s->sm_active;
	}
	if (s->busy >= 0 && (!c->cfg.mps || s->busy < CTL_BUSY_FULL)) {
		*full = CTL_BUSY_FULL;
		return s->busy;
	}
	return -1;
}

/* Why the ramp stopped, said once. */
static const char *
stop_why(const struct ctl *c, const struct ctl_signals *s, int waiting, int sat_gpu)
{
	if (!s->demand)
		return "no tasks waiting";
	if (waiting)
		return "tasks starting, CPUs idle: waiting for the GPU";
	if (c->limit >= c->cfg.max)
		return "at the cap";
	if (c->confirm_from)
		return "seeing whether one more helped";
	if (c->ceiling && c->limit >= c->ceiling)
		return "more did not help";
	if (sat_gpu)
		return "GPU saturated";
	if (s->room <= 0)
		return s->room_why ? s->room_why : "CPUs saturated";
	if (s->mem_room <= 0)
		return s->paused > 0 ? "device memory: tasks wait at the door" : "device memory";
	if (c->oom_hold)
		return "after out of memory";
	return "no GPU signal";
}

/* Grow by up to step (bounded by every room), saying why. */
static void
grow(struct ctl *c, const struct ctl_signals *s, double gpu, double proj, int step)
{
	if (step > s->room)
		step = s->room;
	if (step > s->mem_room)
		step = s->mem_room;
	if (c->ceiling > 0 && c->limit + step > c->ceiling)
		step = c->ceiling - c->limit;
	c->phase = CTL_RAMP;
	set(c, s, gpu, c->limit + step, proj < 0.05 ? "GPU idle" : "GPU not saturated");
}

/* Where the first count's worth of tasks has ended: the settled epoch starts. */
static void
settle_mark(struct ctl *c, const struct ctl_signals *s)
{
	if (c->settle_t == 0 && s->ended >= c->epoch_ended + (unsigned long long)c->limit) {
		c->settle_t = s->now;
		c->settle_ended = s->ended;
		c->settle_energy = s->energy;
	}
}

/* Fewer for lack of room (device memory, the host's budget): 1 when the count was set. */
static int
cut_for_room(struct ctl *c, const struct ctl_signals *s, double gpu, int revealed)
{
	/* out of memory: what ran beside the failed task is what fits */
	if (s->oom > 0) {
		c->oom_hold = 1;
		c->oom_ended = s->ended;
		c->phase = CTL_HOLD;
		/* the tasks on the GPU fit; those still starting did not allocate yet */
		set(c, s, gpu, revealed < c->limit ? revealed : c->limit, "out of memory");
		return 1;
	}
	if (c->oom_hold && s->ended >= c->oom_ended + (unsigned long long)c->limit)
		c->oom_hold = 0;
	/*
	 * The host over its budget (its CPUs, its memory): a quarter fewer at
	 * most per step, and again only once the last cut took effect (tasks
	 * ended down to it): what the tasks want falls only as they end.
	 */
	if (s->over > 0 && c->limit > 1 && s->running <= c->limit && s->demand) {
		int to = c->limit - s->over;

		if (to < c->limit - (c->limit + 3) / 4)
			to = c->limit - (c->limit + 3) / 4;
		c->phase = CTL_HOLD;
		set(c, s, gpu, to, s->over_why ? s->over_why : "CPUs over budget: fewer");
		return 1;
	}
	return 0;
}

/* A step near saturation, its epoch measured: back when tasks ended no faster (1), else kept. */
static int
step_back(struct ctl *c, const struct ctl_signals *s, double gpu)
{
	double rate = epoch_rate(c, s);
	int from = c->confirm_from;

	c->confirm_from = 0;
	if (c->confirm_rate > 0 && rate < PROBE_UP_KEEP * c->confirm_rate) {
		set(c, s, gpu, from, "more tasks ended no faster: back");
		c->ceiling = from;
		c->next_probe = s->now + c->probe_gap;
		return 1;
	}
	return 0;
}

/* A probe when one is due: fewer when saturated (or for the energy goal), more when the GPU says nothing. */
static void
maybe_probe(struct ctl *c, const struct ctl_signals *s, double gpu, double full, int sat_gpu)
{
	/* the energy goal: fewer whenever the GPU is busy, kept when nearly as fast for fewer joules */
	if (c->limit > 1 && ((sat_gpu && c->epoch_saturated) ||
	    (c->cfg.energy && s->energy >= 0 && gpu >= NEAR * full && gpu >= 0)))
		probe_start(c, s, gpu, 0);
	else if (gpu < 0 && s->room > 0 && s->mem_room > 0 && !c->oom_hold && c->limit < c->cfg.max &&
	    s->running >= c->limit)
		probe_start(c, s, gpu, 1);
}

/*
 * Grow while nothing is saturated: by half while far from it, by one near
 * it. Near it, and once a count's worth of tasks turned over (a GPU that
 * reads low then may be tasks between two others, which more tasks do not
 * always help), each step waits for completions to say whether it helped
 * before the next. 1 when it grew.
 */
static int
may_grow(struct ctl *c, const struct ctl_signals *s, double gpu, double proj, double full, int sat_gpu,
    int idle, int waiting)
{
	int near_gpu = proj >= NEAR * full;
	int checked = near_gpu || (s->ended >= (unsigned long long)c->limit && !idle);

	if (gpu >= 0 && s->demand && s->running >= c->limit && c->limit < c->cfg.max && !c->oom_hold &&
	    !sat_gpu && s->room > 0 && !waiting && s->mem_room > 0 &&
	    (c->ceiling == 0 || c->limit < c->ceiling) && (!checked || c->confirm_from == 0)) {
		/* by half; doubled while the GPU is idle and the CPUs far from busy: tasks are starting */
		int step = idle && s->cpu_busy < NEAR * CTL_CPU_FULL ? c->limit :
		    c->limit / 2 > 1 ? c->limit / 2 : 1;

		if (checked) {
			/* one more near saturation; then wait for completions to say whether it helped */
			if (near_gpu)
				step = 1;
			c->confirm_from = c->limit;
			c->confirm_rate = baseline(c, s);
		}
		grow(c, s, gpu, proj, step);
		return 1;
	}
	return 0;
}

int
ctl_step(struct ctl *c, const struct ctl_signals *s)
{
	double full, gpu = gpu_level(c, s, &full), proj;
	int active = s->running - s->paused, revealed = s->running - s->unrevealed;
	int coming = s->unrevealed - s->paused, sat_gpu, idle, waiting;

	account(c, s);
	settle_mark(c, s);
	/*
	 * While the first tasks start together, those not on the GPU yet will
	 * add to it as much as those there, each. Once tasks end and others
	 * start, some are always starting: they replace, not add.
	 */
	proj = gpu;
	if (gpu >= 0 && revealed > 0 && coming > 0 && s->ended == 0)
		proj = gpu * (revealed + coming) / revealed;
	sat_gpu = gpu >= 0 && proj >= full;
	/* far from saturated for a while: what probes found about the old tasks no longer holds */
	c->low = gpu >= 0 && proj < 0.5 * full ? c->low + 1 : 0;
	if (c->low >= LOW_STEPS && c->ceiling) {
		c->ceiling = 0;
		c->chain_rate = 0;
		c->probe_gap = PROBE_GAP;
	}
	idle = gpu >= 0 && gpu < 0.05;
	/*
	 * Before any task ended, a GPU that reads idle while the tasks keep the
	 * CPUs nearly idle says only that they have not reached it yet: wait
	 * for them to show what they do rather than start more blind.
	 */
	waiting = idle && s->ended == 0 && active > 0 && s->ncpu > 0 && s->cpu_busy >= 0 &&
	    s->cpu_busy < NEAR * CTL_CPU_FULL && s->cpu_busy * s->ncpu < START_CPU * active;
	if (!sat_gpu)
		c->epoch_saturated = 0;

	if (cut_for_room(c, s, gpu, revealed))
		return c->limit;
	if (c->phase == CTL_PROBE) {
		if (!s->demand) {
			/* the farm's tail: nothing to compare any more */
			c->phase = CTL_HOLD;
		} else if (epoch_measured(c, s)) {
			probe_end(c, s, gpu);
		}
		return c->limit;
	}

	/*
	 * A step taken near saturation is confirmed by completions once its
	 * epoch is measured: ending tasks no faster than before it, the count
	 * goes back and stays there (more tasks past the knee can be slower).
	 */
	if (c->confirm_from > 0 && epoch_measured(c, s) && step_back(c, s, gpu))
		return c->limit;
	if (may_grow(c, s, gpu, proj, full, sat_gpu, idle, waiting))
		return c->limit;
	/*
	 * A slot still empty while tasks wait is the launcher not yet there
	 * (a task just ended), not what stopped the ramp: the next tick says.
	 */
	if (c->phase == CTL_RAMP && !(s->demand && s->running < c->limit)) {
		c->phase = CTL_HOLD;
		note(c, s, gpu, stop_why(c, s, waiting, sat_gpu));
	}
	/* confirm with completions: fewer when saturated, more when the GPU says nothing */
	if (s->demand && s->now >= c->next_probe && epoch_measured(c, s))
		maybe_probe(c, s, gpu, full, sat_gpu);
	return c->limit;
}
