/*
 * spawn: start one task: its own process group, its environment, its
 * output descriptors, stdin from /dev/null, and death with gpupack.
 */
#ifndef GPUPACK_FARM_SPAWN_H
#define GPUPACK_FARM_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

struct spawn_req {
	const char *path;        /* resolved executable; NULL: not found (the task exits 127) */
	char *const *argv;
	char *const *envp;
	int fd_in, fd_out, fd_err; /* become 0, 1, 2 */
	/*
	 * When path is not a shell and execve says ENOEXEC (a script without
	 * "#!"), sh_argv runs instead (the shell with -c and the line), as the
	 * shell would have run it. NULL: none.
	 */
	const char *sh;
	char *const *sh_argv;
	const char *dir;         /* --wd: the task's working directory; NULL: gpupack's */
	int nice;                /* --nice: the task's niceness (setpriority); 0: inherited */
};

/* Start it; the pid (also its process group id), or -1 with err set. */
pid_t spawn_task(const struct spawn_req *r);

/*
 * Find name as execvp would (a name with a '/' is taken as it is) into
 * out[size]; -1 when there is no such executable.
 */
int spawn_resolve(const char *name, char *out, size_t size);

/*
 * The environment: environ without the names the farm sets (keys, each
 * "NAME="), then extra. A NULL-terminated array of borrowed pointers; free
 * the array only.
 */
char **spawn_env(char *const *extra, int nextra, const char *const *keys, int nkeys);

#endif
