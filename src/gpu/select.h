/*
 * select: turn what a user typed (--gpu 0, GPU-<uuid>, MIG-<uuid>) into a
 * device of a snapshot.
 */
#ifndef GPUPACK_GPU_SELECT_H
#define GPUPACK_GPU_SELECT_H

#include "gpu/backend.h"

/* One place work can be sent: a whole GPU, or one MIG device (a compute instance). */
struct gpu_target {
	int gpu;                   /* index into sys->gpus */
	int gi, ci;                /* indices into gpus[gpu].gi[] and .ci[]; -1 for a whole GPU */
	char uuid[GPU_UUID_LEN];   /* GPU-... or MIG-...: what CUDA_VISIBLE_DEVICES gets */
	uint64_t mem_total;        /* of the GPU or of the GPU instance */
	uint64_t mem_free;
	int sms;
};

/* Resolve one selector: a GPU index, a GPU UUID, or a MIG UUID (case-insensitive). */
int gpu_select_one(const struct gpu_system *sys, const char *sel, struct gpu_target *out);

/*
 * Resolve a comma-separated list of selectors, or, with sel NULL, every
 * device: each GPU with MIG disabled, each MIG device of MIG-enabled GPUs.
 * A GPU with MIG enabled selected by index or UUID expands to its MIG
 * devices. Duplicates are an error. *out is malloc'd.
 */
int gpu_select(const struct gpu_system *sys, const char *sel, struct gpu_target **out, int *n);

/* Fill a target for a whole GPU or for one MIG device. */
void gpu_target_gpu(const struct gpu_system *sys, int gpu, struct gpu_target *t);
void gpu_target_mig(const struct gpu_system *sys, int gpu, int gi, int ci, struct gpu_target *t);

#endif
