/*
 * journal: the joblog, in GNU parallel's exact columns, written at each
 * task's end and fdatasync'd there, so that it is also the run's journal:
 * after gpupack is killed (even with -9), --resume finds every task that
 * ended (done or failed) and runs only the others.
 *
 * A record is written whole or not at all: a write that fails half way
 * (a full disk) is cut back and stops the run; a torn last line left by a
 * crash is cut off before anything is appended, so it can never merge with
 * the next record. What --resume reads is bounded (line length, record
 * count, Seq) and must be a regular file.
 *
 * Beside FILE, FILE.gpupack records a hash of the command template and the
 * input sources; --resume refuses a joblog written for another command.
 */
#ifndef GPUPACK_FARM_JOURNAL_H
#define GPUPACK_FARM_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/str.h"

/* What --resume accepts: longer lines, more records or larger Seqs are not a joblog of ours. */
#define JOURNAL_MAX_LINE (16u << 20)
#define JOURNAL_MAX_RECORDS (1u << 27)
#define JOURNAL_MAX_SEQ (1ULL << 48)

/* One Seq that has an end record; ok: its last record succeeded. */
struct journal_seen {
	unsigned long long seq;
	unsigned long long order; /* record number in the file: the last one counts */
	int ok;
};

struct journal {
	int fd;                 /* -1: no joblog, or not begun */
	char *path;
	struct journal_seen *seen; /* sorted by seq, one per seq once loaded */
	size_t nseen, cap;
	int resume, resume_failed, append;
	uint64_t identity;
	long long keep;         /* bytes of the existing file to keep (a torn tail cut); -1 all */
	int broken;             /* a record could not be written: no more are */
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
 * Check path as a joblog (a regular file, or none yet), read it back when
 * resuming and check it belongs to this command (identity: journal_hash of
 * it; 0: neither checked nor recorded, for --retry-failed). "-" is GNU
 * parallel's --joblog -: records to stdout. Creates, truncates and writes
 * nothing: a run whose other arguments turn out bad leaves the joblog as it
 * was. -1 with err set.
 */
int journal_check(struct journal *j, const char *path, int append, int resume, int resume_failed,
    uint64_t identity);
/*
 * Make the joblog ready to take records: create it, or truncate it (a new
 * run), or cut a torn tail off (append, resume); write the header where
 * the file is empty and FILE.gpupack. Call once every check has passed.
 */
int journal_begin(struct journal *j);
/* journal_check, then journal_begin. */
int journal_open(struct journal *j, const char *path, int append, int resume, int resume_failed,
    uint64_t identity);
/* Should seq be skipped (it ended in an earlier run)? */
int journal_skip(const struct journal *j, unsigned long long seq);
/*
 * Write one end record whole and make it durable. A write that fails is cut
 * back (no torn record is left) and every later call fails too: -1 with err.
 */
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
/*
 * Read joblog text (what --resume reads from the file, for the fuzzer and
 * the tests): records into j->seen, *torn the bytes after the last newline.
 * -1 with err set for a line over JOURNAL_MAX_LINE or too many records.
 */
int journal_load_mem(struct journal *j, const char *buf, size_t len, size_t *torn);

/* FNV-1a over bytes, chained through h (start with JOURNAL_HASH_INIT). */
#define JOURNAL_HASH_INIT 0xcbf29ce484222325ULL
uint64_t journal_hash(uint64_t h, const void *p, size_t n);

#endif
