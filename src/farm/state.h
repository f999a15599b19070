/*
 * state: one farm run in progress, shared by the files that hold its parts.
 * loop.c waits for events and drives the others; queue.c hands out the
 * next task (retries first, then the input stream); launch.c places a task
 * on a slot and starts it; finish.c ends a task (retry, halt, joblog);
 * deliver.c prints finished output (in input order under -k); setup.c
 * builds the run from its options and takes it down.
 *
 * A running task owns one slot (struct run); slots are numbered 1.. across
 * devices ({%}). A task ends once: its final attempt writes one joblog
 * record (fdatasync'd) and prints its output whole.
 */
#ifndef GPUPACK_FARM_STATE_H
#define GPUPACK_FARM_STATE_H

#include <limits.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include "farm/farm.h"
#include "farm/guard.h"
#include "farm/cmdline.h"
#include "farm/ctlnode.h"
#include "farm/task.h"
#include "farm/journal.h"
#include "farm/joblock.h"
#include "farm/nodes.h"
#include "farm/output.h"
#include "farm/perl.h"
#include "farm/results.h"
#include "farm/progress.h"
#include "farm/slot.h"
#include "util/str.h"

struct task {
	unsigned long long seq;
	struct targs a;          /* its records (farm/task.h) */
	int attempts;            /* attempts that counted against --retries */
	int own_reruns;          /* reruns for gpupack's own reasons (queue_rerun_own) */
	int fault_retries;       /* attempts another client's fault ended */
	int suspect;             /* its next attempt runs alone: a fault was around its last two */
	struct task *next;
};

/* An attempt under MPS (health.c): where its server's log stood at its start, faults around it. */
struct run_mps {
	long mps_off;
	int alone;               /* a suspect's attempt, the only client of its server */
	double fault_t;          /* an MPS fault ended it then: held a moment to see whether it hit others */
	int fault_hold;          /* its end is held for a fault (verdict.h): through a first signal's stop too */
	double hang_cpu, hang_t; /* beside a fault: its CPU seconds at hang_t, when they last grew */
};

struct run {
	struct task *task;       /* NULL: the slot is free */
	struct group *g;
	int slot;                /* {%}, 1-based */
	pid_t pid;
	int fd[2];               /* read ends of the stdout and stderr pipes; -1 closed */
	int file[2];             /* --results files (gpupack writes what the pipes bring); -1 none */
	struct resdir *res;      /* --results DIR: their names (resdir.c); NULL none */
	int out_err;             /* errno of the first failure to keep its output; 0 none */
	const char *out_what;    /* what failed then */
	struct obuf out[2];
	double start_wall, start, term_at, kill_at; /* term_at: SIGTERM due */
	int exited, status, timed_out, terminated;
	char *command;           /* the command line: joblog, -v, --dry-run */
	char *tag;               /* --tag: what each output line starts with; NULL none */
	int halted;              /* ended by --halt now or an error: not logged, not printed */
	int stopped;             /* ended by a second signal: not logged (--resume reruns it) */
	double ended_at;         /* when it was seen to end (farm/stop.h) */
	double hold_until;       /* killed by a signal: its end waits until then (farm/stop.h) */
	struct ctlnode_task ct;  /* -j auto: its CPU, its device memory, the gate's answer (farm/ctlnode.h) */
	int paused;              /* -j auto: stopped (SIGSTOP) at the GPU's door */
	struct run_mps m;        /* under MPS: its place in the server's log, faults around it (health.c) */
	const char *lost;        /* gpupack ended this attempt for its own reason: not the task's result */
	unsigned long long sent; /* --pipe: the bytes of its block (the joblog's Send) */
	int skipped;             /* a perl replacement string called skip(): ran as true, logged -2 */
};

/* Finished output waiting for its turn under -k, and the record written after it. */
struct held {
	unsigned long long seq;
	unsigned long long span; /* the Seqs it stands for: seq .. seq + span - 1 (no output but its own) */
	struct obuf out[2];
	struct joblog_rec rec;   /* when has_rec; its command is `command` */
	char *command;
	int has_rec, ok;
	struct held *next;
};

/* Attempts to run again before new inputs: failures (--retries), and a fault's suspects, each alone. */
struct farm_queue {
	struct task *retry, *retry_tail;
	struct task *suspects, *suspects_tail;
};

/* --halt: the run's exit status it decided (-1: none yet), and whether it stopped the run. */
struct farm_halt {
	int halt_status;
	int halt_stopped;
	int hup;                 /* a SIGHUP stopped the run (parallel's: its status is the tasks') */
};

/* The command's program, looked up once (when the command is a plain program). */
struct farm_exec {
	char exec_name[256], exec_path[PATH_MAX];
	int exec_found;
};

/* Every task's environment: gpupack's less the names the farm sets (keys). */
struct farm_env {
	const char **keys;
	int nkeys;
	char **base_env;
	size_t nbase_env;
};

/* gpupack's own output: the next task in -k order, stdout's state, the progress line's last draw. */
struct farm_out {
	unsigned long long next_print;
	int out_broken;          /* stdout was closed (EPIPE): not written to again */
	int out_failed;          /* output could not be written or kept: said once, no new task */
	double last_draw;
	char *color_eol, *color_reset; /* --ctag, --color: tput el and sgr0 as parallel asks (owned) */
};

/* --retry-failed: the tasks to run again, in Seq order; how many; the next one. */
struct farm_rf {
	struct journal_cmd *rf;
	size_t nrf, rf_at;
};

/* Starts that failed for want of processes, descriptors, memory (launch.c). */
struct farm_short {
	int short_n;             /* in a row */
	int short_said;          /* that was said (once a run) */
	double short_since, short_until; /* the last such failure with none running; next try */
};

/* --timeout N%: the runtimes of the tasks that succeeded, and their median (parallel's: the lower). */
struct farm_runtimes {
	double *runtimes;
	size_t nruntimes, cap_runtimes;
	double median;
};

/* --results: a directory (its name a template where it holds replacement strings), or one file */
struct farm_results {
	struct tmpl dir;         /* --results DIR when it holds replacement strings */
	int dir_tmpl;            /* dir is in use */
	const char *name;        /* --results NAME.csv/.tsv/.json (then o->results is NULL) */
	struct results_file file; /* that file, once open (path non-NULL) */
};

struct farm {
	struct farm_opts *o;
	struct group *g;
	int ng;
	struct run *r;
	int nr;
	struct journal j;
	struct joblock lock;     /* one farm per joblog (farm/joblock.h) */
	struct guard guard;      /* no task outlives gpupack (guard.h) */
	struct farm_queue q;     /* attempts to run again before new inputs (queue.c) */
	struct farm_stats st;
	struct gpu_backend *b;
	struct farm_auto *au;    /* -j auto on some device; NULL otherwise */
	int sigfd, devnull;
	int stop;                /* 0 running; 1 no new tasks; 2 end the running ones */
	double stop_at;          /* when a signal first told the farm to stop; 0: none did */
	unsigned long long dropped; /* attempts a stop ended: not recorded, --resume runs them */
	struct farm_halt ht;     /* --halt (finish.c) */
	int fatal;               /* an error ended launching: its exit code */
	struct tmpl cmd;         /* the command template */
	struct tmpl tagt;        /* --tag / --tagstring */
	struct tmpl wdt;         /* --wd DIR, expanded for each task (as parallel's) */
	struct tmpl *filt;       /* --filter, each (perl, values inserted as they are) */
	char shell[PATH_MAX];    /* what runs command lines that need a shell */
	struct farm_exec ex;     /* the command's program, found once (launch.c) */
	double next_start;       /* --delay: no task starts before this (monotonic) */
	struct farm_short sh;    /* starts that found no process, descriptor or memory (launch.c) */
	struct farm_runtimes rt; /* --timeout N%: the runtimes of the tasks that succeeded (finish.c) */
	unsigned long long total_tasks; /* counted ahead (--halt N%); 0: unknown */
	unsigned long long started;     /* attempts started (parallel's total_started) */
	struct farm_env envk;    /* every task's environment (launch.c) */
	struct held *held;
	struct farm_out ou;      /* gpupack's own output (deliver.c, progress) */
	struct progress prog;    /* --bar, --eta, --progress: the line on stderr (farm/progress.h) */
	struct nodes *nodes;     /* one farm over several gpupacks (farm/nodes.h), or NULL */
	struct farm_rf rfq;      /* --retry-failed: the tasks to run again (queue.c) */
	struct perl perl;        /* runs perl replacement strings (farm/perl.h); pid 0: not started */
	struct farm_results res; /* --results (setup.c, resdir.c, finish.c) */
	struct farm_usage *usage; /* what each task used (farm/usagefarm.h); NULL until sampled */
};

/* queue.c: tasks waiting to run */
void task_free(struct farm *f, struct task *t);
/* Put a task whose attempt failed back: suspects of a fault apart, to run alone. */
void queue_requeue(struct farm *f, struct task *t);
/*
 * Run t again for a reason of gpupack's own (why: for the warning when it
 * may not): first in line, --retries untouched. -1 when t had its
 * FARM_OWN_RERUNS already (the caller ends it).
 */
int queue_rerun_own(struct farm *f, struct task *t, const char *why);
/* The next task: a retry, else the next input of this shard not already in the joblog; NULL: none. */
struct task *queue_next(struct farm *f);
/*
 * Read the first task ahead, before the run changes anything (an input too
 * long for a command line is refused then): -1 with err set.
 */
int queue_peek(struct farm *f);
/* Free every task still waiting. */
void queue_free(struct farm *f);

/* launch.c: start tasks on free slots until none is free or nothing waits */
void launch_fill(struct farm *f, double now);
/* The time a running task may take (--timeout, N% of the median); 0: none. */
double launch_timeout(const struct farm *f);
/* --pipe: the bytes given to task t so far (the joblog's Send); 0 for any other task. */
unsigned long long farm_block_bytes(const struct farm *f, const struct task *t);

/* identity.c: which command a run is: the template, what groups its values, the kinds of
 * input sources (the joblog's, remembered counts'). */
uint64_t farm_identity(const struct farm_opts *o);

/* halt.c: stopping the farm (called by the rest; calls none of it back) */
/*
 * An error the run cannot go on with (err set): said once, as the run's
 * error line; no new task starts and the running ones are ended (the
 * journal will not record them: --resume runs them again). Exit 255.
 */
void halt_fatal(struct farm *f, double now);
/* Ask a task to end: under MPS terminate_client first; SIGTERM to its group; SIGKILL after a grace. */
void halt_terminate(struct run *r, double now);
/* The same without the server: SIGTERM to its group now, SIGKILL after the grace (a hung client). */
void halt_signal(struct run *r, double now);
void halt_terminate_all(struct farm *f, double now);
/*
 * A task's output could not be kept or written (errno e; what: where): its
 * attempt is not recorded. A full disk or a file-size limit stops new
 * starts, said once in one line that tells how to go on; exit 255.
 */
void halt_output_lost(struct farm *f, const char *what, int e);
/* A task counted done or failed whose record was not written after all. */
void halt_uncount(struct farm *f, int ok);

/* finish.c: ending tasks */
/* A task exited and its pipes are drained: retry it, or journal it and deliver its output. */
void finish_task(struct farm *f, struct run *r, double now);
/* Free the slot r holds (its descriptors, its output, its place in its group). */
void finish_release(struct farm *f, struct run *r, double now);
/* --timeout N%: a successful runtime into f->rt.median, the lower median of the last 999 (parallel's). */
void finish_record_runtime(struct farm *f, double secs);
/* A task's values for its templates, as if it ran on slot on gpu. */
void launch_vals(const struct farm *f, const struct task *t, int slot, const char *gpu, struct job_vals *v,
    int *status);

/* resdir.c: --results DIR */
/* Where parallel puts a task's files; tmp: what stdout and stderr are written as till its end. */
struct resdir {
	char *dir, *out, *err, *seq;
	char *tmp[2];
};
/* Open r's files (r->file[], r->res), its directory and seq file made. -1 with err set. */
int resdir_open(struct farm *f, struct run *r, const struct job_vals *v);
/* r's end is recorded: its files take their names, stdout last. -1 with err set. */
int resdir_keep(struct run *r);
/* r ends unrecorded: nothing of it says it ran (--resume runs it again). */
void resdir_forget(struct run *r);
void resdir_free(struct run *r);
/* --resume --results DIR: did task t run before (its stdout file is there, parallel's test)? */
int resdir_done(struct farm *f, const struct task *t);
/* --dry-run --results: as parallel, the task's directory with its seq and an empty stderr. */
int resdir_dry(struct farm *f, const struct task *t, const struct job_vals *v);

/* Where g's server log stood when its oldest running task started; -1 none runs. */
static inline long
farm_log_since(const struct farm *f, const struct group *g)
{
	long off = -1;

	for (int i = 0; i < f->nr; i++)
		if (f->r[i].g == g && f->r[i].task && (off < 0 || f->r[i].m.mps_off < off))
			off = f->r[i].m.mps_off;
	return off;
}

/* health.c: MPS faults of every kind (daemon death or hang, server death) */
/* Ask the daemons of devices with running tasks whether they are well (every FARM_MPS_PROBE s). */
void health_check(struct farm *f, double now);
/* May a task start on g now? Under MPS its daemon must be alive (checked, cheaply). */
int health_ready(struct farm *f, struct group *g, double now);
/* A task started on g: its server (started for it) is looked for soon. */
void health_started(struct group *g, double now);
/* When a daemon is to be asked next (0: none is). */
double health_next(const struct farm *f);
/* An attempt on an MPS device failed: was its daemon or server the cause? 1: r->lost is set. */
int health_task_failed(struct farm *f, struct run *r, double now);
/* How many other attempts of ours its server has: running, or ended and waiting. */
int health_others(const struct farm *f, const struct run *r);
/* r's end waits to see what a fault took: its neighbours are watched for a hang meanwhile. */
void health_fault_held(struct farm *f, struct run *r, double now);
/* A failure on g saw a fault in its server's log (g->h.fault_at, for farm_mps_blocked and _stuck). */
void health_fault_seen(struct group *g, double now);
/* A fault on g within the grace: nothing is stopped at the GPU's door (-j auto). */
int health_door_shut(const struct group *g, double now);
/* An attempt on g failed saying its GPU context died of a fault: its neighbours are watched for a hang. */
void health_fault_said(struct farm *f, struct run *r, double now);
/* Did the fault that ended r stay its own (others that ran beside it ran on)? */
int health_fault_contained(const struct farm *f, const struct run *r);
/* Is r's the first failure of the fault it shows (1), or a victim of one another showed first (0)? */
int health_fault_first(struct run *r, double now);

/* deliver.c: finished output to stdout and stderr */
/* Hand a finished task's output on: now, or in seq order under -k (out is emptied). */
void deliver(struct farm *f, unsigned long long seq, struct obuf out[2]);
/* Seqs from .. to - 1 print nothing here: -k does not wait for them. */
void deliver_gap(struct farm *f, unsigned long long from, unsigned long long to);
/* The same, then its joblog record once the output is written (ok: counted as done). */
void deliver_done(struct farm *f, const struct joblog_rec *rec, int ok, struct obuf out[2]);
/* Print what -k holds: what is due, or everything (all). */
void deliver_flush(struct farm *f, int all);
/* --line-buffer: print the whole lines task r wrote so far (all of them when last). */
void deliver_lines(struct farm *f, struct run *r, int last);

/* setup.c: building the run and taking it down */
int setup_signals(struct farm *f, sigset_t *old);
/* Options, devices, slots, inputs, MPS daemons, joblog. -1 with err set. */
int setup_prepare(struct farm *f, struct gpu_backend *b);
/* End what is left (an error path), stop our daemons, close and free everything. */
void setup_cleanup(struct farm *f);

/* Close *fd if open, and mark it closed. */
static inline void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

#endif
