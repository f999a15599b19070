/*
 * run: the task farm's command line, in GNU parallel's conventions (its
 * options, with its meanings, and ::: :::+ :::: ::::+ inputs) plus the GPU
 * placement options. Parallel options that cannot mean anything on one
 * node's GPUs are refused with the alternative (refused[]). Everything else
 * is in src/farm/.
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
    "usage: gpupack run [options] [command [args...]] [::: values... | :::: files...]...\n"
    "\n"
    "Runs command once per input (lines of stdin when no ::: or :::: is given),\n"
    "packed onto GPU slots, the way GNU parallel runs it: the words form a shell\n"
    "command line ('zcat {} | wc -l' works), every inserted value shell-quoted.\n"
    "Several sources combine as a cross product; :::+ and ::::+ pair a source with\n"
    "the one before it. Without a command, the inputs are the commands.\n"
    "Replacement strings: {} {.} {/} {//} {/.} {#} {%} {N} {N.} {N/} {N//} {N/.} {-N}\n"
    "  {gpu} {slot} (and --header's {name})\n"
    "\n"
    "placement:\n"
    "  --gpus SEL            indices, GPU-/MIG- UUIDs (default: $CUDA_VISIBLE_DEVICES, Slurm's GPUs,\n"
    "                        else every device); --gpu is the same\n"
    "  --share MODE          exclusive | timeslice | mps (default mps where the daemon exists)\n"
    "  -j, --jobs N|auto[:N] tasks per device: auto (the default but under exclusive): the farm\n"
    "                        chooses per device while it runs, from the GPU's SM activity, the\n"
    "                        CPUs, memory and completions; auto:N at most N (default cap: 48 MPS\n"
    "                        clients, else 64); or fixed: N, 0 as many as fit, N% / +N / -N of\n"
    "                        the old defaults (exclusive 1, timeslice 2, mps 4)\n"
    "  --total N             tasks at once over all devices\n"
    "  --mem SIZE            GPU memory each task may allocate itself (its context's cost is\n"
    "                        added; packing, and under mps a client limit). SIZE: 512M, 10G;\n"
    "                        " SIZE_HELP "\n"
    "  --sm PCT              SM share per task under mps (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)\n"
    "  --env NAME=VALUE      add to each task's environment (--env NAME: passed, as always)\n"
    "  --shard K/N|slurm     run only inputs K, K+N, K+2N... (numbered from 0) of this run: one\n"
    "                        gpupack per node (srun), each with its share; slurm: K=$SLURM_PROCID,\n"
    "                        N=$SLURM_NTASKS\n"
    "inputs (as GNU parallel):\n"
    "  -a, --arg-file FILE   an input source (like :::: FILE)\n"
    "  -0, --null; -d, --delimiter D   values end with NUL, or D (default newline)\n"
    "  --colsep REGEX        split values into columns {1} {2} ...\n"
    "  --header :            the first value of each source names its columns: {name}\n"
    "  --link                pair all sources (shorter ones repeat) instead of crossing them\n"
    "  -n N, -N N            N inputs per task (-N: {1}..{N} and a word per value; -N0 none)\n"
    "  -X, -m, --xargs       as many inputs per task as a command line holds\n"
    "  -I STR                STR instead of {}\n"
    "  -r, -E STR, --trim lr|l|r, --arg-sep SEP, --arg-file-sep SEP, --shuf\n"
    "  --wd DIR, --nice N, --tmpdir DIR   where tasks run, their niceness, their $TMPDIR\n"
    "command lines:\n"
    "  -q, --quote           run the words as they are (quoted: no shell syntax)\n"
    "  --shell               accepted (lines always run as parallel runs them)\n"
    "  -v                    print each command line before its output; -t, --verbose: on stderr\n"
    "  --dry-run             print each command line instead of running it\n"
    "durability and faults:\n"
    "  --joblog [+]FILE      GNU parallel's joblog (+ appends); fsync'd at each task's end;\n"
    "                        {shard} in FILE becomes the shard number K\n"
    "  --resume              skip tasks the joblog has; --resume-failed reruns the failed ones;\n"
    "                        --retry-failed reruns the joblog's failed command lines\n"
    "  --retries N           try a failing task up to N times in all\n"
    "  --timeout DURATION|N% end a task after DURATION, or N% of the median runtime\n"
    "  --delay DURATION      wait this long between starting two tasks\n"
    "  --halt SPEC           never | now|soon,fail|success|done=N[%]\n"
    "output:\n"
    "  --results DIR         DIR/1/<value>/stdout, stderr, seq (as parallel) instead of printing\n"
    "  -k, --keep-order      print outputs in input order\n"
    "  --tag, --tagstring S  start each output line with the inputs (or S) and a tab\n"
    "  --line-buffer         print whole lines as they come; -u, --ungroup: as they come\n"
    "  --bar, --eta          progress on stderr; --summary: the final summary line\n"
    "  --json                the summary as one JSON object on stdout, after the outputs\n"
    "\n"
    "exit status (GNU parallel's): 0 all succeeded, 1-100 the number that failed, 101 more;\n"
    "255 any other error (bad usage, no device, a signal stopped the run: the message says\n"
    "which); --halt: as GNU parallel (see gpupack(1)).\n";

enum {
	OPT_TOTAL = 256, OPT_GPUS, OPT_SHARE, OPT_MEM, OPT_SM, OPT_ENV, OPT_SHELL, OPT_JOBLOG,
	OPT_RESUME, OPT_RESUME_FAILED, OPT_RETRY_FAILED, OPT_RETRIES, OPT_TIMEOUT, OPT_HALT,
	OPT_RESULTS, OPT_BAR, OPT_ETA, OPT_JSON, OPT_SUMMARY, OPT_DRY_RUN, OPT_SHARD, OPT_XARGS,
	OPT_TAG, OPT_TAGSTRING, OPT_LINE_BUFFER, OPT_GROUP, OPT_COLSEP, OPT_LINK, OPT_HEADER,
	OPT_TRIM, OPT_SHUF, OPT_DELAY, OPT_NOOP, OPT_ARG_SEP, OPT_ARG_FILE_SEP, OPT_REFUSED,
	OPT_WD, OPT_NICE, OPT_TMPDIR, OPT_NO_KEEP, OPT_SKIP_FIRST, OPT_SLOT_VAR, OPT_REPLACE_OPT,
	OPT_EOF_OPT,
};

static const struct option long_opts[] = {
	{"jobs", required_argument, NULL, 'j'},
	{"max-procs", required_argument, NULL, 'P'},
	{"maxprocs", required_argument, NULL, 'P'},
	{"total", required_argument, NULL, OPT_TOTAL},
	{"gpus", required_argument, NULL, OPT_GPUS},
	{"gpu", required_argument, NULL, OPT_GPUS},
	{"share", required_argument, NULL, OPT_SHARE},
	{"mem", required_argument, NULL, OPT_MEM},
	{"sm", required_argument, NULL, OPT_SM},
	{"env", required_argument, NULL, OPT_ENV},
	{"shell", no_argument, NULL, OPT_SHELL},
	{"arg-file", required_argument, NULL, 'a'},
	{"argfile", required_argument, NULL, 'a'},
	{"null", no_argument, NULL, '0'},
	{"delimiter", required_argument, NULL, 'd'},
	{"colsep", required_argument, NULL, OPT_COLSEP},
	{"col-sep", required_argument, NULL, OPT_COLSEP},
	{"header", required_argument, NULL, OPT_HEADER},
	{"link", no_argument, NULL, OPT_LINK},
	{"xapply", no_argument, NULL, OPT_LINK},
	{"max-args", required_argument, NULL, 'n'},
	{"maxargs", required_argument, NULL, 'n'},
	{"max-replace-args", required_argument, NULL, 'N'},
	{"maxreplaceargs", required_argument, NULL, 'N'},
	{"xargs", no_argument, NULL, OPT_XARGS},
	{"max-chars", required_argument, NULL, 's'},
	{"maxchars", required_argument, NULL, 's'},
	{"replace", required_argument, NULL, OPT_REPLACE_OPT},
	{"no-run-if-empty", no_argument, NULL, 'r'},
	{"norunifempty", no_argument, NULL, 'r'},
	{"eof", required_argument, NULL, OPT_EOF_OPT},
	{"skip-first-line", no_argument, NULL, OPT_SKIP_FIRST},
	{"skipfirstline", no_argument, NULL, OPT_SKIP_FIRST},
	{"process-slot-var", required_argument, NULL, OPT_SLOT_VAR},
	{"processslotvar", required_argument, NULL, OPT_SLOT_VAR},
	{"trim", required_argument, NULL, OPT_TRIM},
	{"arg-sep", required_argument, NULL, OPT_ARG_SEP},
	{"argsep", required_argument, NULL, OPT_ARG_SEP},
	{"arg-file-sep", required_argument, NULL, OPT_ARG_FILE_SEP},
	{"argfilesep", required_argument, NULL, OPT_ARG_FILE_SEP},
	{"shuf", no_argument, NULL, OPT_SHUF},
	{"quote", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 't'},
	{"joblog", required_argument, NULL, OPT_JOBLOG},
	{"jl", required_argument, NULL, OPT_JOBLOG},
	{"resume", no_argument, NULL, OPT_RESUME},
	{"resume-failed", no_argument, NULL, OPT_RESUME_FAILED},
	{"resumefailed", no_argument, NULL, OPT_RESUME_FAILED},
	{"retry-failed", no_argument, NULL, OPT_RETRY_FAILED},
	{"retryfailed", no_argument, NULL, OPT_RETRY_FAILED},
	{"retries", required_argument, NULL, OPT_RETRIES},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"delay", required_argument, NULL, OPT_DELAY},
	{"halt", required_argument, NULL, OPT_HALT},
	{"halt-on-error", required_argument, NULL, OPT_HALT},
	{"results", required_argument, NULL, OPT_RESULTS},
	{"result", required_argument, NULL, OPT_RESULTS},
	{"res", required_argument, NULL, OPT_RESULTS},
	{"keep-order", no_argument, NULL, 'k'},
	{"keeporder", no_argument, NULL, 'k'},
	{"no-keep-order", no_argument, NULL, OPT_NO_KEEP},
	{"nokeeporder", no_argument, NULL, OPT_NO_KEEP},
	{"nok", no_argument, NULL, OPT_NO_KEEP},
	{"no-k", no_argument, NULL, OPT_NO_KEEP},
	{"tag", no_argument, NULL, OPT_TAG},
	{"tagstring", required_argument, NULL, OPT_TAGSTRING},
	{"tag-string", required_argument, NULL, OPT_TAGSTRING},
	{"line-buffer", no_argument, NULL, OPT_LINE_BUFFER},
	{"line-buffered", no_argument, NULL, OPT_LINE_BUFFER},
	{"linebuffered", no_argument, NULL, OPT_LINE_BUFFER},
	{"linebuffer", no_argument, NULL, OPT_LINE_BUFFER},
	{"lb", no_argument, NULL, OPT_LINE_BUFFER},
	{"ungroup", no_argument, NULL, 'u'},
	{"group", no_argument, NULL, OPT_GROUP},
	{"bar", no_argument, NULL, OPT_BAR},
	{"eta", no_argument, NULL, OPT_ETA},
	{"progress", no_argument, NULL, OPT_ETA},
	{"json", no_argument, NULL, OPT_JSON},
	{"summary", no_argument, NULL, OPT_SUMMARY},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"dryrun", no_argument, NULL, OPT_DRY_RUN},
	{"dr", no_argument, NULL, OPT_DRY_RUN},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"wd", required_argument, NULL, OPT_WD},
	{"workdir", required_argument, NULL, OPT_WD},
	{"work-dir", required_argument, NULL, OPT_WD},
	{"nice", required_argument, NULL, OPT_NICE},
	{"tmpdir", required_argument, NULL, OPT_TMPDIR},
	{"tempdir", required_argument, NULL, OPT_TMPDIR},
	{"will-cite", no_argument, NULL, OPT_NOOP},
	{"willcite", no_argument, NULL, OPT_NOOP},
	{"no-notice", no_argument, NULL, OPT_NOOP},
	{"nonotice", no_argument, NULL, OPT_NOOP},
	{"nn", no_argument, NULL, OPT_NOOP},
	{"total-jobs", required_argument, NULL, OPT_NOOP},
	{"totaljobs", required_argument, NULL, OPT_NOOP},
	{"silent", no_argument, NULL, OPT_NOOP},
	{"plain", no_argument, NULL, OPT_NOOP},
	{"help", no_argument, NULL, 'h'},
	/* GNU parallel's, refused below with their alternative */
	{"pipe", no_argument, NULL, OPT_REFUSED},
	{"spreadstdin", no_argument, NULL, OPT_REFUSED},
	{"pipepart", no_argument, NULL, OPT_REFUSED},
	{"pipe-part", no_argument, NULL, OPT_REFUSED},
	{"block", required_argument, NULL, OPT_REFUSED},
	{"sshlogin", required_argument, NULL, 'S'},
	{"sshloginfile", required_argument, NULL, OPT_REFUSED},
	{"slf", required_argument, NULL, OPT_REFUSED},
	{"nonall", no_argument, NULL, OPT_REFUSED},
	{"onall", no_argument, NULL, OPT_REFUSED},
	{"transferfile", required_argument, NULL, OPT_REFUSED},
	{"return", required_argument, NULL, OPT_REFUSED},
	{"trc", required_argument, NULL, OPT_REFUSED},
	{"basefile", required_argument, NULL, OPT_REFUSED},
	{"semaphore", no_argument, NULL, OPT_REFUSED},
	{"fifo", no_argument, NULL, OPT_REFUSED},
	{"cat", no_argument, NULL, OPT_REFUSED},
	{"plus", no_argument, NULL, OPT_REFUSED},
	{"rpl", required_argument, NULL, OPT_REFUSED},
	{"tmux", no_argument, NULL, OPT_REFUSED},
	{"csv", no_argument, NULL, OPT_REFUSED},
	{"files", no_argument, NULL, OPT_REFUSED},
	{"compress", no_argument, NULL, OPT_REFUSED},
	{"load", required_argument, NULL, OPT_REFUSED},
	{"memfree", required_argument, NULL, OPT_REFUSED},
	{"noswap", no_argument, NULL, OPT_REFUSED},
	{"memsuspend", required_argument, NULL, OPT_REFUSED},
	{"sqlmaster", required_argument, NULL, OPT_REFUSED},
	{"sqlworker", required_argument, NULL, OPT_REFUSED},
	{"tee", no_argument, NULL, OPT_REFUSED},
	{"round-robin", no_argument, NULL, OPT_REFUSED},
	{"ctag", no_argument, NULL, OPT_REFUSED},
	{"color", no_argument, NULL, OPT_REFUSED},
	{NULL, 0, NULL, 0},
};

/* What to use instead of a GNU parallel option gpupack refuses. */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
	{"pipe", "gpupack gives each task its inputs as arguments, not stdin blocks (split the data "
	    "into files with split(1) and give them with ::: or ::::)"},
	{"spreadstdin", "gpupack gives each task its inputs as arguments, not stdin blocks (split the "
	    "data into files with split(1) and give them with ::: or ::::)"},
	{"pipepart", "see --pipe: split the file first (split -n l/N) and give the pieces with :::"},
	{"pipe-part", "see --pipe: split the file first (split -n l/N) and give the pieces with :::"},
	{"block", "it belongs to --pipe, which gpupack does not do (split the data into files)"},
	{"sshlogin", "across machines, run one gpupack per node with srun and --shard slurm (see "
	    "doc/slurm.md)"},
	{"sshloginfile", "across machines, run one gpupack per node with srun and --shard slurm (see "
	    "doc/slurm.md)"},
	{"slf", "across machines, run one gpupack per node with srun and --shard slurm (see "
	    "doc/slurm.md)"},
	{"nonall", "across machines, use srun (see doc/slurm.md)"},
	{"onall", "across machines, use srun (see doc/slurm.md)"},
	{"transferfile", "gpupack runs on this node only: files stay where they are (see doc/slurm.md)"},
	{"return", "gpupack runs on this node only: files stay where they are (see doc/slurm.md)"},
	{"trc", "gpupack runs on this node only: files stay where they are (see doc/slurm.md)"},
	{"basefile", "gpupack runs on this node only: files stay where they are (see doc/slurm.md)"},
	{"semaphore", "use GNU parallel's sem, or one gpupack run with all the commands as inputs"},
	{"fifo", "it belongs to --pipe, which gpupack does not do"},
	{"cat", "it belongs to --pipe, which gpupack does not do"},
	{"plus", "its replacement strings are perl; use a shell command line ('f=\"{}\"; echo "
	    "${f%%.*}')"},
	{"rpl", "replacement strings of your own are perl; use a shell command line"},
	{"tmux", "use --line-buffer or --results to watch output"},
	{"csv", "use --colsep ','"},
	{"files", "use --results DIR"},
	{"compress", "use --results DIR and compress it afterwards"},
	{"load", "GPU slots, not the CPU load, decide when tasks start (-j, --mem)"},
	{"memfree", "GPU memory is packed with --mem"},
	{"noswap", "GPU slots, not swapping, decide when tasks start (-j, --mem)"},
	{"memsuspend", "GPU memory is packed with --mem"},
	{"sqlmaster", "use --joblog and --results"},
	{"sqlworker", "use --joblog and --results"},
	{"tee", "it belongs to --pipe, which gpupack does not do"},
	{"round-robin", "it belongs to --pipe, which gpupack does not do"},
	{"ctag", "use --tag"},
	{"color", "use --tag"},
};

static int
refuse(const char *name)
{
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if (strcmp(name, refused[i].name) == 0)
			return err_set(EXIT_USAGE, "GNU parallel's --%s is not supported: %s", name,
			    refused[i].why);
	return err_set(EXIT_USAGE, "GNU parallel's --%s is not supported", name);
}

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

/* --env NAME=VALUE adds a variable; --env NAME (parallel's) passes one, as every variable is. */
static int
parse_env(const char *v, int *add)
{
	const char *eq = strchr(v, '='), *end = eq ? eq : v + strlen(v);

	*add = eq != NULL;
	if (end == v)
		return err_set(EXIT_USAGE, "--env '%s': want NAME=VALUE or NAME", v);
	for (const char *p = v; p < end; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (p > v && *p >= '0' && *p <= '9')))
			return err_set(EXIT_USAGE, "--env '%s': '%.*s' is not a variable name", v,
			    (int)(end - v), v);
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
parse_trim(const char *v, int *out)
{
	static const struct { const char *s; int mode; } t[] = {
		{"n", TRIM_NONE}, {"l", TRIM_LEFT}, {"r", TRIM_RIGHT}, {"lr", TRIM_BOTH}, {"rl", TRIM_BOTH},
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(v, t[i].s) == 0) {
			*out = t[i].mode;
			return 0;
		}
	return err_set(EXIT_USAGE, "--trim '%s': want n, l, r or lr", v);
}

/* Options that GNU parallel spells and gpupack reads the same way. */
struct run_args {
	struct farm_opts *o;
	const char *arg_sep, *arg_file_sep;
	char *delim;             /* -d, unescaped (owned) */
	int n_given, N_given, X, m, xargs;
	long max_args;
	char **files;            /* -a FILE, in order */
	int nfiles;
};

static int
parse_args_count(const char *name, const char *v, struct run_args *a)
{
	long n;

	if (parse_long(v, 0, 1000000, &n) < 0)
		return err_prefix("%s", name);
	a->max_args = n;
	return 0;
}

static int
parallel_opt(int ch, const char *arg, struct run_args *a)
{
	struct farm_opts *o = a->o;
	struct input_opts *io = &o->ts.in.o;

	switch (ch) {
	case 'a':
		a->files = xrealloc(a->files, (size_t)(a->nfiles + 1) * sizeof *a->files);
		a->files[a->nfiles++] = (char *)arg;
		return 0;
	case '0':
		io->delim = "";
		io->delim_len = 1;
		return 0;
	case 'd':
		free(a->delim);
		a->delim = input_unescape_delim(arg, &io->delim_len);
		if (io->delim_len == 0)
			return err_set(EXIT_USAGE, "-d: empty delimiter");
		io->delim = a->delim;
		return 0;
	case OPT_COLSEP:
		io->colsep = arg;
		return 0;
	case OPT_HEADER:
		io->header = 1;
		io->header_names_files = strcmp(arg, "0") == 0;
		return 0;
	case OPT_LINK:
		io->link = 1;
		return 0;
	case 'n':
		a->n_given = 1;
		return parse_args_count("-n", arg, a);
	case 'N':
		a->N_given = 1;
		return parse_args_count("-N", arg, a);
	case 'X':
		a->X = 1;
		return 0;
	case 'm':
		a->m = 1;
		return 0;
	case OPT_XARGS:
		a->xargs = 1;
		return 0;
	case 's':
		return parse_int_opt("-s", arg, 1, CMDLINE_MAX, &o->ts.max_len);
	case 'I':
		if (!*arg)
			return err_set(EXIT_USAGE, "-I: empty replacement string");
		o->replace = arg;
		return 0;
	case 'r':
		io->skip_empty = 1;
		return 0;
	case 'E':
		io->eof = *arg ? arg : NULL;   /* parallel: -E '' is no end-of-input string */
		return 0;
	case OPT_EOF_OPT:
		io->eof = *arg ? arg : NULL;
		return 0;
	case OPT_REPLACE_OPT:
		if (!*arg)
			return err_set(EXIT_USAGE, "--replace: empty replacement string");
		o->replace = arg;
		return 0;
	case OPT_SKIP_FIRST:
		io->skip_first = 1;
		return 0;
	case OPT_SLOT_VAR:
		for (const char *p = arg; *p; p++)
			if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			    (p > arg && *p >= '0' && *p <= '9')))
				return err_set(EXIT_USAGE, "--process-slot-var '%s': not a variable name", arg);
		if (!*arg)
			return err_set(EXIT_USAGE, "--process-slot-var: empty name");
		o->slot_var = arg;
		return 0;
	case OPT_NO_KEEP:
		o->keep_order = 0;
		return 0;
	case OPT_WD:
		if (strcmp(arg, "...") == 0)
			return err_set(EXIT_USAGE, "--wd ...: a temporary directory per task is not supported "
			    "(give a directory)");
		o->workdir = arg;
		return 0;
	case OPT_NICE:
		return parse_int_opt("--nice", arg, -20, 19, &o->nice);
	case OPT_TMPDIR:
		/* parallel: the same as setting $TMPDIR (for the tasks too) */
		if (setenv("TMPDIR", arg, 1) < 0)
			return err_sys(EXIT_INTERNAL, "setenv");
		return 0;
	case OPT_TRIM:
		return parse_trim(arg, &o->trim);
	case OPT_ARG_SEP:
		a->arg_sep = arg;
		return 0;
	case OPT_ARG_FILE_SEP:
		a->arg_file_sep = arg;
		return 0;
	case OPT_SHUF:
		o->ts.shuffle = 1;
		return 0;
	case 'q':
		o->quote_all = 1;
		return 0;
	case 'v':
		o->verbose = 1;
		return 0;
	case 't':
		o->print_commands = 1;
		return 0;
	case OPT_TAG:
		o->tag = 1;
		return 0;
	case OPT_TAGSTRING:
		o->tag = 1;
		o->tagstring = arg;
		return 0;
	case OPT_LINE_BUFFER:
		o->line_buffer = 1;
		return 0;
	case 'u':
		o->ungroup = 1;
		return 0;
	case 'C':
		io->colsep = arg;
		return 0;
	case OPT_GROUP:
	case OPT_NOOP:
		return 0;
	case OPT_DELAY:
		if (str_ends(arg, "auto"))
			return err_set(EXIT_USAGE, "--delay '%s': 'auto' is not supported (give a duration)", arg);
		if (parse_duration(arg, &o->delay) < 0)
			return err_prefix("--delay");
		return 0;
	case OPT_RETRY_FAILED:
		o->retry_failed = 1;
		return 0;
	case 'S':
		return refuse("sshlogin");
	default:
		return 1;   /* not one of these */
	}
}

static int
one_opt(int ch, const char *arg, struct run_args *a)
{
	struct farm_opts *o = a->o;
	int rc = parallel_opt(ch, arg, a), add;

	if (rc <= 0)
		return rc;
	switch (ch) {
	case 'j':
	case 'P':
		return parse_jobs(arg, o);
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
		if (strcmp(arg, "_") == 0)
			return err_set(EXIT_USAGE, "--env _ copies the shell's own variables through "
			    "env_parallel, which gpupack does not have (name each variable)");
		if (parse_env(arg, &add) < 0)
			return -1;
		if (!add)
			return 0;
		o->env = xrealloc(o->env, (size_t)(o->nenv + 1) * sizeof *o->env);
		o->env[o->nenv++] = (char *)arg;
		return o->nenv > 64 ? err_set(EXIT_USAGE, "--env: at most 64") : 0;
	case OPT_SHELL:
		o->shell = 1;
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
		if (strcmp(arg, "0") == 0)
			return err_set(EXIT_USAGE, "--retries 0: GNU parallel retries a failing task forever "
			    "then; give the number of tries (--retries 3: 3 in all)");
		return parse_int_opt("--retries", arg, 1, 1000000, &o->retries);
	case OPT_TIMEOUT:
		return parse_timeout(arg, o);
	case OPT_HALT:
		return parse_halt(arg, o);
	case OPT_RESULTS:
		o->results = arg;
		return *arg ? 0 : err_set(EXIT_USAGE, "--results: empty directory name");
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
		return err_set(EXIT_INTERNAL, "option %d not handled", ch);
	}
}

/* -n -N -X -m --xargs into how records become tasks (GNU parallel's rules). */
static void
grouping(struct run_args *a)
{
	struct task_src *ts = &a->o->ts;

	ts->fill = a->X || a->m || a->xargs;
	ts->spread = a->X || a->m;
	a->o->context = a->X || a->N_given;
	if (a->n_given || a->N_given) {
		ts->max_args = (int)a->max_args;
		if (a->max_args == 0) {
			/* -N0 / -n0: one record per task, nothing inserted */
			ts->noarg = 1;
			ts->max_args = 1;
		}
	} else {
		ts->max_args = ts->fill ? 0 : 1;
	}
}

static int
is_sep(const char *w, const char *sep)
{
	size_t n = strlen(sep);

	return strncmp(w, sep, n) == 0 && (w[n] == '\0' || (w[n] == '+' && w[n + 1] == '\0'));
}

/*
 * The command words, then ::: :::+ :::: ::::+ sources as GNU parallel
 * reads them (-a files first). A "+" pairs a source with the one before it.
 */
static void
parse_rest(int argc, char **argv, int first, struct run_args *a)
{
	struct farm_opts *o = a->o;
	const char *asep = a->arg_sep ? a->arg_sep : ":::";
	const char *fsep = a->arg_file_sep ? a->arg_file_sep : "::::";
	int i = first, kind = 0, linked = 0;
	struct source *s = NULL;

	for (int k = 0; k < a->nfiles; k++)
		inputs_add_file(&o->ts.in, a->files[k], 0);
	o->cmd = argv + i;
	while (i < argc && !is_sep(argv[i], asep) && !is_sep(argv[i], fsep))
		i++;
	o->ncmd = i - first;
	for (; i < argc; i++) {
		if (is_sep(argv[i], fsep)) {
			kind = 2;
			linked = argv[i][strlen(fsep)] == '+';
		} else if (is_sep(argv[i], asep)) {
			kind = 1;
			s = inputs_add_args(&o->ts.in, argv[i][strlen(asep)] == '+');
		} else if (kind == 1) {
			source_add_value(s, argv[i]);
		} else {
			/* ::::+ f1 f2: every file of the group is paired with the one before it */
			inputs_add_file(&o->ts.in, argv[i], linked);
		}
	}
}

static void
free_run(struct farm_opts *o, struct run_args *a)
{
	tasks_free(&o->ts);
	free(o->env);
	free(o->joblog_owned);
	free(a->delim);
	free(a->files);
}

int
cmd_run(int argc, char **argv, struct ctx *c)
{
	static const char shortopts[] = "+:j:P:a:kn:N:XmqvtI:0d:s:urE:S:C:h";
	struct farm_opts o;
	struct run_args a;
	struct gpu_backend *b;
	int ch, rc, word;

	memset(&o, 0, sizeof o);
	memset(&a, 0, sizeof a);
	a.o = &o;
	o.share = SHARE_DEFAULT;
	tasks_init(&o.ts);
	while ((ch = opt_next(argc, argv, shortopts, long_opts, &word)) != -1) {
		if (ch == 'h') {
			fputs(usage_text, stdout);
			rc = 0;
			goto out;
		}
		if (ch == '?' || ch == ':') {
			opt_error("run", argc, argv, word, ch, long_opts);
			err_report();
			rc = FARM_EXIT_ERROR;
			goto out;
		}
		if (ch == OPT_REFUSED) {
			const char *name = argv[word] + 2;
			char buf[64];

			snprintf(buf, sizeof buf, "%.*s", (int)strcspn(name, "="), name);
			for (const struct option *lo = long_opts; lo->name; lo++)
				if (lo->val == OPT_REFUSED && str_starts(lo->name, buf)) {
					snprintf(buf, sizeof buf, "%s", lo->name);
					break;
				}
			refuse(buf);
			err_report();
			rc = FARM_EXIT_ERROR;
			goto out;
		}
		if (one_opt(ch, optarg, &a) < 0) {
			err_report();
			rc = FARM_EXIT_ERROR;
			goto out;
		}
	}
	grouping(&a);
	if (shard_joblog(&o) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		goto out;
	}
	if (o.shard_n > 1 && o.joblog && !o.joblog_owned && getenv("SLURM_PROCID"))
		warnx_("--shard: every shard writes the one joblog %s; give each its own with {shard} "
		    "in its name", o.joblog);
	farm_block_signals();
	parse_rest(argc, argv, optind, &a);
	if (ctx_backend(c, &b) < 0) {
		err_report();
		rc = FARM_EXIT_ERROR;
		goto out;
	}
	rc = farm_run(&o, b);
out:
	free_run(&o, &a);
	return rc;
}
