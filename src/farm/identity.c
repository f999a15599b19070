/*
 * identity: which command a run is, as a number kept in its joblog (a
 * --resume of another command is refused) and in what a remembered -j
 * auto is filed under. A pure function of the options; setup, auto and the
 * nodes ask it, it asks none of them.
 */
#include "farm/journal.h"
#include "farm/state.h"
#include "util/str.h"

#include <stdio.h>
#include <string.h>

/*
 * What decides which input values form task N: records per task (-n, -N,
 * -N0, -X, -m, --xargs, -s; with -X and -m the slots the last ones are
 * spread over), how values are read and split (-d, -0, --colsep, --header,
 * -r, -E, --skip-first-line, --trim, --shuf) and how sources combine
 * (:::+ and ::::+, --link). "" when all are as by default, so that a joblog
 * written before these counted resumes as it did.
 */
static void
grouping(const struct farm_opts *o, struct sbuf *b)
{
	const struct task_src *ts = &o->ts;
	const struct input_opts *io = &ts->in.o;

	if (ts->max_args || ts->fill || ts->noarg || ts->max_len || ts->shuffle)
		sbuf_printf(b, " n%d fill%d spread%d noarg%d s%d shuf%d", ts->max_args, ts->fill,
		    ts->spread, ts->noarg, ts->max_len, ts->shuffle);
	if (ts->spread)
		sbuf_printf(b, " slots%d", ts->slots);
	if (io->delim) {
		sbuf_printf(b, " d%zu:", io->delim_len);
		sbuf_addn(b, io->delim, io->delim_len);
	}
	if (io->colsep)
		sbuf_printf(b, " colsep:%s", io->colsep);
	if (io->header || io->link || io->skip_empty || io->skip_first || o->trim)
		sbuf_printf(b, " header%d:%d link%d r%d skip%d trim%d", io->header, io->header_names_files,
		    io->link, io->skip_empty, io->skip_first, o->trim);
	if (io->eof)
		sbuf_printf(b, " E:%s", io->eof);
	for (int i = 0; i < ts->in.nsrc; i++)
		if (ts->in.src[i].linked)
			sbuf_printf(b, " linked%d", i);
}

/*
 * Which command a joblog belongs to: the template and what changes its
 * lines (-q, -I, -X/-N), the kinds of the input sources, and what groups
 * their values into tasks (grouping). Not the values: as with parallel,
 * inputs may grow at the end between runs (a task is its seq).
 */
uint64_t
farm_identity(const struct farm_opts *o)
{
	uint64_t h = JOURNAL_HASH_INIT;
	char flags[64];
	struct sbuf g;

	snprintf(flags, sizeof flags, "line q%d X%d", o->quote_all, o->context);
	h = journal_hash(h, flags, strlen(flags) + 1);
	for (int i = 0; i < RPL_N; i++)
		if (o->rpl[i])
			h = journal_hash(h, o->rpl[i], strlen(o->rpl[i]) + 1);
	for (int i = 0; i < o->ncmd; i++)
		h = journal_hash(h, o->cmd[i], strlen(o->cmd[i]) + 1);
	for (int i = 0; i < o->ts.in.nsrc; i++)
		h = journal_hash(h, o->ts.in.src[i].file ? "file" : "args", 5);
	sbuf_init(&g);
	grouping(o, &g);
	if (g.len > 0)
		h = journal_hash(h, g.buf, g.len + 1);
	sbuf_free(&g);
	return h;
}
