/*
 * deliver: a finished task's output, whole, to gpupack's stdout and stderr:
 * at once, or under -k in input order (output that is early waits in a list
 * sorted by seq); with --line-buffer, each whole line as soon as it is read.
 * A closed stdout stops stdout only; the run goes on.
 */
#include "farm/state.h"
#include "util/err.h"

#include <stdlib.h>

/* Where tasks' stdout goes: gpupack's stdout, or with --json stderr (stdout is the summary's). */
static int
out_fd(const struct farm *f)
{
	return f->o->json ? 2 : 1;
}

static void
emit(struct farm *f, struct obuf out[2])
{
	if (out[0].total == 0 && out[1].total == 0)
		return;
	/* the progress line is cleared first: output never joins it (farm/progress.h) */
	progress_pause(&f->prog);
	if (!f->out_broken && obuf_write(&out[0], out_fd(f)) < 0)
		f->out_broken = out_fd(f) == 1;
	if (out[0].total)
		progress_wrote(&f->prog, out_fd(f), obuf_ends_line(&out[0]));
	if (obuf_write(&out[1], 2) < 0)
		return;
	if (out[1].total)
		progress_wrote(&f->prog, 2, obuf_ends_line(&out[1]));
}

void
deliver_flush(struct farm *f, int all)
{
	while (f->held && (all || f->held->seq == f->next_print)) {
		struct held *h = f->held;

		emit(f, h->out);
		f->next_print = h->seq + 1;
		f->held = h->next;
		obuf_free(&h->out[0]);
		obuf_free(&h->out[1]);
		free(h);
	}
}

void
deliver(struct farm *f, unsigned long long seq, struct obuf out[2])
{
	struct held *h, **p;

	/*
	 * Under -k, output waits for its turn; a task whose turn is past (one a
	 * farm over nodes runs again in a later pass) prints at once.
	 */
	if (!f->o->keep_order || seq < f->next_print) {
		emit(f, out);
		obuf_free(&out[0]);
		obuf_free(&out[1]);
		return;
	}
	h = xcalloc(1, sizeof *h);
	h->seq = seq;
	h->out[0] = out[0];
	h->out[1] = out[1];
	obuf_init(&out[0]);
	obuf_init(&out[1]);
	for (p = &f->held; *p && (*p)->seq < seq; p = &(*p)->next)
		;
	h->next = *p;
	*p = h;
	deliver_flush(f, 0);
}

void
deliver_lines(struct farm *f, struct run *r, int last)
{
	progress_pause(&f->prog);
	if (!f->out_broken && obuf_write_lines(&r->out[0], out_fd(f), last) < 0)
		f->out_broken = out_fd(f) == 1;
	if (obuf_write_lines(&r->out[1], 2, last) < 0)
		return;
}
