/*
 * oom: did a task fail because its GPU ran out of memory? Read from what
 * it printed on stderr: the messages of the CUDA runtime and driver,
 * cuBLAS and cuDNN, PyTorch, JAX/XLA, CuPy and TensorFlow. Host memory
 * ("Cannot allocate memory", a malloc failure) is not the GPU's. Also:
 * did it die of a fatal GPU fault (health.c watches its neighbours then)?
 */
#ifndef GPUPACK_FARM_OOM_H
#define GPUPACK_FARM_OOM_H

#include <stddef.h>

#include "farm/output.h"

/* Bytes at the end of a task's stderr that are searched. */
#define OOM_TAIL 65536

/* 1 when text[0..n) says a GPU ran out of memory. */
int oom_in_text(const char *text, size_t n);
/* The same for a captured stderr (b), or for a --results file open for reading (fd >= 0). */
int oom_in_output(const struct obuf *b, int fd);
/*
 * 1 when it says its GPU context died of a fatal fault (a device-side
 * assert, an illegal address or instruction, a launch failure).
 */
int oom_fault_in_text(const char *text, size_t n);
int oom_fault_in_output(const struct obuf *b, int fd);

#endif
