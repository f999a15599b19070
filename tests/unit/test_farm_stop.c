/*
 * test_farm_stop: which task ends a stop of the farm accounts for
 * (farm/stop.h), on a clock the test drives: the same answers whatever the
 * machine's load.
 */
#include "tap.h"
#include "farm/stop.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#define KILLED(sig) W_EXITCODE(0, (sig))
#define EXITED(code) W_EXITCODE((code), 0)

static const char *
name(enum stop_verdict v)
{
	return v == STOP_RECORD ? "record" : v == STOP_DROP ? "drop" : "wait";
}

/* The verdict at `now` for an end at 100 s, the farm told to stop at stop_at. */
static const char *
at(int status, double stop_at, double now, double *until)
{
	*until = -1;
	return name(stop_verdict(status, 100.0, stop_at, now, until));
}

static void
test_what_looks_like_a_stop(void)
{
	static const int stops[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGKILL};
	static const int own[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGUSR2, SIGPIPE, SIGXFSZ};

	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
		ok(stop_like(KILLED(stops[i])), "killed by %s: a stop's end", sigabbrev_np(stops[i]));
		ok(stop_like(EXITED(128 + stops[i])), "exit %d (a shell's for SIG%s): a stop's end",
		    128 + stops[i], sigabbrev_np(stops[i]));
	}
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		ok(!stop_like(KILLED(own[i])), "killed by %s: the task's own end", sigabbrev_np(own[i]));
		ok(!stop_like(EXITED(128 + own[i])), "exit %d: the task's own", 128 + own[i]);
	}
	ok(!stop_like(EXITED(0)) && !stop_like(EXITED(1)) && !stop_like(EXITED(128)) &&
	    !stop_like(EXITED(255)), "exit 0, 1, 128, 255: the task's own");
}

static void
test_verdicts(void)
{
	double until;

	is_str(at(EXITED(0), 0, 100, &until), "record", "a task that succeeded: recorded at once");
	is_str(at(EXITED(0), 90, 100, &until), "record", "also while the farm stops");
	is_str(at(EXITED(3), 100.5, 100, &until), "record", "a failure of its own: recorded");
	is_str(at(KILLED(SIGSEGV), 100.5, 100, &until), "record", "a crash: recorded");

	/* killed while the farm stops, or just before it was told to */
	is_str(at(KILLED(SIGTERM), 50, 100, &until), "drop", "TERM while stopping: the stop's, unrecorded");
	is_str(at(KILLED(SIGKILL), 99.999, 100, &until), "drop", "KILL just after the stop: unrecorded");
	is_str(at(KILLED(SIGTERM), 100, 100, &until), "drop", "TERM at the same instant: unrecorded");
	is_str(at(KILLED(SIGTERM), 100 + STOP_GRACE, 200, &until), "drop",
	    "the farm told to stop STOP_GRACE s after the task died: still the stop's");
	is_str(at(EXITED(143), 101, 101, &until), "drop", "a shell's exit 143, then the stop: unrecorded");

	/* killed, the farm not told (yet) */
	is_str(at(KILLED(SIGTERM), 0, 100, &until), "wait", "TERM, no stop yet: the end waits");
	ok(until == 100 + STOP_GRACE, "until STOP_GRACE after it died (%.3f)", until);
	is_str(at(KILLED(SIGTERM), 0, 100 + STOP_GRACE - 0.001, &until), "wait",
	    "still waiting a moment before the grace is over");
	is_str(at(KILLED(SIGTERM), 0, 100 + STOP_GRACE, &until), "record",
	    "no stop within the grace: the task died of the signal on its own, recorded (as parallel)");
	is_str(at(KILLED(SIGINT), 0, 500, &until), "record", "asked late (a busy loop): the same answer");
	is_str(at(KILLED(SIGTERM), 100 + STOP_GRACE + 0.001, 100 + STOP_GRACE + 0.001, &until), "record",
	    "a stop that came after the grace is not this task's: recorded");
	is_str(at(KILLED(SIGTERM), 100 + STOP_GRACE + 0.001, 100.5, &until), "record",
	    "whatever the clock when asked: the times decide");
}

/* The loop asks again when the hold is over or a stop comes: each path settles it once. */
static void
test_hold_then_settle(void)
{
	double until, now = 100;
	enum stop_verdict v = stop_verdict(KILLED(SIGHUP), 100, 0, now, &until);
	int asks = 0;

	/* the loop wakes every 0.25 s; the farm's own signal is read at 101.3 */
	while (v == STOP_WAIT && asks < 100) {
		now += 0.25;
		v = stop_verdict(KILLED(SIGHUP), 100, now >= 101.3 ? 101.3 : 0, now, &until);
		asks++;
	}
	is_str(name(v), "drop", "HUP to the task, then to gpupack 1.3 s later: unrecorded");
	is_int(asks, 6, "settled on the first wake after the farm's signal");

	now = 100;
	v = stop_verdict(KILLED(SIGTERM), 100, 0, now, &until);
	for (asks = 0; v == STOP_WAIT && asks < 100; asks++) {
		now += 0.25;
		v = stop_verdict(KILLED(SIGTERM), 100, 0, now, &until);
	}
	is_str(name(v), "record", "TERM to the task alone: recorded once the grace is over");
	is_int(asks, (int)(STOP_GRACE / 0.25), "after STOP_GRACE, not before");
}

/* A farm short of processes: it waits while tasks run, and gives up only with none running. */
static void
test_shortage(void)
{
	double now = 1000, since = 1000, next;
	int n;

	ok(stop_shortage(EAGAIN) && stop_shortage(EMFILE) && stop_shortage(ENFILE) && stop_shortage(ENOMEM),
	    "fork's EAGAIN, EMFILE, ENFILE, ENOMEM: shortages that pass");
	ok(!stop_shortage(ENOSPC) && !stop_shortage(EACCES) && !stop_shortage(ENOENT) && !stop_shortage(0),
	    "a full disk, a permission, a missing file: not");
	ok(stop_backoff(1, since, now, 0) == now + 0.05, "the first retry after 50 ms");
	ok(stop_backoff(2, since, now, 0) == now + 0.1 && stop_backoff(3, since, now, 0) == now + 0.2,
	    "then backing off: 100 ms, 200 ms");
	ok(stop_backoff(30, since, now, 0) == now + 1.0, "at most a second apart");

	/* tasks running: never gives up, however long */
	ok(stop_backoff(100000, since, now + 86400, 1) > 0, "with tasks running it waits a day too");

	/* none running: tries for STOP_SHORT_WAIT s, driven here in simulated time */
	for (n = 1, now = since; (next = stop_backoff(n, since, now, 0)) > 0 && n < 10000; n++)
		now = next;
	ok(now >= since + STOP_SHORT_WAIT && now < since + STOP_SHORT_WAIT + 1.0,
	    "with none running it gives up after STOP_SHORT_WAIT s (%.2f s)", now - since);
	ok(n > 50 && n < 80, "trying about once a second by then (%d tries)", n);
}

int
main(void)
{
	test_what_looks_like_a_stop();
	test_verdicts();
	test_hold_then_settle();
	test_shortage();
	return done_testing();
}
