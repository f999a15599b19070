/*
 * farm: the task farm behind `gpupack run`. cmd/run.c fills a farm_opts from
 * the command line; farm_run() places, spawns, reaps, retries, journals and
 * reports, and returns the exit status (GNU parallel's codes for the tasks).
 */
#ifndef GPUPACK_FARM_FARM_H
#define GPUPACK_FARM_FARM_H

#include <stdint.h>

#include "farm/task.h"
#include "farm/cmdline.h"
#include "farm/hostlimit.h"
#include "farm/joblog.h"
#include "farm/pipe.h"
#include "gpu/backend.h"

/*
 * Any error other than failed tasks (bad usage, no device, an unwritable
 * joblog, a signal that stopped the run early): GNU parallel's 255. The
 * one-line message says which.
 */
#define FARM_EXIT_ERROR 255

enum share_mode { SHARE_DEFAULT = -1, SHARE_EXCLUSIVE, SHARE_TIMESLICE, SHARE_MPS };

enum halt_when { HALT_NEVER, HALT_SOON, HALT_NOW };
enum halt_on { HALT_ON_FAIL, HALT_ON_SUCCESS, HALT_ON_DONE };

/*
 * -j's forms, per device: not given (auto, but under exclusive); N; 0 (as
 * many as fit); N%, +N, -N of the share mode's fixed default; auto[:N].
 */
enum jobs_form { JOBS_DEFAULT, JOBS_COUNT, JOBS_MAX, JOBS_PCT, JOBS_PLUS, JOBS_MINUS, JOBS_AUTO };

struct farm_opts {
	char **cmd;              /* the command template (none: the inputs are the commands) */
	int ncmd;
	int shell;               /* --shell: accepted; lines always run as GNU parallel runs them */
	int quote_all;           /* -q: the template's own words are quoted too */
	const char *rpl[RPL_N];  /* -I STR, --extensionreplace STR, ...: renamed replacement strings */
	int plus;                /* --plus: parallel's further replacement strings */
	char **rpl_defs;         /* --rpl 'TAG perl-expression' */
	int nrpl_defs;
	const char *parens;      /* --parens */
	char **filters;          /* --filter: perl that decides whether a task runs */
	int nfilters;
	struct pipe_opts pipe;   /* --pipe, --pipe-part: blocks of data on the tasks' stdin */
	struct hostlimit host;   /* --load, --noswap, --memfree */
	char *tee_file;          /* --tee: stdin in a file, every task's stdin (owned) */
	int context;             /* -X, -N: a replacement string's word repeats per value */
	int trim;                /* --trim (enum trim_mode) */
	struct task_src ts;      /* inputs, and records grouped into tasks */
	const char *gpus;        /* --gpus SEL, or NULL */
	int share;               /* enum share_mode */
	int jobs;                /* -j N per device */
	int jobs_form;           /* enum jobs_form: how jobs_arg modifies the default */
	double jobs_arg;
	int jobs_auto;           /* the controller chooses: the farm sets it (JOBS_AUTO, or the default) */
	int auto_max;            /* -j auto:N; 0: the controller's own cap (FARM_AUTO_MAX) */
	int auto_energy;         /* -j auto:energy: the fewest joules per task near the best rate */
	int total;               /* --total; 0: no cap */
	uint64_t mem;            /* --mem per task; 0: not given */
	double sm_pct;           /* --sm; 0: not given */
	char **env;              /* --env NAME=VALUE */
	int nenv;
	struct joblog_desc joblog; /* --joblog, described once the options are read (farm/joblog.h) */
	int resume, resume_failed;
	int retry_failed;        /* --retry-failed: the joblog's failed command lines, again */
	int retries;             /* tries in all (GNU parallel's --retries); 0: not given */
	double timeout;          /* seconds; 0: none */
	double timeout_pct;      /* --timeout N%: N% of the median successful runtime; 0: none */
	double delay;            /* --delay: seconds between two starts */
	int halt_when;           /* enum halt_when */
	int halt_on;             /* enum halt_on */
	long halt_count;         /* N, or 0 */
	double halt_pct;         /* N%, or 0 */
	const char *results;     /* --results DIR */
	int keep_order;          /* -k */
	int tag;                 /* --tag, --tagstring */
	int color;               /* --ctag, --ctagstring, --color: parallel's colour a task */
	const char *tagstring;   /* NULL: {} */
	int verbose;             /* -v: each command line before its output, on stdout */
	int print_commands;      /* -t: each command line on stderr as it starts */
	int line_buffer;         /* --line-buffer: whole lines as they come */
	int ungroup;             /* -u: output as it comes, not grouped */
	const char *workdir;     /* --wd DIR: where tasks run */
	const char *slot_var;    /* --process-slot-var NAME: NAME={%} - 1 in each task */
	int nice;                /* --nice N */
	int bar, eta, progress, json, summary;
	int dry_run;             /* print each command instead of running it */
	int shellquote;          /* --shellquote: print each input quoted, run nothing */
	int files;               /* --files: each task's stdout in a file, its name printed */
	long total_jobs;         /* --total-jobs: the count --bar and --eta show; 0: not given */
	int sources_given;       /* ::: :::: or -a: stdin is not read for inputs */
	unsigned long shard_k;   /* --shard K/N: this instance runs inputs with (seq - 1) % N == K */
	unsigned long shard_n;   /* 0: no --shard */
};

const char *share_name(int share);
/* Parse "now,fail=3", "soon,fail=10%", "now,done=5", "never", "2" (GNU parallel's forms). */
int parse_halt(const char *s, struct farm_opts *o);
/*
 * Parse -j: auto (the controller chooses), auto:N (at most N), or as GNU
 * parallel writes it: N, 0 (as many as fit), N% of the default, +N and -N
 * from the default (the share mode's fixed count: see jobs_per_device).
 */
int parse_jobs(const char *s, struct farm_opts *o);
/* Slots per device that -j asks for, under this share mode (packing may give fewer). */
int jobs_per_device(const struct farm_opts *o, int share);
struct group;
/*
 * -j's relative forms (N%, +N, -N, 0) count from gpupack's slots per device,
 * not parallel's CPUs: say what they came to (a line on stderr).
 */
void jobs_note(const struct farm_opts *o, int share, const struct group *g, int ng);
/* --timeout DURATION or N%. */
int parse_timeout(const char *s, struct farm_opts *o);
/*
 * Parse --shard: "K/N" (0 <= K < N, K counting from 0 as SLURM_PROCID does)
 * or "slurm" ($SLURM_PROCID of $SLURM_NTASKS, as under srun).
 */
int parse_shard(const char *s, struct farm_opts *o);

/* Run the farm on the devices of backend b. */
int farm_run(struct farm_opts *o, struct gpu_backend *b);

/*
 * Block the signals the farm reads through its signalfd. Call it before
 * the GPU backend is opened: threads a library starts (NVML does) inherit
 * the mask and so cannot take those signals away from the farm.
 */
void farm_block_signals(void);

#endif
