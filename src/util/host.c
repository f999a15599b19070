/*
 * host: /proc/stat and /proc/meminfo, read whole (each is a few KiB) and
 * parsed for the two lines that matter; a process tree's CPU time from
 * /proc/PID/stat, schedstat and task/PID/children.
 */
#include "util/host.h"
#include "util/err.h"
#include "util/fs.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
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
host_cpu_parse(const char *data, const cpu_set_t *mask, struct host_cpu *c)
{
	unsigned long long v[10] = {0}, busy = 0, total = 0;
	const char *p;
	int n, listed = 0, mine = 0, cpu;

	memset(c, 0, sizeof *c);
	/* "cpu  user nice system idle iowait irq softirq steal guest guest_nice" */
	n = strncmp(data, "cpu ", 4) == 0 ? sscanf(data + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
	    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;
	if (n < 4)
		return err_set(EXIT_ENV, "/proc/stat: no cpu line");
	/* guest time is already in user and nice: not added again */
	c->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	c->total = c->busy + v[3] + v[4];
	for (p = strstr(data, "\ncpu"); p; p = strstr(p + 1, "\ncpu")) {
		if (p[4] < '0' || p[4] > '9')
			continue;
		listed++;
		memset(v, 0, sizeof v);
		if (sscanf(p + 4, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
		    &v[4], &v[5], &v[6], &v[7]) < 5 || !mask || cpu < 0 || cpu >= CPU_SETSIZE ||
		    !CPU_ISSET(cpu, mask))
			continue;
		mine++;
		busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		total += v[0] + v[1] + v[2] + v[5] + v[6] + v[7] + v[3] + v[4];
	}
	c->ncpu = listed;
	/* allowed fewer CPUs than the machine has (taskset, a Slurm job's cpuset): those are the host */
	if (mask && mine > 0 && mine < listed) {
		c->busy = busy;
		c->total = total;
		c->ncpu = mine;
	}
	return 0;
}

int
host_cpu_read(struct host_cpu *c)
{
	const char *dir = getenv("GPUPACK_PROC_DIR");
	cpu_set_t mask;
	char *data;
	int rc, real = !dir || !*dir;

	memset(c, 0, sizeof *c);
	if (proc_read("stat", &data) < 0)
		return -1;
	/* the CPUs this process may run on (the simulated host of the tests: all it lists) */
	rc = host_cpu_parse(data, real && sched_getaffinity(0, sizeof mask, &mask) == 0 ? &mask : NULL, c);
	free(data);
	return rc;
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

/* Descendants followed at most, and how deep: a task's tree is small; a fork bomb's is not read whole. */
#define TREE_MAX 64
#define TREE_DEPTH 4

/* A small /proc file into buf (NUL-terminated); its length, or -1. */
static ssize_t
small_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

struct tree {
	const char *root;
	int seen;
	unsigned long long ticks, wait_ns;
	int wait_ok;
	pid_t pids[TREE_MAX];     /* the processes seen */
};

static int
tree_add(struct tree *t, pid_t pid, int depth)
{
	char path[4200], buf[4096], *p, *end;
	unsigned long long ut, st, cpu_ns, wait_ns;
	long long cut, cst;

	if (t->seen >= TREE_MAX)
		return 0;
	t->pids[t->seen++] = pid;
	snprintf(path, sizeof path, "%s/%ld/stat", t->root, (long)pid);
	/* "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime" */
	if (small_read(path, buf, sizeof buf) <= 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ut, &st, &cut,
	    &cst) != 4)
		return -1;
	t->ticks += ut + st + (unsigned long long)(cut > 0 ? cut : 0) + (unsigned long long)(cst > 0 ? cst : 0);
	snprintf(path, sizeof path, "%s/%ld/schedstat", t->root, (long)pid);
	if (small_read(path, buf, sizeof buf) > 0 && sscanf(buf, "%llu %llu", &cpu_ns, &wait_ns) == 2)
		t->wait_ns += wait_ns;
	else
		t->wait_ok = 0;
	if (depth >= TREE_DEPTH)
		return 0;
	snprintf(path, sizeof path, "%s/%ld/task/%ld/children", t->root, (long)pid, (long)pid);
	if (small_read(path, buf, sizeof buf) <= 0)
		return 0;
	for (p = buf; *p; p = end) {
		long child = strtol(p, &end, 10);

		if (end == p)
			break;
		/* a child gone meanwhile is counted in our cutime once waited for */
		if (child > 0)
			(void)tree_add(t, (pid_t)child, depth + 1);
	}
	return 0;
}

int
host_task_cpu(pid_t pid, double *cpu, double *wait)
{
	const char *dir = getenv("GPUPACK_PROC_DIR");
	struct tree t = {dir && *dir ? dir : "/proc", 0, 0, 0, 1, {0}};
	long hz = sysconf(_SC_CLK_TCK);

	*cpu = *wait = -1;
	if (pid <= 0 || tree_add(&t, pid, 0) < 0)
		return -1;
	*cpu = (double)t.ticks / (double)(hz > 0 ? hz : 100);
	if (t.wait_ok)
		*wait = (double)t.wait_ns / 1e9;
	return 0;
}

int
host_tree_locks(pid_t pid)
{
	struct tree t = {"/proc", 0, 0, 0, 1, {0}};
	char *data, *line, *save = NULL;
	int held = 0;

	if (tree_add(&t, pid, 0) < 0)
		return 0;
	if (read_file("/proc/locks", &data, NULL) < 0) {
		err_clear();
		return -1;
	}
	/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5 0 EOF"; a waiter's line has "->" after the number */
	for (line = strtok_r(data, "\n", &save); line && !held; line = strtok_r(NULL, "\n", &save)) {
		long owner;

		if (strstr(line, "->") || sscanf(line, "%*d: %*s %*s %*s %ld", &owner) != 1)
			continue;
		for (int i = 0; i < t.seen && !held; i++)
			held = owner == (long)t.pids[i];
	}
	free(data);
	return held;
}

/* Is every process of the tree stopped ('T', 't'; gone counts as stopped)? */
static int
all_stopped(const struct tree *t)
{
	for (int i = 0; i < t->seen; i++) {
		char path[64], buf[1024], *p;

		snprintf(path, sizeof path, "/proc/%ld/stat", (long)t->pids[i]);
		if (small_read(path, buf, sizeof buf) <= 0)
			continue;
		if ((p = strrchr(buf, ')')) && p[1] == ' ' && p[2] != 'T' && p[2] != 't' && p[2] != 'Z' &&
		    p[2] != 'X')
			return 0;
	}
	return 1;
}

int
host_tree_stopped(pid_t pid, double timeout)
{
	struct tree t = {"/proc", 0, 0, 0, 1, {0}};
	struct timespec pause = {0, 200000};

	if (tree_add(&t, pid, 0) < 0)
		return 1;
	for (double waited = 0; waited <= timeout; waited += 0.0002) {
		if (all_stopped(&t))
			return 1;
		nanosleep(&pause, NULL);
	}
	return 0;
}
