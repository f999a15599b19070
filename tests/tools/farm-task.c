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
 *   farm-task --ms MS [--mark DIR | --count DIR] [INPUT...]      (inputs are ignored)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char *mark = NULL, *count = NULL, *scale_s = getenv("FARM_TASK_SCALE"), *seq = getenv("GPUPACK_SEQ");
	double ms = 0, scale = scale_s ? atof(scale_s) : 1;
	struct timespec ts;
	sigset_t hold;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
			ms = atof(argv[++i]);
		else if (strcmp(argv[i], "--mark") == 0 && i + 1 < argc)
			mark = argv[++i];
		else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			count = argv[++i];
		else if (argv[i][0] != '-')
			continue; /* the input itself, as gpupack appends it */
		else {
			fprintf(stderr, "usage: farm-task --ms MS [--mark DIR | --count DIR]\n");
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
	sigemptyset(&hold);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGINT);
	sigprocmask(SIG_BLOCK, &hold, NULL);
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
	return 0;
}
