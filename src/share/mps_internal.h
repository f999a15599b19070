/*
 * mps_internal.h: what the mps_*.c files share among themselves and nobody
 * else uses: file names inside a daemon's directories, and the helpers one
 * part of the MPS code needs from another. Callers outside src/share/mps*.c
 * use share/mps.h.
 */
#ifndef GPUPACK_SHARE_MPS_INTERNAL_H
#define GPUPACK_SHARE_MPS_INTERNAL_H

#include <stddef.h>

#include "share/mps.h"
#include "util/str.h"

#define CONTROL_NAME "nvidia-cuda-mps-control"
#define PID_FILE "nvidia-cuda-mps-control.pid"
/* what `nvidia-cuda-mps-control -d` printed, kept in the log directory */
#define START_ERR "gpupack-start.out"
/* the longest socket name the daemon creates in its pipe directory */
#define LONGEST_SOCKET "control_privileged"

void mps_sleep_ms(int ms);

/* mps_control.c */
/*
 * Run the control program for d with input on its stdin, its stdout (and
 * stderr) into reply. A run that outlives the time limit is killed and
 * reported: a hung daemon cannot hang gpupack.
 */
int mps_run_control(const struct mps_daemon *d, const char *input, struct sbuf *reply);
/*
 * Run "-d" for d; what it says goes to a file in its log directory, logfd.
 * launch: a value for MPS_LAUNCH_VAR in its environment, which every
 * process of this start inherits (share/mps.c finds them by it).
 */
#define MPS_LAUNCH_VAR "GPUPACK_MPS_LAUNCH"
int mps_run_daemon(const struct mps_daemon *d, int logfd, const char *launch);
/* A failed `-d`: an error from its first line of output (in logfd), which says why. */
int mps_start_error(const struct mps_daemon *d, int logfd, int status);

/* mps_record.c */
int mps_uuid_dir_name(const char *uuid, char *out, size_t size);
int mps_daemon_paths(struct mps_daemon *d, const char *uuid);
/*
 * The daemon's directory as a descriptor, each component opened relative to
 * the one before without following a symlink, and checked private (create:
 * make what is missing). *base, when not NULL, gets the directory above it.
 * -1 with err set; without create a missing one is errno ENOENT.
 */
int mps_dir_fd(const struct mps_daemon *d, int create, int *base);
/* The record inside the daemon's directory dirfd: write; read (1: there is none). */
int mps_record_write(const struct mps_daemon *d, int dirfd);
int mps_record_read(struct mps_daemon *d, int dirfd);
/* Is d's pid its daemon (the recorded, non-zero, start time)? */
int mps_pid_matches(const struct mps_daemon *d);
void mps_check_alive(struct mps_daemon *d);
/* The pid the daemon wrote in its pipe directory pipefd: 0, or 1 when none (yet). */
int mps_read_pid_file(const struct mps_daemon *d, int pipefd, pid_t *pid);

/* mps_clients.c */
int mps_count_clients(const struct mps_server *s, int n);

#endif
