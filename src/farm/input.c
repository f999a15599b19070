/*
 * input: sources, their records, and the order GNU parallel combines them
 * in (see input.h). Records are read with a delimiter of any length, so
 * that -d '\r\n' works as in parallel; a NUL inside a value (only possible
 * with -d) becomes the two characters \0, as parallel does.
 */
#include "farm/input.h"
#include "farm/pipe.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static void close_source(struct source *s);

void
inputs_init(struct inputs *in)
{
	memset(in, 0, sizeof *in);
}

static void
free_vals(char **v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

void
inputs_free(struct inputs *in)
{
	for (int i = 0; i < in->nsrc; i++) {
		struct source *s = &in->src[i];

		free_vals(s->vals, s->n);
		free(s->file);
		free(s->header);
		close_source(s);
		if (s->pipe) {
			pipe_free(s->pipe);
			free(s->pipe);
			s->pipe = NULL;
		}
	}
	if (in->row0)
		free_vals(in->row0, (size_t)(in->ng > 0 ? in->glen[0] : 0));
	for (int i = 0; i < in->nnames; i++)
		free(in->names[i]);
	free(in->names);
	free(in->src);
	free(in->gfirst);
	free(in->glen);
	free(in->idx);
	if (in->has_colsep)
		regfree(&in->colsep);
	memset(in, 0, sizeof *in);
}

static struct source *
add_source(struct inputs *in, int linked)
{
	struct source *s;

	if (in->nsrc == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 4;
		in->src = xrealloc(in->src, (size_t)in->cap * sizeof *in->src);
	}
	s = &in->src[in->nsrc++];
	memset(s, 0, sizeof *s);
	/* the first source has nothing before it to zip with */
	s->linked = linked && in->nsrc > 1;
	return s;
}

struct source *
inputs_add_args(struct inputs *in, int linked)
{
	return add_source(in, linked);
}

void
source_add_value(struct source *s, const char *v)
{
	xgrow(&s->vals, &s->cap, s->n + 1, sizeof *s->vals);
	s->vals[s->n++] = xstrdup(v);
}

void
inputs_add_file(struct inputs *in, const char *name, int linked)
{
	add_source(in, linked)->file = xstrdup(name);
}

void
inputs_block_done(struct inputs *in, const char *path)
{
	if (in->nsrc > 0 && in->src[0].pipe)
		pipe_release(in->src[0].pipe, path);
	unlink(path);
}

void
inputs_add_pipe(struct inputs *in, const struct pipe_opts *o, int slots)
{
	struct source *s = add_source(in, 0);

	s->pipe_opts = o;
	s->pipe_slots = slots;
}

/* ---- reading records ------------------------------------------------- */

static const char *
delim(const struct inputs *in, size_t *len)
{
	if (!in->o.delim) {
		*len = 1;
		return "\n";
	}
	*len = in->o.delim_len;
	return in->o.delim;
}

/* A NUL inside a value cannot reach an argv: parallel writes it as \0. */
static char *
nul_escape(char *v, size_t n)
{
	struct sbuf b;

	if (memchr(v, '\0', n) == NULL)
		return v;
	sbuf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\0')
			sbuf_add(&b, "\\0");
		else
			sbuf_addc(&b, v[i]);
	}
	free(v);
	return sbuf_detach(&b);
}

/*
 * One record of f without its delimiter: 1 read, 0 end of input, -1 a read
 * error (errno set). The last record needs no delimiter after it.
 */
static int
read_raw(FILE *f, const char *d, size_t dlen, char **out)
{
	char *buf = NULL, *chunk = NULL;
	size_t len = 0, cap = 0, ccap = 0;
	ssize_t got;

	for (;;) {
		errno = 0;
		got = getdelim(&chunk, &ccap, (unsigned char)d[dlen - 1], f);
		if (got < 0)
			break;
		xgrow(&buf, &cap, len + (size_t)got + 1, 1);
		memcpy(buf + len, chunk, (size_t)got);
		len += (size_t)got;
		if (len >= dlen && memcmp(buf + len - dlen, d, dlen) == 0) {
			len -= dlen;
			break;
		}
	}
	free(chunk);
	if (got < 0 && len == 0 && !buf) {
		return ferror(f) ? -1 : 0;
	}
	if (got < 0 && ferror(f)) {
		free(buf);
		return -1;
	}
	if (!buf)
		buf = xmalloc(1);
	buf[len] = '\0';
	*out = nul_escape(buf, len);
	return 1;
}

static int
blank(const char *s)
{
	for (; *s; s++)
		if (!strchr(" \t\n\r\f\v", *s))
			return 0;
	return 1;
}

/* s ends in perl's \s (a line -L continues). */
static int
ends_blank(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && strchr(" \t\n\r\f\v", s[n - 1]) != NULL;
}

static int
odd_quotes(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '"';
	return n & 1;
}

/*
 * The next value of s as parallel reads it: -E ends the source, -r skips
 * blank values, and under -L a value that ends in a blank goes on with the
 * next one (what is pending is the last value at the end).
 */
static int
read_value(struct inputs *in, struct source *s, char **out)
{
	size_t dlen;
	const char *d = delim(in, &dlen);
	char *prepend = NULL;
	int r;

	if (s->eof)
		return 0;
	if (s->pipe) {
		if ((r = pipe_next(s->pipe, out)) <= 0)
			s->eof = 1;
		return r;
	}
	for (;;) {
		r = read_raw(s->f, d, dlen, out);
		if (r < 0) {
			free(prepend);
			return err_sys(EXIT_USAGE, "input '%s'", s->file ? s->file : ":::");
		}
		if (r == 0 || (in->o.eof && strcmp(*out, in->o.eof) == 0)) {
			if (r > 0)
				free(*out);
			/* --csv's pending record ends with the delimiter it was joined by: chomp it */
			if (prepend && in->o.csv && strlen(prepend) >= dlen &&
			    memcmp(prepend + strlen(prepend) - dlen, d, dlen) == 0)
				prepend[strlen(prepend) - dlen] = '\0';
			*out = prepend;
			s->eof = 1;
			return prepend != NULL;
		}
		if (prepend) {
			char *joined = xasprintf("%s%s", prepend, *out);

			free(prepend);
			free(*out);
			*out = joined;
			prepend = NULL;
		}
		if (in->o.skip_empty && blank(*out)) {
			free(*out);
			continue;
		}
		if (in->o.line_cont && ends_blank(*out)) {
			prepend = *out;
			continue;
		}
		if (in->o.csv && odd_quotes(*out)) {
			/* parallel: a CSV record with a quoted newline goes on, the delimiter kept */
			prepend = xmalloc(strlen(*out) + dlen + 1);
			memcpy(prepend, *out, strlen(*out));
			memcpy(prepend + strlen(*out), d, dlen);
			prepend[strlen(*out) + dlen] = '\0';
			free(*out);
			continue;
		}
		return 1;
	}
}

/*
 * Open a source for reading: a file, stdin, or the ::: values written one
 * after another, each followed by the delimiter (how parallel feeds them,
 * and why a value holding the delimiter splits).
 */
static int
open_source(struct inputs *in, struct source *s)
{
	size_t dlen;
	const char *d;
	struct sbuf b;

	if (s->pipe_opts) {
		if (s->pipe) {
			pipe_free(s->pipe);
			free(s->pipe);
		}
		s->pipe = xcalloc(1, sizeof *s->pipe);
		return pipe_open(s->pipe, s->pipe_opts, s->pipe_slots);
	}
	if (s->file) {
		struct stat st;

		if (strcmp(s->file, "-") == 0) {
			s->f = stdin;
			/* as parallel warns: a forgotten ::: would wait here in silence */
			if (isatty(0) && isatty(2))
				warnx_("reading inputs from the terminal (no ::: or :::: was given): type them one a "
				    "line, then Ctrl-D");
		} else if ((s->f = fopen(s->file, "r")) == NULL)
			return err_sys(EXIT_USAGE, "input file '%s'", s->file);
		/* a directory opens, then fails at the first read: after the joblog was started */
		if (s->f != stdin && fstat(fileno(s->f), &st) == 0 && S_ISDIR(st.st_mode)) {
			fclose(s->f);
			s->f = NULL;
			return err_set(EXIT_USAGE, "input file '%s' is a directory", s->file);
		}
		return 0;
	}
	d = delim(in, &dlen);
	sbuf_init(&b);
	for (size_t i = 0; i < s->n; i++) {
		sbuf_addn(&b, s->vals[i], strlen(s->vals[i]));
		sbuf_addn(&b, d, dlen);
	}
	free_vals(s->vals, s->n);
	s->vals = NULL;
	s->n = s->cap = 0;
	if (b.len == 0) {
		/* nothing to read: an empty source */
		sbuf_free(&b);
		s->eof = 1;
		return 0;
	}
	s->mem = b.buf;
	s->f = fmemopen(s->mem, b.len, "r");
	if (!s->f)
		return err_sys(EXIT_INTERNAL, "fmemopen");
	return 0;
}

static void
close_source(struct source *s)
{
	/* the pipe's state stays to the run's end: spreading's fifos outlive the values (pipe.h) */
	if (s->pipe)
		pipe_close(s->pipe);
	if (s->f && s->f != stdin)
		fclose(s->f);
	s->f = NULL;
	free(s->mem);
	s->mem = NULL;
}

/* Read every value of s into s->vals. */
static int
slurp(struct inputs *in, struct source *s)
{
	char **vals = NULL, *v;
	size_t n = 0, cap = 0;
	int r;

	while ((r = read_value(in, s, &v)) == 1) {
		xgrow(&vals, &cap, n + 1, sizeof *vals);
		vals[n++] = v;
	}
	close_source(s);
	free_vals(s->vals, s->n);
	s->vals = vals;
	s->n = n;
	s->cap = cap;
	return r;
}

/* ---- --colsep and --header ------------------------------------------- */

void
input_colsep_split(const regex_t *re, const char *s, struct record *r)
{
	const char *p = s;
	regmatch_t m[10];
	size_t groups = re->re_nsub < 9 ? re->re_nsub : 9;

	r->v = NULL;
	r->n = 0;
	if (*s == '\0') {
		/* parallel: an empty line is one empty column */
		r->v = xmalloc(sizeof *r->v);
		r->v[r->n++] = xstrdup("");
		return;
	}
	for (;;) {
		size_t cap = (size_t)r->n;
		int flags = p == s ? 0 : REG_NOTBOL;

		xgrow(&r->v, &cap, (size_t)r->n + 2 + groups, sizeof *r->v);
		if (regexec(re, p, groups + 1, m, flags) != 0 || m[0].rm_eo == m[0].rm_so) {
			r->v[r->n++] = xstrdup(p);
			return;
		}
		r->v[r->n++] = xstrndup(p, (size_t)m[0].rm_so);
		/* perl's split: what each (group) captured is a column too ("" where it took no part) */
		for (size_t g = 1; g <= groups; g++)
			r->v[r->n++] = m[g].rm_so < 0 ? xstrdup("") :
			    xstrndup(p + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
		p += m[0].rm_eo;
	}
}

static void
csv_push(struct record *r, size_t *cap, struct sbuf *f)
{
	xgrow(&r->v, cap, (size_t)r->n + 1, sizeof *r->v);
	r->v[r->n++] = f->buf ? sbuf_detach(f) : xstrdup("");
	sbuf_init(f);
}

static int
csv_end(const char *p)
{
	return !*p || *p == '\n' || (*p == '\r' && p[1] == '\n');
}

int
input_csv_split(const char *s, const char *sep, struct record *r)
{
	size_t sl, cap = 0;
	const char *p = s;
	struct sbuf f;

	r->v = NULL;
	r->n = 0;
	if (!sep || !*sep)
		sep = ",";
	if (strpbrk(sep, "\"\r\n"))
		return err_set(EXIT_USAGE, "--csv: a separator holding a quote or a newline cannot "
		    "separate CSV fields (as Text::CSV refuses it)");
	sl = strlen(sep);
	r->v = NULL;
	r->n = 0;
	sbuf_init(&f);
	if (!*s) {
		csv_push(r, &cap, &f);
		sbuf_free(&f);
		return 0;
	}
	for (;;) {
		if (*p == '"') {
			for (p++;; p++) {
				if (!*p)
					goto bad;
				if (*p == '"' && p[1] != '"')
					break;
				if (*p == '"')
					p++;
				sbuf_addc(&f, *p);
			}
			p++;
			if (strncmp(p, sep, sl) == 0) {
				csv_push(r, &cap, &f);
				p += sl;
				continue;
			}
			if (!csv_end(p))
				goto bad;
			csv_push(r, &cap, &f);
			sbuf_free(&f);
			return 0;
		}
		for (;; p++) {
			if (strncmp(p, sep, sl) == 0 || csv_end(p))
				break;
			if (*p == '"' || *p == '\r')
				goto bad;
			sbuf_addc(&f, *p);
		}
		csv_push(r, &cap, &f);
		if (csv_end(p)) {
			sbuf_free(&f);
			return 0;
		}
		p += sl;
	}
bad:
	sbuf_free(&f);
	free_vals(r->v, (size_t)r->n);
	r->v = NULL;
	r->n = 0;
	/* the record on one line: its newlines and CRs as \n \r */
	for (p = s; *p && f.len < 200; p++)
		sbuf_add(&f, *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : (char[]){*p, '\0'});
	err_set(EXIT_USAGE, "--csv: not a CSV record (as parallel's Text::CSV reads it): %s",
	    f.buf ? f.buf : "");
	sbuf_free(&f);
	return -1;
}

/* Split a --header line into names: at --colsep, else at tabs (as parallel); no trailing empties. */
static void
add_names(struct inputs *in, const char *line)
{
	struct record r;
	regex_t tab;
	size_t cap = (size_t)in->nnames;

	if (in->has_colsep) {
		input_colsep_split(&in->colsep, line, &r);
	} else {
		if (regcomp(&tab, "\t", REG_EXTENDED) != 0)
			abort();
		input_colsep_split(&tab, line, &r);
		regfree(&tab);
	}
	while (r.n > 0 && r.v[r.n - 1][0] == '\0')
		free(r.v[--r.n]);
	for (int i = 0; i < r.n; i++) {
		xgrow(&in->names, &cap, (size_t)in->nnames + 1, sizeof *in->names);
		in->names[in->nnames++] = r.v[i];
	}
	free(r.v);
}

static int
read_headers(struct inputs *in)
{
	for (int i = 0; i < in->nsrc; i++) {
		struct source *s = &in->src[i];
		size_t dlen, n;
		const char *d = delim(in, &dlen);
		char *line = NULL;
		int r;

		if (in->o.header_names_files) {
			size_t cap = (size_t)in->nnames;

			/* --header 0: files are named by their names, ::: sources by their number */
			xgrow(&in->names, &cap, (size_t)in->nnames + 1, sizeof *in->names);
			in->names[in->nnames] = s->file ? xstrdup(s->file) : xasprintf("%d", in->nnames + 1);
			in->nnames++;
			continue;
		}
		if (s->eof)
			continue;
		r = read_raw(s->f, d, dlen, &line);
		if (r < 0)
			return err_sys(EXIT_USAGE, "input '%s'", s->file ? s->file : ":::");
		if (r == 0)
			continue;
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\r')
			line[n - 1] = '\0';
		add_names(in, line);
		s->header = line;
	}
	return 0;
}

/* ---- combining sources ----------------------------------------------- */

static int
group_len(const struct inputs *in, int g)
{
	int end = g + 1 < in->ng ? in->gfirst[g + 1] : in->nsrc;
	size_t len = (size_t)-1;

	for (int i = in->gfirst[g]; i < end; i++) {
		/* an empty source stands for one empty value */
		size_t n = in->src[i].n ? in->src[i].n : 1;

		if (n < len)
			len = n;
	}
	return (int)len;
}

static void
make_groups(struct inputs *in)
{
	in->gfirst = xcalloc((size_t)in->nsrc, sizeof *in->gfirst);
	in->glen = xcalloc((size_t)in->nsrc, sizeof *in->glen);
	for (int i = 0; i < in->nsrc; i++)
		if (i == 0 || (!in->src[i].linked && !in->o.link))
			in->gfirst[in->ng++] = i;
	in->idx = xcalloc((size_t)in->ng, sizeof *in->idx);
}

int
inputs_open(struct inputs *in)
{
	int first_end;

	if (in->nsrc == 0)
		inputs_add_file(in, "-", 0);
	/* --csv splits with its own reader; --header's names still at the regex, as parallel's */
	if (in->o.colsep && (!in->o.csv || in->o.header)) {
		if (input_colsep_compile(in->o.colsep, &in->colsep) < 0)
			return -1;
		in->has_colsep = 1;
	}
	for (int i = 0; i < in->nsrc; i++)
		if (open_source(in, &in->src[i]) < 0)
			return -1;
	if (in->o.header && read_headers(in) < 0)
		return -1;
	if (in->o.skip_first && !in->src[0].eof) {
		size_t dlen;
		const char *d = delim(in, &dlen);
		char *line;
		int r = read_raw(in->src[0].f, d, dlen, &line);

		if (r < 0)
			return err_sys(EXIT_USAGE, "input '%s'", in->src[0].file ? in->src[0].file : ":::");
		if (r > 0)
			free(line);
	}
	make_groups(in);
	/* group 0 streams, unless --link must recycle it */
	first_end = in->o.link ? 0 : (in->ng > 1 ? in->gfirst[1] : in->nsrc);
	for (int i = first_end; i < in->nsrc; i++)
		if (slurp(in, &in->src[i]) < 0)
			return -1;
	in->glen[0] = in->o.link ? in->nsrc : first_end;
	for (int g = 1; g < in->ng; g++)
		in->glen[g] = group_len(in, g);
	if (in->o.link) {
		in->all_empty = 1;
		for (int i = 0; i < in->nsrc; i++) {
			if (in->src[i].n > in->link_len)
				in->link_len = in->src[i].n;
			if (in->src[i].n)
				in->all_empty = 0;
		}
	}
	return 0;
}

void
record_free(struct record *r)
{
	free_vals(r->v, (size_t)r->n);
	r->v = NULL;
	r->n = 0;
}

/* Append value v as one column, or as its --colsep (--csv) columns. -1 with err set. */
static int
add_columns(struct inputs *in, struct record *r, const char *v, size_t *cap)
{
	struct record cols;

	if (in->o.csv) {
		if (input_csv_split(v, in->o.colsep, &cols) < 0) {
			record_free(r);
			return -1;
		}
	} else if (!in->has_colsep) {
		xgrow(&r->v, cap, (size_t)r->n + 1, sizeof *r->v);
		r->v[r->n++] = xstrdup(v);
		return 0;
	} else {
		input_colsep_split(&in->colsep, v, &cols);
	}
	xgrow(&r->v, cap, (size_t)(r->n + cols.n), sizeof *r->v);
	memcpy(r->v + r->n, cols.v, (size_t)cols.n * sizeof *cols.v);
	r->n += cols.n;
	free(cols.v);
	return 0;
}

static const char *
value_at(const struct source *s, size_t i)
{
	return s->n ? s->vals[i % s->n] : "";
}

/* --link: row k takes value k of each source, the shorter ones recycled. */
static int
next_linked(struct inputs *in, struct record *r)
{
	size_t cap = 0;

	if (in->all_empty || in->rows >= in->link_len)
		return 0;
	r->v = NULL;
	r->n = 0;
	for (int i = 0; i < in->nsrc; i++)
		if (add_columns(in, r, value_at(&in->src[i], in->rows), &cap) < 0)
			return -1;
	in->rows++;
	return 1;
}

/*
 * The next row of group 0, read in step from its sources: 1 a row, 0 the
 * end. A source that had no value at all gives "" once (the empty-source
 * rule); when every source of the run is empty there is no row.
 */
static int
next_row0(struct inputs *in)
{
	int n = in->glen[0], any = 0, ended = 0;
	char **row = xcalloc((size_t)n, sizeof *row);

	for (int i = 0; i < n; i++) {
		struct source *s = &in->src[i];
		int r = s->eof ? 0 : read_value(in, s, &row[i]);

		if (r < 0) {
			free_vals(row, (size_t)n);
			return -1;
		}
		if (r == 1) {
			s->streamed++;
			any = 1;
		} else if (in->rows == 0 && s->streamed == 0) {
			row[i] = xstrdup("");
		} else {
			ended = 1;
		}
	}
	if (ended || (!any && in->rows > 0)) {
		free_vals(row, (size_t)n);
		return 0;
	}
	if (!any) {
		/* group 0 is empty: a row of "" only when another source has values */
		int others = 0;

		for (int i = n; i < in->nsrc; i++)
			others |= in->src[i].n > 0;
		if (!others) {
			free_vals(row, (size_t)n);
			return 0;
		}
	}
	if (in->row0)
		free_vals(in->row0, (size_t)n);
	in->row0 = row;
	in->rows++;
	return 1;
}

/* The odometer over groups 1..ng-1 (the last varies fastest); 0 when it wraps. */
static int
advance(struct inputs *in)
{
	for (int g = in->ng - 1; g >= 1; g--) {
		if (++in->idx[g] < (size_t)in->glen[g])
			return 1;
		in->idx[g] = 0;
	}
	return 0;
}

int
inputs_next(struct inputs *in, struct record *r)
{
	size_t cap = 0;
	int rc;

	if (in->done)
		return 0;
	if (in->o.link) {
		rc = next_linked(in, r);
		in->done = rc == 0;
		return rc;
	}
	if (!in->started || !advance(in)) {
		in->started = 1;
		rc = next_row0(in);
		if (rc <= 0) {
			in->done = 1;
			for (int i = 0; i < in->glen[0]; i++)
				close_source(&in->src[i]);
			return rc;
		}
	}
	r->v = NULL;
	r->n = 0;
	for (int i = 0; i < in->glen[0]; i++)
		if (add_columns(in, r, in->row0[i], &cap) < 0)
			return -1;
	for (int g = 1; g < in->ng; g++) {
		int end = g + 1 < in->ng ? in->gfirst[g + 1] : in->nsrc;

		for (int i = in->gfirst[g]; i < end; i++)
			if (add_columns(in, r, value_at(&in->src[i], in->idx[g]), &cap) < 0)
				return -1;
	}
	return 1;
}

/* ---- -d and --colsep syntax ------------------------------------------ */

char *
input_unescape_delim(const char *s, size_t *len)
{
	struct sbuf b;

	sbuf_init(&b);
	for (const char *p = s; *p; p++) {
		if (*p != '\\' || !p[1]) {
			sbuf_addc(&b, *p);
			continue;
		}
		p++;
		if (*p == 't')
			sbuf_addc(&b, '\t');
		else if (*p == 'n')
			sbuf_addc(&b, '\n');
		else if (*p == 'r')
			sbuf_addc(&b, '\r');
		else if (*p >= '0' && *p <= '9') {
			/* \NNN (three digits, octal) or \N: perl's sprintf "\N" */
			int v = 0, k = 0;

			if (p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9') {
				for (; k < 3; k++)
					v = v * 8 + (p[k] - '0');
				p += 2;
			} else {
				v = *p - '0';
			}
			sbuf_addc(&b, (char)(v & 0xff));
		} else {
			sbuf_addc(&b, '\\');
			sbuf_addc(&b, *p);
		}
	}
	*len = b.len;
	if (!b.buf)
		sbuf_addc(&b, '\0');
	return sbuf_detach(&b);
}

static int
colsep_bad(const char *perl, const char *why)
{
	return err_set(EXIT_USAGE, "--colsep '%s': %s", perl, why);
}

/* perl's class escapes, as POSIX bracket contents (for use inside [...]) */
static const char *
class_body(char c)
{
	switch (c) {
	case 's': return "[:space:]";
	case 'd': return "0-9";
	case 'w': return "[:alnum:]_";
	default: return NULL;
	}
}

/* What perl has at p (in perl, outside a [...] unless in_class) that POSIX cannot say: why, or NULL. */
static const char *
colsep_refusal(const char *perl, const char *p, int in_class)
{
	char c = *p;

	if (c == '(' && p[1] == '?')
		return "perl's (?...) groups are not supported (use POSIX extended syntax)";
	if (in_class)
		return NULL;
	if ((c == '*' || c == '+' || c == '?' || c == '}') && p[1] == '?')
		return "lazy quantifiers are not supported";
	/*
	 * perl refuses nested quantifiers (a**, a{2}{3}) and a quantifier
	 * after nothing; possessive ones (a++) it has and POSIX has not. A
	 * stack of them also makes regcomp's automaton grow without bound.
	 */
	if ((c == '*' || c == '+' || c == '?' || c == '}') && (p[1] == '*' || p[1] == '+' || p[1] == '{'))
		return "nested or possessive quantifiers are not supported";
	if ((c == '*' || c == '+' || c == '?') && (p == perl || p[-1] == '(' || p[-1] == '|'))
		return "a quantifier follows nothing";
	if (c == '{' && p > perl && p[-1] != '\\') {
		/* {n}, {n,}, {n,m}: counts above 255 make the automaton too large */
		long n = 0;

		for (const char *q = p + 1; (*q >= '0' && *q <= '9') || *q == ','; q++) {
			n = *q == ',' ? 0 : n * 10 + (*q - '0');
			if (n > 255)
				return "a repetition count above 255";
		}
	}
	return NULL;
}

/* perl's escape \c as POSIX into b: NULL, or why it cannot be. */
static const char *
colsep_escape(struct sbuf *b, char c, int in_class)
{
	if (c == 't' || c == 'n' || c == 'r' || c == 'f') {
		sbuf_addc(b, c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : '\f');
	} else if (class_body(c) || class_body((char)(c + 32))) {
		int neg = c >= 'A' && c <= 'Z';
		const char *body = class_body(neg ? (char)(c + 32) : c);

		if (in_class && neg)
			return "\\S, \\D and \\W inside [...] are not supported";
		if (in_class)
			sbuf_add(b, body);
		else
			sbuf_printf(b, "[%s%s]", neg ? "^" : "", body);
	} else if (c >= '1' && c <= '9') {
		return "back references are not supported";
	} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
		return "this perl escape is not supported (\\t \\n \\r \\f \\s \\S \\d \\D \\w \\W are)";
	} else if (in_class) {
		/* inside a POSIX bracket a backslash is literal: keep the character only */
		sbuf_addc(b, c);
	} else {
		sbuf_addc(b, '\\');
		sbuf_addc(b, c);
	}
	return NULL;
}

/* perl's pattern as POSIX extended syntax into b: NULL, or why it cannot be. */
static const char *
colsep_translate(const char *perl, struct sbuf *b)
{
	int in_class = 0;
	const char *why;

	for (const char *p = perl; *p; p++) {
		char c = *p;

		if ((why = colsep_refusal(perl, p, in_class)) != NULL)
			return why;
		if (c == '[' && !in_class) {
			in_class = 1;
			sbuf_addc(b, c);
			if (p[1] == '^')
				sbuf_addc(b, *++p);
			if (p[1] == ']')
				sbuf_addc(b, *++p);
		} else if (c == ']' && in_class) {
			in_class = 0;
			sbuf_addc(b, c);
		} else if (c != '\\' || !p[1]) {
			sbuf_addc(b, c);
		} else if ((why = colsep_escape(b, *++p, in_class)) != NULL) {
			return why;
		}
	}
	return NULL;
}

int
input_colsep_compile(const char *perl, regex_t *re)
{
	struct sbuf b;
	const char *why;
	int rc;
	regmatch_t m;

	if (!*perl)
		return colsep_bad(perl, "empty");
	if (strlen(perl) > 1024)
		return colsep_bad(perl, "longer than 1024 characters");
	sbuf_init(&b);
	if ((why = colsep_translate(perl, &b)) != NULL) {
		sbuf_free(&b);
		return colsep_bad(perl, why);
	}
	rc = regcomp(re, b.buf ? b.buf : "", REG_EXTENDED);
	sbuf_free(&b);
	if (rc != 0)
		return colsep_bad(perl, "not a regular expression");
	/* perl splits at every character where the pattern matches nothing: refused */
	if (regexec(re, "", 1, &m, 0) == 0) {
		regfree(re);
		return colsep_bad(perl, "matches the empty string (perl would split between every "
		    "character; escape it: '\\|', '\\.')");
	}
	return 0;
}
