/*
 * proc: /proc/PID/stat and /proc/PID/environ read safely (bounded, the
 * command name parsed from its last ')' since it may hold spaces and
 * parentheses), and the walk over one's own processes that finding a killed
 * run's leftovers needs.
 */
#include "util/proc.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* environ of a process may be as long as its arguments allowed */
#define ENV_MAX (8u << 20)

int
proc_parse_stat(const char *text, struct proc_stat *st)
{
	const char *p = strrchr(text, ')');
	unsigned long long v[20];
	char *end;
	long pid;

	memset(st, 0, sizeof *st);
	pid = strtol(text, &end, 10);
	if (!p || end == text || *end != ' ' || pid <= 0 || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	st->pid = (pid_t)pid;
	st->state = p[2];
	p += 4;
	/* fields 4 (ppid) .. 22 (starttime), counted from 1 */
	for (int i = 0; i < 19; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (end == p || errno || (*end != ' ' && *end != '\n' && *end != '\0'))
			return -1;
		p = end;
		while (*p == ' ')
			p++;
	}
	st->ppid = (pid_t)v[0];
	st->pgid = (pid_t)v[1];
	st->start = v[18];
	return st->start > 0 ? 0 : -1;
}

int
proc_stat(pid_t pid, struct proc_stat *st)
{
	char path[64], *data = NULL;
	int rc;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_file_max(path, 4096, &data, NULL) < 0) {
		err_clear();
		return -1;
	}
	rc = proc_parse_stat(data, st);
	free(data);
	/* a zombie (Z) or dead (X) process runs nothing: it counts as gone */
	if (rc == 0 && (st->state == 'Z' || st->state == 'X' || st->pid != pid))
		rc = -1;
	return rc;
}

unsigned long long
proc_start_time(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) == 0 ? st.start : 0;
}

int
proc_is(pid_t pid, unsigned long long start)
{
	return start != 0 && proc_start_time(pid) == start;
}

int
proc_has_env(pid_t pid, const char *entry)
{
	char path[64], *data = NULL;
	size_t len = 0, n = strlen(entry);
	int hit = 0;

	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	if (read_file_max(path, ENV_MAX, &data, &len) < 0) {
		err_clear();
		return 0;
	}
	for (size_t off = 0; off < len && !hit; off += strlen(data + off) + 1)
		hit = strncmp(data + off, entry, n) == 0 && data[off + n] == '\0';
	free(data);
	return hit;
}

int
proc_env_unknown(const struct proc_stat *st)
{
	char path[64], *data = NULL;
	size_t len = 0;

	if (st->state == 'Z' || st->pid == 2 || st->ppid == 2 || st->pid == getpid())
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/environ", (long)st->pid);
	if (read_file_max(path, ENV_MAX, &data, &len) < 0) {
		err_clear();
		/* gone meanwhile: nothing to tell */
		return proc_start_time(st->pid) != 0;
	}
	free(data);
	return len == 0;
}

void
proc_boot_id(char *out, size_t size)
{
	char *data = NULL;

	str_copy(out, "", size);
	if (read_file_max("/proc/sys/kernel/random/boot_id", 256, &data, NULL) < 0) {
		err_clear();
		return;
	}
	str_copy(out, str_trim(data), size);
	free(data);
}

int
proc_each(int (*fn)(const struct proc_stat *st, void *arg), void *arg)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!dir)
		return err_sys(EXIT_ENV, "cannot read /proc");
	while ((e = readdir(dir)) != NULL) {
		struct proc_stat st;
		struct stat ps;
		char *end;
		long pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		/* ours only: another user's processes are never touched */
		if (fstatat(dirfd(dir), e->d_name, &ps, 0) < 0 || ps.st_uid != getuid())
			continue;
		if (proc_stat((pid_t)pid, &st) < 0)
			continue;
		n++;
		if (fn(&st, arg))
			break;
	}
	closedir(dir);
	return n;
}
