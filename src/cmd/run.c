/*
 * run: the task farm's command line, in GNU parallel's conventions (its
 * options, with its meanings, and ::: :::+ :::: ::::+ inputs) plus the GPU
 * placement options. Every option is declared once, in run_opts[] below:
 * the parser, --help and the refusals (a parallel option that cannot mean
 * anything on one node's GPUs names the alternative) all come from it.
 * Options are read as parallel reads them: from its profiles
 * (~/.parallel/config, -J NAME), then $PARALLEL, then the command line
 * (cmd/run_rc.c). Everything else is in src/farm/.
 */
#include "cmd/cmd.h"
#include "cmd/opttab.h"
#include "cmd/run_rc.h"
#include "farm/farm.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The version of GNU parallel whose command lines, options and exit statuses gpupack run follows. */
#define PARALLEL_VERSION 20221122L

enum {
	SECTION = 0,
	/* placement */
	O_GPUS = 1, O_SHARE, O_JOBS, O_TOTAL, O_MEM, O_SM, O_ENV, O_SHARD,
	/* inputs */
	O_ARGFILE, O_NULL, O_DELIM, O_COLSEP, O_HEADER, O_LINK, O_MAXARGS, O_MAXREPL, O_L, O_MAXLINES,
	O_X, O_M, O_XARGS, O_MAXCHARS, O_I, O_REPLACE, O_ER, O_BNR, O_DNR, O_BNER, O_SEQR, O_SLOTR,
	O_PLUS, O_RPL, O_PARENS, O_FILTER, O_NORUN, O_E, O_EOF, O_TRIM, O_ARGSEP, O_ARGFILESEP, O_SKIPFIRST, O_SHUF, O_TOTALJOBS,
	/* command lines */
	O_QUOTE, O_SHELL, O_V, O_T, O_DRYRUN, O_WD, O_NICE, O_TMPDIR, O_SLOTVAR, O_SHELLQUOTE,
	/* durability and faults */
	O_JOBLOG, O_RESUME, O_RESUMEFAILED, O_RETRYFAILED, O_RETRIES, O_TIMEOUT, O_DELAY, O_HALT,
	/* output */
	O_RESULTS, O_K, O_NOK, O_TAG, O_TAGSTRING, O_LB, O_U, O_GROUP, O_BAR, O_ETA, O_PROGRESS, O_SUMMARY,
	O_JSON,
	/* profiles and information */
	O_PROFILE, O_PLAIN, O_VERSION, O_HELP, O_MINVERSION, O_NCPUS, O_NCORES, O_NTHREADS, O_NSOCKETS,
	O_MAXLINELEN, O_NOOP, O_SSHLOGIN,
	/* --pipe */
	O_LOAD, O_NOSWAP, O_MEMFREE, O_FILES, O_PIPE, O_PIPEPART, O_BLOCK, O_RECSTART, O_RECEND, O_REGEXP, O_RRS, O_TEE, O_CAT,
	O_FIFO, O_CSV, O_ROUNDROBIN, O_BIN, O_GROUPBY, O_CTAG, O_CTAGSTRING, O_COLOR,
	O_REFUSED,
};

#define N OPTTAB_NONE
#define R OPTTAB_REQ
#define OPT OPTTAB_OPT

/* What to use instead of GNU parallel's options that gpupack refuses. */
#define REMOTE_WHY "across machines, run one gpupack per node under srun with one --joblog on a " \
	"shared filesystem: one farm over every node (doc/slurm.md, \"One farm over every node\"); " \
	"or split the inputs with --shard"
#define HOST_WHY "GPU slots, not the host's load, decide when tasks start (-j, --mem, --total)"
#define SEM_WHY "use GNU parallel's sem, or give every command to one gpupack run as its inputs"

static const struct optdef run_opts[] = {
	{NULL, NULL, N, SECTION, NULL, "placement on GPUs (gpupack's own):", NULL},
	{"gpus|gpu", NULL, R, O_GPUS, "SEL", "indices, GPU-/MIG- UUIDs (default: $CUDA_VISIBLE_DEVICES,\n"
	    "Slurm's GPUs, else every device)", NULL},
	{"share", NULL, R, O_SHARE, "MODE", "exclusive | timeslice | mps (default: mps where\n"
	    "nvidia-cuda-mps-control is found, else timeslice)", NULL},
	{"jobs|max-procs|maxprocs", "jP", R, O_JOBS, "N", "tasks per device: auto (the default but\n"
	    "under exclusive: the farm chooses while it runs),\n"
	    "auto:N (at most N), or fixed: N; 0 as many as fit;\n"
	    "N%, +N, -N of the share mode's slots per device\n"
	    "(exclusive 1, timeslice 2, mps 4)", NULL},
	{"total", NULL, R, O_TOTAL, "N", "tasks at once over all devices", NULL},
	{"mem", NULL, R, O_MEM, "SIZE", "GPU memory each task may allocate itself (512M,\n"
	    "10G); packing adds its context's cost", NULL},
	{"sm", NULL, R, O_SM, "PCT", "SM share per task under mps", NULL},
	{"env", NULL, R, O_ENV, "NAME=VALUE", "add to each task's environment (--env NAME: passed)", NULL},
	{"shard", NULL, R, O_SHARD, "K/N|slurm", "run only inputs K, K+N, ... (from 0) of this run;\n"
	    "slurm: K=$SLURM_PROCID, N=$SLURM_NTASKS", NULL},

	{NULL, NULL, N, SECTION, NULL, "inputs (as GNU parallel):", NULL},
	{"arg-file|argfile", "a", R, O_ARGFILE, "FILE", "an input source (like :::: FILE)", NULL},
	{"null", "0", N, O_NULL, NULL, "values end with NUL", NULL},
	{"delimiter", "d", R, O_DELIM, "D", "values end with D (\\n \\t \\0 \\NNN escapes)", NULL},
	{"colsep|col-sep", "C", R, O_COLSEP, "REGEX", "split values into columns {1} {2} ... (trimmed)", NULL},
	{"csv", NULL, N, O_CSV, NULL, "values are CSV records: --colsep (else ,) quoted as CSV", NULL},
	{"header", NULL, R, O_HEADER, ":", "the first value of each source names its columns", NULL},
	{"link|xapply", NULL, N, O_LINK, NULL, "pair the sources (shorter ones repeat), not cross", NULL},
	{"max-args|maxargs", "n", R, O_MAXARGS, "N", "up to N inputs per task", NULL},
	{"max-replace-args|maxreplaceargs", "N", R, O_MAXREPL, "N", "N inputs per task as {1}..{N}", NULL},
	{NULL, "L", R, O_L, "N", "N lines per task (a line ending in a blank goes on)", NULL},
	{"max-lines|maxlines", "l", OPT, O_MAXLINES, "N", "the same as -L (-l alone: -L 1)", NULL},
	{NULL, "X", N, O_X, NULL, "as many inputs as a line holds, context repeated", NULL},
	{NULL, "m", N, O_M, NULL, "as many inputs as a line holds", NULL},
	{"xargs", NULL, N, O_XARGS, NULL, "the same, without spreading the last ones", NULL},
	{"max-chars|maxchars", "s", R, O_MAXCHARS, "N", "command lines of at most N bytes", NULL},
	{NULL, "I", R, O_I, "STR", "STR instead of {}", NULL},
	{"replace", "i", OPT, O_REPLACE, "STR", "the same (-i alone: {})", NULL},
	{"extensionreplace|er", NULL, R, O_ER, "STR", "STR instead of {.}", NULL},
	{"basenamereplace|bnr", NULL, R, O_BNR, "STR", "STR instead of {/}", NULL},
	{"dirnamereplace|dnr", NULL, R, O_DNR, "STR", "STR instead of {//}", NULL},
	{"basenameextensionreplace|bner", NULL, R, O_BNER, "STR", "STR instead of {/.}", NULL},
	{"seqreplace", NULL, R, O_SEQR, "STR", "STR instead of {#}", NULL},
	{"slotreplace", NULL, R, O_SLOTR, "STR", "STR instead of {%}", NULL},
	{"plus", NULL, N, O_PLUS, NULL, "parallel's --plus replacement strings ({..} {##}\n"
	    "{%suffix} ...; perl's, run by perl)", NULL},
	{"rpl", NULL, R, O_RPL, "'TAG PERL'", "TAG stands for the perl expression PERL", NULL},
	{"parens", NULL, R, O_PARENS, "LR", "perl expressions written L ... R, not {= ... =}", NULL},
	{"no-run-if-empty|norunifempty", "r", N, O_NORUN, NULL, "skip values of white space only", NULL},
	{NULL, "E", R, O_E, "STR", "a value STR ends the input", NULL},
	{"eof", "e", OPT, O_EOF, "STR", "the same", NULL},
	{"trim", NULL, R, O_TRIM, "lr|l|r|n", "trim white space from values", NULL},
	{"arg-sep|argsep", NULL, R, O_ARGSEP, "SEP", "SEP instead of :::", NULL},
	{"arg-file-sep|argfilesep", NULL, R, O_ARGFILESEP, "SEP", "SEP instead of ::::", NULL},
	{"filter", NULL, R, O_FILTER, "PERL", "run a task only where PERL (its values in it) is true", NULL},
	{"skip-first-line|skipfirstline", NULL, N, O_SKIPFIRST, NULL, "drop the first value", NULL},
	{"shuf", NULL, N, O_SHUF, NULL, "run the tasks in a random order", NULL},
	{"total-jobs|totaljobs", NULL, R, O_TOTALJOBS, "N", "the task count for --bar and --eta", NULL},

	{NULL, NULL, N, SECTION, NULL, "command lines:", NULL},
	{"quote", "q", N, O_QUOTE, NULL, "run the words as they are (no shell syntax)", NULL},
	{"shell", NULL, N, O_SHELL, NULL, "accepted (lines always run as parallel runs them)", NULL},
	{NULL, "v", N, O_V, NULL, "print each command line before its output", NULL},
	{"verbose", "t", N, O_T, NULL, "print each command line on stderr as it starts", NULL},
	{"dry-run|dryrun|dr", NULL, N, O_DRYRUN, NULL, "print each command line instead of running it", NULL},
	{"wd|workdir|work-dir", NULL, R, O_WD, "DIR", "run the tasks in DIR", NULL},
	{"nice", NULL, R, O_NICE, "N", "run the tasks at niceness N", NULL},
	{"tmpdir|tempdir", NULL, R, O_TMPDIR, "DIR", "$TMPDIR of gpupack and the tasks", NULL},
	{"process-slot-var|processslotvar", NULL, R, O_SLOTVAR, "NAME", "set NAME to the slot number - 1", NULL},
	{"shellquote|shell-quote|shell_quote", NULL, N, O_SHELLQUOTE, NULL, "print each input shell-quoted, "
	    "run nothing", NULL},

	{NULL, NULL, N, SECTION, NULL, "durability and faults:", NULL},
	{"joblog|jl", NULL, R, O_JOBLOG, "[+]FILE", "GNU parallel's joblog (+ appends; - stdout);\n"
	    "{shard} in FILE becomes the shard number", NULL},
	{"resume", NULL, N, O_RESUME, NULL, "skip the tasks the joblog (or --results DIR) has", NULL},
	{"resume-failed|resumefailed", NULL, N, O_RESUMEFAILED, NULL, "and run the failed ones again", NULL},
	{"retry-failed|retryfailed", NULL, N, O_RETRYFAILED, NULL, "run the joblog's failed lines again", NULL},
	{"retries", NULL, R, O_RETRIES, "N", "try a failing task up to N times in all", NULL},
	{"timeout", NULL, R, O_TIMEOUT, "DURATION", "end a task after DURATION, or N% of the median", NULL},
	{"load", NULL, R, O_LOAD, "N[%]", "start tasks only while fewer processes run", NULL},
	{"noswap", NULL, N, O_NOSWAP, NULL, "start tasks only while the host does not swap", NULL},
	{"memfree", NULL, R, O_MEMFREE, "SIZE", "start tasks only while SIZE of memory is free", NULL},
	{"delay", NULL, R, O_DELAY, "DURATION", "wait this long between starting two tasks", NULL},
	{"halt|halt-on-error|haltonerror", NULL, R, O_HALT, "SPEC", "never | now|soon,fail|success|done=N[%]", NULL},

	{NULL, NULL, N, SECTION, NULL, "output:", NULL},
	{"results|result|res", NULL, R, O_RESULTS, "DIR", "DIR/1/<value>/stdout, stderr, seq; a name ending\n"
	    "in .csv, .tsv or .json: one such file", NULL},
	{"keep-order|keeporder", "k", N, O_K, NULL, "print outputs in input order", NULL},
	{"no-keep-order|nokeeporder|nok|no-k", NULL, N, O_NOK, NULL, "undo -k", NULL},
	{"files|output-as-files|outputasfiles", NULL, N, O_FILES, NULL, "each task's stdout in a file\n"
	    "$TMPDIR/parXXXXXX.par, its name printed", NULL},
	{"tag", NULL, N, O_TAG, NULL, "start each output line with the inputs and a tab", NULL},
	{"tagstring|tag-string", NULL, R, O_TAGSTRING, "STR", "start each output line with STR and a tab", NULL},
	{"ctag", NULL, N, O_CTAG, NULL, "--tag, each task's lines in a colour of its own", NULL},
	{"ctagstring|ctag-string", NULL, R, O_CTAGSTRING, "STR", "--tagstring STR, in colour", NULL},
	{"color|colour", NULL, N, O_COLOR, NULL, "each task's output lines in a colour of its own", NULL},
	{"line-buffer|line-buffered|linebuffer|linebuffered|lb", NULL, N, O_LB, NULL, "print whole lines "
	    "as they come", NULL},
	{"ungroup", "u", N, O_U, NULL, "print output as it comes", NULL},
	{"group", NULL, N, O_GROUP, NULL, "each task's output whole (the default)", NULL},
	{"bar", NULL, N, O_BAR, NULL, "a progress bar on stderr: percentage, ETA, devices", NULL},
	{"eta", NULL, N, O_ETA, NULL, "parallel's progress line on stderr, with the ETA", NULL},
	{"progress", NULL, N, O_PROGRESS, NULL, "the same, without the ETA", NULL},
	{"summary", NULL, N, O_SUMMARY, NULL, "a summary line on stderr at the end", NULL},
	{"json", NULL, N, O_JSON, NULL, "the summary as one JSON object, alone on stdout:\n"
	    "the tasks' stdout goes to stderr", NULL},

	{NULL, NULL, N, SECTION, NULL, "stdin cut into blocks (as GNU parallel's --pipe):", NULL},
	{"pipe|spreadstdin", NULL, N, O_PIPE, NULL, "each task gets a block of stdin on its stdin", NULL},
	{"pipe-part|pipepart", NULL, N, O_PIPEPART, NULL, "the same with the parts of -a FILE", NULL},
	{"block-size|blocksize|block", NULL, R, O_BLOCK, "SIZE", "blocks of about SIZE (1M; k m: 1000s)", NULL},
	{"recstart", NULL, R, O_RECSTART, "STR", "records start with STR", NULL},
	{"recend", NULL, R, O_RECEND, "STR", "records end with STR (default \\n)", NULL},
	{"regexp|regex", NULL, N, O_REGEXP, NULL, "--recstart and --recend are perl regexes", NULL},
	{"remove-rec-sep|removerecsep|rrs", NULL, N, O_RRS, NULL, "remove the record separators", NULL},
	{"tee", NULL, N, O_TEE, NULL, "every task gets all of stdin", NULL},
	{"cat", NULL, N, O_CAT, NULL, "the block in a file, {}, not on stdin (implies --pipe)", NULL},
	{"fifo", NULL, N, O_FIFO, NULL, NULL, NULL},
	{"round-robin|roundrobin|round", NULL, N, O_ROUNDROBIN, NULL, "-j tasks, started once, get the blocks in turn", NULL},
	{"group-by|groupby", NULL, R, O_GROUPBY, "COL", "a record is a run of lines of one value: COL (a\n"
	    "number or a --header name) and/or a perl expression", NULL},
	{"bin", NULL, R, O_BIN, "COL", "-j tasks, started once: each line to the slot its\n"
	    "value names (value % slots; 0: the last)", NULL},

	{NULL, NULL, N, SECTION, NULL, "profiles and information:", NULL},
	{"profile", "J", R, O_PROFILE, "NAME", "options from ~/.parallel/NAME (instead of config)", NULL},
	{"plain", NULL, N, O_PLAIN, NULL, "ignore --profile, $PARALLEL and ~/.parallel/config", NULL},
	{"version", "V", N, O_VERSION, NULL, "print the version", NULL},
	{"help", "h", N, O_HELP, NULL, "this text", NULL},
	{"minversion|min-version", NULL, R, O_MINVERSION, "V", "exit 255 unless parallel's version here is V+",
	    NULL},
	{"number-of-cpus|numberofcpus", NULL, N, O_NCPUS, NULL, NULL, NULL},
	{"number-of-cores|numberofcores", NULL, N, O_NCORES, NULL, NULL, NULL},
	{"number-of-threads|numberofthreads", NULL, N, O_NTHREADS, NULL, NULL, NULL},
	{"number-of-sockets|numberofsockets", NULL, N, O_NSOCKETS, NULL, NULL, NULL},
	{"max-line-length-allowed|maxlinelengthallowed", NULL, N, O_MAXLINELEN, NULL, NULL, NULL},
	{"will-cite|willcite|no-notice|nonotice|nn", NULL, N, O_NOOP, NULL, NULL, NULL},
	{"silent", NULL, N, O_NOOP, NULL, NULL, NULL},
	/* parallel compresses only its temporary files with these: the output is the same */
	{"compress", NULL, N, O_NOOP, NULL, NULL, NULL},
	{"compress-program|compressprogram|use-compress-program|usecompressprogram", NULL, R, O_NOOP,
	    "PROG", NULL, NULL},
	{"decompress-program|decompressprogram|use-decompress-program|usedecompressprogram", NULL, R,
	    O_NOOP, "PROG", NULL, NULL},
	{"gnu", NULL, N, O_NOOP, NULL, NULL, NULL},
	{"exit", "x", N, O_NOOP, NULL, NULL, NULL},
	{"use-cpus-instead-of-cores|usecpusinsteadofcores", NULL, N, O_NOOP, NULL, NULL, NULL},
	{"use-cores-instead-of-threads|usecoresinsteadofthreads", NULL, N, O_NOOP, NULL, NULL, NULL},
	{"use-sockets-instead-of-threads|usesocketsinsteadofthreads", NULL, N, O_NOOP, NULL, NULL, NULL},

	/* GNU parallel's, refused with what to use instead */
	{"block-timeout|blocktimeout|bt", NULL, R, O_REFUSED, NULL, NULL, "without it a block is what "
	    "was read when stdin ended or --block was reached"},
	{"sshlogin", "S", R, O_SSHLOGIN, NULL, NULL, REMOTE_WHY},
	{"sshloginfile|slf", NULL, R, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"nonall", NULL, N, O_REFUSED, NULL, NULL, "across machines, use srun (doc/slurm.md)"},
	{"onall", NULL, N, O_REFUSED, NULL, NULL, "across machines, use srun (doc/slurm.md)"},
	{"transfer-file|transferfile|transfer-files|transferfiles|tf", NULL, R, O_REFUSED, NULL, NULL,
	    "gpupack runs tasks where it runs: files stay where they are (" REMOTE_WHY ")"},
	{"transfer", NULL, N, O_REFUSED, NULL, NULL, "gpupack runs tasks where it runs: files stay where they "
	    "are (" REMOTE_WHY ")"},
	{"return", NULL, R, O_REFUSED, NULL, NULL, "gpupack runs tasks where it runs: files stay where they "
	    "are (" REMOTE_WHY ")"},
	{"trc", NULL, R, O_REFUSED, NULL, NULL, "gpupack runs tasks where it runs: files stay where they are ("
	    REMOTE_WHY ")"},
	{"cleanup", NULL, N, O_REFUSED, NULL, NULL, "gpupack runs tasks where it runs: files stay where they "
	    "are (" REMOTE_WHY ")"},
	{"basefile|bf", NULL, R, O_REFUSED, NULL, NULL, "gpupack runs tasks where it runs: files stay where "
	    "they are (" REMOTE_WHY ")"},
	{"controlmaster", "M", N, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"ssh", NULL, R, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"ssh-delay|sshdelay", NULL, R, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"filter-hosts|filterhosts|filter-host", NULL, N, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"hostgroups|hgrp|hostgrp|hostgroup", NULL, N, O_REFUSED, NULL, NULL, REMOTE_WHY},
	{"semaphore", NULL, N, O_REFUSED, NULL, NULL, SEM_WHY},
	{"semaphore-name|semaphorename|id", NULL, R, O_REFUSED, NULL, NULL, SEM_WHY},
	{"semaphore-timeout|semaphoretimeout|st", NULL, R, O_REFUSED, NULL, NULL, SEM_WHY},
	{"fg", NULL, N, O_REFUSED, NULL, NULL, SEM_WHY},
	{"bg", NULL, N, O_REFUSED, NULL, NULL, SEM_WHY},
	{"wait", NULL, N, O_REFUSED, NULL, NULL, SEM_WHY},
	{"tmux|tmux-pane|tmuxpane", NULL, N, O_REFUSED, NULL, NULL, "use --line-buffer or --results to "
	    "watch output"},
	{"latest-line|latestline|ll", NULL, N, O_REFUSED, NULL, NULL, "use --line-buffer"},
	{"memsuspend", NULL, R, O_REFUSED, NULL, NULL, "GPU memory is packed with --mem"},
	{"limit", NULL, R, O_REFUSED, NULL, NULL, HOST_WHY},
	{"sql", NULL, R, O_REFUSED, NULL, NULL, "use --joblog and --results"},
	{"sqlmaster|sql-master", NULL, R, O_REFUSED, NULL, NULL, "use --joblog and --results"},
	{"sqlworker|sql-worker", NULL, R, O_REFUSED, NULL, NULL, "use --joblog and --results"},
	{"sqlandworker|sql-and-worker", NULL, R, O_REFUSED, NULL, NULL, "use --joblog and --results"},
	{"color-failed|colour-failed|colorfailed|colourfailed|cf", NULL, N, O_REFUSED, NULL, NULL,
	    "use --joblog (its Exitval column)"},
	{"interactive", "p", N, O_REFUSED, NULL, NULL, "tasks get /dev/null as stdin: --dry-run shows "
	    "what would run"},
	{"tty|open-tty", "o", N, O_REFUSED, NULL, NULL, "tasks get /dev/null as stdin (run an interactive "
	    "program directly)"},
	{"termseq|term-seq", NULL, R, O_REFUSED, NULL, NULL, "gpupack ends a task with SIGTERM, then "
	    "SIGKILL 2 s later (doc/run.md, Signals)"},
	{"shebang|hashbang", NULL, N, O_REFUSED, NULL, NULL, "it must be the first word after gpupack "
	    "(#!/usr/bin/gpupack --shebang CMD), as in parallel"},
	{"shebang-wrap|shebangwrap", NULL, N, O_REFUSED, NULL, NULL, "call gpupack run "
	    "from the script: gpupack run CMD :::: \"$0\""},
	{"embed", NULL, N, O_REFUSED, NULL, NULL, "install gpupack where the script runs"},
	{"template|tmpl", NULL, R, O_REFUSED, NULL, NULL, "write the files from the command line "
	    "(sed 's/X/{}/' tmpl > {}.out)"},
	{"record-env|recordenv", NULL, N, O_REFUSED, NULL, NULL, "tasks get gpupack's environment: export "
	    "what they need (--env NAME=VALUE)"},
	{"session", NULL, N, O_REFUSED, NULL, NULL, "tasks get gpupack's environment: export what they "
	    "need (--env NAME=VALUE)"},
	{"show-limits|showlimits", NULL, N, O_REFUSED, NULL, NULL, "see --max-line-length-allowed"},
	{"bug", NULL, N, O_REFUSED, NULL, NULL, "report gpupack's bugs to its project"},
	{"debug", "D", R, O_REFUSED, NULL, NULL, "use -v, -t or --dry-run"},
	{"linkinputsource|xapplyinputsource", NULL, R, O_REFUSED, NULL, NULL, "use :::+ or --link"},
	{"shell-completion|shellcompletion", NULL, R, O_REFUSED, NULL, NULL, "gpupack's bash completion "
	    "is completion/gpupack.bash"},
};

#undef N
#undef R
#undef OPT

static const char usage_text[] =
    "usage: gpupack run [options] [command [args...]] [::: values... | :::: files...]...\n"
    "\n"
    "Runs command once per input (lines of stdin when no ::: or :::: is given),\n"
    "packed onto GPU slots, the way GNU parallel runs it: the words form a shell\n"
    "command line ('zcat {} | wc -l' works), every inserted value shell-quoted.\n"
    "Several sources combine as a cross product; :::+ and ::::+ pair a source with\n"
    "the one before it. Without a command, the inputs are the commands. Options\n"
    "come from ~/.parallel/config (or -J NAME's profile), then $PARALLEL, then here.\n"
    "Replacement strings: {} {.} {/} {//} {/.} {#} {%} {N} {N.} {N/} {N//} {N/.} {-N}\n"
    "  {gpu} {slot}, --header's {name}, and perl's {= expression =} (run by perl)\n";

static const char tail_text[] =
    "exit status (GNU parallel's): 0 all succeeded, 1-100 the number that failed, 101 more;\n"
    "255 any other error (bad usage, no device, a signal stopped the run: the message says\n"
    "which); --halt: as GNU parallel (see gpupack(1)).\n"
    "\n"
    "examples:\n"
    "  gpupack run --joblog runs.log python train.py --seed {} ::: $(seq 200)\n"
    "  gpupack run --resume --joblog runs.log python train.py --seed {} ::: $(seq 200)\n"
    "  gpupack --sim h100-80gb-x8 run --share mps -j 2 'echo {} on $CUDA_VISIBLE_DEVICES' ::: a b c\n";

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
var_name(const char *p, const char *end)
{
	if (p == end)
		return 0;
	for (const char *q = p; q < end; q++)
		if (!(*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
		    (q > p && *q >= '0' && *q <= '9')))
			return 0;
	return 1;
}

/* --env NAME=VALUE adds a variable; --env NAME (parallel's) passes one, as every variable is. */
static int
parse_env(struct farm_opts *o, const char *v)
{
	const char *eq = strchr(v, '='), *end = eq ? eq : v + strlen(v);

	if (strcmp(v, "_") == 0)
		return err_set(EXIT_USAGE, "--env _ copies the shell's own variables through "
		    "env_parallel, which gpupack does not have (name each variable)");
	if (end == v)
		return err_set(EXIT_USAGE, "--env '%s': want NAME=VALUE or NAME", v);
	if (!var_name(v, end))
		return err_set(EXIT_USAGE, "--env '%s': '%.*s' is not a variable name", v,
		    (int)(end - v), v);
	if (!eq)
		return 0;
	o->env = xrealloc(o->env, (size_t)(o->nenv + 1) * sizeof *o->env);
	o->env[o->nenv++] = (char *)v;
	return o->nenv > 64 ? err_set(EXIT_USAGE, "--env: at most 64") : 0;
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

static int
parse_delay(const char *v, double *out)
{
	if (str_ends(v, "auto"))
		return err_set(EXIT_USAGE, "--delay '%s': 'auto' is not supported (give a duration)", v);
	if (v[0] == '-')
		return err_set(EXIT_USAGE, "--delay '%s': a delay cannot be negative (give 0 or more)", v);
	if (parse_duration(v, out) < 0)
		return err_prefix("--delay");
	return 0;
}

/*
 * -j VALUE, or as parallel -j FILE: the value is FILE's first line (read
 * once, where parallel reads it again as tasks end).
 */
static int
parse_jobs_arg(const char *arg, struct farm_opts *o)
{
	struct stat st;
	char *data, *nl;
	size_t len;
	int rc;

	if (stat(arg, &st) < 0 || !S_ISREG(st.st_mode))
		return parse_jobs(arg, o);
	if (read_file_max(arg, 4096, &data, &len) < 0)
		return err_prefix("-j");
	if ((nl = strchr(data, '\n')) != NULL)
		*nl = '\0';
	rc = parse_jobs(str_trim(data), o);
	free(data);
	return rc;
}

/* What the options say, before they become a farm_opts. */
struct run_args {
	struct farm_opts *o;
	const char *arg_sep, *arg_file_sep;
	char *delim;             /* -d, unescaped (owned) */
	char *tagstring;         /* --tagstring, unescaped (owned) */
	int n_given, N_given, L_given, X, m, xargs;
	long max_args, max_lines;
	char **files;            /* -a FILE, in order */
	int nfiles;
	int trim_given;
	int info;                /* an option that prints and exits: its id */
	long minversion;
	int cat, fifo;           /* --cat, --fifo given */
	const char *joblog;      /* --joblog as given (the last): described once every option is read */
	struct rc_words rc;      /* words from profiles and $PARALLEL (run_rc.h) */
};

/* A count as parallel reads it: unit prefixes and arithmetic (-n 1k, -N 2*3), within [min, max]. */
static int
parse_prefixed_count(const char *name, const char *v, long min, long max, long *out)
{
	double d;

	if (parse_prefixed(v, &d) < 0)
		return err_prefix("%s", name);
	if (d < (double)min || d >= (double)max + 1)
		return err_set(EXIT_USAGE, "%s '%s': want a number from %ld to %ld", name, v, min, max);
	*out = (long)d;
	return 0;
}

/* -n -N -L -l: above 1000000 is as many as fit (parallel takes any number: -n 1x is 10^27) */
static int
parse_count(const char *name, const char *v, long *out)
{
	double d;

	if (parse_prefixed(v, &d) == 0 && d > 1000000)
		return *out = 1000000, 0;
	err_clear();
	return parse_prefixed_count(name, v, 0, 1000000, out);
}

static int
set_replace(const char **slot, const char *name, const char *v)
{
	if (!*v)
		return err_set(EXIT_USAGE, "%s: empty replacement string", name);
	*slot = v;
	return 0;
}

/* Options that read or group the inputs. 1: not one of these. */
static int
input_opt(int id, const char *arg, struct run_args *a)
{
	struct farm_opts *o = a->o;
	struct input_opts *io = &o->ts.in.o;

	switch (id) {
	case O_ARGFILE:
		a->files = xrealloc(a->files, (size_t)(a->nfiles + 1) * sizeof *a->files);
		a->files[a->nfiles++] = (char *)arg;
		return 0;
	case O_NULL:
		io->delim = "";
		io->delim_len = 1;
		return 0;
	case O_DELIM:
		free(a->delim);
		a->delim = input_unescape_delim(arg, &io->delim_len);
		if (io->delim_len == 0)
			return err_set(EXIT_USAGE, "-d: empty delimiter");
		io->delim = a->delim;
		return 0;
	case O_COLSEP:
		io->colsep = arg;
		o->pipe.colsep = arg;   /* --bin and --group-by split with perl: the regex as given */
		return 0;
	case O_HEADER:
		io->header = 1;
		io->header_names_files = strcmp(arg, "0") == 0;
		o->pipe.header = arg;   /* with --pipe: the header's regex, or its lines */
		return 0;
	case O_LINK:
		io->link = 1;
		return 0;
	case O_CSV:
		io->csv = 1;
		return 0;
	case O_MAXARGS:
		a->n_given = 1;
		return parse_count("-n", arg, &a->max_args);
	case O_MAXREPL:
		a->N_given = 1;
		return parse_count("-N", arg, &a->max_args);
	case O_L:
		a->L_given = 1;
		return parse_count("-L", arg, &a->max_lines);
	case O_MAXLINES:
		a->L_given = 1;
		a->max_lines = 1;
		if (arg && parse_count("-l", arg, &a->max_lines) < 0)
			return -1;
		if (a->max_lines == 0)
			a->max_lines = 1;
		return 0;
	case O_X:
		a->X = 1;
		return 0;
	case O_M:
		a->m = 1;
		return 0;
	case O_XARGS:
		a->xargs = 1;
		return 0;
	case O_MAXCHARS:
	{
		long n;

		if (parse_prefixed_count("-s", arg, 1, CMDLINE_MAX, &n) < 0)
			return -1;
		o->ts.max_len = (int)n;
		return 0;
	}
	case O_I:
		return set_replace(&o->rpl[RPL_ALL], "-I", arg);
	case O_REPLACE:
		return set_replace(&o->rpl[RPL_ALL], "--replace", arg && *arg ? arg : "{}");
	case O_ER:
		return set_replace(&o->rpl[RPL_NOEXT], "--extensionreplace", arg);
	case O_BNR:
		return set_replace(&o->rpl[RPL_BASE], "--basenamereplace", arg);
	case O_DNR:
		return set_replace(&o->rpl[RPL_DIR], "--dirnamereplace", arg);
	case O_BNER:
		return set_replace(&o->rpl[RPL_BASE_NOEXT], "--basenameextensionreplace", arg);
	case O_SEQR:
		return set_replace(&o->rpl[RPL_SEQ], "--seqreplace", arg);
	case O_SLOTR:
		return set_replace(&o->rpl[RPL_SLOT], "--slotreplace", arg);
	case O_PLUS:
		o->plus = 1;
		return 0;
	case O_RPL:
		o->rpl_defs = xrealloc(o->rpl_defs, (size_t)(o->nrpl_defs + 1) * sizeof *o->rpl_defs);
		o->rpl_defs[o->nrpl_defs++] = (char *)arg;
		return 0;
	case O_FILTER:
		o->filters = xrealloc(o->filters, (size_t)(o->nfilters + 1) * sizeof *o->filters);
		o->filters[o->nfilters++] = (char *)arg;
		return 0;
	case O_PARENS:
		o->parens = arg;
		return strlen(arg) >= 2 ? 0 : err_set(EXIT_USAGE, "--parens '%s': want the two halves, "
		    "as {==}", arg);
	case O_NORUN:
		io->skip_empty = 1;
		return 0;
	case O_E:
	case O_EOF:
		io->eof = arg && *arg ? arg : NULL;   /* parallel: -E '' is no end-of-input string */
		return 0;
	case O_TRIM:
		a->trim_given = 1;
		return parse_trim(arg, &o->trim);
	case O_ARGSEP:
		a->arg_sep = arg;
		return 0;
	case O_ARGFILESEP:
		a->arg_file_sep = arg;
		return 0;
	case O_SKIPFIRST:
		io->skip_first = 1;
		return 0;
	case O_SHUF:
		o->ts.shuffle = 1;
		return 0;
	case O_TOTALJOBS:
		return parse_count("--total-jobs", arg, &o->total_jobs);
	default:
		return 1;
	}
}

/* Options of the command line and of the output. 1: not one of these. */
static int
line_opt(int id, const char *arg, struct run_args *a)
{
	struct farm_opts *o = a->o;

	switch (id) {
	case O_QUOTE:
		o->quote_all = 1;
		return 0;
	case O_SHELL:
		o->shell = 1;
		return 0;
	case O_V:
		o->verbose = 1;
		return 0;
	case O_T:
		o->print_commands = 1;
		return 0;
	case O_DRYRUN:
		o->dry_run = 1;
		return 0;
	case O_SHELLQUOTE:
		/* a dry run whose lines are quoted once more */
		o->shellquote = 1;
		o->dry_run = 1;
		return 0;
	case O_WD:
		if (strcmp(arg, "...") == 0)
			return err_set(EXIT_USAGE, "--wd ...: a temporary directory per task is not supported "
			    "(give a directory)");
		o->workdir = arg;
		return 0;
	case O_NICE:
		return parse_int_opt("--nice", arg, -20, 19, &o->nice);
	case O_TMPDIR:
		/* parallel: the same as setting $TMPDIR (for the tasks too) */
		if (setenv("TMPDIR", arg, 1) < 0)
			return err_sys(EXIT_INTERNAL, "setenv");
		return 0;
	case O_SLOTVAR:
		if (!var_name(arg, arg + strlen(arg)))
			return err_set(EXIT_USAGE, "--process-slot-var '%s': not a variable name", arg);
		o->slot_var = arg;
		return 0;
	case O_RESULTS:
		o->results = arg;
		return *arg ? 0 : err_set(EXIT_USAGE, "--results: empty directory name");
	case O_K:
		o->keep_order = 1;
		return 0;
	case O_NOK:
		o->keep_order = 0;
		return 0;
	case O_CTAG:
	case O_COLOR:
		o->color = 1;
		o->tag |= id == O_CTAG;
		return 0;
	case O_TAG:
		o->tag = 1;
		return 0;
	case O_FILES:
		o->files = 1;
		return 0;
	case O_CTAGSTRING:
	case O_TAGSTRING: {
		size_t len;

		o->color |= id == O_CTAGSTRING;
		/* parallel reads \t \n \r \0 \NNN in it, as in -d */
		free(a->tagstring);
		a->tagstring = input_unescape_delim(arg, &len);
		o->tag = 1;
		o->tagstring = a->tagstring;
		return 0;
	}
	case O_LB:
		o->line_buffer = 1;
		return 0;
	case O_U:
		o->ungroup = 1;
		return 0;
	case O_GROUP:
	case O_NOOP:
		return 0;
	case O_BAR:
		o->bar = 1;
		return 0;
	case O_ETA:
		o->eta = 1;
		return 0;
	case O_PROGRESS:
		o->progress = 1;
		return 0;
	case O_SUMMARY:
		o->summary = 1;
		return 0;
	case O_JSON:
		o->json = 1;
		return 0;
	default:
		return 1;
	}
}

/* Placement, durability and the rest. */
static int
farm_opt(int id, const char *arg, struct run_args *a)
{
	struct farm_opts *o = a->o;

	switch (id) {
	case O_GPUS:
		o->gpus = arg;
		return 0;
	case O_SHARE:
		return parse_share(arg, &o->share);
	case O_JOBS:
		return parse_jobs_arg(arg, o);
	case O_TOTAL:
		return parse_int_opt("--total", arg, 1, 1000000, &o->total);
	case O_MEM:
		if (parse_size(arg, &o->mem) < 0)
			return err_prefix("--mem");
		return 0;
	case O_SM:
		return parse_sm(arg, &o->sm_pct);
	case O_ENV:
		return parse_env(o, arg);
	case O_SHARD:
		return parse_shard(arg, o);
	case O_JOBLOG:
		a->joblog = arg;
		return joblog_check_name(arg);
	case O_RESUME:
		o->resume = 1;
		return 0;
	case O_RESUMEFAILED:
		o->resume_failed = 1;
		return 0;
	case O_RETRYFAILED:
		o->retry_failed = 1;
		return 0;
	case O_RETRIES:
		if (strcmp(arg, "0") == 0)
			return err_set(EXIT_USAGE, "--retries 0: GNU parallel retries a failing task forever "
			    "then; give the number of tries (--retries 3: 3 in all)");
		return parse_int_opt("--retries", arg, 1, 1000000, &o->retries);
	case O_TIMEOUT:
		return parse_timeout(arg, o);
	case O_DELAY:
		return parse_delay(arg, &o->delay);
	case O_HALT:
		return parse_halt(arg, o);
	case O_PROFILE:
	case O_PLAIN:
		return 0;   /* read before the options (run_rc.c) */
	case O_PIPE:
		o->pipe.on = 1;
		return 0;
	case O_LOAD:
		return hostlimit_load(&o->host, arg);
	case O_NOSWAP:
		o->host.noswap = 1;
		return 0;
	case O_MEMFREE:
	{
		double d;

		/* parallel's number (1G, 500M, 1k+1k); else gpupack's sizes (1GB, 512MiB) */
		if (parse_prefixed(arg, &d) == 0 && d >= 0 && d < 4.6e18) {
			o->host.memfree = (uint64_t)d;
			return 0;
		}
		err_clear();
		if (parse_size(arg, &o->host.memfree) < 0)
			return err_prefix("--memfree");
		return 0;
	}
	case O_PIPEPART:
		o->pipe.on = o->pipe.part = 1;
		return 0;
	case O_BLOCK:
		o->pipe.block = arg;
		return 0;
	case O_RECSTART:
		o->pipe.recstart = arg;
		return 0;
	case O_RECEND:
		o->pipe.recend = arg;
		return 0;
	case O_REGEXP:
		o->pipe.regexp = 1;
		return 0;
	case O_RRS:
		o->pipe.rrs = 1;
		return 0;
	case O_TEE:
		o->pipe.tee = 1;
		return 0;
	case O_CAT:
		a->cat = 1;
		return 0;
	case O_FIFO:
		a->fifo = 1;
		return 0;
	case O_ROUNDROBIN:
		o->pipe.round_robin = 1;
		return 0;
	case O_BIN:
		o->pipe.bin = arg;
		return 0;
	case O_GROUPBY:
		o->pipe.group_by = arg;
		return 0;
	case O_SSHLOGIN:
		/* parallel's ":" is this machine, the only one gpupack runs on (others: refused) */
		return 0;
	case O_MINVERSION:
		if (parse_long(arg, 0, 99999999L, &a->minversion) < 0)
			return err_prefix("--minversion");
		a->info = id;
		return 0;
	case O_VERSION:
	case O_HELP:
	case O_NCPUS:
	case O_NCORES:
	case O_NTHREADS:
	case O_NSOCKETS:
	case O_MAXLINELEN:
		a->info = id;
		return 0;
	default:
		return err_set(EXIT_INTERNAL, "option %d not handled", id);
	}
}

static int
one_opt(int id, const char *arg, struct run_args *a)
{
	int rc = input_opt(id, arg, a);

	if (rc <= 0)
		return rc;
	rc = line_opt(id, arg, a);
	if (rc <= 0)
		return rc;
	return farm_opt(id, arg, a);
}

/*
 * Whether the word after an option whose value is optional is its value,
 * as parallel's Getopt::Long decides: a number for -l/--max-lines, any word
 * not starting with '-' (or "-" itself) for -i/--replace and -e/--eof,
 * though never an input separator (:::, ::::, :::+, ::::+).
 */
static int
next_is_value(int id, const char *w)
{
	if (id == O_MAXLINES)
		return w[0] != '\0' && strspn(w, "0123456789") == strlen(w);
	if (strcmp(w, ":::") == 0 || strcmp(w, "::::") == 0 || strcmp(w, ":::+") == 0 || strcmp(w, "::::+") == 0)
		return 0;
	return w[0] != '-' || w[1] == '\0';
}

/*
 * Read the options of one list of words (a profile, $PARALLEL, the command
 * line), as parallel does: up to the first word that is not an option.
 * *rest gets the index of that word. where: the list's name for errors, or
 * NULL for the command line.
 */
static int
read_opts(struct opttab *ot, int argc, char **argv, const char *where, struct run_args *a, int *rest)
{
	int ch, word;

	optind = 0;
	opterr = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		/* Perl's Getopt::Long: an optional value may be the next word (-l 2, -i X, --eof X) */
		if (d && d->arg == OPTTAB_OPT && !optarg && optind < argc && next_is_value(d->id, argv[optind]))
			optarg = argv[optind++];
		if (ch == '?' || ch == ':' || !d)
			opt_error("run", argc, argv, word, ch, ot->longs);
		else if (d->refused && (d->id == O_REFUSED || (d->id == O_SSHLOGIN && strcmp(optarg, ":"))))
			opttab_refuse(d, argv[word]);
		else if (one_opt(d->id, optarg, a) == 0)
			continue;
		if (where)
			err_prefix("in %s", where);
		return -1;
	}
	*rest = optind;
	return 0;
}

/* -n -N -L -X -m --xargs into how records become tasks (GNU parallel's rules). */
static void
grouping(struct run_args *a)
{
	struct task_src *ts = &a->o->ts;

	if (a->o->pipe.on && !a->o->pipe.tee) {
		/* -N, -n, -L and -r cut the blocks; a task takes one block, and no --header names */
		struct pipe_opts *p = &a->o->pipe;

		p->records = a->n_given || a->N_given ? a->max_args : 0;
		p->lines = a->L_given ? a->max_lines : 0;
		p->skip_empty = ts->in.o.skip_empty;
		p->skip_first = ts->in.o.skip_first;
		ts->in.o.skip_empty = ts->in.o.skip_first = ts->in.o.header = 0;
		ts->max_args = 1;
		return;
	}
	a->o->pipe.header = NULL;
	if (a->L_given && !a->n_given && !a->N_given) {
		/* -L N: N lines per task, as -N N; a line that ends in a blank goes on (parallel) */
		a->max_args = a->max_lines;
		ts->in.o.line_cont = 1;
		a->N_given = !(a->xargs || a->m);
	} else if (a->L_given) {
		ts->in.o.line_cont = 1;
	}
	ts->fill = a->X || a->m || a->xargs;
	ts->spread = a->X || a->m;
	a->o->context = a->X || a->N_given;
	if (a->n_given || a->N_given || a->L_given) {
		ts->max_args = (int)a->max_args;
		if (a->max_args == 0) {
			/* -N0 / -n0: nothing inserted; a record per task, or with -X, -m, --xargs as many as fit */
			ts->noarg = 1;
			ts->max_args = ts->fill ? 0 : 1;
		}
	} else {
		ts->max_args = ts->fill ? 0 : 1;
	}
	/* parallel: --colsep trims its columns (--trim n undoes it); --header without --colsep splits at tabs */
	if (a->o->ts.in.o.colsep && !a->trim_given)
		a->o->trim = TRIM_BOTH;
	/* parallel: --csv's separator is , unless --colsep says (set after the trim's test) */
	if (a->o->ts.in.o.csv && !a->o->ts.in.o.colsep)
		a->o->ts.in.o.colsep = ",";
	if (a->o->ts.in.o.header && !a->o->ts.in.o.colsep)
		a->o->ts.in.o.colsep = "\t";
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
parse_rest(int argc, char **argv, struct run_args *a)
{
	struct farm_opts *o = a->o;
	const char *asep = a->arg_sep ? a->arg_sep : ":::";
	const char *fsep = a->arg_file_sep ? a->arg_file_sep : "::::";
	int i = 0, kind = 0, linked = 0;
	struct source *s = NULL;

	if (o->pipe.on && !o->pipe.tee) {
		/* the data is stdin, or with --pipe-part the file of -a */
		o->pipe.file = a->nfiles ? a->files[0] : NULL;
		inputs_add_pipe(&o->ts.in, &o->pipe, 0);
		o->cmd = argv;
		o->ncmd = argc;
		o->sources_given = 1;
		return;
	}
	for (int k = 0; k < a->nfiles; k++)
		inputs_add_file(&o->ts.in, a->files[k], 0);
	o->cmd = argv;
	while (i < argc && !is_sep(argv[i], asep) && !is_sep(argv[i], fsep))
		i++;
	o->ncmd = i;
	o->sources_given = a->nfiles > 0 || i < argc;
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

/* Options that print something and exit, as parallel's do. */
static int
info(struct opttab *ot, const struct run_args *a)
{
	switch (a->info) {
	case O_HELP:
		opttab_help(ot, usage_text, tail_text, stdout);
		return 0;
	case O_VERSION:
		printf("gpupack %s\nGNU parallel %ld's command lines, options and exit statuses, on GPU "
		    "slots (see gpupack(1), doc/run.md)\n", GPUPACK_VERSION, PARALLEL_VERSION);
		return 0;
	case O_MINVERSION:
		/* parallel prints its version, and fails when it is older than asked */
		printf("%ld\n", PARALLEL_VERSION);
		return a->minversion <= PARALLEL_VERSION ? 0 : FARM_EXIT_ERROR;
	case O_MAXLINELEN:
		printf("%d\n", CMDLINE_PROBE);
		return 0;
	default:
		printf("%d\n", rc_cpu_count(a->info == O_NSOCKETS ? RC_SOCKETS : a->info == O_NTHREADS ?
		    RC_THREADS : RC_CORES));
		return 0;
	}
}

static void
free_run(struct farm_opts *o, struct run_args *a)
{
	tasks_free(&o->ts);
	free(o->env);
	free(o->rpl_defs);
	free(o->filters);
	if (o->tee_file) {
		unlink(o->tee_file);
		free(o->tee_file);
	}
	joblog_free(&o->joblog);
	free(a->delim);
	free(a->tagstring);
	free(a->files);
	rc_words_free(&a->rc);
}

/* Profiles, $PARALLEL, the command line; the words left over make the command. */
static int
read_all(struct opttab *ot, int argc, char **argv, struct run_args *a, char ***cmd, int *ncmd)
{
	static const int ids[2] = {O_PROFILE, O_PLAIN};
	struct rc_list *l;
	int rest;

	if (rc_read(&a->rc, ot, argc, argv, ids) < 0)
		return -1;
	for (l = a->rc.lists; l; l = l->next) {
		if (read_opts(ot, l->n, l->w, l->name, a, &rest) < 0)
			return -1;
		/* words that are not options (PARALLEL="-j2 nice") come before the command */
		for (int i = rest; i < l->n; i++)
			rc_push(&a->rc, l->w[i]);
	}
	if (read_opts(ot, argc, argv, NULL, a, &rest) < 0)
		return -1;
	for (int i = rest; i < argc; i++)
		rc_push(&a->rc, argv[i]);
	*cmd = a->rc.cmd;
	*ncmd = a->rc.ncmd;
	return 0;
}

static int cmd_run_args(int argc, char **argv, struct ctx *c);

static int
has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/*
 * #!/usr/bin/gpupack --shebang -r echo: the kernel passes the rest of the
 * line as one word, then the script. As parallel: that word split into
 * words, --shebang taken off, and the script as the input, its #! line
 * skipped (--skip-first-line -a SCRIPT, first; the script is the last
 * word, as parallel takes it). --shebang-wrap's word is only split (it is
 * refused). 1: *nargv (owned, its words too) replaces argv; 0: not such a
 * call; -1 with err set.
 */
static int
shebang_argv(int argc, char **argv, char ***nargv, int *nargc)
{
	int wrap, nw, n = 0;
	char **w;

	if (argc < 2 || !(has_prefix(argv[1], "--shebang") || has_prefix(argv[1], "--hashbang")))
		return 0;
	wrap = has_prefix(argv[1], "--shebang-wrap") || has_prefix(argv[1], "--shebangwrap");
	if (rc_shellwords(argv[1], &w, &nw) < 0)
		return err_prefix("%s", argv[1]);
	*nargv = xcalloc((size_t)argc + (size_t)nw + 4, sizeof **nargv);
	(*nargv)[n++] = xstrdup(argv[0]);
	if (!wrap && argc > 2) {
		(*nargv)[n++] = xstrdup("--skip-first-line");
		(*nargv)[n++] = xstrdup("-a");
		(*nargv)[n++] = xstrdup(argv[argc - 1]);
		argc--;
	}
	for (int i = wrap ? 0 : 1; i < nw; i++)
		(*nargv)[n++] = w[i];
	if (!wrap)
		free(w[0]);
	free(w);
	for (int i = 2; i < argc; i++)
		(*nargv)[n++] = xstrdup(argv[i]);
	*nargc = n;
	return 1;
}

int
cmd_run(int argc, char **argv, struct ctx *c)
{
	char **sb = NULL;
	int nsb = 0, sbrc = shebang_argv(argc, argv, &sb, &nsb);

	if (sbrc < 0) {
		err_report();
		return FARM_EXIT_ERROR;
	}
	if (sbrc > 0) {
		int rc = cmd_run_args(nsb, sb, c);

		for (int i = 0; i < nsb; i++)
			free(sb[i]);
		free(sb);
		return rc;
	}
	return cmd_run_args(argc, argv, c);
}

/*
 * --round-robin, --bin, --group-by: what they need, as parallel checks it
 * (its messages where it has one). --group-by means --pipe, as in parallel;
 * --round-robin without --pipe changes nothing there either.
 */
static int
spreading(struct farm_opts *o, const struct run_args *a)
{
	struct pipe_opts *p = &o->pipe;

	if (p->group_by) {
		p->on = 1;
		if (p->rrs)
			return err_set(EXIT_USAGE, "--remove-rec-sep is not compatible with --groupby");
		if (p->recstart)
			return err_set(EXIT_USAGE, "--recstart is not compatible with --groupby");
		if (p->recend && strcmp(p->recend, "\\n") != 0 && strcmp(p->recend, "\n") != 0)
			return err_set(EXIT_USAGE, "--recend is not compatible with --groupby");
	}
	if (p->bin && (!p->on || p->part))
		return err_set(EXIT_USAGE, "--bin needs --pipe (as in parallel; --pipe-part: --pipe --bin ... < FILE)");
	if (pipe_spread(p) == PIPE_BLOCKS)
		return 0;
	if (o->retries > 0)
		return err_set(EXIT_USAGE, "--retries cannot be combined with --%s (as in parallel)",
		    p->bin ? "bin" : "roundrobin");
	if (p->cat)
		return err_set(EXIT_USAGE, "--%s cannot be combined with --%s: its tasks read a stream "
		    "(use --pipe's blocks with --cat)", a->fifo ? "fifo" : "cat", p->bin ? "bin" : "round-robin");
	return 0;
}

static int
cmd_run_args(int argc, char **argv, struct ctx *c)
{
	struct farm_opts o;
	struct run_args a;
	struct gpu_backend *b;
	struct opttab ot;
	char **rest;
	int nrest, rc;

	memset(&o, 0, sizeof o);
	memset(&a, 0, sizeof a);
	a.o = &o;
	o.share = SHARE_DEFAULT;
	tasks_init(&o.ts);
	opttab_init(&ot, run_opts, (int)(sizeof run_opts / sizeof run_opts[0]));
	if (read_all(&ot, argc, argv, &a, &rest, &nrest) < 0)
		goto fail;
	if (a.info) {
		rc = info(&ot, &a);
		goto out;
	}
	if (a.cat && a.fifo) {
		err_set(EXIT_USAGE, "--fifo cannot be combined with --cat (as in parallel)");
		goto fail;
	}
	/* parallel: --cat and --fifo mean --pipe (but with --pipe-part) */
	if (a.fifo)
		warnx_("--fifo: {} is a temporary file, as with --cat (parallel makes a fifo)");
	o.pipe.cat = a.cat || a.fifo;
	o.pipe.on |= o.pipe.cat;
	if (spreading(&o, &a) < 0)
		goto fail;
	grouping(&a);
	if (joblog_describe(&o.joblog, a.joblog, o.shard_k, o.shard_n) < 0)
		goto fail;
	if (o.shard_n > 1 && o.joblog.path && !o.joblog.sharded && getenv("SLURM_PROCID"))
		warnx_("--shard: every shard writes the one joblog %s; give each its own with {shard} "
		    "in its name", o.joblog.path);
	farm_block_signals();
	parse_rest(nrest, rest, &a);
	if (ctx_backend(c, &b) < 0)
		goto fail;
	rc = farm_run(&o, b);
	goto out;
fail:
	err_report();
	rc = FARM_EXIT_ERROR;
out:
	opttab_free(&ot);
	free_run(&o, &a);
	return rc;
}

/* run's table, for shell completion (main.c: gpupack --completion-helper run) */
void
run_options(const struct optdef **t, int *n)
{
	*t = run_opts;
	*n = (int)(sizeof run_opts / sizeof run_opts[0]);
}
