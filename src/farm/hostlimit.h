/*
 * hostlimit: GNU parallel's --load, --noswap and --memfree: no task starts
 * while the host is busier than asked (runnable processes, swapping, less
 * memory available). They hold tasks back; they end none (parallel's
 * --memfree also ends the youngest task below half the size: gpupack does
 * not, doc/run.md).
 */
#ifndef GPUPACK_FARM_HOSTLIMIT_H
#define GPUPACK_FARM_HOSTLIMIT_H

#include <stdint.h>

struct hostlimit {
	double load;          /* --load: at most this many runnable processes; 0: none */
	int noswap;           /* --noswap */
	uint64_t memfree;     /* --memfree: bytes available at least; 0: none */
	/* state */
	double checked;       /* when the host was looked at last (monotonic s) */
	int ready;            /* what it said */
	unsigned long long swapped; /* pages swapped in and out so far */
};

/* Parse --load (N or N% of the CPU threads). -1 with err set. */
int hostlimit_load(struct hostlimit *h, const char *v);
/* Is any limit set? */
int hostlimit_on(const struct hostlimit *h);
/* May a task start now? Looks at the host at most once a second. */
int hostlimit_ready(struct hostlimit *h, double now);

#endif
