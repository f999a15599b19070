/*
 * nodes_slurm: does Slurm already know that a member's node is lost
 * (farm/nodes.h)? A member whose beat is GPUPACK_FARM_ASK seconds late is
 * asked about with `scontrol show node -o NODE` (its state DOWN, FAIL,
 * NOT_RESPONDING or powered down) and `scontrol show job -o $SLURM_JOB_ID`
 * (the running job's node list no longer holds the node, as after a node
 * failure under --no-kill). The parsers are pure (tests/unit/
 * test_farm_nodes_slurm.c feeds them real output); nodes_slurm_ask runs
 * scontrol with a time limit. No answer (scontrol missing, failing, slow,
 * or output it does not understand) is never a loss: the farm keeps the
 * GPUPACK_FARM_LOST rule for that member.
 */
#include "farm/nodes.h"
#include "util/clock.h"
#include "util/str.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The value of field name (NAME=value, space separated) in line, copied to out; -1 absent. */
static int
field(const char *line, const char *end, const char *name, char *out, size_t size)
{
	size_t len = strlen(name);

	for (const char *p = line; p < end; p++) {
		if ((p == line || p[-1] == ' ') && (size_t)(end - p) > len && strncmp(p, name, len) == 0 &&
		    p[len] == '=') {
			const char *v = p + len + 1, *e = v;
			size_t n;

			while (e < end && *e != ' ' && *e != '\n')
				e++;
			n = (size_t)(e - v);
			if (n >= size)
				return -1;
			memcpy(out, v, n);
			out[n] = '\0';
			return 0;
		}
	}
	return -1;
}

int
nodes_slurm_owner_node(const char *owner, char *node, size_t size)
{
	size_t n = strlen(owner);
	int cut = 2;
	const char *r = strrchr(owner, '.');

	/* node.procid.pid, or node.procid.pid.rK */
	if (r && r[1] == 'r' && isdigit((unsigned char)r[2]))
		cut = 3;
	while (cut-- > 0) {
		while (n > 0 && owner[n - 1] != '.')
			n--;
		if (n == 0)
			return -1;
		n--;
	}
	if (n == 0 || n >= size)
		return -1;
	memcpy(node, owner, n);
	node[n] = '\0';
	return 0;
}

/* Does digits s..e (of width e-s) fall in range "lo" or "lo-hi" (r..re)? */
static int
in_range(const char *s, size_t len, const char *r, const char *re)
{
	const char *dash = memchr(r, '-', (size_t)(re - r));
	unsigned long long v, lo, hi;
	size_t lw = (size_t)((dash ? dash : re) - r);
	char tmp[32];

	if (len == 0 || len >= sizeof tmp || lw == 0 || lw >= sizeof tmp)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	v = strtoull(tmp, NULL, 10);
	memcpy(tmp, r, lw);
	tmp[lw] = '\0';
	lo = strtoull(tmp, NULL, 10);
	hi = lo;
	if (dash) {
		size_t hw = (size_t)(re - dash - 1);

		if (hw == 0 || hw >= sizeof tmp)
			return -1;
		memcpy(tmp, dash + 1, hw);
		tmp[hw] = '\0';
		hi = strtoull(tmp, NULL, 10);
	}
	/* zero-padded ranges (n[01-10]) name n01, not n1; unpadded ones name n1, not n01 */
	if (r[0] == '0' && lw > 1 ? len != lw : (len > 1 && s[0] == '0'))
		return 0;
	return v >= lo && v <= hi;
}

/* One element of a hostlist (s..e): 1 names node, 0 not, -1 a form not understood. */
static int
element_has(const char *s, const char *e, const char *node)
{
	const char *open = memchr(s, '[', (size_t)(e - s)), *close;
	size_t pre, nlen = strlen(node), suf;

	if (!open)
		return (size_t)(e - s) == nlen && strncmp(s, node, nlen) == 0;
	close = memchr(open, ']', (size_t)(e - open));
	if (!close || memchr(close, '[', (size_t)(e - close)))
		return -1; /* several dimensions: not ours to guess */
	pre = (size_t)(open - s);
	suf = (size_t)(e - close - 1);
	if (nlen < pre + suf + 1 || strncmp(node, s, pre) != 0 || strncmp(node + nlen - suf, close + 1, suf) != 0)
		return 0;
	for (const char *r = open + 1; r < close;) {
		const char *re = memchr(r, ',', (size_t)(close - r));
		int k;

		if (!re)
			re = close;
		k = in_range(node + pre, nlen - pre - suf, r, re);
		if (k != 0)
			return k;
		r = re + 1;
	}
	return 0;
}

int
nodes_slurm_hostlist_has(const char *list, const char *node)
{
	const char *s = list;
	int unknown = 0;

	if (!*list || !*node)
		return -1;
	while (*s) {
		const char *e = s;
		int depth = 0, k;

		while (*e && (depth > 0 || *e != ',')) {
			depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
			e++;
		}
		k = element_has(s, e, node);
		if (k == 1)
			return 1;
		if (k < 0)
			unknown = 1;
		s = *e ? e + 1 : e;
	}
	return unknown ? -1 : 0;
}

/* Is a State= value (BASE[+FLAG...], a trailing * for not responding) a lost node's? */
static int
state_lost(const char *state)
{
	static const char *const lost[] = {"DOWN", "FAIL", "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN",
	    "POWER_DOWN", NULL};
	char buf[256], *save = NULL, *tok;
	size_t n = strlen(state);

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, state, n + 1);
	if (buf[n - 1] == '*')
		return 1;
	for (tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save))
		for (int i = 0; lost[i]; i++)
			if (strcmp(tok, lost[i]) == 0)
				return 1;
	return 0;
}

int
nodes_slurm_node_lost(const char *out, const char *node)
{
	int answer = -1;

	for (const char *line = out; *line;) {
		const char *end = strchr(line, '\n');
		char name[256], state[256];

		if (!end)
			end = line + strlen(line);
		if (field(line, end, "NodeName", name, sizeof name) == 0 && strcmp(name, node) == 0 &&
		    field(line, end, "State", state, sizeof state) == 0) {
			int k = state_lost(state);

			if (k >= 0)
				answer = k;
		}
		line = *end ? end + 1 : end;
	}
	return answer;
}

int
nodes_slurm_job_lost(const char *out, const char *node)
{
	int running = 0;

	/* a heterogeneous job prints a line per component: the node is the job's if any holds it */
	for (const char *line = out; *line;) {
		const char *end = strchr(line, '\n');
		char state[64], list[4096];

		if (!end)
			end = line + strlen(line);
		if (field(line, end, "JobState", state, sizeof state) == 0 && strcmp(state, "RUNNING") == 0 &&
		    field(line, end, "NodeList", list, sizeof list) == 0) {
			int k = nodes_slurm_hostlist_has(list, node);

			if (k != 0)
				return k == 1 ? 0 : -1;
			running = 1;
		}
		line = *end ? end + 1 : end;
	}
	return running ? 1 : -1;
}

/*
 * Run argv, its standard output into out (NUL-terminated), for at most
 * timeout seconds. 0 when it exited 0 in time, else -1.
 */
static int
capture(char *const argv[], char *out, size_t size, double timeout)
{
	int p[2], status = 0, done = 0;
	static char scratch[4096];
	size_t have = 0;
	double until = clock_mono() + timeout;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_RDWR);

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(p[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		double left = until - clock_mono();
		ssize_t r;

		if (left <= 0)
			break;
		if (poll(&pf, 1, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!pf.revents)
			continue;
		/* past size: read on (and drop it), so that scontrol is not held on a full pipe */
		r = have < size - 1 ? read(p[0], out + have, size - 1 - have) : read(p[0], scratch, sizeof scratch);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			done = 1;
			break;
		}
		if (have < size - 1)
			have += (size_t)r;
	}
	out[have] = '\0';
	close(p[0]);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return done && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int
nodes_slurm_ask(const char *node, const char *jobid, double timeout)
{
	static char out[1 << 16];
	char *node_argv[] = {"scontrol", "show", "node", "-o", (char *)node, NULL};
	char *job_argv[] = {"scontrol", "show", "job", "-o", (char *)jobid, NULL};
	int k;

	if (capture(node_argv, out, sizeof out, timeout) == 0 && (k = nodes_slurm_node_lost(out, node)) == 1)
		return 1;
	if (!jobid || !*jobid || capture(job_argv, out, sizeof out, timeout) < 0)
		return -1;
	return nodes_slurm_job_lost(out, node);
}
