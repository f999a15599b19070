/*
 * run_rc: where `gpupack run` finds options besides its command line, as
 * GNU parallel does: its profiles (/etc/parallel/config, ~/.parallel/config
 * and the other config directories, ~/.parallelrc; or the ones -J NAME
 * names) and $PARALLEL, each split into words as a shell would. --plain
 * skips them all. Also parallel's counts of this host's CPUs.
 */
#ifndef GPUPACK_CMD_RUN_RC_H
#define GPUPACK_CMD_RUN_RC_H

#include "cmd/opttab.h"

/* One list of option words: a profile's, or $PARALLEL's. */
struct rc_list {
	char *name;           /* the file, or "$PARALLEL": for errors */
	char **w;             /* w[0] is a placeholder (getopt skips it) */
	int n;
	struct rc_list *next;
};

struct rc_words {
	struct rc_list *lists;   /* in the order they are read */
	char **cmd;              /* the words left over, in order: the command and its inputs */
	int ncmd, cap;
};

/*
 * The profile and environment lists, for the options of argv: ids[0] is
 * the table's id of -J, ids[1] of --plain. -1 with err set.
 */
int rc_read(struct rc_words *rc, const struct opttab *ot, int argc, char **argv, const int ids[2]);
/* Append a word (not copied) to rc->cmd. */
void rc_push(struct rc_words *rc, char *w);
void rc_words_free(struct rc_words *rc);
/*
 * Split s into words as Text::ParseWords::shellwords does (parallel's way):
 * blanks apart, '...' literal, "..." and \ escaping. *n gets the count;
 * -1 with err set on an unclosed quote.
 */
int rc_shellwords(const char *s, char ***w, int *n);

enum { RC_SOCKETS, RC_CORES, RC_THREADS };
/* parallel's --number-of-sockets, -cores, -threads on this host (from /proc/cpuinfo). */
int rc_cpu_count(int what);

#endif
