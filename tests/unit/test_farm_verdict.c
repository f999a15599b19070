/*
 * test_farm_verdict: the one decision on how an attempt ends
 * (farm/verdict.h), each rule on its own and where rules meet, on a clock
 * the test drives. No process, file or farm: facts in, a verdict out.
 */
#include "tap.h"
#include "farm/cost.h"
#include "farm/stop.h"
#include "farm/verdict.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#define KILLED(sig) W_EXITCODE(0, (sig))
#define EXITED(code) W_EXITCODE((code), 0)

static const struct end_farm running = {0, 0, 0};

/* An attempt that ended at 100 s with status, in a farm running (no stop). */
static struct end_facts
ended(int status)
{
	return (struct end_facts){.status = status, .ended = 100, .culprit = -1};
}

static const char *
v(const struct end_facts *x, const struct end_farm *s, double now)
{
	return end_name(end_decide(x, s, now).v);
}

static void
test_plain_ends(void)
{
	struct end_facts x = ended(EXITED(0));
	struct end_farm three = {0, 0, 3};
	struct end_decision d = end_decide(&x, &running, 100);

	ok(d.v == END_RECORD && d.ok, "exit 0: recorded, done");
	x = ended(EXITED(1));
	d = end_decide(&x, &running, 100);
	ok(d.v == END_RECORD && !d.ok, "exit 1, no --retries: recorded, failed");
	is_str(v(&x, &three, 100), "retry", "exit 1, --retries 3: again");
	x.attempts = 2;
	is_str(v(&x, &three, 100), "record", "its third try failed: recorded (parallel's N tries in all)");
	x = ended(KILLED(SIGSEGV));
	is_str(v(&x, &three, 100), "retry", "a crash of its own (SIGSEGV): a failure like any");
	x = ended(KILLED(SIGTERM));
	x.timed_out = x.terminated = 1;
	is_str(v(&x, &three, 100), "retry", "--timeout ended it: a failure, --retries apply");
	x = ended(EXITED(0));
	x.skipped = 1;
	ok(!end_ok(&x), "skipped by a perl string: not a success (parallel logs -2)");
	is_str(v(&x, &running, 100), "record", "and recorded");
}

static void
test_stops(void)
{
	struct end_facts x = ended(KILLED(SIGTERM));
	struct end_farm told = {1, 100.5, 3}, later = {1, 103, 3};
	struct end_decision d;

	/* rule 1: a second signal or --halt now ended it */
	x.stopped = x.terminated = 1;
	d = end_decide(&x, &told, 100);
	ok(d.v == END_UNRECORDED && d.print && d.dropped, "a second signal ended it: unrecorded, output shown");
	x.stopped = 0;
	x.halted = 1;
	d = end_decide(&x, &told, 100);
	ok(d.v == END_UNRECORDED && !d.print && d.dropped, "--halt now ended it: unrecorded, nothing shown");
	/* issue 42 defect 8: an exit 0 beside the stop is the task's own end */
	x.status = EXITED(0);
	d = end_decide(&x, &told, 100);
	ok(d.v == END_RECORD && d.ok, "--halt now, but it exited 0 at that instant: recorded done");
	x.halted = 0;
	x.stopped = 1;
	d = end_decide(&x, &told, 100);
	ok(d.v == END_RECORD && d.ok, "a second Ctrl-C, but it exited 0 by itself: recorded done");
	x.status = EXITED(1);
	is_str(v(&x, &told, 100), "unrecorded", "a second Ctrl-C and it failed: the stop's (MPS ends a client with 1)");
	/* rule 2: killed from outside */
	x = ended(KILLED(SIGTERM));
	d = end_decide(&x, &running, 100.5);
	ok(d.v == END_WAIT && d.hold == HOLD_STOP && d.until == 100 + STOP_GRACE,
	    "SIGTERM from outside, no stop yet: waits till %g (%g)", 100 + STOP_GRACE, d.until);
	is_str(v(&x, &running, 100 + STOP_GRACE), "record", "no stop came: its own death, recorded");
	d = end_decide(&x, &told, 100.6);
	ok(d.v == END_UNRECORDED && d.print && d.dropped, "the farm was told to stop 0.5 s after: the stop's");
	is_str(v(&x, &later, 103), "record", "told 3 s after its end: its own death, recorded (no retry: stopping)");
	is_str(v(&x, &(struct end_farm){0, 0, 3}, 103), "retry", "no stop at all after 3 s: --retries apply");
	x = ended(EXITED(130));
	is_str(v(&x, &told, 100.6), "unrecorded", "exit 130 (a shell's SIGINT) beside a stop: the stop's");
}

static void
test_nodes(void)
{
	struct end_facts x = ended(KILLED(SIGKILL));
	struct end_decision d;
	struct end_farm past = {0, 0, 0};

	x.node_kill = 1;
	x.was_held = 0;
	d = end_decide(&x, &past, 100 + STOP_GRACE);
	ok(d.v == END_WAIT && d.hold == HOLD_NODE && d.until > 100 + STOP_GRACE,
	    "farm over nodes, killed, we are not stopping yet: its end waits once");
	x.was_held = 1;
	is_str(v(&x, &past, 105), "record", "held once already: its own death");
	x = ended(EXITED(0));
	x.node_unrecorded = 1;
	d = end_decide(&x, &running, 100);
	ok(d.v == END_UNRECORDED && d.print && !d.dropped, "our records no longer count: unrecorded, shown");
}

static void
test_faults(void)
{
	struct end_facts x = ended(EXITED(1));
	struct end_farm s = {0, 0, 1}, stopping = {1, 50, 1};
	struct end_decision d;

	x.mps = x.fault = 1;
	x.others = 3;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_WAIT && d.hold == HOLD_FAULT && d.until == 100 + FAULT_HOLD,
	    "a fault beside 3 others: waits %g s to see what it took", FAULT_HOLD);
	x.fault = 0;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_WAIT && d.hold == HOLD_LATE && d.until == 100 + FAULT_LATE,
	    "a failure beside others, no fault logged yet: waits %g s for a late one", FAULT_LATE);
	x.fault_held = 100;
	is_str(v(&x, &s, 101), "record", "no fault came: its own failure");
	x.fault = x.first = x.contained = 1;
	/* only its own error shows the fault: it waits for the server's word, FAULT_LOG s from its first wait */
	d = end_decide(&x, &s, 102);
	ok(d.v == END_WAIT && d.hold == HOLD_LOG && d.until == 100 + FAULT_LOG,
	    "a fault only its own error shows: waits for the server's log until %g s after its first wait", FAULT_LOG);
	is_str(v(&x, &s, 100 + FAULT_LOG), "record", "no word from the server by then: a fault that took none beside it, charged");
	x.culprit = 0;
	d = end_decide(&x, &s, 103);
	ok(d.v == END_SUSPECT && !d.alone, "the server's log came, naming another: a victim (fault farm f5's neighbour)");
	x.culprit = -1;
	x.logged = 1;
	is_str(v(&x, &s, 102), "record", "the first to show a fault that took none beside it: its own, charged");
	x.contained = 0;
	d = end_decide(&x, &s, 102);
	ok(d.v == END_SUSPECT && d.alone, "the first, and the fault took others too: again alone, --retries untouched");
	x.first = 0;
	x.contained = 1;
	d = end_decide(&x, &s, 102);
	ok(d.v == END_SUSPECT && !d.alone, "another showed the fault first: a victim, again beside the others");
	x.fault_retries = 1;
	d = end_decide(&x, &s, 102);
	ok(d.v == END_SUSPECT && d.alone, "a victim a second time: alone (the culprit may have been taken for one)");
	x.fault_retries = FARM_FAULT_RETRIES;
	is_str(v(&x, &s, 102), "record", "fault reruns spent: its --retries decide");
	x = ended(EXITED(1));
	x.mps = x.fault = x.first = x.contained = 1;
	x.others = 0;
	is_str(v(&x, &s, 100), "record", "nobody beside it: no wait, its own");
	x.others = 2;
	x.alone = 1;
	x.contained = 0;
	is_str(v(&x, &s, 100), "record", "a suspect's lone rerun faulted: the culprit");
	x.alone = 0;
	d = end_decide(&x, &stopping, 100);
	ok(d.v == END_WAIT && d.hold == HOLD_FAULT, "the farm is stopping: it still waits to see what the fault took");
	x.fault_held = 100;
	x.logged = 1;
	is_str(v(&x, &stopping, 102), "unrecorded", "then no rerun while the farm stops, and a suspect is "
	    "not charged: left for --resume");
	{
		struct end_farm ending = {2, 50, 1};

		x.fault_held = 0;
		is_str(v(&x, &ending, 100), "unrecorded", "a second signal: no wait, the suspect left for --resume");
		x.fault_held = 100;
	}
	x.culprit = 1;
	is_str(v(&x, &stopping, 100), "record", "the farm is stopping: the named culprit is charged");
	x.culprit = -1;
	/* where the server's log names the culprit, that decides */
	x = ended(EXITED(1));
	x.mps = x.fault = 1;
	x.others = 3;
	x.fault_held = 100;
	x.culprit = 1;
	is_str(v(&x, &s, 102), "record", "the log names it the culprit: charged at once, even beside victims");
	x.culprit = 0;
	x.first = 1;
	x.contained = 1;
	d = end_decide(&x, &s, 102);
	ok(d.v == END_SUSPECT && !d.alone, "the log names another: a victim, again beside the others, "
	    "however it looked");
	x = ended(EXITED(0));
	x.mps = x.fault = 1;
	x.others = 2;
	is_str(v(&x, &s, 100), "record", "exit 0 beside a fault: done");
	/* --timeout ended it beside others before any fault showed (fault farm sequence 82037: a
	 * victim that would have failed 3 s later, the server's line 0.4 s late) */
	x = ended(KILLED(SIGTERM));
	x.timed_out = x.terminated = 1;
	x.mps = 1;
	x.others = 2;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_WAIT && d.hold == HOLD_LATE && d.until == 100 + FAULT_LATE,
	    "--timeout beside others, no fault yet: waits %g s for a late one", FAULT_LATE);
	x.fault_held = 100;
	is_str(v(&x, &s, 100 + FAULT_LATE), "record", "no fault came: its timeout is its own");
	x.fault = x.logged = 1;
	x.culprit = 0;
	d = end_decide(&x, &s, 100 + FAULT_LATE);
	ok(d.v == END_SUSPECT && !d.alone, "a fault came, the log naming another: a victim, again, not charged");
	x = ended(KILLED(SIGTERM));
	x.terminated = 1;
	x.mps = x.fault = 1;
	x.others = 2;
	is_str(v(&x, &s, 100), "record", "ended by gpupack for another reason of its own: no wait");
	/* a second signal cuts a fault's wait short (sequence 108279: the timeout's wait for the line) */
	{
		struct end_farm ending = {2, 50, 1};

		x = ended(KILLED(SIGTERM));
		x.timed_out = x.terminated = 1;
		x.mps = 1;
		x.others = 2;
		x.fault_held = 100;
		is_str(v(&x, &ending, 100 + FAULT_LATE / 2), "unrecorded",
		    "a second signal cuts the wait for a late line short: left for --resume, its timeout not recorded");
		is_str(v(&x, &ending, 100 + FAULT_LATE), "record", "after the wait: its timeout");
		x = ended(EXITED(1));
		x.mps = x.fault = x.first = x.contained = 1;
		x.others = 2;
		x.fault_held = 100;
		is_str(v(&x, &ending, 100 + FAULT_LOG - 1), "unrecorded",
		    "cut short while waiting for the server's word: left for --resume, not charged");
		is_str(v(&x, &ending, 100 + FAULT_LOG), "record", "the word never came: charged");
		x.logged = 1;
		x.culprit = 1;
		is_str(v(&x, &ending, 100 + 1), "record", "cut short, the log naming it the culprit: charged");
		x.culprit = -1;
		x.contained = 1;
		is_str(v(&x, &ending, 100 + 1), "unrecorded",
		    "cut short while seeing what its logged fault took: left for --resume");
		/* no time at all (sequence 341015: --halt now,success=1 at the instant a culprit and its
		 * victim failed, the server's line 0.1 s late) */
		x = ended(EXITED(1));
		x.mps = 1;
		x.others = 1;
		is_str(v(&x, &ending, 100), "unrecorded",
		    "a failure beside others as the farm ends its tasks, no fault known yet: left for --resume");
		x.others = 0;
		is_str(v(&x, &ending, 100), "record", "nobody beside it: its own, recorded");
		x.others = 1;
		x.mps = 0;
		is_str(v(&x, &ending, 100), "record", "not under MPS: recorded, as parallel");
		x.mps = x.fault = x.logged = 1;
		x.culprit = 1;
		is_str(v(&x, &ending, 100), "record",
		    "the log names it the culprit as the farm ends its tasks: charged at once, no wait");
	}
}

static void
test_own_reasons(void)
{
	struct end_facts x = ended(KILLED(SIGKILL));
	struct end_farm s = {0, 0, 3}, stopping = {1, 50, 3};
	struct end_decision d;

	x.terminated = 1;
	x.lost = "MPS fault";
	d = end_decide(&x, &s, 100);
	ok(d.v == END_RERUN && d.why == x.lost && !d.spent, "its server died under it: again, gpupack's reason");
	d = end_decide(&x, &stopping, 100);
	ok(d.v == END_UNRECORDED && !d.print && !d.dropped, "lost while the farm stops: left for --resume");
	x.own_reruns = FARM_OWN_RERUNS;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_RECORD && d.spent && !d.ok, "its %d own reruns spent: said, recorded as it ended",
	    FARM_OWN_RERUNS);
	x = ended(EXITED(1));
	x.oom = 1;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_RERUN && d.why && !d.spent, "out of memory beside others: again (%s)", d.why);
	x.terminated = 1;
	is_str(v(&x, &s, 100), "record", "out of memory, but gpupack was ending it: no rerun");
	x.terminated = 0;
	is_str(v(&x, &stopping, 100), "record", "out of memory while stopping: recorded");
	x.own_reruns = FARM_OWN_RERUNS;
	d = end_decide(&x, &s, 100);
	ok(d.v == END_RETRY && d.spent, "its own reruns spent: --retries decide");
}

static void
test_output(void)
{
	struct end_facts x = ended(EXITED(0));
	struct end_farm stopping = {1, 50, 3};
	struct end_decision d;

	x.out_err = ENOSPC;
	d = end_decide(&x, &running, 100);
	ok(d.v == END_OUTPUT_LOST && d.ok, "a full disk took its output: lost, not recorded");
	x.out_err = EMFILE;
	is_str(v(&x, &running, 100), "rerun", "no descriptor for it (a shortage that passes): again");
	is_str(v(&x, &stopping, 100), "output-lost", "the same while stopping: lost");
	x.own_reruns = FARM_OWN_RERUNS;
	is_str(v(&x, &running, 100), "output-lost", "its own reruns spent: lost");
	x = ended(EXITED(1));
	x.out_err = ENOSPC;
	x.attempts = 0;
	is_str(v(&x, &(struct end_farm){0, 0, 2}, 100), "retry", "a failure to retry: its output does not matter");
}

/* Every combination of the facts: exactly one verdict, and the invariants that hold across them. */
static void
test_exhaustive(void)
{
	static const int statuses[] = {EXITED(0), EXITED(1), EXITED(130), KILLED(SIGTERM), KILLED(SIGKILL),
		KILLED(SIGSEGV)};
	long n = 0, bad = 0;

	for (int si = 0; si < 6; si++)
		for (int bits = 0; bits < (1 << 13); bits++)
			for (int st = 0; st < 3; st++) {
				struct end_facts x = ended(statuses[si]);
				struct end_farm s = {st, st ? 99.5 : 0, 2};
				struct end_decision d;

				x.timed_out = bits & 1;
				x.halted = (bits >> 1) & 1;
				x.stopped = (bits >> 2) & 1;
				x.terminated = x.timed_out || x.halted || x.stopped || ((bits >> 3) & 1);
				x.lost = (bits >> 4) & 1 ? "lost" : NULL;
				x.fault = x.mps = (bits >> 5) & 1;
				x.logged = x.fault && si % 2;
				x.others = (bits >> 6) & 1;
				x.fault_held = (bits >> 7) & 1 ? 99 : 0;
				x.contained = (bits >> 8) & 1;
				x.oom = (bits >> 9) & 1;
				x.out_err = (bits >> 10) & 1 ? ENOSPC : 0;
				x.node_unrecorded = (bits >> 11) & 1;
				x.own_reruns = (bits >> 12) & 1 ? FARM_OWN_RERUNS : 0;
				x.fault_retries = si == 5 ? 1 : 0;
				x.first = si >= 4;
				x.culprit = si - 4 < -1 ? -1 : si - 4;
				d = end_decide(&x, &s, 103);
				n++;
				/* a success is never run again, never a suspect, never waits for a fault */
				if (end_ok(&x) && (d.v == END_RETRY || d.v == END_SUSPECT || d.hold == HOLD_FAULT ||
				    d.hold == HOLD_LOG))
					bad++;
				/* a stopping farm starts nothing again */
				if (st > 0 && (d.v == END_RETRY || d.v == END_SUSPECT || d.v == END_RERUN))
					bad++;
				/* what gpupack ended for a stop, failed, is never recorded */
				if ((x.halted || x.stopped) && !end_ok(&x) && d.v == END_RECORD)
					bad++;
				/* a record is a success exactly when the attempt succeeded */
				if ((d.v == END_RECORD || d.v == END_OUTPUT_LOST) && d.ok != end_ok(&x))
					bad++;
				/* own reruns are bounded */
				if (d.v == END_RERUN && x.own_reruns >= FARM_OWN_RERUNS)
					bad++;
				/* a failure with a fault around it, not alone, is charged only when it
				 * showed the fault first and the fault took no one else */
				if (x.mps && x.fault && !end_ok(&x) && !x.alone &&
				    (!x.terminated || (x.timed_out && !x.halted && !x.stopped)) &&
				    !x.lost && !x.out_err && !x.node_unrecorded && (d.v == END_RECORD || d.v == END_RETRY) &&
				    x.culprit != 1 && !(x.culprit < 0 && x.first && x.contained))
					bad++;
				/* a wait always ends */
				if (d.v == END_WAIT && !(d.until > 0 && d.until <= 103 + 10))
					bad++;
			}
	ok(bad == 0, "%ld combinations of facts: every invariant holds (%ld broken)", n, bad);
}

int
main(void)
{
	test_plain_ends();
	test_stops();
	test_nodes();
	test_faults();
	test_own_reasons();
	test_output();
	test_exhaustive();
	return done_testing();
}
