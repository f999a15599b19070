/*
 * cmdline: a command template and the shell command line it gives for one
 * task, exactly as GNU parallel builds it. The command's words are joined
 * by spaces (so `'zcat {} | wc -l'` is shell syntax, as the user meant);
 * every value inserted by a replacement string is shell-quoted, so no input
 * can inject anything. When no word holds a replacement string, {} is
 * appended. When a replacement string is part of the command's first word
 * (`parallel {}`: the inputs are the commands), values are inserted as they
 * are, as parallel does. -q quotes the command's own words too.
 *
 * Replacement strings: {} {.} {/} {//} {/.} {#} {%}, positional {N} {N.}
 * {N/} {N//} {N/.} ({-N} from the last), gpupack's {gpu} and {slot}; -I
 * and --extensionreplace ... rename them; perl's {= expression =}, --plus's
 * and --rpl's are run by perl (farm/perl.h). With several values (several sources, or -n/-N/-X/-m) a
 * replacement string gives each value as a word of its own; with -X and -N
 * the characters around it repeat with each value ("context").
 */
#ifndef GPUPACK_FARM_CMDLINE_H
#define GPUPACK_FARM_CMDLINE_H

#include <stddef.h>

#include "farm/rpl.h"
#include "util/str.h"

enum trim_mode { TRIM_NONE, TRIM_LEFT, TRIM_RIGHT, TRIM_BOTH };

/*
 * The longest command line GNU parallel runs on Linux: its probe of the
 * shell finds 130329 bytes under the kernel's 128 KiB MAX_ARG_STRLEN, and
 * it keeps (130329 - 3000) / 2 of that. A longer task is refused (exit 255),
 * as parallel refuses it; -X and -m fill lines up to it.
 */
#define CMDLINE_MAX 63664
/* What parallel's probe of the shell finds (its --max-line-length-allowed). */
#define CMDLINE_PROBE 130329

struct tmpl_opts {
	const char *const *rpl; /* RPL_N strings, NULL for the default ("{}", "{.}", ...); or NULL */
	int quote_all;        /* -q: quote the template's words too */
	int context;          /* -X, -N: repeat the context of a replacement string per value */
	int append;           /* append {} when no replacement string is found */
	int trim;             /* enum trim_mode (--trim) */
	char **names;         /* --header: column names, {name} meaning {N} */
	int nnames;
	int raw;              /* insert values unquoted (--tagstring, --results) */
	int quote_line;       /* --shellquote: the whole line quoted once more */
	int plus;             /* --plus: parallel's further replacement strings */
	char **rpl_defs;      /* --rpl 'TAG perl-expression', each */
	int nrpl_defs;
	const char *parens;   /* --parens: what perl expressions are written in (NULL: {= =}) */
	struct perl *perl;    /* runs perl replacement strings: opened when one is found */
	int max_jobs;         /* slots of the run (perl's $Global::max_jobs_running) */
};

struct tok;
struct lenkey;
struct perl;

struct tmpl {
	struct rplset rs;     /* the replacement strings (farm/rpl.h) */
	int *perl_ids;        /* the perl expressions' ids in perl (farm/perl.h) */
	int nperl;
	struct perl *perl;
	int needs_total;      /* total_jobs() is used: the tasks are counted first */
	struct tok *t;
	int n;
	char **words;         /* the words after --header names were put in (owned) */
	int nwords;
	int has_rpl;          /* a replacement string was found (else {} was appended, if asked) */
	int quote_args;       /* values are quoted (0: a replacement string in the first word) */
	int quote_all, context, trim, quote_line;
	/* what GNU parallel's length estimate needs (see cmdline_len) */
	size_t noncontext, context_len;
	int ctxgroups;
	struct lenkey *keys;  /* each distinct replacement string and how often it occurs */
	int nkeys;
};

/* One task's values: nrec records of rec_n values each, flat. */
struct job_vals {
	char **v;
	int n;
	int nrec;
	unsigned long long seq;  /* {#} */
	int slot;                /* {%}, {slot} */
	const char *gpu;         /* {gpu} */
	int noarg;               /* -N0: the values are not inserted at all */
	unsigned long long total; /* total_jobs() of perl expressions; 0: not counted */
	int *status;             /* NULL, or gets TMPL_SKIP and TMPL_FAILED */
	int raw;                 /* the values go in unquoted (--cat's $PARALLEL_TMP, as parallel's) */
};

/* What building a line can say: skip() was called; a perl expression failed (err set). */
enum { TMPL_SKIP = 1, TMPL_FAILED = 2 };

/*
 * Compile words, finding replacement strings as parallel does: {= perl =}
 * first, then each string, longest first (--plus and --rpl ones too). -1
 * with err set (EXIT_USAGE): a perl expression that does not compile, no
 * perl.
 */
int tmpl_compile(struct tmpl *t, char **words, int nwords, const struct tmpl_opts *o);
void tmpl_free(struct tmpl *t);
/* The command line (or tag, or --results path) for one task: malloc'd. */
char *tmpl_build(const struct tmpl *t, const struct job_vals *v);
/* The command line for one task, its perl expressions evaluated as parallel evaluates them. */
char *tmpl_build_cmd(const struct tmpl *t, const struct job_vals *v);
/*
 * GNU parallel's estimate of the line's length (what it compares with
 * CMDLINE_MAX): kept as records are added (cmdline_len_add) and removed.
 */
struct cmdline_len {
	size_t *sum;          /* per key */
	int nrec, rec_n;
};
void cmdline_len_init(struct cmdline_len *l, const struct tmpl *t);
void cmdline_len_free(struct cmdline_len *l);
/* Add (sign 1) or take away (sign -1) one record of n values; seq for {#}. */
void cmdline_len_add(struct cmdline_len *l, const struct tmpl *t, char **rec, int n,
    unsigned long long seq, int sign);
size_t cmdline_len(const struct cmdline_len *l, const struct tmpl *t);

/* Append s shell-quoted as parallel quotes it (only when needed) to out. */
void shell_quote(struct sbuf *out, const char *s);
/* Does the template use total_jobs() (parallel then counts the tasks first)? */
int tmpl_needs_total(const struct tmpl *t);

#endif
