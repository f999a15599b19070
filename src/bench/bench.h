/*
 * bench: the measurement layer behind `gpupack bench` (cmd -> bench ->
 * farm/share -> gpu -> util). It runs the exercises, keeps every repeat of
 * every point, and turns medians into tables, JSON, SVG charts and a
 * recommendation. cmd/bench.c only parses the command line and calls
 * bench_run() and the writers.
 *
 * A point is one configuration measured: exercise x size x mode x P.
 * A repeat of a point starts all its workers at one shared instant, so that
 * they really overlap, and its throughput is the sum of their work over the
 * span from the first start to the last end.
 */
#ifndef GPUPACK_BENCH_BENCH_H
#define GPUPACK_BENCH_BENCH_H

#include <signal.h>
#include <stdio.h>

#include "bench/stats.h"
#include "gpu/energy.h"
#include "gpu/select.h"

#define BENCH_MAX_REPEATS 32
/*
 * A point whose repeats are too short for the energy counter may run its
 * work once more, lengthened, for at most this many times the timed time
 * the plan gave it (--repeats x --time); and its lengthened run aims this
 * much above the counter's GPU_ENERGY_MIN_UPDATES updates.
 */
#define BENCH_ENERGY_GROW 4
#define BENCH_ENERGY_AIM 1.1
#define BENCH_MAX_LIST 16

enum bench_mode {
	BM_TIMESLICE,  /* P processes, no MPS: the driver time-slices them (P 1: one process) */
	BM_MPS,        /* P processes, clients of one private MPS daemon */
	BM_STREAMS,    /* one process, P streams */
	BM_BATCHED,    /* one process, one strided-batched call over P matrices */
	BM_MPS_CAPPED, /* P MPS clients, each capped at 100/P percent of the SMs */
	BM_NMODES
};

enum bench_exercise_id { EX_MATMUL = 1, EX_MIXED = 2, EX_CAPS = 3, EX_COMMAND = 4, EX_MAX = 4 };

struct bench_point {
	int size;        /* matrix size N (0 in exercise 4) */
	int procs;       /* P */
	int mode;        /* enum bench_mode */
	long iters;      /* per worker (tasks per repeat in exercise 4) */
	int nrep;
	double value[BENCH_MAX_REPEATS];    /* throughput of each repeat (TFLOP/s, tasks/h) */
	double elapsed[BENCH_MAX_REPEATS];  /* seconds from the first start to the last end */
	double skew[BENCH_MAX_REPEATS];     /* seconds between the first and the last start */
	int retries;     /* repeats measured again (late workers) */
	int noisy;       /* its first repeats spread more than noisy_spread: measured up to max_repeats */
	int late_kept;   /* repeats kept although still late after the retries */
	char *error;     /* why the point failed (malloc'd), or NULL */
	struct stats st;
	/*
	 * Joules each repeat took: per task in exercise 4 (gpupack run's
	 * j_per_task), for the repeat's work in the others (the same work at
	 * every P); NAN where the GPU keeps no energy counter.
	 */
	double energy[BENCH_MAX_REPEATS];
	double ewindow[BENCH_MAX_REPEATS];  /* seconds between the counter's two reads; NAN none */
	/*
	 * The J: the median of the repeats where each spans enough counter
	 * updates; else the mean of epooled repeats summed (est.n 1); else
	 * none (est.n 0, printed -).
	 */
	struct stats est;
	int epooled;
	/*
	 * Where the repeats are too short for the counter: the point's work
	 * run once more, elong times over (bench_energy_factor), for a window
	 * that spans enough updates alone. elong 0: none run; elong_j and
	 * elong_window the last such run's joules (all of them, NAN unknown)
	 * and window, elong_plan the seconds it was to take; elong_s the
	 * seconds such runs took, against the budget; elong_runs how many.
	 */
	int elong, elong_runs;
	double elong_j, elong_window, elong_plan, elong_s;
	const char *reused_from;  /* exercise 3: the exercise whose same point this is, or NULL */
	double setup_s;  /* the longest time from a command sent to the last worker ready */
	double margin_s; /* the margin of the last repeat: seconds from the command to the shared start */
};

/* What one exercise recommends for one size. */
struct bench_rec {
	int valid;
	int size;
	int mode, procs;         /* the recommendation */
	double value;            /* its median */
	int best_mode, best_procs;
	double best;             /* the best median measured */
	double one;              /* one process (timeslice, P 1) */
	double timeslice;        /* time-slicing at the same P */
	double gain_one;         /* value / one */
	double gain_timeslice;   /* value / timeslice */
	int energy_mode, energy_procs; /* the point with the fewest joules (median); energy NAN: none */
	double energy, energy_value;   /* its joules, and its throughput */
	/*
	 * 1 when its joules are below every other point's by more than the
	 * spread (the larger of the two points'); 0: none is clearly lower,
	 * energy_next the nearest other, energy_spread the spread it is within.
	 */
	int energy_clear;
	int energy_next_mode, energy_next_procs;
	double energy_next, energy_spread;
};

struct bench_exercise {
	int id;                  /* enum bench_exercise_id */
	const char *name;        /* "matmul", "mixed", "caps", "command" */
	const char *title;
	const char *unit;        /* "TFLOP/s", "tasks/h" */
	unsigned modes;          /* 1 << enum bench_mode */
	int cpu_ms;
	int nsizes;
	int sizes[BENCH_MAX_LIST];
	long iters1[BENCH_MAX_LIST];          /* per size: iterations of one process (calibrated) */
	int npts;
	struct bench_point *pts;
	size_t cap;
	struct bench_rec rec[BENCH_MAX_LIST];  /* one per size */
};

struct bench_config {
	int quick;
	int nsizes, sizes[BENCH_MAX_LIST];       /* exercises 1 and 3 */
	int nprocs, procs[BENCH_MAX_LIST];
	unsigned modes;                          /* exercises 1 and 2 */
	unsigned exercises;                      /* 1 << enum bench_exercise_id */
	int repeats;
	int max_repeats;                         /* noisy points: measured again up to this many */
	double noisy_spread;                     /* spread of the first repeats that makes a point noisy */
	double target_s;                         /* timed part of each point */
	double margin_fixed;                     /* --margin: seconds before the shared start */
	double margin_base, margin_per_proc;     /* the guess until a setup time is measured */
	double timeout_s;                        /* one repeat of one point */
	int cpu_ms;                              /* exercise 2 */
	int mixed_size;                          /* exercise 2; 0: the middle size */
	int ncaps_sizes, caps_sizes[BENCH_MAX_LIST]; /* exercise 3 as given (--caps-sizes) */
	int caps_count;                          /* else the smallest this many sizes */
	char **cmd;                              /* exercise 4: the user's command */
	int ncmd;
	int tasks;                               /* exercise 4: tasks per point */
	const char *work;                        /* the gpupack-work binary */
	const char *self;                        /* gpupack itself (exercise 4) */
	const char *sim;                         /* --sim, passed on to gpupack run */
	int verbose;                             /* progress lines on stderr */
};

struct bench_setup {
	char gpu_name[96];
	char uuid[96];
	int gpu_index;
	char driver[32];
	char cuda[16];
	char backend[300];
	char date[32];           /* ISO 8601, UTC */
	char host[64];
	char *cmdline;           /* malloc'd */
	char work_device[96];    /* the device name the worker reported */
	double work_runtime;     /* its CUDA runtime version, when it reported one */
	int mps_started;         /* bench started (and stopped) its own MPS daemon */
	int simulated;           /* --sim: no GPU measured (the model, or a worker of one's own) */
	int uuid_warned;         /* a worker reported another device (said once) */
};

/*
 * The simulated GPU (model.c): under --sim, without a worker of one's own
 * ($GPUPACK_WORK), every point comes from this model; no worker runs.
 */
struct bench_model {
	int on;
	int sms, lanes;          /* SMs of the device (or MIG device), FP32 lanes per SM */
	int known;               /* the compute capability was in the model's table */
	double ghz;              /* boost clock */
	double peak, rate;       /* FLOP/s: FP32 peak, and what SGEMM sustains */
	double call_s;           /* what a call costs besides its work */
};

struct mps_daemon;
struct bench_pool;
struct gpu_backend;

struct bench_run {
	struct bench_config cfg;
	struct bench_setup setup;
	struct bench_model model;
	struct gpu_target target;
	struct gpu_backend *b;   /* the GPU's energy counter is read through it; NULL none */
	struct gpu_energy_res eres; /* its resolution, measured at start (bench_energy_resolution) */
	int eres_ok;             /* 1 where known: else no repeat's joules are trusted */
	struct mps_daemon *mps;  /* NULL until an MPS point needs it */
	char *mps_error;         /* why it could not be started (malloc'd), or NULL */
	int mps_code;
	int nex;
	struct bench_exercise ex[EX_MAX];
	double setup1;                       /* one worker's setup time (calibration), 0 unknown */
	/*
	 * per [MPS or not][worker slot: 0 one process, 1 + i P = procs[i]]: the
	 * longest time from a command sent to the last worker ready (its
	 * t_ready); 0 not seen yet
	 */
	double setup_seen[2][BENCH_MAX_LIST + 1];
	/*
	 * Serve workers kept for the whole run (runner_pool.c): [0] plain processes,
	 * [1] MPS clients; NULL until a point needs them. Capped clients get
	 * workers of their own for each repeat: a client's cap is fixed when
	 * its context is made.
	 */
	struct bench_pool *pool[2];
	double pool_ready_s;                 /* the longest a group of workers took to be ready */
	int pools_started;                   /* groups of workers started, capped ones included */
	int failed;                          /* points that failed */
	int done, total;                     /* repeats of points, for progress */
	double wall_s;                       /* how long bench_measure took */
};

/* Set by the SIGINT/SIGTERM handler the command installs; checked everywhere we wait. */
extern volatile sig_atomic_t bench_interrupted;

const char *bench_mode_name(int mode);
/* "timeslice" -> BM_TIMESLICE; -1 when unknown. */
int bench_mode_parse(const char *s);

/* Defaults for a full run or --quick. */
void bench_config_defaults(struct bench_config *c, int quick);

/* Set up the exercises the configuration asks for (no measuring). */
void bench_init(struct bench_run *r);
/* Measure everything; -1 with err set (130 is not used here: see bench_interrupted). */
int bench_measure(struct bench_run *r);
/* Exercise 4, one repeat of every point (command.c). */
int bench_measure_command(struct bench_run *r, struct bench_exercise *e);
/* Does exercise e measure mode at P? (P 1 of streams, batched, capped alias one process) */
int bench_wanted(const struct bench_exercise *e, int mode, int procs);
/* Record one repeat (and say so when verbose); record a failed point from err_msg(). */
void bench_note_repeat(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p,
    double value, double elapsed, double skew);
void bench_point_fail(struct bench_run *r, const struct bench_exercise *e, struct bench_point *p);
/* The joules of the repeat just noted over a window of window_s seconds (NAN unknown). */
void bench_note_energy(struct bench_point *p, double joules, double window_s);
/* Measure the energy counter's resolution into r->eres (-1: not known; nothing is trusted). */
int bench_energy_resolution(struct bench_run *r);
/*
 * A point's J from its repeats' joules and windows: est of those when each
 * window is long enough for res; else their mean when their sum is (pooled
 * the count summed); else est.n 0.
 */
/*
 * How many times its work a point's lengthened run does so that its window
 * alone spans BENCH_ENERGY_AIM x the updates a J needs: from the median of
 * its repeats' times, or the last lengthened run's window where one fell
 * short. 0 where none is needed (its repeats, or a lengthened run, already
 * span them), none can help (resolution unknown, no counter, nothing
 * measured, the last run read no joules or took under half its plan: its
 * time does not follow its work) or it would take longer than budget_s. *plan_s: the seconds the run should take (0 with 0).
 */
int bench_energy_factor(const struct gpu_energy_res *res, const struct bench_point *p, double budget_s,
    double *plan_s);
/* The seconds a point's lengthened runs may take in all: BENCH_ENERGY_GROW x repeats x target. */
double bench_energy_budget(const struct bench_config *c);
/*
 * p->est and p->epooled from its repeats and its lengthened run: the
 * repeats' J where each spans enough updates; else the lengthened run's
 * joules over its factor where its window does; else the repeats summed
 * (bench_energy_stats); else none.
 */
void bench_energy_point(const struct gpu_energy_res *res, struct bench_point *p);
/* rec's energy fields from e's points at size (bench_recommend calls it). */
void bench_recommend_energy(const struct bench_exercise *e, int size, struct bench_rec *rec);
void bench_energy_stats(const struct gpu_energy_res *res, const double *joules, const double *window, int n,
    struct stats *est, int *pooled);
/* The GPU's energy counter now, in joules; NAN where there is none. */
double bench_energy_now(struct bench_run *r);
/* Stop the MPS daemon bench started, if any (safe to call twice). */
void bench_cleanup(struct bench_run *r);
/* Medians, spreads and recommendations from the repeats measured so far. */
void bench_summarize(struct bench_run *r);
void bench_free(struct bench_run *r);

/* Points: find one, resolving P-1 aliases (streams and batched at P 1 are one process). */
const struct bench_point *bench_point_get(const struct bench_exercise *e, int size, int mode,
    int procs);
struct bench_point *bench_point_add(struct bench_exercise *e, int size, int mode, int procs);
/* The single-process limit at (size, P): the better of batched and streams; NaN if unmeasured. */
double bench_limit(const struct bench_exercise *e, int size, int procs);

/* The limit for an exercise that measures none itself (caps): exercise 1's at that size. */
double bench_limit_for(const struct bench_run *r, const struct bench_exercise *e, int size,
    int procs);

/* The simulated GPU (model.c): a device of sms SMs and that compute capability. */
void bench_model_init(struct bench_model *m, int sms, int cc_major, int cc_minor);
/* Seconds a matmul of N x N takes at the point, aggregate (cpu_ms of CPU work between calls). */
double bench_model_call_s(const struct bench_model *m, int size, int mode, int procs, int cpu_ms);

/* Recommendation for one size of one exercise (recommend.c). */
void bench_recommend(const struct bench_exercise *e, int size, struct bench_rec *rec);

/* Writers (report.c, svg.c). */
void bench_print_tables(const struct bench_run *r, FILE *f);
int bench_write_json(const struct bench_run *r, FILE *f);
int bench_write_svg(const struct bench_run *r, const struct bench_exercise *e, FILE *f);
/* table.txt, bench.json and <exercise>.svg into dir (created private if missing). */
int bench_write_dir(const struct bench_run *r, const char *dir);
/* Only <exercise>.svg into dir. */
int bench_write_svgs(const struct bench_run *r, const char *dir);

#endif
