/*
 * jobconf: what the Slurm plugin is told. The site's arguments on its
 * plugstack.conf line, and a job's --gpupack-mps[=SPEC], both parsed
 * strictly (one clear line for anything wrong, nothing half applied), and
 * the limits a job's daemons get from the two together.
 *
 * Pure: no Slurm, no processes, no files; fuzzed (tests/fuzz/fuzz_spank_args.c).
 */
#ifndef GPUPACK_SLURM_JOBCONF_H
#define GPUPACK_SLURM_JOBCONF_H

#include <limits.h>
#include <stdint.h>

#include "share/mps.h"

enum jobmps_index { JOBMPS_INDEX_AUTO, JOBMPS_INDEX_GLOBAL, JOBMPS_INDEX_LOCAL };

/* The default state root: on tmpfs, so that a reboot clears it. */
#define JOBMPS_STATE_DEFAULT "/run/gpupack/%n"   /* a root per node: several slurmd may share a host */
/* How long a job's clients get to leave at its end before they are terminated. */
#define JOBMPS_GRACE_DEFAULT 10.0

/* A --gpupack-mps SPEC: "sm=PCT,mem=SIZE,priority=normal|low", "off", or "". */
struct jobmps_spec {
	int off;                 /* "off": no MPS for this job (where the site gives it to all) */
	double sm_pct;           /* 0: not given */
	uint64_t mem_bytes;      /* 0: not given */
	int priority;            /* MPS_PRIO_UNSET: not given */
};

/* The plugstack.conf arguments. */
struct jobmps_conf {
	char control[PATH_MAX];  /* control=PATH; "" finds it as gpupack does */
	char state[PATH_MAX];    /* state=DIR; %n is the node's name */
	char sim[PATH_MAX];      /* sim=FILE: GPUs from a topology file, not the driver (tests) */
	struct jobmps_spec def;  /* default=SPEC: what a job gets that asks for nothing more */
	struct jobmps_spec max;  /* max=SPEC: the most sm and mem a job may ask (0: no bound) */
	int always;              /* enable=always: every job with GPUs, unless it says off */
	int run_without;         /* on_error=run: a job whose MPS fails runs without it (warned) */
	double grace;            /* grace=DURATION */
	int index;               /* cuda_index=auto|global|local (enum jobmps_index) */
};

/*
 * Parse a SPEC. -1 with err set (EXIT_USAGE), one line naming the item and
 * why; *sp is then untouched.
 */
int jobmps_spec_parse(const char *s, struct jobmps_spec *sp);

/* The plugin's arguments (argv of its plugstack.conf line). -1 with err set. */
int jobmps_conf_parse(int ac, char **av, struct jobmps_conf *c);

/*
 * The limits of a job that asked with spec (NULL: nothing given): the site's
 * defaults, then the job's own values; then the site's maxima. A value over
 * a maximum is an error (-1, err set); a value left unset where a maximum
 * exists becomes that maximum.
 */
int jobmps_limits(const struct jobmps_conf *c, const struct jobmps_spec *spec, struct mps_limits *out);

/* "sm=25,mem=1G,priority=low" (what was set) into buf: a job's SPEC as it travels. */
char *jobmps_spec_format(const struct jobmps_spec *sp, char *buf, size_t size);

/*
 * Do MPS's socket paths fit below the state root on node (NULL: not known;
 * %n then counts as nothing)? 0, or -1 with err set and the advice.
 */
int jobmps_state_fits(const struct jobmps_conf *c, const char *node);

/* The state root with %n replaced by node; -1 when it does not fit. */
int jobmps_state_root(const struct jobmps_conf *c, const char *node, char *out, size_t size);

#endif
