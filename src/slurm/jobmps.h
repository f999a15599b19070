/*
 * jobmps: a Slurm job's MPS daemons on one node, without Slurm: what the
 * plugin's job_prolog, job_epilog and task_init call (src/slurm/spank.c),
 * and what the GPU check drives directly (tests/tools/jobmps-driver.c).
 *
 * At the job's start (root): clean what ended jobs left, make the job's
 * directory, and, in a child that has become the job's user for good, start
 * one private daemon per device of the job with its limits. At its end
 * (root): the same child quits them (clients get a grace period, then are
 * terminated), then root ends whatever of the job's MPS is left and removes
 * the directory. For each task (as the user): the environment that points
 * it at the daemon of the devices it sees.
 */
#ifndef GPUPACK_SLURM_JOBMPS_H
#define GPUPACK_SLURM_JOBMPS_H

#include <sys/types.h>

#include "slurm/jobconf.h"
#include "slurm/jobdir.h"

struct jobmps_job {
	unsigned long jobid;
	uid_t uid;
	gid_t gid;
	const char *node;        /* SLURMD_NODENAME: for %n in state= */
	const char *gpus;        /* SLURM_JOB_GPUS: Slurm's global indices of the job's GPUs here */
	const char *visible;     /* CUDA_VISIBLE_DEVICES of the prolog (MIG devices come as UUIDs) */
};

/*
 * Start the job's daemons. 0 done; -1 with err set: one line saying what
 * failed, also kept in the job's record for its tasks (nothing of the job's
 * MPS is left running then).
 */
int jobmps_prolog(const struct jobmps_conf *c, const struct jobmps_job *j, const struct mps_limits *lim);

/*
 * The prolog of a job that has no MPS here: remove what jobs that are over
 * left (jobdir_clean_leftovers), when the state root exists. The count
 * cleaned; -1 with err set.
 */
int jobmps_sweep(const struct jobmps_conf *c, const struct jobmps_job *j);

/* How the prolog and the sweep ask whether Slurm still runs a job here (jobdir.h). */
void jobmps_set_running_check(jobdir_running_fn fn);

/* Stop the job's daemons and remove its directory. 0 done (also when there was nothing). */
int jobmps_epilog(const struct jobmps_conf *c, const struct jobmps_job *j);

/* What a task's environment gets (NAME=VALUE strings, malloc'd). */
#define JOBMPS_TASK_ENV 8
struct jobmps_env {
	char *set[JOBMPS_TASK_ENV];
	int n;
};
void jobmps_env_free(struct jobmps_env *e);

/*
 * The environment of one task that sees visible (its CUDA_VISIBLE_DEVICES as
 * Slurm set it; NULL or empty: no GPU) of the step's GPUs step_gpus
 * (SLURM_STEP_GPUS, else SLURM_JOB_GPUS). Runs as the job's user. One
 * device: its daemon; several: a daemon serving them all, started now if it
 * is not there yet. spec: the step's own --gpupack-mps (NULL: none): its
 * limits become the task's own as an MPS client, which can only lower the
 * job's daemons' (a higher one is an error, EXIT_USAGE); off: the task runs
 * without MPS (returns 1). Returns 1 when the job has no MPS here (no
 * record), 0 with *e filled, -1 with err set (also when the job's daemons
 * failed to start: err is that line).
 */
int jobmps_task_env(const struct jobmps_conf *c, const struct jobmps_job *j, const char *visible,
    const char *step_gpus, const struct jobmps_spec *spec, struct jobmps_env *e);

/* Where the plugin's log lines go (slurmd's log); default stderr. */
void jobmps_set_logger(void (*fn)(const char *line));
void jobmps_log(const char *line);

/* Parse "0,1,3" / "GPU-...,MIG-..." into at most max malloc'd items; the count, -1 with err set. */
int jobmps_split_list(const char *s, char **items, int max);

/*
 * How this site numbers tasks' CUDA_VISIBLE_DEVICES: local (from 0 within
 * the step) when slurm.conf's TaskPlugin has task/cgroup and cgroup.conf
 * says ConstrainDevices=yes, as Slurm decides it; else global. slurm_conf is
 * the path of slurm.conf (cgroup.conf beside it).
 */
int jobmps_index_mode(const char *slurm_conf);

#endif
