/*
 * mig: MIG profiles, plans from requests, apply and clear. Parses the
 * subcommands, takes a snapshot, calls the planner and the apply/clear
 * helpers of src/share/mig.c, and prints tables or one JSON object.
 */
#include "cmd/cmd.h"
#include "cmd/gpujson.h"
#include "cmd/gpuprint.h"
#include "cmd/mig_print.h"
#include "gpu/select.h"
#include "share/mig.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"
#include "util/units.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char objective[] =
    "objective, over all selected GPUs together:\n"
    "  1. satisfy the most requests;\n"
    "  2. then waste the least memory (instance memory minus requested memory);\n"
    "  3. then use the fewest SMs (of instances that hold requests);\n"
    "  4. then need the fewest create and destroy operations.\n"
    "Instances with processes are never touched. Idle instances are reused where the plan has\n"
    "the same profile at the same placement, left alone where they are out of the way, and\n"
    "destroyed only where the plan needs their slices. Ties go to the first plan in a fixed\n"
    "search order. Requests smaller than the smallest profile may share an instance through\n"
    "MPS; each gets a thread percentage (from its compute share, else an equal split) and a\n"
    "memory limit (what it asked for). Each level is proven optimal in turn (an LP bound and an\n"
    "exact search over the sets of instances, doc/mig.md); where the work budget runs out first,\n"
    "the plan says so and how far from optimal it can be.\n";

static const char usage_text[] =
    "usage: gpupack mig profiles [--gpus SEL] [--json]\n"
    "       gpupack mig plan [--gpus SEL] [--json] [--save FILE] [--effort N] (--want SPEC... |\n"
    "                        --requests FILE)\n"
    "       gpupack mig apply [--gpus SEL] [--dry-run] [--enable-mig] [--effort N] (PLAN_FILE |\n"
    "                         --want SPEC... | --requests FILE)\n"
    "       gpupack mig clear [--gpus SEL] [--dry-run]\n"
    "\n"
    "SPEC: COUNTxPROFILE (3x1g.10gb) or COUNTxMEMORY (4x8G: four jobs that each allocate 8 GiB;\n"
    "the plan adds each job's CUDA context); several, or comma-separated. Sizes: K, M, G, T are\n"
    "powers of 1024 (10G = 10 GiB), KB, MB, GB, TB powers of 1000 (NVIDIA's profile names: a\n"
    "1g.20gb holds 19.6 GiB).\n";

/* mig's options, declared once: the parser, --help and completion read this table */
const struct optdef mig_options[] = {
	{NULL, NULL, OPTTAB_NONE, 0, NULL, "options:", NULL},
	{"gpus|gpu", NULL, OPTTAB_REQ, 'g', "SEL", "GPU indices or UUIDs, comma-separated (default:\n"
	    "every MIG-capable GPU)", NULL},
	{"json", NULL, OPTTAB_NONE, 'j', NULL, "profiles, plan: one JSON object", NULL},
	{"want", NULL, OPTTAB_REQ, 'w', "SPEC", "plan, apply: what the jobs need (SPEC above)", NULL},
	{"requests", NULL, OPTTAB_REQ, 'r', "FILE", "one job class a line: COUNT MEMORY|PROFILE [SHARE],\n"
	    "# comments; SHARE is the part of a whole GPU's SMs\n"
	    "one job needs (0.1)", NULL},
	{"save", NULL, OPTTAB_REQ, 's', "FILE", "plan: write the operations as a plan file for\n"
	    "'mig apply'", NULL},
	{"effort", NULL, OPTTAB_REQ, 'E', "N", "search N times as long for a proof of optimality\n"
	    "(1 to 1000, default 1: tens of milliseconds for 50\n"
	    "requests on 8 GPUs; the same N, the same plan)", NULL},
	{"dry-run", NULL, OPTTAB_NONE, 'n', NULL, "apply, clear: print the operations, change nothing\n"
	    "(needs no root)", NULL},
	{"enable-mig", NULL, OPTTAB_NONE, 'e', NULL, "apply: turn MIG mode on where it is off\n"
	    "(otherwise apply refuses)", NULL},
	{"help", "h", OPTTAB_NONE, 'h', NULL, "this text", NULL},
};
const int mig_noptions = (int)(sizeof mig_options / sizeof mig_options[0]);
const struct optsub mig_subs[] = {
	{"profiles", "gj"}, {"plan", "gjwrsE"}, {"apply", "gwrEne"}, {"clear", "gn"},
};
const int mig_nsubs = (int)(sizeof mig_subs / sizeof mig_subs[0]);

static struct opttab *
table(void)
{
	static struct opttab ot;

	if (!ot.t) {
		opttab_init(&ot, mig_options, mig_noptions);
		opttab_permute(&ot);   /* mig apply PLAN_FILE --dry-run */
	}
	return &ot;
}

static void
usage(FILE *f)
{
	struct sbuf tail;

	sbuf_init(&tail);
	sbuf_printf(&tail, "apply and clear need root, except on a simulated machine (--sim, --sim-write).\n"
	    "clear refuses, changing nothing, when any instance of the selected GPUs has processes.\n\n%s\n"
	    "examples:\n"
	    "  gpupack --sim h100-80gb mig plan --want 3x1g.10gb,2x8G   five jobs on an H100\n"
	    "  gpupack mig plan --requests jobs.txt --save plan.txt && gpupack mig apply --dry-run plan.txt\n",
	    objective);
	opttab_help(table(), usage_text, tail.buf, f);
	sbuf_free(&tail);
}

/* ------------------------------------------------------------ shared pieces */

struct opts {
	int json, dry_run, enable_mig, help;
	long effort;                  /* the work budget's multiple; 0 not given */
	const char *gpu, *requests, *save;
	char **want;
	int nwant;
	char **pos;
	int npos;
};

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	struct opttab *ot = table();
	int ch, word;

	memset(o, 0, sizeof *o);
	o->want = xcalloc((size_t)argc + 1, sizeof *o->want);
	optind = 0;
	opterr = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		switch (d ? d->id : ch) {
		case 'g': o->gpu = optarg; break;
		case 'j': o->json = 1; break;
		case 'w': o->want[o->nwant++] = optarg; break;
		case 'r': o->requests = optarg; break;
		case 's': o->save = optarg; break;
		case 'n': o->dry_run = 1; break;
		case 'e': o->enable_mig = 1; break;
		case 'E':
			if (parse_long(optarg, 1, MIG_EFFORT_MAX, &o->effort) < 0)
				return err_prefix("--effort");
			break;
		case 'h': o->help = 1; break;
		default:
			return opt_error("mig", argc, argv, word, ch, ot->longs);
		}
	}
	o->pos = argv + optind;
	o->npos = argc - optind;
	return 0;
}

/* Which GPUs of the snapshot: sel[i] set. Default: all MIG-capable ones. */
static int
select_gpus(const struct gpu_system *sys, const char *sel, int *picked)
{
	char *copy, *tok, *save = NULL;
	int rc = 0;

	memset(picked, 0, sizeof *picked * (size_t)(sys->ngpus + 1));
	if (!sel) {
		for (int i = 0; i < sys->ngpus; i++)
			picked[i] = sys->gpus[i].nprofiles > 0;
		return 0;
	}
	copy = xstrdup(sel);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct gpu_target t;

		if (gpu_select_one(sys, str_trim(tok), &t) < 0) {
			rc = -1;
			break;
		}
		if (sys->gpus[t.gpu].nprofiles == 0) {
			rc = err_set(EXIT_USAGE, "GPU %d (%s) does not support MIG", sys->gpus[t.gpu].index,
			    sys->gpus[t.gpu].name);
			break;
		}
		picked[t.gpu] = 1;
	}
	free(copy);
	return rc;
}

/* Root, or a simulated machine; the error is the command's (gpupack: mig apply: needs root ...). */
static int
need_root(struct ctx *c)
{
	const char *env = getenv("GPUPACK_SIM"), *wenv = getenv("GPUPACK_SIM_WRITE");

	if ((c->sim && *c->sim) || (env && *env) || (wenv && *wenv))
		return 0; /* a simulated machine: its file is the user's own */
	if (geteuid() != 0)
		return err_set(EXIT_ENV, "needs root (MIG instances are changed through the driver as root)");
	return 0;
}

/* All the requests: --want specs, positional specs, --requests FILE. */
static int
gather_requests(const struct opts *o, char **pos, int npos, struct mig_request **out, int *n)
{
	struct mig_request *v = NULL;
	size_t cap = 0;

	*n = 0;
	*out = NULL;
	if (o->requests) {
		char *text;
		size_t len;

		if (read_file(o->requests, &text, &len) < 0)
			return -1;
		if (mig_parse_requests(o->requests, text, &v, n) < 0) {
			free(text);
			free(v);
			*n = 0;
			return -1;
		}
		free(text);
		cap = (size_t)*n;
	}
	for (int i = 0; i < o->nwant + npos; i++) {
		char *copy = xstrdup(i < o->nwant ? o->want[i] : pos[i - o->nwant]), *tok, *save = NULL;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			xgrow(&v, &cap, (size_t)*n + 1, sizeof *v);
			if (mig_parse_spec(str_trim(tok), &v[*n]) < 0) {
				free(copy);
				free(v);
				*n = 0;
				return -1;
			}
			(*n)++;
		}
		free(copy);
	}
	if (*n == 0) {
		free(v);
		return err_set(EXIT_USAGE, "no requests: give --want SPEC (e.g. 2x3g.71gb, 4x8G) or --requests FILE");
	}
	*out = v;
	return 0;
}

/* The planner's view of the picked GPUs (copies, in snapshot order). */
struct machine {
	struct gpu_system sys;
	struct mig_gpu *all;          /* one per snapshot GPU */
	int nall;
	struct mig_gpu *gpus;         /* the picked ones */
	int ngpus;
	int *picked;
};

static int
machine_open(struct ctx *c, const char *sel, struct machine *m)
{
	struct gpu_backend *b;

	memset(m, 0, sizeof *m);
	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, &m->sys, GPU_SNAP_PROFILES | GPU_SNAP_PROCESSES) < 0)
		return -1;
	m->picked = xcalloc((size_t)m->sys.ngpus + 1, sizeof *m->picked);
	if (select_gpus(&m->sys, sel, m->picked) < 0 || mig_gpus_from_system(&m->sys, &m->all, &m->nall) < 0)
		return -1;
	m->gpus = xcalloc((size_t)m->nall + 1, sizeof *m->gpus);
	for (int i = 0; i < m->nall; i++)
		if (m->picked[i])
			m->gpus[m->ngpus++] = m->all[i];
	return 0;
}

static void
machine_close(struct machine *m)
{
	free(m->gpus);
	free(m->all);
	free(m->picked);
	gpu_system_free(&m->sys);
}

/* ------------------------------------------------------------------ profiles */

static void
profiles_json(const struct gpu_system *sys, const int *picked)
{
	struct json j;

	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_str(&j, "backend", sys->backend);
	json_arr_begin(&j, "gpus");
	for (int i = 0; i < sys->ngpus; i++) {
		const struct gpu_info *g = &sys->gpus[i];

		if (!picked[i])
			continue;
		json_obj_begin(&j, NULL);
		json_int(&j, "index", g->index);
		json_str(&j, "uuid", g->uuid);
		json_str(&j, "name", g->name);
		json_str(&j, "mig_current", mig_mode_name(g->mig_current));
		json_arr_begin(&j, "profiles");
		for (int p = 0; p < g->nprofiles; p++)
			json_mig_profile(&j, &g->profiles[p]);
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_print(&j, stdout);
	json_free(&j);
}

/* the table devices --profiles prints too (cmd/gpuprint.c) */
static void
profiles_table(const struct gpu_system *sys, const int *picked)
{
	for (int i = 0; i < sys->ngpus; i++)
		if (picked[i])
			print_mig_profiles(stdout, &sys->gpus[i]);
}

static int
mig_profiles(int argc, char **argv, struct ctx *c)
{
	struct opts o;
	struct machine m;
	int rc = 0;

	if (parse_opts(argc, argv, &o) < 0) {
		free(o.want);
		return err_report();
	}
	if (o.help || o.npos || o.nwant || o.requests || o.save || o.dry_run || o.enable_mig || o.effort) {
		free(o.want);
		if (o.help) {
			usage(stdout);
			return 0;
		}
		return err_die(EXIT_USAGE, "profiles takes only --gpus and --json");
	}
	free(o.want);
	if (machine_open(c, o.gpu, &m) < 0) {
		machine_close(&m);
		return err_report();
	}
	if (o.json)
		profiles_json(&m.sys, m.picked);
	else
		profiles_table(&m.sys, m.picked);
	if (m.ngpus == 0 && !o.json)
		fprintf(stderr, "gpupack: mig profiles: no MIG-capable GPU\n");
	machine_close(&m);
	return rc;
}

/* --------------------------------------------------------------------- plan */

static int
save_ops(const char *path, const struct mig_op *ops, int n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return err_sys(EXIT_INTERNAL, "open_memstream");
	mig_ops_write(ops, n, f);
	fclose(f);
	rc = write_file_atomic(path, text, len, 0644);
	free(text);
	return rc;
}

/* Plan the requests of o on the picked GPUs of m. */
static int
make_plan(const struct opts *o, char **pos, int npos, const struct machine *m, struct mig_request **reqs,
    int *nreqs, struct mig_plan *p)
{
	if (gather_requests(o, pos, npos, reqs, nreqs) < 0)
		return -1;
	return mig_plan(m->gpus, m->ngpus, *reqs, *nreqs, o->effort > 0 ? o->effort * MIG_NODE_LIMIT : 0, p);
}

static int
mig_plan_cmd(int argc, char **argv, struct ctx *c)
{
	struct opts o;
	struct machine m;
	struct mig_request *reqs = NULL;
	struct mig_plan p;
	struct mig_op *ops = NULL;
	int nreqs = 0, nops = 0, rc = 0;

	memset(&p, 0, sizeof p);
	if (parse_opts(argc, argv, &o) < 0) {
		free(o.want);
		return err_report();
	}
	if (o.help) {
		free(o.want);
		usage(stdout);
		return 0;
	}
	if (o.dry_run || o.enable_mig) {
		free(o.want);
		return err_die(EXIT_USAGE, "--dry-run and --enable-mig belong to 'mig apply'");
	}
	if (machine_open(c, o.gpu, &m) < 0 || make_plan(&o, o.pos, o.npos, &m, &reqs, &nreqs, &p) < 0) {
		rc = err_report();
		goto out;
	}
	mig_plan_ops(m.gpus, &p, &ops, &nops);
	if (o.save && save_ops(o.save, ops, nops) < 0) {
		rc = err_report();
		goto out;
	}
	if (o.json)
		mig_print_plan_json(m.gpus, m.ngpus, reqs, nreqs, &p, ops, nops);
	else
		mig_print_plan_table(m.gpus, m.ngpus, reqs, nreqs, &p);
out:
	free(ops);
	free(reqs);
	free(o.want);
	mig_plan_free(&p);
	machine_close(&m);
	return rc;
}

/* -------------------------------------------------------------------- apply */

/* GPUs (indices into m->all) the operations touch whose MIG mode is off. */
static int
mig_off_gpus(const struct machine *m, const struct mig_op *ops, int nops, int *off)
{
	int n = 0;

	for (int g = 0; g < m->nall; g++) {
		off[g] = 0;
		if (m->all[g].mig_enabled)
			continue;
		for (int i = 0; i < nops && !off[g]; i++)
			off[g] = strcasecmp(ops[i].uuid, m->all[g].uuid) == 0;
		n += off[g];
	}
	return n;
}

static void
print_dry_run(const struct machine *m, const struct mig_op *ops, int nops, const int *off, int enable)
{
	char what[320];

	for (int g = 0; g < m->nall; g++)
		if (off[g]) {
			if (enable)
				printf("enable MIG mode on GPU %d (%s)\n", m->all[g].index, m->all[g].uuid);
			else
				printf("# MIG mode is disabled on GPU %d (%s): apply would need --enable-mig\n",
				    m->all[g].index, m->all[g].uuid);
		}
	for (int i = 0; i < nops; i++)
		printf("%s\n", mig_op_describe(m->all, m->nall, &ops[i], what, sizeof what));
	if (nops == 0)
		printf("# nothing to do\n");
}

/* Turn MIG on where needed; on failure turn back what was turned on. */
static int
enable_mig(struct gpu_backend *b, const struct machine *m, const int *off, int *done)
{
	for (int g = 0; g < m->nall; g++) {
		done[g] = 0;
		if (!off[g])
			continue;
		if (b->set_mig_mode(b, m->all[g].index, 1) < 0) {
			err_prefix("enable MIG mode on GPU %d", m->all[g].index);
			for (int h = 0; h < g; h++)
				if (done[h])
					b->set_mig_mode(b, m->all[h].index, 0);
			return -1;
		}
		done[g] = 1;
		printf("enabled MIG mode on GPU %d (%s)\n", m->all[g].index, m->all[g].uuid);
	}
	return 0;
}

static void
disable_again(struct gpu_backend *b, const struct machine *m, const int *done)
{
	char msg[1024];
	int code = err_code();

	str_copy(msg, err_msg(), sizeof msg);
	for (int g = 0; g < m->nall; g++)
		if (done[g])
			b->set_mig_mode(b, m->all[g].index, 0);
	err_set(code, "%s", msg);
}

/* A GPU whose mode change stays pending (the driver wants a reset) cannot take instances. */
static int
check_enabled(struct ctx *c, const struct machine *m, const int *done)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	int rc = 0;

	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, &sys, 0) < 0)
		return -1;
	for (int g = 0; g < m->nall && g < sys.ngpus && rc == 0; g++)
		if (done[g] && sys.gpus[g].mig_current != MIG_ENABLED)
			rc = err_set(EXIT_ENV, "GPU %d: MIG mode is pending, not enabled (the GPU needs a reset; "
			    "gpupack does not reset GPUs)", m->all[g].index);
	gpu_system_free(&sys);
	return rc;
}

static int
apply_ops(struct ctx *c, struct machine *m, const struct mig_op *ops, int nops, const int *off)
{
	struct gpu_backend *b;
	int *done = xcalloc((size_t)m->nall + 1, sizeof *done), rc = 0;

	if (ctx_backend(c, &b) < 0 || enable_mig(b, m, off, done) < 0) {
		free(done);
		return -1;
	}
	for (int g = 0; g < m->nall; g++)
		if (done[g])
			m->all[g].mig_enabled = 1;
	if (check_enabled(c, m, done) < 0 || mig_apply(b, m->all, m->nall, ops, nops, stdout) < 0) {
		disable_again(b, m, done);
		rc = -1;
	}
	free(done);
	return rc;
}

static int
read_plan_file(const char *path, struct mig_op **ops, int *nops)
{
	char *text;
	size_t len;
	int rc;

	if (read_file(path, &text, &len) < 0)
		return -1;
	rc = mig_ops_parse(path, text, ops, nops);
	free(text);
	return rc;
}

static int
mig_apply_cmd(int argc, char **argv, struct ctx *c)
{
	struct opts o;
	struct machine m;
	struct mig_request *reqs = NULL;
	struct mig_plan p;
	struct mig_op *ops = NULL;
	int nreqs = 0, nops = 0, rc = 0, *off = NULL, from_file;

	memset(&p, 0, sizeof p);
	memset(&m, 0, sizeof m);
	if (parse_opts(argc, argv, &o) < 0) {
		free(o.want);
		return err_report();
	}
	if (o.help) {
		free(o.want);
		usage(stdout);
		return 0;
	}
	from_file = o.nwant == 0 && !o.requests;
	if (o.json || o.save || (from_file && o.npos != 1)) {
		free(o.want);
		return err_die(EXIT_USAGE, "apply takes one PLAN_FILE, or --want SPEC... / --requests FILE "
		    "(see gpupack mig --help)");
	}
	if (from_file && o.effort) {
		free(o.want);
		return err_die(EXIT_USAGE, "--effort plans requests: a PLAN_FILE is applied as it is");
	}
	if (!o.dry_run && need_root(c) < 0) {
		free(o.want);
		return err_report();
	}
	if (machine_open(c, o.gpu, &m) < 0)
		goto fail;
	if (from_file) {
		if (read_plan_file(o.pos[0], &ops, &nops) < 0)
			goto fail;
	} else {
		if (make_plan(&o, o.pos, o.npos, &m, &reqs, &nreqs, &p) < 0)
			goto fail;
		mig_plan_ops(m.gpus, &p, &ops, &nops);
	}
	if (mig_ops_check(m.all, m.nall, ops, nops) < 0)
		goto fail;
	off = xcalloc((size_t)m.nall + 1, sizeof *off);
	if (o.dry_run) {
		mig_off_gpus(&m, ops, nops, off);
		print_dry_run(&m, ops, nops, off, o.enable_mig);
		goto out;
	}
	if (mig_off_gpus(&m, ops, nops, off) > 0 && !o.enable_mig) {
		for (int g = 0; g < m.nall; g++)
			if (off[g]) {
				err_set(EXIT_USAGE, "MIG mode is disabled on GPU %d: give --enable-mig to turn it on",
				    m.all[g].index);
				break;
			}
		goto fail;
	}
	if (nops == 0)
		printf("nothing to do\n");
	else if (apply_ops(c, &m, ops, nops, off) < 0)
		goto fail;
	goto out;
fail:
	rc = err_report();
out:
	free(off);
	free(ops);
	free(reqs);
	free(o.want);
	mig_plan_free(&p);
	machine_close(&m);
	return rc;
}

/* -------------------------------------------------------------------- clear */

static int
mig_clear_cmd(int argc, char **argv, struct ctx *c)
{
	struct opts o;
	struct machine m;
	struct gpu_backend *b;
	int rc = 0, n = 0;

	memset(&m, 0, sizeof m);
	if (parse_opts(argc, argv, &o) < 0) {
		free(o.want);
		return err_report();
	}
	free(o.want);
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (o.npos || o.json || o.requests || o.save || o.enable_mig || o.effort)
		return err_die(EXIT_USAGE, "clear takes only --gpus and --dry-run");
	if (!o.dry_run && need_root(c) < 0)
		return err_report();
	if (machine_open(c, o.gpu, &m) < 0 || ctx_backend(c, &b) < 0)
		goto fail;
	for (int i = 0; i < m.sys.ngpus; i++)
		if (m.picked[i] && m.sys.gpus[i].mig_current == MIG_ENABLED)
			n += m.sys.gpus[i].ngi;
	if (o.dry_run) {
		for (int i = 0; i < m.sys.ngpus; i++)
			for (int j = 0; m.picked[i] && m.sys.gpus[i].mig_current == MIG_ENABLED && j < m.sys.gpus[i].ngi; j++)
				printf("destroy gpu-instance %u (%s at %u+%u) on GPU %d (%s)\n", m.sys.gpus[i].gi[j].id,
				    m.sys.gpus[i].gi[j].profile, m.sys.gpus[i].gi[j].placement.start,
				    m.sys.gpus[i].gi[j].placement.size, m.sys.gpus[i].index, m.sys.gpus[i].uuid);
		if (n == 0)
			printf("# nothing to clear\n");
		goto out;
	}
	if (mig_clear(b, &m.sys, m.picked, stdout) < 0)
		goto fail;
	if (n == 0)
		printf("nothing to clear\n");
	goto out;
fail:
	rc = err_report();
out:
	machine_close(&m);
	return rc;
}

int
cmd_mig(int argc, char **argv, struct ctx *c)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "profiles") == 0) {
		err_set_command("mig profiles");
		return mig_profiles(argc - 1, argv + 1, c);
	}
	if (strcmp(argv[1], "plan") == 0) {
		err_set_command("mig plan");
		return mig_plan_cmd(argc - 1, argv + 1, c);
	}
	if (strcmp(argv[1], "apply") == 0) {
		err_set_command("mig apply");
		return mig_apply_cmd(argc - 1, argv + 1, c);
	}
	if (strcmp(argv[1], "clear") == 0) {
		err_set_command("mig clear");
		return mig_clear_cmd(argc - 1, argv + 1, c);
	}
	return err_die(EXIT_USAGE, "'%s' is not a mig subcommand (profiles, plan, apply, clear)", argv[1]);
}
