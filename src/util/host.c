/*
 * host: /proc/stat and /proc/meminfo, read whole (each is a few KiB) and
 * parsed for the two lines that matter.
 */
#include "util/host.h"
#include "util/err.h"
#include "util/fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
proc_read(const char *name, char **data)
{
	const char *dir = getenv("GPUPACK_PROC_DIR");
	char path[4096];
	size_t len;

	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/proc", name);
	return read_file(path, data, &len);
}

int
host_cpu_read(struct host_cpu *c)
{
	unsigned long long v[10] = {0};
	char *data, *p;
	int n;

	memset(c, 0, sizeof *c);
	if (proc_read("stat", &data) < 0)
		return -1;
	/* "cpu  user nice system idle iowait irq softirq steal guest guest_nice" */
	n = strncmp(data, "cpu ", 4) == 0 ? sscanf(data + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
	    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;
	if (n < 4) {
		free(data);
		return err_set(EXIT_ENV, "/proc/stat: no cpu line");
	}
	/* guest time is already in user and nice: not added again */
	c->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	c->total = c->busy + v[3] + v[4];
	for (p = strstr(data, "\ncpu"); p; p = strstr(p + 1, "\ncpu"))
		if (p[4] >= '0' && p[4] <= '9')
			c->ncpu++;
	free(data);
	return 0;
}

double
host_cpu_busy(const struct host_cpu *a, const struct host_cpu *b)
{
	unsigned long long dt, db;

	if (b->total <= a->total || b->busy < a->busy)
		return -1;
	dt = b->total - a->total;
	db = b->busy - a->busy;
	return db >= dt ? 1.0 : (double)db / (double)dt;
}

int
host_mem_available(uint64_t *bytes)
{
	char *data, *p;
	unsigned long long kib;

	if (proc_read("meminfo", &data) < 0)
		return -1;
	p = strstr(data, "MemAvailable:");
	if (!p || sscanf(p + 13, "%llu", &kib) != 1) {
		free(data);
		return err_set(EXIT_ENV, "/proc/meminfo: no MemAvailable line");
	}
	free(data);
	*bytes = (uint64_t)kib * 1024;
	return 0;
}

pid_t
host_pgid(pid_t pid)
{
	char path[64], buf[512], *p;
	long pgrp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...": comm may hold anything, so after the last ')' */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %*d %ld", &pgrp) != 1)
		return -1;
	return (pid_t)pgrp;
}
