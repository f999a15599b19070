/*
 * task: records grouped into tasks as GNU parallel's populate() groups them
 * (see task.h). Records read ahead (to know whether the input ended, or all
 * of them for --shuf and counting) wait in a queue, and a record taken too
 * many goes back to its front.
 */
#include "farm/task.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void
tasks_init(struct task_src *ts)
{
	memset(ts, 0, sizeof *ts);
	inputs_init(&ts->in);
	ts->max_args = 1;
}

static void
q_push_back(struct task_src *ts, struct record r)
{
	if (ts->qhead > 0 && ts->qhead == ts->qn)
		ts->qhead = ts->qn = 0;
	xgrow(&ts->q, &ts->qcap, ts->qn + 1, sizeof *ts->q);
	ts->q[ts->qn++] = r;
}

static void
q_push_front(struct task_src *ts, struct record r)
{
	if (ts->qhead == 0) {
		xgrow(&ts->q, &ts->qcap, ts->qn + 1, sizeof *ts->q);
		memmove(ts->q + 1, ts->q, ts->qn * sizeof *ts->q);
		ts->qn++;
		ts->q[0] = r;
		return;
	}
	ts->q[--ts->qhead] = r;
}

/* Read one more record into the queue: 1, 0 at the end, -1 error. */
static int
read_ahead(struct task_src *ts)
{
	struct record r;
	int rc;

	if (ts->input_done)
		return 0;
	rc = inputs_next(&ts->in, &r);
	if (rc <= 0) {
		ts->input_done = 1;
		return rc;
	}
	q_push_back(ts, r);
	return 1;
}

/* The next record: 1, 0 none, -1 error. */
static int
take(struct task_src *ts, struct record *r)
{
	if (ts->qhead == ts->qn) {
		int rc = read_ahead(ts);

		if (rc <= 0)
			return rc;
	}
	*r = ts->q[ts->qhead++];
	return 1;
}

/* Is the input used up (nothing queued, nothing more to read)? */
static int
empty(struct task_src *ts, int *err)
{
	*err = 0;
	if (ts->qhead < ts->qn)
		return 0;
	*err = read_ahead(ts) < 0;
	return ts->qhead == ts->qn;
}

static void
shuffle(struct task_src *ts)
{
	size_t n = ts->qn - ts->qhead;

	for (size_t i = n; i > 1; i--) {
		unsigned long long r = 0;
		size_t j;

		if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
			r = (unsigned long long)rand();
		j = (size_t)(r % i);
		struct record t = ts->q[ts->qhead + i - 1];

		ts->q[ts->qhead + i - 1] = ts->q[ts->qhead + j];
		ts->q[ts->qhead + j] = t;
	}
}

static int
read_all(struct task_src *ts)
{
	int rc;

	while ((rc = read_ahead(ts)) == 1)
		;
	return rc;
}

int
tasks_open(struct task_src *ts)
{
	if (inputs_open(&ts->in) < 0)
		return -1;
	if (ts->shuffle) {
		if (read_all(ts) < 0)
			return -1;
		shuffle(ts);
	}
	return 0;
}

int
tasks_count(struct task_src *ts, unsigned long long *total)
{
	unsigned long long n;

	if (read_all(ts) < 0)
		return -1;
	n = ts->records + (ts->qn - ts->qhead);
	*total = (n + (unsigned long long)(ts->max_args > 1 ? ts->max_args : 1) - 1) /
	    (unsigned long long)(ts->max_args > 1 ? ts->max_args : 1);
	return 0;
}

static size_t
rec_bytes(const struct record *r)
{
	size_t n = sizeof *r + (size_t)r->n * sizeof *r->v;

	for (int i = 0; i < r->n; i++)
		n += strlen(r->v[i]) + 1;
	return n;
}

int
tasks_count_upto(struct task_src *ts, size_t max, unsigned long long *total)
{
	size_t held = 0;
	int rc;

	for (size_t i = ts->qhead; i < ts->qn; i++)
		held += rec_bytes(&ts->q[i]);
	while (held < max && (rc = read_ahead(ts)) == 1)
		held += rec_bytes(&ts->q[ts->qn - 1]);
	if (held >= max)
		return 0;
	if (rc < 0)
		return -1;
	return tasks_count(ts, total) < 0 ? -1 : 1;
}

static void
push_rec(struct targs *a, size_t *cap, struct record r)
{
	xgrow(&a->rec, cap, (size_t)a->nrec + 1, sizeof *a->rec);
	a->rec[a->nrec++] = r;
}

static int
too_long(struct task_src *ts, const struct record *r, size_t len)
{
	struct sbuf b;

	sbuf_init(&b);
	for (int i = 0; i < r->n; i++) {
		if (i > 0)
			sbuf_addc(&b, ' ');
		sbuf_add(&b, r->v[i]);
	}
	if (b.len > 50) {
		b.len = 50;
		b.buf[50] = '\0';
		sbuf_add(&b, "...");
	}
	err_set(EXIT_USAGE, "command line too long (%zu >= %d, GNU parallel's limit) at input %llu: %s",
	    len, ts->max_len > 0 ? ts->max_len : CMDLINE_MAX, ts->records, b.buf ? b.buf : "");
	sbuf_free(&b);
	return -1;
}

static void
flatten(struct targs *a)
{
	int n = 0;

	for (int i = 0; i < a->nrec; i++)
		n += a->rec[i].n;
	a->flat = xmalloc(((size_t)n + 1) * sizeof *a->flat);
	a->nflat = 0;
	for (int i = 0; i < a->nrec; i++)
		for (int k = 0; k < a->rec[i].n; k++)
			a->flat[a->nflat++] = a->rec[i].v[k];
	a->flat[a->nflat] = NULL;
}

int
tasks_next(struct task_src *ts, struct targs *a, unsigned long long *seq)
{
	struct cmdline_len len;
	size_t cap = 0;
	int rc = 0, err, max_len = ts->max_len > 0 ? ts->max_len : CMDLINE_MAX;

	memset(a, 0, sizeof *a);
	cmdline_len_init(&len, ts->cmd);
	for (;;) {
		struct record r;

		if ((rc = take(ts, &r)) <= 0)
			break;
		ts->records++;
		push_rec(a, &cap, r);
		cmdline_len_add(&len, ts->cmd, r.v, r.n, ts->seq + 1, 1);
		if (cmdline_len(&len, ts->cmd) >= (size_t)max_len) {
			if (a->nrec > 1) {
				/* it goes to the next task */
				cmdline_len_add(&len, ts->cmd, r.v, r.n, ts->seq + 1, -1);
				q_push_front(ts, a->rec[--a->nrec]);
				ts->records--;
				break;
			}
			rc = too_long(ts, &r, cmdline_len(&len, ts->cmd));
			break;
		}
		if (ts->max_args > 0 && a->nrec >= ts->max_args)
			break;
	}
	if (rc >= 0 && ts->spread && !ts->spread_done && empty(ts, &err) && ts->slots > 0) {
		/* -X, -m at the end of the input: what is left, evenly over the slots */
		ts->spread_done = 1;
		if (a->nrec > 1) {
			ts->max_args = (a->nrec + ts->slots - 1) / ts->slots;
			while (a->nrec > ts->max_args) {
				q_push_front(ts, a->rec[--a->nrec]);
				ts->records--;
			}
		}
		if (err)
			rc = -1;
	}
	cmdline_len_free(&len);
	if (rc < 0 || a->nrec == 0) {
		targs_free(a);
		return rc < 0 ? -1 : 0;
	}
	flatten(a);
	*seq = ++ts->seq;
	return 1;
}

void
targs_free(struct targs *a)
{
	for (int i = 0; i < a->nrec; i++)
		record_free(&a->rec[i]);
	free(a->rec);
	free(a->flat);
	memset(a, 0, sizeof *a);
}

void
tasks_free(struct task_src *ts)
{
	for (size_t i = ts->qhead; i < ts->qn; i++)
		record_free(&ts->q[i]);
	free(ts->q);
	inputs_free(&ts->in);
	ts->q = NULL;
	ts->qn = ts->qhead = ts->qcap = 0;
}
