/*
 * mpsfarm: the farm's use of MPS daemons (share/mps.h): one per device of
 * the run, started privately where none of gpupack's runs, stopped at the
 * end; each client's environment; telling a task that failed because of
 * another client's fault; restarting a server that stays in FAULT.
 */
#ifndef GPUPACK_FARM_MPSFARM_H
#define GPUPACK_FARM_MPSFARM_H

#include <stddef.h>
#include <sys/types.h>

#include "farm/slot.h"

/* Is MPS available here (the control binary found)? The default share mode depends on it. */
int farm_mps_available(void);
/* Find or start a daemon for every group. -1 with err set (daemons started so far are stopped). */
int farm_mps_setup(struct group *g, int ng);
/* Stop the daemons this run started. */
void farm_mps_teardown(struct group *g, int ng);
/* The client environment for a task on g (malloc'd strings into env[6]); the count. */
int farm_mps_env(const struct group *g, double sm_pct, uint64_t mem, char **env);
long farm_mps_log_offset(const struct group *g);
/* Did a fault of the server end a task that started at log offset off? 1 yes, 0 no. */
int farm_mps_fault(const struct group *g, long off);
/*
 * A fault in its server's log not seen yet (read from since, the oldest
 * running task's log offset, or from where the last look ended): 1 and
 * g->h.fault_last = now; 0 none.
 */
int farm_mps_fault_news(struct group *g, long since, double now);
/*
 * Leave g's driver alone now (no NVML reading of its device): 1 within
 * FARM_FAULT_QUIET seconds of a fault in its server's log (looked for
 * first, from since) and while its server is known in FAULT. On an H200
 * (fault farm f3) gpupack's own reading, taken while the driver tore an
 * illegal address's clients down, waited 60 s in the driver (state D,
 * os_acquire_mutex) with the 30 clients beside it; the same farm at -j 16,
 * which read nothing, and GNU parallel's saw the clients gone within 2 s.
 */
int farm_mps_quiet(struct group *g, long since, double now);
/* Does its server's log since off name pid as a fault's culprit? 1 yes, 0 others only, -1 none. */
int farm_mps_culprit(const struct group *g, long off, pid_t pid);
/* terminate_client every client in process group pgid (before it is signalled). */
void farm_mps_terminate(const struct group *g, pid_t pgid);
/*
 * 1 while g should not take new tasks: its daemon is down (health.c), or
 * after a fault its server is still in FAULT. A server in FAULT with no
 * tasks of ours for longer than FARM_FAULT_RESTART seconds is restarted
 * (our daemons only).
 */
int farm_mps_blocked(struct group *g, double now);
/*
 * 1 when g's server has stayed in FAULT for longer than FARM_FAULT_RESTART
 * seconds after a fault while tasks of ours still run on it: a server in
 * FAULT waits for its clients to leave (NVIDIA's MPS guide), and a client
 * whose work the fault stopped may never leave. health.c then ends them
 * and reruns them as for any fault of the device.
 */
int farm_mps_stuck(struct group *g, double now);
/* Is g's daemon process alive (pid and start time; asks it nothing)? If not, why says so. */
int farm_mps_alive(const struct group *g, char *why, size_t size);
/*
 * Is g's daemon well? It must be alive, answer the control program within
 * the time limit ($GPUPACK_MPS_TIMEOUT), and the server that served our
 * running tasks must still be there. 0 yes; -1 no, with why (one phrase);
 * -2 where the daemon is alive but did not answer in time (why says so).
 */
int farm_mps_probe(struct group *g, char *why, size_t size);
/* End what is left of g's daemon and start it again (the same limits, the same owner). */
int farm_mps_restart(struct group *g);

#endif
