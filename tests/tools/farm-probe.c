/*
 * farm-probe: a task for the farm's tests that leaves evidence. It appends
 * one line when it starts and one when it ends to FILE (O_APPEND, one
 * write each, so lines of concurrent tasks never mix):
 *
 *   start MONO_NS DEVICE SEQ SLOT PID
 *   end   MONO_NS DEVICE SEQ SLOT PID
 *
 * DEVICE is $CUDA_VISIBLE_DEVICES, SEQ $GPUPACK_SEQ, SLOT $GPUPACK_SLOT.
 * Between the two it sleeps MS milliseconds; then it exits with CODE.
 * With FARM_PROBE_AT_ONCE=N it first waits (10 s at most) until FILE shows
 * N tasks running, so that a test of how many the farm runs at once does not
 * depend on how fast the machine starts them: the wait adds no task, and a
 * farm that never runs N at once still shows fewer.
 *
 *   farm-probe FILE MS [CODE [IGNORED...]]
 *
 * (IGNORED: the farm appends its input when the command has no {}.)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : "-";
}

static void
mark(int fd, const char *what)
{
	struct timespec ts;
	char line[512];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof line, "%s %lld %s %s %s %ld\n", what,
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, env("CUDA_VISIBLE_DEVICES"),
	    env("GPUPACK_SEQ"), env("GPUPACK_SLOT"), (long)getpid());
	if (write(fd, line, (size_t)n) != n)
		exit(3);
}

/* Tasks running by FILE's lines: starts less ends. */
static int
running(const char *file)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		n += strncmp(line, "start ", 6) == 0 ? 1 : strncmp(line, "end ", 4) == 0 ? -1 : 0;
	fclose(f);
	return n;
}

static void
wait_at_once(const char *file)
{
	const char *v = getenv("FARM_PROBE_AT_ONCE");
	struct timespec tick = {0, 10 * 1000000L};
	int want = v ? atoi(v) : 0;

	for (int i = 0; want > 0 && i < 1000 && running(file) < want; i++)
		nanosleep(&tick, NULL);
}

int
main(int argc, char **argv)
{
	struct timespec d;
	long ms;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: farm-probe FILE MS [CODE]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	ms = atol(argv[2]);
	mark(fd, "start");
	wait_at_once(argv[1]);
	d.tv_sec = ms / 1000;
	d.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&d, &d) < 0)
		;
	mark(fd, "end");
	close(fd);
	return argc >= 4 ? atoi(argv[3]) : 0;
}
