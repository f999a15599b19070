/*
 * remember: one small file per key under the state directory's auto/,
 * "gpupack-auto 1 <key> <count>\n", written whole through a rename and read
 * through a descriptor that is checked before a byte of it is trusted.
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
#define REMEMBER_FILE_MAX 128

uint64_t
remember_key(uint64_t identity, int share, const char *device, int mig_slices)
{
	char tail[64];
	uint64_t h = journal_hash(identity, device, strlen(device) + 1);

	snprintf(tail, sizeof tail, "share=%d slices=%d", share, mig_slices);
	return journal_hash(h, tail, strlen(tail));
}

static void
path_of(const char *dir, uint64_t key, char *out, size_t size)
{
	snprintf(out, size, "%s/%016" PRIx64, dir, key);
}

int
remember_parse(const char *text, size_t n, uint64_t key, int *count)
{
	char want[40];
	size_t k;
	long v = 0;

	snprintf(want, sizeof want, "gpupack-auto 1 %016" PRIx64 " ", key);
	k = strlen(want);
	if (n > REMEMBER_FILE_MAX || n < k + 2 || memcmp(text, want, k) != 0)
		return err_set(EXIT_ENV, "not a remembered count of this command");
	/* digits, then one newline, then nothing */
	for (; k < n - 1; k++) {
		if (text[k] < '0' || text[k] > '9' || v > REMEMBER_MAX_COUNT)
			return err_set(EXIT_ENV, "corrupt");
		v = v * 10 + (text[k] - '0');
	}
	if (text[n - 1] != '\n' || v < 1 || v > REMEMBER_MAX_COUNT)
		return err_set(EXIT_ENV, "corrupt");
	*count = (int)v;
	return 0;
}

int
remember_load(uint64_t key, int *count)
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
	if (n < 0 || remember_parse(text, (size_t)(n < 0 ? 0 : n), key, count) < 0) {
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
remember_store(uint64_t key, int count)
{
	char dir[4096], path[4200], text[REMEMBER_FILE_MAX];
	int n;

	if (state_dir("auto", dir, sizeof dir) < 0) {
		warnx_("not remembering the count: %s", err_msg());
		err_clear();
		return;
	}
	path_of(dir, key, path, sizeof path);
	n = snprintf(text, sizeof text, "gpupack-auto 1 %016" PRIx64 " %d\n", key, count);
	if (write_file_atomic(path, text, (size_t)n, 0600) < 0) {
		warnx_("not remembering the count: %s", err_msg());
		err_clear();
	}
}
