/*
 * health: MPS faults of every kind, handled as one. A device's control
 * daemon that died, one that no longer answers within the time limit (a
 * hung daemon, or a daemon waiting on a server that hung), and a server
 * that died under our tasks all leave the same thing behind: tasks whose
 * MPS is gone, and new tasks that would run without MPS (the CUDA runtime
 * quietly runs a client without the daemon it was told about, and --sm and
 * --mem no longer hold). So, whatever the kind:
 *  - the device takes no new task (a task starts only after its daemon's
 *    pid is seen alive, and never while the device is down);
 *  - its running tasks are ended and run again without spending their
 *    --retries (queue_rerun_own);
 *  - what is left of the daemon is ended (pids checked by start time) and
 *    it is started again, at most FARM_MPS_RESTARTS times per device in a
 *    run ($GPUPACK_MPS_RESTARTS); past that the run stops with one line,
 *    leaving the tasks it ended unrecorded for --resume.
 * A fault is noticed when a task on the device fails (the daemon is asked
 * then), and by asking the daemon every FARM_MPS_PROBE seconds while tasks
 * run there (a hung daemon fails no task: its clients just wait). A
 * client's own fatal fault (the server stays up) is finish.c's suspects:
 * where the server could not say whose fault it was, every client it hit
 * runs again alone. Seen on the lent H100s and H200s (driver 580), a fault
 * is contained: it ends its own client only, the others run on. So an
 * attempt that failed with a fault beside others is held FAULT_HOLD seconds
 * first: when others that ran beside it run on, the fault was its own and
 * it fails as any other (--retries); only when it took them all does the
 * run-alone search follow. (That search, run for a contained fault, cost
 * a farm of 32 PyTorch trainings at -j 16 the draining of its device and a
 * lone rerun of each faulting task: 37.8 s where GNU parallel took 31.7-34.9.)
 * Where the server stays in FAULT with tasks still on it (clients the fault
 * stopped, that never leave), they are ended and run again as for any
 * fault of the device (farm_mps_stuck). Clients that hang on a server that
 * stays ACTIVE after a contained fault (seen on an H200: no CPU, no exit;
 * the fault in the server's log or only in the failed task's stderr: a
 * device-side assert on an H200 left no line there) are found by their CPU
 * time: a client there before the fault that used
 * none for FARM_FAULT_HANG seconds since is ended and run again, no
 * --retries spent (hang_check).
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/state.h"
#include "farm/trace.h"
#include "farm/verdict.h"
#include "util/err.h"
#include "util/host.h"
#include "util/knob.h"
#include "util/str.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define LOST_WHY "MPS fault"
#define HUNG_WHY "hung beside an MPS fault"

static int
restart_limit(void)
{
	const char *v = getenv("GPUPACK_MPS_RESTARTS");
	long n;

	if (v && *v && parse_long(v, 0, 1000, &n) == 0)
		return (int)n;
	err_clear();
	return FARM_MPS_RESTARTS;
}

/* g's MPS failed (why): end its tasks, restart its daemon, or stop the run. */
static void
fault(struct farm *f, struct group *g, const char *why, double now)
{
	int lost = 0, limit = restart_limit();

	g->h.mps_down = 1;
	/* its clients: nothing to ask their daemon for, and they may run without MPS now */
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		/* the attempt whose failure told us (exited, not finished yet) counts too */
		if (r->g != g || !r->task || r->lost)
			continue;
		r->lost = LOST_WHY;
		lost++;
		if (r->exited)
			continue;
		r->terminated = 1;
		kill(-r->pid, SIGKILL);
	}
	if (f->stop > 0)
		return;
	if (g->h.mps_restarts >= limit) {
		err_set(EXIT_ENV, "MPS on %s: %s, after %d restart%s of its daemon; stopping the run "
		    "(--resume runs the tasks it took)", g->t.uuid, why, g->h.mps_restarts,
		    g->h.mps_restarts == 1 ? "" : "s");
		halt_fatal(f, now);
		return;
	}
	if (farm_mps_restart(g) < 0) {
		err_prefix("MPS on %s: %s; restarting its daemon", g->t.uuid, why);
		halt_fatal(f, now);
		return;
	}
	g->h.mps_restarts++;
	g->h.mps_down = 0;
	g->h.fault_mute = 0;
	g->h.mps_probe_at = now + FARM_MPS_PROBE;
	if (g->mps_ours)
		guard_mps_started(&f->guard, g->t.uuid);
	warnx_("MPS on %s: %s; daemon restarted (%d of %d), %d task%s it took run%s again", g->t.uuid,
	    why, g->h.mps_restarts, limit, lost, lost == 1 ? "" : "s", lost == 1 ? "s" : "");
}

/* FARM_FAULT_GRACE seconds, or the knob's */
static double
grace(void)
{
	long s = knob(KNOB_FARM_FAULT_GRACE);

	return s > 0 ? (double)s : FARM_FAULT_GRACE;
}

/* A fault its server logged that the farm has not seen yet (since the oldest running task's start). */
static void
look_for_fault(const struct farm *f, struct group *g, double now)
{
	farm_mps_fault_news(g, farm_log_since(f, g), now);
}

/*
 * A probe failed (rc, why): 1 when that is a daemon busy with a fault of
 * FARM_FAULT_GRACE seconds ago or less (alive, silent), to be asked again
 * later, said once per fault; 0 when it is a fault of the device.
 */
static int
busy_with_fault(const struct farm *f, struct group *g, int rc, const char *why, double now)
{
	if (rc != -2)
		return 0;
	look_for_fault(f, g, now);
	if (g->h.fault_last == 0 || now - g->h.fault_last > grace())
		return 0;
	/* once for a fault and what follows it within the grace */
	if (g->h.slow_said == 0 || g->h.fault_last - g->h.slow_said > grace()) {
		g->h.slow_said = g->h.fault_last;
		warnx_("MPS on %s: %s %.0f s after a fault: taken as busy with it; restarted only if "
		    "still silent %.0f s after the fault", g->t.uuid, why, now - g->h.fault_last, grace());
	}
	return 1;
}

static double
interval(const struct group *g, double now)
{
	return g->h.mps_server == 0 && now < g->h.mps_fast_until ? FARM_MPS_PROBE_FAST : FARM_MPS_PROBE;
}

static double
hang_after(void)
{
	long s = knob(KNOB_FARM_FAULT_HANG);

	return s > 0 ? (double)s : FARM_FAULT_HANG;
}

/*
 * After a contained fault on g: its clients from before it that used no CPU
 * for hang_after() seconds since are hung by it: ended, run again.
 */
static void
hang_check(struct farm *f, struct group *g, double now)
{
	int watched = 0, hung = 0;

	if (g->h.hang_from == 0)
		return;
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];
		double cpu, wait;

		/* and those started in the moments after it (on an H200 one started then never connected) */
		if (r->g != g || !r->task || r->exited || r->lost || r->terminated ||
		    r->start >= g->h.hang_from + FARM_FAULT_QUIET)
			continue;
		/* stopped at the GPU's door: no CPU, by our doing; watched afresh once it goes on */
		if (r->paused) {
			watched++;
			r->m.hang_t = 0;
			continue;
		}
		if (host_task_cpu(r->pid, &cpu, &wait) < 0)
			continue;
		watched++;
		if (r->m.hang_t == 0 || cpu > r->m.hang_cpu + 0.01) {
			r->m.hang_cpu = cpu;
			r->m.hang_t = now;
			continue;
		}
		if (now - r->m.hang_t < hang_after())
			continue;
		/*
		 * Signalled, not through the server: on an H200 (fault farm k1) a hung
		 * client's terminate_client held the daemon 30 s, and gpupack's every
		 * call to it meanwhile, so the farm stood still; the server takes a
		 * client's death as its exit. A hung client has no work to cut short.
		 */
		r->lost = HUNG_WHY;
		trace_event(now, "hung seq=%llu pid=%d: no CPU for %.0f s beside a fault", r->task->seq, (int)r->pid,
		    now - r->m.hang_t);
		halt_signal(r, now);
		hung++;
		watched--;
	}
	if (hung > 0)
		warnx_("MPS on %s: %d task%s that ran beside a fault used no CPU for %.0f s: hung by it; "
		    "ended, run%s again", g->t.uuid, hung, hung == 1 ? "" : "s", hang_after(),
		    hung == 1 ? "s" : "");
	/* kept for those that start in the moments after the fault */
	if ((watched == 0 && now - g->h.hang_from > FARM_FAULT_QUIET) || now - g->h.hang_from > FARM_FAULT_WATCH)
		g->h.hang_from = 0;
}

/*
 * A fault on g: tasks stopped at the GPU's door (-j auto) are let go, and
 * none is stopped there until FARM_FAULT_GRACE seconds after it. On an H200
 * (fault farm f2) the server tore an illegal address's 30 clients down only
 * once each had answered; the clients stopped at the door never did, so the
 * server stayed in FAULT, the others spun beside it, and nothing ended for
 * 60 s (GNU parallel's farm, with nothing stopped, lost its 14 in 2 s).
 */
static void
door_check(struct farm *f, struct group *g, double now)
{
	int paused = 0, woken = 0;

	for (int i = 0; i < f->nr; i++)
		paused += f->r[i].g == g && f->r[i].task && f->r[i].paused;
	if (paused > 0)
		look_for_fault(f, g, now);
	if (!health_door_shut(g, now))
		return;
	for (int i = 0; i < f->nr; i++)
		if (f->r[i].g == g && f->r[i].task && f->r[i].paused) {
			auto_wake(&f->r[i]);
			woken++;
		}
	if (woken > 0)
		warnx_("MPS on %s: a fault: %d task%s waiting stopped at the GPU's door let go (the "
		    "server tears a fault down only once every client answers)", g->t.uuid, woken,
		    woken == 1 ? "" : "s");
}

void
health_check(struct farm *f, double now)
{
	char why[256];
	int rc;

	/*
	 * Also while the farm stops: the stop waits for the running tasks, and
	 * a client hung beside a fault, or on a daemon that hung, never ends by
	 * itself (fault() ends them then, and restarts nothing)
	 */
	for (int i = 0; i < f->ng; i++) {
		struct group *g = &f->g[i];

		if (!g->mps || g->running == 0 || now < g->h.mps_probe_at)
			continue;
		door_check(f, g, now);
		hang_check(f, g, now);
		if (farm_mps_stuck(g, now)) {
			snprintf(why, sizeof why, "its server stayed in FAULT for %.0f s with %d task%s on it",
			    now - g->h.fault_at, g->running, g->running == 1 ? "" : "s");
			g->h.fault_at = 0;
			fault(f, g, why, now);
		} else if ((rc = farm_mps_probe(g, why, sizeof why)) < 0 && !busy_with_fault(f, g, rc, why, now))
			fault(f, g, why, now);
		g->h.mps_probe_at = now + interval(g, now);
	}
}

void
health_started(struct group *g, double now)
{
	if (!g->mps || g->h.mps_server != 0)
		return;
	g->h.mps_fast_until = now + FARM_MPS_FAST_FOR;
	if (g->h.mps_probe_at > now + FARM_MPS_PROBE_FAST)
		g->h.mps_probe_at = now + FARM_MPS_PROBE_FAST;
}

double
health_next(const struct farm *f)
{
	double next = 0;

	for (int i = 0; i < f->ng; i++) {
		const struct group *g = &f->g[i];

		if (g->mps && g->running > 0 && (next == 0 || g->h.mps_probe_at < next))
			next = g->h.mps_probe_at;
	}
	return next;
}

int
health_ready(struct farm *f, struct group *g, double now)
{
	/* cheap (its /proc entry): a task must not start where it would run without MPS */
	char why[96];

	if (!g->mps || g->h.mps_down)
		return !g->h.mps_down;
	if (!farm_mps_alive(g, why, sizeof why))
		fault(f, g, why, now);
	return !g->h.mps_down && f->stop == 0;
}

int
health_task_failed(struct farm *f, struct run *r, double now)
{
	char why[256];
	struct group *g = r->g;
	int rc;

	if (!g->mps || r->lost)
		return r->lost != NULL;
	/* its server logged a fault since it started: a silent daemon now is busy with it */
	if (farm_mps_fault(g, r->m.mps_off)) {
		trace_event(now, "fault logged gpu=%d (seen at input %llu's end)", g->gpu_index, r->task->seq);
		g->h.fault_last = now;
	}
	/* the last two failures here: whether a fault took others too (health_fault_contained) */
	g->h.fail_seq[1] = g->h.fail_seq[0];
	g->h.fail_at[1] = g->h.fail_at[0];
	g->h.fail_seq[0] = r->task->seq;
	g->h.fail_at[0] = r->ended_at > 0 ? r->ended_at : now;
	g->h.mps_probe_at = now + interval(g, now);
	/* the failed attempt is among what the fault took (fault() marks it) */
	if ((rc = farm_mps_probe(g, why, sizeof why)) < 0 && !busy_with_fault(f, g, rc, why, now))
		fault(f, g, why, now);
	return r->lost != NULL;
}

/* Its clients from before now are watched for a hang (hang_check). */
static void
watch_hang(struct farm *f, struct group *g, double now)
{
	g->h.hang_from = now;
	for (int i = 0; i < f->nr; i++)
		f->r[i].m.hang_t = f->r[i].g == g ? 0 : f->r[i].m.hang_t;
}

int
health_others(const struct farm *f, const struct run *r)
{
	const struct group *g = r->g;
	double at = r->ended_at > 0 ? r->ended_at : r->start;
	int others = 0;

	/* the others on its server: running, or ended and not finished yet (held, as it may be) */
	for (int i = 0; i < f->nr; i++)
		others += &f->r[i] != r && f->r[i].g == g && f->r[i].task;
	/*
	 * and another's failure there beside it a moment before, decided already: as the farm
	 * ends its tasks no end waits, so of a culprit and its victim reaped in one pass the
	 * second found none beside it and was recorded failed (sequence 484389, --halt now)
	 */
	for (int k = 0; k < 2; k++) {
		int running = 0;

		if (g->h.fail_at[k] <= 0 || g->h.fail_seq[k] == r->task->seq || g->h.fail_at[k] < r->start ||
		    g->h.fail_at[k] < at - FAULT_HOLD)
			continue;
		for (int i = 0; i < f->nr; i++)
			running |= &f->r[i] != r && f->r[i].g == g && f->r[i].task &&
			    f->r[i].task->seq == g->h.fail_seq[k];
		others += !running;
	}
	return others;
}

void
health_fault_held(struct farm *f, struct run *r, double now)
{
	watch_hang(f, r->g, now);
}

/*
 * From the fault itself, whichever part of the farm read it first: a door
 * shut only once door_check ran let -j auto stop a task there in between
 * (make check saw one stopped 0.5 s after the fault was logged).
 */
int
health_door_shut(const struct group *g, double now)
{
	return g->h.fault_last > 0 && now - g->h.fault_last <= grace();
}

void
health_fault_seen(struct group *g, double now)
{
	if (g->h.fault_at == 0) {
		g->h.fault_at = now;
		trace_event(now, "fault seen gpu=%d", g->gpu_index);
	}
	g->h.fault_last = now;
}

void
health_fault_said(struct farm *f, struct run *r, double now)
{
	if (!r->g->mps)
		return;
	r->g->h.fault_said = r->g->h.fault_last = now;
	trace_event(now, "fault said seq=%llu pid=%d gpu=%d", r->task->seq, (int)r->pid, r->g->gpu_index);
	/* also while the farm stops: a hung client would hold the stop for good */
	watch_hang(f, r->g, now);
}

int
health_fault_contained(const struct farm *f, const struct run *r)
{
	/* when it failed: when its end was held to look, or when it ended (nobody beside it then) */
	double at = r->m.fault_t > 0 ? r->m.fault_t : r->ended_at;

	(void)f;
	/* another client's failure within FAULT_HOLD of its own: the fault took others */
	for (int i = 0; i < 2; i++)
		if (r->g->h.fail_seq[i] != r->task->seq && r->g->h.fail_at[i] >= at - FAULT_HOLD)
			return 0;
	return 1;
}

int
health_fault_first(struct run *r, double now)
{
	struct group *g = r->g;

	/* the first failure to show a fault opens its episode; the others within it are its victims */
	if (g->h.ep_at == 0 || now - g->h.ep_at > FAULT_EPISODE) {
		g->h.ep_at = now;
		g->h.ep_seq = r->task->seq;
	}
	return g->h.ep_seq == r->task->seq;
}
