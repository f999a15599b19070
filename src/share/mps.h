/*
 * mps: private MPS control daemons, one per GPU or MIG device, each in its
 * own pipe and log directory under the state directory. The only code of
 * gpupack that talks to nvidia-cuda-mps-control (src/share/mps*.c).
 *
 * Layout (all 0700, owned by the caller):
 *   <state>/mps/<uuid>/pipe/      CUDA_MPS_PIPE_DIRECTORY
 *   <state>/mps/<uuid>/log/       CUDA_MPS_LOG_DIRECTORY
 *   <state>/mps/<uuid>/daemon     what gpupack knows: pid, device, limits (key=value lines)
 * $GPUPACK_MPS_DIR, when set, replaces <state>/mps: the Slurm plugin starts a
 * job's daemons in a directory of the job and points its tasks there, so that
 * `gpupack run` and `gpupack mps` inside the job find them.
 */
#ifndef GPUPACK_SHARE_MPS_H
#define GPUPACK_SHARE_MPS_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/select.h"
#include "share/ctxcost.h"
#include "util/str.h"
#include "util/units.h"

enum mps_priority { MPS_PRIO_UNSET = -1, MPS_PRIO_NORMAL = 0, MPS_PRIO_LOW = 1 };

struct mps_limits {
	double sm_pct;       /* default active thread percentage; 0: not set */
	uint64_t mem_bytes;  /* default pinned device memory limit per client; 0: not set */
	int priority;        /* enum mps_priority */
};

enum mps_server_state { MPS_SERVER_UNKNOWN, MPS_SERVER_INITIALIZING, MPS_SERVER_ACTIVE, MPS_SERVER_FAULT };

struct mps_client {
	pid_t pid;
	char command[128];
};

struct mps_server {
	pid_t pid;
	int state;            /* enum mps_server_state */
	int nclients;
	struct mps_client *clients;
};

/* The devices of a daemon that serves several (comma-separated UUIDs). */
#define MPS_DEVICES_LEN 1024

/* One managed daemon, as recorded in its state directory. */
struct mps_daemon {
	char uuid[GPU_UUID_LEN];     /* the device it serves (GPU-... or MIG-...), or a set's name */
	char devices[MPS_DEVICES_LEN]; /* what it serves, its CUDA_VISIBLE_DEVICES: uuid, or a set's list */
	int ndevices;                /* 1, or the devices of a set */
	int gpu_index;               /* the driver's index of the (parent) GPU */
	char dir[PATH_MAX];          /* <state>/mps/<uuid> */
	char pipe_dir[PATH_MAX];
	char log_dir[PATH_MAX];
	pid_t pid;                   /* the control daemon */
	struct mps_limits limits;
	int alive;                   /* the daemon answers on its pipe directory */
	unsigned long long start_time; /* of pid, from /proc/PID/stat: guards against pid reuse */
	/* the gpupack run that started it and stops it at its end (pid, start time); 0: none,
	 * a daemon of `gpupack mps start`, kept until stopped */
	pid_t owner_pid;
	unsigned long long owner_start;
};

/* MPS_CONTEXT_RESERVE, what a client's own context takes: share/ctxcost.h */

/* The pinned-memory limit told to MPS for --mem mem_bytes (0: none). */
uint64_t mps_pinned_limit(uint64_t mem_bytes);

/* The control binary: on PATH, or beside the driver (/usr/local/nvidia/bin, /usr/bin). */
int mps_control_path(char *out, size_t size);

/*
 * Start a daemon for t with limits. Already running with the same limits:
 * *started = 0 and d describes it. Running with other limits: an error
 * (EXIT_USAGE) unless restart. Stale state (daemon gone) is cleaned first.
 */
int mps_start(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    int restart, struct mps_daemon *d, int *started);

/*
 * A run that uses d says so until it ends: a shared lock (an open file
 * description lock on <dir>/users, dropped by the kernel however the
 * process dies). The descriptor (close it to stop using d), or -1 (err set).
 * Waits while a last user is stopping d.
 */
int mps_use(const struct mps_daemon *d);
/*
 * Does a process other than the caller use d (mps_use)? 1 yes (or not
 * known); 0 no: with last non-NULL, *last then holds d so that no run
 * starts using it until the caller, having stopped it, closes *last.
 * The caller's own mps_use descriptor must be closed first.
 */
int mps_used_by_others(const struct mps_daemon *d, int *last);

/*
 * mps_start for a run of gpupack (the farm, bench): the record names this
 * process as its owner, so that when it is killed, its watchdog or the next
 * start on the device ends the daemon instead of adopting it.
 */
int mps_start_owned(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    struct mps_daemon *d, int *started);

/*
 * Start a daemon that serves several devices at once, for one program that
 * sees them all (a CUDA process talks to one daemon only): name is its
 * directory (the plugin's are "set-" and a hash), uuids[n] the devices, in
 * the order the program numbers them. The limits apply to each device. As
 * mps_start otherwise.
 */
int mps_start_set(const char *name, const char *const *uuids, int n, const struct mps_limits *lim,
    struct mps_daemon *d, int *started);

/*
 * Stop a daemon: quit, wait for it and its servers, remove its directories.
 * With clients still running, wait up to timeout seconds; then with force,
 * terminate_client each and quit; without force, an error naming the clients.
 */
int mps_stop(struct mps_daemon *d, double timeout, int force);

/*
 * End a daemon that died or stopped answering without asking it anything
 * (it may not answer): SIGKILL its pid and the servers srv[n], each only
 * while its start time matches, and clear its state (pipe, log, record).
 */
int mps_reset(struct mps_daemon *d, const pid_t *srv, const unsigned long long *srv_start, int n);

/* The managed daemon for a device uuid: 0 found (alive or stale), 1 none, -1 error. */
int mps_lookup(const char *uuid, struct mps_daemon *d);
/* Every managed daemon (alive or stale). *out malloc'd. */
int mps_list(struct mps_daemon **out, int *n);

/* Is d's pid its daemon, alive (the recorded, non-zero, start time)? Asks it nothing. */
int mps_pid_alive(const struct mps_daemon *d);

/*
 * Several command lines ("cmd\ncmd\n") in one run of the control program,
 * within the time limit; the replies, in order, into reply. Their words are
 * not checked (mps_command does that for one command).
 */
int mps_commands(const struct mps_daemon *d, const char *lines, struct sbuf *reply);

/* Send one control command and read its reply (the daemon answers then closes). */
int mps_command(const struct mps_daemon *d, const char *cmd, struct sbuf *reply);

/* Servers of a daemon, with state and clients. Free with mps_servers_free. */
int mps_servers(const struct mps_daemon *d, struct mps_server **out, int *n);
void mps_servers_free(struct mps_server *s, int n);

/* terminate_client SERVER CLIENT: end one client's GPU work. */
int mps_terminate_client(const struct mps_daemon *d, pid_t server, pid_t client);

/*
 * The environment a client of d needs, as NAME=VALUE strings written into
 * env[] (at most 6): CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, and,
 * when given (> 0), CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and
 * CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (each device of d) for this client alone.
 * Returns the count.
 * The strings are malloc'd.
 */
int mps_client_env(const struct mps_daemon *d, double sm_pct, uint64_t mem_bytes, char **env);

/*
 * Did a client on this daemon end because of a fatal fault of the server
 * (another client's illegal address and the like)? Looks at the servers'
 * states and at server.log lines written since log_offset (a byte offset
 * recorded when the client started: mps_log_offset()). 1 yes, 0 no, -1 error.
 */
long mps_log_offset(const struct mps_daemon *d);
int mps_fault_since(const struct mps_daemon *d, long log_offset);
/* Only the log's part of that (no control program run): a fatal line since log_offset. 1, 0, -1. */
int mps_log_fatal_since(const struct mps_daemon *d, long log_offset);
/*
 * Does server.log past log_offset name pid as a fault's culprit ("Client
 * {PID: PID, Context: N} encountered a fatal GPU error", driver 580)? 1
 * yes; 0 it names others only; -1 it names none (a log or driver that does
 * not say, a device-side assert; err set on a read error). A fault whose
 * teardown ("All clients belonging to error trigging process PID") names
 * any client but the one named, or that has not been read to its end,
 * names none: on an H200 the server named a training that ran beside the
 * fault, not the process that wrote the illegal address (fault farm k1).
 */
int mps_fault_culprit(const struct mps_daemon *d, long log_offset, pid_t pid);

/* ---- added by engineer "mps" ------------------------------------------ */

/* One row of the daemon's `ps` reply. */
struct mps_ps_row {
	pid_t pid;
	pid_t server;
	char device[GPU_UUID_LEN];
	char command[128];
};

/* A control daemon running on this machine that gpupack did not start (never touched). */
struct mps_foreign {
	pid_t pid;
	char pipe_dir[PATH_MAX];    /* from its environment, "?" when unreadable */
};

/* Limits: valid (sm 0 or 1..100, priority unset/normal/low)? -1 with EXIT_USAGE if not. */
int mps_limits_check(const struct mps_limits *lim);
/* Same effective limits (unset sm = 100, unset priority = normal)? */
int mps_limits_equal(const struct mps_limits *a, const struct mps_limits *b);
/* "sm 25%, mem 1.0 GiB, priority normal" into buf. */
char *mps_limits_format(const struct mps_limits *lim, char *buf, size_t size);
const char *mps_server_state_name(int state); /* "active", "fault", ... */

/* Seconds each control command may take ($GPUPACK_MPS_TIMEOUT, default 10). */
double mps_command_timeout(void);
/* Start time of a process (clock ticks since boot), 0 when it does not exist. */
unsigned long long mps_proc_start_time(pid_t pid);

/* Control daemons gpupack did not start (argv "...nvidia-cuda-mps-control -d"), from /proc. */
int mps_foreign_list(const struct mps_daemon *ours, int nours, struct mps_foreign **out, int *n);

/*
 * Parse a daemon record (key=value lines) into d: every known value checked
 * (a uuid that is not d's own device, a pid or limit out of range: -1 with
 * err set). A pid without its start time is dropped: it could be anyone's.
 */
int mps_record_parse(const char *text, struct mps_daemon *d);

/* Pure parsers of control replies (unit-tested). */
int mps_parse_pids(const char *text, pid_t **out, int *n);       /* one pid a line; others skipped */
int mps_parse_server_state(const char *text);                    /* enum mps_server_state */
int mps_parse_ps(const char *text, struct mps_ps_row **out, int *n);
int mps_reply_is_error(const char *reply);                      /* "Error: ...", "unrecognized" */
int mps_log_line_fatal(const char *line);                       /* a server.log fatal-error line */
long mps_log_line_culprit(const char *line);                    /* the pid a fault line blames; 0 none */
long mps_log_line_torn(const char *line);                       /* the pid a teardown line names; 0 none */

#endif
