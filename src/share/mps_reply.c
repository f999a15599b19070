/*
 * mps_reply: the pure parsers of what the control daemon answers
 * (get_server_list, get_client_list, get_server_status, ps) and of its
 * server.log lines. No I/O here, so the unit tests and fuzzers drive them.
 */
#include "share/mps.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* The pid right after key in line, ended by stop: 0 when there is none (no key, junk, not positive). */
static long
pid_after(const char *line, const char *key, char stop)
{
	const char *p = strstr(line, key);
	char *end;
	long pid;

	if (!p)
		return 0;
	p += strlen(key);
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	return errno || *end != stop ? 0 : pid;
}

long
mps_log_line_culprit(const char *line)
{
	/*
	 * driver 580, once per fault: "Client {PID: 3345, Context: 1} encountered
	 * a fatal GPU error." (the lines "All clients belonging to error trigging
	 * process PID" that follow name every client torn down, victims too)
	 */
	if (!strstr(line, "} encountered a fatal GPU error"))
		return 0;
	return pid_after(line, "Client {PID: ", ',');
}

long
mps_log_line_torn(const char *line)
{
	/* driver 580, one per client a fault tore down: "All clients belonging to error trigging process 3345 will be torn down" */
	return pid_after(line, "All clients belonging to error trigging process ", ' ');
}
