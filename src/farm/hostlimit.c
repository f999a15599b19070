/*
 * hostlimit: the host's load, swapping and free memory, looked at before a
 * task starts (see hostlimit.h). Load is what parallel counts: the
 * processes runnable now (/proc/loadavg's fourth field), gpupack's own
 * less; swapping is pages swapped in or out since the last look.
 */
#include "farm/hostlimit.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
hostlimit_load(struct hostlimit *h, const char *v)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || x <= 0 || (*end && strcmp(end, "%") != 0))
		return err_set(EXIT_USAGE, "--load '%s': want a number of processes, or N%% of the CPU "
		    "threads", v);
	if (*end == '%')
		x = x / 100 * (double)sysconf(_SC_NPROCESSORS_ONLN);
	h->load = x;
	return 0;
}

int
hostlimit_on(const struct hostlimit *h)
{
	return h->load > 0 || h->noswap || h->memfree > 0;
}

static int
runnable(double *n)
{
	char *data;
	size_t len;
	double a, b, c;
	long run;

	if (read_file("/proc/loadavg", &data, &len) < 0) {
		err_clear();
		return -1;
	}
	if (sscanf(data, "%lf %lf %lf %ld/", &a, &b, &c, &run) != 4) {
		free(data);
		return -1;
	}
	free(data);
	*n = (double)(run > 0 ? run - 1 : 0);   /* not gpupack itself */
	return 0;
}

static int
swapped(unsigned long long *pages)
{
	char *data, *p;
	size_t len;
	unsigned long long in = 0, out = 0;

	if (read_file("/proc/vmstat", &data, &len) < 0) {
		err_clear();
		return -1;
	}
	if ((p = strstr(data, "pswpin ")) != NULL)
		in = strtoull(p + 7, NULL, 10);
	if ((p = strstr(data, "pswpout ")) != NULL)
		out = strtoull(p + 8, NULL, 10);
	free(data);
	*pages = in + out;
	return 0;
}

int
hostlimit_ready(struct hostlimit *h, double now)
{
	double load;
	uint64_t avail;
	unsigned long long sw;
	int ready = 1;

	if (!hostlimit_on(h))
		return 1;
	if (h->checked > 0 && now - h->checked < 1.0)
		return h->ready;
	if (h->load > 0 && runnable(&load) == 0 && load >= h->load)
		ready = 0;
	if (h->memfree > 0 && host_mem_available(&avail) == 0 && avail < h->memfree)
		ready = 0;
	if (h->memfree > 0)
		err_clear();
	if (h->noswap && swapped(&sw) == 0) {
		if (h->checked > 0 && sw > h->swapped)
			ready = 0;
		h->swapped = sw;
	}
	h->checked = now;
	h->ready = ready;
	return ready;
}
