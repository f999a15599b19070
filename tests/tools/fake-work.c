/*
 * fake-work: a CPU test double of gpupack-work for `gpupack bench` tests. It
 * speaks gpupack-work's command line and prints the same one JSON line, but
 * the GPU is a model, so that bench's orchestration (shared start, MPS
 * daemon and caps, retries, statistics, outputs) runs end to end in CI.
 *
 *   fake-work [--device N] matmul --n N --iters K [--streams S] [--batched P]
 *             [--warmup W] [--start-at EPOCH] [--cpu-ms M]
 *
 * The model GPU: FAKE_WORK_TFLOPS (default 40) at full use; one N x N SGEMM
 * alone fills u(N) = min(1, (N/2048)^2) of it. P processes that started at
 * the same --start-at (counted through files in $FAKE_WORK_DIR; without it
 * P is 1) share it:
 *   time-slicing (no MPS daemon): one context at a time, so u of the GPU,
 *     less 10% for switching when P > 1;
 *   MPS (registered with the daemon at $CUDA_MPS_PIPE_DIRECTORY through
 *     fake-mps-control's client protocol): sum of min(u, cap) over the
 *     clients, at most 97% of the GPU when P > 1; cap is the client's SM
 *     percentage (the server's default, lowered by
 *     CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, as the real runtime does);
 *   --streams S: min(1, S u) at 98%;  --batched P: min(1, P u).
 * --cpu-ms adds M ms a iteration that only the process itself waits for.
 * The times reported are the model's (t_end = t_start + modelled seconds);
 * the process does not sleep them, so that tests stay fast; FAKE_WORK_REAL=1
 * makes it sleep them (a repeat as long as it says: the energy counter's
 * windows are real time).
 *
 * Failures for tests: FAKE_WORK_FAIL_N=N fails (exit 1, "ok":false) when
 * --n is N; FAKE_WORK_FAIL_MODE=batched|streams|mps fails that mode only;
 * FAKE_WORK_BAD_SUM_N=N reports a checksum mismatch; FAKE_WORK_NOISE_N=N makes some
 * commands with --n N 30% slower (a fixed pattern per process: noisy repeats); FAKE_WORK_SETUP_MS
 * makes setup take that long (a worker late for --start-at). Like
 * gpupack-work, it reports t_ready (setup done), which bench learns its
 * start margins from; FAKE_WORK_NO_READY=1 leaves it out (a gpupack-work
 * from before it). FAKE_WORK_EXIT_MS=M stays M ms after printing its line,
 * as a CUDA context's teardown does, and then, with $FAKE_WORK_DIR, writes
 * "t_start t_exit" into its file there, so that tests can check that no
 * timed part began before the previous workers were gone.
 * FAKE_WORK_BAD_EXIT_N=N prints a good line for --n N, then exits 3.
 *
 *   fake-work farm [--work W] [NAME]
 *
 * One task of a farm on the simulated device in $FAKE_DEVICE (fakedev.h:
 * the device's speed for k tasks at once, SM activity, memory, the host's
 * CPUs): start-up, then W work units (default 1) on the GPU at speed(k)/k
 * while k tasks are there. A task that does not fit the device's memory
 * prints CUDA's out-of-memory message on stderr and exits 1. Prints
 * {"mode":"farm","ok":true,"pid":P,"work":W,"seconds":S,"max_on_gpu":K}.
 *
 *   fake-work [--device N] serve
 *
 * gpupack-work's serve mode: registers with the MPS daemon once (like a
 * context), prints {"mode":"serve","ok":true,...,"t_ready":...}, then runs
 * one matmul command per line of stdin ("matmul --n ..."), printing each
 * one's line, until end of input; a failed command ends it with its exit
 * code. FAKE_WORK_START_MS makes that first setup take so long (a context's
 * creation); FAKE_WORK_SETUP_MS applies to every command. With
 * $FAKE_WORK_DIR it creates "serve.<pid>" there when it starts and, at the
 * end of input, after FAKE_WORK_EXIT_MS, writes "<last t_start> <t_exit>"
 * into it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "fakedev.h"

/* The last timed part's start (for linger). */
static double g_last_start = -1;

struct args {
	long n, iters, streams, batched, warmup;
	double start_at, cpu_ms;
	const char *start_str;
};

static double
now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_until(double when)
{
	for (double left = when - now_epoch(); left > 0; left = when - now_epoch()) {
		struct timespec ts = {(time_t)left, (long)((left - floor(left)) * 1e9)};

		nanosleep(&ts, NULL);
	}
}

static int
usage(const char *why)
{
	fprintf(stderr, "gpupack-work: %s (fake-work: only matmul is modelled)\n", why);
	return 2;
}

static int
num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return *s && !*end && errno == 0 ? 0 : -1;
}

static int
parse(int argc, char **argv, struct args *a)
{
	int i = 1;

	memset(a, 0, sizeof *a);
	a->start_at = -1;
	a->warmup = 2;
	if (i + 1 < argc && strcmp(argv[i], "--device") == 0)
		i += 2;
	if (i >= argc || strcmp(argv[i], "matmul") != 0)
		return -1;
	for (i++; i < argc; i += 2) {
		double v;

		if (i + 1 >= argc || num(argv[i + 1], &v) < 0)
			return -1;
		if (strcmp(argv[i], "--n") == 0)
			a->n = (long)v;
		else if (strcmp(argv[i], "--iters") == 0)
			a->iters = (long)v;
		else if (strcmp(argv[i], "--streams") == 0)
			a->streams = (long)v;
		else if (strcmp(argv[i], "--batched") == 0)
			a->batched = (long)v;
		else if (strcmp(argv[i], "--warmup") == 0)
			a->warmup = (long)v;
		else if (strcmp(argv[i], "--cpu-ms") == 0)
			a->cpu_ms = v;
		else if (strcmp(argv[i], "--start-at") == 0) {
			a->start_at = v;
			a->start_str = argv[i + 1];
		} else
			return -1;
	}
	return a->n >= 1 && a->iters >= 1 && a->streams >= 0 && a->batched >= 0 ? 0 : -1;
}

/* Register with the MPS daemon as fake-mps-client does; the socket stays open. -1: no MPS. */
static int
mps_register(double *sm)
{
	const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char line[256];
	ssize_t n;
	int fd, srv;

	*sm = 100;
	if (!dir || !*dir)
		return -1;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;  /* no daemon: CUDA runs without MPS */
	}
	snprintf(line, sizeof line, "client %d fake-work\n", (int)getpid());
	if (write(fd, line, strlen(line)) < 0 || (n = read(fd, line, sizeof line - 1)) <= 0) {
		close(fd);
		return -1;
	}
	line[n] = '\0';
	if (sscanf(line, "ok %d %lf", &srv, sm) != 2) {
		close(fd);
		return -1;
	}
	if (pct && *pct && atof(pct) > 0 && atof(pct) < *sm)
		*sm = atof(pct);
	return fd;
}

/* After the line: the teardown's time, then "t_start t_exit" into this process's file. */
static void
linger(const struct args *a, double t_start)
{
	const char *ms = getenv("FAKE_WORK_EXIT_MS"), *dir = getenv("FAKE_WORK_DIR");
	char path[4096];
	FILE *f;

	if (!ms || atof(ms) <= 0)
		return;
	fflush(stdout);
	usleep((useconds_t)(atof(ms) * 1000));
	if (!dir || !a->start_str)
		return;
	snprintf(path, sizeof path, "%s/%s.%d", dir, a->start_str, (int)getpid());
	if ((f = fopen(path, "w"))) {
		fprintf(f, "%.6f %.6f\n", t_start, now_epoch());
		fclose(f);
	}
}

/* serve: the teardown's time at the end of input, then "<last t_start> <t_exit>" into "serve.<pid>". */
static void
linger_serve(double t_last)
{
	const char *ms = getenv("FAKE_WORK_EXIT_MS"), *dir = getenv("FAKE_WORK_DIR");
	char path[4096];
	FILE *f;

	if (ms && atof(ms) > 0)
		usleep((useconds_t)(atof(ms) * 1000));
	if (!dir)
		return;
	snprintf(path, sizeof path, "%s/serve.%d", dir, (int)getpid());
	if ((f = fopen(path, "w"))) {
		fprintf(f, "%.6f %.6f\n", t_last, now_epoch());
		fclose(f);
	}
}

/* Processes of this point: files named "<start-at>.<pid>" in $FAKE_WORK_DIR. */
static void
peer_register(const struct args *a)
{
	const char *dir = getenv("FAKE_WORK_DIR");
	char path[4096];
	int fd;

	if (!dir || !a->start_str)
		return;
	snprintf(path, sizeof path, "%s/%s.%d", dir, a->start_str, (int)getpid());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
}

static int
peer_count(const struct args *a)
{
	const char *dir = getenv("FAKE_WORK_DIR");
	size_t len;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (!dir || !a->start_str || !(d = opendir(dir)))
		return 1;
	len = strlen(a->start_str);
	while ((de = readdir(d)))
		if (strncmp(de->d_name, a->start_str, len) == 0 && de->d_name[len] == '.')
			n++;
	closedir(d);
	return n > 0 ? n : 1;
}

/* Aggregate rate (share of the GPU) of the point, and this process's part of it. */
static double
model_share(const struct args *a, int peers, int mps, double sm, double u, double *own)
{
	double agg;

	if (a->batched > 1) {
		*own = agg = fmin(1, (double)a->batched * u);
		return agg;
	}
	if (a->streams > 1) {
		*own = agg = fmin(1, (double)a->streams * u) * 0.98;
		return agg;
	}
	if (!mps) {
		agg = u * (peers > 1 ? 0.9 : 1);
		*own = agg / peers;
		return agg;
	}
	agg = fmin(peers > 1 ? 0.97 : 1, peers * fmin(u, sm / 100));
	*own = agg / peers;
	return agg;
}

static int
env_is(const char *name, long n)
{
	const char *v = getenv(name);

	return v && atol(v) == n;
}

static int
mode_fails(const struct args *a, int mps)
{
	const char *m = getenv("FAKE_WORK_FAIL_MODE");

	if (!m)
		return 0;
	return (strcmp(m, "batched") == 0 && a->batched > 1) ||
	    (strcmp(m, "streams") == 0 && a->streams > 1) || (strcmp(m, "mps") == 0 && mps);
}

/* One matmul: its line on stdout; the exit code a one-shot run would have. */
static int
run_one(const struct args *a, int fd, double sm)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES"), *dev = getenv("FAKE_WORK_DEVICE");
	const char *tf = getenv("FAKE_WORK_TFLOPS"), *setup = getenv("FAKE_WORK_SETUP_MS");
	double cap = tf && atof(tf) > 0 ? atof(tf) * 1e12 : 40e12;
	double u, share, own, flops, secs, t_ready, t_start, late = -1, jitter;
	long mats;
	int peers, fail;

	if (setup && atof(setup) > 0)
		usleep((useconds_t)(atof(setup) * 1000));
	peer_register(a);
	t_ready = now_epoch();
	if (a->start_at >= 0) {
		if (now_epoch() > a->start_at)
			late = (now_epoch() - a->start_at) * 1000;
		sleep_until(a->start_at);
	}
	t_start = g_last_start = now_epoch();
	peers = peer_count(a);
	mats = a->batched > 1 ? a->batched : a->streams > 1 ? a->streams : 1;
	flops = 2.0 * (double)a->n * (double)a->n * (double)a->n * (double)a->iters * (double)mats;
	u = fmin(1, ((double)a->n / 2048) * ((double)a->n / 2048));
	share = model_share(a, peers, fd >= 0, sm, u, &own);
	fail = env_is("FAKE_WORK_FAIL_N", a->n) || mode_fails(a, fd >= 0);
	(void)share;
	/* the GPU part shared with the peers; the CPU part only this process waits for */
	secs = flops / (own * cap) + (double)a->iters * a->cpu_ms / 1000;
	/* a little deterministic noise, so that spreads are not all zero */
	jitter = 1 + 0.002 * (double)((getpid() % 5) - 2);
	secs *= jitter;
	if (env_is("FAKE_WORK_NOISE_N", a->n)) {
		/* a noisy point: 30% slower on some commands of this process, a fixed pattern */
		static unsigned k;

		secs *= 1 + 0.3 * (double)((k++ * 2654435761u >> 7) & 1);
	}
	if (!fail && getenv("FAKE_WORK_REAL") && secs > 0)
		usleep((useconds_t)(secs * 1e6));
	printf("{\"mode\":\"matmul\",\"ok\":%s,\"pid\":%d,\"device\":\"%s\",\"uuid\":\"%s\","
	    "\"n\":%ld,\"iters\":%ld,\"streams\":%ld,\"batched\":%ld,\"peers\":%d,\"mps\":%s,"
	    "\"sm_pct\":%g,", fail || env_is("FAKE_WORK_BAD_SUM_N", a->n) ? "false" : "true",
	    (int)getpid(),
	    dev ? dev : "Fake GPU (model)", vis ? vis : "GPU-fake", a->n, a->iters,
	    a->streams ? a->streams : 1, a->batched, peers, fd >= 0 ? "true" : "false", sm);
	if (!getenv("FAKE_WORK_NO_READY"))
		printf("\"t_ready\":%.6f,", t_ready);
	if (a->start_at >= 0)
		printf("\"start_at\":%.6f,", a->start_at);
	if (late >= 0)
		printf("\"late_ms\":%.3f,", late);
	if (fail) {
		printf("\"error\":\"CUDA error: out of memory (injected)\"}\n");
		return 1;
	}
	if (env_is("FAKE_WORK_BAD_SUM_N", a->n)) {
		printf("\"checksum_ok\":false,\"error\":\"checksum mismatch (injected)\"}\n");
		return 1;
	}
	printf("\"t_start\":%.6f,\"t_end\":%.6f,\"seconds\":%.6f,\"flops\":%.0f,\"tflops\":%.6g,"
	    "\"checksum_ok\":true,\"max_rel_err\":1e-06}\n", t_start, t_start + secs, secs, flops,
	    flops / secs / 1e12);
	fflush(stdout);
	return env_is("FAKE_WORK_BAD_EXIT_N", a->n) ? 3 : 0;
}

static long g_served;      /* serve: commands run */
static int g_bad_exit;     /* serve: a command of FAKE_WORK_BAD_EXIT_N ran */

/* serve: one ready line, then one command per line of stdin until its end. */
static int
serve(int fd, double sm)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES"), *dev = getenv("FAKE_WORK_DEVICE");
	const char *start = getenv("FAKE_WORK_START_MS");
	const char *dir = getenv("FAKE_WORK_DIR");
	char line[4096];

	if (dir) {
		/* "serve.<pid>": this worker is alive (tests look for leftovers) */
		int mfd;

		snprintf(line, sizeof line, "%s/serve.%d", dir, (int)getpid());
		if ((mfd = open(line, O_CREAT | O_WRONLY, 0600)) >= 0)
			close(mfd);
	}
	if (start && atof(start) > 0)
		usleep((useconds_t)(atof(start) * 1000));
	if (fd >= 0 && getenv("FAKE_WORK_FAIL_MODE") && strcmp(getenv("FAKE_WORK_FAIL_MODE"), "mps") == 0) {
		printf("{\"mode\":\"serve\",\"ok\":false,\"pid\":%d,\"error\":\"cudaErrorMpsConnectionFailed: "
		    "MPS client failed to connect (injected)\"}\n", (int)getpid());
		return 1;
	}
	printf("{\"mode\":\"serve\",\"ok\":true,\"pid\":%d,\"device\":\"%s\",\"uuid\":\"%s\","
	    "\"t_ready\":%.6f}\n", (int)getpid(), dev ? dev : "Fake GPU (model)",
	    vis ? vis : "GPU-fake", now_epoch());
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		char *argv[66], *save = NULL, *w;
		struct args a;
		int argc = 0, rc;

		argv[argc++] = (char *)"fake-work";
		for (w = strtok_r(line, " \t\n", &save); w && argc < 65; w = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = w;
		argv[argc] = NULL;
		if (argc == 1)
			continue;
		if (parse(argc, argv, &a) < 0)
			return usage("serve: bad command");
		rc = run_one(&a, fd, sm);
		if (rc == 3) {
			/* serve: a bad exit comes at the end, as a teardown's failure would */
			g_bad_exit = 1;
			rc = 0;
		}
		if (rc != 0)
			return rc;
		if (++g_served == atol(getenv("FAKE_WORK_DIE_AFTER") ? getenv("FAKE_WORK_DIE_AFTER") : "0"))
			return 3;
	}
	linger_serve(g_last_start);
	return g_bad_exit ? 3 : 0;
}

/* fake-work farm: one task on the shared simulated device. */
static int
farm_task(int argc, char **argv)
{
	const char *dir = getenv("FAKE_DEVICE");
	struct fakedev_conf c;
	struct fakedev_state *s = calloc(1, sizeof *s);
	double work = 1, start_left, t0 = fakedev_now(), last = t0;
	int phase = 0, max_k = 0, me = (int)getpid(), fd;

	/* a last word (the farm's input, appended) only names the task */
	if (argc >= 4 && strcmp(argv[2], "--work") == 0)
		work = atof(argv[3]);
	if (argc > 5 || (argc >= 4 && strcmp(argv[2], "--work") != 0) || !(work > 0))
		return usage("farm [--work W] [NAME]");
	if (!s || !dir || fakedev_conf_load(dir, &c) < 0)
		return usage("farm: FAKE_DEVICE names no device directory with a config");
	start_left = c.start_ms / 1000;
	for (;;) {
		double now = fakedev_now(), dt = now - last, want;
		int k, i;

		last = now;
		if ((fd = fakedev_lock(dir, 1)) < 0)
			return usage("farm: cannot lock the device's state");
		fakedev_read(fd, s);
		for (i = 0; i < s->n && s->task[i].pid != me; i++)
			;
		if (i == s->n && s->n < FAKEDEV_TASKS)
			s->task[s->n++] = (struct fakedev_task){me, 0, 0};
		fakedev_advance(dir, &c, s);
		k = fakedev_on_gpu(s);
		if (phase == 0) {
			want = fakedev_cpu_demand(&c, s);
			start_left -= dt * (want > c.ncpu ? c.ncpu / want : 1);
			if (start_left <= 0) {
				if (fakedev_used_mib(s) + c.task_mib > c.dev_mib) {
					s->task[i] = s->task[--s->n];
					fakedev_write(fd, s);
					close(fd);
					fprintf(stderr, "fake-work: farm: CUDA error: out of memory (cudaMalloc of "
					    "%.0f MiB, %.0f of %.0f in use)\n", c.task_mib, fakedev_used_mib(s),
					    c.dev_mib);
					/* freed: under ASan a leak report would follow the message the farm reads */
					free(s);
					return 1;
				}
				phase = 1;
				s->task[i].phase = 1;
				s->task[i].mib = c.task_mib;
				k++;
			}
		} else {
			work -= dt * fakedev_speed(&c, k) / k;
		}
		if (k > max_k)
			max_k = k;
		if (phase == 1 && work <= 0) {
			s->task[i] = s->task[--s->n];
			fakedev_write(fd, s);
			close(fd);
			break;
		}
		fakedev_write(fd, s);
		close(fd);
		usleep(20000);
	}
	printf("{\"mode\":\"farm\",\"ok\":true,\"pid\":%d,\"work\":%g,\"seconds\":%.3f,"
	    "\"max_on_gpu\":%d}\n", me, argc >= 4 ? atof(argv[3]) : 1.0, fakedev_now() - t0, max_k);
	free(s);
	return 0;
}

int
main(int argc, char **argv)
{
	struct args a;
	double sm;
	int fd, rc;

	if (argc >= 2 && strcmp(argv[argc - 1], "serve") == 0 &&
	    (argc == 2 || (argc == 4 && strcmp(argv[1], "--device") == 0))) {
		fd = mps_register(&sm);
		rc = serve(fd, sm);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (argc >= 2 && strcmp(argv[1], "farm") == 0)
		return farm_task(argc, argv);
	if (parse(argc, argv, &a) < 0)
		return usage("bad arguments");
	fd = mps_register(&sm);
	rc = run_one(&a, fd, sm);
	linger(&a, g_last_start);
	if (fd >= 0)
		close(fd);
	return rc;
}
