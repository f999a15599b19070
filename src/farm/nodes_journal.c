/*
 * nodes_journal: the records of a farm over nodes (farm/nodes.h). Each
 * gpupack writes its own log; a record counts when its writer holds the
 * task's highest claim (reclaim/SEQ.K names who that is; without a reclaim
 * only one gpupack ever claimed the task). From that rule come both what
 * --resume skips (the runs of the chain, newest first: the first run with
 * a counted record of a task decides) and FILE, the joblog of the whole
 * farm, written at the end: the counted records of the chain, oldest run
 * first, each run's in input order.
 */
#include "farm/journal.h"
#include "farm/nodes.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
/* a chain longer than this is a loop in the parent links, not history */
#define MAX_CHAIN 4096

/* ---- one run's authority ------------------------------------------------ */

struct reclaim {
	unsigned long long seq;
	int k;
	char owner[128];
};

struct rundata {
	struct reclaim *rc;
	size_t nrc;
};

static int
cmp_reclaim(const void *a, const void *b)
{
	const struct reclaim *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* By seq, then attempt: the last of each seq is its highest. */
static int
cmp_attempt(const void *a, const void *b)
{
	const struct reclaim *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* Read a symlink's target into out; -1 when it cannot be read. */
static int
read_link(const char *path, char *out, size_t size)
{
	ssize_t n = readlink(path, out, size - 1);

	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* reclaim/: for each task taken over, who holds its highest attempt. */
static int
load_reclaims(const char *rundir, struct rundata *rd)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t cap = 0, i, n;
	DIR *d;

	memset(rd, 0, sizeof *rd);
	snprintf(path, sizeof path, "%s/reclaim", rundir);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : err_sys(EXIT_ENV, "cannot read %s", path);
	while ((e = readdir(d)) != NULL) {
		unsigned long long seq;
		char owner[128], lp[PATH_MAX + 300], *dot, *end;
		long k;

		dot = strchr(e->d_name, '.');
		if (e->d_name[0] == '.' || !dot)
			continue;
		seq = strtoull(e->d_name, &end, 10);
		if (end != dot || seq == 0)
			continue;
		k = strtol(dot + 1, &end, 10);
		if (*end || k < 1)
			continue;
		snprintf(lp, sizeof lp, "%s/%s", path, e->d_name);
		if (k > INT_MAX || read_link(lp, owner, sizeof owner) < 0)
			continue;
		xgrow(&rd->rc, &cap, rd->nrc + 1, sizeof *rd->rc);
		rd->rc[rd->nrc].seq = seq;
		rd->rc[rd->nrc].k = (int)k;
		str_copy(rd->rc[rd->nrc].owner, owner, sizeof rd->rc[rd->nrc].owner);
		rd->nrc++;
	}
	closedir(d);
	/* one per seq, its highest attempt: sorted, not searched name by name */
	if (rd->nrc > 1)
		qsort(rd->rc, rd->nrc, sizeof *rd->rc, cmp_attempt);
	for (i = 0, n = 0; i < rd->nrc; i++) {
		if (n > 0 && rd->rc[n - 1].seq == rd->rc[i].seq)
			n--;
		rd->rc[n++] = rd->rc[i];
	}
	rd->nrc = n;
	return 0;
}

/* Does owner's record of seq count? */
static int
counts(const struct rundata *rd, unsigned long long seq, const char *owner)
{
	struct reclaim key = {.seq = seq};
	const struct reclaim *hit;

	if (rd->nrc == 0)
		return 1;
	hit = bsearch(&key, rd->rc, rd->nrc, sizeof *rd->rc, cmp_reclaim);
	return !hit || strcmp(hit->owner, owner) == 0;
}

/* A log's name: an owner (not the journal's .gpupack note, not a temporary). */
static int
is_log(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && !(n > 8 && strcmp(name + n - 8, ".gpupack") == 0) && !strstr(name, ".tmp.");
}

/*
 * Call fn for each counted record of a run: (seq, exitval, signal, the
 * whole line). -1 with err set.
 */
static int
each_record(const char *rundir, void (*fn)(void *, unsigned long long, int, int, const char *), void *arg)
{
	struct rundata rd;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (load_reclaims(rundir, &rd) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/log", rundir);
	d = opendir(path);
	if (!d) {
		free(rd.rc);
		return errno == ENOENT ? 0 : err_sys(EXIT_ENV, "cannot read %s", path);
	}
	while ((e = readdir(d)) != NULL && rc == 0) {
		char lp[PATH_MAX + 300], *data = NULL, *save = NULL;

		if (!is_log(e->d_name))
			continue;
		snprintf(lp, sizeof lp, "%s/%s", path, e->d_name);
		if (read_file(lp, &data, NULL) < 0) {
			rc = -1;
			break;
		}
		for (char *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			unsigned long long seq;
			int ev, sig;

			if (journal_parse_line(l, &seq, &ev, &sig) == 0 && counts(&rd, seq, e->d_name))
				fn(arg, seq, ev, sig, l);
		}
		free(data);
	}
	closedir(d);
	free(rd.rc);
	return rc;
}

/* The runs of a chain, newest first, starting at first ("none": empty). */
static int
chain_runs(const char *dir, const char *first, char ***runs, int *n)
{
	char cur[256];
	size_t cap = 0;

	*runs = NULL;
	*n = 0;
	str_copy(cur, first, sizeof cur);
	while (strcmp(cur, "none") != 0 && *cur) {
		char path[PATH_MAX];

		for (int i = 0; i < *n; i++)
			if (strcmp((*runs)[i], cur) == 0)
				return err_set(EXIT_ENV, "%s: run %s is its own ancestor", dir, cur);
		if (*n >= MAX_CHAIN)
			return err_set(EXIT_ENV, "%s: more than %d runs resume each other", dir, MAX_CHAIN);
		xgrow(runs, &cap, (size_t)*n + 1, sizeof **runs);
		(*runs)[(*n)++] = xstrdup(cur);
		snprintf(path, sizeof path, "%s/%s/parent", dir, cur);
		if (read_link(path, cur, sizeof cur) < 0)
			return err_sys(EXIT_ENV, "cannot read %s", path);
	}
	return 0;
}

static void
free_runs(char **runs, int n)
{
	for (int i = 0; i < n; i++)
		free(runs[i]);
	free(runs);
}

/* ---- what earlier runs settled ------------------------------------------- */

/*
 * What the chain decided, by Seq (a map sized by the records, not by their
 * Seqs): the run that decided it (its place in the chain, newest first,
 * from 1) times 2, plus 1 when its record ended well.
 */
struct nodes_chain {
	struct seqmap decided;
	unsigned long long run;    /* the run being read now */
};

static void
chain_record(void *arg, unsigned long long seq, int ev, int sig, const char *line)
{
	struct nodes_chain *c = arg;
	unsigned long long *v = seqmap_get(&c->decided, seq);

	(void)line;
	/* a newer run decided first */
	if (v && *v >> 1 != c->run)
		return;
	/* a run that retried a task wrote its last attempt only: one record */
	*seqmap_put(&c->decided, seq) = c->run << 1 | (ev == 0 && sig == 0);
}

int
nodes_chain_load(const char *dir, const char *parent, struct nodes_chain **out)
{
	struct nodes_chain *c = xcalloc(1, sizeof *c);
	char **runs;
	int n, rc;

	*out = c;
	rc = chain_runs(dir, parent, &runs, &n);
	for (int i = 0; rc == 0 && i < n; i++) {
		char rd[PATH_MAX];

		c->run = (unsigned long long)i + 1;
		snprintf(rd, sizeof rd, "%s/%s", dir, runs[i]);
		rc = each_record(rd, chain_record, c);
	}
	free_runs(runs, n);
	return rc;
}

int
nodes_chain_done(const struct nodes_chain *c, unsigned long long seq, int resume_failed)
{
	const unsigned long long *v = c ? seqmap_get(&c->decided, seq) : NULL;

	if (!v)
		return 0;
	return resume_failed ? (int)(*v & 1) : 1;
}

void
nodes_chain_free(struct nodes_chain *c)
{
	if (!c)
		return;
	seqmap_free(&c->decided);
	free(c);
}

/* ---- one run's outcome ------------------------------------------------------- */

/* By Seq: 1 when the run's counted record of it ended badly, 0 well. */
struct tally {
	struct seqmap seen;
};

static void
tally_record(void *arg, unsigned long long seq, int ev, int sig, const char *line)
{
	struct tally *t = arg;

	(void)line;
	*seqmap_put(&t->seen, seq) = ev != 0 || sig != 0;
}

int
nodes_run_tally(const char *dir, const char *run, const struct nodes_chain *c, int resume_failed,
    unsigned long long inputs, unsigned long long *failed, unsigned long long *unfinished)
{
	struct tally t = {{0}};
	const unsigned long long *bad;
	char rd[PATH_MAX];
	int rc;

	*failed = *unfinished = 0;
	if ((size_t)snprintf(rd, sizeof rd, "%s/%s", dir, run) >= sizeof rd)
		return err_set(EXIT_ENV, "%s: path too long", dir);
	rc = each_record(rd, tally_record, &t);
	for (unsigned long long seq = 1; rc == 0 && seq <= inputs; seq++) {
		if ((bad = seqmap_get(&t.seen, seq)) != NULL)
			*failed += *bad;
		else if (!nodes_chain_done(c, seq, resume_failed))
			(*unfinished)++;
	}
	seqmap_free(&t.seen);
	return rc;
}

/* ---- one gpupack's log ----------------------------------------------------- */

struct nodes_log {
	struct seqmap has;
};

int
nodes_log_load(const char *rundir, const char *owner, struct nodes_log **out)
{
	char path[PATH_MAX], *data = NULL, *save = NULL;

	*out = xcalloc(1, sizeof **out);
	if ((size_t)snprintf(path, sizeof path, "%s/log/%s", rundir, owner) >= sizeof path)
		return err_set(EXIT_ENV, "%s: path too long", rundir);
	if (access(path, F_OK) < 0)
		return 0;
	if (read_file(path, &data, NULL) < 0)
		return -1;
	for (char *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long seq;
		int ev, sig;

		if (journal_parse_line(l, &seq, &ev, &sig) == 0)
			seqmap_put(&(*out)->has, seq);
	}
	free(data);
	return 0;
}

int
nodes_log_has(const struct nodes_log *l, unsigned long long seq)
{
	return l && seqmap_get(&l->has, seq) != NULL;
}

void
nodes_log_free(struct nodes_log *l)
{
	if (!l)
		return;
	seqmap_free(&l->has);
	free(l);
}

/* ---- FILE: the farm's joblog ------------------------------------------------ */

struct line {
	unsigned long long seq;
	char *text;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

static void
collect(void *arg, unsigned long long seq, int ev, int sig, const char *text)
{
	struct lines *ls = arg;

	(void)ev;
	(void)sig;
	xgrow(&ls->v, &ls->cap, ls->n + 1, sizeof *ls->v);
	ls->v[ls->n].seq = seq;
	ls->v[ls->n].text = xstrdup(text);
	ls->n++;
}

static int
cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int
nodes_merge(const char *dir, const char *run, const char *joblog)
{
	struct sbuf out;
	char **runs;
	int n, rc;

	rc = chain_runs(dir, run, &runs, &n);
	sbuf_init(&out);
	sbuf_add(&out, HEADER);
	/* oldest first, as one joblog that each resumed run appended to */
	for (int i = n - 1; rc == 0 && i >= 0; i--) {
		struct lines ls = {0};
		char rd[PATH_MAX];

		snprintf(rd, sizeof rd, "%s/%s", dir, runs[i]);
		rc = each_record(rd, collect, &ls);
		if (ls.n > 1)
			qsort(ls.v, ls.n, sizeof *ls.v, cmp_line);
		for (size_t k = 0; k < ls.n; k++) {
			sbuf_add(&out, ls.v[k].text);
			sbuf_addc(&out, '\n');
			free(ls.v[k].text);
		}
		free(ls.v);
	}
	free_runs(runs, n);
	if (rc == 0)
		rc = write_file_atomic(joblog, out.buf, out.len, 0644);
	sbuf_free(&out);
	return rc;
}
