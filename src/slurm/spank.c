/*
 * spank: gpupack_spank.so, the Slurm side of per-job MPS. The only file
 * that includes spank.h: it reads what Slurm knows (the option, the job's
 * ids, user and GPUs) and hands it to jobmps.c.
 *
 *   plugstack.conf:  required /usr/local/lib/slurm/gpupack_spank.so [ARG...]
 *   a job:           sbatch --gpupack-mps[=sm=PCT,mem=SIZE,priority=low|off] ...
 *
 * Where each callback runs in Slurm 22.05 (../shared/notes/slurm.md):
 * init (srun, sbatch/salloc, slurmstepd) registers the option and checks the
 * arguments; job_prolog and job_epilog (root, once per job and node) start
 * and stop the daemons, outside every step so that steps come and go while
 * the daemons stay; task_init (each task, as the user) points the task at
 * its daemon. init is not called before the prolog and epilog, so every
 * callback parses the arguments itself.
 *
 * A failure to start MPS does not fail the prolog (Slurm would drain the
 * node for a job's problem): it is recorded, logged, and every step of the
 * job then fails at its start with that line on its stderr, unless the site
 * said on_error=run. Only a node that cannot even keep a record fails the
 * prolog. Bad arguments on the plugstack.conf line fail no callback either:
 * they are logged (slurmd's log), and only jobs that ask for MPS fail with
 * them: at submission (srun, sbatch, salloc) or at their steps' start.
 *
 * Every job's prolog, whatever it asked, first sweeps what jobs that are
 * over left (jobdir.h): an epilog that never ran (the node was set down,
 * slurmd came back late) leaves daemons that only the next job can end.
 * Whether Slurm still runs a job here is asked of slurmctld, through the
 * libslurm that slurmstepd has loaded (found at run time: nothing is
 * linked, and without it the sweep keeps what may still run).
 */
#include <stdint.h>
#include <slurm/spank.h>
#include <slurm/slurm.h>

#include "slurm/jobmps.h"
#include "slurm/jobusage.h"
#include "util/err.h"
#include "util/str.h"

#include <dlfcn.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SPANK_PLUGIN(gpupack, 1);

#define PREFIX "gpupack: spank: "

static int opt_given;
static char opt_arg[300];
static struct jobmps_conf conf;
static int conf_ok;
static char conf_error[512];      /* what is wrong with the plugstack.conf line, "" when nothing */

static int opt_cb(int val, const char *optarg, int remote);

static struct spank_option mps_option = {
	"gpupack-mps", "[sm=PCT,mem=SIZE,priority=low|off]",
	"Private MPS daemons for this job, one per GPU or MIG device (gpupack; see doc/slurm.md)",
	2, 0, opt_cb,
};

static void
log_line(const char *line)
{
	slurm_info(PREFIX "%s", line);
}

/*
 * A user's mistake in srun, sbatch or salloc: our one line, and the command
 * ends there (exit 2), before anything is allocated. Returning an error
 * instead would add Slurm's own generic lines after ours.
 */
static void
user_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
user_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PREFIX, stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

static int
local_context(void)
{
	spank_context_t c = spank_context();

	return c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR;
}

/*
 * The arguments, parsed once per process. Wrong ones fail nothing here:
 * they are logged once per process (where a log is read: slurmd's and the
 * steps'), kept, and fail only the jobs that ask for MPS. -1 when wrong.
 */
static int
load_conf(int ac, char **av)
{
	if (conf_ok)
		return 0;
	if (conf_error[0])
		return -1;
	if (jobmps_conf_parse(ac, av, &conf) < 0) {
		str_copy(conf_error, err_msg(), sizeof conf_error);
		if (!local_context())
			slurm_error(PREFIX "plugstack.conf: %s (jobs that ask for --gpupack-mps fail; "
			    "others run)", conf_error);
		err_clear();
		return -1;
	}
	conf_ok = 1;
	jobmps_set_logger(log_line);
	return 0;
}

/* The option's SPEC, with the site's limits: checked where it is given (srun, sbatch). */
static int
opt_cb(int val, const char *optarg, int remote)
{
	struct jobmps_spec sp;
	struct mps_limits lim;

	(void)val;
	opt_given = 1;
	/*
	 * sbatch passes its options on to the sruns of the job through the
	 * environment, and an option given without a value arrives as the
	 * text "(null)" (Slurm 22.05): that is no SPEC, just the option.
	 */
	if (optarg && strcmp(optarg, "(null)") == 0)
		optarg = NULL;
	str_copy(opt_arg, optarg ? optarg : "", sizeof opt_arg);
	/* the site's line is wrong: a job that asks cannot get MPS (off asks for none) */
	if (conf_error[0] && !remote && local_context() && jobmps_spec_parse(opt_arg, &sp) == 0 && !sp.off)
		user_error("plugstack.conf: %s (the site's arguments for gpupack_spank.so: ask its "
		    "administrators)", conf_error);
	if (jobmps_spec_parse(opt_arg, &sp) < 0 || (conf_ok && !sp.off && jobmps_limits(&conf, &sp, &lim) < 0)) {
		if (!remote && local_context())
			user_error("--gpupack-mps: %s", err_msg());
		err_clear();
		return -1;
	}
	return 0;
}

int
slurm_spank_init(spank_t sp, int ac, char **av)
{
	load_conf(ac, av);
	if (spank_context() == S_CTX_SLURMD || spank_context() == S_CTX_JOB_SCRIPT)
		return 0;
	if (spank_option_register(sp, &mps_option) != ESPANK_SUCCESS) {
		slurm_error(PREFIX "cannot register --%s", mps_option.name);
		return -1;
	}
	return 0;
}

/* Did the job ask (or get it without asking), and with what? 1 yes, 0 no, -1 bad SPEC. */
static int
wanted(spank_t sp, struct jobmps_spec *spec)
{
	char *arg = NULL;
	int given = opt_given;

	*spec = (struct jobmps_spec){0, 0, 0, MPS_PRIO_UNSET};
	if (!given && spank_option_getopt(sp, &mps_option, &arg) == ESPANK_SUCCESS) {
		given = 1;
		str_copy(opt_arg, arg && strcmp(arg, "(null)") != 0 ? arg : "", sizeof opt_arg);
	}
	if (given && jobmps_spec_parse(opt_arg, spec) < 0)
		return -1;
	if (spec->off)
		return 0;
	return given || conf.always;
}

static const char *
env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* What the prolog and epilog know of the job (they run with its variables). */
static int
prolog_job(spank_t sp, struct jobmps_job *j)
{
	uint32_t id = 0;
	uid_t uid = 0;
	gid_t gid = 0;

	memset(j, 0, sizeof *j);
	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS)
		id = (uint32_t)strtoul(env_or("SLURM_JOB_ID", "0"), NULL, 10);
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		uid = (uid_t)strtoul(env_or("SLURM_JOB_UID", "0"), NULL, 10);
	if (spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS || gid == 0) {
		const char *g = getenv("SLURM_JOB_GID");
		struct passwd *pw;

		if (g && *g)
			gid = (gid_t)strtoul(g, NULL, 10);
		else if ((pw = getpwuid(uid)) != NULL)
			gid = pw->pw_gid;
	}
	j->jobid = id;
	j->uid = uid;
	j->gid = gid;
	j->node = env_or("SLURMD_NODENAME", "");
	j->gpus = getenv("SLURM_JOB_GPUS");
	j->visible = getenv("CUDA_VISIBLE_DEVICES");
	if (id == 0)
		return err_set(EXIT_INTERNAL, "no job id");
	return 0;
}

/* ---- does Slurm run a job here? ------------------------------------------- */

static const char *this_node;

/*
 * Ask slurmctld (jobdir_running_fn): 1 when jobid runs, is suspended or is
 * completing on this node, 0 when it does not (or Slurm no longer knows it),
 * -1 when it cannot be asked. libslurm's functions are looked up in the
 * process (slurmstepd's libslurmfull): a build of the plugin against one
 * Slurm never links another.
 */
static int
slurm_runs_here(unsigned long jobid)
{
	int (*load)(job_info_msg_t **, uint32_t, uint16_t);
	void (*free_msg)(job_info_msg_t *);
	hostlist_t (*hl_create)(const char *);
	int (*hl_find)(hostlist_t, const char *);
	void (*hl_destroy)(hostlist_t);
	int (*get_errno)(void);
	job_info_msg_t *msg = NULL;
	int here = 0;

	*(void **)&load = dlsym(RTLD_DEFAULT, "slurm_load_job");
	*(void **)&free_msg = dlsym(RTLD_DEFAULT, "slurm_free_job_info_msg");
	*(void **)&hl_create = dlsym(RTLD_DEFAULT, "slurm_hostlist_create");
	*(void **)&hl_find = dlsym(RTLD_DEFAULT, "slurm_hostlist_find");
	*(void **)&hl_destroy = dlsym(RTLD_DEFAULT, "slurm_hostlist_destroy");
	*(void **)&get_errno = dlsym(RTLD_DEFAULT, "slurm_get_errno");
	if (!load || !free_msg || !hl_create || !hl_find || !hl_destroy || !get_errno || !this_node ||
	    !*this_node)
		return -1;
	if (load(&msg, (uint32_t)jobid, SHOW_ALL) != 0)
		return get_errno() == ESLURM_INVALID_JOB_ID ? 0 : -1;
	for (uint32_t i = 0; msg && i < msg->record_count; i++) {
		const job_info_t *ji = &msg->job_array[i];
		uint32_t base = ji->job_state & JOB_STATE_BASE;
		hostlist_t hl;

		if (ji->job_id != jobid || !ji->nodes ||
		    !(base == JOB_RUNNING || base == JOB_SUSPENDED || (ji->job_state & JOB_COMPLETING)))
			continue;
		if ((hl = hl_create(ji->nodes)) != NULL) {
			here |= hl_find(hl, this_node) >= 0;
			hl_destroy(hl);
		}
	}
	free_msg(msg);
	return here;
}

int
slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	struct jobmps_spec spec;
	struct jobmps_job j;
	struct mps_limits lim;
	struct jobrec r;
	char root[4096];
	int w;

	if (load_conf(ac, av) < 0) {
		/* never fail a prolog for the site's line: a job that asked fails at its steps */
		if (wanted(sp, &spec) > 0 && prolog_job(sp, &j) == 0)
			slurm_error(PREFIX "job %lu asked for MPS, which cannot start: plugstack.conf: %s",
			    j.jobid, conf_error);
		err_clear();
		return 0;
	}
	if (prolog_job(sp, &j) < 0) {
		slurm_error(PREFIX "%s", err_msg());
		return 0;
	}
	this_node = j.node;
	jobmps_set_running_check(slurm_runs_here);
	jobusage_set_running_check(slurm_runs_here);
	if (jobusage_start(&conf, &j) < 0) {
		slurm_error(PREFIX "job %lu on %s: %s", j.jobid, j.node, err_msg());
		err_clear();
	}
	w = wanted(sp, &spec);
	if (w == 0) {
		int n = jobmps_sweep(&conf, &j);

		if (n < 0)
			slurm_error(PREFIX "job %lu on %s: sweeping what ended jobs left: %s", j.jobid, j.node,
			    err_msg());
		err_clear();
		return 0;
	}
	if (w < 0 || jobmps_limits(&conf, &spec, &lim) < 0) {
		/* checked by srun and sbatch already; here only when the site's maxima changed since */
		slurm_error(PREFIX "job %lu: --gpupack-mps=%s: %s", j.jobid, opt_arg, err_msg());
		lim = (struct mps_limits){0, 0, MPS_PRIO_UNSET};
	}
	if (!j.gpus && !j.visible) {
		if (!opt_given && conf.always)
			return 0; /* MPS for every job: a job without GPUs gets nothing */
	}
	if (jobmps_prolog(&conf, &j, &lim) == 0) {
		slurm_info(PREFIX "job %lu: MPS daemons started on %s", j.jobid, j.node);
		return 0;
	}
	slurm_error(PREFIX "job %lu on %s: %s", j.jobid, j.node, err_msg());
	/* recorded: its steps fail with this line; not even recorded: a node problem */
	if (jobmps_state_root(&conf, j.node, root, sizeof root) == 0 && jobrec_read(root, j.jobid, &r) == 0)
		return 0;
	return -1;
}

int
slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	struct jobmps_job j;
	char usage[2048];
	int rc;

	if (load_conf(ac, av) < 0)
		return 0; /* logged; nothing can have started */
	if (prolog_job(sp, &j) < 0) {
		slurm_error(PREFIX "%s", err_msg());
		return 0;
	}
	rc = jobusage_stop(&conf, &j, usage, sizeof usage);
	if (rc == 0)
		slurm_info(PREFIX "job %lu on %s: GPU usage: %s", j.jobid, j.node, usage);
	else if (rc < 0)
		slurm_error(PREFIX "job %lu on %s: %s", j.jobid, j.node, err_msg());
	err_clear();
	if (jobmps_epilog(&conf, &j) < 0)
		slurm_error(PREFIX "job %lu on %s: %s", j.jobid, j.node, err_msg());
	return 0; /* never drain a node for this: whatever is left, the next prolog cleans */
}

/* A task's variable, "" when unset. */
static void
task_env(spank_t sp, const char *name, char *out, int size)
{
	if (spank_getenv(sp, name, out, size) != ESPANK_SUCCESS)
		out[0] = '\0';
}

int
slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char visible[1024], step[1024], node[256];
	struct jobmps_spec spec;
	struct jobmps_job j;
	struct jobmps_env e;
	uint32_t id = 0;
	int task = 0, rc;

	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS)
		return 0;
	spank_get_item(sp, S_TASK_ID, &task);
	if (load_conf(ac, av) < 0) {
		/* a job (or step) that asked for MPS cannot have it: it fails, with the line */
		if (wanted(sp, &spec) <= 0)
			return 0;
		if (task == 0)
			fprintf(stderr, PREFIX "job %lu: --gpupack-mps: the plugin's plugstack.conf line is "
			    "wrong: %s (ask the site's administrators)\n", (unsigned long)id, conf_error);
		return -1;
	}
	memset(&j, 0, sizeof j);
	j.jobid = id;
	j.uid = getuid();
	j.gid = getgid();
	task_env(sp, "SLURMD_NODENAME", node, sizeof node);
	j.node = node;
	task_env(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof visible);
	task_env(sp, "SLURM_STEP_GPUS", step, sizeof step);
	if (!step[0])
		task_env(sp, "SLURM_JOB_GPUS", step, sizeof step);
	/* the step's own SPEC (or the job's, which it inherits): its limits apply to its tasks */
	if (opt_given && wanted(sp, &spec) < 0)
		return -1;
	rc = jobmps_task_env(&conf, &j, visible, step, opt_given ? &spec : NULL, &e);
	if (rc == 1 && opt_given && spec.off) {
		/* off: what the batch script's environment passes on must not lead it to the daemons */
		static const char *const vars[] = {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY",
		    "GPUPACK_MPS_DIR", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
		    "CUDA_MPS_CLIENT_PRIORITY", NULL};

		for (int i = 0; vars[i]; i++)
			spank_unsetenv(sp, vars[i]);
		return 0;
	}
	if (rc == 1) {
		/* no MPS here: fine, unless this step asked and the job did not */
		if (opt_given && wanted(sp, &spec) > 0 && visible[0] && strcmp(visible, "NoDevFiles") != 0) {
			uint32_t stepid = 0;

			/* the batch step's option is the job's: its prolog did not run (a requeued job
			 * started again on this node within the credential's life: Slurm skips it) */
			spank_get_item(sp, S_JOB_STEPID, &stepid);
			if (task == 0 && stepid == SLURM_BATCH_SCRIPT)
				fprintf(stderr, PREFIX "job %lu asked for MPS, but no daemons of it run on %s: its "
				    "prolog did not run here (a requeued job started again before AuthInfo's "
				    "cred_expire ended)\n", j.jobid, node);
			else if (task == 0)
				fprintf(stderr, PREFIX "job %lu: --gpupack-mps on a step of a job that did not "
				    "ask for MPS: give it to sbatch or salloc\n", j.jobid);
			return -1;
		}
		return 0;
	}
	if (rc < 0) {
		/* a step's refused SPEC is the user's to fix, not a failure to run without */
		if (conf.run_without && err_code() != EXIT_USAGE) {
			if (task == 0)
				fprintf(stderr, PREFIX "warning: job %lu on %s runs without MPS: %s\n", j.jobid,
				    node, err_msg());
			err_clear();
			return 0;
		}
		if (task == 0)
			fprintf(stderr, PREFIX "job %lu on %s: %s\n", j.jobid, node, err_msg());
		err_clear();
		return -1;
	}
	for (int i = 0; i < e.n; i++) {
		char *eq = strchr(e.set[i], '=');

		*eq = '\0';
		spank_setenv(sp, e.set[i], eq + 1, 1);
	}
	jobmps_env_free(&e);
	return 0;
}

/* ---- each step's end: the job's GPU figures so far into its AdminComment ---- */

static const char *
step_name(uint32_t stepid, char *buf, size_t size)
{
	if (stepid == SLURM_BATCH_SCRIPT)
		return "batch";
	if (stepid == SLURM_EXTERN_CONT)
		return "extern";
	snprintf(buf, size, "%u", (unsigned)stepid);
	return buf;
}

/*
 * slurmstepd (remote context, root), once per step and node, after its
 * tasks: the sampler's figures so far become the job's AdminComment, which
 * `scontrol show job` and `sacct -o AdminComment` show. Only here: the
 * epilog's update is refused ("Job has already finished"). One comment per
 * job: on several nodes, the last step to end writes it (every node's
 * epilog logs its own line). Nothing fails for this.
 */
int
slurm_spank_exit(spank_t sp, int ac, char **av)
{
	void (*init_desc)(job_desc_msg_t *);
	int (*update)(job_desc_msg_t *);
	int (*get_errno)(void);
	char *(*strerr)(int);
	uint32_t id = 0, stepid = 0;
	char node[256] = "", line[1500], comment[1800], sbuf[16];
	struct jobmps_job j;
	job_desc_msg_t d;
	int rc;

	if (spank_context() != S_CTX_REMOTE || load_conf(ac, av) < 0)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
		return 0;
	if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS)
		str_copy(node, env_or("SLURMD_NODENAME", ""), sizeof node);
	memset(&j, 0, sizeof j);
	j.jobid = id;
	j.node = node;
	rc = jobusage_now(&conf, &j, line, sizeof line);
	if (rc != 0) {
		if (rc < 0)
			slurm_info(PREFIX "job %u step %s on %s: %s", (unsigned)id, step_name(stepid, sbuf, sizeof sbuf),
			    node, err_msg());
		err_clear();
		return 0;
	}
	snprintf(comment, sizeof comment, "gpupack %s to step %s: %s", node, step_name(stepid, sbuf, sizeof sbuf),
	    line);
	*(void **)&init_desc = dlsym(RTLD_DEFAULT, "slurm_init_job_desc_msg");
	*(void **)&update = dlsym(RTLD_DEFAULT, "slurm_update_job");
	*(void **)&get_errno = dlsym(RTLD_DEFAULT, "slurm_get_errno");
	*(void **)&strerr = dlsym(RTLD_DEFAULT, "slurm_strerror");
	if (!init_desc || !update || !get_errno || !strerr) {
		slurm_info(PREFIX "job %u: AdminComment not set: slurm_update_job is not in this process", (unsigned)id);
		return 0;
	}
	init_desc(&d);
	d.job_id = id;
	d.admin_comment = comment;
	if (update(&d) != 0)
		slurm_info(PREFIX "job %u: setting AdminComment to the GPU usage: %s", (unsigned)id,
		    strerr(get_errno()));
	return 0;
}
