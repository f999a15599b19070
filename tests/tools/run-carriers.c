/*
 * run-carriers: the live processes of ours whose environment holds
 * GPUPACK_RUN=TOKEN (a run's token, see src/farm/guard.h), one pid a line.
 * Exit 0 when there is none, 1 when there is any, 2 on bad usage. The
 * tests use it to see what a killed run left running.
 *
 *   run-carriers TOKEN
 */
#include "util/err.h"
#include "util/proc.h"

#include <stdio.h>
#include <string.h>

static const char *want;
static int found;

static int
carrier(const struct proc_stat *st, void *arg)
{
	(void)arg;
	if (proc_has_env(st->pid, want)) {
		printf("%ld\n", (long)st->pid);
		found++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char entry[256];

	if (argc != 2 || !*argv[1] || strlen(argv[1]) > 200) {
		fprintf(stderr, "usage: run-carriers TOKEN\n");
		return 2;
	}
	snprintf(entry, sizeof entry, "GPUPACK_RUN=%s", argv[1]);
	want = entry;
	if (proc_each(carrier, NULL) < 0) {
		fprintf(stderr, "run-carriers: %s\n", err_msg());
		return 2;
	}
	return found > 0;
}
