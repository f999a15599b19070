/*
 * remember: what -j auto learnt about a command, per command and device
 * kind, kept in the state directory (auto/<key>) so that the next run of
 * the same command starts from it instead of from nothing: the count it
 * settled on, the cores a task wanted while starting and on the GPU (so
 * that the first count fits this host's CPUs: a count that overshot them
 * is not carried forward), and its footprints (as quantiles).
 * Nothing remembered can make a run fail: a file that is corrupt, not a
 * regular file, not the user's own or older than REMEMBER_DAYS is ignored
 * with one warning line, and a count that cannot be written is a warning.
 */
#ifndef GPUPACK_FARM_REMEMBER_H
#define GPUPACK_FARM_REMEMBER_H

#include <stddef.h>
#include <stdint.h>

/* A remembered count older than this is stale: the machine or the code may have changed. */
#define REMEMBER_DAYS 30
/* Footprints kept: this many quantiles. */
#define REMEMBER_FP 16

struct remembered {
	int count;                /* the count it settled on */
	double cores_start;       /* cores a starting task wanted; 0 unknown */
	double cores_run;         /* cores a task on the GPU wanted; 0 unknown */
	int nfp;
	uint64_t fp[REMEMBER_FP]; /* footprints, bytes (whole MiB), as quantiles, ascending */
};

/* The key: the command's identity, the share mode, the goal, the device's name and MIG slices. */
uint64_t remember_key(uint64_t identity, int share, int energy, const char *device, int mig_slices);
/* What is remembered for key: 1 and *r, or 0 (none, or ignored with a warning). */
int remember_load(uint64_t key, struct remembered *r);
/* Remember r for key (best effort: a failure is one warning line). */
void remember_store(uint64_t key, const struct remembered *r);
/*
 * Parse a file's text: 0 and *r when it is ours for key, -1 otherwise (err
 * set: why). Version 1 files (a count alone) are read too.
 */
int remember_parse(const char *text, size_t n, uint64_t key, struct remembered *r);
/* Format r for key (the file's text, NUL-terminated); its length. */
size_t remember_format(uint64_t key, const struct remembered *r, char *out, size_t size);

#endif
