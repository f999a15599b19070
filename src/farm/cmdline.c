/*
 * cmdline: GNU parallel's command line for a task (see cmdline.h).
 *
 * A template is compiled into tokens the way parallel splits it: literal
 * text, each white-space character apart, the separator between two of the
 * user's words, an empty word, and replacement strings. A task's line is
 * those tokens with the replacement strings expanded, put into groups at
 * the separators, the groups joined by spaces (each group quoted whole
 * under -q). The value transformations copy parallel's perl expressions,
 * newlines included ({/} is s:.*\/::, whose . stops at a newline).
 */
#include "farm/cmdline.h"
#include "farm/perl.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { TK_TEXT, TK_WS, TK_SEP, TK_EMPTY, TK_RPL };

struct tok {
	int kind;
	const char *text;     /* TK_TEXT, TK_WS: into tmpl->words */
	size_t len;
	int op;               /* TK_RPL: enum rpl_op */
	int pos;              /* TK_RPL: 0 every value; else the value's number (negative: from the last) */
	int key;              /* TK_RPL: index in tmpl->keys */
	int expr;             /* OP_PERL: index in tmpl->perl_ids */
};

/* A distinct replacement string, for the length estimate. */
struct lenkey {
	int op, pos, expr;
	int count;            /* occurrences in the template */
};

/* ---- quoting ----------------------------------------------------------- */

static int
plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '_' || c == '.' || c == '+' || c == '/';
}

/*
 * parallel's shell_quote_scalar_default: a value of only [-_.+a-zA-Z0-9/]
 * stays as it is; "" becomes ''; anything else is put in single quotes,
 * each ' written '"'"', and the '' this leaves at either end dropped.
 */
static void
quote_n(struct sbuf *out, const char *s, size_t n)
{
	size_t start = out->len;
	int plain = 1;

	for (size_t i = 0; i < n && plain; i++)
		plain = plain_char((unsigned char)s[i]);
	if (n == 0) {
		sbuf_add(out, "''");
		return;
	}
	if (plain) {
		sbuf_addn(out, s, n);
		return;
	}
	sbuf_addc(out, '\'');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			sbuf_add(out, "'\"'\"'");
		else
			sbuf_addc(out, s[i]);
	}
	sbuf_addc(out, '\'');
	if (out->len - start >= 2 && memcmp(out->buf + start, "''", 2) == 0) {
		memmove(out->buf + start, out->buf + start + 2, out->len - start - 2);
		out->len -= 2;
		out->buf[out->len] = '\0';
	}
	if (out->len - start >= 2 && memcmp(out->buf + out->len - 2, "''", 2) == 0) {
		out->len -= 2;
		out->buf[out->len] = '\0';
	}
}

void
shell_quote(struct sbuf *out, const char *s)
{
	quote_n(out, s, strlen(s));
}

/* ---- values ------------------------------------------------------------ */

static int
perl_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* s:\.[^/.]*$:: : from the last '.' when no '/' follows it */
static size_t
noext_len(const char *s, size_t n)
{
	for (size_t i = n; i > 0; i--) {
		if (s[i - 1] == '/')
			return n;
		if (s[i - 1] == '.')
			return i - 1;
	}
	return n;
}

/*
 * s:.*\/:: : perl's . does not match a newline, so what goes is the first
 * line that holds a '/', up to its last '/'. *cut is where that starts.
 */
static size_t
base_cut(const char *s, size_t n, size_t *cut_len)
{
	size_t line = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '\n') {
			size_t last = (size_t)-1;

			for (size_t k = line; k < i; k++)
				if (s[k] == '/')
					last = k;
			if (last != (size_t)-1) {
				*cut_len = last + 1 - line;
				return line;
			}
			line = i + 1;
		}
	}
	*cut_len = 0;
	return 0;
}

/* File::Basename::dirname on Unix (what parallel's {//} calls). */
static void
dirname_perl(const char *s, size_t n, struct sbuf *out)
{
	while (n > 1 && s[n - 1] == '/')
		n--;
	while (n > 0 && s[n - 1] != '/')
		n--;
	if (n == 0) {
		sbuf_addc(out, '.');
		return;
	}
	while (n > 1 && s[n - 1] == '/')
		n--;
	sbuf_addn(out, s, n);
}

/* s trimmed as --trim says: where it starts, *n its length. */
static const char *
trimmed(const char *s, int trim, size_t *n)
{
	*n = strlen(s);
	if (trim == TRIM_LEFT || trim == TRIM_BOTH)
		while (*n > 0 && perl_space(*s)) {
			s++;
			(*n)--;
		}
	if (trim == TRIM_RIGHT || trim == TRIM_BOTH)
		while (*n > 0 && perl_space(s[*n - 1]))
			(*n)--;
	return s;
}

/* The value op makes of s (trimmed as --trim says), appended unquoted to out. */
static void
transform(struct sbuf *out, const char *s, int op, int trim)
{
	size_t n, cut, cutlen;

	s = trimmed(s, trim, &n);
	switch (op) {
	case OP_NOEXT:
		sbuf_addn(out, s, noext_len(s, n));
		return;
	case OP_DIR:
		dirname_perl(s, n, out);
		return;
	case OP_BASE:
	case OP_BASE_NOEXT: {
		size_t start = out->len;

		cut = base_cut(s, n, &cutlen);
		sbuf_addn(out, s, cut);
		sbuf_addn(out, s + cut + cutlen, n - cut - cutlen);
		if (op == OP_BASE_NOEXT) {
			out->len = start + noext_len(out->buf + start, out->len - start);
			out->buf[out->len] = '\0';
		}
		return;
	}
	default:
		sbuf_addn(out, s, n);
		return;
	}
}

/* A perl expression on value s (value number argno of the task), into tmp; 0: insert it unquoted. */
static int
perl_value(struct sbuf *tmp, const struct tmpl *t, const struct tok *k, const char *s, int argno,
    const struct job_vals *v, int quote)
{
	int flags = 0;
	size_t n;
	char *val;

	if (!t->perl || (v->status && (*v->status & TMPL_FAILED)))
		return quote;
	/* -N0: parallel's perl sees its "\0noarg" as $_ and in @arg */
	if (v->noarg) {
		s = PERL_NOARG;
		n = PERL_NOARG_LEN;
	} else {
		s = trimmed(s, t->trim, &n);
	}
	val = xmalloc(n + 1);
	memcpy(val, s, n);
	val[n] = '\0';
	if (perl_job(t->perl, v->seq, v->slot, v->total, v->v, v->n, v->noarg) < 0 ||
	    perl_eval(t->perl, t->perl_ids[k->expr], argno, val, n, tmp, &flags) < 0) {
		if (v->status)
			*v->status |= TMPL_FAILED;
		else
			err_clear();
	}
	free(val);
	if ((flags & PERL_SKIP) && v->status)
		*v->status |= TMPL_SKIP;
	return flags & PERL_UQ ? 0 : quote;
}

/*
 * One replacement string's text for value s, value number argno (seq, slot, gpu: the task's own).
 * Returns 0, or 1 when it is nothing at all: under -N0 a perl expression that left parallel's
 * "\0noarg" as it was (parallel drops that word, where "" would be an empty argument).
 */
static int
replacement(struct sbuf *out, const struct tmpl *t, const struct tok *k, const char *s, int argno,
    const struct job_vals *v, int quote)
{
	struct sbuf tmp;

	sbuf_init(&tmp);
	if (k->op == OP_PERL)
		quote = perl_value(&tmp, t, k, s, argno, v, quote);
	else if (k->op == OP_SEQ)
		sbuf_printf(&tmp, "%llu", v->seq);
	else if (k->op == OP_SLOT)
		sbuf_printf(&tmp, "%d", v->slot);
	else if (k->op == OP_GPU)
		sbuf_add(&tmp, v->gpu ? v->gpu : "");
	else
		transform(&tmp, s, k->op, t->trim);
	if (k->op == OP_PERL && v->noarg && tmp.len == PERL_NOARG_LEN &&
	    memcmp(tmp.buf, PERL_NOARG, PERL_NOARG_LEN) == 0) {
		sbuf_free(&tmp);
		return 1;
	}
	if (quote && !(v->raw && !t->quote_all && k->op != OP_SEQ && k->op != OP_SLOT && k->op != OP_GPU))
		quote_n(out, tmp.buf ? tmp.buf : "", tmp.len);
	else
		sbuf_addn(out, tmp.buf ? tmp.buf : "", tmp.len);
	sbuf_free(&tmp);
	return 0;
}

/* ---- compiling ----------------------------------------------------------- */

static int
add_key(struct tmpl *t, int op, int pos, int expr)
{
	for (int i = 0; i < t->nkeys; i++)
		if (t->keys[i].op == op && t->keys[i].pos == pos && t->keys[i].expr == expr) {
			t->keys[i].count++;
			return i;
		}
	t->keys = xrealloc(t->keys, (size_t)(t->nkeys + 1) * sizeof *t->keys);
	t->keys[t->nkeys] = (struct lenkey){op, pos, expr, 1};
	return t->nkeys++;
}

static void
push_tok(struct tmpl *t, struct tok k)
{
	size_t cap = (size_t)t->n;

	xgrow(&t->t, &cap, (size_t)t->n + 1, sizeof *t->t);
	t->t[t->n++] = k;
}

/* Split literal text into runs and single white-space characters. */
static void
push_text(struct tmpl *t, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		if (perl_space(s[i])) {
			push_tok(t, (struct tok){TK_WS, s + i, 1, 0, 0, 0, 0});
			i++;
			continue;
		}
		while (j < n && !perl_space(s[j]))
			j++;
		push_tok(t, (struct tok){TK_TEXT, s + i, j - i, 0, 0, 0, 0});
		i = j;
	}
}

/* Measure context and non-context lengths of one word, as parallel's estimate does. */
static void
measure_word(struct tmpl *t, int first_tok, int end_tok)
{
	int in_ctx = 0, start = first_tok;

	for (int i = first_tok; i <= end_tok; i++) {
		/* a run of non-white-space tokens is context when it holds a replacement string */
		if (i == end_tok || t->t[i].kind == TK_WS) {
			size_t len = 0;

			for (int k = start; k < i; k++)
				if (t->t[k].kind == TK_TEXT)
					len += t->t[k].len;
			if (in_ctx) {
				t->context_len += len;
				t->ctxgroups++;
			} else {
				t->noncontext += len;
			}
			if (i < end_tok)
				t->noncontext++;
			start = i + 1;
			in_ctx = 0;
			continue;
		}
		if (t->t[i].kind == TK_RPL)
			in_ctx = 1;
	}
}

/* The run's perl, started on first use. */
static int
start_perl(const struct tmpl_opts *o)
{
	if (!o->perl)
		return err_set(EXIT_INTERNAL, "a perl replacement string without perl");
	return o->perl->pid == 0 ? perl_open(o->perl, o->max_jobs) : 0;
}

/* A perl expression's id in perl (compiled on first use; perl started on the first one). */
static int
perl_expr(struct tmpl *t, const char *code, const struct tmpl_opts *o)
{
	int id;

	if (start_perl(o) < 0)
		return -1;
	if ((id = perl_compile(o->perl, code)) < 0)
		return -1;
	t->perl = o->perl;
	t->perl_ids = xrealloc(t->perl_ids, (size_t)(t->nperl + 1) * sizeof *t->perl_ids);
	t->perl_ids[t->nperl] = id;
	return t->nperl++;
}

static int
compile_word(struct tmpl *t, const char *w, const struct tmpl_opts *o)
{
	struct rplseg *segs;
	int first = t->n, nsegs, rc = 0;

	if (!*w) {
		push_tok(t, (struct tok){TK_EMPTY, "", 0, 0, 0, 0, 0});
		return 0;
	}
	if (rpl_split(&t->rs, w, o->perl, &segs, &nsegs) < 0) {
		rplsegs_free(segs, nsegs);
		return -1;
	}
	for (int i = 0; i < nsegs && rc == 0; i++) {
		struct rplseg *g = &segs[i];
		int expr = 0;

		if (!g->rpl) {
			push_text(t, g->text, g->len);
			continue;
		}
		if (g->op == OP_PERL && (expr = perl_expr(t, g->code, o)) < 0) {
			rc = -1;
			break;
		}
		push_tok(t, (struct tok){TK_RPL, NULL, 0, g->op, g->pos, add_key(t, g->op, g->pos, expr),
		    expr});
		t->has_rpl = 1;
	}
	rplsegs_free(segs, nsegs);
	measure_word(t, first, t->n);
	return rc;
}

int
tmpl_needs_total(const struct tmpl *t)
{
	return t->perl != NULL && t->needs_total;
}

/* {=name perl =} becomes {=N perl =}, as parallel's s:$left $s (.*?) $right:$l$id$1$r:gx */
static char *
put_perl_name(char *cur, const char *name, int id, const char *l, const char *r)
{
	size_t ll = strlen(l), nl = strlen(name), rl = strlen(r);
	struct sbuf b;
	const char *p = cur;

	sbuf_init(&b);
	while (*p) {
		const char *mid = p + ll + nl, *end;

		if (strncmp(p, l, ll) != 0 || strncmp(p + ll, name, nl) != 0 || !(end = strstr(mid, r)) ||
		    memchr(mid, '\n', (size_t)(end - mid))) {
			sbuf_addc(&b, *p++);
			continue;
		}
		sbuf_printf(&b, "%s%d", l, id);
		sbuf_addn(&b, mid, (size_t)(end - mid));
		sbuf_add(&b, r);
		p = end + rl;
	}
	free(cur);
	return sbuf_detach(&b);
}

/* {name} {name.} ... of a --header column become {N} {N.} ..., {=name perl =} {=N perl =} */
static char *
put_names(const char *w, char *const *names, int nnames, const char *parens)
{
	static const char *const suffix[] = {"}", "/}", "//}", ".}", "/.}"};
	char *cur = xstrdup(w), l[64], r[64];
	size_t half;

	if (!parens || strlen(parens) < 2 || strlen(parens) >= 2 * sizeof l)
		parens = "{==}";
	half = strlen(parens) / 2;
	snprintf(l, sizeof l, "%.*s", (int)half, parens);
	snprintf(r, sizeof r, "%s", parens + half);

	for (int i = 0; i < nnames; i++) {
		size_t nl = strlen(names[i]);
		struct sbuf b;
		const char *p = cur;

		if (!nl)
			continue;
		sbuf_init(&b);
		while (*p) {
			size_t k;

			if (*p != '{' || strncmp(p + 1, names[i], nl) != 0) {
				sbuf_addc(&b, *p++);
				continue;
			}
			for (k = 0; k < 5; k++)
				if (str_starts(p + 1 + nl, suffix[k]))
					break;
			if (k == 5) {
				sbuf_addc(&b, *p++);
				continue;
			}
			sbuf_printf(&b, "{%d%s", i + 1, suffix[k]);
			p += 1 + nl + strlen(suffix[k]);
		}
		free(cur);
		cur = put_perl_name(sbuf_detach(&b), names[i], i + 1, l, r);
	}
	return cur;
}

/* parallel: a replacement string in the command's first word (up to ' ', tab, newline, '=') */
static int
rpl_in_first_word(const struct tmpl *t)
{
	for (int i = 0; i < t->n; i++) {
		const struct tok *k = &t->t[i];

		if (k->kind == TK_RPL)
			return 1;
		if (k->kind == TK_SEP || (k->kind == TK_WS && strchr(" \t\n", k->text[0])))
			return 0;
		if (k->kind == TK_TEXT && memchr(k->text, '=', k->len))
			return 0;
	}
	return 0;
}

/* Does w hold a left paren ({=) that no right one (=}) closes, matched as parallel does? */
static int
unclosed(const char *w, const char *l, const char *r)
{
	char *s = xstrdup(w), *at;
	size_t ll = strlen(l), rl = strlen(r);
	int open = 0;

	/* parallel: while(s/(.*)L.*?R/$1/) {} : the rightmost L, with the nearest R after it */
	for (;;) {
		char *last = NULL, *end;

		for (at = strstr(s, l); at; at = strstr(at + 1, l))
			last = at;
		if (!last || (end = strstr(last + ll, r)) == NULL) {
			open = last != NULL;
			break;
		}
		memmove(last, end + rl, strlen(end + rl) + 1);
	}
	free(s);
	return open;
}

/*
 * parallel's merge_rpl_parts: words that split a perl expression
 * (echo {= s/a/b/ =} unquoted: "{=" "s/a/b/" "=}") are joined by spaces
 * into one. *n gets the number of words; the words are new strings.
 */
static char **
merge_words(char **words, int nwords, const char *parens, int *n)
{
	char **out = xcalloc((size_t)nwords + 2, sizeof *out), l[64], r[64];
	size_t half;

	if (!parens || strlen(parens) < 2 || strlen(parens) >= 2 * sizeof l)
		parens = "{==}";
	half = strlen(parens) / 2;
	snprintf(l, sizeof l, "%.*s", (int)half, parens);
	snprintf(r, sizeof r, "%s", parens + half);
	*n = 0;
	for (int i = 0; i < nwords; i++) {
		char *w = xstrdup(words[i]);

		while (unclosed(w, l, r) && i + 1 < nwords) {
			char *joined = xasprintf("%s %s", w, words[++i]);

			free(w);
			w = joined;
		}
		out[(*n)++] = w;
	}
	return out;
}

/* The words' tokens (again after {} was appended). */
static int
compile_words(struct tmpl *t, const struct tmpl_opts *o)
{
	for (int i = 0; i < t->nwords; i++) {
		if (i > 0)
			push_tok(t, (struct tok){TK_SEP, " ", 1, 0, 0, 0, 0});
		if (compile_word(t, t->words[i], o) < 0)
			return -1;
	}
	return 0;
}

int
tmpl_compile(struct tmpl *t, char **words, int nwords, const struct tmpl_opts *o)
{
	char **merged;
	int nmerged;

	memset(t, 0, sizeof *t);
	merged = merge_words(words, nwords, o->parens, &nmerged);
	t->words = xcalloc((size_t)nmerged + 2, sizeof *t->words);
	for (int i = 0; i < nmerged; i++) {
		t->words[t->nwords++] = put_names(merged[i], o->names, o->nnames, o->parens);
		/* parallel counts every task first for total_jobs() */
		t->needs_total |= strstr(merged[i], "total_jobs") != NULL || strstr(merged[i], "{##}") != NULL ||
		    strstr(merged[i], "{0#}") != NULL;
		free(merged[i]);
	}
	free(merged);
	for (int i = 0; i < o->nrpl_defs; i++)
		t->needs_total |= strstr(o->rpl_defs[i], "total_jobs") != NULL;
	t->quote_all = o->quote_all;
	t->quote_line = o->quote_line;
	t->context = o->context;
	t->trim = o->trim;
	if (rplset_init(&t->rs, o->rpl, o->plus, o->rpl_defs, o->nrpl_defs, o->parens) < 0 ||
	    (t->rs.dyn && start_perl(o) < 0) || compile_words(t, o) < 0) {
		tmpl_free(t);
		return -1;
	}
	if (!t->has_rpl && o->append) {
		/* no replacement string: the values are appended, as {} */
		t->words[t->nwords++] = xstrdup(o->rpl && o->rpl[RPL_ALL] ? o->rpl[RPL_ALL] : "{}");
		free(t->t);
		free(t->keys);
		t->t = NULL;
		t->keys = NULL;
		t->n = t->nkeys = 0;
		t->noncontext = t->context_len = 0;
		t->ctxgroups = 0;
		if (compile_words(t, o) < 0) {
			tmpl_free(t);
			return -1;
		}
	}
	t->quote_args = !rpl_in_first_word(t) && !t->quote_all && !o->raw;
	return 0;
}

void
tmpl_free(struct tmpl *t)
{
	for (int i = 0; i < t->nwords; i++)
		free(t->words[i]);
	free(t->words);
	free(t->t);
	free(t->keys);
	free(t->perl_ids);
	rplset_free(&t->rs);
	memset(t, 0, sizeof *t);
}

/* ---- building ------------------------------------------------------------ */

/* The pieces of a line before they are grouped: text, or a group separator. */
struct piece {
	int sep;              /* 1: separator between groups */
	size_t off, len;      /* into the text buffer */
};

struct build {
	struct sbuf text;
	struct piece *p;
	size_t n, cap;
};

static void
piece_sep(struct build *b)
{
	xgrow(&b->p, &b->cap, b->n + 1, sizeof *b->p);
	b->p[b->n++] = (struct piece){1, 0, 0};
}

static void
piece_open(struct build *b)
{
	xgrow(&b->p, &b->cap, b->n + 1, sizeof *b->p);
	b->p[b->n++] = (struct piece){0, b->text.len, 0};
}

static void
piece_close(struct build *b)
{
	b->p[b->n - 1].len = b->text.len - b->p[b->n - 1].off;
}

static void
piece_lit(struct build *b, const struct tok *k)
{
	piece_open(b);
	sbuf_addn(&b->text, k->text, k->len);
	piece_close(b);
}

/* The index of the value a positional replacement string refers to (perl's indexing), or -1. */
static long
positional_index(const struct job_vals *v, int pos)
{
	long i = pos > 0 ? pos - 1 : v->n + pos;

	if (i < 0)
		i += v->n;   /* perl: a negative index counts from the end again */
	return i < 0 || i >= v->n ? -1 : i;
}

static const char *
positional(const struct job_vals *v, int pos)
{
	long i = positional_index(v, pos);

	return i < 0 ? NULL : v->v[i];
}

/* One replacement for value number a; returns whether it was a per-value one. */
static int
expand_one(struct build *b, const struct tmpl *t, const struct tok *k, const struct job_vals *v,
    int a)
{
	static const char *const empty = "";
	const char *s;
	int per_value = k->pos == 0, argno = a;

	if (per_value)
		s = v->n ? v->v[a] : empty;
	else if (k->op == OP_SEQ || k->op == OP_SLOT || k->op == OP_GPU)
		s = NULL;
	else if ((s = positional(v, k->pos)) != NULL)
		argno = (int)positional_index(v, k->pos);
	if (!per_value && !s && k->op != OP_SEQ && k->op != OP_SLOT && k->op != OP_GPU) {
		/* parallel: a value that is not there is "", not even quoted */
		piece_open(b);
		piece_close(b);
		return 0;
	}
	/* -N0: nothing is inserted, but what a perl expression makes of parallel's "\0noarg" */
	if (v->noarg && s && k->op != OP_SEQ && k->op != OP_SLOT && k->op != OP_GPU &&
	    k->op != OP_PERL)
		return per_value;
	piece_open(b);
	if (replacement(&b->text, t, k, s ? s : "", argno, v, t->quote_args))
		b->n--;   /* the piece just opened is dropped */
	else
		piece_close(b);
	return per_value;
}

static int
nvalues(const struct job_vals *v)
{
	return v->n ? v->n : 1;
}

static void
expand_plain(struct build *b, const struct tmpl *t, const struct job_vals *v)
{
	for (int i = 0; i < t->n; i++) {
		const struct tok *k = &t->t[i];

		if (k->kind == TK_SEP) {
			piece_sep(b);
		} else if (k->kind != TK_RPL) {
			piece_lit(b, k);
		} else {
			for (int a = 0; a < nvalues(v); a++) {
				if (a > 0)
					piece_sep(b);
				if (!expand_one(b, t, k, v, a))
					break;
			}
		}
	}
}

/* -X/-N: each run of tokens between spaces that holds a replacement string repeats per value. */
static void
flush_context(struct build *b, const struct tmpl *t, const struct job_vals *v, int from, int to)
{
	int has = 0;

	for (int i = from; i < to; i++)
		has |= t->t[i].kind == TK_RPL;
	if (!has) {
		for (int i = from; i < to; i++)
			piece_lit(b, &t->t[i]);
		return;
	}
	for (int a = 0; a < nvalues(v); a++) {
		int normal = 0;

		if (a > 0)
			piece_sep(b);
		for (int i = from; i < to; i++) {
			if (t->t[i].kind == TK_RPL)
				normal |= expand_one(b, t, &t->t[i], v, a);
			else
				piece_lit(b, &t->t[i]);
		}
		if (!normal)
			break;
	}
}

static void
expand_context(struct build *b, const struct tmpl *t, const struct job_vals *v)
{
	int start = 0;

	for (int i = 0; i <= t->n; i++) {
		const struct tok *k = i < t->n ? &t->t[i] : NULL;
		int space = k && k->kind == TK_WS && k->text[0] == ' ';

		if (!k || k->kind == TK_SEP || space || (k->kind == TK_WS && k->text[0] == '\t')) {
			flush_context(b, t, v, start, i);
			start = i;
			if (k && k->kind == TK_SEP) {
				piece_sep(b);
				start = i + 1;
			} else if (space) {
				piece_lit(b, k);
				start = i + 1;
			}
			/* a tab starts the next run, as in parallel */
		}
	}
}

char *
tmpl_build(const struct tmpl *t, const struct job_vals *v)
{
	struct build b = {{0}, NULL, 0, 0};
	struct sbuf line;
	size_t g = 0;
	int ngroups = 0;

	sbuf_init(&b.text);
	if (t->context)
		expand_context(&b, t, v);
	else
		expand_plain(&b, t, v);
	sbuf_init(&line);
	/* join groups by spaces; under -q a non-empty group is quoted whole */
	while (g <= b.n) {
		size_t e = g, start = b.text.len, have = 0;
		struct sbuf grp;

		while (e < b.n && !b.p[e].sep)
			e++;
		sbuf_init(&grp);
		for (size_t k = g; k < e; k++) {
			sbuf_addn(&grp, b.text.buf + b.p[k].off, b.p[k].len);
			have++;
		}
		(void)start;
		if (!t->quote_all || have) {
			if (ngroups++ > 0)
				sbuf_addc(&line, ' ');
			if (t->quote_all)
				quote_n(&line, grp.buf ? grp.buf : "", grp.len);
			else
				sbuf_addn(&line, grp.buf ? grp.buf : "", grp.len);
		}
		sbuf_free(&grp);
		g = e + 1;
	}
	sbuf_free(&b.text);
	free(b.p);
	if (t->quote_line) {
		struct sbuf q;

		sbuf_init(&q);
		quote_n(&q, line.buf ? line.buf : "", line.len);
		sbuf_free(&line);
		return sbuf_detach(&q);
	}
	return sbuf_detach(&line);
}

char *
tmpl_build_cmd(const struct tmpl *t, const struct job_vals *v)
{
	/*
	 * parallel evaluates a command's perl expressions twice, for the line's
	 * length and to build it; what the first gave is kept unless it is false
	 * (see farm/perl.c). An expression with a side effect tells the
	 * difference: '{= $_ = $foo++ =}' counts from 1.
	 */
	if (t->nperl > 0)
		free(tmpl_build(t, v));
	return tmpl_build(t, v);
}

/* ---- GNU parallel's length estimate ---------------------------------------- */

void
cmdline_len_init(struct cmdline_len *l, const struct tmpl *t)
{
	l->sum = xcalloc((size_t)t->nkeys + 1, sizeof *l->sum);
	l->nrec = 0;
	l->rec_n = 0;
}

void
cmdline_len_free(struct cmdline_len *l)
{
	free(l->sum);
	l->sum = NULL;
}

static size_t
value_len(const struct tmpl *t, const struct lenkey *key, const char *s, unsigned long long seq)
{
	struct job_vals v = {NULL, 0, 0, seq, 1, NULL, 0, 0, NULL, 0};
	/* a perl expression is counted as its value (running perl for an estimate would cost more) */
	struct tok k = {TK_RPL, NULL, 0, key->op == OP_PERL ? OP_ALL : key->op, key->pos, 0, 0};
	struct sbuf b;
	size_t n;

	sbuf_init(&b);
	replacement(&b, t, &k, s, 0, &v, t->quote_args);
	n = b.len;
	sbuf_free(&b);
	return n;
}

void
cmdline_len_add(struct cmdline_len *l, const struct tmpl *t, char **rec, int n,
    unsigned long long seq, int sign)
{
	for (int k = 0; k < t->nkeys; k++) {
		const struct lenkey *key = &t->keys[k];
		size_t add = 0;

		if (key->pos != 0) {
			/* a positional one counts its column of each record (perl's negative index) */
			int col = key->pos < 0 ? n + key->pos : key->pos - 1;

			if (col >= 0 && col < n)
				add = value_len(t, key, rec[col], seq);
		} else {
			for (int i = 0; i < n; i++)
				add += value_len(t, key, rec[i], seq);
		}
		l->sum[k] = sign > 0 ? l->sum[k] + add : l->sum[k] - add;
	}
	l->nrec += sign;
	if (sign > 0 && l->nrec == 1)
		l->rec_n = n;
}

size_t
cmdline_len(const struct cmdline_len *l, const struct tmpl *t)
{
	size_t recargs = (size_t)l->nrec * (size_t)l->rec_n;
	size_t len = t->noncontext + (size_t)(t->nwords > 0 ? t->nwords - 1 : 0);

	if (t->context) {
		len += recargs * t->context_len;
		for (int k = 0; k < t->nkeys; k++)
			len += l->sum[k] * (size_t)t->keys[k].count;
		if (recargs > 0)
			len += (recargs - 1) * (size_t)t->ctxgroups;
	} else {
		len += t->context_len;
		for (int k = 0; k < t->nkeys; k++)
			len += (recargs + l->sum[k] - (recargs > 0)) * (size_t)t->keys[k].count;
	}
	return t->quote_all ? len * 3 : len;
}
