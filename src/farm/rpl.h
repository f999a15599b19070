/*
 * rpl: which replacement strings a run has, and where they are in a word,
 * found as GNU parallel finds them: {= perl =} first, then each string,
 * longest first, wherever it is left in the word's text (a positional form
 * {N...} too, for a string that starts with '{'). The seven of parallel are
 * built in (renamed by -I, --extensionreplace, ...); gpupack adds {gpu} and
 * {slot}; --plus adds parallel's further strings and --rpl the user's, both
 * perl, their (groups) perl regexes.
 */
#ifndef GPUPACK_FARM_RPL_H
#define GPUPACK_FARM_RPL_H

#include <stddef.h>

struct perl;

/* The replacement strings parallel lets one rename (-I, --extensionreplace, ...). */
enum rpl_name { RPL_ALL, RPL_NOEXT, RPL_BASE, RPL_DIR, RPL_BASE_NOEXT, RPL_SEQ, RPL_SLOT, RPL_N };

/* What a replacement string gives: one of the built-in ones, or a perl expression. */
enum rpl_op { OP_ALL, OP_NOEXT, OP_BASE, OP_DIR, OP_BASE_NOEXT, OP_SEQ, OP_SLOT, OP_GPU, OP_PERL };

struct rplkey {
	char *key;            /* as written: "{}", "{..}", "{%(.+?)}" */
	int op;
	char *code;           /* OP_PERL: the expression ($$1 for a group) */
	int dyn;              /* it has (groups): matched by perl with re */
	char *prefix, *postfix; /* the text around the groups (all of key when none) */
	char *re, *pos_re;    /* dyn: the key as a perl regex, and its positional form */
	int has_pos;          /* it starts with '{': {N...} is its positional form */
};

struct rplset {
	struct rplkey *k;     /* longest first */
	int n;
	char *left, *right;   /* what a perl expression is written in: {= =}, or --parens' halves */
	int dyn;              /* a string has (groups): finding them needs perl */
};

/*
 * The strings of a run: the built-in ones (rename[RPL_...] non-NULL: its new
 * name), --plus's when plus, and defs ("TAG expression", --rpl); parens
 * (NULL: "{==}") gives the two halves a perl expression is written in. -1 with err
 * set: a --rpl without an expression.
 */
int rplset_init(struct rplset *s, const char *const *rename, int plus, char **defs, int ndefs,
    const char *parens);
void rplset_free(struct rplset *s);

/* A piece of a word: text, or a replacement string (op, pos, and for OP_PERL its code). */
struct rplseg {
	int rpl;
	const char *text;     /* text: into the word */
	size_t len;
	int op;
	int pos;              /* 0 each value; N value N (negative: from the last) */
	char *code;           /* OP_PERL (owned) */
};

/* Split word w into pieces (perl: for strings with groups). Free with rplsegs_free. -1 with err set. */
int rpl_split(const struct rplset *s, const char *w, struct perl *perl, struct rplseg **segs, int *n);
void rplsegs_free(struct rplseg *segs, int n);

#endif
