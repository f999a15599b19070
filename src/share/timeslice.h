/*
 * timeslice: the compute time-slice policy of each GPU, read and set with
 * `nvidia-smi compute-policy` (NVML has no public call for it).
 */
#ifndef GPUPACK_SHARE_TIMESLICE_H
#define GPUPACK_SHARE_TIMESLICE_H

#include <stddef.h>

/* The values nvidia-smi's --set-timeslice takes. */
enum timeslice { TS_UNKNOWN = -1, TS_DEFAULT = 0, TS_SHORT = 1, TS_MEDIUM = 2, TS_LONG = 3 };

/* One GPU's policy as nvidia-smi listed it. */
struct timeslice_entry {
	int gpu;           /* the index nvidia-smi printed, -1 when it named the GPU otherwise */
	char bus_id[32];   /* the PCI bus id it printed instead ("00000000:19:00.0"), or "" */
	int value;         /* enum timeslice */
	char raw[128];     /* the line it came from, trimmed, for --json and errors */
};

/* nvidia-smi: $GPUPACK_NVIDIA_SMI, PATH, /usr/local/nvidia/bin, /usr/bin; EXIT_ENV if none. */
int timeslice_smi_path(char *out, size_t size);

/* "default", "short", "medium", "long" or "0".."3" (any case) -> enum; TS_UNKNOWN otherwise. */
int timeslice_value(const char *word);
const char *timeslice_name(int value); /* "default", ..., "unknown" */

/*
 * Parse `nvidia-smi compute-policy -l` output: boxed tables, "GPU N" or
 * "GPU 00000000:19:00.0" headings followed by "Timeslice : Default", or rows
 * "0  Timeslice  Default". Unknown lines are skipped. No timeslice line at
 * all: -1 with EXIT_ENV. *out is malloc'd.
 */
int timeslice_parse(const char *text, struct timeslice_entry **out, int *n);

/* Run nvidia-smi compute-policy -l and parse it. */
int timeslice_list(struct timeslice_entry **out, int *n);

/* The argv of the set command for one GPU (argv[0] the nvidia-smi path); a NULL-ended array of 7. */
int timeslice_set_argv(const char *uuid, int value, char *smi, size_t smi_size, char *num, size_t num_size,
    const char *argv[7]);
/* Run it (needs root); -1 with nvidia-smi's first line on failure. */
int timeslice_set(const char *uuid, int value);

#endif
