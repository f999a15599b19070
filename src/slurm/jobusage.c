/*
 * jobusage: the job's sampler (jobusage.h). The prolog forks it twice
 * (setsid between, signals reset, so slurmstepd's blocked SIGTERM does not
 * stick) and waits for one line on a pipe: "ok" once it has read every
 * counter and written <job>.sampler ("PID START"), or "error WHY". The
 * sampler then reads each GPU's energy counter every SAMPLE_ENERGY_S and
 * its processes every SAMPLE_PROCS_S (gpu/usage does the sums), and on
 * SIGTERM reads the counters once more and writes <job>.usage, one line a
 * GPU, fields separated by tabs:
 *   gpu ID UUID ENERGY_J|- QUALITY WHY PEAK_BYTES|- QUALITY WHY
 */
#include "slurm/jobusage.h"
#include "gpu/backend.h"
#include "gpu/select.h"
#include "gpu/usagewatch.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/proc.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_ENERGY_S 0.01
#define SAMPLE_PROCS_S 0.1
#define READY_TIMEOUT_S 30.0
#define STOP_TIMEOUT_S 10.0
#define NOW_TIMEOUT_S 3.0

struct dev {
	char id[GPU_UUID_LEN];     /* as Slurm names it */
	char uuid[GPU_UUID_LEN];
	struct gpu_usage_watch w;
};

static int
file_path(const struct jobmps_conf *c, const struct jobmps_job *j, const char *ext, char *out, size_t size)
{
	char root[512];

	if (jobmps_state_root(c, j->node, root, sizeof root) < 0)
		return -1;
	if ((size_t)snprintf(out, size, "%s/%lu.%s", root, j->jobid, ext) >= size)
		return err_set(EXIT_USAGE, "state path %s/%lu.%s: too long", root, j->jobid, ext);
	return 0;
}

static char job_entry[64];  /* "SLURM_JOB_ID=<job>" */

static int
job_proc(pid_t pid, void *arg)
{
	(void)arg;
	return proc_has_env(pid, job_entry) == 1;
}

/* The job's GPUs here, resolved to driver indices. The count (0: none); -1 with err set. */
static int
devices(const struct jobmps_job *j, struct gpu_backend *b, struct dev *d, int max)
{
	char *items[JOBMPS_MAX_GPUS];
	struct gpu_system sys;
	int n, rc = 0;

	n = jobmps_split_list(j->gpus && *j->gpus ? j->gpus : j->visible, items, max);
	if (n <= 0)
		return n;
	if (gpu_snapshot(b, &sys, 0) < 0) {
		for (int i = 0; i < n; i++)
			free(items[i]);
		return err_prefix("reading the GPUs");
	}
	for (int i = 0; i < n; i++) {
		struct gpu_target t;

		if (rc == 0 && gpu_select_one(&sys, items[i], &t) < 0)
			rc = err_prefix("GPU %s of the job", items[i]);
		if (rc == 0) {
			const struct gpu_info *g = &sys.gpus[t.gpu];

			memset(&d[i], 0, sizeof d[i]);
			str_copy(d[i].id, items[i], sizeof d[i].id);
			str_copy(d[i].uuid, t.uuid, sizeof d[i].uuid);
			gpu_watch_init(&d[i].w, b, g->index, t.gi >= 0 ? (int)g->gi[t.gi].id : -1, job_proc, NULL);
		}
		free(items[i]);
	}
	gpu_system_free(&sys);
	return rc < 0 ? -1 : n;
}

/* ---- the sampler --------------------------------------------------------- */

static volatile sig_atomic_t stop_asked, now_asked;

static void
on_stop(int sig)
{
	if (sig == SIGUSR1)
		now_asked = 1;
	else
		stop_asked = 1;
}


static void
put_field(FILE *f, const struct gpu_usage_field *x, const char *fmt)
{
	char why[sizeof x->why];

	/* a tab or newline in why would break the line's fields */
	str_copy(why, x->why, sizeof why);
	for (char *p = why; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
	if (isnan(x->value))
		fprintf(f, "\t-");
	else
		fprintf(f, fmt, x->value);
	fprintf(f, "\t%s\t%s", gpu_usage_quality_name(x->quality), why);
}

static int
write_result(const char *path, struct dev *d, int n)
{
	char tmp[620];
	FILE *f;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return err_sys(EXIT_ENV, "writing %s", tmp);
	for (int i = 0; i < n; i++) {
		gpu_usage_finish(&d[i].w.u, NAN, NAN, NAN);
		/* no per-process memory: the device's used memory is the next best, an estimate */
		if (d[i].w.u.peak_mem.quality == GPU_USAGE_UNKNOWN && d[i].w.u.mine_seen == 0 && d[i].w.dev_peak >= 0 &&
		    !(d[i].w.u.samples > 0 && d[i].w.u.samples_mem == d[i].w.u.samples)) {
			d[i].w.u.peak_mem.value = d[i].w.dev_peak;
			d[i].w.u.peak_mem.quality = GPU_USAGE_ESTIMATE;
			snprintf(d[i].w.u.peak_mem.why, sizeof d[i].w.u.peak_mem.why, "%s",
			    "the device's used memory at its most (every process's, not the job's alone)");
		}
		fprintf(f, "gpu\t%s\t%s", d[i].id, d[i].uuid);
		put_field(f, &d[i].w.u.energy_j, "\t%.3f");
		put_field(f, &d[i].w.u.peak_mem, "\t%.0f");
		fputc('\n', f);
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return err_sys(EXIT_ENV, "writing %s", path);
	}
	return 0;
}

static void
reset_signals(void)
{
	sigset_t none;
	struct sigaction sa;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
}

static void
say(int fd, const char *fmt, const char *arg)
{
	char line[900];
	int len = snprintf(line, sizeof line, fmt, arg);

	if (len > 0 && write(fd, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1) < 0)
		return;
}

static int
sampler(const struct jobmps_conf *c, const struct jobmps_job *j, int fd)
{
	struct gpu_backend *b = NULL;
	struct dev *d = calloc(JOBMPS_MAX_GPUS, sizeof *d);
	char path[600], pidpath[600], nowpath[600];
	struct sigaction sa;
	double next_procs = 0;
	int n;
	FILE *f;

	snprintf(job_entry, sizeof job_entry, "SLURM_JOB_ID=%lu", j->jobid);
	if (!d)
		return err_set(EXIT_INTERNAL, "out of memory");
	if (c->sim[0])
		setenv("GPUPACK_SIM", c->sim, 1);
	if (file_path(c, j, "usage", path, sizeof path) < 0 || file_path(c, j, "sampler", pidpath, sizeof pidpath) < 0 ||
	    file_path(c, j, "usage-now", nowpath, sizeof nowpath) < 0 || gpu_open(NULL, 0, &b) < 0 || (n = devices(j, b, d, JOBMPS_MAX_GPUS)) < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < n; i++)
		gpu_watch_energy(&d[i].w);
	if (!(f = fopen(pidpath, "w")))
		return err_sys(EXIT_ENV, "writing %s", pidpath);
	fprintf(f, "%ld %llu\n", (long)getpid(), proc_start_time(getpid()));
	if (fclose(f) != 0)
		return err_sys(EXIT_ENV, "writing %s", pidpath);
	say(fd, "ok\n", NULL);
	close(fd);
	while (!stop_asked) {
		for (int i = 0; i < n; i++)
			gpu_watch_energy(&d[i].w);
		if (clock_mono() >= next_procs) {
			for (int i = 0; i < n; i++)
				gpu_watch_procs(&d[i].w);
			next_procs = clock_mono() + SAMPLE_PROCS_S;
		}
		if (now_asked) {
			/* the figures so far, for a step's end (jobusage_now) */
			now_asked = 0;
			if (write_result(nowpath, d, n) < 0)
				err_clear();
		}
		nanosleep(&(struct timespec){0, (long)(SAMPLE_ENERGY_S * 1e9)}, NULL);
	}
	for (int i = 0; i < n; i++) {
		gpu_watch_procs(&d[i].w);
		gpu_watch_energy(&d[i].w);
	}
	gpu_close(b);
	return write_result(path, d, n);
}

static int sampler_pid(const char *pidpath, long *pid, unsigned long long *start);

/* End the sampler of job jobid in root (if any) and remove its files: a run that had no epilog. */
static int
end_sampler(const char *root, unsigned long jobid)
{
	static const char *const ext[] = {"sampler", "usage", "usage-now", "usage.tmp", "usage-now.tmp"};
	char path[600];
	unsigned long long start = 0;
	long pid = 0;
	int ended = 0;

	snprintf(path, sizeof path, "%s/%lu.sampler", root, jobid);
	if (sampler_pid(path, &pid, &start) == 0 && pid > 0 && proc_is((pid_t)pid, start)) {
		kill((pid_t)pid, SIGKILL);
		ended = 1;
	}
	err_clear();
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		snprintf(path, sizeof path, "%s/%lu.%s", root, jobid, ext[i]);
		unlink(path);
	}
	return ended;
}

static jobdir_running_fn usage_running;

void
jobusage_set_running_check(jobdir_running_fn fn)
{
	usage_running = fn;
}

/*
 * Samplers of jobs that are over (their epilog never ran here: the node
 * went down, slurmd was restarted) and this job's own from an earlier run
 * (a requeue): ended, their files removed.
 */
static void
sweep(const char *root, const struct jobmps_job *j)
{
	DIR *dir = opendir(root);
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir)) != NULL) {
		char *end;
		unsigned long id;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		errno = 0;
		id = strtoul(e->d_name, &end, 10);
		if (errno || strcmp(end, ".sampler") != 0)
			continue;
		if (id == j->jobid || (usage_running && usage_running(id) == 0))
			end_sampler(root, id);
	}
	closedir(dir);
}

int
jobusage_start(const struct jobmps_conf *c, const struct jobmps_job *j)
{
	char root[512], line[900];
	int p[2], status, got = 0;
	double deadline;
	pid_t pid;

	if (!(j->gpus && *j->gpus) && !(j->visible && *j->visible))
		return 1;
	if (jobmps_state_root(c, j->node, root, sizeof root) < 0 || jobdir_root(root) < 0)
		return err_prefix("GPU usage of job %lu", j->jobid);
	sweep(root, j);
	if (pipe(p) < 0)
		return err_sys(EXIT_ENV, "pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_sys(EXIT_ENV, "fork");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		close(p[0]);
		reset_signals();
		setsid();
		/* hold none of slurmstepd's descriptors: only the pipe, and /dev/null on 0-2 */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		for (int fd = 3; fd < 1024; fd++)
			if (fd != p[1])
				close(fd);
		pid = fork();
		if (pid != 0)
			_exit(pid < 0);
		if (sampler(c, j, p[1]) < 0) {
			say(p[1], "error %s\n", err_msg());
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	deadline = clock_mono() + READY_TIMEOUT_S;
	for (;;) {
		struct pollfd pf = {p[0], POLLIN, 0};
		double left = deadline - clock_mono();
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
			break;
		r = read(p[0], line + got, sizeof line - 1 - (size_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (int)r;
		if (memchr(line, '\n', (size_t)got) || got >= (int)sizeof line - 1)
			break;
	}
	close(p[0]);
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strcmp(line, "ok") == 0)
		return 0;
	if (strncmp(line, "error ", 6) == 0)
		return err_set(EXIT_ENV, "GPU usage of job %lu: %s", j->jobid, line + 6);
	return err_set(EXIT_ENV, "GPU usage of job %lu: the sampler %s", j->jobid,
	    got ? "said something unexpected" : "did not start");
}

/* ---- the epilog ---------------------------------------------------------- */

static void
human_bytes(double v, char *out, size_t size)
{
	if (v >= 1024.0 * 1024 * 1024)
		snprintf(out, size, "%.1f GiB", v / (1024.0 * 1024 * 1024));
	else
		snprintf(out, size, "%.0f MiB", v / (1024.0 * 1024));
}

/*
 * "gpu ID (UUID): energy 12.3 J exact, peak memory 1.2 GiB estimate (why)"
 * from one line of the file; brief: "gpu ID 12.3J exact 1.2GiB estimate".
 */
static int
describe(char *fileline, int brief, char *out, size_t size)
{
	char *f[9], *save = NULL, *s = fileline, ev[32], mv[32];
	int n = 0;

	fileline[strcspn(fileline, "\n")] = '\0';
	for (char *tok; n < 9 && (tok = strtok_r(s, "\t", &save)); s = NULL)
		f[n++] = tok;
	if (n != 9 || strcmp(f[0], "gpu") != 0)
		return -1;
	if (strcmp(f[3], "-") == 0)
		snprintf(ev, sizeof ev, "-");
	else
		snprintf(ev, sizeof ev, "%s J", f[3]);
	if (strcmp(f[6], "-") == 0)
		snprintf(mv, sizeof mv, "-");
	else
		human_bytes(strtod(f[6], NULL), mv, sizeof mv);
	if (brief) {
		snprintf(out, size, "gpu %s %s%s %s %s %s", f[1], f[3], strcmp(f[3], "-") ? "J" : "", f[4], mv, f[7]);
		return 0;
	}
	snprintf(out, size, "gpu %s (%s): energy %s %s%s%s%s, peak memory %s %s%s%s%s", f[1], f[2], ev, f[4],
	    strcmp(f[4], "exact") ? " (" : "", strcmp(f[4], "exact") ? f[5] : "", strcmp(f[4], "exact") ? ")" : "",
	    mv, f[7], strcmp(f[7], "exact") ? " (" : "", strcmp(f[7], "exact") ? f[8] : "",
	    strcmp(f[7], "exact") ? ")" : "");
	return 0;
}

/* The sampler's pid and start time from <job>.sampler: 0; 1 no such file; -1 with err set. */
static int
sampler_pid(const char *pidpath, long *pid, unsigned long long *start)
{
	FILE *f = fopen(pidpath, "r");

	*pid = 0;
	if (!f)
		return errno == ENOENT ? 1 : err_sys(EXIT_ENV, "reading %s", pidpath);
	if (fscanf(f, "%ld %llu", pid, start) != 2 || *pid <= 1)
		*pid = 0;
	fclose(f);
	return 0;
}

/* The figures of the file at path, one line; unlinks it. */
static int
read_figures(const struct jobmps_job *j, const char *path, int brief, char *line, size_t size)
{
	char buf[1024], one[800];
	size_t len = 0;
	int gpus = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return err_sys(EXIT_ENV, "GPU usage of job %lu: reading %s", j->jobid, path);
	line[0] = '\0';
	while (fgets(buf, sizeof buf, f)) {
		if (describe(buf, brief, one, sizeof one) < 0)
			continue;
		len += (size_t)snprintf(line + len, len < size ? size - len : 0, "%s%s", gpus ? "; " : "", one);
		gpus++;
		if (len >= size)
			break;
	}
	fclose(f);
	unlink(path);
	if (gpus == 0)
		return err_set(EXIT_ENV, "GPU usage of job %lu: %s holds no GPU's figures", j->jobid, path);
	return 0;
}

int
jobusage_now(const struct jobmps_conf *c, const struct jobmps_job *j, char *line, size_t size)
{
	char path[600], pidpath[600];
	unsigned long long start = 0;
	double deadline;
	long pid;
	int rc;

	if (file_path(c, j, "usage-now", path, sizeof path) < 0 ||
	    file_path(c, j, "sampler", pidpath, sizeof pidpath) < 0)
		return -1;
	if ((rc = sampler_pid(pidpath, &pid, &start)) != 0)
		return rc;
	if (pid == 0 || !proc_is((pid_t)pid, start))
		return err_set(EXIT_ENV, "GPU usage of job %lu: its sampler is gone", j->jobid);
	unlink(path);
	kill((pid_t)pid, SIGUSR1);
	deadline = clock_mono() + NOW_TIMEOUT_S;
	while (access(path, F_OK) < 0 && proc_is((pid_t)pid, start) && clock_mono() < deadline)
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
	if (access(path, F_OK) < 0)
		return err_set(EXIT_ENV, "GPU usage of job %lu: its sampler gave no figures within %.0f s", j->jobid,
		    NOW_TIMEOUT_S);
	return read_figures(j, path, 1, line, size);
}

int
jobusage_stop(const struct jobmps_conf *c, const struct jobmps_job *j, char *line, size_t size)
{
	char path[600], pidpath[600];
	unsigned long long start = 0;
	long pid = 0;
	int rc;

	if (file_path(c, j, "usage", path, sizeof path) < 0 || file_path(c, j, "sampler", pidpath, sizeof pidpath) < 0)
		return -1;
	if ((rc = sampler_pid(pidpath, &pid, &start)) != 0)
		return rc;
	if (pid > 0 && proc_is((pid_t)pid, start)) {
		double deadline = clock_mono() + STOP_TIMEOUT_S;

		kill((pid_t)pid, SIGTERM);
		while (proc_is((pid_t)pid, start) && clock_mono() < deadline)
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		if (proc_is((pid_t)pid, start))
			kill((pid_t)pid, SIGKILL);
	}
	unlink(pidpath);
	if (file_path(c, j, "usage-now", pidpath, sizeof pidpath) == 0)
		unlink(pidpath);  /* a step's figures asked for too late */
	if (access(path, F_OK) < 0) {
		int e = errno;

		return err_set(EXIT_ENV, "GPU usage of job %lu: no figures (%s: %s): the sampler %s", j->jobid, path,
		    strerror(e), pid > 0 ? "ended without writing them" : "left no process id");
	}
	return read_figures(j, path, 0, line, size);
}
