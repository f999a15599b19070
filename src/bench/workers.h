/*
 * workers: start a group of worker processes (argv, no shell), collect the
 * one JSON line each prints, and wait for all of them. Each worker gets its
 * own process group, so that a Ctrl-C on the terminal reaches bench alone
 * and bench ends the workers itself (MPS clients killed by a stray signal
 * can leave the server in a bad state).
 */
#ifndef GPUPACK_BENCH_WORKERS_H
#define GPUPACK_BENCH_WORKERS_H

#include <stddef.h>
#include <sys/types.h>

struct wspec {
	char **argv;          /* argv[0] is the program's path */
	char **env;           /* the whole environment */
};

struct wresult {
	pid_t pid;
	int status;           /* as waitpid gives it */
	char *out;            /* stdout (its last MiB), malloc'd */
	char *err;            /* the first bytes of stderr (malloc'd) */
	double t_spawn;       /* epoch seconds just before the spawn */
};

/*
 * Run n workers at once and wait for them all, at most timeout seconds.
 * 0 when every worker ran and was reaped (whatever its exit status);
 * -1 with err set when one could not start, the time ran out, or
 * bench_interrupted was set (the workers are then killed and reaped).
 */
int workers_run(const struct wspec *spec, int n, double timeout, struct wresult *res);
void wresults_free(struct wresult *res, int n);

/*
 * The same in steps, so that a group can be left exiting while the next one
 * sets up. A worker prints its line and then spends a while tearing its CUDA
 * context down; the runner reads the lines, starts the next group, and only
 * then waits for this one to be gone.
 */
struct wgroup;
/* Start n workers; NULL with err set (any already started are ended). */
struct wgroup *wgroup_start(const struct wspec *spec, int n);
/* Until every worker printed a whole line on stdout or closed it; -1 (all ended) on timeout. */
int wgroup_lines(struct wgroup *g, double timeout);
/* The same for the first n workers only. */
int wgroup_lines_n(struct wgroup *g, int n, double timeout);
/*
 * Until every worker closed its pipes and was reaped (serve workers: their
 * input is closed first, which ends them); -1 (all ended) on timeout or
 * interrupt.
 */
int wgroup_wait(struct wgroup *g, double timeout);

/*
 * Serve workers (gpupack-work serve): started like the above but with a
 * pipe on stdin, so that one process runs many commands. wgroup_send()
 * forgets the worker's output (and stderr) so far and writes one command line (with its
 * newline) to it; wgroup_lines_n() then waits for the answers.
 */
struct wgroup *wgroup_serve(const struct wspec *spec, int n);
int wgroup_send(struct wgroup *g, int i, const char *line);
int wgroup_size(const struct wgroup *g);
/* Reap, without waiting, whatever ended; how many have ended so far. */
int wgroup_ended(struct wgroup *g);
/* Has worker i ended (reaped; its status is in the results)? */
int wgroup_reaped(const struct wgroup *g, int i);
/* The output so far (out, err owned by the group); status is valid once wgroup_wait returned 0. */
const struct wresult *wgroup_results(struct wgroup *g);
/* Close the inputs, end (SIGTERM, then SIGKILL) and reap whatever still runs; free. NULL is fine. */
void wgroup_free(struct wgroup *g);
/* The first line of s into buf (for one-line error messages); returns buf. */
const char *workers_first_line(const char *s, char *buf, size_t size);

/* The current environment without the variables that pick a device or an MPS daemon. */
char **env_clean(void);
/* Append NAME=VALUE (taken over) to a malloc'd env array. */
char **env_add(char **env, char *kv);
void env_free(char **env);


#endif
