/*
 * joblog: what --joblog names, read once when the options are, and used
 * everywhere after: the file (a leading '+' stripped into append, {shard}
 * replaced by the shard's K), or stdout ('-'), and every file gpupack keeps
 * beside it. No other file builds a path from the joblog's name.
 *
 *   FILE           the joblog, GNU parallel's columns (farm/journal.h)
 *   FILE.gpupack   which command and inputs wrote it (--resume checks it)
 *   FILE.lock      who holds the farm's lock: a message only (farm/joblock.h)
 *   FILE.farm/     a farm over nodes' records (farm/nodes.h)
 *
 * The same description serves a log gpupack names itself (a farm over
 * nodes' log/OWNER, with its own FILE.gpupack): joblog_of_file.
 */
#ifndef GPUPACK_FARM_JOBLOG_H
#define GPUPACK_FARM_JOBLOG_H

enum joblog_kind {
	JOBLOG_NONE,             /* no --joblog */
	JOBLOG_FILE,             /* --joblog FILE or +FILE */
	JOBLOG_STDOUT            /* --joblog -: each record after its task's output */
};

struct joblog_desc {
	enum joblog_kind kind;
	int append;              /* +FILE: records appended, no header written */
	int sharded;             /* {shard} was in the name, replaced by --shard's K */
	char *path;              /* FILE as the user wrote it, '+' off, {shard} replaced; "-"; NULL: none */
	char *dir;               /* the directory FILE is in, as written ("." for a bare name) */
	char *identity;          /* FILE.gpupack */
	char *lock;              /* FILE.lock */
	char *farm;              /* FILE.farm */
};

/* The suffix of the longest side file: FILE and each one beside it fit in PATH_MAX. */
#define JOBLOG_LONGEST_SIDE ".gpupack"

/* --joblog's value as given: 0, or -1 with err set (an empty name, "+" alone). */
int joblog_check_name(const char *arg);
/*
 * Describe --joblog arg (NULL: none given) for the shard K of N (N 0: no
 * --shard). 0, or -1 with err set and d left empty: an empty name,
 * {shard} without --shard, a path too long for its side files.
 */
int joblog_describe(struct joblog_desc *d, const char *arg, unsigned long shard_k, unsigned long shard_n);
/* Describe a joblog file gpupack names itself: path is taken as it is. 0, or -1 with err set. */
int joblog_of_file(struct joblog_desc *d, const char *path);
/* A file to write records into (not none, not stdout). */
int joblog_is_file(const struct joblog_desc *d);
/* Back to none (what joblog_describe(d, NULL, 0, 0) gives). */
void joblog_free(struct joblog_desc *d);

#endif
