/*
 * mps_record: what gpupack knows about its daemons, on disk. Each device has
 * <state>/mps/<dir>/ with a `daemon` record (key=value lines), and the
 * daemon's pipe and log directories. The daemon's pid is trusted only
 * together with its start time (field 22 of /proc/PID/stat), so a recycled
 * pid is never signalled. Lookup and listing of the managed daemons.
 */
#include "share/mps.h"
#include "share/mps_internal.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
int
mps_uuid_dir_name(const char *uuid, char *out, size_t size)
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

/*
 * Where the daemons' directories live: $GPUPACK_MPS_DIR (a job's, made by
 * the Slurm plugin; it must already exist and be private), else <state>/mps.
 * Without create: 1 when there is none yet (nothing is made).
 */
static int
mps_base(char *out, size_t size, int create)
{
	const char *env = getenv("GPUPACK_MPS_DIR");

	if (env && *env) {
		if (str_copy(out, env, size) >= size)
			return err_set(EXIT_ENV, "GPUPACK_MPS_DIR is too long");
		if (!create) {
			struct stat st;

			return lstat(out, &st) == 0 ? 0 : 1;
		}
		return private_dir(out) < 0 ? err_prefix("GPUPACK_MPS_DIR") : 0;
	}
	if (!create)
		return state_exists("mps") ? state_dir("mps", out, size) : 1;
	return state_dir("mps", out, size);
}

int
mps_daemon_paths(struct mps_daemon *d, const char *uuid)
{
	char name[GPU_UUID_LEN], base[PATH_MAX];

	if (mps_uuid_dir_name(uuid, name, sizeof name) < 0)
		return -1;
	if (mps_base(base, sizeof base, 1) < 0)
		return -1;
	str_copy(d->uuid, uuid, sizeof d->uuid);
	if (!d->devices[0]) {
		str_copy(d->devices, uuid, sizeof d->devices);
		d->ndevices = 1;
	}
	if ((size_t)snprintf(d->dir, sizeof d->dir, "%s/%s", base, name) >= sizeof d->dir ||
	    (size_t)snprintf(d->pipe_dir, sizeof d->pipe_dir, "%s/pipe", d->dir) >= sizeof d->pipe_dir ||
	    (size_t)snprintf(d->log_dir, sizeof d->log_dir, "%s/log", d->dir) >= sizeof d->log_dir)
		return err_set(EXIT_ENV, "state directory path too long");
	return 0;
}

/* ---- the daemon record ------------------------------------------------ */

int
mps_record_write(const struct mps_daemon *d)
{
	char path[PATH_MAX + 16];
	struct sbuf b;
	int rc;

	sbuf_init(&b);
	sbuf_printf(&b, "uuid=%s\ngpu_index=%d\npid=%ld\nstart_time=%llu\nsm_pct=%.17g\n"
	    "mem_bytes=%llu\npriority=%d\ndevices=%s\n", d->uuid, d->gpu_index, (long)d->pid,
	    d->start_time, d->limits.sm_pct, (unsigned long long)d->limits.mem_bytes,
	    d->limits.priority, d->devices);
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
	else if (strcmp(key, "devices") == 0 && *val) {
		str_copy(d->devices, val, sizeof d->devices);
		d->ndevices = 1;
		for (const char *c = val; *c; c++)
			d->ndevices += *c == ',';
	}
}

/* Read <dir>/daemon into d; 1 when there is none. */
int
mps_record_read(struct mps_daemon *d)
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

/* ---- liveness --------------------------------------------------------- */

int
mps_pid_matches(const struct mps_daemon *d)
{
	unsigned long long t = mps_proc_start_time(d->pid);

	return t != 0 && (d->start_time == 0 || t == d->start_time);
}

void
mps_check_alive(struct mps_daemon *d)
{
	struct sbuf r;

	d->alive = 0;
	if (!mps_pid_matches(d))
		return;
	sbuf_init(&r);
	if (mps_run_control(d, "get_server_list\n", 0, &r) == 0 && !mps_reply_is_error(r.buf ? r.buf : ""))
		d->alive = 1;
	err_clear();
	sbuf_free(&r);
}

int
mps_read_pid_file(const struct mps_daemon *d, pid_t *pid)
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
	int rc = mps_record_read(d);

	if (rc < 0)
		return -1;
	if (rc == 1) {
		/* directories without a record: a start that died half way; stale */
		d->pid = 0;
		d->alive = 0;
		return 0;
	}
	mps_check_alive(d);
	return 0;
}

int
mps_lookup(const char *uuid, struct mps_daemon *d)
{
	struct stat st;

	memset(d, 0, sizeof *d);
	d->limits.priority = MPS_PRIO_UNSET;
	if (mps_daemon_paths(d, uuid) < 0)
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
	switch (mps_base(base, sizeof base, 0)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
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
