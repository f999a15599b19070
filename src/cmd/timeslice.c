/*
 * timeslice: `gpupack timeslice get|set`, the compute time-slice policy of
 * each GPU. get reads nvidia-smi's listing and names each GPU as the backend
 * knows it; set prints the nvidia-smi command for each GPU and runs it
 * (root only; --dry-run only prints). A policy is per GPU: a MIG device
 * selects the GPU it is part of.
 */
#include "cmd/cmd.h"
#include "gpu/select.h"
#include "share/timeslice.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: gpupack timeslice get [--gpus SEL] [--json]\n"
    "       gpupack timeslice set default|short|medium|long [--gpus SEL] [--dry-run]\n";
static const char example_text[] =
    "examples:\n"
    "  gpupack timeslice get                        each GPU's policy\n"
    "  gpupack timeslice set long --gpus 0 --dry-run   the nvidia-smi line, run nothing\n";

/* timeslice's options, declared once: the parser, --help and completion read this table */
const struct optdef timeslice_options[] = {
	{NULL, NULL, OPTTAB_NONE, 0, NULL, "options:", NULL},
	{"gpus|gpu", NULL, OPTTAB_REQ, 'g', "SEL", "indices, GPU- or MIG- UUIDs, comma-separated\n"
	    "(a MIG device selects its GPU)", NULL},
	{"json", NULL, OPTTAB_NONE, 'j', NULL, "get: one JSON object", NULL},
	{"dry-run", NULL, OPTTAB_NONE, 'n', NULL, "set: print the nvidia-smi commands, run nothing", NULL},
	{"help", "h", OPTTAB_NONE, 'h', NULL, "this text", NULL},
};
const int timeslice_noptions = (int)(sizeof timeslice_options / sizeof timeslice_options[0]);
const struct optsub timeslice_subs[] = {{"get", "gj"}, {"set", "gn"}};
const int timeslice_nsubs = (int)(sizeof timeslice_subs / sizeof timeslice_subs[0]);

static struct opttab *
table(void)
{
	static struct opttab ot;

	if (!ot.t)
		opttab_init(&ot, timeslice_options, timeslice_noptions);
	return &ot;
}

static void
usage(FILE *f)
{
	opttab_help(table(), usage_text, example_text, f);
}

struct ts_opts {
	const char *sel;
	int json, dry_run;
};

static int
parse_opts(int argc, char **argv, const char *allowed, struct ts_opts *o)
{
	struct opttab *ot = table();
	int ch, word;

	memset(o, 0, sizeof *o);
	optind = 0;
	opterr = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts + 1, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		if (ch == '?' || ch == ':' || !d)
			return opt_error("timeslice", argc, argv, word, ch, ot->longs), err_report();
		ch = d->id;
		if (ch == 'h') {
			usage(stdout);
			exit(0);
		}
		if (!strchr(allowed, ch))
			return err_die(EXIT_USAGE, "option '%s' does not apply here (see gpupack timeslice --help)",
			    argv[word]);
		if (ch == 'g') {
			if (o->sel)
				return err_die(EXIT_USAGE, "give --gpus once (a comma-separated list selects several)");
			o->sel = optarg;
		} else if (ch == 'j') {
			o->json = 1;
		} else {
			o->dry_run = 1;
		}
	}
	return 0;
}

/* The GPUs (indices into sys->gpus) a selection names; a MIG device names its GPU. */
static int
selected_gpus(const struct gpu_system *sys, const char *sel, int *want)
{
	struct gpu_target *t;
	int n;

	memset(want, 0, (size_t)sys->ngpus * sizeof *want);
	if (gpu_select(sys, sel, &t, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		want[t[i].gpu] = 1;
	/* a GPU with MIG on and no instances selects nothing through gpu_select */
	if (!sel)
		for (int i = 0; i < sys->ngpus; i++)
			want[i] = 1;
	free(t);
	return 0;
}

/* "00000000:19:00.0" and "0000:19:00.0" name the same device: compare after the domain. */
static int
same_bus(const char *a, const char *b)
{
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');

	return ca && cb && strcasecmp(ca, cb) == 0;
}

/* The snapshot GPU an entry is about, or -1. */
static int
entry_gpu(const struct gpu_system *sys, const struct timeslice_entry *e)
{
	for (int i = 0; sys && i < sys->ngpus; i++) {
		if (e->gpu >= 0 && sys->gpus[i].index == e->gpu)
			return i;
		if (e->gpu < 0 && e->bus_id[0] && same_bus(sys->gpus[i].pci_bus_id, e->bus_id))
			return i;
	}
	return -1;
}

static void
emit(struct json *j, struct table *t, const struct gpu_system *sys, int g, const struct timeslice_entry *e)
{
	const struct gpu_info *gi = g >= 0 ? &sys->gpus[g] : NULL;
	char idx[16];
	int index = gi ? gi->index : e->gpu;

	snprintf(idx, sizeof idx, "%d", index);
	json_obj_begin(j, NULL);
	if (index >= 0)
		json_int(j, "index", index);
	else
		json_null(j, "index");
	json_str(j, "uuid", gi ? gi->uuid : NULL);
	json_str(j, "name", gi ? gi->name : NULL);
	json_str(j, "timeslice", timeslice_name(e->value));
	json_str(j, "raw", e->raw);
	json_obj_end(j);
	table_row(t, index >= 0 ? idx : (e->bus_id[0] ? e->bus_id : "?"), gi ? gi->uuid : "-",
	    gi ? gi->name : "-", timeslice_name(e->value));
}

/*
 * A simulated machine (--sim) answers for itself: its GPUs have the
 * driver's default policy (a topology file does not record one). An
 * explicit $GPUPACK_NVIDIA_SMI still wins, so that tests can feed listings.
 */
static int
simulated(const struct gpu_system *sys)
{
	const char *smi = getenv("GPUPACK_NVIDIA_SMI");

	return str_starts(sys->backend, "sim:") && !(smi && *smi);
}

static void
sim_entries(const struct gpu_system *sys, struct timeslice_entry **e, int *n)
{
	*e = xcalloc((size_t)sys->ngpus + 1, sizeof **e);
	*n = sys->ngpus;
	for (int i = 0; i < sys->ngpus; i++) {
		(*e)[i].gpu = sys->gpus[i].index;
		(*e)[i].value = TS_DEFAULT;
		snprintf((*e)[i].raw, sizeof (*e)[i].raw, "GPU %d: default (simulated)", sys->gpus[i].index);
	}
}

static int
ts_get(int argc, char **argv, struct ctx *c)
{
	struct ts_opts o;
	struct gpu_backend *b;
	struct gpu_system sys, *sp = NULL;
	struct timeslice_entry *e = NULL;
	struct table t;
	struct json j;
	int n = 0, rc = 0, *want = NULL;

	err_set_command("timeslice get");
	if (parse_opts(argc, argv, "gj", &o) != 0)
		return EXIT_USAGE;
	if (optind < argc)
		return err_die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	memset(&sys, 0, sizeof sys);
	/* the backend names the GPUs; without it (no NVML) indices still answer */
	if (ctx_backend(c, &b) == 0 && gpu_snapshot(b, &sys, 0) == 0) {
		sp = &sys;
		want = xcalloc((size_t)sys.ngpus + 1, sizeof *want);
		if (selected_gpus(&sys, o.sel, want) < 0) {
			rc = err_report();
			goto out;
		}
	} else if (o.sel) {
		rc = err_report();
		goto out;
	}
	err_clear();
	if (sp && simulated(sp)) {
		sim_entries(sp, &e, &n);
	} else if (timeslice_list(&e, &n) < 0) {
		rc = err_report();
		goto out;
	}
	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_str(&j, "source", sp && simulated(sp) ? "simulation" : "nvidia-smi compute-policy -l");
	json_arr_begin(&j, "gpus");
	table_init(&t, "rlll", 0);
	table_row(&t, "GPU", "UUID", "NAME", "TIMESLICE");
	for (int i = 0; i < n; i++) {
		int g = entry_gpu(sp, &e[i]);

		if (sp && (g < 0 || !want[g]) && o.sel)
			continue;
		emit(&j, &t, sp, g, &e[i]);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	if (o.json)
		rc = json_print(&j, stdout) < 0 ? err_report() : 0;
	else
		table_print(&t, stdout);
	table_free(&t);
	json_free(&j);
out:
	free(e);
	free(want);
	gpu_system_free(&sys);
	return rc;
}

static void
print_argv(const char *how, const char *const argv[])
{
	printf("%s:", how);
	for (int i = 0; argv[i]; i++)
		printf(" %s", argv[i]);
	printf("\n");
	fflush(stdout);
}

static int
ts_set(int argc, char **argv, struct ctx *c)
{
	struct ts_opts o;
	struct gpu_backend *b;
	struct gpu_system sys;
	int value, rc = 0, sim, *want;

	err_set_command("timeslice set");
	if (parse_opts(argc, argv, "gn", &o) != 0)
		return EXIT_USAGE;
	if (optind + 1 != argc)
		return err_die(EXIT_USAGE, "say one of default, short, medium, long (see gpupack timeslice --help)");
	value = timeslice_value(argv[optind]);
	if (value == TS_UNKNOWN || strlen(argv[optind]) == 1)
		return err_die(EXIT_USAGE, "'%s' is not default, short, medium or long", argv[optind]);
	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, &sys, 0) < 0)
		return err_report();
	sim = simulated(&sys);
	want = xcalloc((size_t)sys.ngpus + 1, sizeof *want);
	if (selected_gpus(&sys, o.sel, want) < 0) {
		rc = err_report();
		goto out;
	}
	/* a topology file records no policy: nothing to change, but --dry-run shows the commands */
	if (sim && !o.dry_run) {
		rc = err_die(EXIT_USAGE, "a simulated GPU has no time-slice policy to set (%s is a topology file); --dry-run "
		    "shows the nvidia-smi commands a real GPU would get", sys.backend + 4);
		goto out;
	}
	if (!o.dry_run && geteuid() != 0) {
		rc = err_die(EXIT_ENV, "needs root (nvidia-smi changes the policy only for root); "
		    "--dry-run shows what it would run");
		goto out;
	}
	for (int i = 0; i < sys.ngpus && rc == 0; i++) {
		char smi[4096], num[8];
		const char *av[7];

		if (!want[i])
			continue;
		if (timeslice_set_argv(sys.gpus[i].uuid, value, smi, sizeof smi, num, sizeof num, av) < 0) {
			if (!sim) {
				rc = err_report();
				break;
			}
			/* no nvidia-smi here, and none needed to show what a real GPU would get */
			err_clear();
			snprintf(smi, sizeof smi, "nvidia-smi");
			snprintf(num, sizeof num, "%d", value);
			av[0] = smi, av[1] = "compute-policy", av[2] = "-i", av[3] = sys.gpus[i].uuid;
			av[4] = "--set-timeslice", av[5] = num, av[6] = NULL;
		}
		print_argv(o.dry_run ? "dry run, would run" : "running", av);
		if (!o.dry_run && timeslice_set(sys.gpus[i].uuid, value) < 0)
			rc = err_report();
	}
out:
	free(want);
	gpu_system_free(&sys);
	return rc;
}

int
cmd_timeslice(int argc, char **argv, struct ctx *c)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "get") == 0)
		return ts_get(argc - 1, argv + 1, c);
	if (strcmp(argv[1], "set") == 0)
		return ts_set(argc - 1, argv + 1, c);
	return err_die(EXIT_USAGE, "'%s' is not a timeslice subcommand (get, set)", argv[1]);
}
