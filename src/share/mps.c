/*
 * mps: private MPS control daemons. The only file that runs
 * nvidia-cuda-mps-control, always as the documented client (a command on its
 * stdin, the reply on its stdout), never through its socket protocol, which
 * NVIDIA does not document and may change. Every run of the control program
 * has a time limit, so a hung daemon cannot hang gpupack.
 *
 * What gpupack knows about a daemon lives in <state>/mps/<dir>/daemon as
 * key=value lines. The daemon's pid is trusted only together with its start
 * time (field 22 of /proc/PID/stat), so a recycled pid is never signalled.
 * A lock file in the same directory serializes start and stop of one device.
 */
#include "share/mps.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CONTROL_NAME "nvidia-cuda-mps-control"
#define PID_FILE "nvidia-cuda-mps-control.pid"
/* what `nvidia-cuda-mps-control -d` printed, kept in the log directory */
#define START_ERR "gpupack-start.out"
/* the longest socket name the daemon creates in its pipe directory */
#define LONGEST_SOCKET "control_privileged"

static int stop_daemon(struct mps_daemon *d, double timeout, int force);

static const char *const control_dirs[] = {
	"/usr/local/nvidia/bin", "/usr/bin", "/usr/local/cuda/bin", NULL,
};

/* ---- small helpers ---------------------------------------------------- */

static void
sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

double
mps_command_timeout(void)
{
	const char *s = getenv("GPUPACK_MPS_TIMEOUT");
	double v;

	if (s && *s && parse_double(s, &v) == 0 && v > 0)
		return v;
	err_clear();
	return 10.0;
}

static int
is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int
mps_control_path(char *out, size_t size)
{
	const char *env = getenv("GPUPACK_MPS_CONTROL");
	const char *path = getenv("PATH");

	if (env && *env) {
		if (!is_executable(env))
			return err_set(EXIT_ENV, "GPUPACK_MPS_CONTROL=%s is not an executable file", env);
		str_copy(out, env, size);
		return 0;
	}
	if (path) {
		char *copy = xstrdup(path), *save = NULL;

		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			if ((size_t)snprintf(out, size, "%s/%s", *d ? d : ".", CONTROL_NAME) < size &&
			    is_executable(out)) {
				free(copy);
				return 0;
			}
		}
		free(copy);
	}
	for (int i = 0; control_dirs[i]; i++)
		if ((size_t)snprintf(out, size, "%s/%s", control_dirs[i], CONTROL_NAME) < size &&
		    is_executable(out))
			return 0;
	out[0] = '\0';
	return err_set(EXIT_ENV, CONTROL_NAME " not found on PATH nor in /usr/local/nvidia/bin, "
	    "/usr/bin, /usr/local/cuda/bin (install the driver's utilities or set GPUPACK_MPS_CONTROL)");
}

/* Start time of a process in clock ticks since boot; 0 when it is gone or a zombie. */
unsigned long long
mps_proc_start_time(pid_t pid)
{
	char path[64], *data = NULL, *p;
	unsigned long long t = 0;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_file(path, &data, NULL) < 0) {
		err_clear();
		return 0;
	}
	/* the command name may hold spaces and ')': fields start after the last ')' */
	p = strrchr(data, ')');
	/* a zombie (Z) or dead (X) process runs nothing: it counts as gone */
	if (p && (p[1] != ' ' || p[2] == 'Z' || p[2] == 'X'))
		p = NULL;
	if (p) {
		int field = 2;

		for (p++; *p && field < 22; p++)
			if (*p == ' ')
				field++;
		t = strtoull(p, NULL, 10);
	}
	free(data);
	return t;
}

/* A device uuid as a directory name: letters, digits, '-' kept; anything else '_'. */
static int
uuid_dir_name(const char *uuid, char *out, size_t size)
{
	size_t n = strlen(uuid);

	if (n == 0 || n >= size || n >= GPU_UUID_LEN)
		return err_set(EXIT_USAGE, "device uuid '%s' is empty or too long", uuid);
	for (size_t i = 0; i < n; i++)
		out[i] = (isalnum((unsigned char)uuid[i]) || uuid[i] == '-') ? uuid[i] : '_';
	out[n] = '\0';
	if (out[0] == '-' || out[0] == '_')
		return err_set(EXIT_USAGE, "device uuid '%s' is not a device uuid", uuid);
	return 0;
}

static int
daemon_paths(struct mps_daemon *d, const char *uuid)
{
	char name[GPU_UUID_LEN], base[PATH_MAX];

	if (uuid_dir_name(uuid, name, sizeof name) < 0)
		return -1;
	if (state_dir("mps", base, sizeof base) < 0)
		return -1;
	str_copy(d->uuid, uuid, sizeof d->uuid);
	if ((size_t)snprintf(d->dir, sizeof d->dir, "%s/%s", base, name) >= sizeof d->dir ||
	    (size_t)snprintf(d->pipe_dir, sizeof d->pipe_dir, "%s/pipe", d->dir) >= sizeof d->pipe_dir ||
	    (size_t)snprintf(d->log_dir, sizeof d->log_dir, "%s/log", d->dir) >= sizeof d->log_dir)
		return err_set(EXIT_ENV, "state directory path too long");
	return 0;
}

/* ---- the daemon record ------------------------------------------------ */

static int
record_write(const struct mps_daemon *d)
{
	char path[PATH_MAX + 16];
	struct sbuf b;
	int rc;

	sbuf_init(&b);
	sbuf_printf(&b, "uuid=%s\ngpu_index=%d\npid=%ld\nstart_time=%llu\nsm_pct=%.17g\n"
	    "mem_bytes=%llu\npriority=%d\n", d->uuid, d->gpu_index, (long)d->pid,
	    d->start_time, d->limits.sm_pct, (unsigned long long)d->limits.mem_bytes,
	    d->limits.priority);
	snprintf(path, sizeof path, "%s/daemon", d->dir);
	rc = write_file_atomic(path, b.buf, b.len, 0600);
	sbuf_free(&b);
	return rc;
}

static void
record_field(struct mps_daemon *d, const char *key, const char *val)
{
	if (strcmp(key, "uuid") == 0)
		str_copy(d->uuid, val, sizeof d->uuid);
	else if (strcmp(key, "gpu_index") == 0)
		d->gpu_index = atoi(val);
	else if (strcmp(key, "pid") == 0)
		d->pid = (pid_t)atol(val);
	else if (strcmp(key, "start_time") == 0)
		d->start_time = strtoull(val, NULL, 10);
	else if (strcmp(key, "sm_pct") == 0)
		d->limits.sm_pct = strtod(val, NULL);
	else if (strcmp(key, "mem_bytes") == 0)
		d->limits.mem_bytes = strtoull(val, NULL, 10);
	else if (strcmp(key, "priority") == 0)
		d->limits.priority = atoi(val);
}

/* Read <dir>/daemon into d; 1 when there is none. */
static int
record_read(struct mps_daemon *d)
{
	char path[PATH_MAX + 16], *data, *line, *save = NULL;

	snprintf(path, sizeof path, "%s/daemon", d->dir);
	if (access(path, F_OK) < 0)
		return 1;
	if (read_file(path, &data, NULL) < 0)
		return -1;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		record_field(d, line, eq + 1);
	}
	free(data);
	return 0;
}

/* ---- running the control program -------------------------------------- */

static char **
child_env(const struct mps_daemon *d)
{
	static const char *const ours[] = {
		"CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=", "CUDA_VISIBLE_DEVICES=", NULL,
	};
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 4, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		int skip = 0;

		for (int j = 0; ours[j]; j++)
			if (str_starts(environ[i], ours[j]))
				skip = 1;
		if (!skip)
			env[k++] = environ[i];
	}
	env[k++] = xasprintf("CUDA_MPS_PIPE_DIRECTORY=%s", d->pipe_dir);
	env[k++] = xasprintf("CUDA_MPS_LOG_DIRECTORY=%s", d->log_dir);
	env[k++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", d->uuid);
	env[k] = NULL;
	return env;
}

static void
child_env_free(char **env)
{
	size_t n = 0;

	while (env[n])
		n++;
	for (size_t i = n - 3; i < n; i++)
		free(env[i]);
	free(env);
}

/* Wait for pid until deadline (monotonic); 0 and *status when it ended, 1 when not. */
static int
wait_until(pid_t pid, double deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return 0;
		if (clock_mono() >= deadline)
			return 1;
		sleep_ms(10);
	}
}

/* A failed `-d`: its first line of output, which says why. */
static int
start_error(const struct mps_daemon *d, int status)
{
	char path[PATH_MAX + 32], *data = NULL, *nl;

	snprintf(path, sizeof path, "%s/" START_ERR, d->log_dir);
	if (read_file(path, &data, NULL) == 0 && (nl = strchr(data, '\n')) != NULL)
		*nl = '\0';
	if (data && *str_trim(data)) {
		err_set(EXIT_ENV, CONTROL_NAME " -d failed (status %d): %s", status, str_trim(data));
		free(data);
		return -1;
	}
	free(data);
	return err_set(EXIT_ENV, CONTROL_NAME " -d failed (status %d)", status);
}

/*
 * Run the control program for d: with daemonize, "-d" and no I/O; else input
 * on its stdin and its stdout (and stderr) into reply. A run that outlives
 * the time limit is killed and reported.
 */
static int
run_control(const struct mps_daemon *d, const char *input, int daemonize, struct sbuf *reply)
{
	char path[PATH_MAX], **env;
	int in[2], out[2], status = 0;
	double deadline;
	pid_t pid;

	if (mps_control_path(path, sizeof path) < 0)
		return -1;
	if (pipe2(in, O_CLOEXEC) < 0)
		return err_sys(EXIT_INTERNAL, "pipe");
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return err_sys(EXIT_INTERNAL, "pipe");
	}
	env = child_env(d);
	pid = fork();
	if (pid < 0) {
		child_env_free(env);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		return err_sys(EXIT_ENV, "fork");
	}
	if (pid == 0) {
		char *argv[] = {path, daemonize ? "-d" : NULL, NULL};
		int null = open("/dev/null", O_RDWR), errf = null;

		/* a daemon must not hold our pipes open: what -d says goes to a file */
		if (daemonize) {
			char ep[PATH_MAX + 32];

			snprintf(ep, sizeof ep, "%s/" START_ERR, d->log_dir);
			errf = open(ep, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (errf < 0)
				errf = null;
		}
		dup2(daemonize ? null : in[0], 0);
		dup2(daemonize ? errf : out[1], 1);
		dup2(daemonize ? errf : out[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execve(path, argv, env);
		_exit(127);
	}
	child_env_free(env);
	close(in[0]);
	close(out[1]);
	if (!daemonize && input) {
		size_t off = 0, len = strlen(input);
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);

		while (off < len) {
			ssize_t w = write(in[1], input + off, len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		signal(SIGPIPE, old);
	}
	close(in[1]);
	deadline = clock_mono() + mps_command_timeout();
	for (;;) {
		struct pollfd p = {.fd = out[0], .events = POLLIN};
		int ms = (int)((deadline - clock_mono()) * 1000);
		char buf[4096];
		ssize_t n;

		if (ms <= 0)
			break;
		if (poll(&p, 1, ms) <= 0)
			continue;
		n = read(out[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (reply)
			sbuf_addn(reply, buf, (size_t)n);
	}
	close(out[0]);
	if (wait_until(pid, deadline, &status)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err_set(EXIT_ENV, CONTROL_NAME " did not answer '%.40s' within %g s "
		    "(daemon of %s hung?)", daemonize ? "-d" : input, mps_command_timeout(), d->uuid);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return err_set(EXIT_ENV, "cannot run %s", path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (daemonize)
			return start_error(d, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		if (reply && reply->len)
			return err_set(EXIT_ENV, CONTROL_NAME ": %s", str_trim(reply->buf));
		return err_set(EXIT_ENV, CONTROL_NAME " %s failed (status %d)",
		    daemonize ? "-d" : "client", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return 0;
}

/* A reply that is an error message rather than data. */
int
mps_reply_is_error(const char *reply)
{
	/* as seen from driver 580: 'Unknown command "x"', "Server 12 not found",
	 * "A server PID is required", "Cannot find MPS control daemon process" */
	static const char *const words[] = {
		"error", "invalid", "unrecognized", "unknown", "cannot", "not found", "required", NULL,
	};

	for (int i = 0; words[i]; i++)
		if (strcasestr(reply, words[i]))
			return 1;
	return 0;
}

int
mps_command(const struct mps_daemon *d, const char *cmd, struct sbuf *reply)
{
	char *line = xasprintf("%s\n", cmd);
	int rc;

	sbuf_reset(reply);
	rc = run_control(d, line, 0, reply);
	free(line);
	if (rc < 0)
		return -1;
	if (mps_reply_is_error(reply->buf ? reply->buf : ""))
		return err_set(EXIT_ENV, "'%s': %s", cmd, str_trim(reply->buf));
	return 0;
}

/* ---- parsers of replies (pure; unit-tested) --------------------------- */

int
mps_parse_pids(const char *text, pid_t **out, int *n)
{
	size_t cap = 0;
	const char *p = text;

	*out = NULL;
	*n = 0;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[64];
		long v;

		if (len < sizeof line) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (*str_trim(line) && parse_long(str_trim(line), 1, 1L << 30, &v) == 0) {
				xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
				(*out)[(*n)++] = (pid_t)v;
			}
			err_clear();
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

int
mps_parse_server_state(const char *text)
{
	if (strcasestr(text, "FAULT"))
		return MPS_SERVER_FAULT;
	if (strcasestr(text, "INITIALIZING") || strcasestr(text, "INITIALISING"))
		return MPS_SERVER_INITIALIZING;
	if (strcasestr(text, "ACTIVE"))
		return MPS_SERVER_ACTIVE;
	return MPS_SERVER_UNKNOWN;
}

const char *
mps_server_state_name(int state)
{
	switch (state) {
	case MPS_SERVER_INITIALIZING: return "initializing";
	case MPS_SERVER_ACTIVE: return "active";
	case MPS_SERVER_FAULT: return "fault";
	default: return "unknown";
	}
}

/* Next whitespace-separated token of *p, or NULL. */
static char *
next_token(char **p)
{
	char *s = *p, *t;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	t = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return t;
}

/*
 * `ps`: a header "PID ID SERVER DEVICE NAMESPACE COMMAND" and one row per
 * client; the command is the rest of the row and may hold spaces. Lines that
 * do not start with a pid (the header, notes) are skipped.
 */
int
mps_parse_ps(const char *text, struct mps_ps_row **out, int *n)
{
	char *copy = xstrdup(text ? text : ""), *save = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mps_ps_row r = {0};
		char *p = line, *tok[5];
		long v;
		int k;

		for (k = 0; k < 5; k++)
			if (!(tok[k] = next_token(&p)))
				break;
		if (k < 3 || parse_long(tok[0], 1, 1L << 30, &v) < 0) {
			err_clear();
			continue;
		}
		r.pid = (pid_t)v;
		r.server = (pid_t)atol(tok[2]);
		if (k > 3)
			str_copy(r.device, tok[3], sizeof r.device);
		while (*p == ' ' || *p == '\t')
			p++;
		str_copy(r.command, str_trim(p), sizeof r.command);
		xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
		(*out)[(*n)++] = r;
	}
	free(copy);
	return 0;
}

int
mps_log_line_fatal(const char *line)
{
	return strcasestr(line, "fatal") != NULL && strcasestr(line, "error") != NULL;
}

/* ---- liveness --------------------------------------------------------- */

static int
pid_matches(const struct mps_daemon *d)
{
	unsigned long long t = mps_proc_start_time(d->pid);

	return t != 0 && (d->start_time == 0 || t == d->start_time);
}

static void
check_alive(struct mps_daemon *d)
{
	struct sbuf r;

	d->alive = 0;
	if (!pid_matches(d))
		return;
	sbuf_init(&r);
	if (run_control(d, "get_server_list\n", 0, &r) == 0 && !mps_reply_is_error(r.buf ? r.buf : ""))
		d->alive = 1;
	err_clear();
	sbuf_free(&r);
}

static int
read_pid_file(const struct mps_daemon *d, pid_t *pid)
{
	char path[PATH_MAX + 32], *data;
	long v;
	int rc;

	snprintf(path, sizeof path, "%s/" PID_FILE, d->pipe_dir);
	if (access(path, F_OK) < 0)
		return 1;
	if (read_file(path, &data, NULL) < 0) {
		err_clear();
		return 1;
	}
	rc = parse_long(str_trim(data), 1, 1L << 30, &v);
	free(data);
	err_clear();
	if (rc < 0)
		return 1;
	*pid = (pid_t)v;
	return 0;
}

/* ---- lookup and list -------------------------------------------------- */

static int
lookup_dir(struct mps_daemon *d)
{
	int rc = record_read(d);

	if (rc < 0)
		return -1;
	if (rc == 1) {
		/* directories without a record: a start that died half way; stale */
		d->pid = 0;
		d->alive = 0;
		return 0;
	}
	check_alive(d);
	return 0;
}

int
mps_lookup(const char *uuid, struct mps_daemon *d)
{
	struct stat st;

	memset(d, 0, sizeof *d);
	d->limits.priority = MPS_PRIO_UNSET;
	if (daemon_paths(d, uuid) < 0)
		return -1;
	if (lstat(d->dir, &st) < 0)
		return 1;
	if (!S_ISDIR(st.st_mode))
		return err_set(EXIT_ENV, "%s is not a directory; refusing to use it", d->dir);
	return lookup_dir(d) < 0 ? -1 : 0;
}

int
mps_list(struct mps_daemon **out, int *n)
{
	char base[PATH_MAX];
	size_t cap = 0;
	struct dirent *e;
	DIR *dir;

	*out = NULL;
	*n = 0;
	/* nothing managed yet: say so without creating state (devices is read-only) */
	if (!state_exists("mps"))
		return 0;
	if (state_dir("mps", base, sizeof base) < 0)
		return -1;
	dir = opendir(base);
	if (!dir)
		return err_sys(EXIT_ENV, "cannot read %s", base);
	while ((e = readdir(dir)) != NULL) {
		struct mps_daemon d;
		char uuid[GPU_UUID_LEN];

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof uuid)
			continue;
		str_copy(uuid, e->d_name, sizeof uuid);
		if (mps_lookup(uuid, &d) != 0) {
			err_clear();
			continue;
		}
		xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
		(*out)[(*n)++] = d;
	}
	closedir(dir);
	return 0;
}

/* ---- servers and clients ---------------------------------------------- */

static void
client_command(pid_t pid, const struct mps_ps_row *ps, int nps, char *out, size_t size)
{
	char path[64], *data = NULL;
	size_t len = 0;

	for (int i = 0; i < nps; i++)
		if (ps[i].pid == pid) {
			str_copy(out, ps[i].command, size);
			return;
		}
	/* no ps (older daemons): the process's own argv[0] */
	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	if (read_file(path, &data, &len) == 0 && len > 0)
		str_copy(out, data, size);
	else
		str_copy(out, "?", size);
	err_clear();
	free(data);
}

int
mps_servers(const struct mps_daemon *d, struct mps_server **out, int *n)
{
	struct sbuf r;
	struct mps_ps_row *ps = NULL;
	pid_t *spids = NULL;
	int ns = 0, nps = 0;

	*out = NULL;
	*n = 0;
	sbuf_init(&r);
	if (mps_command(d, "get_server_list", &r) < 0) {
		sbuf_free(&r);
		return -1;
	}
	mps_parse_pids(r.buf ? r.buf : "", &spids, &ns);
	if (ns > 0 && mps_command(d, "ps", &r) == 0)
		mps_parse_ps(r.buf, &ps, &nps);
	err_clear();
	*out = xcalloc(ns ? (size_t)ns : 1, sizeof **out);
	for (int i = 0; i < ns; i++) {
		struct mps_server *s = &(*out)[i];
		char cmd[64];
		pid_t *cp = NULL;
		int nc = 0;

		s->pid = spids[i];
		snprintf(cmd, sizeof cmd, "get_server_status %ld", (long)s->pid);
		s->state = mps_command(d, cmd, &r) == 0 ? mps_parse_server_state(r.buf ? r.buf : "")
		    : MPS_SERVER_UNKNOWN;
		snprintf(cmd, sizeof cmd, "get_client_list %ld", (long)s->pid);
		if (mps_command(d, cmd, &r) == 0)
			mps_parse_pids(r.buf ? r.buf : "", &cp, &nc);
		err_clear();
		s->nclients = nc;
		s->clients = xcalloc(nc ? (size_t)nc : 1, sizeof *s->clients);
		for (int j = 0; j < nc; j++) {
			s->clients[j].pid = cp[j];
			client_command(cp[j], ps, nps, s->clients[j].command, sizeof s->clients[j].command);
		}
		free(cp);
	}
	*n = ns;
	free(spids);
	free(ps);
	sbuf_free(&r);
	return 0;
}

void
mps_servers_free(struct mps_server *s, int n)
{
	for (int i = 0; i < n; i++)
		free(s[i].clients);
	free(s);
}

static int
count_clients(const struct mps_server *s, int n)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += s[i].nclients;
	return c;
}

int
mps_terminate_client(const struct mps_daemon *d, pid_t server, pid_t client)
{
	char cmd[96];
	struct sbuf r;
	int rc;

	snprintf(cmd, sizeof cmd, "terminate_client %ld %ld", (long)server, (long)client);
	sbuf_init(&r);
	rc = mps_command(d, cmd, &r);
	sbuf_free(&r);
	return rc;
}

/* ---- start ------------------------------------------------------------ */

int
mps_limits_check(const struct mps_limits *lim)
{
	if (isnan(lim->sm_pct) || lim->sm_pct < 0 || lim->sm_pct > 100)
		return err_set(EXIT_USAGE, "thread percentage %g is outside 1..100", lim->sm_pct);
	if (lim->priority != MPS_PRIO_UNSET && lim->priority != MPS_PRIO_NORMAL &&
	    lim->priority != MPS_PRIO_LOW)
		return err_set(EXIT_USAGE, "priority %d is not normal (0) or low (1)", lim->priority);
	return 0;
}

int
mps_limits_equal(const struct mps_limits *a, const struct mps_limits *b)
{
	int pa = a->priority == MPS_PRIO_UNSET ? MPS_PRIO_NORMAL : a->priority;
	int pb = b->priority == MPS_PRIO_UNSET ? MPS_PRIO_NORMAL : b->priority;
	double sa = a->sm_pct > 0 ? a->sm_pct : 100, sb = b->sm_pct > 0 ? b->sm_pct : 100;

	return fabs(sa - sb) < 1e-9 && a->mem_bytes == b->mem_bytes && pa == pb;
}

char *
mps_limits_format(const struct mps_limits *lim, char *buf, size_t size)
{
	char mem[32];

	snprintf(buf, size, "sm %g%%, mem %s, priority %s", lim->sm_pct > 0 ? lim->sm_pct : 100,
	    lim->mem_bytes ? format_size(lim->mem_bytes, mem, sizeof mem) : "unlimited",
	    lim->priority == MPS_PRIO_LOW ? "low" : "normal");
	return buf;
}

/* Hold the per-device lock (a file in the device's directory); returns the fd. */
static int
lock_dir(const struct mps_daemon *d)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof path, "%s/lock", d->dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot open %s", path);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			close(fd);
			return err_sys(EXIT_ENV, "cannot lock %s", path);
		}
	}
	return fd;
}

static void
unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int
apply_limits(const struct mps_daemon *d)
{
	struct sbuf r;
	char cmd[128], size[32];
	int rc = 0;

	sbuf_init(&r);
	if (d->limits.sm_pct > 0) {
		snprintf(cmd, sizeof cmd, "set_default_active_thread_percentage %g", d->limits.sm_pct);
		rc = mps_command(d, cmd, &r);
	}
	if (rc == 0 && d->limits.mem_bytes > 0) {
		/* the ordinal the daemon sees: it was started with one visible device */
		snprintf(cmd, sizeof cmd, "set_default_device_pinned_mem_limit 0 %s",
		    format_size_mps(mps_pinned_limit(d->limits.mem_bytes), size, sizeof size));
		rc = mps_command(d, cmd, &r);
	}
	if (rc == 0 && d->limits.priority != MPS_PRIO_UNSET) {
		snprintf(cmd, sizeof cmd, "set_default_client_priority %d", d->limits.priority);
		rc = mps_command(d, cmd, &r);
	}
	sbuf_free(&r);
	return rc < 0 ? err_prefix("applying limits") : 0;
}

/* Kill our own daemon process (verified by start time) and clear its directories. */
static void
clean_stale(struct mps_daemon *d)
{
	if (d->pid > 0 && pid_matches(d)) {
		kill(d->pid, SIGKILL);
		for (int i = 0; i < 100 && pid_matches(d); i++)
			sleep_ms(10);
	}
	remove_tree(d->pipe_dir);
	remove_tree(d->log_dir);
	{
		char path[PATH_MAX + 16];

		snprintf(path, sizeof path, "%s/daemon", d->dir);
		unlink(path);
	}
	err_clear();
}

static int
wait_for_daemon(struct mps_daemon *d)
{
	double deadline = clock_mono() + mps_command_timeout();
	char sock[PATH_MAX + 32];

	snprintf(sock, sizeof sock, "%s/control", d->pipe_dir);
	while (clock_mono() < deadline) {
		if (read_pid_file(d, &d->pid) == 0 && access(sock, F_OK) == 0 &&
		    (d->start_time = mps_proc_start_time(d->pid)) != 0)
			return 0;
		sleep_ms(10);
	}
	{
		char why[512];

		start_error(d, 0);
		str_copy(why, err_msg(), sizeof why);
		return err_set(EXIT_ENV, CONTROL_NAME " -d started no daemon in %s within %g s (%s)",
		    d->pipe_dir, mps_command_timeout(), why);
	}
}

static int
start_locked(struct mps_daemon *d, const struct mps_limits *lim, int restart, int *started)
{
	struct mps_daemon old = *d;
	char a[128], b[128];

	if (record_read(&old) == 0) {
		check_alive(&old);
		if (old.alive && mps_limits_equal(&old.limits, lim)) {
			*d = old;
			return 0;
		}
		if (old.alive && !restart)
			return err_set(EXIT_USAGE, "a daemon for %s already runs with other limits (%s; "
			    "asked: %s); stop it first or use --restart", d->uuid,
			    mps_limits_format(&old.limits, a, sizeof a), mps_limits_format(lim, b, sizeof b));
		if (old.alive && stop_daemon(&old, 0, 0) < 0)
			return err_prefix("restart");
		if (!old.alive)
			clean_stale(&old);
	} else {
		err_clear();
		clean_stale(d); /* leftovers of a start that died half way */
	}
	if (private_dir(d->pipe_dir) < 0 || private_dir(d->log_dir) < 0)
		return -1;
	if (run_control(d, NULL, 1, NULL) < 0 || wait_for_daemon(d) < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		clean_stale(d);
		return err_set(code, "%s", msg);
	}
	d->limits = *lim;
	if (record_write(d) < 0 || apply_limits(d) < 0) {
		char msg[1024];
		int code = err_code();

		str_copy(msg, err_msg(), sizeof msg);
		stop_daemon(d, 0, 1);
		return err_set(code, "%s", msg);
	}
	d->alive = 1;
	*started = 1;
	return 0;
}

int
mps_start(const struct gpu_target *t, int gpu_index, const struct mps_limits *lim,
    int restart, struct mps_daemon *d, int *started)
{
	char path[PATH_MAX], sub[GPU_UUID_LEN + 8], name[GPU_UUID_LEN];
	int lk, rc;

	*started = 0;
	if (mps_limits_check(lim) < 0)
		return -1;
	if (mps_control_path(path, sizeof path) < 0)
		return -1;
	memset(d, 0, sizeof *d);
	if (daemon_paths(d, t->uuid) < 0)
		return -1;
	d->gpu_index = gpu_index;
	d->limits.priority = MPS_PRIO_UNSET;
	if (strlen(d->pipe_dir) + 1 + strlen(LONGEST_SOCKET) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return err_set(EXIT_ENV, "pipe directory %s is too long for a unix socket; "
		    "set GPUPACK_STATE_DIR to a shorter path", d->pipe_dir);
	uuid_dir_name(t->uuid, name, sizeof name);
	snprintf(sub, sizeof sub, "mps/%s", name);
	if (state_dir(sub, path, sizeof path) < 0)
		return -1;
	lk = lock_dir(d);
	if (lk < 0)
		return -1;
	rc = start_locked(d, lim, restart, started);
	unlock_dir(lk);
	return rc;
}

/* ---- stop ------------------------------------------------------------- */

static int
wait_no_clients(const struct mps_daemon *d, double timeout, struct mps_server **s, int *ns)
{
	double deadline = clock_mono() + timeout;

	for (;;) {
		if (mps_servers(d, s, ns) < 0)
			return -1;
		if (count_clients(*s, *ns) == 0 || clock_mono() >= deadline)
			return 0;
		mps_servers_free(*s, *ns);
		*s = NULL;
		*ns = 0;
		sleep_ms(100);
	}
}

static int
clients_error(const struct mps_daemon *d, const struct mps_server *s, int ns, double timeout)
{
	struct sbuf b;
	int shown = 0;

	sbuf_init(&b);
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < s[i].nclients; j++)
			if (shown++ < 16)
				sbuf_printf(&b, "%s%ld", b.len ? " " : "", (long)s[i].clients[j].pid);
	err_set(EXIT_TASKS, "daemon of %s still has %d client(s) after %g s (pids %s); "
	    "left running: wait, or use --force", d->uuid, count_clients(s, ns), timeout, b.buf);
	sbuf_free(&b);
	return -1;
}

static void
terminate_all(const struct mps_daemon *d, const struct mps_server *s, int ns)
{
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < s[i].nclients; j++)
			if (mps_terminate_client(d, s[i].pid, s[i].clients[j].pid) < 0) {
				warnx_("%s", err_msg());
				err_clear();
			}
}

/* Wait for a process that is not our child to end; 1 when it is still there. */
static int
wait_gone(pid_t pid, double deadline)
{
	while (pid > 0 && mps_proc_start_time(pid) != 0) {
		/* a zombie of ours counts as gone */
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		if (clock_mono() >= deadline)
			return 1;
		sleep_ms(20);
	}
	return 0;
}

static void
kill_left(const struct mps_daemon *d, const struct mps_server *s, int ns)
{
	double deadline = clock_mono() + 5;
	int left = 0;

	if (wait_gone(d->pid, deadline) && pid_matches(d)) {
		kill(d->pid, SIGTERM);
		left = 1;
	}
	for (int i = 0; i < ns; i++)
		if (wait_gone(s[i].pid, deadline)) {
			kill(s[i].pid, SIGTERM);
			left = 1;
		}
	if (!left)
		return;
	deadline = clock_mono() + 2;
	if (wait_gone(d->pid, deadline) && pid_matches(d))
		kill(d->pid, SIGKILL);
	for (int i = 0; i < ns; i++)
		if (wait_gone(s[i].pid, deadline))
			kill(s[i].pid, SIGKILL);
	warnx_("the daemon of %s did not quit in time; killed", d->uuid);
}

/*
 * Quit the daemon (clients first: wait, then with force terminate them),
 * wait for it and its servers, and remove its pipe and log directories and
 * record; the device directory and its lock stay (the caller holds the lock).
 */
static int
stop_daemon(struct mps_daemon *d, double timeout, int force)
{
	struct mps_server *s = NULL;
	struct sbuf r;
	int ns = 0;

	if (!d->alive) {
		clean_stale(d);
		return 0;
	}
	if (wait_no_clients(d, timeout, &s, &ns) < 0)
		return -1;
	if (count_clients(s, ns) > 0 && !force) {
		clients_error(d, s, ns, timeout);
		mps_servers_free(s, ns);
		return -1;
	}
	if (count_clients(s, ns) > 0) {
		struct mps_server *s2 = NULL;
		int ns2 = 0;

		terminate_all(d, s, ns);
		/* terminated clients exit on their own; give them a moment */
		if (wait_no_clients(d, 5, &s2, &ns2) == 0)
			mps_servers_free(s2, ns2);
		err_clear();
	}
	sbuf_init(&r);
	/* quit -t: the daemon forces its servers down after that long (seen working on 580) */
	if (mps_command(d, force ? "quit -t 5" : "quit", &r) < 0) {
		err_clear();
		if (mps_command(d, "quit", &r) < 0) {
			warnx_("%s", err_msg());
			err_clear();
		}
	}
	sbuf_free(&r);
	kill_left(d, s, ns);
	mps_servers_free(s, ns);
	d->alive = 0;
	clean_stale(d);
	return 0;
}

int
mps_stop(struct mps_daemon *d, double timeout, int force)
{
	int lk = lock_dir(d), rc;

	if (lk < 0)
		return -1;
	/* the record may have changed while we waited for the lock */
	if (record_read(d) == 1)
		d->pid = 0;
	err_clear();
	check_alive(d);
	rc = stop_daemon(d, timeout, force);
	if (rc == 0)
		rc = remove_tree(d->dir);
	unlock_dir(lk);
	return rc;
}

/* ---- client environment and faults ------------------------------------ */

int
mps_client_env(const struct mps_daemon *d, double sm_pct, uint64_t mem_bytes, char **env)
{
	char size[32];
	int n = 0;

	env[n++] = xasprintf("CUDA_MPS_PIPE_DIRECTORY=%s", d->pipe_dir);
	env[n++] = xasprintf("CUDA_MPS_LOG_DIRECTORY=%s", d->log_dir);
	if (sm_pct > 0)
		env[n++] = xasprintf("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%g", sm_pct);
	if (mem_bytes > 0)
		env[n++] = xasprintf("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=%s",
		    format_size_mps(mps_pinned_limit(mem_bytes), size, sizeof size));
	return n;
}

uint64_t
mps_pinned_limit(uint64_t mem_bytes)
{
	return mem_bytes ? mem_bytes + MPS_CONTEXT_RESERVE : 0;
}

long
mps_log_offset(const struct mps_daemon *d)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof path, "%s/server.log", d->log_dir);
	if (stat(path, &st) < 0)
		return 0;
	return (long)st.st_size;
}

static int
log_fatal_since(const struct mps_daemon *d, long offset)
{
	char path[PATH_MAX + 16], *data = NULL, *save = NULL;
	size_t len = 0;
	int hit = 0;

	snprintf(path, sizeof path, "%s/server.log", d->log_dir);
	if (access(path, F_OK) < 0)
		return 0;
	if (read_file(path, &data, &len) < 0)
		return -1;
	/* a log shorter than the offset was rotated or recreated: read it all */
	if (offset < 0 || (size_t)offset > len)
		offset = 0;
	for (char *l = strtok_r(data + offset, "\n", &save); l && !hit; l = strtok_r(NULL, "\n", &save))
		hit = mps_log_line_fatal(l);
	free(data);
	return hit;
}

int
mps_fault_since(const struct mps_daemon *d, long log_offset)
{
	struct mps_server *s = NULL;
	int ns = 0, hit = log_fatal_since(d, log_offset);

	if (hit != 0)
		return hit;
	if (mps_servers(d, &s, &ns) < 0)
		return -1;
	for (int i = 0; i < ns; i++)
		if (s[i].state == MPS_SERVER_FAULT)
			hit = 1;
	mps_servers_free(s, ns);
	return hit;
}

/* ---- daemons gpupack did not start ------------------------------------ */

static int
is_managed_pid(pid_t pid, const struct mps_daemon *ours, int nours)
{
	for (int i = 0; i < nours; i++)
		if (ours[i].pid == pid)
			return 1;
	return 0;
}

/* Is /proc/PID a control daemon: argv[0] named like the control program, run with -d? */
static int
foreign_candidate(pid_t pid, const char *control_base)
{
	char path[64], *data = NULL, *base;
	size_t len = 0;
	int yes = 0;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	if (read_file(path, &data, &len) < 0) {
		err_clear();
		return 0;
	}
	if (len > 0) {
		size_t a0 = strlen(data);

		base = strrchr(data, '/');
		base = base ? base + 1 : data;
		yes = (strcmp(base, CONTROL_NAME) == 0 || (control_base && strcmp(base, control_base) == 0)) &&
		    a0 + 1 < len && strcmp(data + a0 + 1, "-d") == 0;
	}
	free(data);
	return yes;
}

static void
foreign_pipe_dir(pid_t pid, char *out, size_t size)
{
	char path[64], *data = NULL;
	size_t len = 0;

	str_copy(out, "?", size);
	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	if (read_file(path, &data, &len) < 0) {
		err_clear();
		return;
	}
	str_copy(out, "/tmp/nvidia-mps", size); /* the daemon's default */
	for (size_t off = 0; off < len; off += strlen(data + off) + 1)
		if (str_starts(data + off, "CUDA_MPS_PIPE_DIRECTORY="))
			str_copy(out, data + off + strlen("CUDA_MPS_PIPE_DIRECTORY="), size);
	free(data);
}

int
mps_foreign_list(const struct mps_daemon *ours, int nours, struct mps_foreign **out, int *n)
{
	char control[PATH_MAX];
	const char *base = NULL;
	size_t cap = 0;
	struct dirent *e;
	DIR *dir;

	*out = NULL;
	*n = 0;
	if (mps_control_path(control, sizeof control) == 0) {
		base = strrchr(control, '/');
		base = base ? base + 1 : control;
	}
	err_clear();
	dir = opendir("/proc");
	if (!dir)
		return err_sys(EXIT_ENV, "cannot read /proc");
	while ((e = readdir(dir)) != NULL) {
		long v;
		struct mps_foreign f;

		if (!isdigit((unsigned char)e->d_name[0]) || parse_long(e->d_name, 1, 1L << 30, &v) < 0) {
			err_clear();
			continue;
		}
		if (is_managed_pid((pid_t)v, ours, nours) || !foreign_candidate((pid_t)v, base))
			continue;
		memset(&f, 0, sizeof f);
		f.pid = (pid_t)v;
		foreign_pipe_dir(f.pid, f.pipe_dir, sizeof f.pipe_dir);
		xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
		(*out)[(*n)++] = f;
	}
	closedir(dir);
	return 0;
}
