/*
 * journal: the joblog as GNU parallel writes it, made durable per line.
 * Only a task's final attempt gets a line (as parallel does with
 * --retries), so each task ends exactly once in the file.
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
	if (parse_int_field(f[0], len[0], &v) < 0 || v < 1)
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

static void
set_bit(struct journal *j, uint8_t **bits, unsigned long long seq, int on)
{
	size_t byte = (size_t)(seq / 8);

	if (byte >= j->nbits / 8) {
		size_t n = j->nbits ? j->nbits / 8 : 1024;

		while (n <= byte)
			n *= 2;
		j->seen = xrealloc(j->seen, n);
		j->ok = xrealloc(j->ok, n);
		memset(j->seen + j->nbits / 8, 0, n - j->nbits / 8);
		memset(j->ok + j->nbits / 8, 0, n - j->nbits / 8);
		j->nbits = n * 8;
	}
	if (on)
		(*bits)[byte] |= (uint8_t)(1u << (seq % 8));
	else
		(*bits)[byte] &= (uint8_t)~(1u << (seq % 8));
}

static int
get_bit(const uint8_t *bits, size_t nbits, unsigned long long seq)
{
	return seq < nbits && (bits[seq / 8] >> (seq % 8) & 1);
}

static int
load(struct journal *j, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return errno == ENOENT ? 0 : err_sys(EXIT_USAGE, "--joblog '%s'", path);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long seq;
		int ev, sig;

		if (journal_parse_line(line, &seq, &ev, &sig) < 0)
			continue;
		set_bit(j, &j->seen, seq, 1);
		set_bit(j, &j->ok, seq, ev == 0 && sig == 0);
	}
	free(line);
	fclose(f);
	return 0;
}

/* FILE.gpupack: which command and inputs wrote this joblog. */
static int
check_identity(const char *path, int resume, uint64_t id)
{
	char *side = xasprintf("%s.gpupack", path), *data = NULL, want[64];
	size_t len;
	int r = 0;

	if (id == 0) {
		/* --retry-failed runs the joblog's own lines: nothing to check or record */
		free(side);
		return 0;
	}
	snprintf(want, sizeof want, "gpupack-run %016" PRIx64 "\n", id);
	if (resume && access(side, F_OK) == 0) {
		if (read_file(side, &data, &len) < 0)
			r = -1;
		else if (strcmp(data, want) != 0)
			r = err_set(EXIT_USAGE, "--resume: joblog '%s' was written for another command or "
			    "other inputs (see %s); run without --resume or use another joblog", path, side);
	}
	if (r == 0 && (!data || strcmp(data, want) != 0))
		r = write_file_atomic(side, want, strlen(want), 0644);
	free(data);
	free(side);
	return r;
}

static int
open_log(struct journal *j, const char *path, int append, uint64_t identity)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;

	if (j->resume && load(j, path) < 0)
		return -1;
	if (check_identity(path, j->resume, identity) < 0)
		return -1;
	if (!append && !j->resume)
		flags |= O_TRUNC;
	j->fd = open(path, flags, 0644);
	if (j->fd < 0)
		return err_sys(EXIT_USAGE, "--joblog '%s'", path);
	j->path = xstrdup(path);
	if (lseek(j->fd, 0, SEEK_END) == 0 &&
	    write(j->fd, HEADER, strlen(HEADER)) != (ssize_t)strlen(HEADER))
		return err_sys(EXIT_ENV, "--joblog '%s'", path);
	return 0;
}

int
journal_open(struct journal *j, const char *path, int append, int resume, int resume_failed,
    uint64_t identity)
{
	memset(j, 0, sizeof *j);
	j->fd = -1;
	j->resume = resume || resume_failed;
	j->resume_failed = resume_failed;
	if (!path)
		return 0;
	if (strcmp(path, "-") == 0) {
		/* GNU parallel's --joblog -: the header now, each record after its task's output */
		if (j->resume)
			return err_set(EXIT_USAGE, "--resume needs a joblog file, not -");
		j->to_stdout = 1;
		if (write(1, HEADER, strlen(HEADER)) < 0)
			return 0;
		return 0;
	}
	if (open_log(j, path, append, identity) < 0) {
		journal_close(j);
		return -1;
	}
	return 0;
}

int
journal_skip(const struct journal *j, unsigned long long seq)
{
	if (!j->resume)
		return 0;
	if (j->resume_failed)
		return get_bit(j->ok, j->nbits, seq);
	return get_bit(j->seen, j->nbits, seq);
}

void
journal_format(const struct joblog_rec *r, struct sbuf *b)
{
	sbuf_printf(b, "%llu\t%s\t%.3f\t%10.3f\t0\t%llu\t%d\t%d\t", r->seq, r->host ? r->host : ":",
	    r->start, r->runtime, r->received, r->exitval, r->signal);
	/* newlines would split the record: parallel writes them as NUL */
	for (const char *c = r->command; *c; c++)
		sbuf_addc(b, *c == '\n' ? '\0' : *c);
	sbuf_addc(b, '\n');
}

int
journal_end(struct journal *j, const struct joblog_rec *r)
{
	struct sbuf b;
	ssize_t w;

	if (j->fd < 0)
		return 0;
	sbuf_init(&b);
	journal_format(r, &b);
	w = write(j->fd, b.buf, b.len);
	sbuf_free(&b);
	if (w < 0)
		return err_sys(EXIT_ENV, "--joblog '%s'", j->path);
	if (fdatasync(j->fd) < 0 && errno != EINVAL)
		return err_sys(EXIT_ENV, "--joblog '%s': sync", j->path);
	return 0;
}

void
journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	free(j->path);
	free(j->seen);
	free(j->ok);
	memset(j, 0, sizeof *j);
	j->fd = -1;
}

int
journal_commands(const char *path, char ***cmds, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, **v = NULL;
	size_t cap = 0, vcap = 0, nv = 0;
	ssize_t len;

	*cmds = NULL;
	*n = 0;
	if (!f)
		return err_sys(EXIT_USAGE, "--retry-failed: joblog '%s'", path);
	while ((len = getline(&line, &cap, f)) > 0) {
		unsigned long long seq;
		int ev, sig;
		const char *cmd = line;

		if (journal_parse_line(line, &seq, &ev, &sig) < 0 || seq > 100000000ULL)
			continue;
		for (int tabs = 0; tabs < 8; tabs++)
			cmd = strchr(cmd, '\t') + 1;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		while (nv < seq) {
			xgrow(&v, &vcap, nv + 1, sizeof *v);
			v[nv++] = xstrdup("");
		}
		free(v[seq - 1]);
		if (ev == 0 && sig == 0) {
			v[seq - 1] = xstrdup("true");
		} else {
			/* the command as it ran: the NULs parallel writes for newlines are newlines again */
			size_t clen = (size_t)(line + len - cmd);
			char *c = xstrndup(cmd, clen);

			for (size_t k = 0; k < clen; k++)
				if (c[k] == '\0')
					c[k] = '\n';
			v[seq - 1] = c;
		}
	}
	free(line);
	fclose(f);
	*cmds = v;
	*n = nv;
	return 0;
}
