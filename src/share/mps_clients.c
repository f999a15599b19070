/*
 * mps_clients: a daemon's servers and their clients as the daemon reports
 * them, ending one client, the environment a client needs, and telling a
 * client's own failure from a fault of the server it shared.
 */
#include "share/mps.h"
#include "share/mps_internal.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int
mps_count_clients(const struct mps_server *s, int n)
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
	if (mem_bytes > 0) {
		struct sbuf b;

		/* "0=SIZE,1=SIZE": by the ordinals the client sees, one per device of d */
		sbuf_init(&b);
		format_size_mps(mps_pinned_limit(mem_bytes), size, sizeof size);
		for (int i = 0; i < (d->ndevices > 0 ? d->ndevices : 1); i++)
			sbuf_printf(&b, "%s%d=%s", i ? "," : "", i, size);
		env[n++] = xasprintf("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s", b.buf);
		sbuf_free(&b);
	}
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

/* what is read of server.log past a task's offset: a fatal line is near its end */
#define LOG_TAIL_MAX (1u << 20)

/* server.log past offset (its last LOG_TAIL_MAX bytes at most) into *data; 0, or -1 with err set */
static int
log_since(const struct mps_daemon *d, long offset, char **data)
{
	char path[PATH_MAX + 16];
	struct stat st;
	ssize_t got = 0;
	int fd;

	*data = NULL;
	snprintf(path, sizeof path, "%s/server.log", d->log_dir);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_sys(EXIT_ENV, "cannot open %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(EXIT_ENV, "%s is not a regular file", path);
	}
	/* a log shorter than the offset was rotated or recreated: read it from its start */
	if (offset < 0 || offset > (long)st.st_size)
		offset = 0;
	/* a log grown far past the offset: its last part holds the lines that matter */
	if (st.st_size - offset > (off_t)LOG_TAIL_MAX)
		offset = (long)(st.st_size - (off_t)LOG_TAIL_MAX);
	*data = xmalloc(LOG_TAIL_MAX + 1);
	while (got < (ssize_t)LOG_TAIL_MAX) {
		ssize_t n = pread(fd, *data + got, LOG_TAIL_MAX - (size_t)got, offset + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	(*data)[got] = '\0';
	return 0;
}

int
mps_log_fatal_since(const struct mps_daemon *d, long offset)
{
	char *data, *save = NULL;
	int hit = 0;

	if (log_since(d, offset, &data) < 0)
		return -1;
	for (char *l = data ? strtok_r(data, "\n", &save) : NULL; l && !hit; l = strtok_r(NULL, "\n", &save))
		hit = mps_log_line_fatal(l);
	free(data);
	return hit;
}

/* One fault's verdict on pid (1 its culprit, 0 another's), folded into *named; none when ambiguous. */
static void
fault_named(long who, int others, int read_on, pid_t pid, int *named)
{
	if (who <= 0 || others || !read_on)
		return;
	if (who == (long)pid)
		*named = 1;
	else if (*named < 0)
		*named = 0;
}

int
mps_fault_culprit(const struct mps_daemon *d, long log_offset, pid_t pid)
{
	char *data, *save = NULL;
	int named = -1, others = 0, read_on = 0;
	long who = 0, w;

	if (log_since(d, log_offset, &data) < 0)
		return -1;
	for (char *l = data ? strtok_r(data, "\n", &save) : NULL; l && named != 1; l = strtok_r(NULL, "\n", &save)) {
		if ((w = mps_log_line_culprit(l)) > 0) {
			fault_named(who, others, read_on, pid, &named);
			who = w;
			others = read_on = 0;
		} else if (who > 0) {
			/* a line after it: the fault's teardown lines come at once, in the same write */
			read_on = 1;
			if ((w = mps_log_line_torn(l)) > 0 && w != who)
				others = 1;
		}
	}
	fault_named(who, others, read_on, pid, &named);
	free(data);
	return named;
}

int
mps_fault_since(const struct mps_daemon *d, long log_offset)
{
	struct mps_server *s = NULL;
	int ns = 0, hit = mps_log_fatal_since(d, log_offset);

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
