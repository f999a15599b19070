/* nvml: placeholder until the NVML backend lands. */
#include "gpu/backend.h"
#include "util/err.h"

#include <stddef.h>

int
gpu_nvml_open(struct gpu_backend **out)
{
	*out = NULL;
	return err_set(EXIT_ENV, "NVIDIA driver not found (libnvidia-ml.so.1)");
}
