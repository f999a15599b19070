/*
 * remember: one small file per key under the state directory's auto/,
 * written whole through a rename and read through a descriptor that is
 * checked before a byte of it is trusted:
 *   gpupack-auto 2 KEY COUNT MILLICORES_START MILLICORES_RUN FOOTPRINTS
 * FOOTPRINTS: "-", or up to REMEMBER_FP sizes in MiB, ascending, comma
 * separated. Version 1 ("gpupack-auto 1 KEY COUNT") is still read.
 */
#include "farm/remember.h"
#include "farm/journal.h"
#include "util/err.h"
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REMEMBER_MAX_COUNT 100000
#define REMEMBER_MAX_MILLICORES 1000000
#define REMEMBER_MAX_MIB (1ull << 24)
#define REMEMBER_FILE_MAX 512

uint64_t
remember_key(uint64_t identity, int share, int energy, const char *device, int mig_slices)
{
	char tail[64];
	uint64_t h = journal_hash(identity, device, strlen(device) + 1);

	/* the plain goal keeps version 1's key: its counts stay good */
	if (energy)
		snprintf(tail, sizeof tail, "share=%d slices=%d goal=energy", share, mig_slices);
	else
		snprintf(tail, sizeof tail, "share=%d slices=%d", share, mig_slices);
	return journal_hash(h, tail, strlen(tail));
}

static void
path_of(const char *dir, uint64_t key, char *out, size_t size)
{
	snprintf(out, size, "%s/%016" PRIx64, dir, key);
}

/* Digits at *p up to a byte in stop (not past end), in 0..max: 0 and *v, advancing *p; -1 otherwise. */
static int
number(const char **p, const char *end, const char *stop, unsigned long long max, unsigned long long *v)
{
	const char *q = *p;

	*v = 0;
	if (q >= end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		*v = *v * 10 + (unsigned long long)(*q - '0');
		if (*v > max)
			return -1;
	}
	if (q >= end || !strchr(stop, *q))
		return -1;
	*p = q;
	return 0;
}

/* The footprints at p, up to the newline at end. */
static int
parse_fp(const char *p, const char *end, struct remembered *r)
{
	unsigned long long v;

	if (end - p == 1 && *p == '-')
		return 0;
	for (;;) {
		if (r->nfp >= REMEMBER_FP || number(&p, end + 1, ",\n", REMEMBER_MAX_MIB, &v) < 0 || v == 0 ||
		    (r->nfp > 0 && v << 20 < r->fp[r->nfp - 1]))
			return -1;
		r->fp[r->nfp++] = v << 20;
		if (p >= end)
			return 0;
		p++;
	}
}

int
remember_parse(const char *text, size_t n, uint64_t key, struct remembered *r)
{
	char want[40];
	const char *p, *end = text + n;
	unsigned long long count, cs, cr;
	size_t k;
	int v2;

	memset(r, 0, sizeof *r);
	if (n > REMEMBER_FILE_MAX || n < 2 || text[n - 1] != '\n')
		return err_set(EXIT_ENV, "corrupt");
	snprintf(want, sizeof want, "gpupack-auto 2 %016" PRIx64 " ", key);
	k = strlen(want);
	v2 = n > k && memcmp(text, want, k) == 0;
	if (!v2) {
		snprintf(want, sizeof want, "gpupack-auto 1 %016" PRIx64 " ", key);
		if (n <= k || memcmp(text, want, k) != 0)
			return err_set(EXIT_ENV, "not a remembered count of this command");
	}
	p = text + k;
	/* the newline is the last byte: nothing may follow it */
	if (number(&p, end, v2 ? " " : "\n", REMEMBER_MAX_COUNT, &count) < 0 || count < 1 ||
	    memchr(text, '\n', n - 1))
		return err_set(EXIT_ENV, "corrupt");
	r->count = (int)count;
	if (!v2)
		return 0;
	/* each number stops at the space before the next field */
	p++;
	if (number(&p, end, " ", REMEMBER_MAX_MILLICORES, &cs) < 0)
		goto corrupt;
	p++;
	if (number(&p, end, " ", REMEMBER_MAX_MILLICORES, &cr) < 0)
		goto corrupt;
	p++;
	if (parse_fp(p, end - 1, r) < 0)
		goto corrupt;
	r->cores_start = (double)cs / 1000.0;
	r->cores_run = (double)cr / 1000.0;
	return 0;
corrupt:
	memset(r, 0, sizeof *r);
	return err_set(EXIT_ENV, "corrupt");
}

size_t
remember_format(uint64_t key, const struct remembered *r, char *out, size_t size)
{
	int n = snprintf(out, size, "gpupack-auto 2 %016" PRIx64 " %d %llu %llu ", key, r->count,
	    (unsigned long long)(r->cores_start * 1000.0 + 0.5), (unsigned long long)(r->cores_run * 1000.0 + 0.5));

	for (int i = 0; i < r->nfp && n > 0 && (size_t)n < size; i++)
		n += snprintf(out + n, size - (size_t)n, "%s%llu", i ? "," : "",
		    (unsigned long long)((r->fp[i] + (1u << 20) - 1) >> 20));
	if (n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, "%s\n", r->nfp ? "" : "-");
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

int
remember_load(uint64_t key, struct remembered *r)
{
	char dir[4096], path[4200], text[REMEMBER_FILE_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd;

	/* nothing to remember from: no state directory yet is no error */
	if (!state_exists("auto"))
		return 0;
	if (state_dir("auto", dir, sizeof dir) < 0) {
		warnx_("ignoring remembered counts: %s", err_msg());
		err_clear();
		return 0;
	}
	path_of(dir, key, path, sizeof path);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			warnx_("ignoring the remembered count %s: %s", path, strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		warnx_("ignoring the remembered count %s: not a regular file", path);
		goto no;
	}
	if (st.st_uid != geteuid()) {
		warnx_("ignoring the remembered count %s: owned by uid %ld, not by you", path,
		    (long)st.st_uid);
		goto no;
	}
	if (st.st_mtime < time(NULL) - (time_t)REMEMBER_DAYS * 86400) {
		warnx_("ignoring the remembered count %s: older than %d days", path, REMEMBER_DAYS);
		goto no;
	}
	n = read(fd, text, sizeof text);
	if (n < 0 || remember_parse(text, (size_t)(n < 0 ? 0 : n), key, r) < 0) {
		warnx_("ignoring the remembered count %s: %s", path, n < 0 ? strerror(errno) : err_msg());
		err_clear();
		goto no;
	}
	close(fd);
	return 1;
no:
	close(fd);
	return 0;
}

void
remember_store(uint64_t key, const struct remembered *r)
{
	char dir[4096], path[4200], text[REMEMBER_FILE_MAX];
	size_t n;

	if (state_dir("auto", dir, sizeof dir) < 0) {
		warnx_("not remembering the count: %s", err_msg());
		err_clear();
		return;
	}
	path_of(dir, key, path, sizeof path);
	n = remember_format(key, r, text, sizeof text);
	if (n == 0 || write_file_atomic(path, text, n, 0600) < 0) {
		warnx_("not remembering the count: %s", err_msg());
		err_clear();
	}
}
