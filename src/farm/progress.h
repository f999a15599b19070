/*
 * progress: what a run reports about itself: --bar / --eta on stderr while
 * it runs, and the final summary (a line on stderr, or one JSON object on
 * stdout with --json).
 */
#ifndef GPUPACK_FARM_PROGRESS_H
#define GPUPACK_FARM_PROGRESS_H

#include <stdio.h>

#include "farm/slot.h"

struct farm_stats {
	unsigned long long inputs;   /* tasks read so far */
	int inputs_done;             /* the input is exhausted: inputs is the total */
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
};

/* One progress line (no newline) into buf. */
void progress_line(const struct farm_stats *s, const struct group *g, int ng, int bar, double now,
    char *buf, size_t size);
/* Redraw the line on stderr (\r, clear to end). */
void progress_draw(const struct farm_stats *s, const struct group *g, int ng, int bar, double now);
void progress_clear(void);

/* Busy share of each group over the makespan, 0..1. */
double progress_busy_share(const struct group *g, const struct farm_stats *s);
/* The summary line (stderr). */
void progress_summary(const struct farm_stats *s, const struct group *g, int ng, FILE *f);
/* The summary as one JSON object (stdout). */
int progress_json(const struct farm_stats *s, const struct group *g, int ng, FILE *f);

#endif
