/*
 * oom: GPU out-of-memory messages in task output. A line counts when it
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

int
oom_in_text(const char *text, size_t n)
{
	const char *p = text, *end = text + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line_says(p, len))
			return 1;
		p += len + 1;
	}
	return 0;
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

int
oom_in_output(const struct obuf *b, int fd)
{
	static char buf[OOM_TAIL];
	size_t n;

	if (fd >= 0)
		return (n = tail_of(fd, buf)) > 0 && oom_in_text(buf, n);
	if (b->spill >= 0 && (n = tail_of(b->spill, buf)) > 0)
		return oom_in_text(buf, n);
	if (b->len > OOM_TAIL)
		return oom_in_text(b->mem + b->len - OOM_TAIL, OOM_TAIL);
	return b->len > 0 && oom_in_text(b->mem, b->len);
}
