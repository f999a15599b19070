/*
 * stop: which task ends a stop of the farm accounts for. A task killed
 * because the farm was told to stop did not finish: it gets no joblog
 * record and --resume runs it again (GNU parallel records none of the
 * jobs its SIGTERM or SIGINT ends). A task that ended on its own, before
 * the stop or while the farm waits for the running ones, is recorded as
 * always.
 *
 * gpupack knows the tasks it ends itself (a second signal, --halt now, a
 * fatal error). The hard case is a signal from outside that reaches the
 * tasks too: Slurm's time limit, scancel, preemption and --signal signal
 * every process of the step, a user may `kill -TERM -- -PGID`, and the
 * task's end may be seen before gpupack reads its own signal, or without
 * gpupack getting one at all (then the task died of the signal on its
 * own, and it is recorded, as parallel records it). The rule:
 *
 *   an attempt that died of SIGTERM, SIGINT, SIGHUP, SIGUSR1 or SIGKILL
 *   (or exited 128 + one of them, as a shell does) is a stop's when the
 *   farm was told to stop before it ended or within STOP_GRACE seconds
 *   after; until that is known its end waits (its slot stays taken).
 *
 * Time is an argument: the caller's clock decides, a test drives it. The
 * same holds for the other way a farm stops or not: a shortage (below).
 */
#ifndef GPUPACK_FARM_STOP_H
#define GPUPACK_FARM_STOP_H

/* How long a killed task's end waits for the farm's own stop signal (seconds). */
#define STOP_GRACE 2.0

enum stop_verdict {
	STOP_RECORD,   /* the task's own end: record it */
	STOP_DROP,     /* the stop's: no record, --resume runs it again */
	STOP_WAIT,     /* not known yet: ask again at *until (or when the farm is told to stop) */
};

/* Is a signal one that tells the farm, or a task, to stop? */
int stop_is_signal(int sig);
/* Does wait status `status` look like an end a stop gives? */
int stop_like(int status);
/*
 * The verdict on an attempt that ended with wait status `status`, seen to
 * end at `ended`, when the farm was first told to stop at `stop_at` (0:
 * not yet), asked at `now`. STOP_WAIT sets *until.
 */
enum stop_verdict stop_verdict(int status, double ended, double stop_at, double now, double *until);

/*
 * A task that cannot start for want of processes (fork's EAGAIN under
 * ulimit -u), descriptors or memory waits; the farm does not end while
 * tasks run (one that ends frees what the next needs), and with none
 * running it tries again, backing off, for STOP_SHORT_WAIT seconds.
 */
#define STOP_SHORT_WAIT 60.0
/* Is errno e such a shortage (one that passes)? */
int stop_shortage(int e);
/*
 * After n (>= 1) failed starts in a row, the last that found nothing
 * running at since (now, while tasks run): when to try again; 0: give up.
 */
double stop_backoff(int n, double since, double now, int running);

#endif
