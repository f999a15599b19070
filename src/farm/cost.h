/*
 * cost: what sharing a GPU costs, in one place, for packing.
 *
 * The figures are defaults until measured on the lent card (tests/gpu/farm.sh
 * prints them; doc/run.md records each measurement with its date and GPU):
 *  - FARM_CTX_OVERHEAD, FARM_MPS_SERVER_MEM: a task's context and an MPS
 *    server, from share/ctxcost.h (the one place for context costs: run
 *    --mem SIZE is what the task may allocate; packing adds these, and under
 *    MPS the client's pinned limit is SIZE plus MPS_CONTEXT_RESERVE).
 *  - FARM_MPS_MAX_CLIENTS: client contexts one MPS server accepts per device
 *    up to CUDA 13.0 (NVIDIA's MPS guide; 60 on later releases). On a MIG
 *    device, proportional to its compute slices out of FARM_MIG_SLICES.
 */
#ifndef GPUPACK_FARM_COST_H
#define GPUPACK_FARM_COST_H

#include "share/ctxcost.h"
#include "util/units.h"

#define FARM_CTX_OVERHEAD    CTX_PACK_MEM
#define FARM_MPS_SERVER_MEM  MPS_SERVER_MEM
#define FARM_MPS_MAX_CLIENTS 48
#define FARM_MIG_SLICES      7

/*
 * Tasks per device where -j gives none: exclusive 1; the others are under
 * -j auto, which starts from these counts (the fixed defaults before auto)
 * unless a past run of the same command left a count to start from.
 */
#define FARM_JOBS_EXCLUSIVE  1
#define FARM_JOBS_TIMESLICE  2
#define FARM_JOBS_MPS        4
/* -j 0 (GNU parallel: as many as possible): memory and the MPS client limit bound it */
#define FARM_JOBS_MAX        100000
/* -j auto's own cap per device where -j auto:N gives none (MPS: its client limit first). */
#define FARM_AUTO_MAX        64
/* The largest N of -j auto:N. */
#define FARM_AUTO_MAX_LIMIT  1024

/* Seconds between SIGTERM and SIGKILL when a task is ended. */
#define FARM_KILL_GRACE      2.0
/*
 * Under MPS, seconds between terminate_client and SIGTERM: the client's GPU
 * work is ended by its server first (a client killed in the middle of GPU
 * work can leave the server in a bad state), then its processes.
 */
#define FARM_MPS_TERM_WAIT   1.0
/* Seconds an MPS server may stay in FAULT with no clients before it is restarted. */
#define FARM_FAULT_RESTART   10.0
/*
 * Reruns a task gets for free when a fault was around its failure (farm/
 * verdict.h, rule 5): the server cannot say which client faulted, so a
 * neighbour runs again beside the others, then, if it fails beside a fault
 * that took others too, alone. Bounded: the culprit faults each time.
 */
#define FARM_FAULT_RETRIES   2
/*
 * Reruns for gpupack's own reasons (not the task's: a node lost with it, ...)
 * do not spend --retries; each task gets at most this many, so that nothing
 * loops forever.
 */
#define FARM_OWN_RERUNS      3
/*
 * Seconds without any CPU time after which a client that ran beside a
 * contained fault counts as hung by it, and is ended and run again (no
 * --retries spent). Seen on an H200 (driver 580): five PyTorch clients
 * beside a device-side assert sat in a futex wait for good, no CPU, their
 * memory held, the server ACTIVE. A working PyTorch client keeps a core
 * busy; only the minutes after a fault beside it are watched.
 */
#define FARM_FAULT_HANG      10.0
/*
 * Seconds after a fault (a client said one, or the server logged one) during
 * which a control daemon that does not answer is taken as busy tearing the
 * fault's clients down, not as hung: nothing is killed and it is not
 * restarted; asked again at the next probe. Seen on an H200 (driver 580): the
 * daemon silent more than 10 s after an illegal address; restarting it then
 * killed 11 clients that were running on and cost the farm about 50 s.
 */
#define FARM_FAULT_GRACE     60.0
/* Seconds after an MPS fault in which -j auto does not read the device (auto.c fault_quiet). */
#define FARM_FAULT_QUIET     10.0
/* Seconds after a contained fault during which its neighbours are watched. */
#define FARM_FAULT_WATCH     300.0
/*
 * MPS health (health.c): a device's daemon is asked this often whether it
 * is well while tasks run on it, and restarted at most this many times in
 * one run ($GPUPACK_MPS_RESTARTS) before the run stops.
 */
#define FARM_MPS_PROBE       1.0
#define FARM_MPS_RESTARTS    3
/*
 * In the first seconds after a task starts where no server is known yet,
 * the daemon is asked more often: a server is only known once it was seen,
 * and one that dies before that cannot be told from no server at all (on
 * a loaded 2-core machine a client took over 2 s to reach its server, and
 * a server killed within its first second went unnoticed: its clients'
 * failures were charged to them).
 */
#define FARM_MPS_PROBE_FAST  0.1
#define FARM_MPS_FAST_FOR    10.0

#endif
