/*
 * fake-mps-control: a test double of nvidia-cuda-mps-control that speaks the
 * documented interface with real processes and a real unix socket, so that
 * gpupack's MPS code is tested end to end without a GPU.
 *
 *   fake-mps-control -d     start the daemon: double fork, setsid; create
 *                           $CUDA_MPS_PIPE_DIRECTORY/control (a unix socket)
 *                           and nvidia-cuda-mps-control.pid there; log to
 *                           $CUDA_MPS_LOG_DIRECTORY/control.log and server.log
 *                           (defaults /tmp/nvidia-mps, /var/log/nvidia-mps).
 *                           Refuses (exit 1) when a daemon already answers there.
 *   fake-mps-control        client mode: each line of stdin is sent to the
 *                           daemon on its own connection; replies go to stdout.
 *                           No daemon: "Cannot find MPS control daemon process", exit 1.
 *
 * Commands (as NVIDIA documents them): get_server_list, get_server_status PID,
 * start_server -uid UID, get_client_list PID, ps, terminate_client SRV CLIENT,
 * set_default_active_thread_percentage P, get_default_active_thread_percentage,
 * set_default_device_pinned_mem_limit DEV SIZE, get_default_device_pinned_mem_limit DEV,
 * set_default_client_priority 0|1, get_default_client_priority,
 * shutdown_server PID [-f], quit [-t SECONDS]. Replies and errors use the texts
 * driver 580 prints (bench/results/2026-11-22-probe-h200.txt): nothing from
 * get_server_list without a server, "Server not found" from ps, "Server N not
 * found", "A server PID is required", 'Unknown command "x"'; the client exits 0
 * whatever the reply, as the real one does.
 *
 * Extra commands only the double knows (for tests):
 *   x_fault [HOLD_MS]  a fatal fault: the server goes FAULT, every client is
 *                      told "fault" (fake-mps-client exits 1), server.log gets
 *                      "... encountered a fatal GPU error ...; to be torn down";
 *                      new clients are refused (error 807) until all clients are
 *                      gone and HOLD_MS (default 300) passed, then ACTIVE again
 *                      and server.log gets "Server recovered".
 *   x_fault_own [HOLD_MS]  a fault the server contains (as driver 580 does on
 *                      the lent H100s and H200s): the same server.log line, but
 *                      no client is told; new clients are refused (807) for
 *                      HOLD_MS (default 300) whoever runs, then ACTIVE again.
 *   x_fault_by PID [HOLD_MS]  x_fault (every client is told), with driver
 *                      580's line naming PID: "Client {PID: PID, Context: 1}
 *                      encountered a fatal GPU error.", then its teardown
 *                      lines, "All clients belonging to error trigging
 *                      process P will be torn down", for PID and each client.
 *                      PID may be any client: on an H200 the server named a
 *                      neighbour, not the process that faulted.
 *   x_fault_stuck [HOLD_MS]  a fault whose clients never leave: the server
 *                      goes FAULT as with x_fault, but every
 *                      client is told "hang" (its work never ends, until it is
 *                      terminated or killed); FAULT lasts until they are gone.
 *   x_fault_own_hang [HOLD_MS]  a contained fault whose neighbours hang (seen
 *                      on an H200): as x_fault_own (the server ACTIVE again
 *                      after HOLD_MS), and every client is told "hang".
 *   x_hang [MS]        the daemon stops answering anything: until killed, or
 *                      for MS milliseconds (a daemon busy tearing a fault's
 *                      clients down, seen on an H200), then answers again.
 *   x_hang_server      the server stops answering: get_server_status of it and
 *                      new clients get no reply (the connection is kept open,
 *                      as a daemon waiting on its server would); the rest of
 *                      the daemon answers. Until the daemon is killed.
 *   x_limits           one line: "sm=P mem=SIZE|none priority=N" (what it was told).
 *
 * FAKE_MPS_SPARE_SERVER=FILE in the daemon's environment, FILE absent: the
 * daemon creates FILE and starts a server gpupack is not told of (as a real
 * daemon starts a new server for clients that reconnect after their server
 * died), one that outlives the daemon and, for 2 s after the daemon is gone,
 * removes any control socket at its pipe path: what a real server left
 * behind by a killed daemon is seen to do to the daemon that replaces it (on
 * an H100 a second restart followed, "Cannot send command to MPS control
 * daemon process").
 *
 * The private client protocol (fake-mps-client.c): a connection whose first
 * line is "client PID COMMAND" registers a client; the daemon starts the
 * server process lazily, answers "ok SERVER_PID SM MEM PRIORITY DEVICES", keeps the
 * connection, and later may send "terminate" or "fault". A closed connection
 * means the client is gone. Quit without -t waits for clients to leave
 * (refusing new ones), as the real daemon does; -t kills them after SECONDS.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN 256

enum kind { K_NEW, K_CLIENT, K_PARKED };
enum sstate { S_NONE, S_ACTIVE, S_FAULT };

struct conn {
	int fd;
	int kind;
	pid_t pid;
	char cmd[128];
	char in[1024];
	size_t inlen;
};

static struct conn conns[MAXCONN];
static int nconns;
static char pipe_dir[4096], log_dir[4096], sock_path[4200], pid_path[4200];
/* what the daemon serves (its CUDA_VISIBLE_DEVICES): up to 64 UUIDs of 40 characters */
#define DEVICES_MAX 4096
static char device[DEVICES_MAX];
static pid_t server_pid;
static int server_state = S_NONE;
static double fault_until; /* FAULT lasts at least until then */
static int fault_own;      /* x_fault_own: the clients ran on; FAULT ends at fault_until */
static int server_hung;    /* x_hang_server: its status and new clients are never answered */
static double sm_pct = 100.0;
/* per device ordinal (the daemon's visible devices, numbered from 0); [0] is what clients get */
#define MAXDEV 16
static char mem_limits[MAXDEV][64];
#define mem_limit mem_limits[0]
static int priority;
static int quitting;
static double quit_deadline; /* 0: wait for clients */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
logf_(const char *file, const char *who, const char *fmt, ...)
{
	char path[4200], stamp[64];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", log_dir, file);
	f = fopen(path, "a");
	if (!f)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "[%s.%03ld %s %ld] ", stamp, ts.tv_nsec / 1000000, who,
	    (long)(strcmp(who, "Server") == 0 ? server_pid : getpid()));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* A device ordinal of this daemon ("0" .. devices - 1), -1 for anything else. */
static int
ordinal(const char *s)
{
	int n = 1;
	char *end;
	long v;

	for (const char *c = device; *c; c++)
		n += *c == ',';
	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v >= n || v >= MAXDEV ? -1 : (int)v;
}

static void
say(int fd, const char *fmt, ...)
{
	char buf[2 * DEVICES_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0) {
		ssize_t w = write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
}

static int
nclients(void)
{
	int n = 0;

	for (int i = 0; i < nconns; i++)
		if (conns[i].kind == K_CLIENT)
			n++;
	return n;
}

static void
drop(int i)
{
	if (conns[i].kind == K_CLIENT)
		logf_("control.log", "Control", "Client %ld disconnected", (long)conns[i].pid);
	close(conns[i].fd);
	conns[i] = conns[--nconns];
}

static void
server_start(void)
{
	pid_t p;

	if (server_pid > 0)
		return;
	p = fork();
	if (p < 0)
		return;
	if (p == 0) {
		/* a program of its own, as nvidia-cuda-mps-server is: not "-d" in ps */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/proc/self/exe", "fake-mps-server", (char *)NULL);
		for (;;)
			pause();
	}
	server_pid = p;
	server_state = S_ACTIVE;
	logf_("control.log", "Control", "Starting new server %ld for user %ld", (long)p, (long)getuid());
	logf_("server.log", "Server", "Server has started");
}

static void
server_kill(void)
{
	if (server_pid <= 0)
		return;
	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	logf_("control.log", "Control", "Server %ld exited", (long)server_pid);
	server_pid = 0;
	server_state = S_NONE;
}

static void
tell_clients(const char *msg)
{
	for (int i = 0; i < nconns; i++)
		if (conns[i].kind == K_CLIENT)
			say(conns[i].fd, "%s\n", msg);
}

static void
cleanup_and_exit(int code)
{
	tell_clients("terminate");
	while (nconns)
		drop(0);
	server_kill();
	unlink(sock_path);
	unlink(pid_path);
	logf_("control.log", "Control", "Control daemon exited");
	exit(code);
}

static void
cmd_ps(int fd)
{
	if (server_pid <= 0) {
		say(fd, "Server not found\n");
		return;
	}
	say(fd, "PID ID SERVER DEVICE NAMESPACE COMMAND\n");
	for (int i = 0, id = 0; i < nconns; i++)
		if (conns[i].kind == K_CLIENT)
			say(fd, "%ld %d %ld %s 4026531836 %s\n", (long)conns[i].pid, id++,
			    (long)server_pid, device, conns[i].cmd);
}

static int
is_server(const char *arg)
{
	return arg && server_pid > 0 && atol(arg) == (long)server_pid;
}

/* The real daemon's answer to a server pid it does not know (driver 580). */
static void
no_server(int fd, const char *arg)
{
	if (!arg)
		say(fd, "A server PID is required\n");
	else
		say(fd, "Server %ld not found\n", atol(arg));
}

static void
cmd_terminate(int fd, const char *srv, const char *cli)
{
	if (!is_server(srv) || !cli) {
		no_server(fd, srv);
		return;
	}
	for (int i = 0; i < nconns; i++)
		if (conns[i].kind == K_CLIENT && (long)conns[i].pid == atol(cli)) {
			say(conns[i].fd, "terminate\n");
			logf_("server.log", "Server", "Client %ld terminated by request", (long)conns[i].pid);
			return;
		}
	say(fd, "Error: invalid client pid\n");
}

static void
cmd_fault(const char *hold)
{
	if (server_pid <= 0)
		server_start();
	server_state = S_FAULT;
	fault_until = now() + (hold ? atof(hold) : 300) / 1000.0;
	logf_("server.log", "Server", "Server encountered a fatal GPU error (Xid 13); "
	    "the server and its clients are to be torn down");
	fault_own = 0;
	tell_clients("fault");
}

static void
cmd_fault_own(const char *hold)
{
	if (server_pid <= 0)
		server_start();
	server_state = S_FAULT;
	fault_own = 1;
	fault_until = now() + (hold ? atof(hold) : 300) / 1000.0;
	logf_("server.log", "Server", "Server encountered a fatal GPU error (Xid 13); "
	    "the server and its clients are to be torn down");
}

static void
cmd_fault_stuck(const char *hold)
{
	cmd_fault_own(hold);
	fault_own = 0;
	tell_clients("hang");
}

static void
cmd_quit(int fd, const char *flag, const char *secs)
{
	quitting = 1;
	if (flag && strcmp(flag, "-t") == 0 && secs)
		quit_deadline = now() + atof(secs);
	logf_("control.log", "Control", "Received quit");
}

/* Answer one command line on connection fd; 1 when it must wait unanswered (a hung server). */
static int
command(int fd, char *line)
{
	char *a[4] = {0};
	int n = 0;

	for (char *t = strtok(line, " \t\r"); t && n < 4; t = strtok(NULL, " \t\r"))
		a[n++] = t;
	if (n == 0)
		return 0;
	logf_("control.log", "Control", "Accepting command: %s", a[0]);
	if (server_hung && strcmp(a[0], "get_server_status") == 0 && is_server(a[1]))
		return 1;
	if (strcmp(a[0], "get_server_list") == 0) {
		if (server_pid > 0)
			say(fd, "%ld\n", (long)server_pid);
	} else if (strcmp(a[0], "get_server_status") == 0) {
		if (!is_server(a[1]))
			no_server(fd, a[1]);
		else
			say(fd, "%s\n", server_state == S_FAULT ? "FAULT" : "ACTIVE");
	} else if (strcmp(a[0], "get_client_list") == 0) {
		if (!is_server(a[1]))
			no_server(fd, a[1]);
		else
			for (int i = 0; i < nconns; i++)
				if (conns[i].kind == K_CLIENT)
					say(fd, "%ld\n", (long)conns[i].pid);
	} else if (strcmp(a[0], "ps") == 0) {
		cmd_ps(fd);
	} else if (strcmp(a[0], "start_server") == 0) {
		server_start();
	} else if (strcmp(a[0], "terminate_client") == 0) {
		cmd_terminate(fd, a[1], a[2]);
	} else if (strcmp(a[0], "set_default_active_thread_percentage") == 0) {
		double p = a[1] ? atof(a[1]) : 0;

		if (p <= 0 || p > 100)
			say(fd, "Error: invalid percentage\n");
		else {
			sm_pct = p;
			say(fd, "%.1f\n", sm_pct);
		}
	} else if (strcmp(a[0], "get_default_active_thread_percentage") == 0) {
		say(fd, "%.1f\n", sm_pct);
	} else if (strcmp(a[0], "set_default_device_pinned_mem_limit") == 0) {
		int dev = ordinal(a[1]);

		if (dev < 0 || !a[2])
			say(fd, "Error: invalid device\n");
		else
			snprintf(mem_limits[dev], sizeof mem_limits[dev], "%s", a[2]);
	} else if (strcmp(a[0], "get_default_device_pinned_mem_limit") == 0) {
		int dev = ordinal(a[1]);

		if (dev < 0)
			say(fd, "Error: invalid device\n");
		else if (mem_limits[dev][0])
			say(fd, "%s\n", mem_limits[dev]);
	} else if (strcmp(a[0], "set_default_client_priority") == 0) {
		if (!a[1] || (strcmp(a[1], "0") != 0 && strcmp(a[1], "1") != 0))
			say(fd, "Error: invalid priority\n");
		else
			priority = atoi(a[1]);
	} else if (strcmp(a[0], "get_default_client_priority") == 0) {
		say(fd, "%d\n", priority);
	} else if (strcmp(a[0], "shutdown_server") == 0) {
		if (!is_server(a[1]))
			no_server(fd, a[1]);
		else if (a[2] && strcmp(a[2], "-f") == 0) {
			tell_clients("terminate");
			server_kill();
		}
	} else if (strcmp(a[0], "quit") == 0) {
		cmd_quit(fd, a[1], a[2]);
	} else if (strcmp(a[0], "x_fault") == 0) {
		cmd_fault(a[1]);
	} else if (strcmp(a[0], "x_fault_own") == 0) {
		cmd_fault_own(a[1]);
	} else if (strcmp(a[0], "x_fault_by") == 0 && a[1]) {
		logf_("server.log", "Server", "Client {PID: %s, Context: 1} encountered a fatal GPU error.", a[1]);
		/* driver 580's teardown: the pid named, then every client, each called "error trigging" */
		logf_("server.log", "Server", "All clients belonging to error trigging process %s will be torn down", a[1]);
		for (int i = 0; i < nconns; i++)
			if (conns[i].kind == K_CLIENT && (long)conns[i].pid != atol(a[1]))
				logf_("server.log", "Server", "All clients belonging to error trigging process %ld will be "
				    "torn down", (long)conns[i].pid);
		cmd_fault(a[2]);
	} else if (strcmp(a[0], "x_fault_own_hang") == 0) {
		cmd_fault_own(a[1]);
		tell_clients("hang");
	} else if (strcmp(a[0], "x_fault_stuck") == 0) {
		cmd_fault_stuck(a[1]);
	} else if (strcmp(a[0], "x_hang_server") == 0) {
		if (server_pid <= 0)
			server_start();
		server_hung = 1;
	} else if (strcmp(a[0], "x_hang") == 0) {
		struct timespec ts;
		long ms = a[1] ? atol(a[1]) : 0;

		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000L;
		while (ms <= 0)
			pause();
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	} else if (strcmp(a[0], "x_limits") == 0) {
		say(fd, "sm=%.1f mem=%s priority=%d\n", sm_pct, mem_limit[0] ? mem_limit : "none", priority);
	} else {
		say(fd, "Unknown command \"%s\"\n", a[0]);
	}
	return 0;
}

/* A first line "client PID CMD" registers a client; anything else is a command. */
static int
first_line(int i, char *line)
{
	struct conn *c = &conns[i];
	char *rest;

	if (strncmp(line, "client ", 7) != 0) {
		if (command(c->fd, line)) {
			c->kind = K_PARKED; /* no answer until the daemon dies */
			return 0;
		}
		return 1; /* answered: close */
	}
	c->pid = (pid_t)strtol(line + 7, &rest, 10);
	while (*rest == ' ')
		rest++;
	snprintf(c->cmd, sizeof c->cmd, "%s", rest);
	if (quitting) {
		say(c->fd, "error 805 daemon is shutting down\n");
		return 1;
	}
	if (server_state == S_FAULT) {
		say(c->fd, "error 807 server in fault state\n");
		return 1;
	}
	if (server_hung) {
		c->kind = K_PARKED; /* a client of a hung server waits for it */
		return 0;
	}
	server_start();
	c->kind = K_CLIENT;
	logf_("control.log", "Control", "New client %ld connected", (long)c->pid);
	say(c->fd, "ok %ld %.1f %s %d %s\n", (long)server_pid, sm_pct, mem_limit[0] ? mem_limit : "none",
	    priority, device);
	return 0;
}

/* Read from connection i; returns 1 when it should be dropped. */
static int
readable(int i)
{
	struct conn *c = &conns[i];
	ssize_t n = read(c->fd, c->in + c->inlen, sizeof c->in - 1 - c->inlen);
	char *nl;

	if (n <= 0)
		return 1;
	if (c->kind == K_CLIENT || c->kind == K_PARKED)
		return 0; /* clients say nothing after registering; parked ones get nothing */
	c->inlen += (size_t)n;
	c->in[c->inlen] = '\0';
	nl = strchr(c->in, '\n');
	if (!nl)
		return c->inlen >= sizeof c->in - 1;
	*nl = '\0';
	return first_line(i, c->in);
}

static void
reap(void)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p != server_pid)
			continue;
		logf_("control.log", "Control", "Server %ld exited unexpectedly", (long)p);
		server_pid = 0;
		server_state = S_NONE;
		tell_clients("fault");
	}
}

static void
tick(void)
{
	reap();
	if (server_state == S_FAULT && (nclients() == 0 || fault_own) && now() >= fault_until) {
		server_state = S_ACTIVE;
		logf_("server.log", "Server", "Server recovered");
	}
	if (!quitting)
		return;
	if (nclients() == 0)
		cleanup_and_exit(0);
	if (quit_deadline > 0 && now() >= quit_deadline)
		cleanup_and_exit(0);
}

static void
serve(int lfd)
{
	for (;;) {
		struct pollfd p[MAXCONN + 1];
		int n;

		tick();
		p[0].fd = lfd;
		p[0].events = POLLIN;
		for (int i = 0; i < nconns; i++) {
			p[i + 1].fd = conns[i].fd;
			p[i + 1].events = POLLIN;
		}
		n = poll(p, (nfds_t)nconns + 1, 50);
		if (n <= 0)
			continue;
		for (int i = nconns - 1; i >= 0; i--)
			if (p[i + 1].revents && readable(i))
				drop(i);
		if ((p[0].revents & POLLIN) && nconns < MAXCONN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				conns[nconns++] = (struct conn){.fd = fd, .kind = K_NEW};
		}
	}
}

static int
connect_control(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(sock_path) >= sizeof a.sun_path) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int
listen_control(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(sock_path) >= sizeof a.sun_path)
		return -1;
	memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
	unlink(sock_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0)
		return -1;
	chmod(sock_path, 0666); /* as the real daemon does: the directory is the guard */
	return fd;
}

static int
daemon_main(void)
{
	pid_t p;
	int fd, lfd;
	FILE *f;

	fd = connect_control();
	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "An instance of this daemon is already running\n");
		return 1;
	}
	p = fork();
	if (p < 0)
		return 1;
	if (p > 0) {
		waitpid(p, NULL, 0);
		return 0;
	}
	setsid();
	p = fork();
	if (p != 0)
		_exit(p < 0 ? 1 : 0);
	fd = open("/dev/null", O_RDWR);
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_control();
	if (lfd < 0)
		_exit(1);
	f = fopen(pid_path, "w");
	if (!f)
		_exit(1);
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
	logf_("control.log", "Control", "Starting control daemon using socket %s", sock_path);
	if (getenv("FAKE_MPS_SPARE_SERVER") && *getenv("FAKE_MPS_SPARE_SERVER") &&
	    open(getenv("FAKE_MPS_SPARE_SERVER"), O_WRONLY | O_CREAT | O_EXCL, 0600) >= 0 && (p = fork()) == 0) {
		close(lfd);
		execl("/proc/self/exe", "fake-mps-spare", (char *)NULL);
		_exit(1);
	}
	serve(lfd);
	return 0;
}

/* Client mode: one connection per stdin line, replies to stdout. */
static int
client_main(void)
{
	char line[1024], buf[4096];
	int rc = 0;

	while (fgets(line, sizeof line, stdin)) {
		int fd = connect_control();
		ssize_t n;

		if (fd < 0) {
			printf("Cannot find MPS control daemon process\n");
			return 1;
		}
		if (!strchr(line, '\n'))
			strcat(line, "\n");
		if (write(fd, line, strlen(line)) < 0)
			rc = 1;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		fflush(stdout);
		close(fd);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	const char *pd = getenv("CUDA_MPS_PIPE_DIRECTORY");
	const char *ld = getenv("CUDA_MPS_LOG_DIRECTORY");
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");

	snprintf(pipe_dir, sizeof pipe_dir, "%s", pd && *pd ? pd : "/tmp/nvidia-mps");
	snprintf(log_dir, sizeof log_dir, "%s", ld && *ld ? ld : "/var/log/nvidia-mps");
	snprintf(sock_path, sizeof sock_path, "%s/control", pipe_dir);
	snprintf(pid_path, sizeof pid_path, "%s/nvidia-cuda-mps-control.pid", pipe_dir);
	snprintf(device, sizeof device, "%s", cvd && *cvd ? cvd : "GPU-00000000-fake");
	if (strcmp(argv[0], "fake-mps-spare") == 0) {
		pid_t parent = getppid();

		while (getppid() == parent)
			usleep(20 * 1000);
		for (int i = 0; i < 100; i++) {
			unlink(sock_path);
			usleep(20 * 1000);
		}
		return 0;
	}
	if (strcmp(argv[0], "fake-mps-server") == 0) {
		for (;;)
			pause();
	}
	if (argc > 1 && strcmp(argv[1], "-d") == 0)
		return daemon_main();
	if (argc > 1) {
		fprintf(stderr, "usage: fake-mps-control [-d]\n");
		return 2;
	}
	return client_main();
}
