/*
 * journal: the joblog as GNU parallel writes it, made durable per line.
 * Only a task's final attempt gets a line (as parallel does with
 * --retries), so each task ends exactly once in the file.
 *
 * Torn records: a line is only ever appended after a newline. Opening for
 * append or resume cuts whatever follows the last newline (the start of a
 * record a crash or a full disk interrupted); a record whose write fails
 * is cut back at once. So a torn record can never run into the next one
 * (a torn "1" before "10\t..." would read as Seq 110).
 */
#include "farm/journal.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"

uint64_t
journal_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int
parse_int_field(const char *s, size_t n, long long *out)
{
	long long v = 0;
	int neg = 0;

	if (n > 0 && *s == '-') {
		neg = 1;
		s++;
		n--;
	}
	if (n == 0 || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

int
journal_parse_line(const char *line, unsigned long long *seq, int *exitval, int *sig)
{
	const char *f[8];
	size_t len[8];
	const char *p = line;
	long long v;

	for (int i = 0; i < 8; i++) {
		const char *tab = strchr(p, '\t');

		if (!tab)
			return -1;
		f[i] = p;
		len[i] = (size_t)(tab - p);
		p = tab + 1;
	}
	if (parse_int_field(f[0], len[0], &v) < 0 || v < 1 || (unsigned long long)v >= JOURNAL_MAX_SEQ)
		return -1;
	*seq = (unsigned long long)v;
	if (parse_int_field(f[6], len[6], &v) < 0 || v < -1000 || v > 1000)
		return -1;
	*exitval = (int)v;
	if (parse_int_field(f[7], len[7], &v) < 0 || v < 0 || v > 1000)
		return -1;
	*sig = (int)v;
	return 0;
}

/* ---- reading a joblog back ---------------------------------------------- */

static int
add_seen(struct journal *j, unsigned long long seq, int ok)
{
	if (j->nseen >= JOURNAL_MAX_RECORDS)
		return err_set(EXIT_USAGE, "--joblog '%s': more than %u records: not a joblog "
		    "gpupack can resume", j->path ? j->path : "-", JOURNAL_MAX_RECORDS);
	xgrow(&j->seen, &j->cap, j->nseen + 1, sizeof *j->seen);
	j->seen[j->nseen] = (struct journal_seen){seq, j->nseen, ok};
	j->nseen++;
	return 0;
}

static int
seen_cmp(const void *a, const void *b)
{
	const struct journal_seen *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sort by seq; of several records of one seq the last in the file decides. */
static void
seen_finish(struct journal *j)
{
	size_t k = 0;

	if (j->nseen > 1)
		qsort(j->seen, j->nseen, sizeof *j->seen, seen_cmp);
	for (size_t i = 0; i < j->nseen; i++) {
		if (k > 0 && j->seen[k - 1].seq == j->seen[i].seq)
			k--;
		j->seen[k++] = j->seen[i];
	}
	j->nseen = k;
}

/* One complete line (without its newline; it may hold NULs past the fields). */
static int
take_line(struct journal *j, char *line)
{
	unsigned long long seq;
	int ev, sig;

	if (journal_parse_line(line, &seq, &ev, &sig) < 0)
		return 0; /* the header, or junk: no record */
	return add_seen(j, seq, ev == 0 && sig == 0);
}

/*
 * The lines of buf[0..len) into j->seen; carry holds a line begun in an
 * earlier piece. *torn: the bytes of an unfinished last line.
 */
static int
feed(struct journal *j, struct sbuf *carry, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (carry->len + n > JOURNAL_MAX_LINE)
			return err_set(EXIT_USAGE, "--joblog '%s': a line longer than %u MiB: not a joblog",
			    j->path ? j->path : "-", JOURNAL_MAX_LINE >> 20);
		sbuf_addn(carry, p, n);
		if (!nl)
			break;
		if (take_line(j, carry->buf ? carry->buf : (char *)"") < 0)
			return -1;
		sbuf_reset(carry);
		p = nl + 1;
	}
	return 0;
}

int
journal_load_mem(struct journal *j, const char *buf, size_t len, size_t *torn)
{
	struct sbuf carry;
	int rc;

	sbuf_init(&carry);
	rc = feed(j, &carry, buf, len);
	*torn = carry.len;
	sbuf_free(&carry);
	if (rc == 0)
		seen_finish(j);
	return rc;
}

/* A regular file, or an error that names what it is instead. */
static int
check_regular(const char *path, const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return 0;
	return err_set(EXIT_USAGE, "--joblog '%s' is %s, not a regular file", path,
	    S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO" :
	    S_ISSOCK(st->st_mode) ? "a socket" : "a device");
}

/*
 * Read the existing joblog: its records when resuming, and where its last
 * complete line ends (j->keep), so that a torn tail can be cut before
 * anything is appended. A missing file is an empty one.
 */
static int
load(struct journal *j)
{
	struct sbuf carry;
	struct stat st;
	char chunk[65536];
	long long off = 0, last_nl = 0;
	int fd, rc = 0;

	j->keep = -1;
	fd = open(j->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_sys(EXIT_USAGE, "--joblog '%s'", j->path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return err_sys(EXIT_USAGE, "--joblog '%s'", j->path);
	}
	if (check_regular(j->path, &st) < 0) {
		close(fd);
		return -1;
	}
	sbuf_init(&carry);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		const char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_sys(EXIT_USAGE, "--joblog '%s'", j->path);
			break;
		}
		if (n == 0)
			break;
		for (nl = chunk + n; nl > chunk && nl[-1] != '\n'; nl--)
			;
		if (nl > chunk)
			last_nl = off + (nl - chunk);
		off += n;
		if (j->resume && (rc = feed(j, &carry, chunk, (size_t)n)) < 0)
			break;
	}
	sbuf_free(&carry);
	close(fd);
	if (rc < 0)
		return -1;
	seen_finish(j);
	/* bytes after the last newline: the start of a record that was never finished */
	if (last_nl < off)
		j->keep = last_nl;
	return 0;
}

/* ---- the identity beside the joblog ------------------------------------- */

static char *
identity_line(uint64_t id, char *buf, size_t size)
{
	snprintf(buf, size, "gpupack-run %016" PRIx64 "\n", id);
	return buf;
}

/* FILE.gpupack: which command and inputs wrote this joblog; refused when another did. */
static int
check_identity(const struct journal *j)
{
	const char *side = j->side;
	char *data = NULL, want[64];
	struct stat st;
	size_t len;
	int r = 0;

	/* --retry-failed runs the joblog's own lines: nothing to check or record */
	if (j->identity == 0)
		return 0;
	identity_line(j->identity, want, sizeof want);
	/* written when the run begins: what is there must be a file it can replace */
	if (lstat(side, &st) == 0 && !S_ISREG(st.st_mode)) {
		r = err_set(EXIT_USAGE, "--joblog '%s': %s is %s, not the file gpupack keeps the command's "
		    "identity in", j->path, side, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		return r;
	}
	if (j->resume && access(side, F_OK) == 0) {
		if (read_file_max(side, 4096, &data, &len) < 0)
			r = err_prefix("--resume");
		else if (strcmp(data, want) != 0)
			r = err_set(EXIT_USAGE, "--resume: joblog '%s' was written for another command or "
			    "other inputs (see %s); run without --resume or use another joblog", j->path, side);
	}
	free(data);
	return r;
}

static int
write_identity(const struct journal *j)
{
	const char *side = j->side;
	char *data = NULL, want[64];
	size_t len;
	int r = 0;

	if (j->identity == 0)
		return 0;
	identity_line(j->identity, want, sizeof want);
	if (read_file_max(side, 4096, &data, &len) < 0 || strcmp(data, want) != 0)
		r = write_file_atomic(side, want, strlen(want), 0644);
	if (r == 0)
		err_clear();
	free(data);
	return r;
}

int
journal_check(struct journal *j, const struct joblog_desc *d, int resume, int resume_failed,
    uint64_t identity)
{
	memset(j, 0, sizeof *j);
	j->fd = -1;
	j->keep = -1;
	j->resume = resume || resume_failed;
	j->resume_failed = resume_failed;
	j->identity = identity;
	if (!d || d->kind == JOBLOG_NONE)
		return 0;
	j->append = d->append;
	if (d->kind == JOBLOG_STDOUT) {
		/* GNU parallel's --joblog -: the header at the start, each record after its task's output */
		if (j->resume)
			return err_set(EXIT_USAGE, "--resume needs a joblog file, not -");
		j->to_stdout = 1;
		return 0;
	}
	j->path = xstrdup(d->path);
	j->dir = xstrdup(d->dir);
	j->side = xstrdup(d->identity);
	if (load(j) < 0 || check_identity(j) < 0) {
		journal_close(j);
		return -1;
	}
	return 0;
}

/* A joblog that cannot be created for its directory: name the directory, which is what to fix. */
static int
no_dir(const struct journal *j, int e)
{
	struct stat st;

	/* a directory that is there (a dangling link's target is not; "." and "/" are): the plain error */
	if (stat(j->dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = e;
		return err_sys(EXIT_USAGE, "--joblog '%s'", j->path);
	}
	return err_set(EXIT_USAGE, "--joblog '%s': its directory '%s' %s (gpupack creates the file, "
	    "not the directories above it)", j->path, j->dir,
	    e == ENOTDIR ? "is not a directory" : "does not exist");
}

/* Open the joblog without changing it (*created: it did not exist, and now does, empty). */
static int
open_log(struct journal *j, int *created)
{
	int flags = O_RDWR | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;

	*created = 0;
	j->fd = open(j->path, flags | O_CREAT | O_EXCL, 0644);
	if (j->fd >= 0)
		*created = 1;
	else if (errno == EEXIST && (j->fd = open(j->path, flags)) < 0 && errno == ENOENT)
		j->fd = open(j->path, flags | O_CREAT, 0644); /* a link to a file not there yet */
	if (j->fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return no_dir(j, errno);
	if (j->fd < 0)
		return err_sys(EXIT_USAGE, "--joblog '%s'", j->path);
	if (fstat(j->fd, &st) < 0)
		return err_sys(EXIT_ENV, "--joblog '%s'", j->path);
	return check_regular(j->path, &st);
}

/*
 * A new run: the joblog becomes its header alone. A joblog of ours starts
 * with it already, so it is cut after it and nothing is written: that
 * cannot fail on a full disk, and the old records go only once the new
 * identity is in place.
 */
static int
restart_log(struct journal *j)
{
	size_t n = strlen(HEADER);
	char head[sizeof HEADER];

	if (pread(j->fd, head, n, 0) == (ssize_t)n && memcmp(head, HEADER, n) == 0)
		return ftruncate(j->fd, (off_t)n) < 0 ? err_sys(EXIT_ENV, "--joblog '%s'", j->path) : 0;
	if (ftruncate(j->fd, 0) < 0)
		return err_sys(EXIT_ENV, "--joblog '%s'", j->path);
	return 1;
}

int
journal_begin(struct journal *j)
{
	struct stat st;
	int created, header;

	if (j->to_stdout) {
		/* the header is all: stdout may be a pipe or a terminal, nothing to cut or sync */
		if (write_all(1, HEADER, strlen(HEADER)) < 0 && errno != EPIPE)
			return err_sys(EXIT_ENV, "--joblog -");
		return 0;
	}
	if (!j->path || j->fd >= 0)
		return 0;
	/* what can fail without changing anything first: the open, then the identity beside it */
	if (open_log(j, &created) < 0 || write_identity(j) < 0) {
		if (created)
			unlink(j->path);
		return -1;
	}
	if (fstat(j->fd, &st) < 0)
		return err_sys(EXIT_ENV, "--joblog '%s'", j->path);
	if (!j->append && !j->resume) {
		if ((header = restart_log(j)) < 0)
			return -1;
		st.st_size = header ? 0 : (off_t)strlen(HEADER);
	} else if (j->keep >= 0 && j->keep < (long long)st.st_size) {
		if (ftruncate(j->fd, (off_t)j->keep) < 0)
			return err_sys(EXIT_ENV, "--joblog '%s': cutting a torn last record", j->path);
		warnx_("--joblog '%s': cut off a torn last record (%lld bytes an interrupted write left)",
		    j->path, (long long)st.st_size - j->keep);
		st.st_size = (off_t)j->keep;
	}
	/* parallel's --joblog +FILE never writes the header, not even to a new file */
	if (st.st_size == 0 && !j->append && write_all(j->fd, HEADER, strlen(HEADER)) < 0) {
		int e = errno;

		if (ftruncate(j->fd, 0) < 0)
			errno = e;
		errno = e;
		return err_sys(EXIT_ENV, "--joblog '%s'", j->path);
	}
	return 0;
}

int
journal_open(struct journal *j, const struct joblog_desc *d, int resume, int resume_failed,
    uint64_t identity)
{
	if (journal_check(j, d, resume, resume_failed, identity) < 0)
		return -1;
	if (journal_begin(j) < 0) {
		journal_close(j);
		return -1;
	}
	return 0;
}

int
journal_skip(const struct journal *j, unsigned long long seq)
{
	size_t lo = 0, hi = j->nseen;

	if (!j->resume)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->seen[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == j->nseen || j->seen[lo].seq != seq)
		return 0;
	return j->resume_failed ? j->seen[lo].ok : 1;
}

void
journal_format(const struct joblog_rec *r, struct sbuf *b)
{
	sbuf_printf(b, "%llu\t%s\t%.3f\t%10.3f\t%llu\t%llu\t%d\t%d\t", r->seq, r->host ? r->host : ":",
	    r->start, r->runtime, r->sent, r->received, r->exitval, r->signal);
	/* newlines would split the record: parallel writes them as NUL */
	for (const char *c = r->command; *c; c++)
		sbuf_addc(b, *c == '\n' ? '\0' : *c);
	sbuf_addc(b, '\n');
}

int
journal_end(struct journal *j, const struct joblog_rec *r)
{
	struct sbuf b;
	off_t at;
	int rc = 0;

	/* no joblog, or --joblog - (the record goes with the task's output) */
	if (!j->path || j->to_stdout)
		return 0;
	if (j->broken || j->fd < 0)
		return err_set(EXIT_ENV, "--joblog '%s': not written after an earlier error", j->path);
	sbuf_init(&b);
	journal_format(r, &b);
	/* where this record starts: a write that fails half way is cut back to here */
	at = lseek(j->fd, 0, SEEK_END);
	if (at < 0 || write_all(j->fd, b.buf, b.len) < 0) {
		int e = errno;

		j->broken = 1;
		if (at >= 0 && ftruncate(j->fd, at) < 0)
			rc = err_set(EXIT_ENV, "--joblog '%s': task %llu's record: %s; and it could not be "
			    "cut back: %s (--resume cuts it)", j->path, r->seq, strerror(e), strerror(errno));
		else
			rc = err_set(EXIT_ENV, "--joblog '%s': cannot write task %llu's record: %s; --resume "
			    "runs it and the rest when there is room", j->path, r->seq, strerror(e));
	} else if (fdatasync(j->fd) < 0 && errno != EINVAL) {
		j->broken = 1;
		rc = err_sys(EXIT_ENV, "--joblog '%s': sync", j->path);
	}
	sbuf_free(&b);
	return rc;
}

void
journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	free(j->path);
	free(j->dir);
	free(j->side);
	free(j->seen);
	memset(j, 0, sizeof *j);
	j->fd = -1;
}

/* A record as --retry-failed reads it: the last of each seq decides. */
struct retry_rec {
	unsigned long long seq, order;
	char *cmd;               /* its command when it failed; NULL when it succeeded */
};

static int
retry_cmp(const void *a, const void *b)
{
	const struct retry_rec *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The command column of a record line (len bytes, no newline), as it ran. */
static char *
record_command(const char *line, size_t len)
{
	const char *cmd = line;
	size_t clen;
	char *c;

	for (int tabs = 0; tabs < 8; tabs++)
		cmd = (const char *)memchr(cmd, '\t', len - (size_t)(cmd - line)) + 1;
	clen = len - (size_t)(cmd - line);
	c = xstrndup(cmd, clen);
	/* the NULs parallel writes for newlines are newlines again */
	for (size_t k = 0; k < clen; k++)
		if (c[k] == '\0')
			c[k] = '\n';
	return c;
}

void
journal_failed_free(struct journal_cmd *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].cmd);
	free(v);
}

static int
read_failed(FILE *f, const char *path, struct retry_rec **recs, size_t *nrec)
{
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	ssize_t len;
	int rc = 0;

	while ((len = getline(&line, &cap, f)) > 0) {
		unsigned long long seq;
		int ev, sig;

		if ((size_t)len > JOURNAL_MAX_LINE) {
			rc = err_set(EXIT_USAGE, "--retry-failed: joblog '%s': a line longer than %u MiB",
			    path, JOURNAL_MAX_LINE >> 20);
			break;
		}
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (journal_parse_line(line, &seq, &ev, &sig) < 0)
			continue;
		if (*nrec >= JOURNAL_MAX_RECORDS) {
			rc = err_set(EXIT_USAGE, "--retry-failed: joblog '%s': more than %u records", path,
			    JOURNAL_MAX_RECORDS);
			break;
		}
		xgrow(recs, &rcap, *nrec + 1, sizeof **recs);
		(*recs)[*nrec] = (struct retry_rec){seq, *nrec,
		    ev == 0 && sig == 0 ? NULL : record_command(line, (size_t)len)};
		(*nrec)++;
	}
	free(line);
	return rc;
}

int
journal_failed(const char *path, struct journal_cmd **out, size_t *nout)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct retry_rec *recs = NULL;
	size_t nrec = 0, n = 0;
	struct stat st;
	FILE *f;
	int rc;

	*out = NULL;
	*nout = 0;
	if (fd < 0)
		return err_sys(EXIT_USAGE, "--retry-failed: joblog '%s'", path);
	/* what --resume refuses is refused here too: a FIFO or a device is no joblog */
	if (fstat(fd, &st) < 0 || check_regular(path, &st) < 0 || !(f = fdopen(fd, "r"))) {
		close(fd);
		return err_prefix("--retry-failed");
	}
	rc = read_failed(f, path, &recs, &nrec);
	fclose(f);
	if (nrec > 1)
		qsort(recs, nrec, sizeof *recs, retry_cmp);
	/* the last record of each seq decides; the failed ones run again */
	*out = xcalloc(nrec + 1, sizeof **out);
	for (size_t i = 0; i < nrec; i++) {
		if (rc == 0 && (i + 1 == nrec || recs[i + 1].seq != recs[i].seq) && recs[i].cmd) {
			(*out)[n++] = (struct journal_cmd){recs[i].seq, recs[i].cmd};
			continue;
		}
		free(recs[i].cmd);
	}
	free(recs);
	*nout = n;
	if (rc < 0) {
		journal_failed_free(*out, n);
		*out = NULL;
		*nout = 0;
	}
	return rc;
}

/* ---- Seqs kept by what they are, not by how large ------------------------ */

static size_t
seq_hash(unsigned long long seq, size_t cap)
{
	/* splitmix64's finaliser: Seqs in a row spread over the table */
	seq ^= seq >> 30;
	seq *= 0xbf58476d1ce4e5b9ULL;
	seq ^= seq >> 27;
	seq *= 0x94d049bb133111ebULL;
	seq ^= seq >> 31;
	return (size_t)seq & (cap - 1);
}

static struct seqmap_slot *
seqmap_find(const struct seqmap *m, unsigned long long seq)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = seq_hash(seq, m->cap); m->slot[i].seq != 0; i = (i + 1) & (m->cap - 1))
		if (m->slot[i].seq == seq)
			return &m->slot[i];
	return &m->slot[i];
}

unsigned long long *
seqmap_get(const struct seqmap *m, unsigned long long seq)
{
	struct seqmap_slot *s = seqmap_find(m, seq);

	return s && s->seq == seq && seq != 0 ? &s->val : NULL;
}

static void
seqmap_grow(struct seqmap *m)
{
	struct seqmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slot = xcalloc(m->cap, sizeof *m->slot);
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].seq != 0)
			*seqmap_put(m, old.slot[i].seq) = old.slot[i].val;
	free(old.slot);
}

unsigned long long *
seqmap_put(struct seqmap *m, unsigned long long seq)
{
	struct seqmap_slot *s;

	if ((m->n + 1) * 2 > m->cap)
		seqmap_grow(m);
	s = seqmap_find(m, seq);
	if (s->seq != seq) {
		s->seq = seq;
		s->val = 0;
		m->n++;
	}
	return &s->val;
}

void
seqmap_free(struct seqmap *m)
{
	free(m->slot);
	memset(m, 0, sizeof *m);
}
