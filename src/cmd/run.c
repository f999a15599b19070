/*
 * run: the task farm's command line, in GNU parallel's conventions
 * (::: and :::: inputs, -a, -j, -k, --joblog, --resume, --halt, ...) plus
 * the GPU placement options. Everything else is in src/farm/.
 */
#include "cmd/cmd.h"
#include "farm/farm.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gpupack run [options] command [args...] [::: values... | :::: files...]...\n"
    "\n"
    "Runs command once per input (lines of stdin when no ::: or :::: is given),\n"
    "packed onto GPU slots. Several sources combine as a cross product.\n"
    "Replacement strings: {} {.} {/} {//} {/.} {#} {%} {N} {N.} {N/} {N//} {N/.} {gpu} {slot}\n"
    "\n"
    "placement:\n"
    "  --gpus SEL            indices, GPU-/MIG- UUIDs (default: $CUDA_VISIBLE_DEVICES, Slurm's GPUs,\n"
    "                        else every device)\n"
    "  --share MODE          exclusive | timeslice | mps (default mps where the daemon exists)\n"
    "  -j, --jobs N          tasks per device (default: exclusive 1, timeslice 2, mps 4)\n"
    "  --total N             tasks at once over all devices\n"
    "  --mem SIZE            GPU memory per task (packing; under mps also a client limit)\n"
    "  --sm PCT              SM share per task under mps (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)\n"
    "  --env NAME=VALUE      add to each task's environment (repeatable)\n"
    "  --shard K/N|slurm     run only inputs K, K+N, K+2N... (numbered from 0) of this run: one\n"
    "                        gpupack per node (srun), each with its share; slurm: K=$SLURM_PROCID,\n"
    "                        N=$SLURM_NTASKS\n"
    "inputs and commands:\n"
    "  -a, --arg-file FILE   an input source (like :::: FILE)\n"
    "  --shell               run the command line through sh -c (inputs shell-quoted)\n"
    "durability and faults:\n"
    "  --joblog [+]FILE      GNU parallel's joblog (+ appends); fsync'd at each task's end;\n"
    "                        {shard} in FILE becomes the shard number K\n"
    "  --resume              skip tasks the joblog has; --resume-failed reruns the failed ones\n"
    "  --retries N           run a failed task up to N more times\n"
    "  --timeout DURATION    end a task after DURATION (SIGTERM, then SIGKILL)\n"
    "  --halt SPEC           never | now|soon,fail=N[%] | now|soon,success=N\n"
    "output:\n"
    "  --results DIR         DIR/<seq>/stdout and stderr instead of printing\n"
    "  -k, --keep-order      print outputs in input order\n"
    "  --bar, --eta          progress on stderr; --summary: the final summary line\n"
    "  --json                the summary as one JSON object on stdout, after the outputs\n"
    "  --dry-run             print each task's command line instead of running it\n"
    "\n"
    "exit status (GNU parallel's): 0 all succeeded, 1-100 the number that failed, 101 more;\n"
    "255 any other error (bad usage, no device, a signal stopped the run: the message says\n"
    "which); --halt: the failing task's status.\n";

enum {
	OPT_TOTAL = 256, OPT_GPUS, OPT_SHARE, OPT_MEM, OPT_SM, OPT_ENV, OPT_SHELL, OPT_JOBLOG,
	OPT_RESUME, OPT_RESUME_FAILED, OPT_RETRIES, OPT_TIMEOUT, OPT_HALT, OPT_RESULTS, OPT_BAR,
	OPT_ETA, OPT_JSON, OPT_SUMMARY, OPT_DRY_RUN, OPT_SHARD,
};

static const struct option long_opts[] = {
	{"jobs", required_argument, NULL, 'j'},
	{"total", required_argument, NULL, OPT_TOTAL},
	{"gpus", required_argument, NULL, OPT_GPUS},
	{"share", required_argument, NULL, OPT_SHARE},
	{"mem", required_argument, NULL, OPT_MEM},
	{"sm", required_argument, NULL, OPT_SM},
	{"env", required_argument, NULL, OPT_ENV},
	{"shell", no_argument, NULL, OPT_SHELL},
	{"arg-file", required_argument, NULL, 'a'},
	{"joblog", required_argument, NULL, OPT_JOBLOG},
	{"resume", no_argument, NULL, OPT_RESUME},
	{"resume-failed", no_argument, NULL, OPT_RESUME_FAILED},
	{"retries", required_argument, NULL, OPT_RETRIES},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"halt", required_argument, NULL, OPT_HALT},
	{"results", required_argument, NULL, OPT_RESULTS},
	{"keep-order", no_argument, NULL, 'k'},
	{"bar", no_argument, NULL, OPT_BAR},
	{"eta", no_argument, NULL, OPT_ETA},
	{"json", no_argument, NULL, OPT_JSON},
	{"summary", no_argument, NULL, OPT_SUMMARY},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int
parse_int_opt(const char *name, const char *v, long min, long max, int *out)
{
	long n;

	if (parse_long(v, min, max, &n) < 0)
		return err_prefix("%s", name);
	*out = (int)n;
	return 0;
}

static int
parse_share(const char *v, int *out)
{
	static const char *const names[] = {"exclusive", "timeslice", "mps"};

	for (int i = 0; i < 3; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return err_set(EXIT_USAGE, "--share '%s': want exclusive, timeslice or mps", v);
}

static int
parse_env(const char *v)
{
	const char *eq = strchr(v, '=');

	if (!eq || eq == v)
		return err_set(EXIT_USAGE, "--env '%s': want NAME=VALUE", v);
	for (const char *p = v; p < eq; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (p > v && *p >= '0' && *p <= '9')))
			return err_set(EXIT_USAGE, "--env '%s': '%.*s' is not a variable name", v,
			    (int)(eq - v), v);
	return 0;
}

static int
parse_sm(const char *v, double *out)
{
	if (parse_double(v, out) < 0 || !(*out >= 1 && *out <= 100)) {
		err_clear();
		return err_set(EXIT_USAGE, "--sm '%s': want a percentage from 1 to 100", v);
	}
	return 0;
}

static int
one_opt(int ch, const char *arg, struct farm_opts *o)
{
	switch (ch) {
	case 'j':
		return parse_int_opt("-j", arg, 1, 100000, &o->jobs);
	case OPT_TOTAL:
		return parse_int_opt("--total", arg, 1, 1000000, &o->total);
	case OPT_GPUS:
		o->gpus = arg;
		return 0;
	case OPT_SHARE:
		return parse_share(arg, &o->share);
	case OPT_MEM:
		if (parse_size(arg, &o->mem) < 0)
			return err_prefix("--mem");
		return 0;
	case OPT_SM:
		return parse_sm(arg, &o->sm_pct);
	case OPT_ENV:
		if (parse_env(arg) < 0)
			return -1;
		o->env = xrealloc(o->env, (size_t)(o->nenv + 1) * sizeof *o->env);
		o->env[o->nenv++] = (char *)arg;
		return o->nenv > 64 ? err_set(EXIT_USAGE, "--env: at most 64") : 0;
	case OPT_SHELL:
		o->shell = 1;
		return 0;
	case 'a':
		inputs_add_file(&o->in, arg);
		return 0;
	case OPT_JOBLOG:
		o->joblog_append = arg[0] == '+';
		o->joblog = arg + o->joblog_append;
		return *o->joblog ? 0 : err_set(EXIT_USAGE, "--joblog: empty file name");
	case OPT_RESUME:
		o->resume = 1;
		return 0;
	case OPT_RESUME_FAILED:
		o->resume_failed = 1;
		return 0;
	case OPT_RETRIES:
		return parse_int_opt("--retries", arg, 0, 1000000, &o->retries);
	case OPT_TIMEOUT:
		if (parse_duration(arg, &o->timeout) < 0)
			return err_prefix("--timeout");
		return o->timeout > 0 ? 0 : err_set(EXIT_USAGE, "--timeout '%s': must be above 0", arg);
	case OPT_HALT:
		return parse_halt(arg, o);
	case OPT_RESULTS:
		o->results = arg;
		return 0;
	case 'k':
		o->keep_order = 1;
		return 0;
	case OPT_BAR:
		o->bar = 1;
		return 0;
	case OPT_ETA:
		o->eta = 1;
		return 0;
	case OPT_JSON:
		o->json = 1;
		return 0;
	case OPT_SUMMARY:
		o->summary = 1;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = 1;
		return 0;
	case OPT_SHARD:
		return parse_shard(arg, o);
	default:
		return err_set(EXIT_USAGE, "unknown option (see gpupack run --help)");
	}
}

/* The command words, then ::: and :::: sources as GNU parallel reads them. */
static int
parse_rest(int argc, char **argv, struct farm_opts *o)
{
	int i = optind, kind = 0;
	struct source *s = NULL;

	o->cmd = argv + i;
	while (i < argc && strcmp(argv[i], ":::") != 0 && strcmp(argv[i], "::::") != 0)
		i++;
	o->ncmd = i - optind;
	if (o->ncmd == 0)
		return err_set(EXIT_USAGE, "no command given (see gpupack run --help)");
	for (; i < argc; i++) {
		if (strcmp(argv[i], ":::") == 0) {
			kind = 1;
			s = inputs_add_args(&o->in);
		} else if (strcmp(argv[i], "::::") == 0)
			kind = 2;
		else if (kind == 1)
			source_add_value(s, argv[i]);
		else
			inputs_add_file(&o->in, argv[i]);
	}
	return 0;
}

int
cmd_run(int argc, char **argv, struct ctx *c)
{
	struct farm_opts o;
	struct gpu_backend *b;
	int ch, rc;

	memset(&o, 0, sizeof o);
	o.share = SHARE_DEFAULT;
	inputs_init(&o.in);
	while ((ch = getopt_long(argc, argv, "+j:a:kh", long_opts, NULL)) != -1) {
		if (ch == 'h') {
			fputs(usage_text, stdout);
			rc = 0;
			goto out;
		}
		if (ch == '?' || ch == ':') {
			err_die(EXIT_USAGE, "bad option '%s' (see gpupack run --help)", argv[optind - 1]);
			rc = FARM_EXIT_ERROR;
			goto out;
		}
		if (one_opt(ch, optarg, &o) < 0) {
			err_report();
			rc = FARM_EXIT_ERROR;
			goto out;
		}
	}
	if (shard_joblog(&o) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		goto out;
	}
	if (o.shard_n > 1 && o.joblog && !o.joblog_owned && getenv("SLURM_PROCID"))
		warnx_("--shard: every shard writes the one joblog %s; give each its own with {shard} "
		    "in its name", o.joblog);
	farm_block_signals();
	if (parse_rest(argc, argv, &o) < 0 || ctx_backend(c, &b) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		goto out;
	}
	rc = farm_run(&o, b);
out:
	inputs_free(&o.in);
	free(o.env);
	free(o.joblog_owned);
	return rc;
}
