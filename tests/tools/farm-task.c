/*
 * farm-task: one task of the multi-node farm tests (tests/slurm/farm.t,
 * tests/cli/run-nodes.t). It works for --ms milliseconds, times
 * $FARM_TASK_SCALE (a slow node sets 3), then, with --mark DIR, records that
 * input $GPUPACK_SEQ ran to its end by creating DIR/SEQ (the node's name in
 * it); a second run to the end of the same input finds the mark there and
 * fails (exit 3: "ran twice"). The end (mark, exit) cannot be cut in two by
 * SIGTERM or SIGINT: they are held back from then on, so a task is either
 * killed before its mark or finishes with it. --count DIR instead appends a
 * line to DIR/SEQ each time: how often an input ran to its end (a node
 * killed with -9 can take a finished task's record down with it, and the
 * task then runs again: at least once, recorded once).
 *
 * Gates, for tests that decide when a task may end (time driven by the test,
 * not by sleeps): after its --ms, a task waits while DIR/SEQ exists (--hold
 * DIR: one input held) or while the file $FARM_TASK_HOLD exists (a whole
 * node's tasks held), then ends as above. A task killed while it waits has
 * not run to its end: no mark, no count.
 *
 * --fail SEQ: input SEQ ends with exit 1 (after its mark or count).
 *
 *   farm-task --ms MS [--mark DIR | --count DIR] [--hold DIR] [--fail SEQ] [INPUT...]
 *   (the inputs are ignored)
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int
present(const char *path)
{
	struct stat st;

	return path && *path && lstat(path, &st) == 0;
}

/* Wait while the node's hold file or the input's own exists (5 ms polls). */
static void
gates(const char *hold_dir, const char *seq)
{
	const char *node = getenv("FARM_TASK_HOLD");
	char path[4096] = "";
	struct timespec ts = {0, 5000000L};

	if (hold_dir && seq)
		snprintf(path, sizeof path, "%s/%s", hold_dir, seq);
	while (present(node) || present(path))
		nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	const char *mark = NULL, *count = NULL, *hold = NULL, *fail = NULL, *scale_s = getenv("FARM_TASK_SCALE"), *seq = getenv("GPUPACK_SEQ");
	double ms = 0, scale = scale_s ? atof(scale_s) : 1;
	struct timespec ts;
	sigset_t block;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
			ms = atof(argv[++i]);
		else if (strcmp(argv[i], "--mark") == 0 && i + 1 < argc)
			mark = argv[++i];
		else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			count = argv[++i];
		else if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc)
			hold = argv[++i];
		else if (strcmp(argv[i], "--fail") == 0 && i + 1 < argc)
			fail = argv[++i];
		else if (argv[i][0] != '-')
			continue; /* the input itself, as gpupack appends it */
		else {
			fprintf(stderr, "usage: farm-task --ms MS [--mark DIR | --count DIR] [--hold DIR] [--fail SEQ]\n");
			return 2;
		}
	}
	if (scale <= 0)
		scale = 1;
	ms *= scale;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	gates(hold, seq);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	if ((mark || count) && !seq) {
		fprintf(stderr, "farm-task: GPUPACK_SEQ is not set\n");
		return 2;
	}
	if (count) {
		char path[4096];
		int fd;

		snprintf(path, sizeof path, "%s/%s", count, seq);
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0 || dprintf(fd, "%ld\n", (long)getpid()) < 0) {
			fprintf(stderr, "farm-task: %s: %s\n", path, strerror(errno));
			return 2;
		}
		close(fd);
	}
	if (mark) {
		char path[4096], host[64] = "?";
		int fd;

		if (!seq) {
			fprintf(stderr, "farm-task: GPUPACK_SEQ is not set\n");
			return 2;
		}
		gethostname(host, sizeof host);
		snprintf(path, sizeof path, "%s/%s", mark, seq);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			fprintf(stderr, "farm-task: input %s: %s\n", seq,
			    errno == EEXIST ? "ran twice (its mark is there)" : strerror(errno));
			return 3;
		}
		dprintf(fd, "%s %s %ld\n", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : host,
		    seq, (long)getpid());
		close(fd);
	}
	printf("%s\n", seq ? seq : "");
	return fail && seq && strcmp(fail, seq) == 0;
}
