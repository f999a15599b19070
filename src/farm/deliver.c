/*
 * deliver: a finished task's output, whole, to gpupack's stdout and stderr:
 * at once, or under -k in input order (output that is early waits in a list
 * sorted by seq); with --line-buffer, each whole line as soon as it is read.
 *
 * Output is part of a task: its joblog record is written once its output
 * is (under -k, when its turn comes), so a task whose output could not be
 * written (a full disk, a file-size limit) is not recorded and --resume
 * runs it again. A closed stdout (EPIPE: `| head`) stops stdout only; the
 * run goes on and records its tasks.
 */
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Where tasks' stdout goes: gpupack's stdout, or with --json stderr (stdout is the summary's). */
static int
out_fd(const struct farm *f)
{
	return f->o->json ? 2 : 1;
}

/* Write out[]: 0, or -1 with errno when it could not be written (a closed stdout is not that). */
static int
emit(struct farm *f, struct obuf out[2])
{
	int fd = out_fd(f);

	if (out[0].total == 0 && out[1].total == 0)
		return 0;
	/* the progress line is cleared first: output never joins it (farm/progress.h) */
	progress_pause(&f->prog);
	if (!f->ou.out_broken && obuf_write(&out[0], fd) < 0) {
		if (errno != EPIPE)
			return -1;
		f->ou.out_broken = fd == 1;
	}
	if (out[0].total)
		progress_wrote(&f->prog, fd, obuf_ends_line(&out[0]));
	if (obuf_write(&out[1], 2) < 0 && errno != EPIPE)
		return -1;
	if (out[1].total)
		progress_wrote(&f->prog, 2, obuf_ends_line(&out[1]));
	return 0;
}

/* Output, then the record: a record is only ever written for output that was. */
static void
settle(struct farm *f, struct held *h)
{
	if (emit(f, h->out) < 0) {
		halt_output_lost(f, "output", errno);
		if (h->has_rec)
			halt_uncount(f, h->ok);
		return;
	}
	if (h->has_rec && journal_end(&f->j, &h->rec) < 0) {
		/* unrecorded work is not done: --resume runs it again, so it is not counted */
		halt_uncount(f, h->ok);
		halt_fatal(f, clock_mono());
	}
}

static void
held_free(struct held *h)
{
	obuf_free(&h->out[0]);
	obuf_free(&h->out[1]);
	free(h->command);
	free(h);
}

void
deliver_flush(struct farm *f, int all)
{
	while (f->held && (all || f->held->seq == f->ou.next_print)) {
		struct held *h = f->held;

		settle(f, h);
		f->ou.next_print = h->seq + h->span;
		f->held = h->next;
		held_free(h);
	}
}

static void
hand_on(struct farm *f, struct held *h)
{
	struct held **p;

	/*
	 * Under -k, output waits for its turn; a task whose turn is past (one a
	 * farm over nodes runs again in a later pass) prints at once.
	 */
	if (!f->o->keep_order || h->seq < f->ou.next_print) {
		settle(f, h);
		held_free(h);
		return;
	}
	for (p = &f->held; *p && (*p)->seq < h->seq; p = &(*p)->next)
		;
	h->next = *p;
	*p = h;
	deliver_flush(f, 0);
}

static struct held *
held_new(unsigned long long seq, struct obuf out[2])
{
	struct held *h = xcalloc(1, sizeof *h);

	h->seq = seq;
	h->span = 1;
	h->out[0] = out[0];
	h->out[1] = out[1];
	obuf_init(&out[0]);
	obuf_init(&out[1]);
	return h;
}

void
deliver(struct farm *f, unsigned long long seq, struct obuf out[2])
{
	hand_on(f, held_new(seq, out));
}

void
deliver_gap(struct farm *f, unsigned long long from, unsigned long long to)
{
	struct obuf none[2];
	struct held *h;

	if (to <= from)
		return;
	obuf_init(&none[0]);
	obuf_init(&none[1]);
	h = held_new(from, none);
	h->span = to - from;
	hand_on(f, h);
}

/*
 * A mistyped command fails every task alike: its "command not found" (the
 * shell's, or ours from spawn.c) is shown for the first task only; the
 * joblog and the summary still count every one. The farm is one per
 * process, so the line shown is kept here.
 */
static int
repeated_not_found(const struct joblog_rec *rec, const struct obuf *err)
{
	static char shown[512];
	char line[512];
	ssize_t n;

	if (rec->exitval != 127 || err->total == 0 || err->total >= sizeof line)
		return 0;
	n = obuf_pread(err, line, sizeof line - 1, 0);
	if (n <= 0 || (size_t)n != err->total)
		return 0;
	line[n] = '\0';
	/* bash and ours say "command not found", dash "not found" */
	if (!str_ends(line, ": not found\n") && !str_ends(line, ": command not found\n"))
		return 0;
	if (strchr(line, '\n') != line + n - 1)
		return 0;
	if (strcmp(line, shown) == 0)
		return 1;
	memcpy(shown, line, (size_t)n + 1);
	return 0;
}

void
deliver_done(struct farm *f, const struct joblog_rec *rec, int ok, struct obuf out[2])
{
	struct held *h;

	if (repeated_not_found(rec, &out[1]))
		obuf_free(&out[1]);
	h = held_new(rec->seq, out);

	h->rec = *rec;
	h->command = xstrdup(rec->command);
	h->rec.command = h->command;
	h->has_rec = 1;
	h->ok = ok;
	hand_on(f, h);
}

void
deliver_lines(struct farm *f, struct run *r, int last)
{
	int fd = out_fd(f);

	progress_pause(&f->prog);
	if (!f->ou.out_broken && obuf_write_lines(&r->out[0], fd, last) < 0) {
		if (errno != EPIPE && !r->out_err)
			r->out_err = errno;
		f->ou.out_broken |= errno == EPIPE && fd == 1;
	}
	if (obuf_write_lines(&r->out[1], 2, last) < 0 && errno != EPIPE && !r->out_err)
		r->out_err = errno;
}
