/*
 * setup: building a run from its options and taking it down. The signals
 * the loop reads (blocked, through a signalfd), the share mode's default
 * and the checks between options, the devices (--gpus, else the
 * environment's), their slots (slot.h's packing), the inputs, the MPS
 * daemons and the joblog (with the command's identity for --resume).
 */
#include "farm/cost.h"
#include "farm/mpsfarm.h"
#include "farm/state.h"
#include "gpu/select.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void
farm_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
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
		g->cap = pack_capacity(f->o->share, f->o->jobs, f->o->mem, t[i].mem_free, g->mig_slices,
		    &g->limit);
		if (t[i].mem_free > best)
			best = t[i].mem_free;
	}
	pack_total(f->g, n, f->o->total);
	for (int i = 0; i < n; i++) {
		f->g[i].first_slot = slot;
		slot += f->g[i].cap;
		any |= f->g[i].cap > 0;
	}
	f->nr = slot - 1;
	if (!any) {
		char a[32], b[32];

		return err_set(EXIT_USAGE, "no selected device has room for one task: --mem %s plus "
		    "%s of context per task, largest free memory %s", format_size(f->o->mem, a, sizeof a),
		    format_size(FARM_CTX_OVERHEAD, b, sizeof b), format_size(best, b, sizeof b));
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
	if (o->share == SHARE_EXCLUSIVE && o->jobs > 1)
		return err_set(EXIT_USAGE, "--share exclusive runs one task per device: -j %d "
		    "asks for more (use --share mps or timeslice)", o->jobs);
	return 0;
}

static void
env_keys(struct farm *f)
{
	static const char *const fixed[] = {"CUDA_VISIBLE_DEVICES=", "GPUPACK_SEQ=", "GPUPACK_SLOT=",
		"GPUPACK_GPU=", "CUDA_MPS_PIPE_DIRECTORY=", "CUDA_MPS_LOG_DIRECTORY=",
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="};
	int nf = (int)(sizeof fixed / sizeof fixed[0]);

	f->keys = xcalloc((size_t)(nf + f->o->nenv), sizeof *f->keys);
	for (int i = 0; i < nf; i++)
		f->keys[f->nkeys++] = fixed[i];
	for (int i = 0; i < f->o->nenv; i++)
		f->keys[f->nkeys++] = xstrndup(f->o->env[i], (size_t)(strchr(f->o->env[i], '=') - f->o->env[i] + 1));
}

/*
 * Which command a joblog belongs to: the template, --shell, and the kinds of
 * the input sources. Not their values: as with parallel, inputs may grow at
 * the end between runs (a task is its seq).
 */
static uint64_t
identity(const struct farm_opts *o)
{
	uint64_t h = JOURNAL_HASH_INIT;

	h = journal_hash(h, o->shell ? "sh" : "argv", o->shell ? 3 : 5);
	for (int i = 0; i < o->ncmd; i++)
		h = journal_hash(h, o->cmd[i], strlen(o->cmd[i]) + 1);
	for (int i = 0; i < o->in.nsrc; i++)
		h = journal_hash(h, o->in.src[i].name ? "file" : "args", 5);
	return h;
}

int
setup_prepare(struct farm *f, struct gpu_backend *b)
{
	struct gpu_system sys;
	struct gpu_target *t = NULL;
	int n = 0, rc;

	if (check_options(f) < 0)
		return -1;
	if (gpu_snapshot(b, &sys, 0) < 0)
		return -1;
	rc = select_targets(f, &sys, &t, &n);
	if (rc == 0)
		rc = make_groups(f, &sys, t, n);
	free(t);
	gpu_system_free(&sys);
	if (rc < 0)
		return -1;
	if (f->o->results && mkdir(f->o->results, 0755) < 0 && errno != EEXIST)
		return err_sys(EXIT_USAGE, "--results %s", f->o->results);
	if (inputs_open(&f->o->in) < 0)
		return -1;
	if (f->o->share == SHARE_MPS && farm_mps_setup(f->g, f->ng) < 0)
		return -1;
	if (journal_open(&f->j, f->o->joblog, f->o->joblog_append, f->o->resume, f->o->resume_failed,
	    identity(f->o)) < 0) {
		farm_mps_teardown(f->g, f->ng);
		return -1;
	}
	env_keys(f);
	f->has_ph = 0;
	for (int i = 0; i < f->o->ncmd; i++)
		f->has_ph |= template_has_placeholder(f->o->cmd[i]);
	return 0;
}

void
setup_cleanup(struct farm *f)
{
	/* nothing outlives the run: tasks still here are ended (an error path) */
	for (int i = 0; i < f->nr; i++) {
		struct run *r = &f->r[i];

		if (r->task && !r->exited) {
			kill(-r->pid, SIGKILL);
			waitpid(r->pid, NULL, 0);
		}
		if (r->task) {
			task_free(f, r->task);
			r->terminated = 0;
			finish_release(f, r, clock_mono());
		}
	}
	queue_free(f);
	deliver_flush(f, 1);
	farm_mps_teardown(f->g, f->ng);
	journal_close(&f->j);
	for (int i = 8; i < f->nkeys; i++)
		free((char *)f->keys[i]);
	free(f->keys);
	free(f->r);
	free(f->g);
	if (f->sigfd >= 0)
		close(f->sigfd);
	if (f->devnull >= 0)
		close(f->devnull);
}
