/*
 * progress: what a run reports about itself. While it runs, on stderr
 * when that is a terminal: --bar (GNU parallel's bar: percentage,
 * done:left=ETA, the newest task's input, in reverse video as far as it
 * got, with each device's running/limit), --eta and --progress (parallel's
 * status line, a device for each of its computers). The line is redrawn in
 * place and is cleared before any task output is printed, so that output
 * never joins it. At the end: the summary (a line on stderr, or one JSON
 * object with --json).
 */
#ifndef GPUPACK_FARM_PROGRESS_H
#define GPUPACK_FARM_PROGRESS_H

#include <stdio.h>

#include "farm/slot.h"
#include "util/str.h"

struct farm_usage;

struct farm_stats {
	unsigned long long inputs;   /* tasks read so far */
	int inputs_done;             /* the input is exhausted: inputs is the total */
	unsigned long long total;    /* tasks in all when known before they are read (--total-jobs,
	                                inputs read ahead); 0: not known */
	unsigned long long done, failed, skipped, retried, fault_retries;
	unsigned long long reruns;   /* attempts run again for gpupack's own reasons (queue_rerun_own) */
	struct {
		const char *why;     /* a static string: "out of memory", ... */
		unsigned long long n;
	} rerun_why[8];
	unsigned long long others;   /* inputs of other shards (--shard), not run here */
	unsigned long shard_k, shard_n;
	int running;
	double t0, t_end;            /* monotonic seconds */
	int share;
	int exit_status;
	int interrupted;             /* stopped by a signal or --halt */
	long max_rss_kib;            /* gpupack's own peak memory */
	int simulated;               /* the devices were simulated (--sim): said in the summary */
	const struct farm_usage *usage; /* per-task usage and the bound (farm/usagefarm.h); NULL none */
};

enum { PROGRESS_NONE, PROGRESS_BAR, PROGRESS_ETA, PROGRESS_PLAIN };

/* The line's state between draws (zero it to start). */
struct progress {
	int mode;                    /* PROGRESS_* */
	double smoothed;
	long last_eta;
	int drawn;                   /* the line is on the terminal now */
	int midline;                 /* task output left the terminal's cursor mid-line */
	int header_done;             /* --eta's and --progress's header lines */
	int tty[3];                  /* fd 1, 2 are terminals (-1: not looked at yet) */
};

/* Tasks to run here in all (0: not known yet), and the ETA in seconds parallel's way (smoothed). */
unsigned long long progress_total(const struct farm_stats *s);
long progress_eta(struct progress *p, const struct farm_stats *s, double now);
/* parallel's seconds_to_time_units: 3s, 4m05s, 2h03m04s, 1d02h03m04s */
void progress_dhms(long s, char *buf, size_t size);
/*
 * The line, cols wide, into out: the bar (with its reverse video), or the
 * status line of --eta and --progress. arg: the newest task's input.
 */
void progress_line(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now, const char *arg, int cols, struct sbuf *out);
/* Draw it again on stderr, on a line of its own (a terminal only). */
void progress_draw(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now, const char *arg);
/* Task output is about to be printed: clear the line. */
void progress_pause(struct progress *p);
/* Task output was printed on fd: ending (nl) or not ending a line. */
void progress_wrote(struct progress *p, int fd, int nl);
/* The run ended: the line drawn a last time, for good (as parallel leaves it). */
void progress_end(struct progress *p, const struct farm_stats *s, const struct group *g, int ng,
    double now);

/* A device's short name: its index, "0.1" for the second MIG device of GPU 0. */
void progress_label(const struct group *g, int ng, int i, char *buf, size_t size);
/* Busy share of each group over the makespan, 0..1. */
double progress_busy_share(const struct group *g, const struct farm_stats *s);
/* The summary line (stderr). */
void progress_summary(const struct farm_stats *s, const struct group *g, int ng, FILE *f);
/* The summary as one JSON object. */
int progress_json(const struct farm_stats *s, const struct group *g, int ng, FILE *f);

#endif
