/*
 * mps_control: running nvidia-cuda-mps-control, the only way gpupack talks to
 * a control daemon: always as the documented client (a command on its stdin,
 * the reply on its stdout), never through its socket protocol, which NVIDIA
 * does not document and may change. Every run has a time limit, so a hung
 * daemon cannot hang gpupack. Also where the control program is found.
 */
#include "share/mps.h"
#include "share/mps_internal.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const control_dirs[] = {
	"/usr/local/nvidia/bin", "/usr/bin", "/usr/local/cuda/bin", NULL,
};

void
mps_sleep_ms(int ms)
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

/* ---- running the control program -------------------------------------- */

static char **
child_env(const struct mps_daemon *d, const char *launch)
{
	static const char *const ours[] = {
		"CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=", "CUDA_VISIBLE_DEVICES=", NULL,
	};
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 5, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		int skip = 0;

		for (int j = 0; ours[j]; j++)
			if (str_starts(environ[i], ours[j]))
				skip = 1;
		if (str_starts(environ[i], MPS_LAUNCH_VAR "="))
			skip = 1;
		if (!skip)
			env[k++] = environ[i];
	}
	env[k++] = xasprintf("CUDA_MPS_PIPE_DIRECTORY=%s", d->pipe_dir);
	env[k++] = xasprintf("CUDA_MPS_LOG_DIRECTORY=%s", d->log_dir);
	env[k++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", d->devices[0] ? d->devices : d->uuid);
	/* what marks every process of this start, wherever its paths led it (share/mps.c) */
	if (launch)
		env[k++] = xasprintf(MPS_LAUNCH_VAR "=%s", launch);
	env[k] = NULL;
	return env;
}

static void
child_env_free(char **env, int ours)
{
	size_t n = 0;

	while (env[n])
		n++;
	for (size_t i = n - (size_t)ours; i < n; i++)
		free(env[i]);
	free(env);
}

/*
 * A daemon must take the signals it is sent: what we block (the farm's
 * signalfd set) or ignore, and what slurmstepd blocks in the Slurm plugin,
 * would otherwise be inherited through exec, and SIGTERM would not stop it.
 */
static void
child_signals(void)
{
	static const int sigs[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD};
	sigset_t none;

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
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
		mps_sleep_ms(10);
	}
}

/* A failed `-d`: its first line of output, which says why. */
int
mps_start_error(const struct mps_daemon *d, int logfd, int status)
{
	char *data = NULL, *nl;

	(void)d;
	if (read_file_at(logfd, START_ERR, 4096, &data, NULL) == 0 && (nl = strchr(data, '\n')) != NULL)
		*nl = '\0';
	err_clear();
	if (data && *str_trim(data)) {
		err_set(EXIT_ENV, CONTROL_NAME " -d failed (status %d): %s", status, str_trim(data));
		free(data);
		return -1;
	}
	free(data);
	return err_set(EXIT_ENV, CONTROL_NAME " -d failed (status %d)", status);
}

/*
 * Run the control program for d: with daemonize (logfd: d's log directory),
 * "-d" and no I/O; else input on its stdin and its stdout (and stderr) into
 * reply. A run that outlives the time limit is killed and reported.
 */
static int
run_control(const struct mps_daemon *d, const char *input, int daemonize, int logfd,
    const char *launch, struct sbuf *reply)
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
	env = child_env(d, launch);
	pid = fork();
	if (pid < 0) {
		child_env_free(env, launch ? 4 : 3);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		return err_sys(EXIT_ENV, "fork");
	}
	if (pid == 0) {
		char *argv[] = {path, daemonize ? "-d" : NULL, NULL};
		int null = open("/dev/null", O_RDWR), errf = null;

		/*
		 * A daemon must not hold our pipes open: what -d says goes to a
		 * file, made inside the log directory we hold open (a path could
		 * have been redirected since we checked it).
		 */
		if (daemonize) {
			errf = openat(logfd, START_ERR, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			    0600);
			if (errf < 0)
				errf = null;
		}
		dup2(daemonize ? null : in[0], 0);
		dup2(daemonize ? errf : out[1], 1);
		dup2(daemonize ? errf : out[1], 2);
		child_signals();
		execve(path, argv, env);
		_exit(127);
	}
	child_env_free(env, launch ? 4 : 3);
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
		/* the first command only: the message is one line */
		return err_set(EXIT_ENV, CONTROL_NAME " did not answer '%.*s' within %g s "
		    "(daemon of %s hung?)", daemonize ? 2 : (int)strcspn(input, "\n") > 40 ? 40 :
		    (int)strcspn(input, "\n"), daemonize ? "-d" : input, mps_command_timeout(), d->uuid);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return err_set(EXIT_ENV, "cannot run %s", path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (daemonize)
			return mps_start_error(d, logfd, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		if (reply && reply->len)
			return err_set(EXIT_ENV, CONTROL_NAME ": %s", str_trim(reply->buf));
		return err_set(EXIT_ENV, CONTROL_NAME " %s failed (status %d)",
		    daemonize ? "-d" : "client", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return 0;
}

int
mps_run_control(const struct mps_daemon *d, const char *input, struct sbuf *reply)
{
	return run_control(d, input, 0, -1, NULL, reply);
}

int
mps_commands(const struct mps_daemon *d, const char *lines, struct sbuf *reply)
{
	sbuf_reset(reply);
	return run_control(d, lines, 0, -1, NULL, reply);
}

int
mps_run_daemon(const struct mps_daemon *d, int logfd, const char *launch)
{
	return run_control(d, NULL, 1, logfd, launch, NULL);
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
	rc = mps_run_control(d, line, reply);
	free(line);
	if (rc < 0)
		return -1;
	if (mps_reply_is_error(reply->buf ? reply->buf : ""))
		return err_set(EXIT_ENV, "'%s': %s", cmd, str_trim(reply->buf));
	return 0;
}
