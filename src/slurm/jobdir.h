/*
 * jobdir: the plugin's files on a node, and what root does with them.
 *
 *   <root>/                 0755, root's, not writable by others: state=
 *   <root>/.lock            held while a prolog, an epilog or a cleanup runs
 *   <root>/<jobid>.job      root's record of the job (0644): its user, the
 *                           boot it ran in, its limits, its devices (Slurm's
 *                           id -> UUID), and whether its daemons started
 *   <root>/<jobid>/         0700, the job user's: the job's GPUPACK_MPS_DIR,
 *                           one daemon directory per device (share/mps.h)
 *
 * The record sits outside the user's directory so that the user cannot
 * change what root later reads. Root never signals a process named by a
 * file the user can write: a job's processes are found by their uid and by
 * the pipe directory in their environment.
 */
#ifndef GPUPACK_SLURM_JOBDIR_H
#define GPUPACK_SLURM_JOBDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "gpu/backend.h"
#include "share/mps.h"

/* The most devices (GPUs or MIG devices) one job has on one node. */
#define JOBMPS_MAX_GPUS 64

struct jobrec {
	unsigned long jobid;
	uid_t uid;
	gid_t gid;
	char boot[64];               /* /proc/sys/kernel/random/boot_id when it was written */
	int failed;                  /* the daemons did not start */
	char error[512];             /* why, one line */
	int index;                   /* how tasks' numeric CUDA_VISIBLE_DEVICES count (enum jobmps_index) */
	struct mps_limits lim;
	int ngpus;
	struct {
		char id[GPU_UUID_LEN];   /* as Slurm names it: a global index ("2") or a UUID */
		char uuid[GPU_UUID_LEN]; /* the device the daemon serves */
	} gpu[JOBMPS_MAX_GPUS];
};

/* Make sure root exists, is a directory, root's and not writable by others. */
int jobdir_root(const char *root);
/* Take <root>/.lock (blocks); the descriptor to give to jobdir_unlock. */
int jobdir_lock(const char *root);
void jobdir_unlock(int fd);

/* <root>/<jobid> into out. */
int jobdir_path(const char *root, unsigned long jobid, char *out, size_t size);
/* (Re)create the job's directory, empty, 0700, owned by uid:gid. */
int jobdir_create(const char *root, unsigned long jobid, uid_t uid, gid_t gid);

int jobrec_write(const char *root, const struct jobrec *r);
/* 0 read, 1 no record, -1 error. */
int jobrec_read(const char *root, unsigned long jobid, struct jobrec *r);

/*
 * End every process of uid whose CUDA_MPS_PIPE_DIRECTORY lies in dir:
 * SIGKILL, then wait for them (a few seconds). The count found.
 */
int jobdir_kill(const char *dir, uid_t uid);
/* Remove the job's directory and record (never following a symlink). */
int jobdir_remove(const char *root, unsigned long jobid);

/*
 * Does Slurm run job jobid on this node now (a step, or the job between its
 * prolog and its first step)? 1 yes, 0 no, -1 cannot tell. The plugin asks
 * slurmctld (src/slurm/spank.c); without one, -1.
 */
typedef int (*jobdir_running_fn)(unsigned long jobid);

/*
 * Before a job starts (every job, whatever it asked): remove what jobs that
 * are over left in root. A job is over when its record is from another boot
 * (the node crashed: nothing of it can run), or when no slurmstepd of it
 * runs here and Slurm says it does not run here (its epilog never ran: the
 * node was set down and slurmd came back late), or, when Slurm cannot be
 * asked, none of its MPS processes lives either. A job that runs is never
 * touched. The number of jobs cleaned.
 */
int jobdir_clean_leftovers(const char *root, unsigned long current, jobdir_running_fn running,
    char *swept, size_t size);
/*
 * A state root without %n is one node's: the first node that uses it
 * claims it (root/.node); another node's name there means several slurmd
 * share it (Debian's MULTIPLE_SLURMD), and then one node's sweep would end
 * another's jobs: -1 with the line that says to give state= a %n.
 */
int jobdir_claim(const char *root, const char *node, const char *state);

/* This boot's id into out ("" when unknown). */
void jobdir_boot_id(char *out, size_t size);

#endif
