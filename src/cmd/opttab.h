/*
 * opttab: a command's options declared once, in one table, as tmux's
 * cmd_entry and git's parse-options do. The table gives getopt_long its
 * arrays, --help its text, and a refused option (one of GNU parallel's that
 * a command does not do) the alternative its error names. The man page's
 * synopsis and completion/gpupack.bash are checked against --help by
 * tests/cli/run-options.t.
 */
#ifndef GPUPACK_CMD_OPTTAB_H
#define GPUPACK_CMD_OPTTAB_H

#include <getopt.h>
#include <stdio.h>

enum { OPTTAB_NONE, OPTTAB_REQ, OPTTAB_OPT };

struct optdef {
	const char *longs;    /* "jobs|max-procs|maxprocs": the first is the name --help shows */
	const char *shorts;   /* "jP": the first is shown; NULL: none */
	int arg;              /* OPTTAB_NONE, _REQ (a value), _OPT (an attached value, or none) */
	int id;               /* what the command's switch sees; 0: a section's title (help only) */
	const char *metavar;  /* the value's name in --help ("N") */
	const char *help;     /* '\n' between lines; NULL: listed by name only, after its section */
	const char *refused;  /* non-NULL: refused; what to use instead */
};

/* The table's arrays for getopt_long ("+:" and each short; longs end with a zero entry). */
struct opttab {
	const struct optdef *t;
	int n;
	char shortopts[128];
	struct option *longs;
};

/* Build the getopt arrays of table t (n entries). */
void opttab_init(struct opttab *ot, const struct optdef *t, int n);
void opttab_free(struct opttab *ot);
/* The table entry getopt_long's return value ch stands for; NULL: none (an error). */
const struct optdef *opttab_entry(const struct opttab *ot, int ch);
/* --help: the usage lines, then each section with its options. */
void opttab_help(const struct opttab *ot, const char *usage, const char *tail, FILE *f);
/*
 * The one-line error of a refused option, naming the word the user typed
 * (word: "-S", "--pipe=x"). Returns -1 (err set, EXIT_USAGE).
 */
int opttab_refuse(const struct optdef *d, const char *word);

#endif
