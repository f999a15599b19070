/*
 * journal: the joblog, in GNU parallel's exact columns, written at each
 * task's end and fdatasync'd there, so that it is also the run's journal:
 * after gpupack is killed (even with -9), --resume finds every task that
 * ended (done or failed) and runs only the others.
 *
 * Beside FILE, FILE.gpupack records a hash of the command template and the
 * input sources; --resume refuses a joblog written for another command.
 */
#ifndef GPUPACK_FARM_JOURNAL_H
#define GPUPACK_FARM_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/str.h"

struct journal {
	int fd;                 /* -1: no joblog */
	char *path;
	uint8_t *seen, *ok;     /* bit per seq: has an end record; its last record succeeded */
	size_t nbits;
	int resume, resume_failed;
	int to_stdout;          /* --joblog -: records go with each task's output */
};

struct joblog_rec {
	unsigned long long seq;
	double start, runtime;  /* epoch seconds; seconds */
	unsigned long long received;
	int exitval, signal;
	const char *command;
	const char *host;       /* the Host column; NULL: ":" (this machine, as parallel writes it) */
};

/*
 * Open path (append when append or resuming; else truncate and write the
 * header). identity: the run's hash (0: neither checked nor recorded, for
 * --retry-failed). -1 with err set.
 */
int journal_open(struct journal *j, const char *path, int append, int resume, int resume_failed,
    uint64_t identity);
/* Should seq be skipped (it ended in an earlier run)? */
int journal_skip(const struct journal *j, unsigned long long seq);
/* Write one end record and make it durable. */
int journal_end(struct journal *j, const struct joblog_rec *r);
/* The record as a joblog line (what journal_end writes), appended to b. */
void journal_format(const struct joblog_rec *r, struct sbuf *b);
void journal_close(struct journal *j);

/*
 * --retry-failed: the command line of each task in the joblog at path, by
 * seq (cmds[seq - 1]): the last one of a task that failed, "true" for one
 * that succeeded, "" for a number with no record. -1 with err set.
 */
int journal_commands(const char *path, char ***cmds, size_t *n);

/* Parse one joblog line: 0 a record (seq, exitval, signal), -1 none (header, junk). */
int journal_parse_line(const char *line, unsigned long long *seq, int *exitval, int *sig);

/* FNV-1a over bytes, chained through h (start with JOURNAL_HASH_INIT). */
#define JOURNAL_HASH_INIT 0xcbf29ce484222325ULL
uint64_t journal_hash(uint64_t h, const void *p, size_t n);

#endif
