/*
 * queue: the tasks waiting to run. Retries come first (a task that failed
 * and may run again), then the input stream, read one task at a time (the
 * inputs are never all in memory). Inputs of other shards and tasks the
 * joblog already holds (--resume) are passed over here.
 */
#include "farm/state.h"
#include "util/err.h"

#include <stdlib.h>

void
task_free(struct farm *f, struct task *t)
{
	(void)f;
	targs_free(&t->a);
	free(t);
}

static void
enqueue(struct task **head, struct task **tail, struct task *t)
{
	t->next = NULL;
	if (*tail)
		(*tail)->next = t;
	else
		*head = t;
	*tail = t;
}

void
queue_requeue(struct farm *f, struct task *t)
{
	if (t->suspect)
		enqueue(&f->suspects, &f->suspects_tail, t);
	else
		enqueue(&f->retry, &f->retry_tail, t);
}

struct task *
queue_next(struct farm *f)
{
	struct task *t;
	struct targs a;
	unsigned long long seq;
	int r;

	if ((t = f->retry) != NULL) {
		f->retry = t->next;
		if (!f->retry)
			f->retry_tail = NULL;
		return t;
	}
	while (!f->st.inputs_done) {
		r = tasks_next(&f->o->ts, &a, &seq);
		if (r <= 0) {
			f->st.inputs_done = 1;
			if (r < 0) {
				warnx_("%s", err_msg());
				f->fatal = err_code();
				f->stop = 1;
			}
			return NULL;
		}
		f->st.inputs = seq;
		if (f->o->shard_n > 0 && (seq - 1) % f->o->shard_n != f->o->shard_k) {
			/* another shard's: not run, not journaled, not counted as skipped */
			f->st.others++;
		} else if (!journal_skip(&f->j, seq)) {
			t = xcalloc(1, sizeof *t);
			t->seq = seq;
			t->a = a;
			return t;
		} else {
			f->st.skipped++;
		}
		/* not run here: -k must not wait for its output */
		targs_free(&a);
		if (f->o->keep_order) {
			struct obuf none[2];

			obuf_init(&none[0]);
			obuf_init(&none[1]);
			deliver(f, seq, none);
		}
	}
	return NULL;
}

void
queue_free(struct farm *f)
{
	struct task *t;

	while ((t = f->suspects) != NULL) {
		f->suspects = t->next;
		task_free(f, t);
	}
	while ((t = f->retry) != NULL) {
		f->retry = t->next;
		task_free(f, t);
	}
}
