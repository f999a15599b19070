/*
 * resdir: --results DIR, each task's files where GNU parallel puts them
 * (DIR/1/<value>/2/<value>/stdout, stderr, seq; or a template's own
 * names), and output as part of the task: stdout and stderr are written
 * under temporary names beside them (.stdout.gpupack, ...) and renamed
 * when the task's end is recorded, stdout last. A stdout file is there
 * only for a task that ended whole, which is what --resume without a
 * joblog takes as "ran" (parallel's test); a task killed midway, or
 * ended unrecorded, leaves none, and --resume runs it again.
 */
#include "farm/state.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p */
static int
make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = str_copy(path, dir, sizeof path);

	if (n >= sizeof path)
		return errno = ENAMETOOLONG, -1;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* perl's numeric value of a header name ("1a" is 1, "b" is 0), for parallel's sort */
static double
perl_num(const char *s)
{
	char *end;
	double v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!((*s >= '0' && *s <= '9') || *s == '.' || ((*s == '-' || *s == '+') &&
	    ((s[1] >= '0' && s[1] <= '9') || s[1] == '.'))))
		return 0;
	v = strtod(s, &end);
	return v;
}

static const char *const *sort_names;

static int
by_name(const void *a, const void *b)
{
	const char *x = sort_names[*(const int *)a], *y = sort_names[*(const int *)b];
	double nx = perl_num(x), ny = perl_num(y);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x, y);
}

/*
 * GNU parallel's --results directory for a task: DIR/1/<value 1>/2/<value
 * 2>/... (with --header the column names for the numbers, in their sorted
 * order), each value with \ \t NUL and / written as \\ \t \0 \_, at most 255
 * bytes a name.
 */
static char *
results_dir(const struct farm *f, const struct task *t)
{
	struct sbuf b;
	char num[16];

	/*
	 * --pipe: parallel's value is no input but its block: DIR itself (each task's files in
	 * turn), with --cat the name it gives {} there, $PARALLEL_TMP. The same in every run,
	 * where the block's temporary name was new each time (--resume never matched).
	 */
	if (f->o->pipe.on && !f->o->pipe.tee)
		return f->o->pipe.cat ? xasprintf("%s/1/$PARALLEL_TMP", f->o->results) :
		    xstrdup(f->o->results);
	sbuf_init(&b);
	sbuf_add(&b, f->o->results);
	for (int r = 0; r < t->a.nrec; r++) {
		const struct record *rec = &t->a.rec[r];
		const char **names = xcalloc((size_t)rec->n + 1, sizeof *names);
		int *order = xcalloc((size_t)rec->n + 1, sizeof *order);
		char **own = xcalloc((size_t)rec->n + 1, sizeof *own);

		for (int c = 0; c < rec->n; c++) {
			if (c < f->o->ts.in.nnames) {
				names[c] = f->o->ts.in.names[c];
			} else {
				snprintf(num, sizeof num, "%d", c + 1);
				names[c] = own[c] = xstrdup(num);
			}
			order[c] = c;
		}
		sort_names = names;
		qsort(order, (size_t)rec->n, sizeof *order, by_name);
		for (int k = 0; k < rec->n; k++) {
			int c = order[k];
			size_t start;

			sbuf_addc(&b, '/');
			sbuf_add(&b, names[c]);
			sbuf_addc(&b, '/');
			start = b.len;
			for (const char *p = rec->v[c]; *p; p++) {
				if (*p == '\\')
					sbuf_add(&b, "\\\\");
				else if (*p == '\t')
					sbuf_add(&b, "\\t");
				else if (*p == '/')
					sbuf_add(&b, "\\_");
				else
					sbuf_addc(&b, *p);
			}
			if (b.len - start > 255) {
				b.len = start + 255;
				b.buf[b.len] = '\0';
			}
		}
		for (int c = 0; c < rec->n; c++)
			free(own[c]);
		free(own);
		free(order);
		free(names);
	}
	return sbuf_detach(&b);
}

static int
open_out(int *fd, const char *path)
{
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	return *fd < 0 ? err_sys(EXIT_ENV, "--results %s", path) : 0;
}

static void
results_paths(struct farm *f, const struct task *t, const struct job_vals *v,
    struct resdir *p)
{
	size_t n;

	if (f->res.dir_tmpl) {
		p->dir = tmpl_build(&f->res.dir, v);
		n = strlen(p->dir);
		if (n > 0 && p->dir[n - 1] == '/') {
			p->out = xasprintf("%sstdout", p->dir);
			p->err = xasprintf("%sstderr", p->dir);
			p->seq = xasprintf("%sseq", p->dir);
			return;
		}
		/* a file name: FILE, FILE.err, FILE.seq */
		p->out = xstrdup(p->dir);
		p->err = xasprintf("%s.err", p->dir);
		p->seq = xasprintf("%s.seq", p->dir);
		if (strrchr(p->dir, '/'))
			*strrchr(p->dir, '/') = '\0';
		else
			p->dir[0] = '\0';
		return;
	}
	p->dir = results_dir(f, t);
	p->out = xasprintf("%s/stdout", p->dir);
	p->err = xasprintf("%s/stderr", p->dir);
	p->seq = xasprintf("%s/seq", p->dir);
}

/*
 * Does dir (relative to the working directory) name the filesystem's root? Lexically,
 * as the kernel walks it: empty and "." components go, ".." takes one back (none above
 * the root).
 */
static int
is_root(const char *dir)
{
	char cwd[PATH_MAX];
	int depth = 0;

	if (dir[0] != '/') {
		if (!getcwd(cwd, sizeof cwd))
			return 0;
		for (const char *c = cwd; *c; c++)
			if (*c == '/' && c[1] && c[1] != '/')
				depth++;
	}
	for (const char *c = dir; *c;) {
		size_t n;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			depth -= depth > 0;
		else if (n > 0 && !(n == 1 && c[0] == '.'))
			depth++;
		c += n;
	}
	return depth == 0;
}

/*
 * --results TEMPLATE may only write where its words point: a path that comes to nothing,
 * or to files at the filesystem's root (a perl expression's value, an input's), is
 * refused before the task starts. parallel writes there.
 */
static int
results_where(const struct farm *f, const struct task *t, const struct resdir *p)
{
	const char *what = NULL;

	if (!f->res.dir_tmpl)
		return 0;
	if (!p->out[0])
		what = "is empty";
	else if (p->dir[0] ? is_root(p->dir) : p->out[0] == '/')
		what = "puts its files at the filesystem's root";
	if (!what)
		return 0;
	errno = EINVAL;
	return err_set(EXIT_USAGE, "--results %s: task %llu's path '%s' %s: gpupack writes only "
	    "below the directory the template names", f->o->results, t->seq, p->out, what);
}

static void
results_paths_free(struct resdir *p)
{
	free(p->dir);
	free(p->out);
	free(p->err);
	free(p->seq);
	free(p->tmp[0]);
	free(p->tmp[1]);
}

/* The task's directory and its seq file (the number, no newline, as parallel writes it). */
static int
results_begin(const struct resdir *p, unsigned long long seq)
{
	char num[32];
	size_t n;
	int fd;

	if (*p->dir && make_dirs(p->dir) < 0)
		return err_sys(EXIT_ENV, "--results %s", p->dir);
	if (open_out(&fd, p->seq) < 0)
		return -1;
	n = (size_t)snprintf(num, sizeof num, "%llu", seq);
	if (write(fd, num, n) != (ssize_t)n) {
		close(fd);
		return err_sys(EXIT_ENV, "--results %s", p->seq);
	}
	close(fd);
	return 0;
}

/*
 * The temporary name of path for task seq: .NAME.SEQ.gpupack beside it (a template may give
 * tasks running at once one path: each writes its own, the last to end keeps the name).
 */
static char *
tmp_name(const char *path, unsigned long long seq)
{
	const char *base = strrchr(path, '/');

	if (!base)
		return xasprintf(".%s.%llu.gpupack", path, seq);
	return xasprintf("%.*s/.%s.%llu.gpupack", (int)(base - path), path, base + 1, seq);
}

int
resdir_open(struct farm *f, struct run *r, const struct job_vals *v)
{
	struct resdir *p = xcalloc(1, sizeof *p);

	results_paths(f, r->task, v, p);
	p->tmp[0] = tmp_name(p->out, r->task->seq);
	p->tmp[1] = tmp_name(p->err, r->task->seq);
	r->res = p;
	if (results_where(f, r->task, p) < 0 || results_begin(p, r->task->seq) < 0 || open_out(&r->file[0], p->tmp[0]) < 0 ||
	    open_out(&r->file[1], p->tmp[1]) < 0)
		return -1;
	/* a stdout left by an earlier attempt (--resume-failed) is not this one's */
	unlink(p->out);
	return 0;
}

int
resdir_keep(struct run *r)
{
	struct resdir *p = r->res;

	if (!p)
		return 0;
	/* stdout last: its name says the task ran */
	if (rename(p->tmp[1], p->err) < 0)
		return err_sys(EXIT_ENV, "--results %s", p->err);
	if (rename(p->tmp[0], p->out) < 0)
		return err_sys(EXIT_ENV, "--results %s", p->out);
	return 0;
}

void
resdir_forget(struct run *r)
{
	struct resdir *p = r->res;

	if (!p)
		return;
	unlink(p->tmp[0]);
	unlink(p->tmp[1]);
	unlink(p->out);
	if (p->dir) {
		/* its usage (farm/usagefarm.c) says it ran too */
		char *u = xasprintf("%s%susage.json", p->dir, *p->dir ? "/" : "");

		unlink(u);
		free(u);
	}
}

void
resdir_free(struct run *r)
{
	if (!r->res)
		return;
	results_paths_free(r->res);
	free(r->res);
	r->res = NULL;
}

int
resdir_done(struct farm *f, const struct task *t)
{
	struct resdir p = {0};
	struct job_vals v;
	int status, done;

	launch_vals(f, t, 1, f->g[0].t.uuid, &v, &status);
	results_paths(f, t, &v, &p);
	done = access(p.out, F_OK) == 0;
	results_paths_free(&p);
	return done;
}

int
resdir_dry(struct farm *f, const struct task *t, const struct job_vals *v)
{
	struct resdir p = {0};
	int rc, fd = -1;

	results_paths(f, t, v, &p);
	rc = results_where(f, t, &p);
	if (rc == 0)
		rc = results_begin(&p, t->seq);
	if (rc == 0 && (rc = open_out(&fd, p.err)) == 0)
		close(fd);
	results_paths_free(&p);
	return rc;
}
