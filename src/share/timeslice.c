/*
 * timeslice: reading and setting the compute time-slice policy through
 * nvidia-smi, the only interface NVIDIA offers for it. The listing's layout
 * is not documented and differs between driver versions, so the parser
 * looks for meaning (a GPU heading, a "Timeslice" word and its value) rather
 * than for columns, and skips what it does not know.
 */
#include "share/timeslice.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"

#include <ctype.h>
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

#define SMI_TIMEOUT 30.0

static const char *const names[] = {"default", "short", "medium", "long"};

int
timeslice_value(const char *word)
{
	for (int i = 0; i < 4; i++)
		if (strcasecmp(word, names[i]) == 0)
			return i;
	if (word[0] >= '0' && word[0] <= '3' && word[1] == '\0')
		return word[0] - '0';
	return TS_UNKNOWN;
}

const char *
timeslice_name(int value)
{
	return value >= 0 && value < 4 ? names[value] : "unknown";
}

static int
is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int
timeslice_smi_path(char *out, size_t size)
{
	static const char *const dirs[] = {"/usr/local/nvidia/bin", "/usr/bin", NULL};
	const char *env = getenv("GPUPACK_NVIDIA_SMI"), *path = getenv("PATH");

	if (env && *env) {
		if (!is_executable(env))
			return err_set(EXIT_ENV, "GPUPACK_NVIDIA_SMI=%s is not an executable file", env);
		str_copy(out, env, size);
		return 0;
	}
	if (path) {
		char *copy = xstrdup(path), *save = NULL;

		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if ((size_t)snprintf(out, size, "%s/nvidia-smi", *d ? d : ".") < size && is_executable(out)) {
				free(copy);
				return 0;
			}
		free(copy);
	}
	for (int i = 0; dirs[i]; i++)
		if ((size_t)snprintf(out, size, "%s/nvidia-smi", dirs[i]) < size && is_executable(out))
			return 0;
	return err_set(EXIT_ENV, "nvidia-smi not found on PATH nor in /usr/local/nvidia/bin, /usr/bin "
	    "(it reads the time-slice policy; set GPUPACK_NVIDIA_SMI)");
}

/* ---- the parser --------------------------------------------------------- */

/* Replace table borders with spaces so only words remain. */
static void
strip_borders(char *s)
{
	int only_rule = 1;

	for (char *p = s; *p; p++) {
		if (*p == '|' || *p == '+')
			*p = ' ';
		else if (*p != '=' && *p != '-' && !isspace((unsigned char)*p))
			only_rule = 0;
	}
	if (only_rule)
		s[0] = '\0';
}

static int
is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int
is_bus_id(const char *s)
{
	/* "00000000:19:00.0" or "0000:19:00.0" */
	return strchr(s, ':') && strchr(s, '.') && strspn(s, "0123456789abcdefABCDEF:.") == strlen(s);
}

/* The GPU a heading or row names: "GPU 0", "GPU 00000000:19:00.0", "GPU0:"; 0 if none. */
static int
gpu_named(char **w, int nw, int *gpu, char *bus, size_t bus_size)
{
	for (int i = 0; i < nw; i++) {
		char *t = w[i];
		size_t len;

		if (strncasecmp(t, "GPU", 3) != 0)
			continue;
		t += 3;
		if (!*t && i + 1 < nw)
			t = w[i + 1];
		len = strlen(t);
		while (len && t[len - 1] == ':' && !is_bus_id(t))
			t[--len] = '\0';
		if (is_number(t)) {
			*gpu = atoi(t);
			bus[0] = '\0';
			return 1;
		}
		if (is_bus_id(t)) {
			*gpu = -1;
			str_copy(bus, t, bus_size);
			return 1;
		}
	}
	return 0;
}

/* The value after the word "Timeslice" (skipping ':' '=' and "policy"/"value" words). */
static int
value_after(char **w, int nw, int at)
{
	for (int i = at + 1; i < nw; i++) {
		char *t = w[i];
		int v;

		if (strcmp(t, ":") == 0 || strcmp(t, "=") == 0)
			continue;
		while (*t == ':' || *t == '=')
			t++;
		if (!*t)
			continue;
		v = timeslice_value(t);
		if (v != TS_UNKNOWN)
			return v;
		if (strcasecmp(t, "policy") == 0 || strcasecmp(t, "value") == 0)
			continue;
		return TS_UNKNOWN;
	}
	return TS_UNKNOWN;
}

static int
split_words(char *s, char **w, int max)
{
	int n = 0;

	for (char *t = strtok(s, " \t\r"); t && n < max; t = strtok(NULL, " \t\r"))
		w[n++] = t;
	return n;
}

/* One line: updates the current GPU; adds an entry for a timeslice line. */
static void
parse_line(const char *line, int *gpu, char *bus, struct timeslice_entry **out, int *n, size_t *cap)
{
	char copy[512], raw[512], *w[32];
	struct timeslice_entry e;
	int nw, at = -1;

	str_copy(copy, line, sizeof copy);
	strip_borders(copy);
	str_copy(raw, copy, sizeof raw);
	nw = split_words(copy, w, 32);
	if (nw == 0)
		return;
	gpu_named(w, nw, gpu, bus, 32);
	for (int i = 0; i < nw && at < 0; i++)
		if (strncasecmp(w[i], "timeslice", 9) == 0)
			at = i;
	if (at < 0)
		return;
	memset(&e, 0, sizeof e);
	e.gpu = *gpu;
	str_copy(e.bus_id, bus, sizeof e.bus_id);
	/* a row "0  Timeslice  Default": the index is its first word */
	if (at > 0 && is_number(w[0])) {
		e.gpu = atoi(w[0]);
		e.bus_id[0] = '\0';
	}
	e.value = value_after(w, nw, at);
	str_copy(e.raw, str_trim(raw), sizeof e.raw);
	xgrow(out, cap, (size_t)*n + 1, sizeof **out);
	(*out)[(*n)++] = e;
}

int
timeslice_parse(const char *text, struct timeslice_entry **out, int *n)
{
	char *copy = xstrdup(text ? text : ""), *save = NULL, bus[32] = "";
	size_t cap = 0;
	int gpu = -1;

	*out = NULL;
	*n = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		parse_line(l, &gpu, bus, out, n, &cap);
	free(copy);
	if (*n == 0)
		return err_set(EXIT_ENV, "nvidia-smi compute-policy -l listed no time-slice policy");
	/* one GPU without a heading: it is GPU 0 */
	if (*n == 1 && (*out)[0].gpu < 0 && !(*out)[0].bus_id[0])
		(*out)[0].gpu = 0;
	return 0;
}

/* ---- running nvidia-smi -------------------------------------------------- */

/* Run argv, its stdout and stderr into out; a time limit; 0 only on exit status 0. */
static int
run_smi(const char *const argv[], struct sbuf *out)
{
	double deadline = clock_mono() + SMI_TIMEOUT;
	int fd[2], status = 0;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return err_sys(EXIT_INTERNAL, "pipe");
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return err_sys(EXIT_ENV, "fork");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		struct pollfd p = {.fd = fd[0], .events = POLLIN};
		int ms = (int)((deadline - clock_mono()) * 1000);
		char buf[4096];
		ssize_t r;

		if (ms <= 0)
			break;
		if (poll(&p, 1, ms) <= 0)
			continue;
		r = read(fd[0], buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		sbuf_addn(out, buf, (size_t)r);
	}
	close(fd[0]);
	if (clock_mono() >= deadline && waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err_set(EXIT_ENV, "%s did not finish within %g s", argv[0], SMI_TIMEOUT);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (out->len) {
		char *nl = strchr(out->buf, '\n');

		if (nl)
			*nl = '\0';
		return err_set(EXIT_ENV, "%s %s: %s", argv[0], argv[1], str_trim(out->buf));
	}
	return err_set(EXIT_ENV, "%s %s failed (status %d)", argv[0], argv[1],
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

int
timeslice_list(struct timeslice_entry **out, int *n)
{
	char smi[4096];
	const char *argv[] = {smi, "compute-policy", "-l", NULL};
	struct sbuf b;
	int rc;

	*out = NULL;
	*n = 0;
	if (timeslice_smi_path(smi, sizeof smi) < 0)
		return -1;
	sbuf_init(&b);
	rc = run_smi(argv, &b);
	if (rc == 0)
		rc = timeslice_parse(b.buf ? b.buf : "", out, n);
	sbuf_free(&b);
	return rc;
}

int
timeslice_set_argv(const char *uuid, int value, char *smi, size_t smi_size, char *num, size_t num_size,
    const char *argv[7])
{
	if (value < TS_DEFAULT || value > TS_LONG)
		return err_set(EXIT_USAGE, "time slice %d is not default, short, medium or long", value);
	if (timeslice_smi_path(smi, smi_size) < 0)
		return -1;
	snprintf(num, num_size, "%d", value);
	argv[0] = smi;
	argv[1] = "compute-policy";
	argv[2] = "-i";
	argv[3] = uuid;
	argv[4] = "--set-timeslice";
	argv[5] = num;
	argv[6] = NULL;
	return 0;
}

int
timeslice_set(const char *uuid, int value)
{
	char smi[4096], num[8];
	const char *argv[7];
	struct sbuf b;
	int rc;

	if (timeslice_set_argv(uuid, value, smi, sizeof smi, num, sizeof num, argv) < 0)
		return -1;
	sbuf_init(&b);
	rc = run_smi(argv, &b);
	sbuf_free(&b);
	return rc;
}
