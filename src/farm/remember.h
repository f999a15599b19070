/*
 * remember: the count -j auto settled on, per command and device kind, kept
 * in the state directory (auto/<key>) so that the next run of the same
 * command starts near it instead of at the share mode's old default.
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

/* The key: the command's identity, the share mode, the device's name and MIG slices. */
uint64_t remember_key(uint64_t identity, int share, const char *device, int mig_slices);
/* The count remembered for key: 1 and *count, or 0 (none, or ignored with a warning). */
int remember_load(uint64_t key, int *count);
/* Remember count for key (best effort: a failure is one warning line). */
void remember_store(uint64_t key, int count);
/* Parse a file's text: 0 and *count when it is ours for key, -1 otherwise (err set: why). */
int remember_parse(const char *text, size_t n, uint64_t key, int *count);

#endif
