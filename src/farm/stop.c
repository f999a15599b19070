/*
 * stop: the verdict on a task that ended around a stop of the farm
 * (farm/stop.h says the rule and why).
 */
#include "farm/stop.h"

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
