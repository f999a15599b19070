/*
 * fakedev: a simulated GPU that concurrent fake tasks share, for the tests
 * of -j auto. fake-work's farm mode runs the tasks; the fake NVML
 * (tests/fakenvml/, with FAKENVML_DEVICE) reports the same device, so the
 * controller sees signals that answer to the count it chose.
 *
 * The device lives in a directory ($FAKE_DEVICE):
 *   config     written by the test, key=value lines:
 *     curve=1:1,4:3.6,8:2   speed of k tasks on the GPU together, in work units
 *                           per second (linear between points, flat past the last)
 *     sm=1:0.25,4:1         SM activity for k (default: speed(k) / the top speed)
 *     task_mib=600          device memory a task takes when it reaches the GPU
 *     dev_mib=81920         the device's memory; a task that does not fit fails
 *                           with CUDA's out-of-memory message
 *     start_ms=200          start-up before the GPU, at full speed of one CPU
 *     start_cpu=1 gpu_cpu=0.1   CPUs a task keeps busy in each phase
 *     ncpu=16               the simulated host's CPUs (start-up slows when the
 *                           tasks want more)
 *     host_mib=65536 host_task_mib=100   the host's memory and each task's
 *     idle_w=70 busy_w=700  the device's power idle and with its SMs all busy
 *                           (the fake NVML's energy counter)
 *   state      the tasks ("task PID PHASE MIB"), the host's CPU time so far
 *              (clock ticks) and the GPU's SM activity and busy time integrated
 *              over time ("t T_LAST BUSY TOTAL T_WRITTEN SM_INT BUSY_INT"), read
 *              and written under flock; the fake NVML averages the integrals
 *              between its readings, as the driver averages over its period
 *   proc/stat, proc/meminfo   the simulated host, in /proc's formats, for
 *              gpupack's $GPUPACK_PROC_DIR
 * A task whose process is gone is dropped at the next read.
 */
#ifndef GPUPACK_TESTS_FAKEDEV_H
#define GPUPACK_TESTS_FAKEDEV_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define FAKEDEV_TASKS 512
#define FAKEDEV_POINTS 16

struct fakedev_conf {
	int nspeed, nsm;
	int speed_k[FAKEDEV_POINTS], sm_k[FAKEDEV_POINTS];
	double speed[FAKEDEV_POINTS], sm[FAKEDEV_POINTS];
	double task_mib, dev_mib, start_ms, start_cpu, gpu_cpu, host_mib, host_task_mib, idle_w, busy_w;
	int ncpu;
};

struct fakedev_task {
	int pid, phase;            /* phase 0: start-up, 1: on the GPU */
	double mib;
};

struct fakedev_state {
	double t_last, busy, total, t_written;
	double sm_int, busy_int;   /* integrals over time of SM activity and of "a task on the GPU" */
	int n;
	struct fakedev_task task[FAKEDEV_TASKS];
};

static inline double
fakedev_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "1:1,4:3.6,8:2" into points; the count, or -1. */
static inline int
fakedev_points(const char *s, int *k, double *v)
{
	int n = 0;

	while (*s && n < FAKEDEV_POINTS) {
		char *end;

		k[n] = (int)strtol(s, &end, 10);
		if (*end != ':')
			return -1;
		v[n] = strtod(end + 1, &end);
		n++;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return n;
}

static inline int
fakedev_conf_load(const char *dir, struct fakedev_conf *c)
{
	char path[4096], line[512];
	FILE *f;

	memset(c, 0, sizeof *c);
	c->speed_k[0] = 1;
	c->speed[0] = 1;
	c->nspeed = 1;
	c->task_mib = 600;
	c->dev_mib = 81920;
	c->start_ms = 200;
	c->start_cpu = 1;
	c->gpu_cpu = 0.1;
	c->ncpu = 16;
	c->host_mib = 65536;
	c->host_task_mib = 100;
	c->idle_w = 70;
	c->busy_w = 700;
	snprintf(path, sizeof path, "%s/config", dir);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		char *eq = strchr(line, '='), *v;

		if (!eq)
			continue;
		*eq = '\0';
		v = eq + 1;
		v[strcspn(v, "\n")] = '\0';
		if (strcmp(line, "curve") == 0)
			c->nspeed = fakedev_points(v, c->speed_k, c->speed);
		else if (strcmp(line, "sm") == 0)
			c->nsm = fakedev_points(v, c->sm_k, c->sm);
		else if (strcmp(line, "task_mib") == 0)
			c->task_mib = atof(v);
		else if (strcmp(line, "dev_mib") == 0)
			c->dev_mib = atof(v);
		else if (strcmp(line, "start_ms") == 0)
			c->start_ms = atof(v);
		else if (strcmp(line, "start_cpu") == 0)
			c->start_cpu = atof(v);
		else if (strcmp(line, "gpu_cpu") == 0)
			c->gpu_cpu = atof(v);
		else if (strcmp(line, "ncpu") == 0)
			c->ncpu = atoi(v);
		else if (strcmp(line, "host_mib") == 0)
			c->host_mib = atof(v);
		else if (strcmp(line, "host_task_mib") == 0)
			c->host_task_mib = atof(v);
		else if (strcmp(line, "idle_w") == 0)
			c->idle_w = atof(v);
		else if (strcmp(line, "busy_w") == 0)
			c->busy_w = atof(v);
	}
	fclose(f);
	return c->nspeed > 0 && c->nsm >= 0 && c->ncpu > 0 ? 0 : -1;
}

/* The piecewise-linear curve at k (0 at k <= 0, flat past either end). */
static inline double
fakedev_curve(const int *k, const double *v, int n, int x)
{
	if (x <= 0 || n <= 0)
		return 0;
	if (x <= k[0])
		return v[0] * x / k[0];
	for (int i = 1; i < n; i++)
		if (x <= k[i])
			return v[i - 1] + (v[i] - v[i - 1]) * (x - k[i - 1]) / (k[i] - k[i - 1]);
	return v[n - 1];
}

static inline double
fakedev_speed(const struct fakedev_conf *c, int k)
{
	return fakedev_curve(c->speed_k, c->speed, c->nspeed, k);
}

static inline double
fakedev_sm(const struct fakedev_conf *c, int k)
{
	double top = 0, v;

	if (c->nsm > 0) {
		v = fakedev_curve(c->sm_k, c->sm, c->nsm, k);
		return v > 1 ? 1 : v;
	}
	for (int i = 0; i < c->nspeed; i++)
		if (c->speed[i] > top)
			top = c->speed[i];
	v = top > 0 ? fakedev_speed(c, k) / top : 0;
	return v > 1 ? 1 : v;
}

/* Open the state file and lock it (shared to read, exclusive to change). */
static inline int
fakedev_lock(const char *dir, int exclusive)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/state", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

/* Read the state; tasks whose process is gone are dropped. */
static inline void
fakedev_read(int fd, struct fakedev_state *s)
{
	char buf[65536];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	char *line, *save = NULL;

	memset(s, 0, sizeof *s);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct fakedev_task t;

		if (sscanf(line, "t %lf %lf %lf %lf %lf %lf", &s->t_last, &s->busy, &s->total, &s->t_written,
		    &s->sm_int, &s->busy_int) >= 3)
			continue;
		if (sscanf(line, "task %d %d %lf", &t.pid, &t.phase, &t.mib) == 3 && s->n < FAKEDEV_TASKS &&
		    (kill(t.pid, 0) == 0 || errno == EPERM))
			s->task[s->n++] = t;
	}
}

static inline void
fakedev_write(int fd, const struct fakedev_state *s)
{
	char buf[65536];
	int n = snprintf(buf, sizeof buf, "t %.6f %.0f %.0f %.6f %.6f %.6f\n", s->t_last, s->busy,
	    s->total, s->t_written, s->sm_int, s->busy_int);

	for (int i = 0; i < s->n && n < (int)sizeof buf - 64; i++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "task %d %d %.0f\n", s->task[i].pid,
		    s->task[i].phase, s->task[i].mib);
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) != n)
		perror("fakedev: state");
}

static inline int
fakedev_on_gpu(const struct fakedev_state *s)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		k += s->task[i].phase == 1;
	return k;
}

static inline double
fakedev_used_mib(const struct fakedev_state *s)
{
	double m = 0;

	for (int i = 0; i < s->n; i++)
		m += s->task[i].phase == 1 ? s->task[i].mib : 0;
	return m;
}

/* CPUs the tasks want now. */
static inline double
fakedev_cpu_demand(const struct fakedev_conf *c, const struct fakedev_state *s)
{
	double d = 0;

	for (int i = 0; i < s->n; i++)
		d += s->task[i].phase == 0 ? c->start_cpu : c->gpu_cpu;
	return d;
}

static inline void
fakedev_put(const char *dir, const char *name, const char *text)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof path, "%s/proc/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	if (!(f = fopen(tmp, "w")))
		return;
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

/* The integrals of SM activity and busy time up to now (the state may be a moment old). */
static inline void
fakedev_integrals(const struct fakedev_conf *c, const struct fakedev_state *s, double *sm, double *busy,
    double *t)
{
	double now = fakedev_now(), dt = s->t_last > 0 && now > s->t_last ? now - s->t_last : 0;
	int k = fakedev_on_gpu(s);

	*sm = s->sm_int + fakedev_sm(c, k) * dt;
	*busy = s->busy_int + (k > 0) * dt;
	*t = now;
}

/* Move the host's clock to now: CPU time by the tasks' demand; the /proc files every 50 ms. */
static inline void
fakedev_advance(const char *dir, const struct fakedev_conf *c, struct fakedev_state *s)
{
	double now = fakedev_now(), dt, d = fakedev_cpu_demand(c, s);
	char text[8192];
	int n;

	if (s->t_last <= 0)
		s->t_last = now;
	dt = now - s->t_last;
	if (dt > 0) {
		int k = fakedev_on_gpu(s);

		s->busy += (d < c->ncpu ? d : c->ncpu) * dt * 100;
		s->total += c->ncpu * dt * 100;
		s->sm_int += fakedev_sm(c, k) * dt;
		s->busy_int += (k > 0) * dt;
		s->t_last = now;
	}
	if (now - s->t_written < 0.05)
		return;
	s->t_written = now;
	n = snprintf(text, sizeof text, "cpu  %.0f 0 0 %.0f 0 0 0 0 0 0\n", s->busy, s->total - s->busy);
	for (int i = 0; i < c->ncpu && n < (int)sizeof text - 64; i++)
		n += snprintf(text + n, sizeof text - (size_t)n, "cpu%d 0 0 0 0 0 0 0 0 0 0\n", i);
	fakedev_put(dir, "stat", text);
	snprintf(text, sizeof text, "MemTotal: %.0f kB\nMemAvailable: %.0f kB\n", c->host_mib * 1024,
	    (c->host_mib - c->host_task_mib * s->n) * 1024);
	fakedev_put(dir, "meminfo", text);
}

#endif
