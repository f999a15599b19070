/*
 * no-fork.so: an LD_PRELOAD shim that makes starting a process fail as it
 * does under ulimit -u (fork's EAGAIN), for the tests of a farm short of
 * processes, deterministically and as root (whom RLIMIT_NPROC spares).
 *
 *   NOFORK_FIRST=N   the first N calls of vfork() fail with EAGAIN
 *   NOFORK_EVERY=M   then every M-th call fails (0 or unset: none)
 *
 * The calls that do not fail fork() instead: a wrapper cannot vfork for its
 * caller (the child would return into a frame the parent goes on using),
 * and the farm's child does nothing a fork would change.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

pid_t vfork(void);

static long calls;

pid_t
vfork(void)
{
	const char *first = getenv("NOFORK_FIRST"), *every = getenv("NOFORK_EVERY");
	long n = ++calls, f = first ? atol(first) : 0, m = every ? atol(every) : 0;

	if (n <= f || (m > 0 && (n - f) % m == 0)) {
		errno = EAGAIN;
		return -1;
	}
	return fork();
}
