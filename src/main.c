/*
 * main: the command table and the global flags; nothing else.
 */
#include "cmd/cmd.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/knob.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	const char *summary;
	const char *usage;
	int (*fn)(int argc, char **argv, struct ctx *c);
	/* its options (cmd/opttab.h), and its subcommands with the options each takes */
	const struct optdef *opts;
	const int *nopts;
	const struct optsub *subs;
	const int *nsubs;
};

static const struct command commands[] = {
	{"devices", "GPUs, MIG devices, MPS daemons, memory, compute mode",
	    "devices [--json] [--profiles] [--gpu SEL]", cmd_devices,
	    devices_options, &devices_noptions, NULL, NULL},
	{"mps", "private MPS control daemons per GPU or MIG device, with limits",
	    "mps start|stop|status|env|exec ...", cmd_mps,
	    mps_options, &mps_noptions, mps_subs, &mps_nsubs},
	{"timeslice", "the compute time-slice policy of each GPU",
	    "timeslice get|set ...", cmd_timeslice,
	    timeslice_options, &timeslice_noptions, timeslice_subs, &timeslice_nsubs},
	{"mig", "MIG profiles, plans from requests, apply and clear",
	    "mig profiles|plan|apply|clear ...", cmd_mig,
	    mig_options, &mig_noptions, mig_subs, &mig_nsubs},
	{"run", "a task farm: many commands packed onto GPU slots",
	    "run [options] command [args] [::: inputs ...]", cmd_run, NULL, NULL, NULL, NULL},
	{"bench", "the sharing mechanisms measured side by side on this GPU",
	    "bench [--quick] [--json] [-- CMD ...]", cmd_bench,
	    bench_options, &bench_noptions, NULL, NULL},
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: gpupack [--sim FILE | --sim-write FILE] <command> [args]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nglobal options:\n"
	    "  --sim FILE   answer from a simulated machine (topology file) instead of the driver;\n"
	    "               a NAME (h100-80gb) is one of the installed topologies; its changes\n"
	    "               (mig apply, clear) go to a copy in the state directory, which later\n"
	    "               commands on FILE see: FILE itself never changes; $GPUPACK_SIM too\n"
	    "  --sim-write FILE  the same, but changes rewrite FILE itself ($GPUPACK_SIM_WRITE)\n"
	    "  --version    print the version\n"
	    "  -h, --help   this text; 'gpupack <command> --help' for a command's own\n"
	    "\nexit status: 0 success, 1 tasks failed, 2 usage, 3 environment, 4 internal\n"
	    "(gpupack run exits as GNU parallel does; see gpupack(1))\n");
}

static const struct command *
find_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

static const struct command *find_command(const char *name);

/*
 * Shell completion asks the binary what to offer (git's
 * --git-completion-helper), so it cannot drift from the parsers:
 *   gpupack --completion-helper              the commands and global options
 *   gpupack --completion-helper CMD          CMD's subcommands, or its options
 *   gpupack --completion-helper CMD SUB      SUB's options
 * one a line; an option that takes a value as --name=METAVAR.
 */
static int
completion_helper(int argc, char **argv)
{
	const struct command *cmd = argc > 0 ? find_command(argv[0]) : NULL;
	const struct optdef *t = NULL;
	const char *ids = NULL;
	int n = 0;

	if (argc == 0) {
		for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
			printf("%s\n", commands[i].name);
		printf("--sim=FILE\n--sim-write=FILE\n--version\n--help\n");
		return 0;
	}
	if (!cmd)
		return err_die(EXIT_USAGE, "--completion-helper: '%s' is not a command", argv[0]);
	if (cmd->subs && argc == 1) {
		for (int i = 0; i < *cmd->nsubs; i++)
			printf("%s\n", cmd->subs[i].name);
		return 0;
	}
	for (int i = 0; cmd->subs && i < *cmd->nsubs; i++)
		if (strcmp(cmd->subs[i].name, argv[1]) == 0)
			ids = cmd->subs[i].ids;
	if (cmd->subs && !ids)
		return err_die(EXIT_USAGE, "--completion-helper: '%s' is not a subcommand of %s", argv[1],
		    cmd->name);
	if (cmd->opts) {
		t = cmd->opts;
		n = *cmd->nopts;
	} else {
		run_options(&t, &n);
	}
	opttab_complete(t, n, ids, stdout);
	return 0;
}

static int
sim_needs_file(const char *opt)
{
	return err_die(EXIT_USAGE, "option '%s' needs a FILE: a topology file or the name of an "
	    "installed one, as in gpupack --sim h100-80gb devices (see gpupack --help)", opt);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"sim", required_argument, NULL, 's'},
		{"sim-write", required_argument, NULL, 'w'},
		{"version", no_argument, NULL, 'V'},
		{"knobs", no_argument, NULL, 'k'},
		{"completion-helper", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ctx c = {.argv0 = argv[0]};
	const struct command *cmd;
	int ch, rc;

	std_fds_open();
	/*
	 * #!/usr/bin/gpupack --shebang ... (or run --shebang ...): the kernel gives the rest of the
	 * #! line as one word; it is gpupack run's (run splits it, as parallel does)
	 */
	if (argc > 1) {
		char *word = argv[1];

		if (strncmp(word, "run", 3) == 0 && (word[3] == ' ' || word[3] == '\t'))
			for (word += 3; *word == ' ' || *word == '\t'; word++)
				;
		if (strncmp(word, "--shebang", 9) == 0 || strncmp(word, "--hashbang", 10) == 0) {
			argv[1] = word;
			argv[0] = "run";
			err_set_command("run");
			rc = cmd_run(argc, argv, &c);
			ctx_close(&c);
			return rc;
		}
	}
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
		case 'w':
			if (!*optarg)
				return sim_needs_file(ch == 'w' ? "--sim-write" : "--sim");
			if (c.sim)
				return err_die(EXIT_USAGE, "--sim and --sim-write name one machine: give one of them, once");
			c.sim = optarg;
			c.sim_write = ch == 'w';
			break;
		case 'V':
			printf("gpupack %s\n", GPUPACK_VERSION);
			return 0;
		case 'k':
			/* the test-only switches and counters (util/knob.h): not in --help */
			knob_list(stdout);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case 'c':
			/* for completion/gpupack.bash: not in --help */
			return completion_helper(argc - optind, argv + optind);
		case ':':
			return sim_needs_file(argv[optind - 1]);
		default:
			return err_die(EXIT_USAGE, "unknown global option '%s' (see gpupack --help)",
			    argv[optind - 1]);
		}
	}
	if (optind >= argc && c.sim && find_command(c.sim))
		/* gpupack --sim devices: the command was taken for the FILE */
		return sim_needs_file(c.sim_write ? "--sim-write" : "--sim");
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if ((cmd = find_command(argv[optind])) != NULL) {
		int first = optind;

		err_set_command(cmd->name);
		/* each command parses from its own name; optind 0 resets getopt fully */
		optind = 0;
		opterr = 0;
		rc = cmd->fn(argc - first, argv + first, &c);
		ctx_close(&c);
		return rc;
	}
	return err_die(EXIT_USAGE, "'%s' is not a command (see gpupack --help)", argv[optind]);
}
