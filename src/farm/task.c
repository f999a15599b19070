/*
 * task: input sources, their cross product in GNU parallel's order, and the
 * expansion of replacement strings into one task's argv.
 */
#include "farm/task.h"
#include "util/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
inputs_init(struct inputs *in)
{
	memset(in, 0, sizeof *in);
}

void
inputs_free(struct inputs *in)
{
	for (int i = 0; i < in->nsrc; i++) {
		struct source *s = &in->src[i];

		for (size_t k = 0; k < s->n; k++)
			free(s->items[k]);
		free(s->items);
		free(s->name);
		if (s->f && s->f != stdin)
			fclose(s->f);
	}
	free(in->src);
	free(in->first);
	free(in->idx);
	memset(in, 0, sizeof *in);
}

static struct source *
add_source(struct inputs *in, int kind)
{
	struct source *s;

	if (in->nsrc == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 4;
		in->src = xrealloc(in->src, (size_t)in->cap * sizeof *in->src);
	}
	s = &in->src[in->nsrc++];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	return s;
}

struct source *
inputs_add_args(struct inputs *in)
{
	return add_source(in, SOURCE_ARGS);
}

void
source_add_value(struct source *s, const char *v)
{
	xgrow(&s->items, &s->cap, s->n + 1, sizeof *s->items);
	s->items[s->n++] = xstrdup(v);
}

void
inputs_add_file(struct inputs *in, const char *name)
{
	add_source(in, SOURCE_FILE)->name = xstrdup(name);
}

/* One line without its newline, or NULL at the end (or on a read error: errno set). */
static char *
read_line(FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	errno = 0;
	n = getline(&line, &cap, f);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

static int
open_source(struct source *s)
{
	if (strcmp(s->name, "-") == 0) {
		s->f = stdin;
		return 0;
	}
	s->f = fopen(s->name, "r");
	if (!s->f)
		return err_sys(EXIT_USAGE, "input file '%s'", s->name);
	return 0;
}

/* Read a later source whole: it is needed once per value of the first. */
static int
slurp_source(struct source *s)
{
	char *line;

	if (open_source(s) < 0)
		return -1;
	while ((line = read_line(s->f)) != NULL) {
		xgrow(&s->items, &s->cap, s->n + 1, sizeof *s->items);
		s->items[s->n++] = line;
	}
	if (ferror(s->f))
		return err_sys(EXIT_USAGE, "input file '%s'", s->name);
	if (s->f != stdin)
		fclose(s->f);
	s->f = NULL;
	s->kind = SOURCE_ARGS;
	return 0;
}

int
inputs_open(struct inputs *in)
{
	if (in->nsrc == 0)
		inputs_add_file(in, "-");
	for (int i = 1; i < in->nsrc; i++)
		if (in->src[i].kind == SOURCE_FILE && slurp_source(&in->src[i]) < 0)
			return -1;
	if (in->src[0].kind == SOURCE_FILE && open_source(&in->src[0]) < 0)
		return -1;
	in->idx = xcalloc((size_t)in->nsrc, sizeof *in->idx);
	return 0;
}

/* Advance the first (streamed) source: 1 a value, 0 the end, -1 error. */
static int
next_first(struct inputs *in)
{
	struct source *s = &in->src[0];

	free(in->first);
	in->first = NULL;
	if (s->kind == SOURCE_ARGS) {
		if (in->idx[0] >= s->n)
			return 0;
		in->first = xstrdup(s->items[in->idx[0]++]);
		return 1;
	}
	in->first = read_line(s->f);
	if (in->first)
		return 1;
	if (ferror(s->f))
		return err_sys(EXIT_USAGE, "input '%s'", s->name);
	return 0;
}

/* The odometer over sources 1..n-1 (the last varies fastest); 0 when it wraps. */
static int
advance_rest(struct inputs *in)
{
	for (int i = in->nsrc - 1; i >= 1; i--) {
		if (++in->idx[i] < in->src[i].n)
			return 1;
		in->idx[i] = 0;
	}
	return 0;
}

int
inputs_next(struct inputs *in, char ***args, unsigned long long *seq)
{
	int r;

	if (in->done)
		return 0;
	if (!in->started || !advance_rest(in)) {
		in->started = 1;
		for (int i = 1; i < in->nsrc; i++)
			if (in->src[i].n == 0) {
				in->done = 1;
				return 0;
			}
		r = next_first(in);
		if (r <= 0) {
			in->done = 1;
			return r;
		}
	}
	*args = xmalloc((size_t)in->nsrc * sizeof **args);
	(*args)[0] = xstrdup(in->first);
	for (int i = 1; i < in->nsrc; i++)
		(*args)[i] = xstrdup(in->src[i].items[in->idx[i]]);
	*seq = ++in->seq;
	return 1;
}

void
args_free(char **args, int n)
{
	if (!args)
		return;
	for (int i = 0; n < 0 ? args[i] != NULL : i < n; i++)
		free(args[i]);
	free(args);
}

/* --- replacement strings --- */

enum ph_op { PH_NONE, PH_ALL, PH_NOEXT, PH_BASE, PH_DIR, PH_BASE_NOEXT, PH_SEQ, PH_SLOT, PH_GPU,
	PH_SLOTNAME };

struct ph {
	int op;      /* enum ph_op */
	int arg;     /* 1-based source number (negative: from the last), 0: all of them */
	size_t len;  /* bytes of the replacement string, braces included */
};

static int
path_op(const char *s, size_t n)
{
	static const struct { const char *text; int op; } ops[] = {
		{"", PH_ALL}, {".", PH_NOEXT}, {"/", PH_BASE}, {"//", PH_DIR}, {"/.", PH_BASE_NOEXT},
	};

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strlen(ops[i].text) == n && strncmp(s, ops[i].text, n) == 0)
			return ops[i].op;
	return PH_NONE;
}

/* Parse a replacement string at w ('{'); ph->op PH_NONE when it is none. */
static void
parse_ph(const char *w, struct ph *ph)
{
	const char *end = strchr(w + 1, '}');
	const char *in = w + 1;
	size_t n;

	ph->op = PH_NONE;
	ph->arg = 0;
	if (!end)
		return;
	n = (size_t)(end - in);
	ph->len = n + 2;
	if (n == 1 && *in == '#')
		ph->op = PH_SEQ;
	else if (n == 1 && *in == '%')
		ph->op = PH_SLOT;
	else if (n == 3 && strncmp(in, "gpu", 3) == 0)
		ph->op = PH_GPU;
	else if (n == 4 && strncmp(in, "slot", 4) == 0)
		ph->op = PH_SLOTNAME;
	else if (n > 0 && ((*in >= '1' && *in <= '9') || (n > 1 && *in == '-' && in[1] >= '1' &&
	    in[1] <= '9'))) {
		size_t d = *in == '-';
		long a = 0;

		while (d < n && in[d] >= '0' && in[d] <= '9' && a < 100000)
			a = a * 10 + (in[d++] - '0');
		ph->op = path_op(in + d, n - d);
		ph->arg = *in == '-' ? (int)-a : (int)a;
	} else
		ph->op = path_op(in, n);
}

int
template_has_placeholder(const char *word)
{
	struct ph ph;

	for (const char *p = strchr(word, '{'); p; p = strchr(p + 1, '{')) {
		parse_ph(p, &ph);
		if (ph.op != PH_NONE)
			return 1;
	}
	return 0;
}

static void
shell_quote_n(struct sbuf *out, const char *s, size_t n)
{
	int safe = n > 0;

	for (size_t i = 0; i < n && safe; i++)
		safe = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-",
		    s[i]) != NULL && s[i] != '\0';
	if (safe) {
		sbuf_addn(out, s, n);
		return;
	}
	sbuf_addc(out, '\'');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			sbuf_add(out, "'\\''");
		else
			sbuf_addc(out, s[i]);
	}
	sbuf_addc(out, '\'');
}

void
shell_quote(struct sbuf *out, const char *s)
{
	shell_quote_n(out, s, strlen(s));
}

/* The last component's extension: perl's s:\.[^/.]*$::, as GNU parallel uses. */
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

/* Append one value transformed by op (perl's dirname for {//}). */
static void
add_value(struct sbuf *out, const char *s, int op, int quote)
{
	size_t n = strlen(s);
	const char *slash;

	switch (op) {
	case PH_NOEXT:
		n = noext_len(s, n);
		break;
	case PH_BASE:
	case PH_BASE_NOEXT:
		slash = strrchr(s, '/');
		if (slash)
			s = slash + 1;
		n = strlen(s);
		if (op == PH_BASE_NOEXT)
			n = noext_len(s, n);
		break;
	case PH_DIR:
		while (n > 1 && s[n - 1] == '/')
			n--;
		while (n > 0 && s[n - 1] != '/')
			n--;
		if (n == 0) {
			s = ".";
			n = 1;
			break;
		}
		while (n > 1 && s[n - 1] == '/')
			n--;
		break;
	default:
		break;
	}
	if (quote)
		shell_quote_n(out, s, n);
	else
		sbuf_addn(out, s, n);
}

static void
expand_ph(const struct ph *ph, const struct task_vars *v, struct sbuf *out)
{
	switch (ph->op) {
	case PH_SEQ:
		sbuf_printf(out, "%llu", v->seq);
		return;
	case PH_SLOT:
	case PH_SLOTNAME:
		sbuf_printf(out, "%d", v->slot);
		return;
	case PH_GPU:
		sbuf_add(out, v->gpu ? v->gpu : "");
		return;
	default:
		break;
	}
	/* {N} counts sources from the first, {-N} from the last (as parallel) */
	if (ph->arg != 0) {
		int i = ph->arg > 0 ? ph->arg - 1 : v->nargs + ph->arg;

		if (i >= 0 && i < v->nargs)
			add_value(out, v->args[i], ph->op, v->quote);
		return;
	}
	for (int i = 0; i < v->nargs; i++) {
		if (i > 0)
			sbuf_addc(out, ' ');
		add_value(out, v->args[i], ph->op, v->quote);
	}
}

void
template_expand(const char *word, const struct task_vars *v, struct sbuf *out)
{
	const char *p = word, *brace;
	struct ph ph;

	while ((brace = strchr(p, '{')) != NULL) {
		parse_ph(brace, &ph);
		if (ph.op == PH_NONE) {
			sbuf_addn(out, p, (size_t)(brace - p) + 1);
			p = brace + 1;
			continue;
		}
		sbuf_addn(out, p, (size_t)(brace - p));
		expand_ph(&ph, v, out);
		p = brace + ph.len;
	}
	sbuf_add(out, p);
}

static char **
shell_argv(char **tmpl, int ntmpl, int has_ph, const struct task_vars *v)
{
	struct task_vars q = *v;
	struct sbuf line;
	char **argv = xcalloc(4, sizeof *argv);

	q.quote = 1;
	sbuf_init(&line);
	for (int i = 0; i < ntmpl; i++) {
		if (i > 0)
			sbuf_addc(&line, ' ');
		template_expand(tmpl[i], &q, &line);
	}
	for (int i = 0; !has_ph && i < v->nargs; i++) {
		sbuf_addc(&line, ' ');
		shell_quote(&line, v->args[i]);
	}
	argv[0] = xstrdup("/bin/sh");
	argv[1] = xstrdup("-c");
	argv[2] = sbuf_detach(&line);
	return argv;
}

char **
template_argv(char **tmpl, int ntmpl, int has_ph, int shell, const struct task_vars *v)
{
	struct sbuf w;
	char **argv;
	int n = 0;

	if (shell)
		return shell_argv(tmpl, ntmpl, has_ph, v);
	argv = xmalloc((size_t)(ntmpl + (has_ph ? 0 : v->nargs) + 1) * sizeof *argv);
	sbuf_init(&w);
	for (int i = 0; i < ntmpl; i++) {
		template_expand(tmpl[i], v, &w);
		argv[n++] = sbuf_detach(&w);
	}
	for (int i = 0; !has_ph && i < v->nargs; i++)
		argv[n++] = xstrdup(v->args[i]);
	argv[n] = NULL;
	sbuf_free(&w);
	return argv;
}
