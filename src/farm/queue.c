/*
 * queue: the tasks waiting to run. Retries come first (a task that failed
 * and may run again, or runs again for gpupack's own reasons), then the
 * input stream, read one task at a time (the inputs are never all in
 * memory). Inputs of other shards, of other nodes of a farm over nodes,
 * and tasks the joblog already holds (--resume) are passed over here.
 */
#include "farm/cost.h"
#include "farm/state.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
task_free(struct farm *f, struct task *t)
{
	/* --pipe: the task's block goes with it */
	if (f->o->pipe.on && !f->o->pipe.tee && t->a.nflat > 0)
		inputs_block_done(&f->o->ts.in, t->a.flat[0]);
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
		enqueue(&f->q.suspects, &f->q.suspects_tail, t);
	else
		enqueue(&f->q.retry, &f->q.retry_tail, t);
}

/* Reruns for the summary, by reason; a ninth reason shares the last row. */
static void
count_rerun(struct farm *f, const char *why)
{
	size_t i, n = sizeof f->st.rerun_why / sizeof f->st.rerun_why[0];

	f->st.reruns++;
	for (i = 0; i < n - 1 && f->st.rerun_why[i].why && strcmp(f->st.rerun_why[i].why, why) != 0; i++)
		;
	if (!f->st.rerun_why[i].why)
		f->st.rerun_why[i].why = why;
	f->st.rerun_why[i].n++;
}

int
queue_rerun_own(struct farm *f, struct task *t, const char *why)
{
	if (t->own_reruns >= FARM_OWN_RERUNS) {
		warnx_("input %llu: %s again, after %d reruns: not run again", t->seq, why, t->own_reruns);
		return -1;
	}
	t->own_reruns++;
	count_rerun(f, why);
	t->next = f->q.retry;
	f->q.retry = t;
	if (!f->q.retry_tail)
		f->q.retry_tail = t;
	return 0;
}

/* A task that takes over the records in *a. */
static struct task *
new_task(unsigned long long seq, const struct targs *a)
{
	struct task *t = xcalloc(1, sizeof *t);

	t->seq = seq;
	t->a = *a;
	return t;
}

/*
 * In a farm over nodes: is seq ours to run? A task lost with another node
 * comes back through queue_rerun_own. 1 ours (*t set), 0 not, -1 error.
 */
static int
take_from_nodes(struct farm *f, unsigned long long seq, const struct targs *a, struct task **t)
{
	int attempt;

	switch (nodes_take(f, seq, &attempt)) {
	case NODES_RUN:
		*t = new_task(seq, a);
		return 1;
	case NODES_RERUN:
		*t = new_task(seq, a);
		(*t)->own_reruns = attempt - 1;
		if (queue_rerun_own(f, *t, "its node was lost") < 0) {
			free(*t);
			return 0;
		}
		/* first in line now: take it back from there */
		f->q.retry = (*t)->next;
		if (!f->q.retry)
			f->q.retry_tail = NULL;
		return 1;
	case NODES_DONE:
		f->st.skipped++;
		return 0;
	case NODES_OTHER:
		f->st.others++;
		return 0;
	case NODES_OURS:
		return 0;
	default:
		return -1;
	}
}

/* A task of --retry-failed: one record, its command line (taken from c). */
static struct task *
retry_task(struct journal_cmd *c)
{
	struct targs a = {0};

	a.rec = xcalloc(1, sizeof *a.rec);
	a.rec[0].v = xcalloc(2, sizeof *a.rec[0].v);
	a.rec[0].v[0] = c->cmd;
	a.rec[0].n = 1;
	a.nrec = 1;
	a.flat = xcalloc(1, sizeof *a.flat);
	a.flat[0] = c->cmd;
	a.nflat = 1;
	c->cmd = NULL;
	return new_task(c->seq, &a);
}

/*
 * --retry-failed: the joblog's failed tasks in Seq order. The numbers
 * between them are passed over at once, however many (-k told not to wait
 * for them), not one by one.
 */
static int
next_retry(struct farm *f, struct task **t)
{
	while (f->rfq.rf_at < f->rfq.nrf) {
		struct journal_cmd *c = &f->rfq.rf[f->rfq.rf_at++];
		unsigned long long prev = f->rfq.rf_at > 1 ? f->rfq.rf[f->rfq.rf_at - 2].seq : 0;

		if (c->seq > f->st.inputs)
			f->st.inputs = c->seq;
		if (f->o->keep_order)
			deliver_gap(f, prev + 1, c->seq);
		if (f->o->shard_n > 0 && (c->seq - 1) % f->o->shard_n != f->o->shard_k) {
			f->st.others++;
			if (f->o->keep_order)
				deliver_gap(f, c->seq, c->seq + 1);
			continue;
		}
		*t = retry_task(c);
		return 1;
	}
	f->st.inputs_done = 1;
	return 0;
}

/* The next input task of ours: 1 (*t), 0 none left, -1 an input error (err set). */
static int
next_input(struct farm *f, struct task **t)
{
	struct targs a;
	unsigned long long seq;
	int r;

	if (f->o->retry_failed)
		return f->st.inputs_done ? 0 : next_retry(f, t);
	while (!f->st.inputs_done) {
		r = tasks_next(&f->o->ts, &a, &seq);
		if (r <= 0) {
			f->st.inputs_done = 1;
			return r;
		}
		if (seq > f->st.inputs)
			f->st.inputs = seq;
		if (f->nodes) {
			int mine = take_from_nodes(f, seq, &a, t);

			if (mine > 0)
				return 1;
			if (mine < 0) {
				targs_free(&a);
				return -1;
			}
		} else if (f->o->shard_n > 0 && (seq - 1) % f->o->shard_n != f->o->shard_k) {
			/* another shard's: not run, not journaled, not counted as skipped */
			f->st.others++;
		} else if (!journal_skip(&f->j, seq)) {
			*t = new_task(seq, &a);
			/* --resume --results DIR without a joblog: a task whose files are there ran */
			if (!(f->o->resume && f->o->results && f->o->joblog.kind == JOBLOG_NONE &&
			    resdir_done(f, *t)))
				return 1;
			a = (*t)->a;
			free(*t);
			*t = NULL;
			f->st.skipped++;
		} else {
			f->st.skipped++;
		}
		/* not run here: -k must not wait for its output */
		if (f->o->pipe.on && !f->o->pipe.tee && a.nflat > 0)
			inputs_block_done(&f->o->ts.in, a.flat[0]);
		targs_free(&a);
		if (f->o->keep_order) {
			struct obuf none[2];

			obuf_init(&none[0]);
			obuf_init(&none[1]);
			deliver(f, seq, none);
		}
	}
	return 0;
}

int
queue_peek(struct farm *f)
{
	struct task *t = NULL;
	int r = next_input(f, &t);

	if (r > 0) {
		t->next = f->q.retry;
		f->q.retry = t;
		if (!f->q.retry_tail)
			f->q.retry_tail = t;
	}
	return r < 0 ? -1 : 0;
}

struct task *
queue_next(struct farm *f)
{
	struct task *t = NULL;
	int r;

	if ((t = f->q.retry) != NULL) {
		f->q.retry = t->next;
		if (!f->q.retry)
			f->q.retry_tail = NULL;
		return t;
	}
	r = next_input(f, &t);
	if (r > 0)
		return t;
	if (r < 0) {
		/* an input that cannot be read or run: one error line; the running tasks finish */
		err_report();
		f->fatal = err_code();
		f->stop = 1;
		err_clear();
	}
	return NULL;
}

void
queue_free(struct farm *f)
{
	struct task *t;

	while ((t = f->q.suspects) != NULL) {
		f->q.suspects = t->next;
		task_free(f, t);
	}
	while ((t = f->q.retry) != NULL) {
		f->q.retry = t->next;
		task_free(f, t);
	}
}
