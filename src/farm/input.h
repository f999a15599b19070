/*
 * input: where a farm's values come from, read the way GNU parallel reads
 * them. A source is `::: values`, `:::: FILE` (or -a FILE, "-" stdin) or,
 * without either, stdin. Values are records ended by a delimiter (a newline;
 * -0 NUL; -d STRING), ::: values included (a ::: value holding the delimiter
 * becomes several values, as in parallel). Sources combine as a cross
 * product, the first varying slowest; `:::+`/`::::+` zip a source with the
 * one before it (to the shorter length), --link zips all of them (the
 * shorter ones recycled). A source with no value acts as one empty value,
 * unless every source is empty. --colsep splits each value into columns.
 *
 * The first source (and the sources zipped with it) streams: a record is
 * read when a task needs it. Every other source is held in memory.
 */
#ifndef GPUPACK_FARM_INPUT_H
#define GPUPACK_FARM_INPUT_H

#include <regex.h>
#include <stddef.h>
#include <stdio.h>

/* One combination of source values, split into columns: {1} {2} ... */
struct record {
	char **v;
	int n;
};

struct pipe_src;
struct pipe_opts;

struct source {
	char *file;           /* :::: FILE, -a FILE ("-" stdin); NULL: ::: values */
	struct pipe_src *pipe; /* --pipe: the blocks' files are the values (farm/pipe.h) */
	const struct pipe_opts *pipe_opts;
	int pipe_slots;
	int linked;           /* :::+ / ::::+: zipped with the source before it */
	char **vals;          /* ::: values as given; then every value once read whole */
	size_t n, cap;
	FILE *f;              /* while being read */
	char *mem;            /* ::: values joined by the delimiter: what f reads */
	size_t streamed;      /* values read so far (streamed sources) */
	int eof;
	char *header;         /* --header: its first value, the column names */
};

struct input_opts {
	const char *delim;    /* record delimiter; NULL: "\n" */
	size_t delim_len;
	const char *colsep;   /* --colsep REGEX (perl's syntax, see input_colsep_compile) */
	int header;           /* --header: the first value of each source names its columns */
	int header_names_files; /* --header 0: a file source is named by its file name */
	int link;             /* --link: zip every source, recycling the shorter ones */
	int skip_empty;       /* -r: values of white space only are skipped */
	const char *eof;      /* -E STR: a value equal to STR ends its source */
	int skip_first;       /* --skip-first-line: the first source's first value is dropped */
	int line_cont;        /* -L: a value ending in white space goes on with the next one */
	int csv;              /* --csv: a value with an odd count of '"' goes on with the next; CSV columns */
};

struct inputs {
	struct input_opts o;
	struct source *src;
	int nsrc, cap;
	regex_t colsep;
	int has_colsep;
	/* iteration */
	int ng;               /* groups of zipped sources; group 0 streams */
	int *gfirst, *glen;   /* each group's first source and, but for group 0, its length */
	size_t *idx;          /* position in each group (1..ng-1) */
	char **row0;          /* the current values of group 0 */
	int started, done;
	size_t rows;          /* group 0 rows produced (--link: records produced) */
	size_t link_len;      /* --link: the longest source */
	int all_empty;        /* every source was empty: nothing to run */
	char **names;         /* --header: the name of each column, by column number - 1 */
	int nnames;
};

void inputs_init(struct inputs *in);
void inputs_free(struct inputs *in);
/* Add a source of ::: values (add them with source_add_value), or a file. */
struct source *inputs_add_args(struct inputs *in, int linked);
void source_add_value(struct source *s, const char *v);
void inputs_add_file(struct inputs *in, const char *name, int linked);
/* --pipe: the one source, whose values are the paths of the data's blocks (farm/pipe.h). */
void inputs_add_pipe(struct inputs *in, const struct pipe_opts *o, int slots);
/* --pipe: the task whose value is path has its block (or will never run): its file or fifo goes. */
void inputs_block_done(struct inputs *in, const char *path);

/*
 * Open the sources (none: stdin), read the headers and the sources held in
 * memory. -1 with err set (EXIT_USAGE: a file that cannot be read, a bad
 * --colsep).
 */
int inputs_open(struct inputs *in);
/* The next record; 1 one, 0 the end, -1 a read error (err set). Free with record_free. */
int inputs_next(struct inputs *in, struct record *r);
void record_free(struct record *r);

/*
 * Compile a --colsep regex: POSIX extended syntax plus perl's \t \n \r \s \S
 * \d \D \w \W. Perl constructs without a POSIX meaning ((?...), lazy
 * quantifiers, back references) and a regex that matches the empty string
 * are refused. -1 with err set.
 */
int input_colsep_compile(const char *perl, regex_t *re);
/* Split s at re into r (perl's split with limit -1: trailing empty columns kept). */
void input_colsep_split(const regex_t *re, const char *s, struct record *r);
/*
 * --csv: one record as perl's Text::CSV reads it for parallel (binary; quote
 * and escape '"'; sep, else ","): a field quoted ("a,b", "" for a ") or not;
 * a newline outside quotes ends the record (what follows is dropped, as
 * Text::CSV drops it); "" is one empty field. -1 with err set (EXIT_USAGE,
 * naming the value) for what Text::CSV refuses: a quote inside an unquoted
 * field, text after a closing quote, an unclosed quote, a lone CR.
 */
int input_csv_split(const char *s, const char *sep, struct record *r);

/* Unescape -d's argument as parallel does (\n \t \r \0 \NNN); *len gets its length. */
char *input_unescape_delim(const char *s, size_t *len);

#endif
