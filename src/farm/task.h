/*
 * task: where tasks come from (input sources, their cross product) and how
 * a command template becomes one task's argv (GNU parallel's replacement
 * strings).
 *
 * Inputs stream: the first source (the one that varies slowest, as in GNU
 * parallel) is read a line at a time; every later source is held in memory,
 * since each of its values is needed once per value of the first.
 */
#ifndef GPUPACK_FARM_TASK_H
#define GPUPACK_FARM_TASK_H

#include <stddef.h>
#include <stdio.h>

#include "util/str.h"

enum source_kind { SOURCE_ARGS, SOURCE_FILE };

struct source {
	int kind;             /* enum source_kind */
	char *name;           /* file name ("-" stdin) for SOURCE_FILE */
	char **items;         /* values (SOURCE_ARGS, or a later file source read whole) */
	size_t n, cap;
	FILE *f;              /* the streamed first source, while open */
};

struct inputs {
	struct source *src;
	int nsrc, cap;
	/* iteration */
	int started, done;
	char *first;          /* current value of source 0 */
	size_t *idx;          /* position in each in-memory source */
	unsigned long long seq; /* of the last task produced */
};

void inputs_init(struct inputs *in);
void inputs_free(struct inputs *in);
/* Add a source: values given on the command line (::: a b c) or a file (:::: F, -a F, "-" stdin). */
struct source *inputs_add_args(struct inputs *in);
void source_add_value(struct source *s, const char *v);
void inputs_add_file(struct inputs *in, const char *name);
/*
 * Open the files (no source at all: stdin). Later file sources are read
 * whole. A source with no values makes the run empty, as in parallel.
 * -1 with err set (EXIT_USAGE: a file that cannot be read).
 */
int inputs_open(struct inputs *in);
/*
 * The next combination: *args gets nsrc malloc'd strings (the caller frees
 * them with args_free), *seq its 1-based number. 1 produced, 0 end, -1 error.
 */
int inputs_next(struct inputs *in, char ***args, unsigned long long *seq);
void args_free(char **args, int n);

/* What replacement strings refer to for one task. */
struct task_vars {
	char **args;          /* one value per source */
	int nargs;
	unsigned long long seq;  /* {#} */
	int slot;             /* {%} and {slot}: 1-based */
	const char *gpu;      /* {gpu}: the device uuid */
	int quote;            /* shell-quote inserted values (--shell) */
};

/* Does a word contain a replacement string? */
int template_has_placeholder(const char *word);
/* Expand one word of the command template, appending to out. */
void template_expand(const char *word, const struct task_vars *v, struct sbuf *out);
/*
 * The argv of one task: each template word expanded; when no word holds a
 * replacement string, the inputs are appended as arguments (as parallel
 * does). With shell, the words are joined into one line for sh -c and the
 * inputs are shell-quoted. *argv is NULL-terminated; free with args_free(argv, -1).
 */
char **template_argv(char **tmpl, int ntmpl, int has_ph, int shell, const struct task_vars *v);
/* Append s shell-quoted (only when it needs it) to out. */
void shell_quote(struct sbuf *out, const char *s);

#endif
