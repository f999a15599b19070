/*
 * opttab: one table per command drives getopt_long, --help and refusals.
 * A long option's value is 256 + its entry's index; a short option is its
 * character, found again by opttab_entry.
 */
#include "cmd/opttab.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

#define HELP_COL 24
#define HELP_WIDTH 79

static int
count_longs(const struct optdef *t, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (const char *p = t[i].longs; p && *p; p += strcspn(p, "|"), p += *p == '|')
			k++;
	return k;
}

void
opttab_init(struct opttab *ot, const struct optdef *t, int n)
{
	size_t s = 0;
	int k = 0;

	memset(ot, 0, sizeof *ot);
	ot->t = t;
	ot->n = n;
	ot->longs = xcalloc((size_t)count_longs(t, n) + 1, sizeof *ot->longs);
	ot->shortopts[s++] = '+';
	ot->shortopts[s++] = ':';
	for (int i = 0; i < n; i++) {
		int has = t[i].arg == OPTTAB_REQ ? required_argument :
		    t[i].arg == OPTTAB_OPT ? optional_argument : no_argument;

		for (const char *c = t[i].shorts; c && *c && s + 3 < sizeof ot->shortopts; c++) {
			ot->shortopts[s++] = *c;
			if (t[i].arg != OPTTAB_NONE)
				ot->shortopts[s++] = ':';
			if (t[i].arg == OPTTAB_OPT)
				ot->shortopts[s++] = ':';
		}
		for (const char *p = t[i].longs; p && *p; ) {
			size_t len = strcspn(p, "|");

			ot->longs[k++] = (struct option){xstrndup(p, len), has, NULL, 256 + i};
			p += len;
			p += *p == '|';
		}
	}
	ot->shortopts[s] = '\0';
}

void
opttab_permute(struct opttab *ot)
{
	memmove(ot->shortopts, ot->shortopts + 1, strlen(ot->shortopts));
}

void
opttab_free(struct opttab *ot)
{
	for (struct option *o = ot->longs; o && o->name; o++)
		free((char *)o->name);
	free(ot->longs);
	ot->longs = NULL;
}

const struct optdef *
opttab_entry(const struct opttab *ot, int ch)
{
	if (ch >= 256 && ch < 256 + ot->n)
		return &ot->t[ch - 256];
	for (int i = 0; i < ot->n; i++)
		if (ot->t[i].shorts && ch > 0 && ch < 256 && strchr(ot->t[i].shorts, ch))
			return &ot->t[i];
	return NULL;
}

/* "-j, --jobs N" */
static void
option_names(const struct optdef *d, struct sbuf *b)
{
	size_t len = d->longs ? strcspn(d->longs, "|") : 0;

	sbuf_add(b, "  ");
	if (d->shorts)
		sbuf_printf(b, "-%c%s", d->shorts[0], d->longs ? ", " : "");
	if (d->longs)
		sbuf_printf(b, "--%.*s", (int)len, d->longs);
	if (d->metavar)
		sbuf_printf(b, d->arg == OPTTAB_OPT ? "[%s]" : " %s", d->metavar);
}

static void
help_entry(const struct optdef *d, FILE *f)
{
	struct sbuf b;
	const char *p = d->help;

	sbuf_init(&b);
	option_names(d, &b);
	if (b.len > HELP_COL - 2) {
		fprintf(f, "%s\n", b.buf);
		b.len = 0;
		b.buf[0] = '\0';
	}
	while (*p) {
		size_t len = strcspn(p, "\n");

		fprintf(f, "%-*s%.*s\n", HELP_COL, b.buf, (int)len, p);
		b.len = 0;
		b.buf[0] = '\0';
		p += len;
		p += *p == '\n';
	}
	sbuf_free(&b);
}

/* Names only, wrapped: the options of a section listed without text, or the refused ones. */
static void
name_list(const struct opttab *ot, int from, int to, int refused, const char *lead, FILE *f)
{
	size_t col = 0, indent = 2 + strlen(lead);

	for (int i = from; i < to; i++) {
		const struct optdef *d = &ot->t[i];
		struct sbuf b;
		const char *name;

		if (d->id == 0 || (refused ? !d->refused : (d->refused || d->help)))
			continue;
		sbuf_init(&b);
		option_names(d, &b);
		name = b.buf + 2;
		if (col == 0) {
			fprintf(f, "  %s", lead);
			col = indent;
		} else if (col + 1 + strlen(name) > HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else {
			fputc(' ', f);
			col++;
		}
		fputs(name, f);
		col += strlen(name);
		sbuf_free(&b);
	}
	if (col > 0)
		fputc('\n', f);
}

void
opttab_help(const struct opttab *ot, const char *usage, const char *tail, FILE *f)
{
	int start = 0;

	fputs(usage, f);
	for (int i = 0; i <= ot->n; i++) {
		if (i < ot->n && ot->t[i].id != 0)
			continue;
		/* the end of a section: its options without text, on a line of their own */
		if (i > start)
			name_list(ot, start, i, 0, "also: ", f);
		if (i == ot->n)
			break;
		fprintf(f, "\n%s\n", ot->t[i].help);
		start = i + 1;
		for (int k = i + 1; k < ot->n && ot->t[k].id != 0; k++)
			if (ot->t[k].help && !ot->t[k].refused)
				help_entry(&ot->t[k], f);
	}
	for (int i = 0; i < ot->n; i++)
		if (ot->t[i].refused) {
			fprintf(f, "\nGNU parallel's options that gpupack refuses (the error names what to use "
			    "instead):\n");
			name_list(ot, 0, ot->n, 1, "", f);
			break;
		}
	if (tail)
		fprintf(f, "\n%s", tail);
}

int
opttab_applies(const struct optdef *d, const char *ids)
{
	return !ids || d->id == 'h' || (d->id > 0 && d->id < 256 && strchr(ids, d->id));
}

void
opttab_complete(const struct optdef *t, int n, const char *ids, FILE *f)
{
	for (int i = 0; i < n; i++) {
		const struct optdef *d = &t[i];
		const char *val = d->arg == OPTTAB_REQ ? "=" : "";

		if (d->id == 0 || d->refused || !opttab_applies(d, ids))
			continue;
		if (d->shorts)
			fprintf(f, "-%c%s%s\n", d->shorts[0], val, *val ? d->metavar : "");
		if (d->longs)
			fprintf(f, "--%.*s%s%s\n", (int)strcspn(d->longs, "|"), d->longs, val,
			    *val ? d->metavar : "");
	}
}

int
opttab_refuse(const struct optdef *d, const char *word)
{
	size_t n = strcspn(word, "=");

	/* a bundled short option ("-kS") is named alone */
	if (word[0] == '-' && word[1] != '-' && d->shorts)
		return err_set(EXIT_USAGE, "GNU parallel's -%c is not supported: %s", d->shorts[0],
		    d->refused);
	/* an abbreviation is named whole: the alias it stands for */
	for (const char *p = d->longs; p && *p && n > 2; ) {
		size_t len = strcspn(p, "|");

		if (len >= n - 2 && strncmp(p, word + 2, n - 2) == 0)
			return err_set(EXIT_USAGE, "GNU parallel's --%.*s is not supported: %s", (int)len, p,
			    d->refused);
		p += len;
		p += *p == '|';
	}
	return err_set(EXIT_USAGE, "GNU parallel's %.*s is not supported: %s", (int)n, word, d->refused);
}
