/*
 * nvml.h: the NVML backend's helpers that are worth testing on their own.
 * The backend itself is reached through gpu_nvml_open() (backend.h).
 */
#ifndef GPUPACK_GPU_NVML_H
#define GPUPACK_GPU_NVML_H

#include <stddef.h>

/*
 * A GPU-instance profile name for drivers that give none: "<slices>g.<GiB
 * rounded up>gb" plus the suffix of the profile index ("+me", "+gfx", ...).
 */
void gpu_nvml_profile_name(int index, unsigned slices, unsigned long long mem_mib, char *buf,
    size_t size);

/* The driver's profile name ("MIG 1g.18gb") as gpupack shows it ("1g.18gb"). */
void gpu_nvml_strip_name(const char *name, char *buf, size_t size);

/* CUDA cores per SM of a compute capability (64 or 128); 0 where unknown. */
int gpu_nvml_cores_per_sm(int major, int minor);

#endif
