/*
 * results: GNU parallel's --results FILE.csv / .tsv / .json (see results.h).
 * CSV and TSV quote a field that holds a quote (doubled), white space, the
 * separator or NUL; the header names the values V1, V2, ... (perl's string
 * increment: V9 is followed by W0) or by --header's names. JSON writes one
 * object a line, \ " and control characters escaped.
 */
#include "farm/results.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int
results_kind(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n >= 4 && strcasecmp(name + n - 4, ".csv") == 0)
		return RESULTS_CSV;
	if (n >= 4 && strcasecmp(name + n - 4, ".tsv") == 0)
		return RESULTS_TSV;
	if (n >= 5 && strcasecmp(name + n - 5, ".json") == 0)
		return RESULTS_JSON;
	return RESULTS_DIR;
}

static int
results_file_open_as(struct results_file *rf, const char *name, char **names, int nnames, int trunc)
{
	memset(rf, 0, sizeof *rf);
	rf->fmt = results_kind(name);
	rf->names = names;
	rf->nnames = nnames;
	rf->path = xstrdup(name);
	if (strcmp(name, "-.csv") == 0 || strcmp(name, "-.tsv") == 0 || strcmp(name, "-.json") == 0) {
		rf->fd = 1;
		return 0;
	}
	rf->fd = open(name, O_WRONLY | O_CREAT | (trunc ? O_TRUNC : 0) | O_CLOEXEC, 0666);
	if (rf->fd < 0) {
		free(rf->path);
		rf->path = NULL;
		return err_sys(EXIT_ENV, "--results %s", name);
	}
	return 0;
}

/* The Seq a whole record of the file starts with (CSV, TSV: its first field; JSON: its "Seq"); 0 none. */
static unsigned long long
record_seq(const char *rec, int fmt)
{
	const char *p = rec;

	if (fmt == RESULTS_JSON && strncmp(p, "{ \"Seq\": ", 9) == 0)
		p += 9;
	if (*p < '1' || *p > '9')
		return 0;
	return strtoull(p, NULL, 10);
}

/* Keep a whole record (the header, or a task the journal has ended) in tmp: 1 kept, 0 not, -1 error. */
static int
keep_record(FILE *tmp, const struct sbuf *rec, int fmt, int first, const struct journal *j)
{
	unsigned long long seq = record_seq(rec->buf, fmt);
	int header = first && fmt != RESULTS_JSON && strncmp(rec->buf, "Seq", 3) == 0;

	if (!header && (seq == 0 || !journal_skip(j, seq)))
		return 0;
	return fwrite(rec->buf, 1, rec->len, tmp) == rec->len ? 1 : -1;
}

/*
 * Copy what the file holds into tmp, record by record, but the records
 * --resume runs again (no end in the journal: the task was killed between
 * its row and its record, or failed under --resume-failed) and a torn
 * last one. A record ends at a newline outside quotes (CSV, TSV), or at a
 * newline (JSON: one object a line). The count dropped, or -1.
 */
static long
copy_kept(FILE *in, FILE *tmp, int fmt, const struct journal *j, int *any)
{
	struct sbuf rec;
	long dropped = 0;
	int c, quoted = 0, k, first = 1;

	sbuf_init(&rec);
	while ((c = getc(in)) != EOF) {
		sbuf_addc(&rec, (char)c);
		if (c == '"' && fmt != RESULTS_JSON)
			quoted = !quoted;
		if (c != '\n' || quoted)
			continue;
		if ((k = keep_record(tmp, &rec, fmt, first, j)) < 0)
			break;
		dropped += k == 0;
		*any |= k;
		first = 0;
		sbuf_reset(&rec);
	}
	k = ferror(in) || ferror(tmp) ? -1 : 0;
	dropped += rec.len > 0;
	sbuf_free(&rec);
	return k < 0 ? -1 : dropped;
}

/*
 * --resume: the rows of the tasks the journal ended stay, the others go
 * (their tasks run again and write new ones); the file is rewritten (a
 * new file renamed over it) only when something goes. Then it is
 * appended to.
 */
static int
resume_open(struct results_file *rf, const char *name, const struct journal *j)
{
	FILE *in = fopen(name, "re"), *tmp;
	char *tpath;
	long dropped;
	int fd, any = 0;

	if (!in)
		return errno == ENOENT ? 1 : err_sys(EXIT_ENV, "--results %s", name);
	tpath = xasprintf("%s.gpupack-XXXXXX", name);
	fd = mkostemp(tpath, O_CLOEXEC);
	tmp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!tmp) {
		if (fd >= 0)
			close(fd);
		fclose(in);
		free(tpath);
		return err_sys(EXIT_ENV, "--results %s: a file beside it", name);
	}
	dropped = copy_kept(in, tmp, rf->fmt, j, &any);
	fclose(in);
	if (dropped < 0 || fflush(tmp) != 0 || fdatasync(fileno(tmp)) < 0 ||
	    (dropped > 0 && rename(tpath, name) < 0)) {
		int e = errno;

		fclose(tmp);
		unlink(tpath);
		free(tpath);
		errno = e;
		return err_sys(EXIT_ENV, "--results %s: keeping its rows", name);
	}
	fclose(tmp);
	if (dropped == 0)
		unlink(tpath);
	free(tpath);
	rf->header_done = any;
	rf->fd = open(name, O_WRONLY | O_APPEND | O_CLOEXEC);
	return rf->fd < 0 ? err_sys(EXIT_ENV, "--results %s", name) : 0;
}

int
results_file_resume(struct results_file *rf, const char *name, char **names, int nnames,
    const struct journal *j)
{
	int rc;

	if (results_file_open_as(rf, name, names, nnames, 0) < 0 || rf->fd == 1)
		return rf->path ? 0 : -1;
	close(rf->fd);
	rf->fd = -1;
	rc = resume_open(rf, name, j);
	if (rc > 0)
		return results_file_open(rf, name, names, nnames);
	if (rc < 0) {
		free(rf->path);
		rf->path = NULL;
	}
	return rc;
}

void
results_file_close(struct results_file *rf)
{
	if (rf->fd > 2)
		close(rf->fd);
	rf->fd = -1;
	free(rf->path);
	rf->path = NULL;
}

int
results_file_open(struct results_file *rf, const char *name, char **names, int nnames)
{
	return results_file_open_as(rf, name, names, nnames, 1);
}

/* ---- writing ------------------------------------------------------------ */

struct out {
	struct results_file *rf;
	struct sbuf b;
	int failed;
};

static void
flush(struct out *o, int all)
{
	if (o->b.len == 0 || (!all && o->b.len < 65536))
		return;
	if (!o->failed && write_all(o->rf->fd, o->b.buf, o->b.len) < 0)
		o->failed = errno ? errno : EIO;
	sbuf_reset(&o->b);
}

/* A field's bytes: from memory (s, n), or from an obuf (s NULL) */
struct field {
	const char *s;
	size_t n;
	const struct obuf *ob;
};

/* The field's bytes in chunks: *len of them at the returned pointer; NULL at the end. */
static const char *
chunk(const struct field *f, uint64_t *off, char *buf, size_t size, size_t *len)
{
	ssize_t got;

	if (!f->ob) {
		if (*off >= f->n)
			return NULL;
		*len = f->n - (size_t)*off;
		*off = f->n;
		return f->s + f->n - *len;
	}
	got = obuf_pread(f->ob, buf, size, *off);
	if (got <= 0)
		return NULL;
	*off += (uint64_t)got;
	*len = (size_t)got;
	return buf;
}

/* parallel's combine_ref: does the field need quotes? */
static int
csv_needs_quotes(const struct field *f, char sep)
{
	char buf[65536];
	uint64_t off = 0;
	size_t len;
	const char *p;

	while ((p = chunk(f, &off, buf, sizeof buf, &len)) != NULL)
		for (size_t i = 0; i < len; i++)
			if (p[i] == '"' || p[i] == sep || p[i] == '\0' || strchr(" \t\n\r\f\v", p[i]))
				return 1;
	return 0;
}

static void
csv_field(struct out *o, const struct field *f, int first)
{
	char sep = o->rf->fmt == RESULTS_TSV ? '\t' : ',', buf[65536];
	int quote = csv_needs_quotes(f, sep);
	uint64_t off = 0;
	size_t len;
	const char *p;

	if (!first)
		sbuf_addc(&o->b, sep);
	if (quote)
		sbuf_addc(&o->b, '"');
	while ((p = chunk(f, &off, buf, sizeof buf, &len)) != NULL) {
		for (size_t i = 0; i < len; i++) {
			if (p[i] == '"')
				sbuf_addc(&o->b, '"');
			sbuf_addc(&o->b, p[i]);
		}
		flush(o, 0);
	}
	if (quote)
		sbuf_addc(&o->b, '"');
}

static void
csv_str(struct out *o, const char *s, int first)
{
	struct field f = {s, strlen(s), NULL};

	csv_field(o, &f, first);
}

/* perl's ++ on a string of letters and digits ("V9" -> "W0", "Z9" -> "AA0") */
static void
perl_incr(char *s, size_t size)
{
	size_t n = strlen(s);

	for (size_t i = n; i-- > 0;) {
		char *c = &s[i];

		if (*c == '9') {
			*c = '0';
		} else if (*c == 'z') {
			*c = 'a';
		} else if (*c == 'Z') {
			*c = 'A';
		} else {
			(*c)++;
			return;
		}
		if (i == 0 && n + 1 < size) {
			/* carried off the front: one character more, as perl's */
			memmove(s + 1, s, n + 1);
			s[0] = *c == '0' ? '1' : *c;
		}
	}
}

static void
csv_header(struct out *o, int nvals)
{
	static const char *const cols[] = {"Seq", "Host", "Starttime", "JobRuntime", "Send", "Receive",
		"Exitval", "Signal", "Command"};
	char v[32] = "V1";

	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		csv_str(o, cols[i], i == 0);
	for (int i = 0; i < nvals; i++) {
		csv_str(o, i < o->rf->nnames ? o->rf->names[i] : v, 0);
		perl_incr(v, sizeof v);
	}
	csv_str(o, "Stdout", 0);
	csv_str(o, "Stderr", 0);
	sbuf_addc(&o->b, '\n');
}

static void
csv_record(struct out *o, const struct joblog_rec *rec, char *const *vals, int nvals,
    const struct obuf out[2])
{
	char num[64];
	struct field f;

	snprintf(num, sizeof num, "%llu", rec->seq);
	csv_str(o, num, 1);
	csv_str(o, rec->host ? rec->host : ":", 0);
	snprintf(num, sizeof num, "%.3f", rec->start);
	csv_str(o, num, 0);
	snprintf(num, sizeof num, "%.3f", rec->runtime);
	csv_str(o, num, 0);
	snprintf(num, sizeof num, "%llu", rec->sent);
	csv_str(o, num, 0);
	snprintf(num, sizeof num, "%llu", rec->received);
	csv_str(o, num, 0);
	snprintf(num, sizeof num, "%d", rec->exitval);
	csv_str(o, num, 0);
	snprintf(num, sizeof num, "%d", rec->signal);
	csv_str(o, num, 0);
	csv_str(o, rec->command, 0);
	for (int i = 0; i < nvals; i++)
		csv_str(o, vals[i], 0);
	for (int i = 0; i < 2; i++) {
		f = (struct field){NULL, 0, &out[i]};
		csv_field(o, &f, 0);
	}
	sbuf_addc(&o->b, '\n');
}

/* parallel's jsonquote: \ and " escaped, bytes 0-31 as \u00XX */
static void
json_field(struct out *o, const struct field *f)
{
	char buf[65536];
	uint64_t off = 0;
	size_t len;
	const char *p;

	sbuf_addc(&o->b, '"');
	while ((p = chunk(f, &off, buf, sizeof buf, &len)) != NULL) {
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)p[i];

			if (c == '\\' || c == '"')
				sbuf_addc(&o->b, '\\');
			if (c < 32)
				sbuf_printf(&o->b, "\\u%04x", c);
			else
				sbuf_addc(&o->b, (char)c);
		}
		flush(o, 0);
	}
	sbuf_addc(&o->b, '"');
}

static void
json_str(struct out *o, const char *s)
{
	struct field f = {s, strlen(s), NULL};

	json_field(o, &f);
}

static void
json_record(struct out *o, const struct joblog_rec *rec, char *const *vals, int nvals,
    const struct obuf out[2])
{
	struct field f;

	sbuf_printf(&o->b, "{ \"Seq\": %llu, \"Host\": ", rec->seq);
	json_str(o, rec->host ? rec->host : ":");
	sbuf_printf(&o->b, ", \"Starttime\": %.3f, \"JobRuntime\": %.3f, \"Send\": %llu, \"Receive\": %llu, "
	    "\"Exitval\": %d, \"Signal\": %d, \"Command\": ", rec->start, rec->runtime, rec->sent, rec->received,
	    rec->exitval, rec->signal);
	json_str(o, rec->command);
	sbuf_add(&o->b, ", \"V\": [ ");
	for (int i = 0; i < nvals; i++) {
		if (i > 0)
			sbuf_addc(&o->b, ',');
		json_str(o, vals[i]);
	}
	sbuf_add(&o->b, " ], \"Stdout\": ");
	f = (struct field){NULL, 0, &out[0]};
	json_field(o, &f);
	sbuf_add(&o->b, ", \"Stderr\": ");
	f = (struct field){NULL, 0, &out[1]};
	json_field(o, &f);
	sbuf_add(&o->b, " }\n");
}

int
results_file_add(struct results_file *rf, const struct joblog_rec *rec, char *const *vals, int nvals,
    const struct obuf out[2])
{
	struct out o = {rf, {0}, 0};
	static char *const pipe_tmp[] = {"$PARALLEL_TMP"};

	if (rf->pipe) {
		/* --pipe: parallel's values are not the block's temporary name */
		vals = pipe_tmp;
		nvals = rf->pipe == 2;
	}
	if (rf->fd < 0 || rf->broken)
		return rf->broken ? err_set(EXIT_ENV, "--results %s: not written after an earlier error",
		    rf->path) : 0;
	sbuf_init(&o.b);
	if (rf->fmt == RESULTS_JSON) {
		json_record(&o, rec, vals, nvals, out);
	} else {
		if (!rf->header_done)
			csv_header(&o, nvals);
		rf->header_done = 1;
		csv_record(&o, rec, vals, nvals, out);
	}
	flush(&o, 1);
	sbuf_free(&o.b);
	if (o.failed) {
		rf->broken = 1;
		errno = o.failed;
		return err_sys(EXIT_ENV, "--results %s: task %llu's record", rf->path, rec->seq);
	}
	return 0;
}

int
results_par_file(const struct obuf *out, char **path)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	*path = xasprintf("%s/parXXXXXX.par", dir && *dir ? dir : "/tmp");
	fd = mkostemps(*path, 4, O_CLOEXEC);
	if (fd < 0 || obuf_write(out, fd) < 0) {
		int rc = err_sys(EXIT_ENV, "--files: %s", *path);

		if (fd >= 0) {
			close(fd);
			unlink(*path);
		}
		free(*path);
		*path = NULL;
		return rc;
	}
	close(fd);
	return 0;
}
