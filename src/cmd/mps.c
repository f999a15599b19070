/*
 * mps: `gpupack mps start|stop|status|env|exec`, private MPS control daemons
 * per GPU or MIG device. Arguments are checked before anything is started,
 * so bad input changes nothing. start and exec find devices through the
 * backend; stop, status and env work from gpupack's own records, so they
 * still work when the driver does not answer.
 */
#include "cmd/cmd.h"
#include "gpu/select.h"
#include "gpu/usagewatch.h"
#include "share/mps.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/proc.h"
#include "util/json.h"
#include "util/str.h"
#include "util/table.h"
#include "util/units.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_SEL 64

/* What the subcommands accept; each takes the part it needs. */
struct mps_opts {
	const char *sel[MAX_SEL];
	int nsel;
	int all, restart, force, json;
	int usage;               /* exec --usage */
	const char *usage_json;  /* exec --usage-json FILE */
	struct mps_limits lim;
	double timeout;
};

static const char usage_text[] =
    "usage: gpupack mps start [--gpus SEL]... [--all] [--sm PCT] [--mem SIZE] [--priority normal|low] [--restart]\n"
    "       gpupack mps status [--gpus SEL]... [--json]\n"
    "       gpupack mps stop [--gpus SEL]... [--all] [--timeout DURATION] [--force]\n"
    "       gpupack mps env [--gpus SEL]\n"
    "       gpupack mps exec [--gpus SEL] [--sm PCT] [--mem SIZE] [--priority normal|low]\n"
    "                        [--usage] [--usage-json FILE] -- CMD [ARGS...]\n";
static const char tail_text[] =
    "SIZE: " SIZE_HELP ".\n"
    "\n"
    "examples:\n"
    "  gpupack mps exec --sm 50 -- python infer.py    one program under MPS, daemon and all\n"
    "  gpupack mps start --gpus 0 --sm 25 && eval \"$(gpupack mps env --gpus 0)\"\n";

/* mps's options, declared once: the parser, --help and completion read this table */
const struct optdef mps_options[] = {
	{NULL, NULL, OPTTAB_NONE, 0, NULL, "options (each subcommand takes those its usage names):", NULL},
	{"gpus|gpu", NULL, OPTTAB_REQ, 'g', "SEL", "indices, GPU- or MIG- UUIDs, comma-separated", NULL},
	{"all", NULL, OPTTAB_NONE, 'a', NULL, "every device (start, stop)", NULL},
	{"sm", NULL, OPTTAB_REQ, 's', "PCT", "the SM share of each client (0 to 100)", NULL},
	{"mem", NULL, OPTTAB_REQ, 'm', "SIZE", "what each client may allocate itself (the limit\n"
	    "given to MPS adds the client context's own 520 MiB)", NULL},
	{"priority", NULL, OPTTAB_REQ, 'p', "PRIO", "normal or low (the clients' scheduling priority)", NULL},
	{"restart", NULL, OPTTAB_NONE, 'r', NULL, "start: replace a daemon of other limits (refused\n"
	    "while it has clients)", NULL},
	{"timeout", NULL, OPTTAB_REQ, 't', "DURATION", "stop: wait this long for clients (default 30s)",
	    NULL},
	{"force", NULL, OPTTAB_NONE, 'f', NULL, "stop: end the clients left after --timeout\n"
	    "(terminate_client), then quit", NULL},
	{"json", NULL, OPTTAB_NONE, 'j', NULL, "status: one JSON object", NULL},
	{"usage", NULL, OPTTAB_NONE, 'u', NULL, "exec: at the command's end, what it used (wall, CPU,\n"
	    "peak GPU memory, GPU energy; each exact, estimate or unknown)", NULL},
	{"usage-json", NULL, OPTTAB_REQ, 'U', "FILE", "exec: write that as JSON to FILE (- stdout)", NULL},
	{"help", "h", OPTTAB_NONE, 'h', NULL, "this text", NULL},
};
const int mps_noptions = (int)(sizeof mps_options / sizeof mps_options[0]);
const struct optsub mps_subs[] = {
	{"start", "gasmpr"}, {"stop", "gatf"}, {"status", "gj"}, {"env", "g"}, {"exec", "gsmpuU"},
};
const int mps_nsubs = (int)(sizeof mps_subs / sizeof mps_subs[0]);

static struct opttab *
table(void)
{
	static struct opttab ot;

	if (!ot.t)
		opttab_init(&ot, mps_options, mps_noptions);
	return &ot;
}

static void
usage(FILE *f)
{
	opttab_help(table(), usage_text, tail_text, f);
}

/* The options subcommand name takes (mps_subs). */
static const char *
sub_ids(const char *name)
{
	for (int i = 0; i < mps_nsubs; i++)
		if (strcmp(mps_subs[i].name, name) == 0)
			return mps_subs[i].ids;
	return "";
}

static int
usage_error(const char *fmt, const char *arg)
{
	char line[512];

	snprintf(line, sizeof line, fmt, arg ? arg : "");
	return err_die(EXIT_USAGE, "%s (see gpupack mps --help)", line);
}

static int
parse_sm(const char *s, double *out)
{
	double v;

	if (parse_double(s, &v) < 0 || !(v > 0 && v <= 100))
		return err_set(EXIT_USAGE, "--sm %s: a thread percentage must be more than 0 and at most 100", s);
	*out = v;
	return 0;
}

static int
parse_mem(const char *s, uint64_t *out)
{
	if (parse_size(s, out) < 0)
		return err_prefix("--mem");
	if (*out < MIB(1))
		return err_set(EXIT_USAGE, "--mem %s: a memory limit must be at least 1M", s);
	return 0;
}

static int
parse_priority(const char *s, int *out)
{
	if (strcmp(s, "normal") == 0)
		*out = MPS_PRIO_NORMAL;
	else if (strcmp(s, "low") == 0)
		*out = MPS_PRIO_LOW;
	else
		return err_set(EXIT_USAGE, "--priority %s: say normal or low", s);
	return 0;
}

/* Parse options; "+" stops at the first operand (exec's command). */
static int
parse_opts(int argc, char **argv, const char *allowed, struct mps_opts *o)
{
	struct opttab *ot = table();
	int ch, word;

	memset(o, 0, sizeof *o);
	o->lim.priority = MPS_PRIO_UNSET;
	o->timeout = 30;
	optind = 0;
	opterr = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		if (ch == '?' || ch == ':' || !d)
			return opt_error(err_command(), argc, argv, word, ch, ot->longs), err_report();
		ch = d->id;
		if (ch == 'h') {
			usage(stdout);
			exit(0);
		}
		if (!strchr(allowed, ch))
			return err_set(EXIT_USAGE, "option '%s' does not apply to %s (see gpupack mps --help)",
			    argv[word], err_command()), err_report();
		switch (ch) {
		case 'g':
			if (o->nsel == MAX_SEL)
				return usage_error("too many --gpus options%s", NULL);
			o->sel[o->nsel++] = optarg;
			break;
		case 'a': o->all = 1; break;
		case 'r': o->restart = 1; break;
		case 'f': o->force = 1; break;
		case 'j': o->json = 1; break;
		case 'u': o->usage = 1; break;
		case 'U': o->usage_json = optarg; break;
		case 's':
			if (parse_sm(optarg, &o->lim.sm_pct) < 0)
				return err_report();
			break;
		case 'm':
			if (parse_mem(optarg, &o->lim.mem_bytes) < 0)
				return err_report();
			break;
		case 'p':
			if (parse_priority(optarg, &o->lim.priority) < 0)
				return err_report();
			break;
		case 't':
			if (parse_duration(optarg, &o->timeout) < 0)
				return err_prefix("--timeout"), err_report();
			break;
		}
	}
	if (o->all && o->nsel)
		return usage_error("--all and --gpus exclude each other%s", NULL);
	return 0;
}

/* ---- device targets (start, exec) ------------------------------------- */

/* Resolve --gpu/--all through the backend; with neither, every device (or the first: one). */
static int
resolve_targets(struct ctx *c, const struct mps_opts *o, int one, struct gpu_system *sys,
    struct gpu_target **out, int *n)
{
	struct gpu_backend *b;
	struct sbuf sel;
	int rc;

	*out = NULL;
	*n = 0;
	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, sys, 0) < 0)
		return -1;
	sbuf_init(&sel);
	for (int i = 0; i < o->nsel; i++)
		sbuf_printf(&sel, "%s%s", i ? "," : "", o->sel[i]);
	rc = gpu_select(sys, o->nsel ? sel.buf : NULL, out, n);
	sbuf_free(&sel);
	if (rc < 0)
		return -1;
	if (*n == 0)
		return err_set(EXIT_ENV, "no GPU or MIG device found");
	if (one && *n > 1) {
		if (o->nsel)
			return err_set(EXIT_USAGE, "exec runs on one device; '%s' selects %d", o->sel[0], *n);
		*n = 1; /* no selection: the first device */
	}
	return 0;
}

/* ---- records (stop, status, env) -------------------------------------- */

static int
matches(const struct mps_daemon *d, const char *sel)
{
	char *end;
	long idx;

	if (strcasecmp(d->uuid, sel) == 0)
		return 1;
	idx = strtol(sel, &end, 10);
	return *sel && !*end && idx == d->gpu_index;
}

/*
 * A selector no daemon matches: say whether the device itself does not
 * exist (the backend's own words), else that it has no daemon. Without a
 * driver to ask, only the second can be said.
 */
static int
no_daemon_for(struct ctx *c, const char *sel)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct gpu_target t;
	int exists;

	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, &sys, 0) < 0) {
		err_clear();
		return err_set(EXIT_USAGE, "no MPS daemon of gpupack for device '%s'", sel);
	}
	exists = gpu_select_one(&sys, sel, &t) == 0;
	gpu_system_free(&sys);
	if (!exists)
		return -1;
	return err_set(EXIT_USAGE, "no MPS daemon of gpupack for device '%s' "
	    "(gpupack mps start --gpus %s starts one)", sel, sel);
}

/* The managed daemons the selectors name (all of them without any). */
static int
select_daemons(struct ctx *c, const struct mps_opts *o, struct mps_daemon **out, int *n)
{
	struct mps_daemon *all;
	int nall, k = 0;

	if (mps_list(&all, &nall) < 0)
		return -1;
	for (int s = 0; s < o->nsel; s++) {
		int hit = 0;

		for (int i = 0; i < nall; i++)
			hit |= matches(&all[i], o->sel[s]);
		if (!hit) {
			free(all);
			return no_daemon_for(c, o->sel[s]);
		}
	}
	for (int i = 0; i < nall; i++) {
		int keep = o->nsel == 0;

		for (int s = 0; s < o->nsel; s++)
			keep |= matches(&all[i], o->sel[s]);
		if (keep)
			all[k++] = all[i];
	}
	*out = all;
	*n = k;
	return 0;
}

/* ---- start ------------------------------------------------------------ */

/* The machine is simulated (--sim): the daemons are gpupack's stand-in, and every output says so. */
static int simulated;

static void
print_started(const struct mps_daemon *d, int started)
{
	char lim[128];

	printf("%s %s: daemon %ld, %s, pipe %s%s\n", started ? "started" : "already running", d->uuid,
	    (long)d->pid, mps_limits_format(&d->limits, lim, sizeof lim), d->pipe_dir,
	    simulated ? " (SIMULATED: gpupack's MPS stand-in)" : "");
}

/* Undo the daemons this invocation started (a later device failed). */
static void
roll_back(struct mps_daemon *started, int n)
{
	char msg[1024];
	int code = err_code();

	str_copy(msg, err_msg(), sizeof msg);
	for (int i = 0; i < n; i++)
		if (mps_stop(&started[i], 0, 1) < 0)
			warnx_("rollback: %s", err_msg());
	err_set(code, "%s", msg);
}

static int
mps_cmd_start(int argc, char **argv, struct ctx *c)
{
	struct mps_opts o;
	struct gpu_system sys;
	struct gpu_target *t = NULL;
	struct mps_daemon *done = NULL;
	char path[4096];
	int n = 0, ndone = 0, rc = 0;

	err_set_command("mps start");
	if (parse_opts(argc, argv, sub_ids("start"), &o) != 0)
		return EXIT_USAGE;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (mps_control_path(path, sizeof path) < 0)
		return err_report();
	memset(&sys, 0, sizeof sys);
	if (resolve_targets(c, &o, 0, &sys, &t, &n) < 0) {
		gpu_system_free(&sys);
		return err_report();
	}
	done = xcalloc((size_t)n, sizeof *done);
	for (int i = 0; i < n; i++) {
		struct mps_daemon d;
		int started;

		if (mps_start(&t[i], sys.gpus[t[i].gpu].index, &o.lim, o.restart, &d, &started) < 0) {
			err_prefix("%s", t[i].uuid);
			roll_back(done, ndone);
			rc = err_report();
			break;
		}
		if (started)
			done[ndone++] = d;
		print_started(&d, started);
	}
	free(done);
	free(t);
	gpu_system_free(&sys);
	return rc;
}

/* ---- stop ------------------------------------------------------------- */

static int
mps_cmd_stop(int argc, char **argv, struct ctx *c)
{
	struct mps_opts o;
	struct mps_daemon *d;
	int n, rc = 0;

	err_set_command("mps stop");
	if (parse_opts(argc, argv, sub_ids("stop"), &o) != 0)
		return EXIT_USAGE;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (select_daemons(c, &o, &d, &n) < 0)
		return err_report();
	if (n == 0)
		printf("no MPS daemon of gpupack is running\n");
	for (int i = 0; i < n; i++) {
		int was_alive = d[i].alive;

		if (mps_stop(&d[i], o.timeout, o.force) < 0) {
			err_prefix("%s", d[i].uuid);
			rc = err_report();
			continue;
		}
		if (was_alive)
			printf("stopped %s: daemon %ld%s\n", d[i].uuid, (long)d[i].pid,
			    simulated ? " (SIMULATED: gpupack's MPS stand-in)" : "");
		else
			printf("cleaned %s: stale state (daemon %ld gone)\n", d[i].uuid, (long)d[i].pid);
	}
	free(d);
	return rc;
}

/* ---- status ----------------------------------------------------------- */

struct reported {
	char sm[32], mem[32], prio[32];
};

/* What the daemon itself says its limits are (proof they were applied). */
static void
ask_limits(const struct mps_daemon *d, struct reported *r)
{
	static const char *const q[] = {
		"get_default_active_thread_percentage", "get_default_device_pinned_mem_limit 0",
		"get_default_client_priority",
	};
	char *dst[] = {r->sm, r->mem, r->prio};
	struct sbuf b;

	sbuf_init(&b);
	for (int i = 0; i < 3; i++) {
		dst[i][0] = '\0';
		if (d->alive && mps_command(d, q[i], &b) == 0 && b.buf)
			str_copy(dst[i], str_trim(b.buf), 32);
		err_clear();
	}
	sbuf_free(&b);
}

static void
json_limits(struct json *j, const struct mps_limits *l)
{
	json_obj_begin(j, "limits");
	if (l->sm_pct > 0)
		json_double(j, "sm_pct", l->sm_pct);
	else
		json_null(j, "sm_pct");
	if (l->mem_bytes)
		json_uint(j, "mem_bytes", l->mem_bytes);
	else
		json_null(j, "mem_bytes");
	json_str(j, "priority", l->priority == MPS_PRIO_LOW ? "low" : "normal");
	json_obj_end(j);
}

static void
json_daemon(struct json *j, const struct mps_daemon *d, const struct mps_server *s, int ns)
{
	struct reported r;

	ask_limits(d, &r);
	json_obj_begin(j, NULL);
	json_str(j, "uuid", d->uuid);
	json_int(j, "gpu_index", d->gpu_index);
	json_int(j, "pid", d->pid);
	json_str(j, "state", d->alive ? "running" : "stale");
	json_str(j, "dir", d->dir);
	json_str(j, "pipe_dir", d->pipe_dir);
	json_str(j, "log_dir", d->log_dir);
	json_limits(j, &d->limits);
	json_obj_begin(j, "reported");
	json_str(j, "sm_pct", r.sm[0] ? r.sm : NULL);
	json_str(j, "mem", r.mem[0] ? r.mem : NULL);
	json_str(j, "priority", r.prio[0] ? r.prio : NULL);
	json_obj_end(j);
	json_arr_begin(j, "servers");
	for (int i = 0; i < ns; i++) {
		json_obj_begin(j, NULL);
		json_int(j, "pid", s[i].pid);
		json_str(j, "state", mps_server_state_name(s[i].state));
		json_arr_begin(j, "clients");
		for (int k = 0; k < s[i].nclients; k++) {
			json_obj_begin(j, NULL);
			json_int(j, "pid", s[i].clients[k].pid);
			json_str(j, "command", s[i].clients[k].command);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void
table_daemon(struct table *t, struct table *ct, const struct mps_daemon *d,
    const struct mps_server *s, int ns)
{
	char idx[16], pid[16], sm[16], mem[32], srv[16], cli[16];

	snprintf(idx, sizeof idx, "%d", d->gpu_index);
	snprintf(pid, sizeof pid, "%ld", (long)d->pid);
	snprintf(sm, sizeof sm, "%g%%", d->limits.sm_pct > 0 ? d->limits.sm_pct : 100);
	if (d->limits.mem_bytes)
		format_size(d->limits.mem_bytes, mem, sizeof mem);
	else
		str_copy(mem, "-", sizeof mem);
	table_row(t, d->uuid, idx, pid, d->alive ? "running" : "stale", sm, mem,
	    d->limits.priority == MPS_PRIO_LOW ? "low" : "normal", d->pipe_dir);
	for (int i = 0; i < ns; i++) {
		snprintf(srv, sizeof srv, "%ld", (long)s[i].pid);
		if (s[i].nclients == 0)
			table_row(ct, d->uuid, srv, mps_server_state_name(s[i].state), "-", "-");
		for (int k = 0; k < s[i].nclients; k++) {
			snprintf(cli, sizeof cli, "%ld", (long)s[i].clients[k].pid);
			table_row(ct, d->uuid, srv, mps_server_state_name(s[i].state), cli,
			    s[i].clients[k].command);
		}
	}
}

static int
mps_cmd_status(int argc, char **argv, struct ctx *c)
{
	struct mps_opts o;
	struct mps_daemon *d;
	struct mps_foreign *f = NULL;
	struct table t, ct;
	struct json j;
	int n, nf = 0, rc = 0;

	err_set_command("mps status");
	if (parse_opts(argc, argv, sub_ids("status"), &o) != 0)
		return EXIT_USAGE;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (select_daemons(c, &o, &d, &n) < 0)
		return err_report();
	if (mps_foreign_list(d, n, &f, &nf) < 0)
		err_clear();
	json_init(&j, 1);
	json_obj_begin(&j, NULL);
	json_bool(&j, "simulated", simulated);
	json_arr_begin(&j, "daemons");
	table_init(&t, "lrrlrrll", 0);
	table_row(&t, "DEVICE", "GPU", "DAEMON", "STATE", "SM", "MEM", "PRIO", "PIPE DIR");
	table_init(&ct, "lrlrl", 2);
	table_row(&ct, "DEVICE", "SERVER", "STATE", "CLIENT", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct mps_server *s = NULL;
		int ns = 0;

		if (d[i].alive && mps_servers(&d[i], &s, &ns) < 0) {
			warnx_("%s: %s", d[i].uuid, err_msg());
			err_clear();
		}
		if (o.json)
			json_daemon(&j, &d[i], s, ns);
		else
			table_daemon(&t, &ct, &d[i], s, ns);
		mps_servers_free(s, ns);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "foreign");
	for (int i = 0; i < nf; i++) {
		json_obj_begin(&j, NULL);
		json_int(&j, "pid", f[i].pid);
		json_str(&j, "pipe_dir", f[i].pipe_dir);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	if (o.json) {
		rc = json_print(&j, stdout) < 0 ? err_report() : 0;
	} else if (n == 0) {
		printf("no MPS daemon of gpupack\n");
	} else {
		if (simulated)
			printf("SIMULATED machine: the daemons are gpupack's MPS stand-in\n");
		table_print(&t, stdout);
		if (ct.rows > 1) {
			printf("\n");
			table_print(&ct, stdout);
		}
	}
	if (!o.json)
		for (int i = 0; i < nf; i++)
			printf("not gpupack's (left alone): daemon %ld, pipe %s\n", (long)f[i].pid,
			    f[i].pipe_dir);
	table_free(&t);
	table_free(&ct);
	json_free(&j);
	free(f);
	free(d);
	return rc;
}

/* ---- env -------------------------------------------------------------- */

/* NAME='value' with every ' written as '\'' (safe for sh's eval). */
static void
print_export(const char *name, const char *value)
{
	printf("export %s='", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	}
	printf("'\n");
}

static int
mps_cmd_env(int argc, char **argv, struct ctx *c)
{
	struct mps_opts o;
	struct mps_daemon *d;
	int n;

	err_set_command("mps env");
	if (parse_opts(argc, argv, sub_ids("env"), &o) != 0)
		return EXIT_USAGE;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (o.nsel > 1)
		return usage_error("env takes one --gpu%s", NULL);
	if (select_daemons(c, &o, &d, &n) < 0)
		return err_report();
	if (n != 1) {
		free(d);
		if (n == 0)
			return err_die(EXIT_ENV, "no MPS daemon of gpupack is running (start one: gpupack mps start)");
		return err_die(EXIT_USAGE, "%d daemons run; say which with --gpu SEL", n);
	}
	if (!d[0].alive) {
		free(d);
		return err_die(EXIT_ENV, "the daemon of %s is stale (gone); gpupack mps stop cleans it",
		    o.nsel ? o.sel[0] : "this device");
	}
	print_export("CUDA_VISIBLE_DEVICES", d[0].devices);
	print_export("CUDA_MPS_PIPE_DIRECTORY", d[0].pipe_dir);
	print_export("CUDA_MPS_LOG_DIRECTORY", d[0].log_dir);
	free(d);
	return 0;
}

/* ---- exec ------------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

static void
forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static char **
exec_env(const struct mps_daemon *d)
{
	char *mine[8];
	size_t n = 0, k = 0;
	int m;
	char **env;

	mine[0] = xasprintf("CUDA_VISIBLE_DEVICES=%s", d->devices);
	m = 1 + mps_client_env(d, 0, 0, mine + 1);
	while (environ[n])
		n++;
	env = xcalloc(n + (size_t)m + 1, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		int skip = 0;

		for (int j = 0; j < m; j++) {
			size_t len = (size_t)(strchr(mine[j], '=') - mine[j]) + 1;

			if (strncmp(environ[i], mine[j], len) == 0)
				skip = 1;
		}
		if (!skip)
			env[k++] = environ[i];
	}
	for (int j = 0; j < m; j++)
		env[k++] = mine[j];
	env[k] = NULL;
	return env;
}

/* Free what exec_env allocated: our three entries, at the end. */
static void
exec_env_free(char **env)
{
	size_t k = 0;

	while (env[k])
		k++;
	for (size_t i = k - 3; i < k; i++)
		free(env[i]);
	free(env);
}

/*
 * --usage: what the command used, watched while it runs. Every WATCH_ENERGY_S
 * the device's energy counter is read (its resolution is measured from
 * those reads: gpu/energy), every WATCH_PROCS_S its processes' memory.
 */
#define WATCH_ENERGY_S 0.01
#define WATCH_PROCS_S 0.1

/* Is pid the command (*(pid_t *)arg) or one of its descendants (by /proc's parent links)? */
static int
in_tree(pid_t pid, void *arg)
{
	pid_t root = *(const pid_t *)arg;
	struct proc_stat st;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		if (pid == root)
			return 1;
		if (proc_stat(pid, &st) < 0)
			return 0;
		pid = st.ppid;
	}
	return 0;
}

/*
 * Run argv with env; forward SIGINT, SIGTERM, SIGHUP; return its status as a
 * shell would. With w: watch it meanwhile (*root: the command), and fill w->u at its end.
 */
static int
run_child(char **argv, char **env, struct gpu_usage_watch *w, pid_t *root)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa, old[4];
	struct rusage ru;
	int status, have_ru = 0;
	double t0, next_procs = 0;
	pid_t pid, r;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	fflush(NULL);
	if (w)
		gpu_watch_energy(w);
	t0 = clock_mono();
	pid = fork();
	if (pid < 0)
		return err_sys(EXIT_ENV, "fork"), err_report();
	if (pid == 0) {
		execvpe(argv[0], argv, env);
		fprintf(stderr, "gpupack: mps exec: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	*root = pid;
	for (int i = 0; i < 4; i++) {
		sigaction(sigs[i], NULL, &old[i]);
		/* ignored on entry (a background job's SIGINT): stays ignored, as in a shell */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	if (!w) {
		while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
	} else {
		/* watched: poll for its end, reading the counter and the processes between */
		for (;;) {
			r = wait4(pid, &status, WNOHANG, &ru);
			if (r < 0 && errno == EINTR)
				continue;
			if (r != 0)
				break;
			gpu_watch_energy(w);
			if (clock_mono() >= next_procs) {
				gpu_watch_procs(w);
				next_procs = clock_mono() + WATCH_PROCS_S;
			}
			nanosleep(&(struct timespec){0, (long)(WATCH_ENERGY_S * 1e9)}, NULL);
		}
		have_ru = r == pid;
		if (have_ru)
			gpu_watch_energy(w);
		gpu_usage_finish(&w->u, clock_mono() - t0,
		    have_ru ? (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 : NAN,
		    have_ru ? (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 : NAN);
	}
	child_pid = 0;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (r < 0)
		return err_sys(EXIT_INTERNAL, "waitpid"), err_report();
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* --usage's lines on stderr (the command's stdout stays its own), --usage-json's object */
static int
report_usage(const struct mps_opts *o, const struct gpu_usage_watch *w, const char *cmd, int rc, const char *uuid)
{
	FILE *f;

	if (o->usage)
		gpu_usage_print(&w->u, cmd, stderr);
	if (!o->usage_json)
		return 0;
	if (strcmp(o->usage_json, "-") == 0)
		return gpu_usage_json(&w->u, cmd, rc, uuid, stdout) < 0 ?
		    err_set(EXIT_ENV, "--usage-json: writing to stdout failed") : 0;
	if (!(f = fopen(o->usage_json, "w")))
		return err_set(EXIT_ENV, "--usage-json %s: %s", o->usage_json, strerror(errno));
	if (gpu_usage_json(&w->u, cmd, rc, uuid, f) < 0 || fclose(f) != 0)
		return err_set(EXIT_ENV, "--usage-json %s: writing failed", o->usage_json);
	return 0;
}

static int
mps_cmd_exec(int argc, char **argv, struct ctx *c)
{
	struct mps_opts o;
	struct gpu_system sys;
	struct gpu_target *t = NULL;
	struct mps_daemon d;
	struct gpu_usage_watch w, *watch = NULL;
	struct gpu_backend *b;
	pid_t root = 0;
	char path[4096], uuid[GPU_UUID_LEN] = "", **env;
	int n = 0, started = 0, rc;

	err_set_command("mps exec");
	if (parse_opts(argc, argv, sub_ids("exec"), &o) != 0)
		return EXIT_USAGE;
	if (optind >= argc)
		return usage_error("no command to run (mps exec [options] -- CMD ...)%s", NULL);
	if (mps_control_path(path, sizeof path) < 0)
		return err_report();
	memset(&sys, 0, sizeof sys);
	if (resolve_targets(c, &o, 1, &sys, &t, &n) < 0 ||
	    mps_start(&t[0], sys.gpus[t[0].gpu].index, &o.lim, 0, &d, &started) < 0) {
		free(t);
		gpu_system_free(&sys);
		return err_report();
	}
	if (o.usage || o.usage_json) {
		const struct gpu_info *g = &sys.gpus[t[0].gpu];

		if (ctx_backend(c, &b) < 0) {
			warnx_("--usage: %s", err_msg());  /* opened already for the targets: not expected */
		} else {
			gpu_watch_init(&w, b, g->index, t[0].gi >= 0 ? (int)g->gi[t[0].gi].id : -1, in_tree, &root);
			watch = &w;
		}
		str_copy(uuid, t[0].uuid, sizeof uuid);
	}
	free(t);
	gpu_system_free(&sys);
	env = exec_env(&d);
	rc = run_child(argv + optind, env, watch, &root);
	exec_env_free(env);
	if (watch && report_usage(&o, &w, argv[optind], rc, uuid) < 0)
		warnx_("%s", err_msg());
	/* the command is gone; a daemon we started goes with it (clients left: terminated) */
	if (started && mps_stop(&d, 2, 1) < 0)
		warnx_("stopping the daemon of %s: %s", d.uuid, err_msg());
	return rc;
}

/* ---- dispatch --------------------------------------------------------- */

int
cmd_mps(int argc, char **argv, struct ctx *c)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **, struct ctx *);
	} subs[] = {
		{"start", mps_cmd_start}, {"stop", mps_cmd_stop}, {"status", mps_cmd_status},
		{"env", mps_cmd_env}, {"exec", mps_cmd_exec},
	};

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	/* a simulated machine's MPS is gpupack's stand-in daemon (gpu_sim_mps) */
	simulated = ctx_simulated(c);
	if (simulated && gpu_sim_mps() < 0) {
		err_set_command("mps");
		return err_report();
	}
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].fn(argc - 1, argv + 1, c);
	return usage_error("'%s' is not an mps subcommand (start, stop, status, env, exec)", argv[1]);
}
