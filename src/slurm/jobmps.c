/*
 * jobmps: a job's daemons started and stopped. Root prepares and cleans the
 * directories; everything that touches MPS runs in a child that has dropped
 * root for good (supplementary groups, then gid, then uid, all three ids of
 * each), so that a daemon, its servers and every file they make belong to
 * the job's user and no path back to root exists. The child reports on a
 * pipe, one line each: "gpu ID UUID" for each device, then "ok" or
 * "error WHY"; what mps.c warns goes to the same pipe and is logged.
 */
#include "slurm/jobmps.h"
#include "gpu/backend.h"
#include "gpu/select.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* what the child keeps of the caller's environment (slurmd's, or a test's) */
static const char *const keep_env[] = {
	"GPUPACK_SIM", "GPUPACK_NVML_LIB", "GPUPACK_MPS_TIMEOUT", "LD_LIBRARY_PATH", "TZ",
	"FAKENVML_MACHINE", NULL,
};

static void (*logger)(const char *line);
static jobdir_running_fn running_fn;

void
jobmps_set_running_check(jobdir_running_fn fn)
{
	running_fn = fn;
}

void
jobmps_set_logger(void (*fn)(const char *line))
{
	logger = fn;
}

void
jobmps_log(const char *line)
{
	if (logger)
		logger(line);
	else
		fprintf(stderr, "gpupack: spank: %s\n", line);
}

/* ---- the child that is the job's user ---------------------------------- */

static int
become(uid_t uid, gid_t gid)
{
	uid_t r, e, s;

	if (uid == 0)
		return err_set(EXIT_USAGE, "the job runs as root: its MPS daemons would too; refusing");
	if (geteuid() != 0) {
		/* not root (a test, or the driver run by the user): only ourselves */
		if (geteuid() != uid)
			return err_set(EXIT_ENV, "cannot become uid %u (not root)", (unsigned)uid);
		return 0;
	}
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return err_sys(EXIT_ENV, "cannot become uid %u gid %u", (unsigned)uid, (unsigned)gid);
	/* no way back: a saved or real id of 0 would let a daemon regain root */
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || setuid(0) == 0)
		return err_set(EXIT_INTERNAL, "uid %u: root could not be dropped for good", (unsigned)uid);
	return 0;
}

static void
child_env(const struct jobmps_conf *c, const char *jobdir)
{
	char *keep[16];
	int n = 0;

	for (int i = 0; keep_env[i] && n < 15; i++) {
		const char *v = getenv(keep_env[i]);

		keep[n++] = v ? xstrdup(v) : NULL;
	}
	clearenv();
	for (int i = 0; i < n; i++) {
		if (keep[i])
			setenv(keep_env[i], keep[i], 1);
		free(keep[i]);
	}
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("HOME", "/", 1);
	setenv("GPUPACK_MPS_DIR", jobdir, 1);
	if (c->control[0])
		setenv("GPUPACK_MPS_CONTROL", c->control, 1);
	if (c->sim[0])
		setenv("GPUPACK_SIM", c->sim, 1);
}

static void
say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
say(int fd, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0)
		return;
}

/* ---- starting: in the child -------------------------------------------- */

static int
is_uuid(const char *s)
{
	return strncasecmp(s, "GPU-", 4) == 0 || strncasecmp(s, "MIG-", 4) == 0;
}

int
jobmps_split_list(const char *s, char **items, int max)
{
	char *copy, *save = NULL;
	int n = 0;

	if (!s)
		return 0;
	copy = xstrdup(s);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			for (int i = 0; i < n; i++)
				free(items[i]);
			free(copy);
			return err_set(EXIT_USAGE, "more than %d devices in '%.64s'", max, s);
		}
		items[n++] = xstrdup(str_trim(t));
	}
	free(copy);
	return n;
}

static void
free_items(char **items, int n)
{
	for (int i = 0; i < n; i++)
		free(items[i]);
}

/*
 * The job's devices here, as Slurm names them and as daemons need them.
 * Slurm hands MIG devices (AutoDetect=nvml) as UUIDs in CUDA_VISIBLE_DEVICES;
 * whole GPUs as global indices, which the driver resolves.
 */
static int
job_devices(const struct jobmps_job *j, struct gpu_target *t, char **ids, int *n)
{
	struct gpu_backend *b = NULL;
	struct gpu_system sys;
	char *items[JOBMPS_MAX_GPUS];
	int ni, uuids = 0, rc = 0;

	ni = jobmps_split_list(j->visible, items, JOBMPS_MAX_GPUS);
	if (ni < 0)
		return -1;
	for (int i = 0; i < ni; i++)
		uuids += is_uuid(items[i]);
	if (ni > 0 && uuids == ni) {
		for (int i = 0; i < ni; i++) {
			memset(&t[i], 0, sizeof t[i]);
			t[i].gpu = t[i].gi = t[i].ci = -1;
			str_copy(t[i].uuid, items[i], sizeof t[i].uuid);
			ids[i] = items[i];
		}
		*n = ni;
		return 0;
	}
	free_items(items, ni);
	ni = jobmps_split_list(j->gpus && *j->gpus ? j->gpus : j->visible, items, JOBMPS_MAX_GPUS);
	if (ni <= 0)
		return ni < 0 ? -1 : err_set(EXIT_ENV, "the job has no GPU on this node "
		    "(SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES are empty)");
	if (gpu_open(NULL, 0, &b) < 0 || gpu_snapshot(b, &sys, 0) < 0) {
		free_items(items, ni);
		if (b)
			gpu_close(b);
		return err_prefix("reading the GPUs");
	}
	for (int i = 0; i < ni && rc == 0; i++) {
		if (gpu_select_one(&sys, items[i], &t[i]) < 0)
			rc = err_prefix("GPU %s of the job", items[i]);
		else if (sys.gpus[t[i].gpu].mig_current == MIG_ENABLED)
			rc = err_set(EXIT_ENV, "GPU %s has MIG enabled: Slurm must hand out its MIG devices "
			    "(gres.conf AutoDetect=nvml), not the whole GPU", items[i]);
		else
			t[i].gpu = sys.gpus[t[i].gpu].index;
		ids[i] = items[i];
	}
	gpu_system_free(&sys);
	gpu_close(b);
	*n = ni;
	if (rc < 0)
		free_items(items, ni);
	return rc;
}

static void
stop_all(struct mps_daemon *d, int n)
{
	for (int i = 0; i < n; i++)
		if (mps_stop(&d[i], 0, 1) < 0)
			err_clear();
}

/* In the child: start a daemon for each device; report each, then ok or error. */
static int
start_child(int fd, const struct jobmps_job *j, const struct mps_limits *lim)
{
	struct gpu_target t[JOBMPS_MAX_GPUS];
	struct mps_daemon d[JOBMPS_MAX_GPUS];
	char *ids[JOBMPS_MAX_GPUS];
	int n = 0, started;

	if (job_devices(j, t, ids, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (mps_start(&t[i], t[i].gpu, lim, 0, &d[i], &started) < 0) {
			char msg[768];
			int code = err_code();

			str_copy(msg, err_msg(), sizeof msg);
			stop_all(d, i);
			free_items(ids, n);
			return err_set(code, "MPS daemon for %s: %s", t[i].uuid, msg);
		}
	}
	for (int i = 0; i < n; i++)
		say(fd, "gpu %s %s", ids[i], t[i].uuid);
	free_items(ids, n);
	return 0;
}

/* In the child: quit every daemon of the job (clients get grace seconds). */
static int
stop_child(int fd, double grace)
{
	struct mps_daemon *d = NULL;
	int n = 0, rc = 0;

	if (mps_list(&d, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (mps_stop(&d[i], grace, 1) < 0) {
			say(fd, "log stopping the daemon of %s: %s", d[i].uuid, err_msg());
			err_clear();
			rc = -1;
		}
	free(d);
	return rc < 0 ? err_set(EXIT_ENV, "some daemons did not stop cleanly") : 0;
}

/* ---- the parent -------------------------------------------------------- */

enum child_job { CHILD_START, CHILD_STOP };

struct child_result {
	int ok;
	char error[512];
	int ngpus;
	char id[JOBMPS_MAX_GPUS][GPU_UUID_LEN];
	char uuid[JOBMPS_MAX_GPUS][GPU_UUID_LEN];
};

static void
child_line(char *line, struct child_result *res)
{
	if (strcmp(line, "ok") == 0) {
		res->ok = 1;
	} else if (str_starts(line, "error ")) {
		str_copy(res->error, line + 6, sizeof res->error);
	} else if (str_starts(line, "gpu ") && res->ngpus < JOBMPS_MAX_GPUS) {
		char *sp = strchr(line + 4, ' ');

		if (sp) {
			*sp = '\0';
			str_copy(res->id[res->ngpus], line + 4, GPU_UUID_LEN);
			str_copy(res->uuid[res->ngpus], sp + 1, GPU_UUID_LEN);
			res->ngpus++;
		}
	} else {
		jobmps_log(str_starts(line, "log ") ? line + 4 : line);
	}
}

/* Read the child's lines until it closes the pipe or the deadline passes. */
static void
read_child(int fd, double deadline, struct child_result *res)
{
	struct sbuf b;
	char buf[1024];

	sbuf_init(&b);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = (int)((deadline - clock_mono()) * 1000);
		ssize_t k;
		char *nl;

		if (ms <= 0)
			break;
		if (poll(&p, 1, ms) <= 0)
			continue;
		k = read(fd, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		sbuf_addn(&b, buf, (size_t)k);
		while (b.buf && (nl = strchr(b.buf, '\n')) != NULL) {
			*nl = '\0';
			child_line(b.buf, res);
			memmove(b.buf, nl + 1, b.len - (size_t)(nl + 1 - b.buf) + 1);
			b.len -= (size_t)(nl + 1 - b.buf);
		}
	}
	sbuf_free(&b);
}

/*
 * Run what=START or STOP as the job's user, at most limit seconds; the
 * child's report in *res. -1 with err set when it failed, hung or died.
 */
static int
as_user(enum child_job what, const struct jobmps_conf *c, const struct jobmps_job *j,
    const struct mps_limits *lim, const char *jobdir, double limit, struct child_result *res)
{
	int p[2], status = 0;
	pid_t pid;
	double deadline = clock_mono() + limit;

	memset(res, 0, sizeof *res);
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_sys(EXIT_INTERNAL, "pipe");
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_sys(EXIT_ENV, "fork");
	}
	if (pid == 0) {
		int rc, null = open("/dev/null", O_RDWR);
		sigset_t none;

		/* slurmstepd blocks and ignores signals; a child must not inherit that */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		dup2(null, 0);
		dup2(p[1], 2);  /* mps.c's warnings reach the log */
		err_set_command("");
		rc = become(j->uid, j->gid);
		if (rc == 0) {
			child_env(c, jobdir);
			rc = what == CHILD_START ? start_child(p[1], j, lim) : stop_child(p[1], c->grace);
		}
		if (rc == 0)
			say(p[1], "ok");
		else
			say(p[1], "error %s", err_msg());
		_exit(rc == 0 ? 0 : 1);
	}
	close(p[1]);
	read_child(p[0], deadline, res);
	close(p[0]);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (clock_mono() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return err_set(EXIT_ENV, "gave up after %.0f s (an MPS control command hung?)", limit);
		}
		usleep(10000);
	}
	if (res->ok && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (res->error[0])
		return err_set(EXIT_ENV, "%s", res->error);
	return err_set(EXIT_INTERNAL, "the helper process ended without a report (status %d)", status);
}

/* ---- prolog and epilog --------------------------------------------------- */

/* A state root without %n, shared by several nodes' slurmd, is refused (jobdir_claim). */
static int
claim(const struct jobmps_conf *c, const struct jobmps_job *j, const char *root)
{
	return strstr(c->state, "%n") ? 0 : jobdir_claim(root, j->node, c->state);
}

static int
job_root(const struct jobmps_conf *c, const struct jobmps_job *j, char *root, size_t size)
{
	if (jobmps_state_root(c, j->node ? j->node : "", root, size) < 0)
		return -1;
	return jobdir_root(root);
}

/* What a sweep removed, in the node's log: which jobs, so that an admin can tell. */
static void
log_swept(const struct jobmps_job *j, int n, const char *swept)
{
	char line[1024];

	if (n <= 0)
		return;
	snprintf(line, sizeof line, "job %lu on %s: removed what %d ended job%s left (job%s %s)", j->jobid,
	    j->node ? j->node : "?", n, n == 1 ? "" : "s", n == 1 ? "" : "s", swept);
	jobmps_log(line);
}

static int
count_list(const char *s)
{
	int n = s && *s ? 1 : 0;

	for (; s && *s; s++)
		n += *s == ',';
	return n;
}

int
jobmps_prolog(const struct jobmps_conf *c, const struct jobmps_job *j, const struct mps_limits *lim)
{
	char root[PATH_MAX], dir[PATH_MAX], swept[512];
	struct child_result res;
	struct jobrec r;
	int lk, rc, n, ndev = count_list(j->gpus) + count_list(j->visible);

	/* a root another node uses too: this node's prolog fails, with the line (the node's log) */
	if (job_root(c, j, root, sizeof root) < 0 || claim(c, j, root) < 0 ||
	    jobdir_path(root, j->jobid, dir, sizeof dir) < 0)
		return -1;
	lk = jobdir_lock(root);
	if (lk < 0)
		return -1;
	n = jobdir_clean_leftovers(root, j->jobid, running_fn, swept, sizeof swept);
	log_swept(j, n, swept);
	memset(&r, 0, sizeof r);
	r.jobid = j->jobid;
	r.uid = j->uid;
	r.gid = j->gid;
	r.lim = *lim;
	r.index = c->index;
	if (r.index == JOBMPS_INDEX_AUTO) {
		const char *conf = getenv("SLURM_CONF");

		r.index = jobmps_index_mode(conf && *conf ? conf : "/etc/slurm/slurm.conf");
	}
	jobdir_boot_id(r.boot, sizeof r.boot);
	/* %n made the root longer here than the check could know */
	rc = jobmps_state_fits(c, j->node);
	/*
	 * A requeued job runs again with its id: where its first run's epilog
	 * never ran (the node failed), that run's daemons still serve the old
	 * directory. End them before it is made anew (the sweep skips this id).
	 */
	if (rc == 0 && access(dir, F_OK) == 0 && j->uid != 0 && jobdir_kill(dir, j->uid) > 0)
		jobmps_log("a requeued job: its earlier run's MPS processes were still running here: ended");
	if (rc == 0)
		rc = jobdir_create(root, j->jobid, j->uid, j->gid);
	if (rc == 0)
		rc = as_user(CHILD_START, c, j, lim, dir, 30 + 15.0 * ndev, &res);
	if (rc < 0) {
		/* nothing of it may stay: a daemon the child started before it hung */
		r.failed = 1;
		str_copy(r.error, err_msg(), sizeof r.error);
		jobdir_kill(dir, j->uid);
		remove_tree(dir);
		err_clear();
	} else {
		r.ngpus = res.ngpus;
		for (int i = 0; i < res.ngpus; i++) {
			str_copy(r.gpu[i].id, res.id[i], sizeof r.gpu[i].id);
			str_copy(r.gpu[i].uuid, res.uuid[i], sizeof r.gpu[i].uuid);
		}
	}
	if (jobrec_write(root, &r) < 0) {
		jobdir_unlock(lk);
		return -1;
	}
	jobdir_unlock(lk);
	if (r.failed)
		return err_set(EXIT_ENV, "%s", r.error);
	return 0;
}

int
jobmps_sweep(const struct jobmps_conf *c, const struct jobmps_job *j)
{
	char root[PATH_MAX], swept[512];
	struct stat st;
	int lk, n;

	if (jobmps_state_root(c, j->node ? j->node : "", root, sizeof root) < 0)
		return -1;
	/* nothing was ever started here: nothing to sweep, and nothing made for it */
	if (lstat(root, &st) < 0 && errno == ENOENT)
		return 0;
	if (jobdir_root(root) < 0 || claim(c, j, root) < 0 || (lk = jobdir_lock(root)) < 0)
		return -1;
	n = jobdir_clean_leftovers(root, j->jobid, running_fn, swept, sizeof swept);
	jobdir_unlock(lk);
	log_swept(j, n, swept);
	return n;
}

int
jobmps_epilog(const struct jobmps_conf *c, const struct jobmps_job *j)
{
	char root[PATH_MAX], dir[PATH_MAX];
	struct child_result res;
	struct jobrec r;
	int lk, rc = 0, have;

	if (job_root(c, j, root, sizeof root) < 0 || jobdir_path(root, j->jobid, dir, sizeof dir) < 0)
		return -1;
	lk = jobdir_lock(root);
	if (lk < 0)
		return -1;
	have = jobrec_read(root, j->jobid, &r);
	if (have < 0) {
		jobdir_unlock(lk);
		return -1;
	}
	if (have == 1 && access(dir, F_OK) < 0) {
		jobdir_unlock(lk);
		return 0; /* the job had no MPS here */
	}
	/* the record names the user the daemons run as (a missing one: Slurm's word) */
	if (have == 1) {
		r.uid = j->uid;
		r.gid = j->gid;
	}
	if (access(dir, F_OK) == 0 && as_user(CHILD_STOP, c, j, NULL, dir, c->grace + 30 + 10.0 * r.ngpus,
	    &res) < 0) {
		jobmps_log(err_msg());
		err_clear();
	}
	if (r.uid != 0 && jobdir_kill(dir, r.uid) > 0)
		jobmps_log("MPS processes of the job were still running after quit: killed");
	if (jobdir_remove(root, j->jobid) < 0)
		rc = -1;
	jobdir_unlock(lk);
	return rc;
}

/* ---- how tasks number their devices ------------------------------------ */

/* The value of KEY= in a slurm.conf-style file (case-insensitive key), into out; 0 found. */
static int
conf_value(const char *path, const char *key, char *out, size_t size)
{
	char *data = NULL, *save = NULL;
	size_t klen = strlen(key);
	int found = -1;

	if (read_file(path, &data, NULL) < 0) {
		err_clear();
		return -1;
	}
	for (char *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *p = str_trim(l), *hash = strchr(p, '#');

		if (hash)
			*hash = '\0';
		if (strncasecmp(p, key, klen) != 0)
			continue;
		p += klen;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '=')
			continue;
		str_copy(out, str_trim(p + 1), size);
		found = 0;
	}
	free(data);
	return found;
}

int
jobmps_index_mode(const char *slurm_conf)
{
	char v[256], cg[PATH_MAX], *slash;

	if (!slurm_conf || conf_value(slurm_conf, "TaskPlugin", v, sizeof v) < 0 || !strstr(v, "cgroup"))
		return JOBMPS_INDEX_GLOBAL;
	str_copy(cg, slurm_conf, sizeof cg);
	slash = strrchr(cg, '/');
	if (!slash || (size_t)(slash - cg) + sizeof "/cgroup.conf" > sizeof cg)
		return JOBMPS_INDEX_GLOBAL;
	strcpy(slash, "/cgroup.conf");
	if (conf_value(cg, "ConstrainDevices", v, sizeof v) == 0 && strcasecmp(v, "yes") == 0)
		return JOBMPS_INDEX_LOCAL;
	return JOBMPS_INDEX_GLOBAL;
}
