/*
 * verdict: the one decision on how an attempt ends (farm/verdict.h says
 * the rules); finish.c gathers the facts and applies it.
 */
#include "farm/verdict.h"
#include "farm/cost.h"
#include "farm/stop.h"

#include <sys/wait.h>

/* Seconds a task a stop signal killed waits, in a farm over nodes, for ours (scancel's order). */
#define NODE_HOLD 2.0

static struct end_decision
decision(enum end_verdict v, int ok)
{
	return (struct end_decision){.v = v, .ok = ok};
}

static struct end_decision
wait_until(int hold, double until)
{
	return (struct end_decision){.v = END_WAIT, .hold = hold, .until = until};
}

static struct end_decision
unrecorded(int print, int dropped)
{
	return (struct end_decision){.v = END_UNRECORDED, .print = print, .dropped = dropped};
}

static struct end_decision
rerun(const char *why)
{
	return (struct end_decision){.v = END_RERUN, .why = why};
}

int
end_ok(const struct end_facts *x)
{
	return WIFEXITED(x->status) && WEXITSTATUS(x->status) == 0 && !x->timed_out && !x->skipped;
}

/* Rules 1 and 2: a stop's end, or one that waits to learn whether it was. 1: *d is it. */
static int
stop_end(const struct end_facts *x, const struct end_farm *s, int ok, double now, struct end_decision *d)
{
	double until = 0;

	/* ended by us for a stop: unrecorded (a second signal's shows its output; --halt now's not) */
	if ((x->halted || x->stopped) && !ok) {
		*d = unrecorded(x->stopped, 1);
		return 1;
	}
	/* gpupack ended it (--timeout, its own reasons): it knows why, nothing to wait for */
	if (x->terminated)
		return 0;
	switch (stop_verdict(x->status, x->ended, s->stop_at, now, &until)) {
	case STOP_WAIT:
		*d = wait_until(HOLD_STOP, until);
		return 1;
	case STOP_DROP:
		*d = unrecorded(1, 1);
		return 1;
	case STOP_RECORD:
		break;
	}
	if (!ok && x->node_kill && !x->was_held) {
		*d = wait_until(HOLD_NODE, now + NODE_HOLD);
		return 1;
	}
	return 0;
}

/* Rule 3's ground: a failure under MPS beside other clients, not one gpupack ended for its own reason. */
static int
beside_others(const struct end_facts *x)
{
	return x->mps && !x->lost && !x->alone && !(x->terminated && !x->timed_out) && x->others > 0;
}

/*
 * A fault's wait that a second signal or --halt now cut short, or left no
 * time for (a failure beside other clients ended as the farm was told to
 * end them): whose failure it was is not known, but a named culprit's.
 */
static int
cut_short(const struct end_facts *x, const struct end_farm *s, double now)
{
	double wait = !x->fault ? FAULT_LATE : x->logged ? FAULT_HOLD : FAULT_LOG;

	if (!x->mps || s->stop < 2 || x->culprit == 1)
		return 0;
	if (x->fault_held > 0)
		return now < x->fault_held + wait;
	return beside_others(x);
}

/* Rule 3: a failure beside other clients waits once to see what a fault took (or whether one comes). */
static int
fault_hold(const struct end_facts *x, const struct end_farm *s, double now, struct end_decision *d)
{
	if (cut_short(x, s, now)) {
		*d = unrecorded(1, 1);
		return 1;
	}
	/* while the farm stops too (its running tasks end first), but not once told to end them;
	 * gpupack knows why it ended what it ended, but for --timeout: a fault's victim may hang */
	if (!beside_others(x) || s->stop > 1)
		return 0;
	if (x->fault_held > 0) {
		/* waited once: a fault only a client's error shows waits for its server's word */
		if (!x->fault || x->logged || x->culprit >= 0 || now >= x->fault_held + FAULT_LOG)
			return 0;
		*d = wait_until(HOLD_LOG, x->fault_held + FAULT_LOG);
		return 1;
	}
	*d = x->fault ? wait_until(HOLD_FAULT, now + FAULT_HOLD) : wait_until(HOLD_LATE, now + FAULT_LATE);
	return 1;
}

/* Rule 4: gpupack's own reasons. 1: *d is the verdict; 0: none, or its reruns are spent (*spent). */
static int
own_reason(const struct end_facts *x, const struct end_farm *s, struct end_decision *d, int *spent)
{
	const char *why = x->lost ? x->lost : x->oom && !x->terminated ? "out of memory" : NULL;

	if (!why)
		return 0;
	if (x->lost && s->stop > 0) {
		/* not the task's result, and the run is stopping: left for --resume */
		*d = unrecorded(0, 0);
		return 1;
	}
	if (s->stop > 0)
		return 0;
	if (x->own_reruns >= FARM_OWN_RERUNS) {
		*spent = 1;
		return 0;
	}
	*d = rerun(why);
	return 1;
}

/* Rule 5: again, as a fault's suspect or on --retries; 0: not again. */
static int
again(const struct end_facts *x, const struct end_farm *s, struct end_decision *d)
{
	/* a fault around it: another's (a victim, again beside the others), or its own unless it took others */
	int suspect = x->mps && x->fault && !x->alone && x->fault_retries < FARM_FAULT_RETRIES && x->culprit != 1 &&
	    !(x->culprit < 0 && x->first && x->contained);

	if (x->terminated && !x->timed_out)
		return 0;
	if (s->stop > 0) {
		/* nothing runs again while the farm stops; a suspect is not charged: left for --resume */
		if (!suspect)
			return 0;
		*d = unrecorded(0, 0);
		return 1;
	}
	if (suspect) {
		*d = decision(END_SUSPECT, 0);
		/* beside the others once, as a victim; the likely culprit, or a second time, alone */
		d->alone = (x->culprit < 0 && x->first) || x->fault_retries > 0;
		return 1;
	}
	if (x->attempts + 1 >= s->retries)
		return 0;
	*d = decision(END_RETRY, 0);
	return 1;
}

/* Rule 6: the record, unless its output or its node says otherwise. */
static struct end_decision
record(const struct end_facts *x, const struct end_farm *s, int ok)
{
	if (x->out_err) {
		if (stop_shortage(x->out_err) && s->stop == 0 && x->own_reruns < FARM_OWN_RERUNS)
			return rerun("its output could not be kept");
		return decision(END_OUTPUT_LOST, ok);
	}
	if (x->node_unrecorded)
		return unrecorded(1, 0);
	return decision(END_RECORD, ok);
}

struct end_decision
end_decide(const struct end_facts *x, const struct end_farm *s, double now)
{
	struct end_decision d;
	int ok = end_ok(x), spent = 0;

	if (stop_end(x, s, ok, now, &d))
		return d;
	if (ok)
		return record(x, s, ok);
	if (fault_hold(x, s, now, &d))
		return d;
	if (own_reason(x, s, &d, &spent))
		return d;
	if (!again(x, s, &d))
		d = record(x, s, ok);
	d.spent = spent;
	return d;
}

const char *
end_name(enum end_verdict v)
{
	static const char *const names[] = {"record", "retry", "suspect", "rerun", "wait", "unrecorded",
		"output-lost"};

	return v <= END_OUTPUT_LOST ? names[v] : "?";
}
