/*
 * cmd: the command table's entries. Each command lives in its own file,
 * parses its own arguments (getopt_long, argv[0] is the command's name) and
 * returns the process exit status.
 */
#ifndef GPUPACK_CMD_CMD_H
#define GPUPACK_CMD_CMD_H

#include <getopt.h>

#include "cmd/opttab.h"
#include "gpu/backend.h"

/* What main() parsed before the command name. */
struct ctx {
	const char *sim;              /* --sim FILE or --sim-write FILE, or NULL ($GPUPACK_SIM, $GPUPACK_SIM_WRITE: gpu_open) */
	int sim_write;                /* --sim-write: changes rewrite the file itself */
	const char *argv0;            /* how gpupack was invoked (for re-exec) */
	struct gpu_backend *backend;  /* opened on first use by ctx_backend() */
};

/* Open the backend once; -1 with err set (EXIT_ENV without a driver). */
int ctx_backend(struct ctx *c, struct gpu_backend **out);
void ctx_close(struct ctx *c);
/* Does the command run on a simulated machine (--sim, --sim-write, $GPUPACK_SIM...)? */
int ctx_simulated(const struct ctx *c);
/* The path of the running gpupack binary (for sub-invocations); never NULL. */
const char *ctx_self(void);

/*
 * getopt_long that also says which argv word it read (*word), so that an
 * error can name it; then opt_error sets the one-line error for ch ('?' or
 * ':'; shortopts must start with ':' or "+:" to tell a missing value).
 */
int opt_next(int argc, char **argv, const char *shortopts, const struct option *longopts, int *word);
int opt_error(const char *cmd, int argc, char **argv, int word, int ch, const struct option *opts);

/*
 * Each command's options, declared once (cmd/opttab.h): its parser, --help
 * and shell completion (gpupack --completion-helper) read the same table.
 * A command with subcommands says which options each takes.
 */
extern const struct optdef devices_options[], mps_options[], timeslice_options[], mig_options[],
    bench_options[];
extern const int devices_noptions, mps_noptions, timeslice_noptions, mig_noptions, bench_noptions;
extern const struct optsub mps_subs[], timeslice_subs[], mig_subs[];
extern const int mps_nsubs, timeslice_nsubs, mig_nsubs;
void run_options(const struct optdef **t, int *n);

int cmd_devices(int argc, char **argv, struct ctx *c);
int cmd_mps(int argc, char **argv, struct ctx *c);
int cmd_timeslice(int argc, char **argv, struct ctx *c);
int cmd_mig(int argc, char **argv, struct ctx *c);
int cmd_run(int argc, char **argv, struct ctx *c);
int cmd_bench(int argc, char **argv, struct ctx *c);

#endif
