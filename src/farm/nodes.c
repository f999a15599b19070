/*
 * nodes: the protocol of a farm over nodes (farm/nodes.h says the layout).
 * Joining a run, claiming inputs, the heartbeat and declaring the silent
 * lost, the passes over the inputs that rerun what a lost gpupack left, and
 * the end. The records themselves: nodes_journal.c.
 *
 * Filesystems: claims and marks are symlink(2), which creates the name or
 * fails with EEXIST in one step on local filesystems, NFSv3/v4 (one RPC on
 * the server), Lustre and GPFS/Spectrum Scale; `current` and FILE are
 * replaced with rename(2). Nothing depends on O_APPEND or on locks, which
 * NFS does not make atomic across clients. A heartbeat is an mtime the
 * server sets; we compare it with our own file's, never with a local clock,
 * and read both through open(2) so that NFS revalidates its cached
 * attributes (close-to-open consistency).
 */
#include "farm/cost.h"
#include "farm/nodes.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct peer {
	char owner[128];
	int restart;             /* the job's restart it joined in (its name's .rK) */
	int listed;              /* in the last listing of done/ (or lost/) */
	int done, lost;          /* seen so */
	int swept;               /* lost, and its records read by the pass going on */
	struct nodes_log *log;   /* a lost one's records, read when a pass starts */
	double asked;            /* when Slurm was last asked about its node (clock_mono; 0 never) */
};

struct nodes {
	char dir[PATH_MAX];      /* FILE.farm, as the joblog's description names it */
	char run[128];           /* this run's name */
	char rundir[PATH_MAX];
	char owner[128];         /* node.procid.pid, .rK after the job's K-th requeue */
	char host[64];           /* the Host column */
	char parent[128];
	char step[128];          /* the Slurm job step (JOBID.STEPID) we are a task of; "" outside */
	int restart;             /* $SLURM_RESTART_COUNT: the job's requeues so far */
	struct inputs pristine;  /* the input sources as given: each pass reads them again */
	struct nodes_chain *chain;
	int resume_failed;
	int pass;                /* 0: the first walk over the inputs; later: reruns of the lost */
	double lost_after;
	double ask_after;        /* $GPUPACK_FARM_ASK: a beat this late, Slurm is asked (0: never) */
	char jobid[64];          /* $SLURM_JOB_ID, "" outside Slurm: nothing to ask */
	int asked_now;           /* Slurm was asked in this look already: one question a beat */
	double next_beat;
	struct timespec my_beat;
	struct peer *peers;
	size_t npeers, cap;
	int need_pass;           /* a peer was declared lost since the last pass */
	int fenced;              /* we were declared lost: record nothing more */
	int stopped;             /* and our tasks were told to stop */
	int idle;                /* done/OWNER is there */
	int over;                /* the farm ended everywhere */
	/* claims (farm/nodes.h): blocks of inputs, from 1 on, as every member reads them */
	unsigned long long total;   /* inputs of the run (0: not known: blocks of one) */
	int members, slots;         /* gpupacks of the run, and our slots: the blocks' size */
	struct block *blocks;
	size_t nblocks, bcap, bat;
	struct seqmap held;         /* later passes: seq -> its highest attempt's holder, read once */
	unsigned watched;           /* beats so far: whose beat to look at next */
	unsigned place;             /* where our turn starts (srun's task id): each member reads others */
	double lost_checked;        /* when nodes_unrecorded last looked for our lost mark */
	double seen_wait;           /* since when the end waits for a log to be seen whole */
};

/* Inputs start..start+len-1 are owner's first attempts (who: a peer's index, -1 us). */
struct block {
	unsigned long long start, len;
	int who;
};

/* ---- paths and small things ----------------------------------------------- */

static int
path_in(const struct nodes *n, char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
path_in(const struct nodes *n, char *out, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	if ((size_t)snprintf(out, size, "%s/%s", n->rundir, rel) >= size)
		return err_set(EXIT_ENV, "%s: path too long", n->rundir);
	return 0;
}

static int
make_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "cannot create %s", path);
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(EXIT_ENV, "%s is not a directory; refusing to use it", path);
	return 0;
}

static int
read_link(const char *path, char *out, size_t size)
{
	ssize_t k = readlink(path, out, size - 1);

	if (k < 0)
		return -1;
	out[k] = '\0';
	return 0;
}

/* A mark: create name (a symlink holding what); 1 created, 0 already there, -1 error. */
static int
mark(const char *what, const char *name)
{
	if (symlink(what, name) == 0)
		return 1;
	if (errno == EEXIST)
		return 0;
	return err_sys(EXIT_ENV, "cannot create %s", name);
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* A name for files: letters, digits, '-', '_' and '.' kept, anything else '_'. */
static void
file_name(const char *s, char *out, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		out[i] = (char)((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.' ? s[i] : '_');
	out[i] = '\0';
	if (out[0] == '.' || out[0] == '\0')
		out[0] = '_';
}

/* ---- joining ---------------------------------------------------------------- */

/*
 * Is this run one farm over several gpupacks? srun started several of us
 * (SLURM_STEP_NUM_TASKS), or FILE.farm exists (a farm run earlier: its
 * records are there, FILE is only their merged view), or the user named a
 * run to join (GPUPACK_FARM_RUN).
 */
static int
wanted(const struct farm_opts *o, int *tasks)
{
	const char *nt = getenv("SLURM_STEP_NUM_TASKS");

	*tasks = nt && getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID") ? atoi(nt) : 0;
	if (o->dry_run || o->shard_n > 0)
		return 0;
	if (*tasks > 1 || getenv("GPUPACK_FARM_RUN"))
		return 1;
	return joblog_is_file(&o->joblog) && exists(o->joblog.farm);
}

static int
check_options(const struct farm_opts *o, int tasks)
{
	const struct inputs *in = &o->ts.in;

	if (o->joblog.kind == JOBLOG_NONE)
		return err_set(EXIT_USAGE, "srun started %d gpupacks: give --joblog FILE on a filesystem "
		    "they all share (one farm over the nodes), or --shard slurm (a fixed split)", tasks);
	if (o->joblog.kind == JOBLOG_STDOUT)
		return err_set(EXIT_USAGE, "--joblog -: a farm over nodes needs a file they all share");
	if (o->joblog.append)
		return err_set(EXIT_USAGE, "--joblog +%s: a farm over nodes keeps its records in %s; "
		    "use --resume to go on with them", o->joblog.path, o->joblog.farm);
	if (o->retry_failed)
		return err_set(EXIT_USAGE, "--retry-failed: a farm over nodes reruns failed inputs with "
		    "--resume-failed");
	/* every node must number the inputs alike: nothing random, nothing by its own slots */
	if (o->ts.shuffle)
		return err_set(EXIT_USAGE, "--shuf: every node of a farm over nodes must number the "
		    "inputs alike");
	if (o->ts.spread)
		return err_set(EXIT_USAGE, "-X/-m spread the last inputs over a node's own slots: a farm "
		    "over nodes needs tasks every node builds alike (use -n N or --xargs)");
	if (in->nsrc == 0)
		return err_set(EXIT_USAGE, "a farm over nodes reads its inputs on every node: give them "
		    "with ::: or :::: FILE, not on stdin");
	for (int i = 0; i < in->nsrc; i++)
		if (in->src[i].file && strcmp(in->src[i].file, "-") == 0)
			return err_set(EXIT_USAGE, "a farm over nodes reads its inputs on every node: give "
			    "them with ::: or :::: FILE, not on stdin");
	return 0;
}

/* The sources as given (before they are opened and read): for the later passes. */
static void
copy_sources(struct inputs *dst, const struct inputs *src)
{
	inputs_init(dst);
	dst->o = src->o;
	for (int i = 0; i < src->nsrc; i++) {
		const struct source *s = &src->src[i];

		if (s->file) {
			inputs_add_file(dst, s->file, s->linked);
		} else {
			struct source *d = inputs_add_args(dst, s->linked);

			for (size_t k = 0; k < s->n; k++)
				source_add_value(d, s->vals[k]);
		}
	}
}

int
nodes_prepare(struct farm *f)
{
	int tasks;

	if (!wanted(f->o, &tasks))
		return 0;
	if (check_options(f->o, tasks) < 0)
		return -1;
	f->nodes = xcalloc(1, sizeof *f->nodes);
	copy_sources(&f->nodes->pristine, &f->o->ts.in);
	return 1;
}

/* FILE.farm/identity: which command these records belong to. */
static int
identity_check(const struct nodes *n, uint64_t id, int resume)
{
	char path[PATH_MAX + 16], want[64], *data = NULL;
	int rc = 0;

	snprintf(path, sizeof path, "%s/identity", n->dir);
	snprintf(want, sizeof want, "gpupack-run %016" PRIx64 "\n", id);
	if (exists(path) && read_file(path, &data, NULL) < 0)
		return -1;
	if (data && strcmp(data, want) != 0 && resume)
		rc = err_set(EXIT_USAGE, "--resume: %s was written for another command or other inputs; "
		    "run without --resume or use another joblog", n->dir);
	else if (!data || strcmp(data, want) != 0)
		rc = write_file_atomic(path, want, strlen(want), 0644);
	free(data);
	return rc;
}

/* The run join_run will find this one resumes (read only: what --resume checks before writing). */
static void
planned_parent(const struct nodes *n, int resume, char *out, size_t size)
{
	char path[PATH_MAX + 300];

	str_copy(out, "none", size);
	if (path_in(n, path, sizeof path, "parent") == 0 && read_link(path, out, size) == 0)
		return;
	err_clear();
	snprintf(path, sizeof path, "%s/current", n->dir);
	if (!resume || read_link(path, out, size) < 0 || strcmp(out, n->run) == 0)
		str_copy(out, "none", size);
}

/* The run this one resumes: the first of us to get here decides, for all. */
static int
join_run(struct nodes *n, int resume)
{
	char path[PATH_MAX + 300], cur[128] = "none", tmp[PATH_MAX + 300];
	static const char *const subs[] = {"claim", "reclaim", "log", "alive", "done", "lost", NULL};

	if (make_dir(n->rundir) < 0)
		return -1;
	for (int i = 0; subs[i]; i++) {
		if (path_in(n, path, sizeof path, "%s", subs[i]) < 0 || make_dir(path) < 0)
			return -1;
	}
	snprintf(path, sizeof path, "%s/current", n->dir);
	if (read_link(path, cur, sizeof cur) < 0)
		str_copy(cur, "none", sizeof cur);
	if (!resume || strcmp(cur, n->run) == 0)
		str_copy(cur, "none", sizeof cur);
	/* the job step whose tasks we are: a late one of them is told from a new run by it */
	if (n->step[0] && (path_in(n, path, sizeof path, "step") < 0 || mark(n->step, path) < 0))
		return -1;
	if (path_in(n, path, sizeof path, "parent") < 0 || mark(cur, path) < 0)
		return -1;
	if (read_link(path, n->parent, sizeof n->parent) < 0)
		return err_sys(EXIT_ENV, "cannot read %s", path);
	/* then point current at us: each of us renames its own link over it */
	snprintf(tmp, sizeof tmp, "%s/.current.%s", n->dir, n->owner);
	snprintf(path, sizeof path, "%s/current", n->dir);
	unlink(tmp);
	if (symlink(n->run, tmp) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return err_sys(EXIT_ENV, "cannot point %s at run %s", path, n->run);
	}
	return 0;
}

static int
beat(struct nodes *n)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (path_in(n, path, sizeof path, "alive/%s", n->owner) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot write %s", path);
	/* the time the filesystem keeps: the server's, on NFS */
	if (futimens(fd, NULL) < 0 || fstat(fd, &st) < 0) {
		close(fd);
		return err_sys(EXIT_ENV, "cannot write %s", path);
	}
	close(fd);
	n->my_beat = st.st_mtim;
	return 0;
}

/* Refuse dir, the joblog's, where the farm cannot make its semantics safe (nodes_mount.c). */
static int
check_mount(const struct nodes *n, const char *dir)
{
	char real[PATH_MAX], why[PATH_MAX + 512], *info = NULL;
	int bad;

	/* not a path of this machine (farmsim's), or no /proc: nothing to tell */
	if (!realpath(dir, real) || read_file_max("/proc/self/mountinfo", 1 << 22, &info, NULL) < 0) {
		err_clear();
		return 0;
	}
	bad = nodes_mount_check(info, real, n->lost_after, why, sizeof why);
	free(info);
	return bad ? err_set(EXIT_ENV, "%s", why) : 0;
}

/* A fresh stream over the inputs as given, the tasks built as the run builds them. */
static int
fresh_inputs(struct farm *f, struct task_src *fresh)
{
	struct task_src *ts = &f->o->ts;

	tasks_init(fresh);
	copy_sources(&fresh->in, &f->nodes->pristine);
	fresh->max_args = ts->max_args;
	fresh->fill = ts->fill;
	fresh->noarg = ts->noarg;
	fresh->slots = ts->slots;
	fresh->max_len = ts->max_len;
	fresh->cmd = ts->cmd;
	if (tasks_open(fresh) < 0) {
		tasks_free(fresh);
		return -1;
	}
	return 0;
}

/*
 * What the claims' sizes need: the inputs (counted once, on a stream of
 * their own, unless the run counted them already), the members (srun's
 * tasks; outside srun NODES_MEMBERS_GUESS) and our slots.
 */
static int
size_claims(struct farm *f)
{
	struct nodes *n = f->nodes;
	const char *nt = getenv("SLURM_STEP_NUM_TASKS");
	struct task_src fresh;
	struct targs a;
	unsigned long long seq;
	int r;

	n->place = (unsigned)atoi(env_or("SLURM_PROCID", "0")) * NODES_WATCH + (unsigned)getpid();
	n->members = nt && getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID") && atoi(nt) > 1 ? atoi(nt) :
	    NODES_MEMBERS_GUESS;
	n->slots = f->nr > 0 ? f->nr : 1;
	n->total = f->total_tasks;
	if (n->total > 0)
		return 0;
	if (fresh_inputs(f, &fresh) < 0)
		return -1;
	while ((r = tasks_next(&fresh, &a, &seq)) > 0) {
		n->total = seq;
		targs_free(&a);
	}
	tasks_free(&fresh);
	return r < 0 ? -1 : 0;
}

/*
 * A run of this name ran on the joblog before: its directory is there, and
 * no member holds the joblog's lock. Are we a member of it that comes late?
 * srun's tasks need not all reach gpupack together, and a requeued job runs
 * its steps again: a task of the same Slurm job step joins the run and
 * finds what is left of it. Anything else is a new run that reuses the
 * name: the old claims would hold every input, and nothing would run.
 */
static int
late_member(const struct nodes *n)
{
	char path[PATH_MAX], step[128];

	if (!n->step[0] || path_in(n, path, sizeof path, "step") < 0 || read_link(path, step, sizeof step) < 0) {
		err_clear();
		return 0;
	}
	return strcmp(step, n->step) == 0;
}

/* $SLURM_RESTART_COUNT: how often Slurm requeued the job (0: never, or not under Slurm). */
static int
restart_count(void)
{
	long k;

	if (parse_long(env_or("SLURM_RESTART_COUNT", "0"), 0, 1L << 20, &k) < 0) {
		err_clear();
		return 0;
	}
	return (int)k;
}

/* Our name in the run: node.procid.pid, and .rK in the job's K-th requeue (peer_restart reads it). */
static void
name_owner(struct nodes *n)
{
	char part[PATH_MAX];
	int len;

	len = snprintf(part, sizeof part, "%s.%s.%ld", n->host, env_or("SLURM_PROCID", "0"), (long)getpid());
	if (n->restart > 0 && len > 0 && (size_t)len < sizeof part)
		snprintf(part + len, sizeof part - (size_t)len, ".r%d", n->restart);
	file_name(part, n->owner, sizeof n->owner);
}

/* This member's own log, FILE.farm/RUN/log/OWNER, a joblog with its identity beside it. */
static int
open_own_log(struct farm *f, char *path, size_t size, uint64_t identity)
{
	struct joblog_desc d;
	int rc;

	if (path_in(f->nodes, path, size, "log/%s", f->nodes->owner) < 0 || joblog_of_file(&d, path) < 0)
		return -1;
	rc = journal_open(&f->j, &d, 0, 0, identity);
	joblog_free(&d);
	return rc;
}

int
nodes_setup(struct farm *f, uint64_t identity)
{
	const struct farm_opts *o = f->o;
	struct nodes *n = f->nodes;
	char host[64], part[PATH_MAX], *dot;

	if (!n)
		return 0;
	n->resume_failed = o->resume_failed;
	if (parse_double(env_or("GPUPACK_FARM_LOST", "60"), &n->lost_after) < 0 || n->lost_after <= 0)
		return err_set(EXIT_USAGE, "GPUPACK_FARM_LOST=%s: want seconds", getenv("GPUPACK_FARM_LOST"));
	if (parse_double(env_or("GPUPACK_FARM_ASK", "5"), &n->ask_after) < 0 || n->ask_after < 0)
		return err_set(EXIT_USAGE, "GPUPACK_FARM_ASK=%s: want seconds (0: never ask Slurm)",
		    getenv("GPUPACK_FARM_ASK"));
	str_copy(n->jobid, env_or("SLURM_JOB_ID", ""), sizeof n->jobid);
	/* the description made sure FILE.farm fits */
	str_copy(n->dir, o->joblog.farm, sizeof n->dir);
	if (check_mount(n, o->joblog.dir) < 0)
		return -1;
	if (gethostname(host, sizeof host) < 0)
		str_copy(host, "localhost", sizeof host);
	host[sizeof host - 1] = '\0';
	if ((dot = strchr(host, '.')) != NULL)
		*dot = '\0';
	file_name(env_or("SLURMD_NODENAME", host), n->host, sizeof n->host);
	n->restart = restart_count();
	name_owner(n);
	if (getenv("SLURM_JOB_ID") && getenv("SLURM_STEP_ID")) {
		snprintf(part, sizeof part, "%s.%s", getenv("SLURM_JOB_ID"), getenv("SLURM_STEP_ID"));
		file_name(part, n->step, sizeof n->step);
	}
	if (getenv("GPUPACK_FARM_RUN"))
		file_name(getenv("GPUPACK_FARM_RUN"), n->run, sizeof n->run);
	else if (n->step[0]) {
		str_copy(n->run, n->step, sizeof n->run);
	} else {
		snprintf(part, sizeof part, "local.%s.%ld", n->host, (long)getpid());
		file_name(part, n->run, sizeof n->run);
	}
	if (strcmp(n->run, "none") == 0 || strcmp(n->run, "current") == 0 || strcmp(n->run, "identity") == 0)
		return err_set(EXIT_USAGE, "GPUPACK_FARM_RUN=%s: a reserved name", n->run);
	if ((size_t)snprintf(n->rundir, sizeof n->rundir, "%s/%s", n->dir, n->run) >= sizeof n->rundir)
		return err_set(EXIT_USAGE, "--joblog %s: path too long", o->joblog.path);
	/* one farm per joblog: the gpupacks of this run (a requeued job's are another) share it */
	snprintf(part, sizeof part, "%s/%d", n->run, n->restart);
	if (joblock_take(&f->lock, &o->joblog, part, -1) < 0)
		return -1;
	/* a name used before, by another run: its claims would hold every input (nothing would run) */
	if (getenv("GPUPACK_FARM_RUN") && f->lock.first && exists(n->rundir) && !late_member(n))
		return err_set(EXIT_USAGE, "GPUPACK_FARM_RUN=%s: a run of that name already ran on joblog %s; "
		    "give this run a new name (with --resume it goes on from the runs before)", n->run,
		    o->joblog.path);
	/* what --resume reads is read before anything is written: a refused one changes nothing */
	planned_parent(n, o->resume || o->resume_failed, part, sizeof part);
	if (nodes_chain_load(n->dir, part, &n->chain) < 0)
		return err_prefix("--resume");
	if (make_dir(n->dir) < 0 || identity_check(n, identity, o->resume || o->resume_failed) < 0 ||
	    join_run(n, o->resume || o->resume_failed) < 0)
		return err_prefix("farm over nodes");
	if (strcmp(part, n->parent) != 0) {
		/* another of us decided first, meanwhile */
		nodes_chain_free(n->chain);
		if (nodes_chain_load(n->dir, n->parent, &n->chain) < 0)
			return err_prefix("--resume");
	}
	if (size_claims(f) < 0 || beat(n) < 0)
		return -1;
	if (open_own_log(f, part, sizeof part, identity) < 0)
		return -1;
	n->next_beat = clock_mono() + NODES_BEAT;
	/*
	 * Killed with its node still up, this gpupack is marked lost by its
	 * watchdog once its tasks are gone: the others take over at once.
	 */
	if (f->guard.pid > 0 && nodes_lost_mark(f, part, sizeof part) == 0)
		guard_mark_on_death(&f->guard, part, n->owner);
	return 1;
}

int
nodes_lost_mark(const struct farm *f, char *path, size_t size)
{
	const struct nodes *n = f->nodes;
	char dir[PATH_MAX];

	if (!n || !n->owner[0])
		return -1;
	/* the watchdog may not share our working directory's meaning: absolute */
	if (n->rundir[0] == '/')
		str_copy(dir, n->rundir, sizeof dir);
	else if (!realpath(n->rundir, dir))
		return -1;
	return (size_t)snprintf(path, size, "%s/lost/%s", dir, n->owner) < size ? 0 : -1;
}

const char *
nodes_owner(const struct farm *f)
{
	return f->nodes ? f->nodes->owner : "";
}

const char *
nodes_host(const struct farm *f)
{
	return f->nodes ? f->nodes->host : NULL;
}

/* ---- peers --------------------------------------------------------------------- */

/* The job's restart a member joined in: its name ends in .rK (name_owner), else 0. */
static int
peer_restart(const char *owner)
{
	const char *dot = strrchr(owner, '.');
	long k;

	if (!dot || dot[1] != 'r' || parse_long(dot + 2, 1, 1L << 20, &k) < 0) {
		err_clear();
		return 0;
	}
	return (int)k;
}

static struct peer *
peer(struct nodes *n, const char *owner)
{
	for (size_t i = 0; i < n->npeers; i++)
		if (strcmp(n->peers[i].owner, owner) == 0)
			return &n->peers[i];
	xgrow(&n->peers, &n->cap, n->npeers + 1, sizeof *n->peers);
	memset(&n->peers[n->npeers], 0, sizeof *n->peers);
	str_copy(n->peers[n->npeers].owner, owner, sizeof n->peers[0].owner);
	n->peers[n->npeers].restart = peer_restart(owner);
	return &n->peers[n->npeers++];
}

/* dir/owner's attributes as the server has them now: through open(2), which NFS checks with it. */
static int
fresh_stat(struct nodes *n, const char *dir, const char *owner, struct stat *st)
{
	char path[PATH_MAX];
	int fd, rc;

	if (path_in(n, path, sizeof path, "%s/%s", dir, owner) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fstat(fd, st);
	close(fd);
	return rc;
}

/* A peer's last beat, as the server has it. */
static int
beat_of(struct nodes *n, const char *owner, struct timespec *t)
{
	struct stat st;

	if (fresh_stat(n, "alive", owner, &st) < 0)
		return -1;
	*t = st.st_mtim;
	return 0;
}

static double
ts_diff(struct timespec a, struct timespec b)
{
	return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_nsec - b.tv_nsec) / 1e9;
}

/* The index of owner among the peers (added when new). */
static int
peer_index(struct nodes *n, const char *owner)
{
	return (int)(peer(n, owner) - n->peers);
}

/*
 * The names in rundir/sub, each given to fn: one listing (READDIR) rather
 * than a look-up per member. -1 when it cannot be read.
 */
static int
list_dir(struct nodes *n, const char *sub, void (*fn)(struct nodes *, const char *))
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (path_in(n, path, sizeof path, "%s", sub) < 0 || (d = opendir(path)) == NULL) {
		err_clear();
		return -1;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			fn(n, e->d_name);
	closedir(d);
	return 0;
}

static int self_listed;

static void
saw_lost(struct nodes *n, const char *owner)
{
	struct peer *p;

	if (strcmp(owner, n->owner) == 0) {
		self_listed = 1;
		return;
	}
	p = peer(n, owner);
	if (!p->lost) {
		char path[PATH_MAX], by[128];

		n->need_pass = 1;
		/* its own name: its watchdog said so (farm/guard.h), as it died */
		if (path_in(n, path, sizeof path, "lost/%s", owner) == 0 && read_link(path, by, sizeof by) == 0 &&
		    strcmp(by, owner) == 0)
			warnx_("%s was killed (its watchdog said so once its tasks were gone): "
			    "its unfinished tasks run again elsewhere", owner);
		err_clear();
	}
	p->lost = 1;
}

static int declare_lost(struct nodes *n, struct peer *p);

/*
 * Under Slurm: p's beat is late (by `late` s). Does Slurm already know its
 * node is lost? Asked at most every NODES_ASK_EVERY seconds per member; no
 * answer is no loss (the GPUPACK_FARM_LOST rule stays).
 */

static void
ask_slurm(struct nodes *n, struct peer *p, double late)
{
	char node[128];
	double now = clock_mono();

	/*
	 * One member asked about a beat, so that a slurmctld that does not
	 * answer holds our loop NODES_ASK_TIMEOUT twice at most, not once per
	 * late member: the others are asked about at the next beats, in turn.
	 */
	if (!n->jobid[0] || n->ask_after <= 0 || late <= n->ask_after || n->asked_now ||
	    (p->asked > 0 && now < p->asked + NODES_ASK_EVERY))
		return;
	p->asked = now;
	n->asked_now = 1;
	if (nodes_slurm_owner_node(p->owner, node, sizeof node) < 0 ||
	    nodes_slurm_ask(node, n->jobid, NODES_ASK_TIMEOUT) != 1)
		return;
	if (declare_lost(n, p) >= 0)
		warnx_("%s: Slurm says its node %s is lost (its beat %.0f s late): its unfinished tasks run again "
		    "elsewhere", p->owner, node, late);
}

static void
saw_member(struct nodes *n, const char *owner)
{
	if (strcmp(owner, n->owner) != 0)
		peer(n, owner);
}

static void
saw_done(struct nodes *n, const char *owner)
{
	if (strcmp(owner, n->owner) != 0)
		peer(n, owner)->listed = 1;
}

/* lost/: who was declared lost (1: we were). */
static int
read_lost(struct nodes *n)
{
	self_listed = 0;
	list_dir(n, "lost", saw_lost);
	return self_listed;
}

/* lost/OWNER: p is lost, for all of us. 1 we said so, 0 another did first, -1 not said. */
static int
declare_lost(struct nodes *n, struct peer *p)
{
	char path[PATH_MAX];
	int r;

	if (path_in(n, path, sizeof path, "lost/%s", p->owner) < 0 || (r = mark(n->owner, path)) < 0) {
		err_clear();
		return -1;
	}
	p->lost = 1;
	n->need_pass = 1;
	return r;
}

/*
 * A requeued job (SLURM_RESTART_COUNT one more) runs its steps again, as
 * the same run: Slurm ended the members of its earlier runs, however fresh
 * their last beat. They are lost now, done or not (a done one's log is
 * read, and nothing of it runs again), not after GPUPACK_FARM_LOST.
 */
static void
lose_earlier(struct nodes *n)
{
	for (size_t i = 0; i < n->npeers; i++) {
		struct peer *p = &n->peers[i];

		if (!p->lost && p->restart < n->restart && declare_lost(n, p) == 1)
			warnx_("%s was a member of this job's run before it was requeued (this is restart %d): "
			    "what it left unfinished runs again", p->owner, n->restart);
	}
}

/*
 * Look at the members: who is idle (done/, listed while we are idle: only
 * the end needs it), and the beats of NODES_WATCH of them a beat, in turn
 * from our own place, so that each member's beat is read a few times a
 * second across the farm whatever its size, not by every member every
 * second. The members are listed (alive/) every NODES_LIST beats.
 */
static void
watch(struct nodes *n)
{
	size_t looked = 0, i;

	n->asked_now = 0;
	if (n->npeers == 0 || n->watched % NODES_LIST == 0)
		list_dir(n, "alive", saw_member);
	if (n->restart > 0)
		lose_earlier(n);
	if (n->idle) {
		for (i = 0; i < n->npeers; i++)
			n->peers[i].listed = 0;
		if (list_dir(n, "done", saw_done) == 0)
			for (i = 0; i < n->npeers; i++)
				n->peers[i].done = n->peers[i].listed;
	}
	for (i = 0; i < n->npeers && looked < NODES_WATCH; i++) {
		struct peer *p = &n->peers[(n->watched * NODES_WATCH + i + n->place) % n->npeers];
		struct timespec t;

		if (p->lost || p->done)
			continue;
		looked++;
		if (beat_of(n, p->owner, &t) < 0)
			continue;
		if (ts_diff(n->my_beat, t) <= n->lost_after) {
			ask_slurm(n, p, ts_diff(n->my_beat, t));
			continue;
		}
		/* silent too long: lost, for all of us (the first to say so, says so) */
		if (declare_lost(n, p) >= 0)
			warnx_("%s went silent for %.0f s: its unfinished tasks run again elsewhere",
			    p->owner, ts_diff(n->my_beat, t));
	}
	n->watched++;
}

/* Did another gpupack declare us lost? */
static int
declared_lost(const struct nodes *n)
{
	char path[PATH_MAX];

	return path_in(n, path, sizeof path, "lost/%s", n->owner) == 0 && exists(path);
}

double
nodes_due(const struct farm *f, double now)
{
	return f->nodes ? f->nodes->next_beat - now : 1e9;
}

void
nodes_tick(struct farm *f, double now)
{
	struct nodes *n = f->nodes;

	if (!n || n->stopped || (!n->fenced && now < n->next_beat))
		return;
	n->next_beat = now + NODES_BEAT;
	if (!n->fenced && beat(n) < 0) {
		warnx_("%s", err_msg());
		err_clear();
	}
	if (n->fenced || read_lost(n)) {
		/* the others rerun what we hold: going on would only do it twice */
		warnx_("the other gpupacks of this farm declared this one lost (silent for over %.0f s); "
		    "stopping its tasks (the others run them) and waiting for the farm's end", n->lost_after);
		n->fenced = n->stopped = 1;
		f->fatal = EXIT_ENV;
		f->stop = 2;
		halt_terminate_all(f, now);
		return;
	}
	watch(n);
}

/* ---- claiming ------------------------------------------------------------------- */

/*
 * How many inputs a claim at seq takes: guided self-scheduling, a share of
 * what is left over twice the farm's slots, so that the first claims are
 * large (few names on the shared directory) and the last are of one input
 * each (the last tasks go to whichever member is free).
 */
static unsigned long long
block_len(const struct nodes *n, unsigned long long seq)
{
	unsigned long long left, len;

	if (n->total == 0 || seq > n->total)
		return 1;
	left = n->total - seq + 1;
	len = left / (2ULL * (unsigned long long)n->members * (unsigned long long)n->slots);
	return len < 1 ? 1 : len > NODES_BLOCK_MAX ? NODES_BLOCK_MAX : len;
}

static void
add_block(struct nodes *n, unsigned long long start, unsigned long long len, int who)
{
	xgrow(&n->blocks, &n->bcap, n->nblocks + 1, sizeof *n->blocks);
	n->blocks[n->nblocks++] = (struct block){start, len, who};
}

/*
 * The claim at start: ours when we create claim/START (its target: OWNER
 * LEN), else the one there, read. Every member walks the same chain of
 * claims from input 1, each starting where the one before ends, so no two
 * overlap. -1 with err set.
 */
static int
claim_block(struct nodes *n, unsigned long long start)
{
	char path[PATH_MAX], target[160], owner[128];
	unsigned long long len;

	if (path_in(n, path, sizeof path, "claim/%llu", start) < 0)
		return -1;
	for (int tries = 0; tries < 3; tries++) {
		int r;

		if (read_link(path, target, sizeof target) == 0) {
			char *sp = strchr(target, ' ');

			/* OWNER alone: a claim of one input */
			len = sp ? strtoull(sp + 1, NULL, 10) : 1;
			if (sp)
				*sp = '\0';
			str_copy(owner, target, sizeof owner);
			add_block(n, start, len ? len : 1, strcmp(owner, n->owner) == 0 ? -1 : peer_index(n, owner));
			return 0;
		}
		/* a claim of one input is OWNER alone, as before claims took several */
		len = block_len(n, start);
		if (len == 1)
			str_copy(target, n->owner, sizeof target);
		else
			snprintf(target, sizeof target, "%s %llu", n->owner, len);
		if ((r = mark(target, path)) < 0)
			return -1;
		if (r == 1) {
			add_block(n, start, len, -1);
			return 0;
		}
		/* created meanwhile by another: read it (the server's answer replaced any cached one) */
	}
	return err_set(EXIT_ENV, "%s exists but cannot be read", path);
}

/* The claim that covers seq, claimed or read as the walk gets there. NULL with err set. */
static const struct block *
block_of(struct nodes *n, unsigned long long seq)
{
	size_t lo = 0, hi;

	for (;;) {
		const struct block *last = n->nblocks ? &n->blocks[n->nblocks - 1] : NULL;

		if (last && seq < last->start + last->len)
			break;
		if (claim_block(n, last ? last->start + last->len : 1) < 0)
			return NULL;
	}
	if (n->bat < n->nblocks && n->blocks[n->bat].start <= seq && seq < n->blocks[n->bat].start + n->blocks[n->bat].len)
		return &n->blocks[n->bat];
	hi = n->nblocks;
	while (lo + 1 < hi) {
		size_t mid = (lo + hi) / 2;

		if (n->blocks[mid].start <= seq)
			lo = mid;
		else
			hi = mid;
	}
	n->bat = lo;
	return &n->blocks[lo];
}

/*
 * Who holds seq's highest attempt, and which: the claim's owner, or the
 * last of reclaim/SEQ.K. Read once for an input of a lost member; after
 * that the answer stands until its holder is lost too.
 */
static int
holder(struct nodes *n, unsigned long long seq, const struct block *b, int *k)
{
	unsigned long long *known = seqmap_get(&n->held, seq);
	int who = b->who;

	*k = 0;
	/* (holder + 1) << 8 | attempt; 0: not known yet */
	if (known && *known) {
		who = (int)(*known >> 8) - 1;
		*k = (int)(*known & 0xff);
		if (who < 0 || !n->peers[who].lost)
			return who;
	}
	for (;;) {
		char next[PATH_MAX], o2[128];

		if (path_in(n, next, sizeof next, "reclaim/%llu.%d", seq, *k + 1) < 0)
			return -2;
		if (read_link(next, o2, sizeof o2) < 0)
			break;
		who = strcmp(o2, n->owner) == 0 ? -1 : peer_index(n, o2);
		(*k)++;
	}
	*seqmap_put(&n->held, seq) = (unsigned long long)(who + 1) << 8 | (unsigned long long)(*k & 0xff);
	return who;
}

/* In a later pass: may we take over seq, lost with whoever held it? */
static int
take_over(struct nodes *n, const struct block *b, unsigned long long seq, int *attempt)
{
	char path[PATH_MAX];
	struct peer *p;
	int k, r, who;

	/*
	 * Ours, or a member's not lost: nothing to take. Only a member we know
	 * lost can have had its inputs claimed again; when we learn of one, a
	 * new pass reads those.
	 */
	if (b->who < 0)
		return NODES_OURS;
	if (!n->peers[b->who].lost)
		return NODES_OTHER;
	if ((who = holder(n, seq, b, &k)) == -2)
		return NODES_ERROR;
	if (who < 0)
		return NODES_OURS; /* ours, and ended: we are idle */
	p = &n->peers[who];
	/*
	 * Only a peer whose records this pass read: one declared lost since
	 * (by us or another, while we walk) has finished inputs we cannot tell
	 * from the rest yet. The next pass, which reads its log, takes them.
	 */
	if (!p->lost || !p->swept || nodes_log_has(p->log, seq))
		return NODES_OTHER;
	if (k + 1 > FARM_OWN_RERUNS) {
		warnx_("input %llu was lost with its gpupack %d times: not run again here "
		    "(--resume runs it)", seq, k + 1);
		return NODES_OTHER;
	}
	if (path_in(n, path, sizeof path, "reclaim/%llu.%d", seq, k + 1) < 0)
		return NODES_ERROR;
	r = mark(n->owner, path);
	if (r < 0)
		return NODES_ERROR;
	if (r == 0) {
		/* another took it first: who, read now (0: not known) */
		*seqmap_put(&n->held, seq) = 0;
		if ((who = holder(n, seq, b, &k)) != -1)
			return who == -2 ? NODES_ERROR : NODES_OTHER;
		/* ours after all: our own create, retried by the client and answered EEXIST */
		*attempt = k;
		return NODES_RERUN;
	}
	*seqmap_put(&n->held, seq) = (unsigned long long)(k + 1);  /* us (-1 + 1), attempt k + 1 */
	*attempt = k + 1;
	return NODES_RERUN;
}

int
nodes_take(struct farm *f, unsigned long long seq, int *attempt)
{
	struct nodes *n = f->nodes;
	const struct block *b;

	*attempt = 0;
	/* the chain of claims covers every input, done ones too: each member's walk is the same */
	if ((b = block_of(n, seq)) == NULL)
		return NODES_ERROR;
	if (nodes_chain_done(n->chain, seq, n->resume_failed))
		return NODES_DONE;
	if (n->pass > 0)
		return take_over(n, b, seq, attempt);
	return b->who < 0 ? NODES_RUN : NODES_OTHER;
}

/* Killed by a signal that ends runs (ours, or Slurm's for the whole step)? */
static int
stop_signal(const struct run *r)
{
	int sig;

	if (!WIFSIGNALED(r->status))
		return 0;
	sig = WTERMSIG(r->status);
	return sig == SIGTERM || sig == SIGINT || sig == SIGKILL || sig == SIGHUP;
}

/* Are we stopping because of a signal (read, or still pending on the signalfd)? */
static int
stopping(const struct farm *f)
{
	sigset_t pending;

	if (f->st.interrupted && f->ht.halt_status < 0)
		return 1;
	return sigpending(&pending) == 0 &&
	    (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

int
nodes_killed(const struct farm *f, const struct run *r)
{
	/* r->terminated: we ended it (--timeout, --halt now, a second signal): we know why */
	return f->nodes && !r->terminated && stop_signal(r) && !stopping(f);
}

int
nodes_unrecorded(struct farm *f, const struct run *r)
{
	struct nodes *n = f->nodes;

	if (!n)
		return 0;
	/*
	 * Declared lost since our last beat: a pass elsewhere may have read
	 * our log already and run this input again. Its record is the one
	 * that counts (its writer holds the higher claim); ours would be a
	 * second. The next tick stops the rest.
	 */
	if (!n->fenced && clock_mono() >= n->lost_checked + NODES_BEAT) {
		/* once a beat at most: the merged joblog counts the higher claim's record anyway */
		n->lost_checked = clock_mono();
		if (declared_lost(n)) {
			n->fenced = 1;
			n->next_beat = 0;
		}
	}
	if (n->fenced)
		return 1;
	/* a signal stopped us (not --halt) and the task died of one: it did not finish */
	return stop_signal(r) && stopping(f);
}

/* ---- the end of our inputs ------------------------------------------------------- */

/* A fresh stream over the same inputs, for another pass: the tasks built as before. */
static int
rewind_inputs(struct farm *f)
{
	struct task_src fresh, *ts = &f->o->ts;

	if (fresh_inputs(f, &fresh) < 0)
		return -1;
	tasks_free(ts);
	*ts = fresh;
	f->st.inputs_done = 0;
	return 0;
}

/* How many lost members' records our passes read. */
static int
swept(const struct nodes *n)
{
	int k = 0;

	for (size_t i = 0; i < n->npeers; i++)
		k += n->peers[i].swept;
	return k;
}

/*
 * done/OWNER: we are idle. Its target says how long our log is then and
 * how many lost members our passes took over from (OWNER SIZE SWEPT), so
 * that the member who ends the farm waits until it sees all of the log
 * (appends can reach another client late) and does not take a done mark
 * from before our last pass (a cached one) for the end.
 */
static void
set_idle(struct farm *f, int idle)
{
	struct nodes *n = f->nodes;
	char path[PATH_MAX], target[192];
	struct stat st;

	if (n->idle == idle || path_in(n, path, sizeof path, "done/%s", n->owner) < 0)
		return;
	snprintf(target, sizeof target, "%s %lld %d", n->owner,
	    f->j.fd >= 0 && fstat(f->j.fd, &st) == 0 ? (long long)st.st_size : 0LL, swept(n));
	if (idle ? mark(target, path) < 0 : (unlink(path) < 0 && errno != ENOENT)) {
		warnx_("%s", err_msg());
		err_clear();
	}
	n->idle = idle;
}

/* A pass over the inputs for what the lost left (their records read now). */
static int
start_pass(struct farm *f)
{
	struct nodes *n = f->nodes;

	set_idle(f, 0);
	for (size_t i = 0; i < n->npeers; i++) {
		struct peer *p = &n->peers[i];

		if (!p->lost)
			continue;
		nodes_log_free(p->log);
		if (nodes_log_load(n->rundir, p->owner, &p->log) < 0)
			return -1;
		p->swept = 1;
	}
	n->need_pass = 0;
	n->pass++;
	f->st.others = 0; /* counted again by this pass */
	return rewind_inputs(f);
}

/* What done/OWNER says: OWNER's log's size (0: none said) and the lost it swept; -1 when unreadable. */
static int
done_says(struct nodes *n, const char *owner, long long *size, int *k)
{
	char path[PATH_MAX], target[192];

	*size = 0;
	*k = 0;
	if (path_in(n, path, sizeof path, "done/%s", owner) < 0 || read_link(path, target, sizeof target) < 0) {
		err_clear();
		return -1;
	}
	if (sscanf(target, "%*s %lld %d", size, k) < 2)
		*k = 0;
	return 0;
}

/* Its log's size as the server has it now. */
static long long
log_size(struct nodes *n, const char *owner)
{
	struct stat st;

	return fresh_stat(n, "log", owner, &st) < 0 ? -1 : (long long)st.st_size;
}

/*
 * Is every member idle for the lost we know of (its pass over them done),
 * and do we see its log as long as it said, when it said it was idle?
 * Else we wait (a beat at a time), at most GPUPACK_FARM_LOST
 * seconds: what it wrote reaches us late on a filesystem whose appends are
 * not seen at once (a client's cache). After that, the end goes on, and
 * says so.
 */
static int
logs_seen(struct nodes *n, double now)
{
	int mine = swept(n);

	for (size_t i = 0; i < n->npeers; i++) {
		struct peer *p = &n->peers[i];
		long long want;
		int k;

		if (p->lost || !p->done)
			continue;
		/* a done mark from before its pass over the lost we know (or gone since): not idle yet */
		if (done_says(n, p->owner, &want, &k) < 0 || k < mine)
			return 0;
		if (want <= 0 || log_size(n, p->owner) >= want)
			continue;
		if (n->seen_wait == 0)
			n->seen_wait = now;
		if (now - n->seen_wait < n->lost_after)
			return 0;
		warnx_("the log of %s is still shorter than it said after %.0f s: ending the farm with "
		    "what is seen of it (the shared filesystem shows appends late; doc/slurm.md)", p->owner,
		    now - n->seen_wait);
		return 1;
	}
	return 1;
}

int
nodes_idle(struct farm *f, double now)
{
	struct nodes *n = f->nodes;

	if (n->fenced)
		return 0;
	(void)read_lost(n);
	watch(n);
	if (n->need_pass) {
		if (start_pass(f) < 0) {
			warnx_("%s", err_msg());
			f->fatal = err_code();
			return 0;
		}
		return 1;
	}
	set_idle(f, 1);
	for (size_t i = 0; i < n->npeers; i++)
		if (!n->peers[i].done && !n->peers[i].lost)
			return 1; /* someone still works: wait, beating, in case it is lost */
	if (!logs_seen(n, now))
		return 1;
	n->over = 1;
	return 0;
}

/* FILE.farm/RUN/status: the farm's exit status, for a member that did not see its end. */
static void
write_status(const struct nodes *n, int code)
{
	char path[PATH_MAX], line[32];

	if (path_in(n, path, sizeof path, "status") < 0)
		return;
	snprintf(line, sizeof line, "%d\n", code);
	if (write_file_atomic(path, line, strlen(line), 0644) < 0)
		warnx_("%s", err_msg());
	err_clear();
}

/* The status the farm's end left; -1 while there is none. */
static int
read_status(const struct nodes *n)
{
	char path[PATH_MAX], *data = NULL;
	long v = -1;

	if (path_in(n, path, sizeof path, "status") < 0 || !exists(path) ||
	    read_file_max(path, 64, &data, NULL) < 0 || parse_long(str_trim(data), 0, 255, &v) < 0)
		v = -1;
	err_clear();
	free(data);
	return (int)v;
}

/* Is any other member, not declared lost, still beating (or done and waiting)? */
static int
others_alive(struct nodes *n)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int alive = 0;

	if (path_in(n, path, sizeof path, "alive") < 0 || (d = opendir(path)) == NULL) {
		err_clear();
		return 0;
	}
	while (!alive && (e = readdir(d)) != NULL) {
		struct timespec t;

		if (e->d_name[0] == '.' || strcmp(e->d_name, n->owner) == 0)
			continue;
		if (path_in(n, path, sizeof path, "lost/%s", e->d_name) == 0 && exists(path))
			continue;
		alive = beat_of(n, e->d_name, &t) == 0 && ts_diff(n->my_beat, t) <= n->lost_after;
		err_clear();
	}
	closedir(d);
	return alive;
}

static int
stop_pending(void)
{
	sigset_t p;

	return sigpending(&p) == 0 && (sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGINT) == 1 ||
	    sigismember(&p, SIGHUP) == 1);
}

/*
 * Declared lost, our tasks stopped: the others finish the farm. srun's
 * status is the worst of its tasks', so ours is the farm's, once they
 * say it; our own (255) when none of them is left to say it, or when a
 * signal stops us too. Our beat goes on only as the filesystem's clock:
 * the lost mark stays, and nobody counts on us.
 */
static int
wait_for_end(struct nodes *n, int own)
{
	for (;;) {
		struct timespec ts = {1, 0};
		int code = read_status(n);

		if (code >= 0)
			return code;
		if (stop_pending())
			return own;
		if (beat(n) < 0)
			err_clear();
		if (!others_alive(n))
			return own;
		nanosleep(&ts, NULL);
	}
}

int
nodes_exit_status(struct farm *f, int own)
{
	struct nodes *n = f->nodes;
	unsigned long long failed, unfinished;
	int code;

	if (!n)
		return own;
	if (n->fenced)
		return wait_for_end(n, own);
	/* stopped, halted, failed: this gpupack's own status says why */
	if (!n->over || f->fatal || f->ht.halt_status >= 0 || (f->o->halt_when != HALT_NEVER && f->o->halt_pct > 0))
		return own;
	if (nodes_run_tally(n->dir, n->run, n->chain, n->resume_failed, f->st.inputs, &failed, &unfinished) < 0) {
		warnx_("%s", err_msg());
		err_clear();
		return own;
	}
	/* GNU parallel's status, over every node's records: what srun sees from each of us */
	code = unfinished > 0 ? FARM_EXIT_ERROR : failed > 100 ? 101 : (int)failed;
	if (unfinished > 0)
		warnx_("%llu input%s of this farm did not run to their end (--resume runs them)", unfinished,
		    unfinished == 1 ? "" : "s");
	write_status(n, code);
	return code;
}

void
nodes_close(struct farm *f)
{
	struct nodes *n = f->nodes;
	char path[PATH_MAX];

	if (!n)
		return;
	/* the farm is over everywhere: one of us writes FILE */
	if (n->over && !n->fenced && path_in(n, path, sizeof path, "merged") == 0 && mark(n->owner, path) > 0 &&
	    nodes_merge(n->dir, n->run, f->o->joblog.path) < 0)
		warnx_("writing %s: %s", f->o->joblog.path, err_msg());
	err_clear();
	nodes_chain_free(n->chain);
	inputs_free(&n->pristine);
	for (size_t i = 0; i < n->npeers; i++)
		nodes_log_free(n->peers[i].log);
	free(n->peers);
	free(n->blocks);
	seqmap_free(&n->held);
	free(n);
	f->nodes = NULL;
}
