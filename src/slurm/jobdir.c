/*
 * jobdir: the state root, each job's directory and record, finding a job's
 * MPS processes by their environment, and cleaning what a crashed node or
 * slurmstepd left behind. Everything here runs as root (prolog, epilog).
 */
#include "slurm/jobdir.h"
#include "slurm/jobconf.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PIPE_VAR "CUDA_MPS_PIPE_DIRECTORY="

static void
sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void
jobdir_boot_id(char *out, size_t size)
{
	char *data = NULL;

	out[0] = '\0';
	if (read_file("/proc/sys/kernel/random/boot_id", &data, NULL) == 0)
		str_copy(out, str_trim(data), size);
	err_clear();
	free(data);
}

/* mkdir -p, each new component 0755 */
static int
make_parents(const char *path)
{
	char buf[PATH_MAX];

	if (str_copy(buf, path, sizeof buf) >= sizeof buf)
		return err_set(EXIT_ENV, "%s: path too long", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return err_sys(EXIT_ENV, "cannot create %s", buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "cannot create %s", buf);
	return 0;
}

int
jobdir_root(const char *root)
{
	struct stat st;
	int fd;

	if (make_parents(root) < 0)
		return -1;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(EXIT_ENV, "state directory %s", root);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return err_sys(EXIT_ENV, "state directory %s", root);
	}
	close(fd);
	if (st.st_uid != geteuid())
		return err_set(EXIT_ENV, "state directory %s is owned by uid %u, not by uid %u; refusing "
		    "to use it", root, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 022)
		return err_set(EXIT_ENV, "state directory %s has mode %04o, writable by others; refusing "
		    "to use it", root, (unsigned)(st.st_mode & 07777));
	return 0;
}

int
jobdir_lock(const char *root)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/.lock", root) >= sizeof path)
		return err_set(EXIT_ENV, "state directory path too long");
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot open %s", path);
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return err_sys(EXIT_ENV, "cannot lock %s", path);
		}
	return fd;
}

void
jobdir_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
jobdir_path(const char *root, unsigned long jobid, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s/%lu", root, jobid) >= size)
		return err_set(EXIT_ENV, "state directory path too long");
	return 0;
}

int
jobdir_create(const char *root, unsigned long jobid, uid_t uid, gid_t gid)
{
	char dir[PATH_MAX];
	struct stat st;
	int fd, rc = 0;

	if (jobdir_path(root, jobid, dir, sizeof dir) < 0)
		return -1;
	/* a requeued job, or a prolog run twice: start from nothing */
	if (remove_tree(dir) < 0)
		return -1;
	if (mkdir(dir, 0700) < 0)
		return err_sys(EXIT_ENV, "cannot create %s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot open %s", dir);
	if (fchown(fd, uid, gid) < 0 || fchmod(fd, 0700) < 0 || fstat(fd, &st) < 0)
		rc = err_sys(EXIT_ENV, "cannot give %s to uid %u", dir, (unsigned)uid);
	close(fd);
	return rc;
}

/* ---- the record -------------------------------------------------------- */

static int
rec_path(const char *root, unsigned long jobid, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s/%lu.job", root, jobid) >= size)
		return err_set(EXIT_ENV, "state directory path too long");
	return 0;
}

int
jobrec_write(const char *root, const struct jobrec *r)
{
	char path[PATH_MAX];
	struct sbuf b;
	int rc;

	if (rec_path(root, r->jobid, path, sizeof path) < 0)
		return -1;
	sbuf_init(&b);
	sbuf_printf(&b, "jobid=%lu\nuid=%u\ngid=%u\nboot=%s\nstatus=%s\nindex=%s\nsm_pct=%.17g\n"
	    "mem_bytes=%llu\npriority=%d\n", r->jobid, (unsigned)r->uid, (unsigned)r->gid, r->boot,
	    r->failed ? "failed" : "ok", r->index == JOBMPS_INDEX_LOCAL ? "local" : "global",
	    r->lim.sm_pct, (unsigned long long)r->lim.mem_bytes, r->lim.priority);
	if (r->failed)
		sbuf_printf(&b, "error=%s\n", r->error);
	for (int i = 0; i < r->ngpus; i++)
		sbuf_printf(&b, "gpu=%s %s\n", r->gpu[i].id, r->gpu[i].uuid);
	rc = write_file_atomic(path, b.buf, b.len, 0644);
	sbuf_free(&b);
	return rc;
}

static void
rec_field(struct jobrec *r, const char *key, const char *val)
{
	if (strcmp(key, "jobid") == 0)
		r->jobid = strtoul(val, NULL, 10);
	else if (strcmp(key, "uid") == 0)
		r->uid = (uid_t)strtoul(val, NULL, 10);
	else if (strcmp(key, "gid") == 0)
		r->gid = (gid_t)strtoul(val, NULL, 10);
	else if (strcmp(key, "boot") == 0)
		str_copy(r->boot, val, sizeof r->boot);
	else if (strcmp(key, "status") == 0)
		r->failed = strcmp(val, "ok") != 0;
	else if (strcmp(key, "error") == 0)
		str_copy(r->error, val, sizeof r->error);
	else if (strcmp(key, "index") == 0)
		r->index = strcmp(val, "local") == 0 ? JOBMPS_INDEX_LOCAL : JOBMPS_INDEX_GLOBAL;
	else if (strcmp(key, "sm_pct") == 0)
		r->lim.sm_pct = strtod(val, NULL);
	else if (strcmp(key, "mem_bytes") == 0)
		r->lim.mem_bytes = strtoull(val, NULL, 10);
	else if (strcmp(key, "priority") == 0)
		r->lim.priority = atoi(val);
	else if (strcmp(key, "gpu") == 0 && r->ngpus < JOBMPS_MAX_GPUS) {
		const char *sp = strchr(val, ' ');

		if (!sp || (size_t)(sp - val) >= sizeof r->gpu[0].id)
			return;
		memcpy(r->gpu[r->ngpus].id, val, (size_t)(sp - val));
		r->gpu[r->ngpus].id[sp - val] = '\0';
		str_copy(r->gpu[r->ngpus].uuid, sp + 1, sizeof r->gpu[0].uuid);
		r->ngpus++;
	}
}

int
jobrec_read(const char *root, unsigned long jobid, struct jobrec *r)
{
	char path[PATH_MAX], *data = NULL, *save = NULL;

	memset(r, 0, sizeof *r);
	r->lim.priority = MPS_PRIO_UNSET;
	if (rec_path(root, jobid, path, sizeof path) < 0)
		return -1;
	if (access(path, F_OK) < 0)
		return errno == ENOENT ? 1 : err_sys(EXIT_ENV, "%s", path);
	if (read_file(path, &data, NULL) < 0)
		return -1;
	for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		rec_field(r, line, eq + 1);
	}
	free(data);
	return 0;
}

/* ---- processes --------------------------------------------------------- */

/* Is pid a process of uid whose MPS pipe directory lies below dir? */
static int
is_job_process(pid_t pid, uid_t uid, const char *dir)
{
	char path[64], *data = NULL;
	size_t len = 0, dlen = strlen(dir);
	struct stat st;
	int yes = 0;

	snprintf(path, sizeof path, "/proc/%ld", (long)pid);
	if (stat(path, &st) < 0 || st.st_uid != uid)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
	if (read_file(path, &data, &len) < 0) {
		err_clear();
		return 0;
	}
	for (size_t off = 0; off < len && !yes; off += strlen(data + off) + 1) {
		const char *v = data + off;

		if (str_starts(v, PIPE_VAR)) {
			v += strlen(PIPE_VAR);
			yes = strncmp(v, dir, dlen) == 0 && v[dlen] == '/';
		}
	}
	free(data);
	return yes;
}

/* Each process of uid with its pipe directory in dir: into pids (up to max); the count. */
static int
job_processes(const char *dir, uid_t uid, pid_t *pids, int max)
{
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		long v;

		if (!isdigit((unsigned char)e->d_name[0]) || parse_long(e->d_name, 1, 1L << 30, &v) < 0) {
			err_clear();
			continue;
		}
		if ((pid_t)v == getpid() || !is_job_process((pid_t)v, uid, dir))
			continue;
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
	}
	closedir(d);
	return n;
}

/* A zombie counts as gone: its parent (init, here) reaps it when it likes. */
static int
running(pid_t pid)
{
	char path[64], *data = NULL, *p;
	int yes = 0;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_file(path, &data, NULL) == 0 && (p = strrchr(data, ')')) != NULL)
		yes = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	err_clear();
	free(data);
	return yes;
}

int
jobdir_kill(const char *dir, uid_t uid)
{
	pid_t pids[256];
	int n, found = 0;

	/* a killed daemon's server may have been forking: look again until none is left */
	for (int round = 0; round < 5; round++) {
		n = job_processes(dir, uid, pids, 256);
		if (n == 0)
			break;
		found += n;
		for (int i = 0; i < n && i < 256; i++)
			kill(pids[i], SIGKILL);
		for (int i = 0; i < n && i < 256; i++)
			for (int t = 0; t < 250 && running(pids[i]); t++)
				sleep_ms(20);
	}
	return found;
}

int
jobdir_remove(const char *root, unsigned long jobid)
{
	char path[PATH_MAX];
	int rc = 0;

	if (jobdir_path(root, jobid, path, sizeof path) < 0)
		return -1;
	if (remove_tree(path) < 0)
		rc = -1;
	if (rec_path(root, jobid, path, sizeof path) < 0)
		return -1;
	if (unlink(path) < 0 && errno != ENOENT)
		rc = err_sys(EXIT_ENV, "cannot remove %s", path);
	return rc;
}

/* ---- leftovers --------------------------------------------------------- */

/* Does a slurmstepd of this job run here? Its title is "slurmstepd: [JOBID.STEP]". */
static int
job_has_stepd(unsigned long jobid)
{
	char want[48];
	struct dirent *e;
	DIR *d = opendir("/proc");
	int yes = 0;

	if (!d)
		return 1; /* cannot tell: assume it runs */
	snprintf(want, sizeof want, "[%lu.", jobid);
	while (!yes && (e = readdir(d)) != NULL) {
		char path[300], *data = NULL;
		size_t len = 0;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		if (read_file(path, &data, &len) == 0 && len > 0)
			yes = str_starts(data, "slurmstepd:") && strstr(data, want) != NULL;
		err_clear();
		free(data);
	}
	closedir(d);
	return yes;
}

/* A name in root that belongs to a job: "<jobid>" or "<jobid>.job". */
static int
entry_job(const char *name, unsigned long *jobid)
{
	char *end;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	errno = 0;
	*jobid = strtoul(name, &end, 10);
	return errno == 0 && (*end == '\0' || strcmp(end, ".job") == 0);
}

static int
over(const char *root, unsigned long jobid, const char *boot, jobdir_running_fn runs_here)
{
	struct jobrec r;
	char dir[PATH_MAX];
	pid_t pid;
	int slurm;

	if (jobrec_read(root, jobid, &r) != 0) {
		/* a directory without a record: its prolog died before it wrote one */
		err_clear();
		return !job_has_stepd(jobid);
	}
	if (boot[0] && strcmp(r.boot, boot) != 0)
		return 1;
	if (job_has_stepd(jobid) || jobdir_path(root, jobid, dir, sizeof dir) < 0)
		return 0;
	/*
	 * No step here. Between its prolog and its first step a job has none
	 * either, and its daemons run, as those of a job whose epilog never
	 * ran still do: only Slurm tells them apart.
	 */
	slurm = runs_here ? runs_here(jobid) : -1;
	if (slurm >= 0)
		return !slurm;
	return job_processes(dir, r.uid, &pid, 1) == 0;
}

int
jobdir_claim(const char *root, const char *node, const char *state)
{
	char path[PATH_MAX], *data = NULL;
	size_t len = 0;
	int fd, rc = 0;

	if (!node || !*node)
		return 0;
	if ((size_t)snprintf(path, sizeof path, "%s/.node", root) >= sizeof path)
		return err_set(EXIT_USAGE, "state directory %s: path too long", root);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		rc = write_all(fd, node, strlen(node));
		close(fd);
		return rc < 0 ? err_sys(EXIT_ENV, "%s", path) : 0;
	}
	if (errno != EEXIST)
		return err_sys(EXIT_ENV, "%s", path);
	if (read_file_at(AT_FDCWD, path, 256, &data, &len) < 0)
		return -1;
	if (len != strlen(node) || memcmp(data, node, len) != 0)
		rc = err_set(EXIT_USAGE, "state=%s is node %.*s's, and node %s uses it too (several slurmd on "
		    "one host share it): give state= a %%n (state=%s/%%n), so that each node has its own",
		    state, (int)len, data, node, state);
	free(data);
	return rc;
}

int
jobdir_clean_leftovers(const char *root, unsigned long current, jobdir_running_fn runs_here,
    char *swept, size_t size)
{
	unsigned long seen[256];
	int nseen = 0, cleaned = 0;
	char boot[64];
	struct dirent *e;
	DIR *d = opendir(root);

	if (swept && size > 0)
		swept[0] = '\0';
	if (!d)
		return 0;
	jobdir_boot_id(boot, sizeof boot);
	while ((e = readdir(d)) != NULL && nseen < 256) {
		unsigned long id;
		int dup = 0;

		if (!entry_job(e->d_name, &id) || id == current)
			continue;
		for (int i = 0; i < nseen; i++)
			dup |= seen[i] == id;
		if (!dup)
			seen[nseen++] = id;
	}
	closedir(d);
	for (int i = 0; i < nseen; i++) {
		struct jobrec r;
		char dir[PATH_MAX];

		if (!over(root, seen[i], boot, runs_here))
			continue;
		/* its daemons and servers first: as jobmps_epilog would have */
		if (jobrec_read(root, seen[i], &r) == 0 && r.uid != 0 &&
		    jobdir_path(root, seen[i], dir, sizeof dir) == 0)
			jobdir_kill(dir, r.uid);
		err_clear();
		if (jobdir_remove(root, seen[i]) < 0) {
			err_clear();
			continue;
		}
		if (swept && size > 0) {
			size_t at = strlen(swept);

			snprintf(swept + at, size - at, "%s%lu", at ? ", " : "", seen[i]);
		}
		cleaned++;
	}
	return cleaned;
}
