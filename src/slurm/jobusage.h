/*
 * jobusage: what a Slurm job used of its GPUs on one node: the energy of
 * each GPU over the job and the peak memory on each, each figure exact,
 * estimate or unknown (gpu/usage.h says how).
 *
 * The prolog (root) starts a sampler for the job: a process of its own,
 * outside the job's steps, that reads each of the job's GPUs' energy
 * counter at once (the job's start), then the counter and the device's
 * processes (memory of those whose environment has SLURM_JOB_ID=<job>)
 * until told to stop. The epilog stops it; the sampler reads the counters
 * a last time and writes its figures to <state root>/<job>.usage; the
 * epilog reads them, logs one line (jobmps_log: slurmd's log) and removes
 * the file.
 */
#ifndef GPUPACK_SLURM_JOBUSAGE_H
#define GPUPACK_SLURM_JOBUSAGE_H

#include <stddef.h>

#include "slurm/jobconf.h"
#include "slurm/jobmps.h"

/*
 * How jobusage_start asks whether Slurm still runs a job here (jobdir.h):
 * it first ends the samplers of jobs that are over (no epilog ran) and an
 * earlier run's of this job (a requeue). Unset: only this job's.
 */
void jobusage_set_running_check(jobdir_running_fn fn);

/* Start the job's sampler (root's prolog). 0 started; 1 no GPU here; -1 with err set. */
int jobusage_start(const struct jobmps_conf *c, const struct jobmps_job *j);

/*
 * Stop it and log what it saw (the epilog). line gets the logged line
 * (without the "job N" prefix the log adds). 0 logged; 1 no sampler for
 * the job here (it had no GPU, or its prolog did not start one); -1 with
 * err set.
 */
int jobusage_stop(const struct jobmps_conf *c, const struct jobmps_job *j, char *line, size_t size);

/*
 * The figures so far, brief ("gpu 0 12.3J exact 512MiB estimate; ..."),
 * while the sampler runs on (a step's end). 0 done; 1 no sampler for the
 * job here; -1 with err set.
 */
int jobusage_now(const struct jobmps_conf *c, const struct jobmps_job *j, char *line, size_t size);

#endif
