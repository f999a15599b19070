/*
 * pipe: GNU parallel's --pipe and --pipe-part. The data (stdin, or the
 * file of -a for --pipe-part) is cut into blocks of whole records as
 * parallel cuts it (--block, --recend, --recstart, --regexp, -N records,
 * -L lines, --header repeated at each block, --rrs), by a perl process of
 * gpupack's own (the record separators are perl regexes under --regexp).
 * Each block goes to a temporary file that is one task's stdin, and is
 * removed when the task ends. --tee gives every task all of stdin; --cat
 * gives a task its block as a file, {}.
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
};

struct pipe_src {
	pid_t pid;
	FILE *from;           /* the blocks, framed: "<len>\n<bytes>" */
	int eof;
};

/* Start cutting (slots: the run's, for --pipe-part's -N blocks). -1 with err set. */
int pipe_open(struct pipe_src *p, const struct pipe_opts *o, int slots);
/* The next block in a new temporary file: 1 (*path malloc'd), 0 the end, -1 error (err set). */
int pipe_next(struct pipe_src *p, char **path);
void pipe_close(struct pipe_src *p);
/* --tee: all of stdin in a temporary file (*path malloc'd). -1 with err set. */
int pipe_tee_file(char **path);

#endif
