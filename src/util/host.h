/*
 * host: the machine's own load, as the farm's controller reads it: how busy
 * its CPUs are (/proc/stat) and how much memory is still available
 * (MemAvailable in /proc/meminfo). $GPUPACK_PROC_DIR makes both come from
 * another directory holding files of the same format (the tests' simulated
 * host).
 */
#ifndef GPUPACK_UTIL_HOST_H
#define GPUPACK_UTIL_HOST_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Cumulative CPU time of the CPUs this process may run on (its affinity:
 * taskset, a Slurm job's cpuset; else the whole machine), in clock ticks,
 * and their count.
 */
struct host_cpu {
	unsigned long long busy, total;
	int ncpu;               /* cpuN lines: online CPUs (of the mask) */
};

/* Read the counters; -1 (err set) when /proc/stat cannot be read or parsed. */
int host_cpu_read(struct host_cpu *c);
/* The same from /proc/stat's text: the CPUs in mask only (NULL or none of them listed: all). */
int host_cpu_parse(const char *data, const cpu_set_t *mask, struct host_cpu *c);
/* Busy share 0..1 of all CPUs between two readings; -1 when no time passed. */
double host_cpu_busy(const struct host_cpu *before, const struct host_cpu *after);
/* MemAvailable in bytes; -1 (err set) when it cannot be read. */
int host_mem_available(uint64_t *bytes);
/*
 * CPU time a process and its descendants used (seconds: theirs, and their
 * children's that were waited for) and the time their main threads waited
 * ready to run for a CPU (*wait, seconds; -1 where the kernel does not keep
 * it: no /proc/PID/schedstat). -1 when the process is gone. Under
 * $GPUPACK_PROC_DIR, that directory's PID/stat and PID/schedstat.
 */
int host_task_cpu(pid_t pid, double *cpu, double *wait);
/*
 * Does a process or one of its descendants hold a file lock (flock, POSIX
 * or OFD: /proc/locks, always the real one)? 1 yes, 0 no, -1 unknown. A
 * stopped process that holds one could stop others.
 */
int host_tree_locks(pid_t pid);
/*
 * Wait up to timeout seconds for a process and its descendants to be
 * stopped (a signal's delivery is not done when kill returns): 1 when all
 * are, 0 otherwise.
 */
int host_tree_stopped(pid_t pid, double timeout);
/* The process group of a live process (from the real /proc, never $GPUPACK_PROC_DIR); -1 if gone. */
pid_t host_pgid(pid_t pid);

#endif
