/*
 * nodes: one farm over several gpupacks, one per node of a Slurm
 * allocation (`srun gpupack run --joblog FILE ...`), with no server: they
 * meet in FILE.farm/ on a filesystem all of them share, and every rule
 * rests on the two operations such filesystems make atomic across
 * machines, creating a name that must not exist yet (symlink(2), which
 * fails with EEXIST) and renaming over a name (rename(2)).
 *
 *   FILE.farm/identity             the command and input kinds (as FILE.gpupack)
 *   FILE.farm/current -> RUN       the run now going on
 *   FILE.farm/RUN/                 one run: $SLURM_JOB_ID.$SLURM_STEP_ID
 *     step -> JOBID.STEPID         the Slurm job step whose tasks are its members (under Slurm)
 *     parent -> RUN' | none        the run it resumes (--resume), or none
 *     claim/SEQ -> OWNER LEN       who runs inputs SEQ..SEQ+LEN-1: the first to create it
 *                                  (OWNER alone: LEN 1)
 *     reclaim/SEQ.K -> OWNER       attempt K after the owner of K-1 was lost
 *     log/OWNER                    OWNER's joblog (GNU parallel's columns)
 *     alive/OWNER                  its heartbeat: the file's mtime
 *     done/OWNER                   it is idle: every input it took has ended
 *     lost/OWNER -> WHO            another (WHO) declared it lost, or its watchdog (WHO: OWNER)
 *     merged                       who wrote FILE, the run's joblog, at the end
 *     status                       the farm's exit status, written at the end
 *
 * OWNER is node.procid.pid (node.procid.pid.rK in a job Slurm requeued K
 * times: below). Each gpupack walks all inputs in order and runs
 * the ones it claims, as each slot frees up: a slow node claims fewer, and
 * none waits for another. A claim takes a block of inputs, its size a share
 * of what is left over twice the farm's slots (guided self-scheduling): the
 * claims start where the one before ends, so every member walks the same
 * chain and learns each block with one look-up; the first blocks are large,
 * so that the shared directory sees a few names per thousand inputs, and
 * the last are of one input, so that the last tasks still go to whichever
 * member is free. A member reads the beats of a few others each second, in
 * turn, and lists lost/ (and done/ when idle): its cost stays the same
 * whatever the farm's size. A task has one joblog record across nodes:
 * the one in the log of whoever holds its highest claim. When a node stops
 * beating for GPUPACK_FARM_LOST seconds (default 60), the others declare
 * it lost (it stops when it sees that) and run its unfinished inputs again
 * through the farm's rerun path (queue_rerun_own). Sooner where the loss
 * is known: a gpupack killed on a node still up is marked lost by its
 * watchdog (farm/guard.h) once its tasks are gone, and under Slurm a
 * member GPUPACK_FARM_ASK seconds late is asked about (nodes_slurm.c). FILE, the joblog users
 * read, is written whole at the end; --resume reads the logs of the run's
 * chain of parents, so a rerun with any number of nodes runs only what no
 * node finished.
 *
 * Taking over is a pass: a new walk over all inputs, which first reads the
 * logs of every member declared lost so far (they write no more: a member
 * checks its lost mark before its records, once a beat). Only the inputs
 * of lost members' blocks are looked at on the shared directory. An input whose highest claim
 * is such a member's and that its log does not hold is claimed again with
 * reclaim/SEQ.K+1 (one winner). A member declared lost while a pass walks
 * is left alone by that pass (its records were not read: its finished
 * inputs look like its unfinished ones) and swept by the next. So any
 * number of members lost, together or one after another, survivors in the
 * middle of their own takeover included, leave each unfinished input run
 * once more and no finished one again; a record written after its writer
 * was declared lost never counts (a higher claim exists or none was needed).
 *
 * Who belongs to a run: the tasks of its Slurm job step (RUN/step), also
 * one that comes after the others left (srun's tasks need not start
 * together): it runs what is left, or ends with the farm's status. Another
 * run that reuses a name (GPUPACK_FARM_RUN: another step, or no Slurm) is
 * refused, since the old claims would hold every input. A requeued job
 * runs its steps again, with SLURM_RESTART_COUNT one more: the same run,
 * whose members of the earlier restarts Slurm ended, however fresh their
 * last beat. Their names say their restart (.rK), so they are declared
 * lost at once, not after GPUPACK_FARM_LOST.
 *
 * The end: every member exits with the farm's status (GNU parallel's count
 * over all nodes' records, 255 for an input without one), so that srun's,
 * the worst of its tasks', is the farm's. One declared lost waits for it.
 */
#ifndef GPUPACK_FARM_NODES_H
#define GPUPACK_FARM_NODES_H

#include <stddef.h>
#include <stdint.h>

struct farm;
struct farm_opts;
struct run;

/* How long a silent gpupack stays a member (seconds; $GPUPACK_FARM_LOST). */
#define NODES_LOST_DEFAULT 60.0
/*
 * Under Slurm, a member whose beat is this late ($GPUPACK_FARM_ASK seconds;
 * 0: never) is asked about: Slurm may know its node is lost
 * (nodes_slurm_ask), at most every NODES_ASK_EVERY seconds, scontrol given
 * NODES_ASK_TIMEOUT seconds.
 */
#define NODES_ASK_DEFAULT 5.0
#define NODES_ASK_EVERY 3.0
#define NODES_ASK_TIMEOUT 3.0
/* How often a member shows it is alive and looks at the others. */
#define NODES_BEAT 1.0
/* Whose beats a member reads each beat (in turn), and how often it lists the members (beats). */
#define NODES_WATCH 4
#define NODES_LIST 10
/*
 * Claims: a share of the inputs left over twice the farm's slots, at most
 * this many (a member lost with a large one leaves it to the 60 s timeout).
 */
#define NODES_BLOCK_MAX 1024
/* The members a claim's size assumes outside srun (which says how many). */
#define NODES_MEMBERS_GUESS 16

enum nodes_take { NODES_RUN, NODES_RERUN, NODES_DONE, NODES_OTHER, NODES_OURS, NODES_ERROR };

/*
 * Is this run a farm over nodes: under srun with several tasks, or with
 * FILE.farm already there (a run that resumes one)? Call before the inputs
 * are opened (it keeps their sources as given, for later passes). 0: not
 * one; 1: f->nodes made; -1 with err set (options a farm over nodes cannot
 * take).
 */
int nodes_prepare(struct farm *f);

/*
 * Join the run in FILE.farm/ and open f->j on this gpupack's own log.
 * 0 when f->nodes is NULL (nothing done); 1 joined; -1 with err set.
 */
int nodes_setup(struct farm *f, uint64_t identity);

/*
 * Input seq comes by: NODES_RUN (ours now), NODES_RERUN (ours, lost with
 * another node: *attempt is its attempt), NODES_DONE (an earlier run
 * recorded it), NODES_OTHER (another gpupack's), NODES_OURS (we ran it
 * already: a later pass), NODES_ERROR (err set).
 */
int nodes_take(struct farm *f, unsigned long long seq, int *attempt);

/*
 * The absolute path of this member's lost mark (RUN/lost/OWNER), which its
 * watchdog creates, naming OWNER, when gpupack dies (farm/guard.h): the
 * others take its inputs over at their next look. -1 when not known.
 */
int nodes_lost_mark(const struct farm *f, char *path, size_t size);
/* This member's name in the run (node.procid.pid[.rK]). */
const char *nodes_owner(const struct farm *f);

/* The Host column of our records (the node's name). */
const char *nodes_host(const struct farm *f);

/*
 * Should the end of r go unrecorded? When a signal (scancel) stops the run
 * and takes its tasks down with it, a task it killed did not finish: it is
 * left for --resume. Also when we were declared lost.
 */
int nodes_unrecorded(struct farm *f, const struct run *r);

/*
 * Was r killed by SIGTERM, SIGINT, SIGHUP or SIGKILL while we are not
 * stopping (yet)? scancel signals every process of the step, and ours may
 * come after the task's: its end waits a moment (farm/verdict.h), so that
 * a kill that was the farm's end is not recorded as a failure.
 */
int nodes_killed(const struct farm *f, const struct run *r);

/* Seconds until nodes_tick wants to run (for poll). */
double nodes_due(const struct farm *f, double now);
/* Beat, watch the others, stop if we were declared lost. */
void nodes_tick(struct farm *f, double now);

/*
 * Nothing runs here and our inputs are through: 1 to go on (waiting for the
 * others, or a new pass over the inputs for what a lost node left), 0 when
 * the farm is over everywhere.
 */
int nodes_idle(struct farm *f, double now);

/*
 * This gpupack's exit status, given its own: the farm's (GNU parallel's
 * count of failed inputs over every node's records, 255 when an input has
 * none) when the farm ended, so that srun, which exits with the worst of
 * its tasks, says how the farm went. A gpupack declared lost waits for the
 * others to end the farm and exits with its status; one stopped by a
 * signal, --halt or an error keeps its own.
 */
int nodes_exit_status(struct farm *f, int own);

/* Leave: write FILE when the farm is over, free everything. */
void nodes_close(struct farm *f);

/*
 * nodes_mount.c: is path (a directory, resolved) on a mount whose semantics
 * the farm cannot make safe (doc/slurm.md: an NFS mount with nocto whose
 * attribute cache reaches half of lost_after)? mountinfo: the text of
 * /proc/self/mountinfo. 1 with why set (one line: the option that fixes
 * it), 0 when the farm can use it.
 */
int nodes_mount_check(const char *mountinfo, const char *path, double lost_after, char *why, size_t size);

/* nodes_slurm.c: what Slurm says of a member's node (pure but for nodes_slurm_ask) */

/* The node of member owner (node.procid.pid[.rK]) into node; -1 not of that form. */
int nodes_slurm_owner_node(const char *owner, char *node, size_t size);
/* Does hostlist list (n[1-3,5],gpu07) name node? 1 yes, 0 no, -1 a form not understood. */
int nodes_slurm_hostlist_has(const char *list, const char *node);
/*
 * `scontrol show node -o NODE`'s output: 1 when node's State says it is
 * lost (DOWN, FAIL, NOT_RESPONDING or *, powered down), 0 when not (a
 * draining node still runs its jobs), -1 no answer (not in the output).
 */
int nodes_slurm_node_lost(const char *out, const char *node);
/*
 * `scontrol show job -o JOBID`'s output: 1 when the job runs and its node
 * list (each component's, for a heterogeneous job) no longer holds node,
 * 0 when it does, -1 no answer (not running, a node list not understood).
 */
int nodes_slurm_job_lost(const char *out, const char *node);
/*
 * Ask scontrol (on PATH) both, each given timeout seconds: 1 node is lost,
 * 0 it is not, -1 no answer (scontrol missing, failing or slow).
 */
int nodes_slurm_ask(const char *node, const char *jobid, double timeout);

/* nodes_journal.c: the records of a chain of runs */

struct nodes_chain;
/*
 * What the runs before this one recorded (dir: FILE.farm, parent: the first
 * run to read, "none" for no chain). -1 with err set.
 */
int nodes_chain_load(const char *dir, const char *parent, struct nodes_chain **out);
/* 1 when the chain settled seq: with resume_failed, only when it ended well. */
int nodes_chain_done(const struct nodes_chain *c, unsigned long long seq, int resume_failed);
void nodes_chain_free(struct nodes_chain *c);

/* Does OWNER's log in run dir hold a record of seq? Loaded once per call set. */
struct nodes_log;
int nodes_log_load(const char *rundir, const char *owner, struct nodes_log **out);
int nodes_log_has(const struct nodes_log *l, unsigned long long seq);
void nodes_log_free(struct nodes_log *l);

/*
 * What run (in dir) settled of inputs 1..inputs that its chain c had not: how
 * many ended badly (its counted records) and how many have no record at all.
 * -1 with err set.
 */
int nodes_run_tally(const char *dir, const char *run, const struct nodes_chain *c, int resume_failed,
    unsigned long long inputs, unsigned long long *failed, unsigned long long *unfinished);

/* Write joblog from run (and its chain) in dir, atomically. -1 with err set. */
int nodes_merge(const char *dir, const char *run, const char *joblog);

#endif
