/*
 * stop: the verdict on a task that ended around a stop of the farm, and
 * when a farm short of processes tries again (farm/stop.h says the rules).
 */
#include "farm/stop.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

int
stop_is_signal(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGUSR1 || sig == SIGKILL;
}

int
stop_like(int status)
{
	if (WIFSIGNALED(status))
		return stop_is_signal(WTERMSIG(status));
	/* a shell whose child the signal killed exits 128 + its number */
	return WIFEXITED(status) && WEXITSTATUS(status) > 128 && stop_is_signal(WEXITSTATUS(status) - 128);
}

enum stop_verdict
stop_verdict(int status, double ended, double stop_at, double now, double *until)
{
	if (!stop_like(status))
		return STOP_RECORD;
	if (stop_at > 0)
		return stop_at <= ended + STOP_GRACE ? STOP_DROP : STOP_RECORD;
	if (now >= ended + STOP_GRACE)
		return STOP_RECORD;
	*until = ended + STOP_GRACE;
	return STOP_WAIT;
}

int
stop_shortage(int e)
{
	return e == EAGAIN || e == ENOMEM || e == EMFILE || e == ENFILE;
}

double
stop_backoff(int n, double since, double now, int running)
{
	double wait = 0.05;

	if (!running && now - since >= STOP_SHORT_WAIT)
		return 0;
	for (int i = 1; i < n && wait < 1.0; i++)
		wait *= 2;
	return now + (wait < 1.0 ? wait : 1.0);
}
