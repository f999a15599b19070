/*
 * err: the one recorded error of the current thread, and how it is printed.
 */
#include "util/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char msg[1024];
static _Thread_local int code;
static char command[64] = "";

int
err_set(int c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	code = c;
	return -1;
}

int
err_sys(int c, const char *fmt, ...)
{
	int saved = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	n = strlen(msg);
	snprintf(msg + n, sizeof msg - n, ": %s", strerror(saved));
	code = c;
	errno = saved;
	return -1;
}

int
err_prefix(const char *fmt, ...)
{
	char head[512], joined[sizeof head + sizeof msg + 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof head, fmt, ap);
	va_end(ap);
	snprintf(joined, sizeof joined, "%s: %s", head, msg);
	memcpy(msg, joined, sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	return -1;
}

const char *
err_msg(void)
{
	return msg[0] ? msg : "unknown error";
}

int
err_code(void)
{
	return code ? code : EXIT_INTERNAL;
}

void
err_clear(void)
{
	msg[0] = '\0';
	code = 0;
}

void
err_set_command(const char *name)
{
	snprintf(command, sizeof command, "%s", name);
}

const char *
err_command(void)
{
	return command;
}

static void
print_line(const char *text)
{
	if (command[0])
		fprintf(stderr, "gpupack: %s: %s\n", command, text);
	else
		fprintf(stderr, "gpupack: %s\n", text);
}

int
err_report(void)
{
	print_line(err_msg());
	return err_code();
}

int
err_die(int c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	code = c;
	return err_report();
}

void
warnx_(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (command[0])
		fprintf(stderr, "gpupack: %s: warning: %s\n", command, line);
	else
		fprintf(stderr, "gpupack: warning: %s\n", line);
}

void
err_save(struct err_saved *e)
{
	e->code = code;
	memcpy(e->msg, msg, sizeof e->msg);
}

int
err_restore(const struct err_saved *e)
{
	code = e->code;
	memcpy(msg, e->msg, sizeof msg);
	return -1;
}
