/*
 * trace: the farm's lifecycle, line by line, for a person (farm/trace.h).
 */
#include "farm/trace.h"
#include "util/clock.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *out;
static double base;

int
trace_open(double t0)
{
	const char *path = getenv("GPUPACK_TRACE");
	int fd;

	trace_close();
	if (!path || !*path)
		return 0;
	base = t0;
	/* the user's own file: appended to, never a followed symlink, private when created */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(EXIT_ENV, "GPUPACK_TRACE: cannot open %s", path);
	if (!(out = fdopen(fd, "a"))) {
		int e = errno;

		close(fd);
		errno = e;
		return err_sys(EXIT_ENV, "GPUPACK_TRACE: cannot open %s", path);
	}
	return 0;
}

void
trace_close(void)
{
	if (out)
		fclose(out);
	out = NULL;
}

int
trace_on(void)
{
	return out != NULL;
}

void
trace_event(double now, const char *fmt, ...)
{
	va_list ap;

	if (!out)
		return;
	fprintf(out, "%10.3f ", now - base);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	/* line by line: a farm killed midway keeps what it traced */
	fflush(out);
}

void
trace_read(const char *who, int gpu, double t0)
{
	double t1;

	if (out && (t1 = clock_mono()) - t0 > TRACE_SLOW_READ)
		trace_event(t1, "%s read gpu=%d took %.3f s", who, gpu, t1 - t0);
}
