/*
 * results: --results NAME.csv, .tsv or .json: one file of every task's
 * record and output, as GNU parallel writes it (a record per task as it
 * ends: the joblog's columns, the values, stdout and stderr). The tasks'
 * output is not printed then; "-.csv" (-.tsv, -.json) writes the file on
 * stdout.
 */
#ifndef GPUPACK_FARM_RESULTS_H
#define GPUPACK_FARM_RESULTS_H

#include "farm/journal.h"
#include "farm/output.h"

enum { RESULTS_DIR, RESULTS_CSV, RESULTS_TSV, RESULTS_JSON };

struct results_file {
	int fd;               /* -1: none */
	int fmt;              /* RESULTS_CSV, _TSV, _JSON */
	char *path;
	int header_done;
	char **names;         /* --header: the columns' names (borrowed); else V1, V2, ... */
	int nnames;
	int broken;
	int pipe;             /* --pipe: no values (1), or with --cat parallel's $PARALLEL_TMP (2) */
};

/* What --results NAME is: RESULTS_DIR, or one file by its ending (as parallel, any case). */
int results_kind(const char *name);
/* Create (truncate) the file, or take stdout for "-.csv". -1 with err set. */
int results_file_open(struct results_file *rf, const char *name, char **names, int nnames);
/*
 * The same for --resume (--resume-failed): the rows of the tasks the
 * journal j ended are kept, the others (and a torn last one) dropped,
 * and the file is appended to.
 */
int results_file_resume(struct results_file *rf, const char *name, char **names, int nnames,
    const struct journal *j);
/* A task's record: rec, its values and its output (out[0] stdout, out[1] stderr). -1 with err set. */
int results_file_add(struct results_file *rf, const struct joblog_rec *rec, char *const *vals, int nvals,
    const struct obuf out[2]);
void results_file_close(struct results_file *rf);
/*
 * --files: the task's stdout in a new file $TMPDIR/parXXXXXX.par, as
 * parallel names it (its stderr is dropped, as parallel drops it); *path
 * malloc'd. -1 with err set.
 */
int results_par_file(const struct obuf *out, char **path);

#endif
