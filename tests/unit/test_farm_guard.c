/*
 * test_farm_guard: the watchdog's sweep of a killed run (farm/guard.h):
 * when it stops looking (a pure rule), and a real sweep that kills a
 * process carrying the run's token.
 */
#include "tap.h"
#include "farm/guard.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void
test_stop_rule(void)
{
	ok(!guard_sweep_done(1, 0, 0, -1, 0), "a look that killed one looks again");
	ok(!guard_sweep_done(3, 2, 7, 2, 7), "killing goes on while anything is killed");
	ok(guard_sweep_done(0, 0, 0, -1, 0), "nothing killed, every environment read: done");
	ok(!guard_sweep_done(0, 1, 42, -1, 0), "one unreadable at the first look: look again");
	ok(!guard_sweep_done(0, 1, 42, 1, 41), "a new unreadable one (the set moved): look again");
	ok(!guard_sweep_done(0, 2, 42, 1, 42), "one more unreadable than before: look again");
	/* a non-dumpable process of ours (ssh, an agent) stays unreadable: waiting tells nothing */
	ok(guard_sweep_done(0, 1, 42, 1, 42), "the same unreadable ones twice: done");
	ok(guard_sweep_done(0, 0, 0, 3, 99), "the unreadable ones became readable and clean: done");
}

static void
test_real_sweep(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		char *envp[] = {"GPUPACK_RUN=test-guard-token", NULL};
		char *argv[] = {"sleep", "30", NULL};

		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	ok(pid > 0, "a process carrying the token");
	/* until it runs sleep (its environment is the token's from then on) */
	for (int i = 0; i < 2000 && guard_kill_run("GPUPACK_RUN=test-guard-token", NULL, NULL, 0) == 0; i++)
		usleep(1000);
	ok(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "the sweep killed it with SIGKILL");
	is_int(guard_kill_run("GPUPACK_RUN=test-guard-token", NULL, NULL, 0), 0, "then nothing is left");
}

int
main(void)
{
	test_stop_rule();
	test_real_sweep();
	return done_testing();
}
