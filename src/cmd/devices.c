/*
 * devices: what the machine has: GPUs, MIG instances, MIG profiles, the
 * processes using them and the MPS daemons gpupack manages. Read only: it
 * takes one snapshot from the backend and prints it, as a table for people
 * or as one JSON object (keys documented in doc/topology.md).
 */
#include "cmd/cmd.h"
#include "cmd/gpujson.h"
#include "cmd/gpuprint.h"
#include "cmd/opttab.h"
#include "gpu/select.h"
#include "share/mps.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"
#include "util/units.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which parts of the snapshot to show: all of a GPU, or some of its MIG devices. */
struct pick {
	int shown;        /* the GPU is listed */
	int whole;        /* all of it; else only the CIs in ci_mask */
	unsigned *ci_mask; /* per GPU instance: bit k = compute instance k */
};

struct view {
	const struct gpu_system *sys;
	struct pick *picks;  /* one per GPU */
	int profiles;
	struct mps_daemon *mps;
	int nmps;
	const char *mps_error; /* mps_list failed: why */
};

/* devices' options, declared once: the parser, --help and completion read this table */
const struct optdef devices_options[] = {
	{NULL, NULL, OPTTAB_NONE, 0, NULL, "options:", NULL},
	{"json", NULL, OPTTAB_NONE, 'j', NULL, "one JSON object (keys: doc/topology.md)", NULL},
	{"profiles", NULL, OPTTAB_NONE, 'p', NULL, "the MIG profiles each GPU supports, with counts\n"
	    "and placements", NULL},
	{"gpus|gpu", NULL, OPTTAB_REQ, 'g', "SEL", "only these devices: indices, GPU-/MIG- UUIDs,\n"
	    "comma-separated", NULL},
	{"help", "h", OPTTAB_NONE, 'h', NULL, "this text", NULL},
};
const int devices_noptions = (int)(sizeof devices_options / sizeof devices_options[0]);

static void
usage(const struct opttab *ot, FILE *f)
{
	opttab_help(ot, "usage: gpupack devices [--json] [--profiles] [--gpus SEL]\n", "examples:\n"
	    "  gpupack devices                               every GPU, MIG device, MPS daemon\n"
	    "  gpupack --sim h100-80gb devices --profiles    a simulated H100's MIG profiles\n", f);
}

static int
gi_shown(const struct pick *p, int gi)
{
	return p->whole || p->ci_mask[gi] != 0;
}

static int
ci_shown(const struct pick *p, int gi, int ci)
{
	return p->whole || (p->ci_mask[gi] & (1u << ci));
}

static int
proc_shown(const struct pick *p, const struct gpu_info *g, const struct gpu_process *pr)
{
	if (p->whole)
		return 1;
	for (int j = 0; j < g->ngi; j++)
		for (int k = 0; k < g->gi[j].nci; k++)
			if ((int)g->gi[j].id == pr->gi_id && (int)g->gi[j].ci[k].id == pr->ci_id)
				return ci_shown(p, j, k);
	return 0;
}

static void
picks_free(struct view *v)
{
	if (!v->picks)
		return;
	for (int i = 0; i < v->sys->ngpus; i++)
		free(v->picks[i].ci_mask);
	free(v->picks);
	v->picks = NULL;
}

/* Everything, or what --gpu names (checked by gpu_select: unknown and twice are errors). */
static int
picks_make(struct view *v, const char *sel)
{
	const struct gpu_system *sys = v->sys;
	struct gpu_target *targets;
	char *copy, *tok, *save = NULL;
	int n;

	v->picks = xcalloc((size_t)sys->ngpus + 1, sizeof *v->picks);
	for (int i = 0; i < sys->ngpus; i++) {
		v->picks[i].ci_mask = xcalloc((size_t)sys->gpus[i].ngi + 1, sizeof(unsigned));
		v->picks[i].shown = v->picks[i].whole = sel == NULL;
	}
	if (!sel)
		return 0;
	if (gpu_select(sys, sel, &targets, &n) < 0)
		return -1;
	free(targets);
	copy = xstrdup(sel);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct gpu_target t;
		struct pick *p;

		if (gpu_select_one(sys, str_trim(tok), &t) < 0) {
			free(copy);
			return -1;
		}
		p = &v->picks[t.gpu];
		p->shown = 1;
		if (t.gi < 0)
			p->whole = 1;
		else
			p->ci_mask[t.gi] |= 1u << t.ci;
	}
	free(copy);
	return 0;
}

/* ---- JSON ---- */

static void
json_gi(struct json *j, const struct mig_gi *gi, const struct pick *p, int gidx)
{
	json_obj_begin(j, NULL);
	json_uint(j, "id", gi->id);
	json_str(j, "profile", gi->profile);
	json_uint(j, "profile_id", gi->profile_id);
	json_int(j, "profile_index", gi->profile_index);
	json_mig_placement(j, "placement", &gi->placement);
	json_uint(j, "memory_total_bytes", gi->mem_total);
	json_uint(j, "memory_used_bytes", gi->mem_used);
	json_int(j, "sms", gi->sms);
	json_arr_begin(j, "compute_instances");
	for (int k = 0; k < gi->nci; k++) {
		const struct mig_ci *ci = &gi->ci[k];

		if (!ci_shown(p, gidx, k))
			continue;
		json_obj_begin(j, NULL);
		json_uint(j, "id", ci->id);
		json_str(j, "uuid", ci->uuid);
		json_int(j, "profile_index", ci->profile_index);
		json_int(j, "slices", ci->slices);
		json_int(j, "sms", ci->sms);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_process(struct json *j, const struct gpu_process *pr)
{
	json_obj_begin(j, NULL);
	json_int(j, "pid", pr->pid);
	json_str(j, "name", pr->name);
	json_uint(j, "memory_used_bytes", pr->mem_used);
	if (pr->gi_id >= 0) {
		json_int(j, "gpu_instance", pr->gi_id);
		json_int(j, "compute_instance", pr->ci_id);
	} else {
		json_null(j, "gpu_instance");
		json_null(j, "compute_instance");
	}
	json_obj_end(j);
}

static void
json_gpu(struct json *j, const struct view *v, int i)
{
	const struct gpu_info *g = &v->sys->gpus[i];
	const struct pick *p = &v->picks[i];
	char cc[16];

	snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
	json_obj_begin(j, NULL);
	json_int(j, "index", g->index);
	json_str(j, "uuid", g->uuid);
	json_str(j, "name", g->name);
	json_str(j, "pci_bus_id", g->pci_bus_id);
	json_uint(j, "memory_total_bytes", g->mem_total);
	json_uint(j, "memory_used_bytes", g->mem_used);
	json_uint(j, "memory_free_bytes", g->mem_free);
	json_uint(j, "memory_reserved_bytes", g->mem_reserved);
	json_int(j, "sms", g->sms);
	json_str(j, "compute_capability", cc);
	json_str(j, "compute_mode", compute_mode_name(g->compute_mode));
	json_str(j, "mig_current", mig_mode_name(g->mig_current));
	json_str(j, "mig_pending", mig_mode_name(g->mig_pending));
	json_arr_begin(j, "gpu_instances");
	for (int k = 0; k < g->ngi; k++)
		if (gi_shown(p, k))
			json_gi(j, &g->gi[k], p, k);
	json_arr_end(j);
	json_arr_begin(j, "processes");
	for (int k = 0; k < g->nprocs; k++)
		if (proc_shown(p, g, &g->procs[k]))
			json_process(j, &g->procs[k]);
	json_arr_end(j);
	if (v->profiles) {
		json_arr_begin(j, "profiles");
		for (int k = 0; k < g->nprofiles; k++)
			json_mig_profile(j, &g->profiles[k]);
		json_arr_end(j);
	}
	json_obj_end(j);
}

static void
json_mps(struct json *j, const struct view *v)
{
	if (v->mps_error) {
		json_null(j, "mps_daemons");
		json_str(j, "mps_error", v->mps_error);
		return;
	}
	json_arr_begin(j, "mps_daemons");
	for (int i = 0; i < v->nmps; i++) {
		const struct mps_daemon *d = &v->mps[i];

		json_obj_begin(j, NULL);
		json_str(j, "uuid", d->uuid);
		json_int(j, "gpu_index", d->gpu_index);
		json_int(j, "pid", d->pid);
		/* the word mps status --json uses: one name for one thing */
		json_str(j, "state", d->alive ? "running" : "stale");
		json_str(j, "pipe_dir", d->pipe_dir);
		json_str(j, "log_dir", d->log_dir);
		json_obj_begin(j, "limits");
		if (d->limits.sm_pct > 0)
			json_double(j, "sm_pct", d->limits.sm_pct);
		else
			json_null(j, "sm_pct");
		if (d->limits.mem_bytes)
			json_uint(j, "mem_bytes", d->limits.mem_bytes);
		else
			json_null(j, "mem_bytes");
		json_str(j, "priority", d->limits.priority == MPS_PRIO_LOW ? "low" : "normal");
		json_obj_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static int
print_json(const struct view *v)
{
	struct json j;
	int rc;

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_str(&j, "backend", v->sys->backend);
	json_str(&j, "driver_version", v->sys->driver_version);
	json_str(&j, "cuda_version", v->sys->cuda_version);
	json_arr_begin(&j, "gpus");
	for (int i = 0; i < v->sys->ngpus; i++)
		if (v->picks[i].shown)
			json_gpu(&j, v, i);
	json_arr_end(&j);
	json_mps(&j, v);
	json_obj_end(&j);
	rc = json_print(&j, stdout);
	json_free(&j);
	return rc;
}

/* ---- tables ---- */

static void
print_gpus(const struct view *v)
{
	struct table t;

	table_init(&t, "lllrrrrlll", 0);
	table_row(&t, "GPU", "NAME", "UUID", "USED", "TOTAL", "FREE", "SMS", "CC", "COMPUTE", "MIG");
	for (int i = 0; i < v->sys->ngpus; i++) {
		const struct gpu_info *g = &v->sys->gpus[i];
		char idx[16], used[32], total[32], freeb[32], sms[16], cc[16], mig[64];

		if (!v->picks[i].shown)
			continue;
		snprintf(idx, sizeof idx, "%d", g->index);
		snprintf(sms, sizeof sms, "%d", g->sms);
		snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
		if (g->mig_pending != g->mig_current)
			snprintf(mig, sizeof mig, "%s (pending %s)", mig_mode_name(g->mig_current),
			    mig_mode_name(g->mig_pending));
		else
			snprintf(mig, sizeof mig, "%s", mig_mode_name(g->mig_current));
		table_row(&t, idx, g->name, g->uuid, format_size(g->mem_used, used, sizeof used),
		    format_size(g->mem_total, total, sizeof total),
		    format_size(g->mem_free, freeb, sizeof freeb), sms, cc,
		    compute_mode_name(g->compute_mode), mig);
	}
	table_print(&t, stdout);
	table_free(&t);
}

static void
mig_row(struct table *t, const struct gpu_info *g, const struct mig_gi *gi, const struct mig_ci *ci)
{
	char idx[16], gid[16], cid[16], pl[16], used[32], total[32], sms[16];

	snprintf(idx, sizeof idx, "%d", g->index);
	snprintf(gid, sizeof gid, "%u", gi->id);
	snprintf(cid, sizeof cid, "%u", ci ? ci->id : 0);
	snprintf(pl, sizeof pl, "%u+%u", gi->placement.start, gi->placement.size);
	snprintf(sms, sizeof sms, "%d", ci ? ci->sms : gi->sms);
	table_row(t, idx, gid, ci ? cid : NULL, gi->profile, pl,
	    format_size(gi->mem_used, used, sizeof used), format_size(gi->mem_total, total, sizeof total),
	    sms, ci ? ci->uuid : NULL);
}

static void
print_mig(const struct view *v)
{
	struct table t;

	table_init(&t, "rrrllrrrl", 0);
	table_row(&t, "GPU", "GI", "CI", "PROFILE", "PLACEMENT", "USED", "TOTAL", "SMS", "UUID");
	for (int i = 0; i < v->sys->ngpus; i++) {
		const struct gpu_info *g = &v->sys->gpus[i];

		if (!v->picks[i].shown)
			continue;
		for (int k = 0; k < g->ngi; k++) {
			if (!gi_shown(&v->picks[i], k))
				continue;
			if (g->gi[k].nci == 0)
				mig_row(&t, g, &g->gi[k], NULL);
			for (int c = 0; c < g->gi[k].nci; c++)
				if (ci_shown(&v->picks[i], k, c))
					mig_row(&t, g, &g->gi[k], &g->gi[k].ci[c]);
		}
	}
	if (t.rows > 1) {
		printf("\nMIG devices:\n");
		table_print(&t, stdout);
	}
	table_free(&t);
}

static void
print_procs(const struct view *v)
{
	struct table t;

	table_init(&t, "rrrrlr", 0);
	table_row(&t, "GPU", "GI", "CI", "PID", "NAME", "MEMORY");
	for (int i = 0; i < v->sys->ngpus; i++) {
		const struct gpu_info *g = &v->sys->gpus[i];

		if (!v->picks[i].shown)
			continue;
		for (int k = 0; k < g->nprocs; k++) {
			const struct gpu_process *pr = &g->procs[k];
			char idx[16], gid[16], cid[16], pid[16], mem[32];

			if (!proc_shown(&v->picks[i], g, pr))
				continue;
			snprintf(idx, sizeof idx, "%d", g->index);
			snprintf(gid, sizeof gid, "%d", pr->gi_id);
			snprintf(cid, sizeof cid, "%d", pr->ci_id);
			snprintf(pid, sizeof pid, "%ld", (long)pr->pid);
			table_row(&t, idx, pr->gi_id >= 0 ? gid : NULL, pr->gi_id >= 0 ? cid : NULL, pid,
			    pr->name, format_size(pr->mem_used, mem, sizeof mem));
		}
	}
	if (t.rows > 1) {
		printf("\nProcesses:\n");
		table_print(&t, stdout);
	}
	table_free(&t);
}

static void
print_profiles(const struct view *v)
{
	for (int i = 0; i < v->sys->ngpus; i++) {
		if (!v->picks[i].shown)
			continue;
		printf("\n");
		print_mig_profiles(stdout, &v->sys->gpus[i]);
	}
}

/*
 * The MPS section: the daemons gpupack manages, given as a list (from
 * mps_list()), or why the list could not be read.
 */
static void
print_mps(const struct mps_daemon *d, int n, const char *error)
{
	struct table t;

	if (error) {
		printf("\nMPS daemons: unknown (%s)\n", error);
		return;
	}
	if (n == 0) {
		printf("\nMPS daemons: none\n");
		return;
	}
	printf("\nMPS daemons:\n");
	table_init(&t, "rrllrrll", 0);
	table_row(&t, "GPU", "PID", "STATE", "DEVICE", "SM", "MEM", "PRIO", "PIPE DIRECTORY");
	for (int i = 0; i < n; i++) {
		char idx[16], pid[16], sm[16], mem[32] = "-";

		snprintf(idx, sizeof idx, "%d", d[i].gpu_index);
		snprintf(pid, sizeof pid, "%ld", (long)d[i].pid);
		snprintf(sm, sizeof sm, "%g%%", d[i].limits.sm_pct > 0 ? d[i].limits.sm_pct : 100);
		if (d[i].limits.mem_bytes)
			format_size(d[i].limits.mem_bytes, mem, sizeof mem);
		table_row(&t, idx, pid, d[i].alive ? "running" : "stale", d[i].uuid, sm, mem,
		    d[i].limits.priority == MPS_PRIO_LOW ? "low" : "normal", d[i].pipe_dir);
	}
	table_print(&t, stdout);
	table_free(&t);
}

static int
print_human(const struct view *v)
{
	printf("driver %s, CUDA %s", v->sys->driver_version, v->sys->cuda_version);
	if (strncmp(v->sys->backend, "sim:", 4) == 0)
		printf(" (simulated: %s)", v->sys->backend + 4);
	printf("\n\n");
	print_gpus(v);
	print_mig(v);
	print_procs(v);
	if (v->profiles)
		print_profiles(v);
	print_mps(v->mps, v->nmps, v->mps_error);
	if (fflush(stdout) == EOF)
		return err_sys(EXIT_ENV, "writing output");
	return 0;
}

int
cmd_devices(int argc, char **argv, struct ctx *c)
{
	static struct opttab ot;
	struct gpu_backend *b;
	struct gpu_system sys;
	struct view v = {.sys = &sys};
	const char *sel = NULL;
	char mps_why[1024];
	int json = 0, ch, rc, word;

	if (!ot.t)
		opttab_init(&ot, devices_options, devices_noptions);
	while ((ch = opt_next(argc, argv, ot.shortopts, ot.longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(&ot, ch);

		switch (d ? d->id : ch) {
		case 'j': json = 1; break;
		case 'p': v.profiles = 1; break;
		case 'g': sel = optarg; break;
		case 'h': usage(&ot, stdout); return 0;
		default:
			opt_error("devices", argc, argv, word, ch, ot.longs);
			return err_report();
		}
	}
	if (optind < argc)
		return err_die(EXIT_USAGE, "unexpected argument '%s' (see gpupack devices --help)",
		    argv[optind]);
	if (ctx_backend(c, &b) < 0)
		return err_report();
	if (gpu_snapshot(b, &sys, GPU_SNAP_PROCESSES | (v.profiles ? GPU_SNAP_PROFILES : 0)) < 0)
		return err_report();
	if (picks_make(&v, sel) < 0) {
		picks_free(&v);
		gpu_system_free(&sys);
		return err_report();
	}
	/* the daemons are extra: a state directory we cannot read does not hide the GPUs */
	if (mps_list(&v.mps, &v.nmps) < 0) {
		str_copy(mps_why, err_msg(), sizeof mps_why);
		v.mps_error = mps_why;
		err_clear();
	}
	rc = json ? print_json(&v) : print_human(&v);
	free(v.mps);
	picks_free(&v);
	gpu_system_free(&sys);
	return rc < 0 ? err_report() : 0;
}
