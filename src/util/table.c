/*
 * table: every human table of gpupack goes through here, so that columns
 * line up the same way in devices, mps status, mig plan and bench.
 */
#include "util/table.h"
#include "util/str.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
table_init(struct table *t, const char *align, int indent)
{
	memset(t, 0, sizeof *t);
	str_copy(t->align, align, sizeof t->align);
	t->ncols = (int)strlen(t->align);
	t->indent = indent;
}

void
table_rowv(struct table *t, const char *const *cells)
{
	size_t need = (t->rows + 1) * (size_t)t->ncols;

	xgrow(&t->cells, &t->cap, need, sizeof *t->cells);
	for (int i = 0; i < t->ncols; i++)
		t->cells[t->rows * (size_t)t->ncols + (size_t)i] = xstrdup(cells[i] ? cells[i] : "-");
	t->rows++;
}

void
table_row(struct table *t, ...)
{
	const char *cells[32];
	va_list ap;

	va_start(ap, t);
	for (int i = 0; i < t->ncols; i++)
		cells[i] = va_arg(ap, const char *);
	va_end(ap);
	table_rowv(t, cells);
}

void
table_print(struct table *t, FILE *f)
{
	size_t width[32] = {0};

	for (size_t r = 0; r < t->rows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t n = strlen(t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (n > width[c])
				width[c] = n;
		}
	for (size_t r = 0; r < t->rows; r++) {
		fprintf(f, "%*s", t->indent, "");
		for (int c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * (size_t)t->ncols + (size_t)c];
			int last = c == t->ncols - 1;

			if (t->align[c] == 'r')
				fprintf(f, "%*s", (int)width[c], cell);
			else if (last)
				fputs(cell, f);
			else
				fprintf(f, "%-*s", (int)width[c], cell);
			if (!last)
				fputs("  ", f);
		}
		fputc('\n', f);
	}
}

void
table_free(struct table *t)
{
	for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}
