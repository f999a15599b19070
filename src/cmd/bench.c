/*
 * bench: `gpupack bench`, the sharing mechanisms measured side by side on
 * this GPU. This file parses the command line, finds the device and the
 * worker binary, handles Ctrl-C, and prints; src/bench/ measures.
 */
#include "bench/bench.h"
#include "cmd/cmd.h"
#include "gpu/select.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_INTERRUPTED 130

static const char usage_text[] =
    "usage: gpupack bench [options] [-- CMD [ARGS...]]\n"
    "\n"
    "Measures what each way of sharing the GPU gains: time-slicing, MPS, streams in one\n"
    "process and one batched call (the single-process limit), at several concurrencies.\n"
    "  exercise 1  matmul farm: SGEMM of each size, aggregate TFLOP/s\n"
    "  exercise 2  the same with CPU work between GPU calls (--cpu-ms)\n"
    "  exercise 3  MPS caps: P clients capped at 100/P % of the SMs, against uncapped\n"
    "  exercise 4  -- CMD ...: your command as the task, through gpupack run, tasks per hour\n";
static const char tail_text[] =
    "The worker is gpupack-work: $GPUPACK_WORK, else beside gpupack, else on PATH.\n"
    "On a simulated machine (gpupack --sim FILE bench) nothing is measured: every figure comes\n"
    "from a model of the simulated GPU, and every table, chart and JSON says so.\n"
    "\n"
    "examples:\n"
    "  gpupack bench --quick                    which way of sharing pays on this GPU\n"
    "  gpupack bench --procs 1,4,8 -- python infer.py   your own program as the task\n";

enum {
	O_QUICK = 256, O_SIZES, O_PROCS, O_MODES, O_EXERCISES, O_REPEATS, O_TIME, O_CPU_MS,
	O_MIXED, O_CAPS, O_TASKS, O_GPU, O_MARGIN, O_TIMEOUT, O_JSON, O_OUT, O_SVG, O_PROGRESS,
	O_MAX_REPEATS,
};

/* bench's options, declared once: the parser, --help and completion read this table */
const struct optdef bench_options[] = {
	{NULL, NULL, OPTTAB_NONE, 0, NULL, "options:", NULL},
	{"quick", NULL, OPTTAB_NONE, O_QUICK, NULL, "sizes 512,2048, P 1,2,4,8, exercises 1 and 3,\n"
	    "short timed parts", NULL},
	{"sizes", NULL, OPTTAB_REQ, O_SIZES, "LIST", "matrix sizes (default 256,512,1024,2048,4096)", NULL},
	{"procs", NULL, OPTTAB_REQ, O_PROCS, "LIST", "concurrency levels P (default 1,2,4,8,16)", NULL},
	{"modes", NULL, OPTTAB_REQ, O_MODES, "LIST", "of timeslice,mps,streams,batched (default all)", NULL},
	{"exercises", NULL, OPTTAB_REQ, O_EXERCISES, "LIST", "of 1,2,3,4 (default 1,2,3; 4 alone when CMD\n"
	    "is given)", NULL},
	{"repeats", NULL, OPTTAB_REQ, O_REPEATS, "N", "repeats of every point (default 3; the median\n"
	    "is reported)", NULL},
	{"max-repeats", NULL, OPTTAB_REQ, O_MAX_REPEATS, "N", "repeats of a point whose first ones spread\n"
	    "more than 10% (default 9; --quick 6; = --repeats:\nnever more)", NULL},
	{"time", NULL, OPTTAB_REQ, O_TIME, "DURATION", "timed part of each point (default 300ms;\n"
	    "--quick 120ms)", NULL},
	{"cpu-ms", NULL, OPTTAB_REQ, O_CPU_MS, "M", "exercise 2: CPU work between GPU calls (default 2)",
	    NULL},
	{"mixed-size", NULL, OPTTAB_REQ, O_MIXED, "N", "exercise 2's matrix size (default: the middle)",
	    NULL},
	{"caps-sizes", NULL, OPTTAB_REQ, O_CAPS, "LIST", "exercise 3's sizes (default: the smallest 2;\n"
	    "--quick 1)", NULL},
	{"tasks", NULL, OPTTAB_REQ, O_TASKS, "T", "exercise 4: tasks per point (default 2 x the\n"
	    "largest P)", NULL},
	{"gpus|gpu", NULL, OPTTAB_REQ, O_GPU, "SEL", "the device: index, GPU-uuid or MIG-uuid (default\n"
	    "the first)", NULL},
	{"margin", NULL, OPTTAB_REQ, O_MARGIN, "SECONDS", "setup time given to workers before their shared\n"
	    "start (default: learned from the workers' own\nsetup times; grows when too short)", NULL},
	{"timeout", NULL, OPTTAB_REQ, O_TIMEOUT, "DURATION", "one repeat of one point at most (default 5m)",
	    NULL},
	{"json", NULL, OPTTAB_NONE, O_JSON, NULL, "one JSON object on stdout instead of the tables", NULL},
	{"out", NULL, OPTTAB_REQ, O_OUT, "DIR", "write table.txt, bench.json and <exercise>.svg\n"
	    "into DIR", NULL},
	{"svg", NULL, OPTTAB_REQ, O_SVG, "DIR", "write only the charts into DIR", NULL},
	{"progress", NULL, OPTTAB_NONE, O_PROGRESS, NULL, "a line per measurement on stderr (default when\n"
	    "it is a terminal)", NULL},
	{"help", "h", OPTTAB_NONE, 'h', NULL, "this text", NULL},
};
const int bench_noptions = (int)(sizeof bench_options / sizeof bench_options[0]);

static struct opttab *
table(void)
{
	static struct opttab ot;

	if (!ot.t)
		opttab_init(&ot, bench_options, bench_noptions);
	return &ot;
}

struct opts {
	int json, progress;
	const char *out, *svg, *gpu;
	/* what the user set explicitly, applied over the defaults after all options are read */
	const char *sizes, *procs, *modes, *exercises, *caps;
	long repeats, max_repeats, cpu_ms, mixed, tasks;
	double time_s, margin, timeout;
};

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
	bench_interrupted = 1;
}

static int
parse_list(const char *what, const char *s, long min, long max, int *out, int *n)
{
	char *copy = xstrdup(s), *save = NULL, *tok;
	int k = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		if (k == BENCH_MAX_LIST) {
			free(copy);
			return err_set(EXIT_USAGE, "%s: at most %d values", what, BENCH_MAX_LIST);
		}
		if (parse_long(tok, min, max, &v) < 0) {
			free(copy);
			return err_prefix("%s", what);
		}
		for (int i = 0; i < k; i++)
			if (out[i] == v) {
				free(copy);
				return err_set(EXIT_USAGE, "%s: %ld given twice", what, v);
			}
		out[k++] = (int)v;
	}
	free(copy);
	if (k == 0)
		return err_set(EXIT_USAGE, "%s: empty list", what);
	*n = k;
	return 0;
}

static int
parse_modes(const char *s, unsigned *modes)
{
	char *copy = xstrdup(s), *save = NULL, *tok;

	*modes = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m = bench_mode_parse(tok);

		if (m < 0 || m == BM_MPS_CAPPED) {
			err_set(EXIT_USAGE, "--modes: unknown mode '%s' (timeslice, mps, streams, batched)",
			    tok);
			free(copy);
			return -1;
		}
		*modes |= 1u << m;
	}
	free(copy);
	return *modes ? 0 : err_set(EXIT_USAGE, "--modes: empty list");
}

static int
parse_exercises(const char *s, unsigned *mask)
{
	int v[BENCH_MAX_LIST], n;

	if (parse_list("--exercises", s, 1, EX_MAX, v, &n) < 0)
		return -1;
	*mask = 0;
	for (int i = 0; i < n; i++)
		*mask |= 1u << v[i];
	return 0;
}

static int
parse_seconds(const char *what, const char *s, double min, double *out)
{
	if (parse_duration(s, out) < 0)
		return err_prefix("%s", what);
	if (!(*out >= min))
		return err_set(EXIT_USAGE, "%s: %s is too short", what, s);
	return 0;
}

static int
parse_opt(int ch, struct opts *o)
{
	switch (ch) {
	case O_SIZES: o->sizes = optarg; return 0;
	case O_PROCS: o->procs = optarg; return 0;
	case O_MODES: o->modes = optarg; return 0;
	case O_EXERCISES: o->exercises = optarg; return 0;
	case O_CAPS: o->caps = optarg; return 0;
	case O_REPEATS:
		return parse_long(optarg, 1, BENCH_MAX_REPEATS, &o->repeats) < 0 ?
		    err_prefix("--repeats") : 0;
	case O_MAX_REPEATS:
		return parse_long(optarg, 1, BENCH_MAX_REPEATS, &o->max_repeats) < 0 ?
		    err_prefix("--max-repeats") : 0;
	case O_CPU_MS:
		return parse_long(optarg, 0, 60000, &o->cpu_ms) < 0 ? err_prefix("--cpu-ms") : 0;
	case O_MIXED:
		return parse_long(optarg, 16, 32768, &o->mixed) < 0 ? err_prefix("--mixed-size") : 0;
	case O_TASKS:
		return parse_long(optarg, 1, 100000, &o->tasks) < 0 ? err_prefix("--tasks") : 0;
	case O_TIME: return parse_seconds("--time", optarg, 0.001, &o->time_s);
	case O_TIMEOUT: return parse_seconds("--timeout", optarg, 1, &o->timeout);
	case O_MARGIN:
		if (parse_double(optarg, &o->margin) < 0)
			return err_prefix("--margin");
		return o->margin >= 0.05 && o->margin <= 600 ? 0 :
		    err_set(EXIT_USAGE, "--margin: %s is out of range (0.05 to 600)", optarg);
	case O_GPU: o->gpu = optarg; return 0;
	case O_JSON: o->json = 1; return 0;
	case O_OUT: o->out = optarg; return 0;
	case O_SVG: o->svg = optarg; return 0;
	case O_PROGRESS: o->progress = 1; return 0;
	default: return err_set(EXIT_USAGE, "unknown option (see gpupack bench --help)");
	}
}

/* The explicit options over the defaults of a full or quick run. */
static int
apply_opts(const struct opts *o, struct bench_config *c, int ncmd)
{
	if (o->sizes && parse_list("--sizes", o->sizes, 16, 32768, c->sizes, &c->nsizes) < 0)
		return -1;
	if (o->procs && parse_list("--procs", o->procs, 1, 48, c->procs, &c->nprocs) < 0)
		return -1;
	if (o->caps && parse_list("--caps-sizes", o->caps, 16, 32768, c->caps_sizes,
	    &c->ncaps_sizes) < 0)
		return -1;
	if (o->modes && parse_modes(o->modes, &c->modes) < 0)
		return -1;
	if (ncmd > 0)
		c->exercises = 1u << EX_COMMAND;
	if (o->exercises && parse_exercises(o->exercises, &c->exercises) < 0)
		return -1;
	if ((c->exercises & 1u << EX_COMMAND) && ncmd == 0)
		return err_set(EXIT_USAGE, "exercise 4 needs a command: gpupack bench -- CMD [ARGS...]");
	if (!(c->exercises & 1u << EX_COMMAND) && ncmd > 0)
		return err_set(EXIT_USAGE, "a command was given but --exercises leaves out 4");
	if (o->repeats)
		c->repeats = (int)o->repeats;
	if (o->max_repeats && o->max_repeats < c->repeats)
		return err_set(EXIT_USAGE, "--max-repeats %ld is fewer than the %d repeats of every point",
		    o->max_repeats, c->repeats);
	if (o->max_repeats)
		c->max_repeats = (int)o->max_repeats;
	else if (c->max_repeats < c->repeats)
		c->max_repeats = c->repeats;
	if (o->cpu_ms >= 0)
		c->cpu_ms = (int)o->cpu_ms;
	if (o->mixed)
		c->mixed_size = (int)o->mixed;
	if (o->tasks)
		c->tasks = (int)o->tasks;
	if (o->time_s > 0)
		c->target_s = o->time_s;
	if (o->timeout > 0)
		c->timeout_s = o->timeout;
	if (o->margin > 0)
		c->margin_fixed = o->margin;
	return 0;
}

static int
parse_args(int argc, char **argv, struct opts *o, struct bench_config *c, int *help)
{
	struct opttab *ot = table();
	int ch, quick = 0, word;

	memset(o, 0, sizeof *o);
	o->cpu_ms = -1;
	*help = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		if (d)
			ch = d->id;
		if (ch == 'h') {
			*help = 1;
			return 0;
		}
		if (ch == O_QUICK) {
			quick = 1;
			continue;
		}
		if (ch == ':' || ch == '?')
			return opt_error("bench", argc, argv, word, ch, ot->longs);
		if (parse_opt(ch, o) < 0)
			return -1;
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return err_set(EXIT_USAGE, "unexpected '%s': a command goes after '--'", argv[optind]);
	bench_config_defaults(c, quick);
	c->cmd = argv + optind;
	c->ncmd = argc - optind;
	return apply_opts(o, c, c->ncmd);
}

/* ---- the environment ---------------------------------------------------- */

static int
executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* gpupack-work: $GPUPACK_WORK, beside gpupack, or on PATH. */
static int
find_worker(char *out, size_t size)
{
	const char *env = getenv("GPUPACK_WORK"), *path = getenv("PATH");
	char self[PATH_MAX];

	if (env && *env) {
		if (!executable(env))
			return err_set(EXIT_ENV, "GPUPACK_WORK=%s: not an executable file", env);
		str_copy(out, env, size);
		return 0;
	}
	str_copy(self, ctx_self(), sizeof self);
	snprintf(out, size, "%s/gpupack-work", dirname(self));
	if (executable(out))
		return 0;
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(out, size, "%.*s/gpupack-work", (int)n, path);
		if (n > 0 && executable(out))
			return 0;
		path += n + (path[n] == ':');
	}
	return err_set(EXIT_ENV, "gpupack-work not found (beside gpupack, on PATH, or $GPUPACK_WORK): "
	    "build it with make on a machine with nvcc");
}

static int
simulated(const struct ctx *c)
{
	const char *env = getenv("GPUPACK_SIM");

	return (c->sim && *c->sim) || (env && *env);
}

static int
pick_device(struct ctx *c, const char *sel, struct bench_run *r)
{
	struct gpu_backend *b;
	struct gpu_system sys;
	struct gpu_target *all = NULL;
	int n = 0, rc = 0;

	if (ctx_backend(c, &b) < 0 || gpu_snapshot(b, &sys, 0) < 0)
		return err_code() == EXIT_ENV ? err_prefix("no NVIDIA GPU found") : -1;
	if (sys.ngpus == 0) {
		gpu_system_free(&sys);
		return err_set(EXIT_ENV, "no NVIDIA GPU found: the driver lists no devices");
	}
	if (sel)
		rc = gpu_select_one(&sys, sel, &r->target);
	else if ((rc = gpu_select(&sys, NULL, &all, &n)) == 0 && n == 0)
		rc = err_set(EXIT_ENV, "no NVIDIA GPU found: no device is usable (MIG without instances?)");
	if (rc == 0 && !sel)
		r->target = all[0];
	if (rc == 0) {
		const struct gpu_info *g = &sys.gpus[r->target.gpu];

		if (simulated(c) && !getenv("GPUPACK_WORK")) {
			/* a model gives one value a point: repeats would only copy it */
			bench_model_init(&r->model, r->target.sms, g->cc_major, g->cc_minor);
			r->cfg.repeats = r->cfg.max_repeats = 1;
		}

		str_copy(r->setup.gpu_name, g->name, sizeof r->setup.gpu_name);
		str_copy(r->setup.uuid, r->target.uuid, sizeof r->setup.uuid);
		r->setup.gpu_index = g->index;
		str_copy(r->setup.driver, sys.driver_version, sizeof r->setup.driver);
		str_copy(r->setup.cuda, sys.cuda_version, sizeof r->setup.cuda);
		str_copy(r->setup.backend, sys.backend, sizeof r->setup.backend);
		/* the GPU's energy counter, read around each repeat */
		r->b = b;
	}
	free(all);
	gpu_system_free(&sys);
	return rc;
}

static void
fill_setup(struct bench_setup *s, const struct ctx *c, int argc, char **argv)
{
	struct sbuf b;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(s->date, sizeof s->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (gethostname(s->host, sizeof s->host) < 0)
		str_copy(s->host, "?", sizeof s->host);
	s->host[sizeof s->host - 1] = '\0';
	sbuf_init(&b);
	sbuf_add(&b, "gpupack");
	if (c->sim) {
		sbuf_add(&b, " --sim ");
		sbuf_add(&b, c->sim);
	}
	for (int i = 0; i < argc; i++) {
		sbuf_addc(&b, ' ');
		sbuf_add(&b, argv[i]);
	}
	s->cmdline = sbuf_detach(&b);
}

static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;  /* no SA_RESTART: poll and waitpid must wake up */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int
emit(const struct bench_run *r, const struct opts *o)
{
	if (o->json) {
		if (bench_write_json(r, stdout) < 0)
			return -1;
	} else {
		bench_print_tables(r, stdout);
	}
	fflush(stdout);
	if (o->out && bench_write_dir(r, o->out) < 0)
		return -1;
	if (o->svg && bench_write_svgs(r, o->svg) < 0)
		return -1;
	return 0;
}

int
cmd_bench(int argc, char **argv, struct ctx *c)
{
	struct bench_run run;
	struct bench_run *r = &run;
	char work[PATH_MAX] = "";
	struct opts o;
	int help, rc;

	memset(r, 0, sizeof *r);
	if (parse_args(argc, argv, &o, &r->cfg, &help) < 0)
		return err_report();
	if (help) {
		opttab_help(table(), usage_text, tail_text, stdout);
		return 0;
	}
	if (pick_device(c, o.gpu, r) < 0)
		return err_report();
	r->setup.simulated = simulated(c);
	if (r->model.on && (r->cfg.exercises & 1u << EX_COMMAND))
		return err_die(EXIT_USAGE, "exercise 4 runs your command on a GPU, and a simulated machine "
		    "has none: its model covers exercises 1 to 3");
	if (r->setup.simulated && !getenv("GPUPACK_WORK"))
		/* no GPU to run a worker on: the model of the simulated one (bench/model.c) */
		str_copy(work, "model", sizeof work);
	else if ((r->cfg.exercises & ~(1u << EX_COMMAND)) && find_worker(work, sizeof work) < 0)
		return err_report();
	r->cfg.work = work;
	r->cfg.self = ctx_self();
	r->cfg.sim = c->sim;
	r->cfg.verbose = o.progress || isatty(STDERR_FILENO);
	fill_setup(&r->setup, c, argc, argv);
	catch_signals();
	bench_init(r);
	rc = bench_measure(r);
	bench_cleanup(r);
	if (bench_interrupted) {
		bench_free(r);
		err_die(EXIT_INTERRUPTED, "interrupted by signal %d; workers%s stopped", (int)got_signal,
		    r->setup.mps_started ? " and the MPS daemon" : "");
		return EXIT_INTERRUPTED;
	}
	if (rc < 0) {
		bench_free(r);
		return err_report();
	}
	bench_summarize(r);
	rc = emit(r, &o) < 0 ? err_report() : r->failed ? EXIT_TASKS : EXIT_OK;
	bench_free(r);
	return rc;
}
