/*
 * proc: what /proc says about a process, for deciding whether a pid is still
 * the process gpupack knew. A pid alone is never trusted: processes are
 * named by pid and start time (field 22 of /proc/PID/stat, clock ticks since
 * boot), which together are unique for the life of a boot.
 */
#ifndef GPUPACK_UTIL_PROC_H
#define GPUPACK_UTIL_PROC_H

#include <stddef.h>
#include <sys/types.h>

struct proc_stat {
	pid_t pid, ppid, pgid;
	char state;                  /* R, S, D, Z, ... */
	unsigned long long start;    /* clock ticks since boot */
};

/* Parse the text of /proc/PID/stat (pure, for the tests): 0, or -1 when malformed. */
int proc_parse_stat(const char *text, struct proc_stat *st);
/* /proc/PID/stat of a live process: 0; -1 (no err) when it is gone. A zombie counts as gone. */
int proc_stat(pid_t pid, struct proc_stat *st);
/* Start time of pid; 0 when it does not exist or is a zombie. */
unsigned long long proc_start_time(pid_t pid);
/* Is pid alive and the process that started at start (start 0 never matches)? */
int proc_is(pid_t pid, unsigned long long start);
/* Does pid's environment hold the exact entry "NAME=VALUE"? (our own uid's processes only) */
int proc_has_env(pid_t pid, const char *entry);
/*
 * Could pid's environment not be told? A live process of ours that is no
 * zombie and no kernel thread whose environment reads empty: one between
 * fork and exec's new image (seen when a task forks at the moment it is
 * killed); ask again in a moment.
 */
int proc_env_unknown(const struct proc_stat *st);
/* This boot's id (/proc/sys/kernel/random/boot_id), "" when unknown. */
void proc_boot_id(char *out, size_t size);

/*
 * Call fn for every process of ours (same real uid) in /proc; fn returns
 * nonzero to stop. Returns the count visited, or -1 with err set.
 */
int proc_each(int (*fn)(const struct proc_stat *st, void *arg), void *arg);

#endif
