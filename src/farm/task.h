/*
 * task: records (farm/input.h) grouped into tasks, numbered {#} in order.
 * One record per task, as GNU parallel; -n N and -N N take up to N records;
 * -X, -m and --xargs as many as a command line holds (CMDLINE_MAX by
 * parallel's own estimate), and -X and -m spread what is left at the end of
 * the input evenly over the slots. --shuf reads every record first and runs
 * them in a random order.
 */
#ifndef GPUPACK_FARM_TASK_H
#define GPUPACK_FARM_TASK_H

#include "farm/cmdline.h"
#include "farm/input.h"

struct task_src {
	struct inputs in;
	int max_args;            /* -n, -N: records per task; 0: unbounded (with fill) */
	int fill;                /* -X, -m, --xargs: as many records as the line holds */
	int spread;              /* -X, -m: spread the last records over the slots */
	int noarg;               /* -N0: records are read, values not inserted */
	int slots;               /* every slot of the run, for the spread */
	int shuffle;             /* --shuf */
	int max_len;             /* -s: the longest command line (0: CMDLINE_MAX) */
	const struct tmpl *cmd;  /* the command, for the length estimate */
	/* state */
	struct record *q;        /* records read ahead or put back, q[qhead..qn) */
	size_t qhead, qn, qcap;
	int input_done;
	int spread_done;
	unsigned long long seq;
	unsigned long long records; /* records taken so far */
};

/* One task's inputs. */
struct targs {
	struct record *rec;
	int nrec;
	char **flat;             /* every value of every record, in order (borrowed) */
	int nflat;
};

void tasks_init(struct task_src *ts);
/* Open the inputs (and with --shuf read and shuffle them all). -1 with err set. */
int tasks_open(struct task_src *ts);
/*
 * The next task: 1 (a, *seq), 0 none left, -1 an error with err set: a read
 * error, or a command line longer than CMDLINE_MAX (parallel refuses it too).
 */
int tasks_next(struct task_src *ts, struct targs *a, unsigned long long *seq);
/* Read every record ahead to count the tasks (parallel does for --halt N% and --shuf). */
int tasks_count(struct task_src *ts, unsigned long long *total);
/* --bar, --eta: inputs read ahead to know the total, at most this many bytes of them */
#define FARM_READ_AHEAD (64u << 20)
/*
 * Read records ahead, while they hold less than max bytes, to count the
 * tasks (--bar, --eta): 1 the input ended (*total is the count), 0 it did
 * not (the records read stay queued), -1 error.
 */
int tasks_count_upto(struct task_src *ts, size_t max, unsigned long long *total);
void targs_free(struct targs *a);
void tasks_free(struct task_src *ts);

#endif
