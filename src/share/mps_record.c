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
#include "util/proc.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned long long
mps_proc_start_time(pid_t pid)
{
	return proc_start_time(pid);
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

/* The base directory by descriptor (see mps_base); without create, 1 when there is none. */
static int
base_fd(int create, int *fd)
{
	const char *env = getenv("GPUPACK_MPS_DIR");
	char path[PATH_MAX];

	if (env && *env)
		*fd = private_dir_at(AT_FDCWD, env, NULL, create);
	else
		*fd = state_dir_fd("mps", create, path, sizeof path);
	if (*fd >= 0)
		return 0;
	if (errno == ENOENT && !create) {
		err_clear();
		return 1;
	}
	return env && *env ? err_prefix("GPUPACK_MPS_DIR") : -1;
}

int
mps_dir_fd(const struct mps_daemon *d, int create, int *base)
{
	char name[GPU_UUID_LEN];
	int bfd, fd, rc;

	if (base)
		*base = -1;
	if (mps_uuid_dir_name(d->uuid, name, sizeof name) < 0)
		return -1;
	if ((rc = base_fd(create, &bfd)) != 0) {
		if (rc == 1)
			errno = ENOENT;
		return -1;
	}
	fd = private_dir_at(bfd, name, d->dir, create);
	if (fd < 0) {
		int e = errno;

		close(bfd);
		errno = e;
		return -1;
	}
	if (base)
		*base = bfd;
	else
		close(bfd);
	return fd;
}

/* ---- the daemon record ------------------------------------------------ */

int
mps_record_write(const struct mps_daemon *d, int dirfd)
{
	struct sbuf b;
	int rc;

	sbuf_init(&b);
	sbuf_printf(&b, "uuid=%s\ngpu_index=%d\npid=%ld\nstart_time=%llu\nsm_pct=%.17g\n"
	    "mem_bytes=%llu\npriority=%d\ndevices=%s\nowner=%ld-%llu\n", d->uuid, d->gpu_index,
	    (long)d->pid, d->start_time, d->limits.sm_pct, (unsigned long long)d->limits.mem_bytes,
	    d->limits.priority, d->devices, (long)d->owner_pid, d->owner_start);
	rc = write_file_atomic_at(dirfd, "daemon", b.buf, b.len, 0600);
	sbuf_free(&b);
	return rc < 0 ? err_prefix("MPS state %s", d->dir) : 0;
}

/* A whole unsigned number of at most max. */
static int
field_ull(const char *v, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || *end || *out > max ? -1 : 0;
}

static int
field_int(const char *v, long min, long max, long *out)
{
	unsigned long long u;
	int neg = *v == '-';

	if (field_ull(v + neg, (unsigned long long)LONG_MAX, &u) < 0)
		return -1;
	*out = neg ? -(long)u : (long)u;
	return *out < min || *out > max ? -1 : 0;
}

/* devices=: UUIDs and commas, as the record writes them */
static int
field_devices(const char *v, struct mps_daemon *d)
{
	size_t n = strlen(v);

	if (n == 0 || n >= sizeof d->devices || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_/,") != n)
		return -1;
	str_copy(d->devices, v, sizeof d->devices);
	d->ndevices = 1;
	for (const char *c = v; *c; c++)
		d->ndevices += *c == ',';
	return 0;
}

static int
record_field(struct mps_daemon *d, const char *key, char *val)
{
	unsigned long long u;
	long l;
	char *dash;

	if (strcmp(key, "uuid") == 0) {
		char a[GPU_UUID_LEN], b[GPU_UUID_LEN];

		/* the record names the device of its own directory, or it is not one of ours */
		if (mps_uuid_dir_name(val, a, sizeof a) < 0 || (d->uuid[0] &&
		    (mps_uuid_dir_name(d->uuid, b, sizeof b) < 0 || strcmp(a, b) != 0)))
			return -1;
		str_copy(d->uuid, val, sizeof d->uuid);
	} else if (strcmp(key, "gpu_index") == 0) {
		if (field_int(val, -1, 1023, &l) < 0)
			return -1;
		d->gpu_index = (int)l;
	} else if (strcmp(key, "pid") == 0) {
		if (field_int(val, 0, 1L << 22, &l) < 0)
			return -1;
		d->pid = (pid_t)l;
	} else if (strcmp(key, "start_time") == 0) {
		if (field_ull(val, ULLONG_MAX, &d->start_time) < 0)
			return -1;
	} else if (strcmp(key, "sm_pct") == 0) {
		char *end;

		d->limits.sm_pct = strtod(val, &end);
		if (end == val || *end || !(d->limits.sm_pct >= 0 && d->limits.sm_pct <= 100))
			return -1;
	} else if (strcmp(key, "mem_bytes") == 0) {
		if (field_ull(val, ULLONG_MAX, &u) < 0)
			return -1;
		d->limits.mem_bytes = u;
	} else if (strcmp(key, "priority") == 0) {
		if (field_int(val, MPS_PRIO_UNSET, MPS_PRIO_LOW, &l) < 0)
			return -1;
		d->limits.priority = (int)l;
	} else if (strcmp(key, "devices") == 0) {
		return field_devices(val, d);
	} else if (strcmp(key, "owner") == 0) {
		/* "PID-START" of the gpupack run that started it; "0-0": kept until stopped */
		if (!(dash = strchr(val, '-')))
			return -1;
		*dash = '\0';
		if (field_int(val, 0, 1L << 22, &l) < 0 || field_ull(dash + 1, ULLONG_MAX, &u) < 0)
			return -1;
		d->owner_pid = (pid_t)l;
		d->owner_start = u;
	}
	/* other keys: a newer gpupack's; ignored */
	return 0;
}

int
mps_record_parse(const char *text, struct mps_daemon *d)
{
	char *copy = xstrdup(text), *line, *save = NULL;
	int rc = 0;

	for (line = strtok_r(copy, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq) {
			rc = err_set(EXIT_ENV, "daemon record: a line without '=': not a record gpupack wrote");
			break;
		}
		*eq = '\0';
		if (record_field(d, line, eq + 1) < 0)
			rc = err_set(EXIT_ENV, "daemon record: bad %.32s", line);
	}
	free(copy);
	/* a pid without its start time could be anyone's: it is not trusted */
	if (d->start_time == 0)
		d->pid = 0;
	if (d->owner_start == 0)
		d->owner_pid = 0;
	return rc;
}

/* Read the record in the device's directory dirfd into d; 1 when there is none. */
int
mps_record_read(struct mps_daemon *d, int dirfd)
{
	char *data = NULL;
	int rc;

	if (faccessat(dirfd, "daemon", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return 1;
	if (read_file_at(dirfd, "daemon", 4096, &data, NULL) < 0)
		return err_prefix("MPS state %s", d->dir);
	rc = mps_record_parse(data, d);
	free(data);
	return rc < 0 ? err_prefix("MPS state %s", d->dir) : 0;
}

/* ---- liveness --------------------------------------------------------- */

int
mps_pid_matches(const struct mps_daemon *d)
{
	/* a record without the start time names no process we may signal */
	return proc_is(d->pid, d->start_time);
}

int
mps_pid_alive(const struct mps_daemon *d)
{
	return mps_pid_matches(d);
}

void
mps_check_alive(struct mps_daemon *d)
{
	struct sbuf r;

	d->alive = 0;
	if (!mps_pid_matches(d))
		return;
	sbuf_init(&r);
	if (mps_run_control(d, "get_server_list\n", &r) == 0 && !mps_reply_is_error(r.buf ? r.buf : ""))
		d->alive = 1;
	err_clear();
	sbuf_free(&r);
}

int
mps_read_pid_file(const struct mps_daemon *d, int pipefd, pid_t *pid)
{
	char *data = NULL;
	long v;
	int rc;

	(void)d;
	if (read_file_at(pipefd, PID_FILE, 64, &data, NULL) < 0) {
		err_clear();
		return 1;
	}
	rc = parse_long(str_trim(data), 1, 1L << 22, &v);
	free(data);
	err_clear();
	if (rc < 0)
		return 1;
	*pid = (pid_t)v;
	return 0;
}

/* ---- lookup and list -------------------------------------------------- */

int
mps_lookup(const char *uuid, struct mps_daemon *d)
{
	int fd, rc;

	memset(d, 0, sizeof *d);
	d->limits.priority = MPS_PRIO_UNSET;
	if (mps_daemon_paths(d, uuid) < 0)
		return -1;
	fd = mps_dir_fd(d, 0, NULL);
	if (fd < 0 && errno == ENOENT) {
		err_clear();
		return 1;
	}
	if (fd < 0)
		return -1;
	rc = mps_record_read(d, fd);
	close(fd);
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
		int rc = mps_lookup(uuid, &d);

		/* a broken entry (a FIFO for a record, a symlink) is an error, never followed */
		if (rc < 0) {
			closedir(dir);
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
		if (rc == 1)
			continue;
		xgrow(out, &cap, (size_t)*n + 1, sizeof **out);
		(*out)[(*n)++] = d;
	}
	closedir(dir);
	return 0;
}
