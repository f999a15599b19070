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
 * Run the control program for d: with daemonize, "-d" and no I/O; else input
 * on its stdin and its stdout (and stderr) into reply. A run that outlives
 * the time limit is killed and reported.
 */
int mps_run_control(const struct mps_daemon *d, const char *input, int daemonize, struct sbuf *reply);
/* A failed `-d`: an error from its first line of output, which says why. */
int mps_start_error(const struct mps_daemon *d, int status);

/* mps_record.c */
int mps_uuid_dir_name(const char *uuid, char *out, size_t size);
int mps_daemon_paths(struct mps_daemon *d, const char *uuid);
int mps_record_write(const struct mps_daemon *d);
int mps_record_read(struct mps_daemon *d);
int mps_pid_matches(const struct mps_daemon *d);
void mps_check_alive(struct mps_daemon *d);
int mps_read_pid_file(const struct mps_daemon *d, pid_t *pid);

/* mps_clients.c */
int mps_count_clients(const struct mps_server *s, int n);

#endif
