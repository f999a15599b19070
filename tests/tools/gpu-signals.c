/*
 * gpu-signals: print what the farm's controller would read, as one JSON
 * line per sample, so that each signal can be checked on a real GPU (what
 * the driver reports under MPS and under time-slicing, and how fast):
 *
 *   gpu-signals [--gpu N] [--gi ID] [--ms INTERVAL] [--seconds S]
 *
 * Each line: t (seconds since start), call_ms (how long the backend's
 * sample took), busy, sm_active, sm_occupancy, gpm_span, mem_used, mem_free
 * (MiB), nprocs and procs ([pid, MiB] pairs), cpu_busy (host, since the
 * previous line), mem_avail (host, MiB). Unknown values are -1.
 */
#include "gpu/backend.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int
main(int argc, char **argv)
{
	struct gpu_backend *b;
	struct host_cpu c0, c1;
	int gpu = 0, gi = -1, ms = 100;
	double secs = 10, t0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--gpu") == 0)
			gpu = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--gi") == 0)
			gi = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--ms") == 0)
			ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seconds") == 0)
			secs = atof(argv[i + 1]);
	}
	if (gpu_open(NULL, 0, &b) < 0) {
		fprintf(stderr, "gpu-signals: %s\n", err_msg());
		return 3;
	}
	if (!b->sample) {
		fprintf(stderr, "gpu-signals: backend %s has no samples\n", b->name);
		return 3;
	}
	host_cpu_read(&c0);
	t0 = clock_mono();
	while (clock_mono() - t0 < secs) {
		struct gpu_sample s;
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		uint64_t avail = 0;
		double a, cb;
		int rc;

		nanosleep(&ts, NULL);
		a = clock_mono();
		rc = b->sample(b, gpu, gi, &s);
		a = clock_mono() - a;
		if (rc < 0) {
			fprintf(stderr, "gpu-signals: %s\n", err_msg());
			return 3;
		}
		host_cpu_read(&c1);
		cb = host_cpu_busy(&c0, &c1);
		c0 = c1;
		if (host_mem_available(&avail) < 0)
			err_clear();
		printf("{\"t\":%.3f,\"call_ms\":%.2f,\"busy\":%.2f,\"sm_active\":%.3f,\"sm_occupancy\":%.3f,"
		    "\"gpm_span\":%.3f,\"mem_used\":%llu,\"mem_free\":%llu,\"nprocs\":%d,\"procs\":[",
		    clock_mono() - t0, a * 1000, s.busy, s.sm_active, s.sm_occupancy, s.gpm_span,
		    (unsigned long long)(s.mem_used >> 20), (unsigned long long)(s.mem_free >> 20), s.nprocs);
		for (int i = 0; i < s.nprocs; i++)
			printf("%s[%d,%llu]", i ? "," : "", (int)s.procs[i].pid,
			    (unsigned long long)(s.procs[i].mem >> 20));
		printf("],\"cpu_busy\":%.3f,\"ncpu\":%d,\"mem_avail\":%llu}\n", cb, c1.ncpu,
		    (unsigned long long)(avail >> 20));
		fflush(stdout);
	}
	gpu_close(b);
	return 0;
}
