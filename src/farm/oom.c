/*
 * oom: GPU out-of-memory messages (and GPU faults) in task output. A line counts when it
 * holds one of the libraries' own error names, or "out of memory" together
 * with a word that puts it on the GPU ("CUDA", "GPU", "device"): PyTorch
 * and CuPy say "CUDA out of memory" / "cupy.cuda.memory.OutOfMemoryError:
 * Out of memory", gpupack-work "cudaErrorMemoryAllocation: out of memory",
 * XLA "RESOURCE_EXHAUSTED: Out of memory while trying to allocate ... on
 * device". Java's OutOfMemoryError and a malloc failure are not matched.
 */
#include "farm/oom.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names that mean GPU memory ran out wherever they appear. */
static const char *const names[] = {
	"cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "CUBLAS_STATUS_ALLOC_FAILED",
	"CUDNN_STATUS_ALLOC_FAILED", "CUFFT_ALLOC_FAILED", "CUSOLVER_STATUS_ALLOC_FAILED",
};

/* Case-insensitive search of needle in [p, p + n). */
static int
has(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; k <= n && i <= n - k; i++) {
		size_t j = 0;

		while (j < k && tolower((unsigned char)p[i + j]) == tolower((unsigned char)needle[j]))
			j++;
		if (j == k)
			return 1;
	}
	return 0;
}

/* A fatal fault of the task's GPU context: CUDA's names and messages, PyTorch's. */
static const char *const faults[] = {
	"device-side assert triggered", "cudaErrorAssert", "CUDA_ERROR_ASSERT",
	"illegal memory access was encountered", "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
	"an illegal instruction was encountered", "cudaErrorIllegalInstruction",
	"CUDA_ERROR_ILLEGAL_INSTRUCTION", "misaligned address", "cudaErrorMisalignedAddress",
	"CUDA_ERROR_MISALIGNED_ADDRESS", "unspecified launch failure", "cudaErrorLaunchFailure",
	"CUDA_ERROR_LAUNCH_FAILED",
};

static int
fault_says(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		if (has(p, n, faults[i]))
			return 1;
	return 0;
}

static int
line_says(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (has(p, n, names[i]))
			return 1;
	/* TensorFlow: "OOM when allocating tensor ... on .../device:GPU:0" */
	return (has(p, n, "out of memory") || has(p, n, "OOM when allocating")) &&
	    (has(p, n, "cuda") || has(p, n, "gpu") || has(p, n, "device"));
}

static int
scan(const char *text, size_t n, int (*says)(const char *, size_t))
{
	const char *p = text, *end = text + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (says(p, len))
			return 1;
		p += len + 1;
	}
	return 0;
}

int
oom_in_text(const char *text, size_t n)
{
	return scan(text, n, line_says);
}

int
oom_fault_in_text(const char *text, size_t n)
{
	return scan(text, n, fault_says);
}

/* The last OOM_TAIL bytes of fd (at most size of them) into buf; how many. */
static size_t
tail_of(int fd, char *buf)
{
	struct stat st;
	off_t off;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0)
		return 0;
	off = st.st_size > OOM_TAIL ? st.st_size - OOM_TAIL : 0;
	while (got < OOM_TAIL) {
		ssize_t r = pread(fd, buf + got, OOM_TAIL - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

static int
output_says(const struct obuf *b, int fd, int (*says)(const char *, size_t))
{
	static char buf[OOM_TAIL];
	size_t n;

	if (fd >= 0)
		return (n = tail_of(fd, buf)) > 0 && scan(buf, n, says);
	if (b->spill >= 0 && (n = tail_of(b->spill, buf)) > 0)
		return scan(buf, n, says);
	if (b->len > OOM_TAIL)
		return scan(b->mem + b->len - OOM_TAIL, OOM_TAIL, says);
	return b->len > 0 && scan(b->mem, b->len, says);
}

int
oom_in_output(const struct obuf *b, int fd)
{
	return output_says(b, fd, line_says);
}

int
oom_fault_in_output(const struct obuf *b, int fd)
{
	return output_says(b, fd, fault_says);
}
