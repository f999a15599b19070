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
	int done, lost;          /* seen so */
	int swept;               /* lost, and its records read by the pass going on */
	struct nodes_log *log;   /* a lost one's records, read when a pass starts */
};

struct nodes {
	char dir[PATH_MAX];      /* FILE.farm */
	char run[128];           /* this run's name */
	char rundir[PATH_MAX];
	char owner[128];         /* node.procid.pid */
	char host[64];           /* the Host column */
	char parent[128];
	const char *joblog;      /* FILE */
	struct inputs pristine;  /* the input sources as given: each pass reads them again */
	struct nodes_chain *chain;
	int resume_failed;
	int pass;                /* 0: the first walk over the inputs; later: reruns of the lost */
	double lost_after;
	double next_beat;
	struct timespec my_beat;
	struct peer *peers;
	size_t npeers, cap;
	int need_pass;           /* a peer was declared lost since the last pass */
	int fenced;              /* we were declared lost: record nothing more */
	int stopped;             /* and our tasks were told to stop */
	int idle;                /* done/OWNER is there */
	int over;                /* the farm ended everywhere */
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
	char path[PATH_MAX];

	*tasks = nt && getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID") ? atoi(nt) : 0;
	if (o->dry_run || o->shard_n > 0)
		return 0;
	if (*tasks > 1 || getenv("GPUPACK_FARM_RUN"))
		return 1;
	if (!o->joblog)
		return 0;
	snprintf(path, sizeof path, "%s.farm", o->joblog);
	return exists(path);
}

static int
check_options(const struct farm_opts *o, int tasks)
{
	const struct inputs *in = &o->ts.in;

	if (!o->joblog)
		return err_set(EXIT_USAGE, "srun started %d gpupacks: give --joblog FILE on a filesystem "
		    "they all share (one farm over the nodes), or --shard slurm (a fixed split)", tasks);
	if (strcmp(o->joblog, "-") == 0)
		return err_set(EXIT_USAGE, "--joblog -: a farm over nodes needs a file they all share");
	if (o->joblog_append)
		return err_set(EXIT_USAGE, "--joblog +%s: a farm over nodes keeps its records in %s.farm; "
		    "use --resume to go on with them", o->joblog, o->joblog);
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

int
nodes_setup(struct farm *f, uint64_t identity)
{
	const struct farm_opts *o = f->o;
	struct nodes *n = f->nodes;
	char host[64], part[PATH_MAX], *dot;

	if (!n)
		return 0;
	n->joblog = o->joblog;
	n->resume_failed = o->resume_failed;
	if (parse_double(env_or("GPUPACK_FARM_LOST", "60"), &n->lost_after) < 0 || n->lost_after <= 0)
		return err_set(EXIT_USAGE, "GPUPACK_FARM_LOST=%s: want seconds", getenv("GPUPACK_FARM_LOST"));
	if ((size_t)snprintf(n->dir, sizeof n->dir, "%s.farm", o->joblog) >= sizeof n->dir)
		return err_set(EXIT_USAGE, "--joblog %s: path too long", o->joblog);
	if (gethostname(host, sizeof host) < 0)
		str_copy(host, "localhost", sizeof host);
	host[sizeof host - 1] = '\0';
	if ((dot = strchr(host, '.')) != NULL)
		*dot = '\0';
	file_name(env_or("SLURMD_NODENAME", host), n->host, sizeof n->host);
	snprintf(part, sizeof part, "%s.%s.%ld", n->host, env_or("SLURM_PROCID", "0"), (long)getpid());
	file_name(part, n->owner, sizeof n->owner);
	if (getenv("GPUPACK_FARM_RUN"))
		file_name(getenv("GPUPACK_FARM_RUN"), n->run, sizeof n->run);
	else if (getenv("SLURM_JOB_ID") && getenv("SLURM_STEP_ID")) {
		snprintf(part, sizeof part, "%s.%s", getenv("SLURM_JOB_ID"), getenv("SLURM_STEP_ID"));
		file_name(part, n->run, sizeof n->run);
	} else {
		snprintf(part, sizeof part, "local.%s.%ld", n->host, (long)getpid());
		file_name(part, n->run, sizeof n->run);
	}
	if (strcmp(n->run, "none") == 0 || strcmp(n->run, "current") == 0 || strcmp(n->run, "identity") == 0)
		return err_set(EXIT_USAGE, "GPUPACK_FARM_RUN=%s: a reserved name", n->run);
	if ((size_t)snprintf(n->rundir, sizeof n->rundir, "%s/%s", n->dir, n->run) >= sizeof n->rundir)
		return err_set(EXIT_USAGE, "--joblog %s: path too long", o->joblog);
	/* one farm per joblog: the gpupacks of this run (a requeued job's are another) share it */
	snprintf(part, sizeof part, "%s/%s", n->run, env_or("SLURM_RESTART_COUNT", "0"));
	if (joblock_take(&f->lock, o->joblog, part, -1) < 0)
		return -1;
	/* a name used before: its claims would hold every input (nothing would run) */
	if (getenv("GPUPACK_FARM_RUN") && f->lock.first && exists(n->rundir))
		return err_set(EXIT_USAGE, "GPUPACK_FARM_RUN=%s: a run of that name already ran on joblog %s; "
		    "give this run a new name (with --resume it goes on from the runs before)", n->run, o->joblog);
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
	if (beat(n) < 0)
		return -1;
	if (path_in(n, part, sizeof part, "log/%s", n->owner) < 0 ||
	    journal_open(&f->j, part, 0, 0, 0, identity) < 0)
		return -1;
	n->next_beat = clock_mono() + NODES_BEAT;
	return 1;
}

const char *
nodes_host(const struct farm *f)
{
	return f->nodes ? f->nodes->host : NULL;
}

/* ---- peers --------------------------------------------------------------------- */

static struct peer *
peer(struct nodes *n, const char *owner)
{
	for (size_t i = 0; i < n->npeers; i++)
		if (strcmp(n->peers[i].owner, owner) == 0)
			return &n->peers[i];
	xgrow(&n->peers, &n->cap, n->npeers + 1, sizeof *n->peers);
	memset(&n->peers[n->npeers], 0, sizeof *n->peers);
	str_copy(n->peers[n->npeers].owner, owner, sizeof n->peers[0].owner);
	return &n->peers[n->npeers++];
}

/* A peer's last beat, read through open(2) so that NFS asks the server. */
static int
beat_of(struct nodes *n, const char *owner, struct timespec *t)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, rc;

	if (path_in(n, path, sizeof path, "alive/%s", owner) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fstat(fd, &st);
	close(fd);
	if (rc < 0)
		return -1;
	*t = st.st_mtim;
	return 0;
}

static double
ts_diff(struct timespec a, struct timespec b)
{
	return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_nsec - b.tv_nsec) / 1e9;
}

/* Look at every member: who is idle, who was declared lost, who should be. */
static void
watch(struct nodes *n)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (path_in(n, path, sizeof path, "alive") < 0 || (d = opendir(path)) == NULL) {
		err_clear();
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct peer *p;
		struct timespec t;

		if (e->d_name[0] == '.' || strcmp(e->d_name, n->owner) == 0)
			continue;
		p = peer(n, e->d_name);
		if (p->lost)
			continue;
		if (path_in(n, path, sizeof path, "lost/%s", p->owner) == 0 && exists(path)) {
			p->lost = 1;
			n->need_pass = 1;
			continue;
		}
		p->done = path_in(n, path, sizeof path, "done/%s", p->owner) == 0 && exists(path);
		if (p->done || beat_of(n, p->owner, &t) < 0 || ts_diff(n->my_beat, t) <= n->lost_after)
			continue;
		/* silent too long: lost, for all of us (the first to say so, says so) */
		if (path_in(n, path, sizeof path, "lost/%s", p->owner) == 0 && mark(n->owner, path) >= 0) {
			warnx_("%s went silent for %.0f s: its unfinished tasks run again elsewhere",
			    p->owner, ts_diff(n->my_beat, t));
			p->lost = 1;
			n->need_pass = 1;
		}
		err_clear();
	}
	closedir(d);
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
	if (n->fenced || declared_lost(n)) {
		/* the others rerun what we hold: going on would only do it twice */
		warnx_("the other gpupacks of this farm declared this one lost (silent for over %.0f s); "
		    "stopping its tasks (the others run them) and waiting for the farm's end", n->lost_after);
		n->fenced = n->stopped = 1;
		f->fatal = EXIT_ENV;
		f->stop = 2;
		finish_terminate_all(f, now);
		return;
	}
	watch(n);
}

/* ---- claiming ------------------------------------------------------------------- */

/* In a later pass: may we take over seq, lost with whoever held it? */
static int
take_over(struct nodes *n, unsigned long long seq, int *attempt)
{
	char path[PATH_MAX], owner[128];
	struct peer *p;
	int k = 0, r;

	if (path_in(n, path, sizeof path, "claim/%llu", seq) < 0)
		return NODES_ERROR;
	if (read_link(path, owner, sizeof owner) < 0) {
		/* nobody took it: it is simply ours */
		r = mark(n->owner, path);
		return r < 0 ? NODES_ERROR : r ? NODES_RUN : NODES_OTHER;
	}
	for (;;) {
		char next[PATH_MAX], o2[128];

		if (path_in(n, next, sizeof next, "reclaim/%llu.%d", seq, k + 1) < 0)
			return NODES_ERROR;
		if (read_link(next, o2, sizeof o2) < 0)
			break;
		str_copy(owner, o2, sizeof owner);
		k++;
	}
	if (strcmp(owner, n->owner) == 0)
		return NODES_OURS; /* ours, and ended: we are idle */
	p = peer(n, owner);
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
	if (r <= 0)
		return r < 0 ? NODES_ERROR : NODES_OTHER;
	*attempt = k + 1;
	return NODES_RERUN;
}

int
nodes_take(struct farm *f, unsigned long long seq, int *attempt)
{
	struct nodes *n = f->nodes;
	char path[PATH_MAX];
	int r;

	*attempt = 0;
	if (nodes_chain_done(n->chain, seq, n->resume_failed))
		return NODES_DONE;
	if (n->pass > 0)
		return take_over(n, seq, attempt);
	if (path_in(n, path, sizeof path, "claim/%llu", seq) < 0)
		return NODES_ERROR;
	r = mark(n->owner, path);
	return r < 0 ? NODES_ERROR : r ? NODES_RUN : NODES_OTHER;
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
	if (!n->fenced && declared_lost(n)) {
		n->fenced = 1;
		n->next_beat = 0;
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

	tasks_init(&fresh);
	copy_sources(&fresh.in, &f->nodes->pristine);
	fresh.max_args = ts->max_args;
	fresh.fill = ts->fill;
	fresh.noarg = ts->noarg;
	fresh.slots = ts->slots;
	fresh.max_len = ts->max_len;
	fresh.cmd = ts->cmd;
	if (tasks_open(&fresh) < 0) {
		tasks_free(&fresh);
		return -1;
	}
	tasks_free(ts);
	*ts = fresh;
	f->st.inputs_done = 0;
	return 0;
}

static void
set_idle(struct nodes *n, int idle)
{
	char path[PATH_MAX];

	if (n->idle == idle || path_in(n, path, sizeof path, "done/%s", n->owner) < 0)
		return;
	if (idle ? mark(n->owner, path) < 0 : (unlink(path) < 0 && errno != ENOENT)) {
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

	set_idle(n, 0);
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

int
nodes_idle(struct farm *f, double now)
{
	struct nodes *n = f->nodes;

	(void)now;
	if (n->fenced)
		return 0;
	watch(n);
	if (n->need_pass) {
		if (start_pass(f) < 0) {
			warnx_("%s", err_msg());
			f->fatal = err_code();
			return 0;
		}
		return 1;
	}
	set_idle(n, 1);
	for (size_t i = 0; i < n->npeers; i++)
		if (!n->peers[i].done && !n->peers[i].lost)
			return 1; /* someone still works: wait, beating, in case it is lost */
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
	    nodes_merge(n->dir, n->run, n->joblog) < 0)
		warnx_("writing %s: %s", n->joblog, err_msg());
	err_clear();
	nodes_chain_free(n->chain);
	inputs_free(&n->pristine);
	for (size_t i = 0; i < n->npeers; i++)
		nodes_log_free(n->peers[i].log);
	free(n->peers);
	free(n);
	f->nodes = NULL;
}
