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
 * Cores a starting task keeps busy, on average, for start-ups to count as
 * CPU work (imports: about one core each) that overlaps well when more run
 * at once. Below it, tasks starting wait on something else (the driver, the
 * MPS server making contexts): on two H200s 24 SGEMM tasks per GPU kept
 * 0.3-0.5 cores each busy while the GPU read idle for 1.5 s; doubling then
 * put all 24 on at once, 1.3x slower than 3 at a time. PyTorch start-ups
 * kept 1.0-1.5 cores each busy on an H100.
 */
#define START_CPU 0.8
/* Past twice as many start-ups as CPUs, CPUs read full this recently still count as full. */
#define CPU_CALM 2.0

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
	c->last_rate = -1;
	c->held = xcalloc((size_t)c->cfg.max + 1, sizeof *c->held);
	c->log = xcalloc(CTL_LOG_MAX, sizeof *c->log);
	c->log[c->nlog++] = (struct ctl_decision){0, c->limit, -1, -1, -1, "start"};
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

/* Has the epoch's settled part seen enough to compare its rate? */
static int
epoch_measured(const struct ctl *c, const struct ctl_signals *s)
{
	unsigned long long need = (unsigned long long)(2 * c->limit > EPOCH_MIN_ENDED ? 2 * c->limit :
	    EPOCH_MIN_ENDED);

	return c->settle_t > 0 && s->ended - c->settle_ended >= need &&
	    s->now - c->settle_t >= EPOCH_MIN_SECONDS;
}

static void
note(struct ctl *c, const struct ctl_signals *s, double gpu, const char *why)
{
	struct ctl_decision d = {s->now - c->t0, c->limit, c->last_rate, gpu, s->cpu_busy, why};

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
	if (n != c->limit) {
		c->limit = n;
		c->epoch_t = s->now;
		c->epoch_ended = s->ended;
		c->epoch_saturated = 1;
		c->settle_t = 0;
	}
	note(c, s, gpu, why);
}

/* Tasks that still fit in device memory; INT_MAX when the device does not say. */
static int
mem_room(const struct ctl *c, const struct ctl_signals *s)
{
	uint64_t per = c->cfg.mem_task, fp = s->footprint;

	if (fp > per)
		per = fp;
	if (c->cfg.mem_min > per)
		per = c->cfg.mem_min;
	per = (uint64_t)((double)per * CTL_MEM_MARGIN);
	if (s->mem_total == 0 || per == 0)
		return INT_MAX;
	if (s->mem_free <= s->mem_pending)
		return 0;
	return (s->mem_free - s->mem_pending) / per > INT_MAX ? INT_MAX :
	    (int)((s->mem_free - s->mem_pending) / per);
}

/* Host memory: 1 while one more task leaves the reserve, -1 below the reserve, 0 in between. */
static int
host_room(const struct ctl *c, const struct ctl_signals *s)
{
	uint64_t reserve = CTL_HOST_RESERVE, per = 0;

	if (s->host_avail == 0)
		return 1;
	if (c->host_start / 20 > reserve)
		reserve = c->host_start / 20;
	if (s->host_avail < reserve)
		return -1;
	/* what one task took, on average, since the start */
	if (s->running > 0 && c->host_start > s->host_avail)
		per = (c->host_start - s->host_avail) / (uint64_t)s->running;
	return s->host_avail - reserve > per ? 1 : 0;
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
	double rate = epoch_rate(c, s);
	int kept = c->probe_up ? rate >= PROBE_UP_KEEP * c->probe_rate :
	    rate >= PROBE_DOWN_KEEP * c->probe_rate;

	c->phase = CTL_HOLD;
	c->up_kept = kept && c->probe_up;
	if (kept) {
		c->last_rate = rate;
		note(c, s, gpu, c->probe_up ? "more tasks ended faster: kept" :
		    "fewer tasks ended as fast: kept");
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
	if (!up && c->ceiling > 0 && c->chain_rate > c->probe_rate)
		c->probe_rate = c->chain_rate;
	c->probe_from = from;
	c->probe_up = up;
	c->phase = CTL_PROBE;
	/* up by half, or double after a step up that helped; down by a quarter */
	to = up ? from + (c->up_kept ? from : from / 2 > 1 ? from / 2 : 1) :
	    from - (from / 4 > 1 ? from / 4 : 1);
	set(c, s, gpu, to, up ? "no GPU signal: trying more" : "GPU saturated: trying fewer");
}

int
ctl_step(struct ctl *c, const struct ctl_signals *s)
{
	double gpu = -1, full = 0, proj;
	int revealed = s->running - s->unrevealed, room, host, sat_gpu, sat_cpu, near, near_gpu, idle, waiting;
	int blind = s->ncpu * 2 > CTL_BLIND_MAX ? s->ncpu * 2 : CTL_BLIND_MAX;

	account(c, s);
	if (c->settle_t == 0 && s->ended >= c->epoch_ended + (unsigned long long)c->limit) {
		c->settle_t = s->now;
		c->settle_ended = s->ended;
	}
	if (c->host_start == 0)
		c->host_start = s->host_avail;
	/*
	 * The GPU's level: SM activity where kernels of many tasks overlap
	 * (MPS), else the busy share. Under MPS without SM activity, a GPU busy
	 * all the time may still take more kernels at once: only a busy share
	 * below full says anything, and then that it is not saturated.
	 */
	if ((c->cfg.mps || s->busy < 0) && s->sm_active >= 0) {
		gpu = s->sm_active;
		full = CTL_SM_FULL;
	} else if (s->busy >= 0 && (!c->cfg.mps || s->busy < CTL_BUSY_FULL)) {
		gpu = s->busy;
		full = CTL_BUSY_FULL;
	}
	/*
	 * While the first tasks start together, those not on the GPU yet will
	 * add to it as much as those there, each. Once tasks end and others
	 * start, some are always starting: they replace, not add.
	 */
	proj = gpu;
	if (gpu >= 0 && revealed > 0 && s->unrevealed > 0 && s->ended == 0)
		proj = gpu * s->running / revealed;
	sat_gpu = gpu >= 0 && proj >= full;
	/*
	 * Busy CPUs stop the count, except while the GPU is idle and there are
	 * fewer than twice as many tasks as CPUs: then the tasks are starting
	 * (imports, contexts), and start-ups that queue for the CPUs still
	 * overlap their waits (seen on an H100: 24 PyTorch tasks started at once
	 * finished 7% sooner than 16 at a time). Once twice as many run, CPUs
	 * near busy, or full in the last CPU_CALM seconds, are saturated still:
	 * a tick or two that read them below full there are the launcher between
	 * tasks (slow on a loaded machine), not room for more start-ups.
	 */
	idle = gpu >= 0 && gpu < 0.05;
	if (s->cpu_busy >= CTL_CPU_FULL)
		c->cpu_full_t = s->now;
	sat_cpu = s->cpu_busy >= CTL_CPU_FULL && !(idle && s->ncpu > 0 && s->running < 2 * s->ncpu);
	if (idle && s->ncpu > 0 && c->limit >= 2 * s->ncpu && s->cpu_busy >= 0 &&
	    (s->cpu_busy >= NEAR * CTL_CPU_FULL || (c->cpu_full_t > 0 && s->now - c->cpu_full_t < CPU_CALM)))
		sat_cpu = 1;
	/*
	 * Before any task ended, a GPU that reads idle while the tasks keep the
	 * CPUs nearly idle says only that they have not reached it yet: wait
	 * for them to show what they do rather than start more blind.
	 */
	waiting = idle && s->ended == 0 && s->running > 0 && s->ncpu > 0 && s->cpu_busy >= 0 &&
	    s->cpu_busy < NEAR * CTL_CPU_FULL && s->cpu_busy * s->ncpu < START_CPU * s->running;
	room = mem_room(c, s);
	host = host_room(c, s);
	if (!sat_gpu)
		c->epoch_saturated = 0;

	/* out of memory: what ran beside the failed task is what fits */
	if (s->oom > 0) {
		c->oom_hold = 1;
		c->oom_ended = s->ended;
		c->phase = CTL_HOLD;
		/* the tasks on the GPU fit; those still starting did not allocate yet */
		set(c, s, gpu, revealed < c->limit ? revealed : c->limit, "out of memory");
		return c->limit;
	}
	if (c->oom_hold && s->ended >= c->oom_ended + (unsigned long long)c->limit)
		c->oom_hold = 0;
	if (host < 0 && s->running > 1) {
		set(c, s, gpu, s->running - 1, "host memory low");
		return c->limit;
	}
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
	if (c->confirm_from > 0 && epoch_measured(c, s)) {
		double rate = epoch_rate(c, s);
		int from = c->confirm_from;

		c->confirm_from = 0;
		if (c->confirm_rate > 0 && rate < PROBE_UP_KEEP * c->confirm_rate) {
			set(c, s, gpu, from, "more tasks ended no faster: back");
			c->ceiling = from;
			c->next_probe = s->now + c->probe_gap;
			return c->limit;
		}
	}
	/* grow while nothing is saturated: by half while far from it, by one near it */
	/* until one task has shown its footprint, memory is a guess: a bounded one */
	if (s->footprint == 0 && c->cfg.mem_task == 0 && room > blind - c->limit)
		room = blind - c->limit;
	near_gpu = proj >= NEAR * full;
	near = near_gpu || (!idle && s->cpu_busy >= NEAR * CTL_CPU_FULL);
	if (gpu >= 0 && s->demand && s->running >= c->limit && c->limit < c->cfg.max && !c->oom_hold &&
	    !sat_gpu && !sat_cpu && !waiting && host > 0 && room > 0 && (c->ceiling == 0 || c->limit < c->ceiling) &&
	    (!near_gpu || c->confirm_from == 0)) {
		/* by half; doubled while the GPU is idle and the CPUs far from busy: tasks are starting */
		int step = idle && s->cpu_busy < NEAR * CTL_CPU_FULL ? c->limit :
		    c->limit / 2 > 1 ? c->limit / 2 : 1;

		if (near)
			step = 1;
		/* busy CPUs let start-ups in only up to twice their number */
		if (s->cpu_busy >= CTL_CPU_FULL && s->ncpu > 0 && c->limit + step > 2 * s->ncpu)
			step = 2 * s->ncpu - c->limit > 1 ? 2 * s->ncpu - c->limit : 1;
		if (near_gpu) {
			/* one more, then wait for completions to say whether it helped */
			c->confirm_from = c->limit;
			c->confirm_rate = epoch_measured(c, s) ? epoch_rate(c, s) : -1;
		}
		if (step > room)
			step = room;
		if (c->ceiling > 0 && c->limit + step > c->ceiling)
			step = c->ceiling - c->limit;
		c->phase = CTL_RAMP;
		set(c, s, gpu, c->limit + step, proj < 0.05 ? "GPU idle" : "GPU not saturated");
		return c->limit;
	}
	/*
	 * A slot still empty while tasks wait is the launcher not yet there
	 * (a task just ended), not what stopped the ramp: the next tick says.
	 */
	if (c->phase == CTL_RAMP && !(s->demand && s->running < c->limit)) {
		/* the ramp stops: say what stopped it, once */
		c->phase = CTL_HOLD;
		note(c, s, gpu, !s->demand ? "no tasks waiting" :
		    waiting ? "tasks starting, CPUs idle: waiting for the GPU" :
		    c->limit >= c->cfg.max ? "at the cap" : c->confirm_from ? "seeing whether one more helped" :
		    c->ceiling && c->limit >= c->ceiling ?
		    "more did not help" : sat_gpu ? "GPU saturated" :
		    sat_cpu ? "CPUs saturated" : host <= 0 ? "host memory" : room <= 0 ? "device memory" :
		    c->oom_hold ? "after out of memory" : "no GPU signal");
	}
	/* confirm with completions: fewer when saturated, more when the GPU says nothing */
	if (!s->demand || s->now < c->next_probe || !epoch_measured(c, s))
		return c->limit;
	if (sat_gpu && c->epoch_saturated && c->limit > 1)
		probe_start(c, s, gpu, 0);
	else if (gpu < 0 && !sat_cpu && host > 0 && room > 0 && !c->oom_hold && c->limit < c->cfg.max &&
	    s->running >= c->limit)
		probe_start(c, s, gpu, 1);
	return c->limit;
}
