/*
 * table: aligned columns for people. Cells are copied; align is one letter a
 * column, 'l' or 'r'.
 */
#ifndef GPUPACK_UTIL_TABLE_H
#define GPUPACK_UTIL_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct table {
	int ncols;
	char align[32];
	char **cells; /* rows * ncols */
	size_t rows, cap;
	int indent;
};

void table_init(struct table *t, const char *align, int indent);
/* Add a row of exactly strlen(align) cells (NULL prints "-"). */
void table_row(struct table *t, ...);
/* Add a row from an array of cells. */
void table_rowv(struct table *t, const char *const *cells);
void table_print(struct table *t, FILE *f);
void table_free(struct table *t);

#endif
