/*
 * guard: no task outlives gpupack, not even a kill -9 of it.
 *
 * Three layers, each covering what the one before cannot:
 *  1. each task's first process has PR_SET_PDEATHSIG (spawn.c): it dies
 *     with gpupack, but its children do not;
 *  2. a watchdog process, forked at the start of the run, holds the only
 *     read end of a pipe whose write end only gpupack holds. gpupack tells
 *     it each task's process group (and its leader's start time) as tasks
 *     start and end. When gpupack dies, however it dies, the kernel closes
 *     the pipe; the watchdog reads EOF and kills every group still listed
 *     and every process that carries the run's token (GPUPACK_RUN=<pid>-
 *     <start>, in each task's environment, inherited by its children even
 *     when they leave the group), then stops the MPS daemons the run
 *     started, and exits. A normal end tells it to leave quietly;
 *     While gpupack lives it is the subreaper of all its tasks start:
 *     their orphans become its children, so that a stopped run finds and
 *     ends them too (guard_sweep), tokens or not;
 *  3. the run's record in <state>/runs/<pid>-<start> (one fixed-size line
 *     per slot: the group and start time running there) lets the next run
 *     (a --resume, or any run) end what a killed run left when its watchdog
 *     was killed too: before it starts its own tasks.
 * A group is signalled only while its leader is alive with the recorded
 * start time; a process only when it carries the dead run's token. So a
 * recycled pid is never signalled.
 */
#ifndef GPUPACK_FARM_GUARD_H
#define GPUPACK_FARM_GUARD_H

#include <sys/types.h>

#define GUARD_ENV "GPUPACK_RUN"

struct guard {
	int fd;                /* write end of the watchdog's pipe; -1 none */
	pid_t pid;             /* the watchdog */
	int rec;               /* the run's record, -1 none */
	int runs;              /* <state>/runs, -1 none */
	int nslots;
	char token[48];        /* "<pid>-<start>" of this gpupack */
	char env[64];          /* "GPUPACK_RUN=<token>", for every task's environment */
	int lost;              /* the watchdog is gone (said once) */
	int sweep;             /* tasks were ended early: what they left is ended at the run's end */
};

/*
 * Before any task starts: end what killed runs left running (their record
 * says where; their token finds the rest), then write this run's record
 * (nslots lines) and fork its watchdog. killed: how many leftover
 * processes were ended. -1 with err set.
 */
int guard_start(struct guard *g, int nslots, int *killed);
/* A task started in slot (1-based) as process group pgid. */
void guard_task_started(struct guard *g, int slot, pid_t pgid, unsigned long long seq);
/* The task in slot is done with (reaped, its group signalled when needed). */
void guard_task_ended(struct guard *g, int slot, pid_t pgid);
/* An MPS daemon this run started for uuid: the watchdog stops it if gpupack dies. */
void guard_mps_started(struct guard *g, const char *uuid);
/* The loop reaped pid: 1 when it was the watchdog (then it is gone: said once). */
int guard_reaped(struct guard *g, pid_t pid);
/*
 * A farm over nodes: when gpupack dies (not at a normal end, guard_stop),
 * the watchdog creates the symlink path (absolute) -> target once the
 * run's tasks are gone: the lost mark that lets the farm's other members
 * take gpupack's inputs over at once (farm/nodes.h).
 */
void guard_mark_on_death(struct guard *g, const char *path, const char *target);
/* A normal end: the watchdog leaves without killing anything; the record goes. */
void guard_stop(struct guard *g);

/*
 * End, with SIGKILL, what tasks left behind: every process that carries the
 * run's token (with seq > 0 only those of that task: GPUPACK_SEQ=seq), and
 * with seq 0 also every child of gpupack's but the watchdog: descendants
 * orphaned by a task's end (setsid'd ones, and those that dropped the
 * token from their environment) are gpupack's children, as guard_start
 * made it their subreaper (PR_SET_CHILD_SUBREAPER). Again until none is
 * left; returns how many were killed.
 */
int guard_sweep(struct guard *g, unsigned long long seq);

/*
 * Kill, with SIGKILL, what a run left: the groups whose leaders are alive
 * with the recorded start times, and every process of ours whose
 * environment holds env ("GPUPACK_RUN=..."); again until none is left (a
 * process may fork while it is being killed). Returns how many were killed.
 */
int guard_kill_run(const char *env, const pid_t *pgid, const unsigned long long *start, int n);
/* The sweep's stop rule (pure, for the tests): guard.c says why. */
int guard_sweep_done(int killed, int unknown, unsigned long long sum, int prev_unknown,
    unsigned long long prev_sum);

#endif
