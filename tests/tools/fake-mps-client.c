/*
 * fake-mps-client: a CUDA program as fake-mps-control sees it. It registers
 * with the daemon found through $CUDA_MPS_PIPE_DIRECTORY (private protocol:
 * "client PID COMMAND", answer "ok SERVER SM MEM PRIORITY"), prints one line
 * with the limits it got, then works until --ms passes (forever without it).
 *
 *   fake-mps-client [--ms N] [--exit CODE] [--alloc-mib N] [--pidfile FILE]
 *
 * Output, one line on stdout:
 *   mps=1 pid=P server=S sm=PCT mem=SIZE|none priority=N dev=DEVICES
 * where sm and mem are what this client is held to: the server's default,
 * lowered by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
 * ("0=SIZE") as the real client runtime does; DEVICES is what the daemon
 * serves (its CUDA_VISIBLE_DEVICES). Without a daemon: "mps=0 ... dev=-",
 * and it runs on as a plain program (like CUDA without MPS). A
 * CUDA_VISIBLE_DEVICES naming a device the daemon does not serve: error 100.
 *
 * Exit: CODE (default 0) after --ms; 1 "error 810" when the daemon sends
 * terminate (terminate_client); 1 "error 999" on a fault or when the daemon
 * goes away; 1 "error 2" when --alloc-mib exceeds the memory limit; 1 when
 * the daemon refuses it (807 during a fault, 805 while quitting). Told
 * "hang" (x_fault_stuck), its work never ends: it waits until terminated
 * or killed (a client whose GPU work a fault stopped for good).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "1G", "512M" -> MiB; 0 for none or unparsable. */
static double
mib_of(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'T': case 't': return v * 1024 * 1024;
	case 'G': case 'g': return v * 1024;
	case 'M': case 'm': return v;
	case 'K': case 'k': return v / 1024;
	default: return 0;
	}
}

static int
connect_daemon(void)
{
	const char *pd = getenv("CUDA_MPS_PIPE_DIRECTORY");
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof a.sun_path, "%s/control", pd && *pd ? pd : "/tmp/nvidia-mps");
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int
read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

/* Wait until deadline (<0: forever) for the daemon to say something; 0 on timeout. */
static int
work(int fd, double deadline)
{
	char msg[256];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = deadline < 0 ? 200 : (int)((deadline - now()) * 1000);

		if (deadline >= 0 && ms <= 0)
			return 0;
		if (fd < 0) {
			usleep((useconds_t)(ms > 200 ? 200 : ms) * 1000);
			continue;
		}
		if (poll(&p, 1, ms > 200 ? 200 : ms) <= 0)
			continue;
		if (read_line(fd, msg, sizeof msg) < 0) {
			fprintf(stderr, "fake-mps-client: error 999: lost the MPS server\n");
			return 1;
		}
		if (strcmp(msg, "terminate") == 0) {
			fprintf(stderr, "fake-mps-client: error 810: client terminated\n");
			return 1;
		}
		if (strcmp(msg, "fault") == 0) {
			fprintf(stderr, "fake-mps-client: error 999: fatal fault on the MPS server\n");
			return 1;
		}
		if (strcmp(msg, "hang") == 0)
			deadline = -1;
	}
}

/*
 * Under MPS a client sees the server's devices, renumbered from 0: its own
 * CUDA_VISIBLE_DEVICES must name them by UUID (or by those new ordinals).
 * A UUID the server does not have, or an ordinal past its count, leaves the
 * client no device, as with the real runtime.
 */
static int
visible_ok(const char *server_devs)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	char copy[4096], *save = NULL;
	int n = 1;

	if (!cvd || !*cvd || strcmp(server_devs, "?") == 0)
		return 1;
	for (const char *c = server_devs; *c; c++)
		n += *c == ',';
	snprintf(copy, sizeof copy, "%s", cvd);
	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(e, &end, 10);
		const char *hit = strstr(server_devs, e);
		size_t len = strlen(e);

		if (*e && !*end) {
			if (v < 0 || v >= n)
				return 0;
			continue;
		}
		/* a whole entry of the comma-separated list */
		while (hit && !((hit == server_devs || hit[-1] == ',') && (hit[len] == '\0' || hit[len] == ',')))
			hit = strstr(hit + 1, e);
		if (!hit)
			return 0;
	}
	return 1;
}

int
main(int argc, char **argv)
{
	double ms = -1, alloc = 0, sm = 100, mem = 0;
	const char *env_sm = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
	const char *env_mem = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
	const char *pidfile = NULL;
	char line[8192], memtxt[64] = "none", devs[4096] = "?";
	long server = 0;
	int code = 0, prio = 0, fd;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
			ms = atof(argv[++i]);
		else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
			code = atoi(argv[++i]);
		else if (strcmp(argv[i], "--alloc-mib") == 0 && i + 1 < argc)
			alloc = atof(argv[++i]);
		else if (strcmp(argv[i], "--pidfile") == 0 && i + 1 < argc)
			pidfile = argv[++i];
		else {
			fprintf(stderr, "usage: fake-mps-client [--ms N] [--exit CODE] [--alloc-mib N] "
			    "[--pidfile FILE]\n");
			return 2;
		}
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (f) {
			fprintf(f, "%ld\n", (long)getpid());
			fclose(f);
		}
	}
	fd = connect_daemon();
	if (fd >= 0) {
		char reg[300], smtxt[32], mtxt[64];

		snprintf(reg, sizeof reg, "client %ld %s\n", (long)getpid(), argv[0]);
		if (write(fd, reg, strlen(reg)) < 0 || read_line(fd, line, sizeof line) < 0) {
			fprintf(stderr, "fake-mps-client: error 805: MPS daemon did not answer\n");
			return 1;
		}
		if (sscanf(line, "ok %ld %31s %63s %d %4095s", &server, smtxt, mtxt, &prio, devs) < 4) {
			fprintf(stderr, "fake-mps-client: %s\n", line);
			return 1;
		}
		if (!visible_ok(devs)) {
			fprintf(stderr, "fake-mps-client: error 100: no CUDA-capable device is detected "
			    "(CUDA_VISIBLE_DEVICES=%s, the MPS server has %s)\n", getenv("CUDA_VISIBLE_DEVICES"), devs);
			return 1;
		}
		sm = atof(smtxt);
		if (strcmp(mtxt, "none") != 0) {
			mem = mib_of(mtxt);
			snprintf(memtxt, sizeof memtxt, "%s", mtxt);
		}
	}
	if (env_sm && *env_sm && atof(env_sm) > 0 && atof(env_sm) < sm)
		sm = atof(env_sm);
	if (env_mem && strncmp(env_mem, "0=", 2) == 0 && (mem == 0 || mib_of(env_mem + 2) < mem)) {
		mem = mib_of(env_mem + 2);
		snprintf(memtxt, sizeof memtxt, "%s", env_mem + 2);
	}
	if (getenv("CUDA_MPS_CLIENT_PRIORITY") && atoi(getenv("CUDA_MPS_CLIENT_PRIORITY")) > prio)
		prio = atoi(getenv("CUDA_MPS_CLIENT_PRIORITY"));
	printf("mps=%d pid=%ld server=%ld sm=%.1f mem=%s priority=%d dev=%s\n", fd >= 0, (long)getpid(),
	    server, sm, memtxt, prio, fd >= 0 ? devs : "-");
	fflush(stdout);
	if (alloc > 0 && mem > 0 && alloc > mem) {
		fprintf(stderr, "fake-mps-client: error 2: out of memory (%.0f MiB over the %s limit)\n",
		    alloc, memtxt);
		return 1;
	}
	if (work(fd, ms < 0 ? -1 : now() + ms / 1000.0))
		return 1;
	return code;
}
