/*
 * jobtask: which daemon a task talks to. A task's CUDA_VISIBLE_DEVICES, as
 * Slurm set it, names the job's devices by global index (Slurm's gres
 * numbers, SLURM_JOB_GPUS), by position within the step's devices (with
 * task/cgroup and ConstrainDevices=yes, as Slurm numbers them then), or by
 * UUID (MIG devices). The daemon started with CUDA_VISIBLE_DEVICES=UUID
 * renumbers what its clients see, so the task's own variable is rewritten to
 * the UUIDs it serves.
 */
#include "slurm/jobmps.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
jobmps_env_free(struct jobmps_env *e)
{
	for (int i = 0; i < e->n; i++)
		free(e->set[i]);
	e->n = 0;
}

/* The job's device that a task's entry names; its index in r->gpu, -1 with err set. */
static int
resolve(const struct jobrec *r, const char *entry, char **step, int nstep)
{
	const char *id = entry;

	if (strncasecmp(entry, "GPU-", 4) == 0 || strncasecmp(entry, "MIG-", 4) == 0) {
		for (int i = 0; i < r->ngpus; i++)
			if (strcasecmp(r->gpu[i].uuid, entry) == 0)
				return i;
		return err_set(EXIT_ENV, "CUDA_VISIBLE_DEVICES names %s, not a device of job %lu here",
		    entry, r->jobid);
	}
	if (r->index == JOBMPS_INDEX_LOCAL) {
		long k;

		if (parse_long(entry, 0, nstep - 1, &k) < 0)
			return err_set(EXIT_ENV, "CUDA_VISIBLE_DEVICES entry %s is not one of the step's %d "
			    "devices (SLURM_STEP_GPUS)", entry, nstep);
		id = step[k];
	}
	for (int i = 0; i < r->ngpus; i++)
		if (strcmp(r->gpu[i].id, id) == 0)
			return i;
	return err_set(EXIT_ENV, "CUDA_VISIBLE_DEVICES entry %s: GPU %s is not a device of job %lu here",
	    entry, id, r->jobid);
}

/* "set-" and a hash of the devices: a name short enough for a socket path. */
static void
set_name(const char *const *uuids, int n, char *out, size_t size)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < n; i++)
		for (const char *c = uuids[i]; ; c++) {
			h ^= (unsigned char)*c;
			h *= 0x100000001b3ULL;
			if (!*c)
				break;
		}
	snprintf(out, size, "set-%016llx", h);
}

/* The daemon for the devices idx[n]: looked up (one) or started (several). */
static int
daemon_for(const struct jobrec *r, const int *idx, int n, struct mps_daemon *d)
{
	const char *uuids[JOBMPS_MAX_GPUS];
	char name[32];
	int started;

	if (n == 1) {
		int rc = mps_lookup(r->gpu[idx[0]].uuid, d);

		if (rc < 0)
			return -1;
		if (rc == 1 || !d->alive)
			return err_set(EXIT_ENV, "the MPS daemon of %s (job %lu) is gone",
			    r->gpu[idx[0]].uuid, r->jobid);
		return 0;
	}
	for (int i = 0; i < n; i++)
		uuids[i] = r->gpu[idx[i]].uuid;
	set_name(uuids, n, name, sizeof name);
	if (mps_start_set(name, uuids, n, &r->lim, d, &started) < 0)
		return err_prefix("MPS daemon for %d devices", n);
	return 0;
}

/*
 * A step's own limits: each may only lower what the job's daemons hold (a
 * client cannot raise them, and the daemons are the job's, shared by its
 * steps). 0, or -1 with err set.
 */
static int
step_limits(const struct jobrec *r, const struct jobmps_spec *sp)
{
	char a[32], b[32];

	if (sp->sm_pct > 0 && r->lim.sm_pct > 0 && sp->sm_pct > r->lim.sm_pct)
		return err_set(EXIT_USAGE, "--gpupack-mps=sm=%g on a step: the job's daemons hold sm=%g, and "
		    "a step can only lower it (ask for more on sbatch or salloc)", sp->sm_pct, r->lim.sm_pct);
	if (sp->mem_bytes > 0 && r->lim.mem_bytes > 0 && sp->mem_bytes > r->lim.mem_bytes)
		return err_set(EXIT_USAGE, "--gpupack-mps=mem=%s on a step: the job's daemons hold mem=%s, and "
		    "a step can only lower it (ask for more on sbatch or salloc)",
		    format_size_mps(sp->mem_bytes, a, sizeof a), format_size_mps(r->lim.mem_bytes, b, sizeof b));
	if (sp->priority == MPS_PRIO_NORMAL && r->lim.priority == MPS_PRIO_LOW)
		return err_set(EXIT_USAGE, "--gpupack-mps=priority=normal on a step: the job's daemons give "
		    "low priority, and a step can only lower it (ask on sbatch or salloc)");
	return 0;
}

int
jobmps_task_env(const struct jobmps_conf *c, const struct jobmps_job *j, const char *visible,
    const char *step_gpus, const struct jobmps_spec *spec, struct jobmps_env *e)
{
	char root[PATH_MAX], dir[PATH_MAX], *items[JOBMPS_MAX_GPUS], *step[JOBMPS_MAX_GPUS];
	int idx[JOBMPS_MAX_GPUS], ni = 0, ns = 0, rc, have;
	struct mps_daemon d;
	struct jobrec r;
	struct sbuf b;

	e->n = 0;
	if (jobmps_state_root(c, j->node ? j->node : "", root, sizeof root) < 0 ||
	    jobdir_path(root, j->jobid, dir, sizeof dir) < 0)
		return -1;
	have = jobrec_read(root, j->jobid, &r);
	if (have != 0)
		return have;
	if (r.failed)
		return err_set(EXIT_ENV, "%s", r.error);
	if (!visible || !*visible || strcmp(visible, "NoDevFiles") == 0)
		return 1;
	/* the step said off: it runs as plain CUDA processes, the job's daemons left alone */
	if (spec && spec->off)
		return 1;
	if (spec && step_limits(&r, spec) < 0)
		return -1;
	ni = jobmps_split_list(visible, items, JOBMPS_MAX_GPUS);
	ns = jobmps_split_list(step_gpus, step, JOBMPS_MAX_GPUS);
	rc = ni < 0 || ns < 0 ? -1 : 0;
	for (int i = 0; rc == 0 && i < ni; i++) {
		idx[i] = resolve(&r, items[i], step, ns);
		if (idx[i] < 0)
			rc = -1;
	}
	for (int i = 0; i < ni; i++)
		free(items[i]);
	for (int i = 0; i < ns; i++)
		free(step[i]);
	if (rc < 0)
		return -1;
	if (ni == 0)
		return 1;
	/* the daemons are looked up, and a set's started, in the job's directory */
	setenv("GPUPACK_MPS_DIR", dir, 1);
	if (c->control[0])
		setenv("GPUPACK_MPS_CONTROL", c->control, 1);
	if (daemon_for(&r, idx, ni, &d) < 0)
		return -1;
	sbuf_init(&b);
	for (int i = 0; i < ni; i++)
		sbuf_printf(&b, "%s%s", i ? "," : "", r.gpu[idx[i]].uuid);
	e->set[e->n++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", b.buf);
	e->set[e->n++] = xasprintf("CUDA_MPS_PIPE_DIRECTORY=%s", d.pipe_dir);
	e->set[e->n++] = xasprintf("CUDA_MPS_LOG_DIRECTORY=%s", d.log_dir);
	e->set[e->n++] = xasprintf("GPUPACK_MPS_DIR=%s", dir);
	sbuf_free(&b);
	/* the step's own limits, as a client's (what `gpupack mps env --sm --mem` gives one) */
	if (spec && (spec->sm_pct > 0 || spec->mem_bytes > 0)) {
		char *env[6];
		int n = mps_client_env(&d, spec->sm_pct, spec->mem_bytes, env);

		for (int i = 0; i < n; i++) {
			if (i >= 2 && e->n < JOBMPS_TASK_ENV)
				e->set[e->n++] = env[i];
			else
				free(env[i]);
		}
	}
	if (spec && spec->priority == MPS_PRIO_LOW && r.lim.priority != MPS_PRIO_LOW)
		e->set[e->n++] = xasprintf("CUDA_MPS_CLIENT_PRIORITY=%d", MPS_PRIO_LOW);
	return 0;
}
