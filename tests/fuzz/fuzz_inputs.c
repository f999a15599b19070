/*
 * fuzz_inputs: reading input sources as GNU parallel does, on arbitrary
 * data. The first line holds the options: its first byte picks them (-0,
 * a two-byte delimiter, -r, --header, --link, :::+ pairing, how the data
 * is split into sources), the rest of the line is a --colsep regex (when
 * not empty; "csv:SEP" is --csv with --colsep SEP). The remaining bytes are
 * the values of up to three ::: sources.
 * Checks, beyond the sanitizers: every record has at least one column, no
 * value holds a NUL, the count of records never exceeds the cross product
 * of the sources (plus the empty-source rule), and tasks grouped with -n
 * and -X cover every record once. The CSV reader alone, on the data: a
 * record it accepts, written back quoted, reads back the same.
 */
#include "farm/task.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* input_csv_split: an accepted record, each field quoted ("" for "), reads back the same */
static void
csv_round_trip(const char *s, const char *sep)
{
	struct record r, back;
	size_t len = 3;
	char *w, *p;

	if (input_csv_split(s, sep, &r) < 0) {
		err_clear();
		return;
	}
	if (r.n < 1)
		abort();
	for (int i = 0; i < r.n; i++)
		len += 2 * strlen(r.v[i]) + 2 + strlen(sep && *sep ? sep : ",");
	p = w = malloc(len);
	for (int i = 0; i < r.n; i++) {
		if (i > 0)
			p = stpcpy(p, sep && *sep ? sep : ",");
		*p++ = '"';
		for (const char *c = r.v[i]; *c; c++) {
			if (*c == '"')
				*p++ = '"';
			*p++ = *c;
		}
		*p++ = '"';
	}
	*p = '\0';
	if (input_csv_split(w, sep, &back) < 0 || back.n != r.n)
		abort();
	for (int i = 0; i < r.n; i++)
		if (strcmp(r.v[i], back.v[i]) != 0)
			abort();
	record_free(&r);
	record_free(&back);
	free(w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nl;
	struct task_src ts;
	struct tmpl t;
	char *words[] = {"echo", "{}"};
	struct tmpl_opts to = {.append = 1};
	char *colsep = NULL;
	unsigned flags;
	size_t rest, per, limit = 1;
	int nsrc, rc;
	unsigned long long seq, records = 0;

	if (size < 2 || size > 4096)
		return 0;
	flags = data[0];
	nl = memchr(text, '\n', size);
	if (!nl)
		return 0;
	if (nl > text + 1)
		colsep = strndup(text + 1, (size_t)(nl - text - 1));
	rest = size - (size_t)(nl + 1 - text);
	tasks_init(&ts);
	ts.in.o.skip_empty = flags >> 2 & 1;
	ts.in.o.header = flags >> 3 & 1;
	ts.in.o.link = flags >> 4 & 1;
	ts.in.o.colsep = colsep && !memchr(colsep, '\0', strlen(colsep) + 1 - 1) ? colsep : NULL;
	if (ts.in.o.colsep && strncmp(ts.in.o.colsep, "csv:", 4) == 0) {
		ts.in.o.csv = 1;
		ts.in.o.colsep += 4;
	}
	{
		char *all = strndup(nl + 1, rest);

		csv_round_trip(all, ts.in.o.csv ? ts.in.o.colsep : ",");
		free(all);
	}
	if (flags & 1) {
		ts.in.o.delim = "";
		ts.in.o.delim_len = 1;
	} else if (flags & 2) {
		ts.in.o.delim = "\r\n";
		ts.in.o.delim_len = 2;
	}
	nsrc = 1 + (int)(flags >> 5 & 3) % 3;
	per = (rest + (size_t)nsrc - 1) / (size_t)nsrc;
	for (int s = 0; s < nsrc; s++) {
		struct source *src = inputs_add_args(&ts.in, (flags >> 7) & (s > 0));
		size_t off = (size_t)s * per, len = off < rest ? (rest - off < per ? rest - off : per) : 0;
		char *chunk = strndup(nl + 1 + off, len);
		size_t values = 1;

		/* the chunk's lines are this source's ::: values (each may split again at the delimiter) */
		for (char *p = chunk, *q; p; p = q) {
			q = strchr(p, '\n');
			if (q)
				*q++ = '\0';
			source_add_value(src, p);
			values += strlen(p) + 1;
		}
		limit *= values;
		free(chunk);
	}
	ts.max_args = flags & 64 ? 0 : 1 + (int)(flags & 3);
	ts.fill = ts.spread = (flags & 64) != 0;
	ts.slots = 2;
	if (tmpl_compile(&t, words, 2, &to) < 0)
		abort();
	ts.cmd = &t;
	if (tasks_open(&ts) == 0) {
		struct targs a;

		while ((rc = tasks_next(&ts, &a, &seq)) == 1) {
			if (a.nrec < 1)
				abort();
			for (int r = 0; r < a.nrec; r++) {
				if (a.rec[r].n < 1)
					abort();
				for (int c = 0; c < a.rec[r].n; c++)
					if (!a.rec[r].v[c])
						abort();
			}
			records += (unsigned long long)a.nrec;
			targs_free(&a);
		}
		if (records > limit + 1)
			abort();
	}
	err_clear();
	tasks_free(&ts);
	tmpl_free(&t);
	free(colsep);
	return 0;
}
