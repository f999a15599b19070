/*
 * setup: building a run from its options and taking it down. The signals
 * the loop reads (blocked, through a signalfd), the share mode's default
 * and the checks between options, the devices (--gpus, else the
 * environment's), their slots (slot.h's packing), the inputs, the command
 * templates and the shell, the MPS daemons and the joblog (with the
 * command's identity for --resume).
 */
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/shell.h"
#include "farm/state.h"
#include "farm/trace.h"
#include "farm/usagefarm.h"
#include "gpu/select.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static void
farm_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
}

void
farm_block_signals(void)
{
	sigset_t set;

	farm_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

int
setup_signals(struct farm *f, sigset_t *old)
{
	sigset_t set;

	farm_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
	signal(SIGPIPE, SIG_IGN);
	/* a file-size limit (ulimit -f) makes a write fail with EFBIG, said in one line, not a death */
	signal(SIGXFSZ, SIG_IGN);
	f->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (f->sigfd < 0)
		return err_sys(EXIT_INTERNAL, "signalfd");
	f->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (f->devnull < 0)
		return err_sys(EXIT_ENV, "/dev/null");
	return 0;
}

static int
select_targets(struct farm *f, const struct gpu_system *sys, struct gpu_target **t, int *n)
{
	const char *from, *sel = slot_default_selection(f->o->gpus, &from);

	if (sel && strcmp(from, "CUDA_VISIBLE_DEVICES") == 0 &&
	    (!*sel || str_starts(sel, "-1") || strcmp(sel, "NoDevFiles") == 0))
		return err_set(EXIT_ENV, "CUDA_VISIBLE_DEVICES='%s' hides every device; "
		    "unset it or give --gpus", sel);
	if (gpu_select(sys, sel, t, n) < 0)
		return err_prefix("%s", strcmp(from, "--gpus") == 0 ? "--gpus" : from);
	if (*n == 0) {
		free(*t);
		return err_set(EXIT_ENV, "no GPU to run on (%s)", sys->backend);
	}
	return 0;
}

static int
make_groups(struct farm *f, const struct gpu_system *sys, struct gpu_target *t, int n)
{
	int slot = 1, any = 0;
	uint64_t best = 0;

	f->g = xcalloc((size_t)n, sizeof *f->g);
	f->ng = n;
	for (int i = 0; i < n; i++) {
		struct group *g = &f->g[i];
		const struct gpu_info *gi = &sys->gpus[t[i].gpu];

		g->t = t[i];
		g->gpu_index = gi->index;
		g->mig_slices = t[i].gi >= 0 ? gi->gi[t[i].gi].ci[t[i].ci].slices : 0;
		g->gi_id = -1;
		g->cap = pack_capacity(f->o->share, jobs_per_device(f->o, f->o->share), f->o->mem,
		    t[i].mem_free, g->mig_slices, &g->limit);
		if (t[i].mem_free > best)
			best = t[i].mem_free;
	}
	pack_total(f->g, n, f->o->total);
	for (int i = 0; i < n; i++) {
		f->g[i].jobs = f->g[i].cap;
		f->g[i].first_slot = slot;
		slot += f->g[i].cap;
		any |= f->g[i].cap > 0;
	}
	f->nr = slot - 1;
	if (!any) {
		char a[32], b[32], c[32];

		return err_set(EXIT_USAGE, "no selected device has room for one task: --mem %s plus "
		    "%s of context per task, largest free memory %s", format_size(f->o->mem, a, sizeof a),
		    format_size(FARM_CTX_OVERHEAD, b, sizeof b), format_size(best, c, sizeof c));
	}
	f->r = xcalloc((size_t)f->nr, sizeof *f->r);
	for (int i = 0; i < f->ng; i++)
		for (int s = 0; s < f->g[i].cap; s++) {
			struct run *r = &f->r[f->g[i].first_slot - 1 + s];

			r->g = &f->g[i];
			r->slot = f->g[i].first_slot + s;
			r->fd[0] = r->fd[1] = r->file[0] = r->file[1] = -1;
			obuf_init(&r->out[0]);
			obuf_init(&r->out[1]);
		}
	return 0;
}

static int
check_options(struct farm *f)
{
	struct farm_opts *o = f->o;

	if (o->share == SHARE_DEFAULT)
		o->share = farm_mps_available() ? SHARE_MPS : SHARE_TIMESLICE;
	if (o->sm_pct > 0 && o->share != SHARE_MPS)
		return err_set(EXIT_USAGE, "--sm needs --share mps (it is an MPS thread percentage)");
	if (o->share == SHARE_EXCLUSIVE && o->jobs_form == JOBS_AUTO)
		return err_set(EXIT_USAGE, "--share exclusive runs one task per device: -j auto "
		    "has nothing to choose (use --share mps or timeslice)");
	/* --round-robin, --bin: a task a slot, started once: the count is fixed (parallel: -j N) */
	if (pipe_spread(&o->pipe) != PIPE_BLOCKS && o->jobs_form == JOBS_AUTO)
		return err_set(EXIT_USAGE, "--%s starts its tasks once, one a slot: give -j N, not auto",
		    o->pipe.bin ? "bin" : "round-robin");
	/* auto is the default wherever there is a count to choose (but there) */
	if (o->jobs_form == JOBS_DEFAULT && o->share != SHARE_EXCLUSIVE && pipe_spread(&o->pipe) == PIPE_BLOCKS)
		o->jobs_form = JOBS_AUTO;
	o->jobs_auto = o->jobs_form == JOBS_AUTO;
	if (o->share == SHARE_EXCLUSIVE && o->jobs_form != JOBS_MAX && jobs_per_device(o, o->share) > 1)
		return err_set(EXIT_USAGE, "--share exclusive runs one task per device: -j asks for %d "
		    "(use --share mps or timeslice)", jobs_per_device(o, o->share));
	if (o->ungroup && o->line_buffer)
		return err_set(EXIT_USAGE, "--ungroup cannot be combined with --line-buffer (as in "
		    "parallel: use --line-buffer alone)");
	/* parallel: -u passes output through as it comes, untagged: --tag changes nothing */
	if (o->ungroup && !o->results)
		o->tag = 0;
	/* --results NAME.csv (.tsv, .json): one file, not a directory (farm/results.h) */
	if (results_kind(o->results) != RESULTS_DIR) {
		f->res.name = o->results;
		o->results = NULL;
	}
	/* parallel's --resume also skips tasks whose --results directory is there */
	if (o->resume && !o->resume_failed && o->results && !joblog_is_file(&o->joblog))
		joblog_free(&o->joblog);
	else if ((o->resume || o->resume_failed || o->retry_failed) && !joblog_is_file(&o->joblog))
		return err_set(EXIT_USAGE, "--resume, --resume-failed and --retry-failed need --joblog FILE "
		    "(--resume: or --results DIR)");
	/* -k prints whole outputs in order: --line-buffer has nothing to add (as in parallel) */
	if (o->keep_order || o->results)
		o->line_buffer = 0;
	return 0;
}

static const char *const fixed_keys[] = {"CUDA_VISIBLE_DEVICES=", "GPUPACK_SEQ=", "GPUPACK_SLOT=",
	"GPUPACK_GPU=", GUARD_ENV "=", "PARALLEL_SEQ=", "PARALLEL_JOBSLOT=", "PARALLEL_PID=",
	"PARALLEL_SSHHOST=", "PARALLEL_SSHLOGIN=",
	"CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=",
	"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="};
#define NFIXED_KEYS ((int)(sizeof fixed_keys / sizeof fixed_keys[0]))

static void
env_keys(struct farm *f)
{
	f->envk.keys = xcalloc((size_t)(NFIXED_KEYS + f->o->nenv + 1), sizeof *f->envk.keys);
	for (int i = 0; i < NFIXED_KEYS; i++)
		f->envk.keys[f->envk.nkeys++] = fixed_keys[i];
	if (f->o->slot_var)
		f->envk.keys[f->envk.nkeys++] = xasprintf("%s=", f->o->slot_var);
	for (int i = 0; i < f->o->nenv; i++)
		f->envk.keys[f->envk.nkeys++] = xstrndup(f->o->env[i], (size_t)(strchr(f->o->env[i], '=') - f->o->env[i] + 1));
}

/*
 * --retry-failed: the joblog's failed command lines are the tasks, with
 * their numbers (queue.c hands them out in Seq order, numbers between them
 * passed over whatever their size), and the command is {} (each line runs
 * as it is). What the command line gave is not used, as in parallel.
 */
static int
retry_failed_inputs(struct farm *f)
{
	struct farm_opts *o = f->o;

	if (journal_failed(o->joblog.path, &f->rfq.rf, &f->rfq.nrf) < 0)
		return -1;
	o->ncmd = 0;
	o->resume_failed = 1;
	return 0;
}

/* The command, --tagstring and --results templates, with --header's names. */
static int
compile_templates(struct farm *f)
{
	struct farm_opts *o = f->o;
	struct tmpl_opts to = {.rpl = o->rpl, .quote_all = o->quote_all, .context = o->context,
		.append = 1, .trim = o->trim, .names = o->ts.in.names, .nnames = o->ts.in.nnames};
	char *tag[1] = {(char *)(o->tagstring ? o->tagstring : (o->rpl[RPL_ALL] ? o->rpl[RPL_ALL] : "{}"))};
	char *res[1] = {(char *)o->results};

	to.quote_line = o->shellquote;
	/*
	 * --pipe: a task's data is its stdin; {} is appended only to --cat's (its
	 * block's file); --tee's values are used where the command names them
	 */
	to.append = !o->pipe.on || (o->pipe.cat && !o->pipe.tee);
	to.plus = o->plus;
	to.rpl_defs = o->rpl_defs;
	to.nrpl_defs = o->nrpl_defs;
	to.parens = o->parens;
	to.perl = &f->perl;
	to.max_jobs = f->nr;
	if (tmpl_compile(&f->cmd, o->cmd, o->ncmd, &to) < 0)
		return -1;
	to.quote_line = 0;
	to.append = 0;
	to.raw = 1;
	to.quote_all = 0;
	if (o->tag && tmpl_compile(&f->tagt, tag, 1, &to) < 0)
		return -1;
	if (o->results) {
		if (tmpl_compile(&f->res.dir, res, 1, &to) < 0)
			return -1;
		f->res.dir_tmpl = f->res.dir.has_rpl;
	}
	if (o->workdir && tmpl_compile(&f->wdt, (char **)&o->workdir, 1, &to) < 0)
		return -1;
	/* --filter: perl, run by the run's perl */
	f->filt = o->nfilters ? xcalloc((size_t)o->nfilters, sizeof *f->filt) : NULL;
	for (int i = 0; i < o->nfilters; i++)
		if (tmpl_compile(&f->filt[i], &o->filters[i], 1, &to) < 0)
			return -1;
	if (o->nfilters && f->perl.pid == 0 && perl_open(&f->perl, f->nr) < 0)
		return -1;
	return 0;
}

/*
 * Tasks at once over all devices when the run starts: what -X and -m spread
 * the last inputs over. Under -j auto, the counts the controllers start
 * from (with --dry-run, which starts none, the share mode's start).
 */
static int
start_slots(const struct farm *f)
{
	int n = 0, start = f->o->share == SHARE_MPS ? FARM_JOBS_MPS : FARM_JOBS_TIMESLICE;

	for (int i = 0; i < f->ng; i++)
		n += f->o->jobs_auto && !f->g[i].ctl ? (f->g[i].cap < start ? f->g[i].cap : start) :
		    f->g[i].jobs;
	return n;
}

/*
 * --bar, --eta, --progress: the total, for a percentage and an ETA from
 * the start: --total-jobs, or the inputs read ahead while they hold less
 * than FARM_READ_AHEAD bytes (else it is known at their end).
 */
static int
progress_setup(struct farm *f)
{
	const struct farm_opts *o = f->o;
	unsigned long long n = 0;
	int rc;

	f->prog.mode = o->bar ? PROGRESS_BAR : o->eta ? PROGRESS_ETA : o->progress ? PROGRESS_PLAIN :
	    PROGRESS_NONE;
	if (f->prog.mode == PROGRESS_NONE)
		return 0;
	if (o->total_jobs > 0) {
		f->st.total = (unsigned long long)o->total_jobs;
		return 0;
	}
	if (f->total_tasks > 0 || f->o->retry_failed) {
		f->st.total = f->total_tasks;
		return 0;
	}
	rc = tasks_count_upto(&f->o->ts, FARM_READ_AHEAD, &n);
	if (rc > 0)
		f->st.total = n;
	return rc < 0 ? -1 : 0;
}

/* --results DIR: an existing directory, or none yet (made as tasks start). */
static int
check_results(const struct farm *f)
{
	struct stat st;
	const char *dir = f->o->results;

	/* a template names a directory per task: each is made and checked when its task starts */
	if (!dir || f->res.dir_tmpl)
		return 0;
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : err_set(EXIT_USAGE, "--results %s: not a directory", dir);
	if (errno != ENOENT)
		return err_sys(EXIT_USAGE, "--results %s", dir);
	return 0;
}

/*
 * Everything the run changes, once every argument and input is checked:
 * leftovers of killed runs ended, the watchdog, MPS daemons, and last the
 * joblog (truncating it cannot be undone). A step that fails undoes the
 * ones before it.
 */
static int
begin(struct farm *f)
{
	int killed = 0, rc;

	if (!f->o->dry_run) {
		if (guard_start(&f->guard, f->nr, &killed) < 0)
			return err_prefix("watchdog");
		if (killed > 0)
			warnx_("ended %d process%s a killed run left running", killed, killed == 1 ? "" : "es");
	}
	if (f->o->share == SHARE_MPS && !f->o->dry_run) {
		if (farm_mps_setup(f->g, f->ng) < 0)
			return -1;
		/* the daemons this run started: stopped by the watchdog if gpupack is killed */
		for (int i = 0; i < f->ng; i++)
			if (f->g[i].mps_ours)
				guard_mps_started(&f->guard, f->g[i].t.uuid);
	}
	/* a farm over nodes keeps its own log in FILE.farm (farm/nodes.h): 1, and the joblog is its */
	rc = nodes_setup(f, farm_identity(f->o));
	if (rc < 0 || (rc == 0 && journal_begin(&f->j) < 0)) {
		struct err_saved e;

		/* the refusal is what the user sees, not what stopping the daemons said */
		err_save(&e);
		farm_mps_teardown(f->g, f->ng);
		return err_restore(&e);
	}
	return 0;
}

/*
 * One farm per joblog: a farm of its own, or the shards of one --shard
 * split on one joblog (as before the lock: they warn), each shard once.
 */
static int
lock_joblog(struct farm *f)
{
	char key[64];

	if (f->o->shard_n == 0)
		return joblock_take(&f->lock, &f->o->joblog, NULL, -1);
	snprintf(key, sizeof key, "shards.%lu", f->o->shard_n);
	return joblock_take(&f->lock, &f->o->joblog, key, (long)f->o->shard_k);
}

/*
 * A command kept from a GNU parallel script that picks its GPU itself
 * (CUDA_VISIBLE_DEVICES=$(( ({%}-1) % 4 )) ./sim) overrides the device
 * gpupack gives each task: tasks pile onto GPUs gpupack did not choose, and
 * -j counts per GPU. Said once, at the start (the run goes on as asked).
 */
static void
warn_own_cvd(const struct farm_opts *o)
{
	static const char var[] = "CUDA_VISIBLE_DEVICES=";

	for (int i = 0; i < o->ncmd; i++) {
		for (const char *p = strstr(o->cmd[i], var); p; p = strstr(p + 1, var)) {
			char c = p == o->cmd[i] ? ' ' : p[-1];

			if (isalnum((unsigned char)c) || c == '_' || c == '$' || c == '{')
				continue;
			warnx_("the command sets CUDA_VISIBLE_DEVICES itself, which overrides the GPU gpupack "
			    "places each task on (tasks may share GPUs it did not choose): leave it out, "
			    "gpupack sets it per task (doc/from-parallel.md)");
			return;
		}
	}
}

/* The options checked, the devices read, their groups of slots made, -j auto's controllers set. */
static int
setup_devices(struct farm *f, struct gpu_backend *b)
{
	struct gpu_system sys;
	struct gpu_target *t = NULL;
	int n = 0, rc;

	/* a simulated machine's MPS is gpupack's stand-in daemon; what the run prints says simulated */
	f->st.simulated = strcmp(b->name, "sim") == 0;
	if (f->st.simulated && (f->o->share == SHARE_MPS || (f->o->share == SHARE_DEFAULT &&
	    farm_mps_available())) && gpu_sim_mps() < 0)
		return -1;
	if (check_options(f) < 0)
		return -1;
	if (gpu_snapshot(b, &sys, 0) < 0)
		return -1;
	rc = select_targets(f, &sys, &t, &n);
	if (rc == 0)
		rc = make_groups(f, &sys, t, n);
	if (rc == 0 && !f->o->dry_run && isatty(2))
		jobs_note(f->o, f->o->share, f->g, f->ng);
	if (rc == 0 && !f->o->dry_run)
		rc = auto_setup(f, &sys);
	free(t);
	gpu_system_free(&sys);
	return rc;
}

int
setup_prepare(struct farm *f, struct gpu_backend *b)
{
	const char *from;

	/* first: a GPUPACK_TRACE that cannot be written refuses the run before anything changes */
	if (trace_open(f->st.t0) < 0 || setup_devices(f, b) < 0 || nodes_prepare(f) < 0)
		return -1;
	/*
	 * One farm per joblog, before it is read (a farm over nodes takes it in
	 * nodes_setup, by its run). A dry run writes none: it may read one in use.
	 */
	if (!f->nodes && joblog_is_file(&f->o->joblog) && !f->o->dry_run && lock_joblog(f) < 0)
		return -1;
	if (f->o->retry_failed && retry_failed_inputs(f) < 0)
		return -1;
	/*
	 * --pipe-part's default blocks: 10 per slot the run starts with (parallel's -j; under
	 * -j auto not its most, which made blocks of a line); --round-robin and --bin: a task a
	 * slot (a fixed -j); --tee: stdin, for every task
	 */
	if (f->o->pipe.on && !f->o->pipe.tee && f->o->ts.in.nsrc > 0)
		f->o->ts.in.src[0].pipe_slots = start_slots(f);
	if (f->o->pipe.tee && !f->o->dry_run && pipe_tee_file(&f->o->tee_file) < 0)
		return -1;
	if ((!f->o->retry_failed && tasks_open(&f->o->ts) < 0) || compile_templates(f) < 0)
		return -1;
	f->o->ts.cmd = &f->cmd;
	f->o->ts.slots = start_slots(f);
	warn_own_cvd(f->o);
	/* parallel counts the tasks first for --halt N% and a perl string's total_jobs() */
	if (f->o->retry_failed)
		f->total_tasks = f->rfq.nrf;
	else if ((f->o->halt_pct > 0 || tmpl_needs_total(&f->cmd) || tmpl_needs_total(&f->tagt)) &&
	    tasks_count(&f->o->ts, &f->total_tasks) < 0)
		return -1;
	if (progress_setup(f) < 0)
		return -1;
	if (shell_pick(f->shell, sizeof f->shell, &from) < 0)
		return -1;
	/*
	 * checks first, all of them: a run that fails one changes nothing (a farm over
	 * nodes: nodes.c). A dry run, as parallel's, writes no joblog (it may read one).
	 */
	if (!f->nodes && journal_check(&f->j, f->o->dry_run && !f->o->resume && !f->o->resume_failed &&
	    !f->o->retry_failed ? NULL : &f->o->joblog, f->o->resume, f->o->resume_failed,
	    f->o->retry_failed ? 0 : farm_identity(f->o)) < 0)
		return -1;
	if (check_results(f) < 0)
		return -1;
	/* the first task too (a farm over nodes claims what it reads: nodes.c checks its own) */
	if (!f->nodes && queue_peek(f) < 0)
		return -1;
	if (begin(f) < 0)
		return -1;
	if (f->res.name && !f->o->dry_run && (f->j.resume ? results_file_resume(&f->res.file,
	    f->res.name, f->o->ts.in.names, f->o->ts.in.nnames, &f->j) : results_file_open(&f->res.file,
	    f->res.name, f->o->ts.in.names, f->o->ts.in.nnames)) < 0)
		return -1;
	if (f->o->pipe.on && !f->o->pipe.tee)
		f->res.file.pipe = f->o->pipe.cat ? 2 : 1;
	env_keys(f);
	return 0;
}

void
setup_cleanup(struct farm *f)
{
	/*
	 * No task is left to end here: setup_prepare starts none, and the run's
	 * loop ends only once none runs (farm_run); each was released as it ended.
	 */
	queue_free(f);
	usagefarm_free(f->usage);
	f->usage = NULL;
	f->st.usage = NULL;
	free(f->ou.color_eol);
	free(f->ou.color_reset);
	journal_failed_free(f->rfq.rf, f->rfq.nrf);
	deliver_flush(f, 1);
	auto_finish(f, 0);
	farm_mps_teardown(f->g, f->ng);
	/* after the daemons stopped as they should: every child left now is a task's orphan */
	if (f->guard.sweep)
		guard_sweep(&f->guard, 0);
	guard_stop(&f->guard);
	journal_close(&f->j);
	nodes_close(f);
	/* after the last record and the merged joblog of a farm over nodes */
	joblock_release(&f->lock);
	trace_close();
	for (int i = NFIXED_KEYS; i < f->envk.nkeys; i++)
		free((char *)f->envk.keys[i]);
	tmpl_free(&f->cmd);
	tmpl_free(&f->tagt);
	tmpl_free(&f->res.dir);
	tmpl_free(&f->wdt);
	for (int i = 0; f->filt && i < f->o->nfilters; i++)
		tmpl_free(&f->filt[i]);
	free(f->filt);
	perl_close(&f->perl);
	results_file_close(&f->res.file);
	free(f->rt.runtimes);
	free(f->envk.base_env);
	free(f->envk.keys);
	free(f->r);
	free(f->g);
	if (f->sigfd >= 0)
		close(f->sigfd);
	if (f->devnull >= 0)
		close(f->devnull);
}
