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

#include "farm/joblog.h"
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
	char *path;             /* from the description (farm/joblog.h): FILE */
	char *dir;              /* the directory FILE is in */
	char *side;             /* FILE.gpupack: the command's identity */
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
	unsigned long long sent; /* the Send column: the bytes of its --pipe block (0 without --pipe) */
};

/*
 * Check the joblog d describes (NULL or none: no joblog) as a joblog (a
 * regular file, or none yet), read it back when resuming and check it
 * belongs to this command (identity: journal_hash of it; 0: neither
 * checked nor recorded, for --retry-failed). Stdout is GNU parallel's
 * --joblog -. Creates, truncates and writes nothing: a run whose other
 * arguments turn out bad leaves the joblog as it was. The journal keeps
 * copies of what it needs of d. -1 with err set.
 */
int journal_check(struct journal *j, const struct joblog_desc *d, int resume, int resume_failed,
    uint64_t identity);
/*
 * Make the joblog ready to take records: create it, or truncate it (a new
 * run), or cut a torn tail off (append, resume); write the header where
 * the file is empty and FILE.gpupack. Call once every check has passed.
 */
int journal_begin(struct journal *j);
/* journal_check, then journal_begin. */
int journal_open(struct journal *j, const struct joblog_desc *d, int resume, int resume_failed,
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

/* A task to run again (--retry-failed): its Seq and the command line its last record failed with. */
struct journal_cmd {
	unsigned long long seq;
	char *cmd;
};
/*
 * --retry-failed: the tasks whose last record in the joblog at path failed,
 * in Seq order, each with its command line as it ran (the NULs parallel
 * writes for newlines are newlines again). Sized by the records, whatever
 * their Seqs. -1 with err set.
 */
int journal_failed(const char *path, struct journal_cmd **v, size_t *n);
void journal_failed_free(struct journal_cmd *v, size_t n);

/* Parse one joblog line: 0 a record (seq, exitval, signal), -1 none (header, junk). */
int journal_parse_line(const char *line, unsigned long long *seq, int *exitval, int *sig);
/*
 * Read joblog text (what --resume reads from the file, for the fuzzer and
 * the tests): records into j->seen, *torn the bytes after the last newline.
 * -1 with err set for a line over JOURNAL_MAX_LINE or too many records.
 */
int journal_load_mem(struct journal *j, const char *buf, size_t len, size_t *torn);

/*
 * A map from Seq to a value, sized by its entries, not by their Seqs (a
 * record of Seq 2^40 costs what one of Seq 1 does): open addressing, grown
 * at half full. What reads records keeps them here (the farm over nodes'
 * chain and logs); seq 0 is no Seq.
 */
struct seqmap_slot {
	unsigned long long seq;  /* 0: empty */
	unsigned long long val;
};
struct seqmap {
	struct seqmap_slot *slot;
	size_t cap, n;
};
/* The value of seq, or NULL when it has none. */
unsigned long long *seqmap_get(const struct seqmap *m, unsigned long long seq);
/* The value of seq, made 0 when it had none. */
unsigned long long *seqmap_put(struct seqmap *m, unsigned long long seq);
void seqmap_free(struct seqmap *m);

/* FNV-1a over bytes, chained through h (start with JOURNAL_HASH_INIT). */
#define JOURNAL_HASH_INIT 0xcbf29ce484222325ULL
uint64_t journal_hash(uint64_t h, const void *p, size_t n);

#endif
