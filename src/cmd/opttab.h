/*
 * opttab: a command's options declared once, in one table, as tmux's
 * cmd_entry and git's parse-options do. The table gives getopt_long its
 * arrays, --help its text, and a refused option (one of GNU parallel's that
 * a command does not do) the alternative its error names. The man page's
 * synopsis is checked against --help by tests/cli/run-options.t; shell
 * completion asks the binary (gpupack --completion-helper, opttab_complete),
 * so it cannot drift (tests/cli/completion.t).
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

/* Build the getopt arrays of table t (n entries): options stop at the first operand. */
void opttab_init(struct opttab *ot, const struct optdef *t, int n);
/* Options may follow operands too (getopt permutes: mig apply PLAN --dry-run). */
void opttab_permute(struct opttab *ot);
void opttab_free(struct opttab *ot);
/* The table entry getopt_long's return value ch stands for; NULL: none (an error). */
const struct optdef *opttab_entry(const struct opttab *ot, int ch);
/*
 * A command's subcommands: each one's name and the ids (as characters) of
 * the options it takes; the command's one table declares the options.
 */
struct optsub {
	const char *name;
	const char *ids;      /* "gj": --gpus and --json; NULL: every option */
};
/* Does entry d apply to a subcommand taking ids (NULL: all)? */
int opttab_applies(const struct optdef *d, const char *ids);
/*
 * For completion: the options a subcommand taking ids has (NULL: all), one
 * a line, as --help names them ("--gpus=SEL" for one that takes a value).
 */
void opttab_complete(const struct optdef *t, int n, const char *ids, FILE *f);
/* --help: the usage lines, then each section with its options (and the refused ones, if any). */
void opttab_help(const struct opttab *ot, const char *usage, const char *tail, FILE *f);
/*
 * The one-line error of a refused option, naming the word the user typed
 * (word: "-S", "--pipe=x"). Returns -1 (err set, EXIT_USAGE).
 */
int opttab_refuse(const struct optdef *d, const char *word);

#endif
