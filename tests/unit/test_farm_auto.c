/*
 * test_farm_auto: the pieces of -j auto that read the outside world: -j's
 * value, out-of-memory messages in task output, remembered counts (and the
 * files they must ignore), and the host's /proc figures.
 */
#include "tap.h"
#include "farm/cost.h"
#include "farm/farm.h"
#include "farm/oom.h"
#include "farm/remember.h"
#include "util/err.h"
#include "util/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static int
oom(const char *s)
{
	return oom_in_text(s, strlen(s));
}

static void
test_oom(void)
{
	ok(oom("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.1 GiB)"),
	    "PyTorch's message");
	ok(oom("gpupack-work: alloc: cudaErrorMemoryAllocation: out of memory (cudaMalloc)"), "the runtime's");
	ok(oom("error: CUDA_ERROR_OUT_OF_MEMORY in cuMemAlloc"), "the driver's");
	ok(oom("RuntimeError: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)"), "cuBLAS's");
	ok(oom("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
	    "allocate 1.2GiB on device"), "XLA's");
	ok(oom("ResourceExhaustedError: OOM when allocating tensor with shape[1024] on "
	    "/job:localhost/replica:0/task:0/device:GPU:0"), "TensorFlow's");
	ok(oom("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 8,000,000,512 bytes"), "CuPy's");
	ok(oom("line one\nline two\nCUDA out of memory\n"), "on a later line");
	ok(!oom("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space"), "not Java's heap");
	ok(!oom("fatal: Out of memory, malloc failed (tried to allocate 100 bytes)"), "not a malloc failure");
	ok(!oom("MemoryError\nCannot allocate memory"), "not Python's host memory");
	ok(!oom("out of\nmemory on the GPU"), "words on different lines do not make one message");
	ok(!oom(""), "nothing");
}

static void
test_jobs(void)
{
	struct farm_opts o;

	memset(&o, 0, sizeof o);
	ok(parse_jobs("auto", &o) == 0 && o.jobs_form == JOBS_AUTO && o.auto_max == 0, "-j auto");
	is_int(jobs_per_device(&o, SHARE_MPS), FARM_AUTO_MAX, "auto's cap before packing: FARM_AUTO_MAX");
	ok(parse_jobs("auto:24", &o) == 0 && o.jobs_form == JOBS_AUTO && o.auto_max == 24, "-j auto:24");
	is_int(jobs_per_device(&o, SHARE_MPS), 24, "auto:24's cap: 24");
	ok(parse_jobs("16", &o) == 0 && o.jobs_form == JOBS_COUNT && o.jobs == 16 && o.auto_max == 0,
	    "-j 16 after auto: fixed again");
	ok(parse_jobs("+2", &o) == 0 && o.jobs_form == JOBS_PLUS, "-j +2: parallel's form, fixed");
	ok(parse_jobs("auto:1024", &o) == 0 && o.auto_max == 1024, "auto:1024, the largest cap");
	ok(parse_jobs("auto:1025", &o) < 0 && err_code() == EXIT_USAGE, "auto:1025 refused");
	err_clear();
	ok(parse_jobs("auto:-1", &o) < 0, "auto:-1 refused");
	err_clear();
	ok(parse_jobs("auto:", &o) < 0, "auto: refused");
	err_clear();
	ok(parse_jobs("Auto", &o) < 0, "Auto refused (as parallel, case matters)");
	err_clear();
	ok(parse_jobs("", &o) < 0, "empty refused");
	err_clear();
}

static void
test_parse_remembered(void)
{
	uint64_t key = 0xfeedfacecafebeefULL;
	const char *good = "gpupack-auto 1 feedfacecafebeef 12\n";
	int n = 0;

	ok(remember_parse(good, strlen(good), key, &n) == 0 && n == 12, "a remembered count: 12");
	ok(remember_parse(good, strlen(good), key + 1, &n) < 0, "another command's key: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 12", 35, key, &n) < 0, "no newline: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 12\n\n", 37, key, &n) < 0, "more after it: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 0\n", 34, key, &n) < 0, "0: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 99999999999999\n", 47, key, &n) < 0,
	    "huge: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef -3\n", 35, key, &n) < 0, "negative: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 2 feedfacecafebeef 3\n", 34, key, &n) < 0, "another version: refused");
	err_clear();
}

static void
test_remember_files(void)
{
	char dir[] = "/tmp/gpupack-test-auto.XXXXXX", path[4200], text[128];
	uint64_t key = remember_key(1, SHARE_MPS, "NVIDIA H100 80GB HBM3", 0);
	struct utimbuf old;
	int n = 0;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	setenv("GPUPACK_STATE_DIR", dir, 1);
	ok(remember_load(key, &n) == 0, "nothing remembered yet (and no auto/ made)");
	ok(remember_key(1, SHARE_MPS, "NVIDIA H100 80GB HBM3", 1) != key, "MIG slices are part of the key");
	ok(remember_key(1, SHARE_TIMESLICE, "NVIDIA H100 80GB HBM3", 0) != key, "the share mode too");
	ok(remember_key(2, SHARE_MPS, "NVIDIA H100 80GB HBM3", 0) != key, "the command too");
	remember_store(key, 13);
	ok(remember_load(key, &n) == 1 && n == 13, "stored 13, loaded 13");
	snprintf(path, sizeof path, "%s/auto/%016llx", dir, (unsigned long long)key);
	if ((f = fopen(path, "w"))) {
		fputs("gpupack-auto 1 zzz 3\n", f);
		fclose(f);
	}
	ok(remember_load(key, &n) == 0, "a corrupt file is ignored");
	remember_store(key, 9);
	old.actime = old.modtime = time(NULL) - (REMEMBER_DAYS + 1) * 86400;
	utime(path, &old);
	ok(remember_load(key, &n) == 0, "a stale file is ignored");
	unlink(path);
	ok(symlink("/etc/hostname", path) == 0 && remember_load(key, &n) == 0, "a symlink is not followed");
	unlink(path);
	snprintf(text, sizeof text, "rm -rf '%s'", dir);
	if (system(text) != 0)
		ok(0, "cleanup");
	unsetenv("GPUPACK_STATE_DIR");
}

static void
test_host(void)
{
	char dir[] = "/tmp/gpupack-test-proc.XXXXXX", path[4200], text[128];
	struct host_cpu a, b;
	uint64_t avail = 0;
	FILE *f;

	ok(host_pgid(getpid()) == getpgrp(), "the process group of a live process");
	ok(host_pgid(0x3ffffff0) == -1, "of a gone one: -1");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	setenv("GPUPACK_PROC_DIR", dir, 1);
	snprintf(path, sizeof path, "%s/stat", dir);
	f = fopen(path, "w");
	fputs("cpu  100 0 50 850 0 0 0 0 0 0\ncpu0 1 0 0 0\ncpu1 1 0 0 0\nintr 1\n", f);
	fclose(f);
	ok(host_cpu_read(&a) == 0 && a.busy == 150 && a.total == 1000 && a.ncpu == 2, "/proc/stat read");
	f = fopen(path, "w");
	fputs("cpu  400 0 50 1550 0 0 0 0 0 0\ncpu0 1 0 0 0\ncpu1 1 0 0 0\n", f);
	fclose(f);
	ok(host_cpu_read(&b) == 0 && host_cpu_busy(&a, &b) == 0.3, "busy share between readings: 0.3");
	ok(host_cpu_busy(&b, &b) == -1, "no time between them: unknown");
	snprintf(path, sizeof path, "%s/meminfo", dir);
	f = fopen(path, "w");
	fputs("MemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable: 42 kB\n", f);
	fclose(f);
	ok(host_mem_available(&avail) == 0 && avail == 42 * 1024, "MemAvailable");
	f = fopen(path, "w");
	fputs("MemTotal: 100 kB\n", f);
	fclose(f);
	ok(host_mem_available(&avail) < 0, "a meminfo without MemAvailable: an error");
	err_clear();
	unsetenv("GPUPACK_PROC_DIR");
	snprintf(text, sizeof text, "rm -rf '%s'", dir);
	if (system(text) != 0)
		ok(0, "cleanup");
}

int
main(void)
{
	test_oom();
	test_jobs();
	test_parse_remembered();
	test_remember_files();
	test_host();
	return done_testing();
}
