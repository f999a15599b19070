/*
 * pipe: GNU parallel's --pipe and --pipe-part. The data (stdin, or the
 * file of -a for --pipe-part) is cut into blocks of whole records as
 * parallel cuts it (--block, --recend, --recstart, --regexp, -N records,
 * -L lines, --header repeated at each block, --rrs), by a perl process of
 * gpupack's own (the record separators are perl regexes under --regexp).
 * Each block goes to a temporary file that is one task's stdin, and is
 * removed when the task ends. --tee gives every task all of stdin; --cat
 * gives a task its block as a file, {}.
 *
 * Spreading (--round-robin, --bin): a task per slot, started once, reads a
 * fifo of its own (the value, in a private directory) that the perl
 * process writes to: --round-robin the blocks in turn, --bin each line to
 * the slot its value names. The perl process announces a slot when it first
 * gives it data (--bin: every slot at the start); gpupack holds each fifo's
 * read end until that slot's task has opened its own (pipe_release), so
 * the writer never blocks on a fifo that no one will read, and a task that
 * ends early turns its writes into EPIPE. What each task was given (the
 * joblog's Send) is counted by the perl process in DIR/sent. --group-by
 * puts a perl filter before the cutting: a record is a run of lines of one
 * value.
 */
#ifndef GPUPACK_FARM_PIPE_H
#define GPUPACK_FARM_PIPE_H

#include <stdio.h>
#include <sys/types.h>

struct pipe_opts {
	int on;               /* --pipe (or --pipe-part) */
	int part;             /* --pipe-part: the -a file's parts */
	const char *file;     /* --pipe-part: that file */
	const char *block;    /* --block SIZE as given; NULL: 1M (--pipe-part: -10) */
	const char *recstart, *recend;
	int regexp, rrs, tee, cat;
	const char *header;   /* --header: a regex or a number of lines */
	long records;         /* -N: records a block; 0 as many as fit */
	long lines;           /* -L: lines a record */
	int skip_first, skip_empty;
	int round_robin;      /* --round-robin: blocks spread over the tasks, started once */
	const char *bin;      /* --bin COL [PERL]: each line to the slot its value names */
	const char *group_by; /* --group-by COL [PERL]: a record is a run of lines of one value */
	const char *colsep;   /* --colsep as given (a perl regex), for --bin and --group-by */
};

/* Spreading: none, --round-robin's blocks, --bin's lines. */
enum { PIPE_BLOCKS, PIPE_ROUND_ROBIN, PIPE_BIN };

/* Which way the data goes to tasks under o (PIPE_BLOCKS unless spread). */
int pipe_spread(const struct pipe_opts *o);

struct pipe_src {
	pid_t pid;
	FILE *from;           /* the blocks, framed: "<len>\n<bytes>" */
	int eof;
	pid_t filter;         /* --group-by's perl filter before the cutting, or 0 */
	int spread;           /* PIPE_BLOCKS, PIPE_ROUND_ROBIN, PIPE_BIN */
	int nslots;           /* spreading: the tasks, one a slot */
	int announced;        /* spreading: the slots given to tasks so far */
	char *dir;            /* spreading: the fifos 1..nslots and sent (owned) */
	int *rd;              /* spreading: each fifo's read end until its task has it (-1 then) */
};

/* Start cutting (slots: the run's, for --pipe-part's -N blocks). -1 with err set. */
int pipe_open(struct pipe_src *p, const struct pipe_opts *o, int slots);
/* The next block in a new temporary file: 1 (*path malloc'd), 0 the end, -1 error (err set). */
int pipe_next(struct pipe_src *p, char **path);
/* The end of the values: the blocks stop, the spreading goes on (pipe_free ends it). */
void pipe_close(struct pipe_src *p);
/* The run is over: end what is left (the perl processes, the fifos). */
void pipe_free(struct pipe_src *p);
/* Spreading: the task of fifo path has opened it (or will never run): gpupack's read end goes. */
void pipe_release(struct pipe_src *p, const char *path);
/* The bytes given to the task whose value is path: a block's size, a fifo's count so far. */
unsigned long long pipe_sent(const char *path);
/* --tee: all of stdin in a temporary file (*path malloc'd). -1 with err set. */
int pipe_tee_file(char **path);

#endif
