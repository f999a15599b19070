/*
 * verdict: how an attempt of a task ends, decided in one place. From the
 * facts of the attempt (how it ended, what gpupack did to it, the faults,
 * stops and nodes around it, its counts) and the farm's state, with time
 * passed in, end_decide returns one verdict; finish.c applies it, each
 * effect once (release the slot, count, requeue, record, print, free).
 * No process, file or clock is touched here: a test drives it alone.
 *
 * The rules, in the order they are tried:
 *  1. An attempt gpupack ended for a stop (a second signal, --halt now, a
 *     fatal error) is not recorded: --resume runs it again (GNU parallel
 *     records none of those). One that exited 0 meanwhile ended on its
 *     own, and is recorded as done.
 *  2. One killed from outside (not by gpupack, which knows why it ended
 *     what it ended; farm/stop.h): the stop's (unrecorded) when
 *     the farm was told to stop within STOP_GRACE of its end; until that
 *     is known, it waits. In a farm over nodes, such a kill waits
 *     NODES_HOLD s too, once (scancel reaches the tasks first).
 *  3. Under MPS, a failure beside other clients waits once (also while
 *     the farm stops, not once a second signal ends the tasks), to see
 *     what a fault took; so does an attempt --timeout ended there (a
 *     fault's victim may hang until then, before the server logs the
 *     fault): FAULT_HOLD s when its server's log or a client's error
 *     already shows one, FAULT_LATE s when none shows yet (a server logs
 *     the fault after a client it took may have exited). A fault known
 *     only from a client's own error waits for its server's word up to
 *     FAULT_LOG s after that first wait began: the log's line names the
 *     culprit (rule 5); a neighbour's error can come seconds before it.
 *     A wait a second signal or --halt now cuts short, or leaves no time
 *     for (a failure beside others that ended as the farm was told to end
 *     its tasks), leaves the attempt unrecorded (--resume runs it): what
 *     the fault took is not known then, unless the log names it the
 *     culprit.
 *  4. An attempt gpupack ended for a reason of its own (its MPS server
 *     died, it hung beside a fault), or that ran out of device memory
 *     beside others (-j auto's packing), runs again first in line, its
 *     --retries untouched, at most FARM_OWN_RERUNS times; while the farm
 *     stops, it is left for --resume.
 *  5. A failure with a fault around it (its server's log, or a client's
 *     error, since it started): where the log names the fault's culprit
 *     (driver 580: "Client {PID: PID, ...} encountered a fatal GPU
 *     error", its teardown naming no other client: share/mps.h), it is
 *     charged if it is that process, else it is a victim (below). Where
 *     the log names none, it is a neighbour's when another failure saw
 *     that fault first (within FAULT_EPISODE s): a victim, run again
 *     beside the others, --retries untouched, never charged (a second
 *     time, alone: where faults take every client, the culprit may
 *     have been taken for a victim). The first
 *     failure of a fault is the likely culprit: its own when the fault
 *     took none beside it (no other failure within FAULT_HOLD:
 *     contained), else it runs again as its server's only client, which
 *     decides. At most FARM_FAULT_RETRIES free reruns.
 *     While the farm stops nothing runs again: a suspect is left
 *     unrecorded then (--resume runs it), never charged.
 *     Else a failure runs again while --retries allows (not while the
 *     farm stops, nor when gpupack ended it, but for --timeout).
 *  6. Recorded: unless its output could not be kept (a shortage that
 *     passes runs it again; else the run stops starting tasks), or a farm
 *     over nodes says its records no longer count (left for --resume).
 */
#ifndef GPUPACK_FARM_VERDICT_H
#define GPUPACK_FARM_VERDICT_H

/* Seconds an attempt a fault ended beside others waits to see whether the fault took them too. */
#define FAULT_HOLD 2.0
/* Seconds after a fault is first seen within which other failures it shows in are its victims. */
#define FAULT_EPISODE 10.0
/* Seconds a failure beside others waits for a fault its server has not logged yet. */
#define FAULT_LATE 0.5
/*
 * Seconds (from its first wait) a failure whose fault only a client's
 * error shows waits for the server's log: on an H200 (driver 580, fault
 * farm f5) a training the fault took failed 3 s before the culprit's end
 * and was charged after FAULT_HOLD, before the line naming the culprit.
 */
#define FAULT_LOG 6.0

struct end_facts {
	/* how it ended */
	int status;           /* wait status */
	int timed_out;        /* --timeout ended it */
	int skipped;          /* a perl replacement string skipped it (ran as true) */
	double ended;         /* when it was seen to end */
	/* what gpupack did to it */
	int halted;           /* ended by --halt now or a fatal error */
	int stopped;          /* ended by a second signal */
	int terminated;       /* gpupack asked it to end, for any reason */
	const char *lost;     /* gpupack ended it for its own reason (not its result); NULL none */
	int was_held;         /* its end waited once already (a stop or a node's kill) */
	double fault_held;    /* its end waited for a fault since then; 0 not */
	/* its output */
	int out_err;          /* errno: it could not be kept; 0 kept */
	/* MPS */
	int mps;              /* it ran on an MPS device */
	int fault;            /* a fault since it started: its server's log, or a client's error */
	int logged;           /* its server (its log or its daemon) shows that fault, not only a client */
	int others;           /* other clients of ours on its server (running, ended and waiting, or failed
	                       * there within FAULT_HOLD before it, while it ran) */
	int alone;            /* it ran as its server's only client (a suspect's rerun) */
	int contained;        /* after the wait: the fault took no other client of those beside it */
	int first;            /* it saw its fault first: not a neighbour of another's */
	int culprit;          /* its server's log names it the fault's culprit: 1; others only: 0; none: -1 */
	/* -j auto */
	int oom;              /* out of device memory beside other tasks */
	/* a farm over nodes */
	int node_kill;        /* killed by a stop signal while we are not stopping (yet) */
	int node_unrecorded;  /* our records no longer count, or a stop killed it */
	/* its counts */
	int attempts;         /* attempts that counted against --retries */
	int own_reruns;       /* reruns for gpupack's own reasons */
	int fault_retries;    /* reruns as a fault's suspect */
};

struct end_farm {
	int stop;             /* 0 running; 1 no new tasks; 2 ending the running ones */
	double stop_at;       /* when the farm was first told to stop; 0 not */
	int retries;          /* --retries: tries in all (0 or 1: no retry) */
};

enum end_verdict {
	END_RECORD,       /* its end: recorded, done or failed, its output delivered */
	END_RETRY,        /* failed: again, one of its --retries spent */
	END_SUSPECT,      /* a fault around it: again (alone: as its server's only client), --retries untouched */
	END_RERUN,        /* gpupack's own reason (why): again first in line, --retries untouched */
	END_WAIT,         /* not known yet: decided again at until (hold says why) */
	END_UNRECORDED,   /* not recorded: --resume runs it again */
	END_OUTPUT_LOST,  /* its output could not be kept: not recorded, no new task starts */
};

enum end_hold { HOLD_NONE, HOLD_STOP, HOLD_NODE, HOLD_FAULT, HOLD_LATE, HOLD_LOG };

struct end_decision {
	enum end_verdict v;
	const char *why;      /* END_RERUN: the reason */
	double until;         /* END_WAIT: when to decide again */
	int hold;             /* END_WAIT: enum end_hold */
	int print;            /* END_UNRECORDED: what it printed is shown */
	int dropped;          /* END_UNRECORDED: a stop's (counted: the run exits 255) */
	int spent;            /* its own reruns were spent: said, and it ends as its attempt did */
	int ok;               /* it succeeded (a record's done; -j auto counts it) */
	int alone;            /* END_SUSPECT: the next attempt runs as its server's only client */
};

/* Did the attempt succeed: exited 0, not timed out, not skipped? */
int end_ok(const struct end_facts *x);
/* The verdict on an attempt with facts x in a farm in state s, at now. */
struct end_decision end_decide(const struct end_facts *x, const struct end_farm *s, double now);
/* The verdict's name, for tests and debugging. */
const char *end_name(enum end_verdict v);

#endif
