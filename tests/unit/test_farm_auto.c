/*
 * test_farm_auto: the pieces of -j auto that read the outside world: -j's
 * value, out-of-memory messages in task output, remembered counts (and the
 * files they must ignore), the host's /proc figures, and the step an
 * out-of-memory end takes (which tasks it stops at the GPU's door).
 */
#include "tap.h"
#include "farm/auto.h"
#include "farm/cost.h"
#include "farm/farm.h"
#include "farm/oom.h"
#include "farm/remember.h"
#include "farm/state.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/host.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	/* a fatal GPU fault: not out of memory, but said */
	ok(!oom("torch.AcceleratorError: CUDA error: device-side assert triggered"), "an assert is no OOM");
#define FAULT(s) oom_fault_in_text(s, strlen(s))
	ok(FAULT("Traceback\ntorch.AcceleratorError: CUDA error: device-side assert triggered\n"), "PyTorch's assert");
	ok(FAULT("RuntimeError: CUDA error: an illegal memory access was encountered"), "an illegal address");
	ok(FAULT("gpupack-work: cudaErrorIllegalAddress"), "the runtime's name");
	ok(FAULT("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure"), "the driver's");
	ok(!FAULT("CUDA out of memory"), "out of memory is no fault");
	ok(!FAULT("assert triggered on the host"), "a host assert is not the GPU's");
	ok(!FAULT(""), "nothing");
#undef FAULT
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
	ok(parse_jobs("auto:energy", &o) == 0 && o.jobs_form == JOBS_AUTO && o.auto_energy && o.auto_max == 0,
	    "-j auto:energy");
	ok(parse_jobs("auto:energy:12", &o) == 0 && o.auto_energy && o.auto_max == 12, "-j auto:energy:12");
	ok(parse_jobs("auto", &o) == 0 && !o.auto_energy, "-j auto after it: the plain goal again");
	ok(parse_jobs("auto:energyx", &o) < 0, "auto:energyx refused");
	err_clear();
	ok(parse_jobs("auto:energy:", &o) < 0, "auto:energy: refused");
	err_clear();
	ok(parse_jobs("auto:energy:0", &o) < 0, "auto:energy:0 refused");
	err_clear();
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
	const char *v2 = "gpupack-auto 2 feedfacecafebeef 16 1020 870 1024,1100,22528\n";
	struct remembered r, back;
	char text[512];
	size_t n;

	ok(remember_parse(good, strlen(good), key, &r) == 0 && r.count == 12 && r.nfp == 0 &&
	    r.cores_start == 0, "version 1, a count alone: 12");
	ok(remember_parse(v2, strlen(v2), key, &r) == 0 && r.count == 16 && r.cores_start == 1.02 &&
	    r.cores_run == 0.87 && r.nfp == 3 && r.fp[0] == 1024ull << 20 && r.fp[2] == 22528ull << 20,
	    "version 2: count, cores starting and on the GPU, three footprints");
	n = remember_format(key, &r, text, sizeof text);
	ok(n == strlen(v2) && memcmp(text, v2, n) == 0, "written back the same");
	r.nfp = 0;
	n = remember_format(key, &r, text, sizeof text);
	ok(remember_parse(text, n, key, &back) == 0 && back.nfp == 0 && strstr(text, " -\n"),
	    "no footprints: '-'");
	ok(remember_parse(good, strlen(good), key + 1, &r) < 0, "another command's key: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 12", 35, key, &r) < 0, "no newline: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 12\n\n", 37, key, &r) < 0, "more after it: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 0\n", 34, key, &r) < 0, "0: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef 99999999999999\n", 47, key, &r) < 0,
	    "huge: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 1 feedfacecafebeef -3\n", 35, key, &r) < 0, "negative: refused");
	err_clear();
	ok(remember_parse("gpupack-auto 3 feedfacecafebeef 3\n", 34, key, &r) < 0, "another version: refused");
	err_clear();
	{
		static const char *const bad[] = {
			"gpupack-auto 2 feedfacecafebeef 16 1020 870 22528,1024\n",   /* not ascending */
			"gpupack-auto 2 feedfacecafebeef 16 1020 870\n",              /* no footprints field */
			"gpupack-auto 2 feedfacecafebeef 16 1020 870 ,\n",
			"gpupack-auto 2 feedfacecafebeef 16 1020 870 0\n",            /* a footprint of 0 */
			"gpupack-auto 2 feedfacecafebeef 16 99999999 870 -\n",        /* cores out of range */
			"gpupack-auto 2 feedfacecafebeef 16 1020  870 -\n",           /* two spaces */
			"gpupack-auto 2 feedfacecafebeef 16 1020 870 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
		};

		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			ok(remember_parse(bad[i], strlen(bad[i]), key, &r) < 0 && r.count == 0,
			    "corrupt version 2 refused (%zu), nothing taken from it", i);
			err_clear();
		}
	}
}

static void
test_remember_files(void)
{
	char dir[] = "/tmp/gpupack-test-auto.XXXXXX", path[4200], text[128];
	uint64_t key = remember_key(1, SHARE_MPS, 0, "NVIDIA H100 80GB HBM3", 0);
	struct remembered r = {13, 1.0, 0.5, 2, {1ull << 30, 2ull << 30}}, got;
	struct utimbuf old;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	setenv("GPUPACK_STATE_DIR", dir, 1);
	ok(remember_load(key, &got) == 0, "nothing remembered yet (and no auto/ made)");
	ok(remember_key(1, SHARE_MPS, 0, "NVIDIA H100 80GB HBM3", 1) != key, "MIG slices are part of the key");
	ok(remember_key(1, SHARE_TIMESLICE, 0, "NVIDIA H100 80GB HBM3", 0) != key, "the share mode too");
	ok(remember_key(2, SHARE_MPS, 0, "NVIDIA H100 80GB HBM3", 0) != key, "the command too");
	ok(remember_key(1, SHARE_MPS, 1, "NVIDIA H100 80GB HBM3", 0) != key, "the energy goal too");
	remember_store(key, &r);
	ok(remember_load(key, &got) == 1 && got.count == 13 && got.nfp == 2 && got.fp[1] == 2ull << 30 &&
	    got.cores_run == 0.5, "stored, loaded the same");
	snprintf(path, sizeof path, "%s/auto/%016llx", dir, (unsigned long long)key);
	if ((f = fopen(path, "w"))) {
		fputs("gpupack-auto 1 zzz 3\n", f);
		fclose(f);
	}
	ok(remember_load(key, &got) == 0, "a corrupt file is ignored");
	remember_store(key, &r);
	old.actime = old.modtime = time(NULL) - (REMEMBER_DAYS + 1) * 86400;
	utime(path, &old);
	ok(remember_load(key, &got) == 0, "a stale file is ignored");
	unlink(path);
	ok(symlink("/etc/hostname", path) == 0 && remember_load(key, &got) == 0, "a symlink is not followed");
	unlink(path);
	snprintf(text, sizeof text, "rm -rf '%s'", dir);
	if (system(text) != 0)
		ok(0, "cleanup");
	unsetenv("GPUPACK_STATE_DIR");
}

/* Write text to DIR/NAME (its directories made). */
static void
put(const char *dir, const char *name, const char *text)
{
	char path[4200], cmd[4400];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0 || !(f = fopen(path, "w"))) {
		ok(0, "writing %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

/* A task's CPU time: its process, its children's (waited for), its live descendants, their waits. */
static void
test_task_cpu(const char *dir)
{
	double cpu = 0, wait = 0, hz = (double)sysconf(_SC_CLK_TCK);
	int rc;

	/* pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
	put(dir, "500/stat", "500 (python3 (x) y) S 1 500 1 0 -1 0 0 0 0 0 300 100 50 50 20 0 1 0 99\n");
	put(dir, "500/schedstat", "4000000000 1500000000 77\n");
	put(dir, "500/task/500/children", "501 \n");
	put(dir, "501/stat", "501 (sh) R 500 500 1 0 -1 0 0 0 0 0 100 0 0 0 20 0 1 0 100\n");
	put(dir, "501/schedstat", "1000000000 500000000 9\n");
	rc = host_task_cpu(500, &cpu, &wait);
	ok(rc == 0 && cpu > 599.9 / hz && cpu < 600.1 / hz && wait > 1.99 &&
	    wait < 2.01, "a task's tree: %.2f s of CPU (600 ticks), %.2f s waited for a CPU", cpu, wait);
	put(dir, "501/schedstat", "garbage\n");
	ok(host_task_cpu(500, &cpu, &wait) == 0 && wait == -1, "a descendant's wait unreadable: unknown");
	ok(host_task_cpu(502, &cpu, &wait) < 0 && cpu == -1, "a task gone: -1");
	put(dir, "503/stat", "503 (x) S 1 503\n");
	ok(host_task_cpu(503, &cpu, &wait) < 0, "a torn stat line: -1");
	{
		/* 600 and 69 children, a tick of CPU each: a tree is read to its first 64 processes (TREE_MAX) */
		char kids[1024] = "", name[64], line[160];
		size_t k = 0;

		for (int pid = 600; pid < 670; pid++) {
			snprintf(name, sizeof name, "%d/stat", pid);
			snprintf(line, sizeof line, "%d (w) S %d %d 1 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 100\n", pid,
			    pid == 600 ? 1 : 600, 600);
			put(dir, name, line);
			if (pid > 600)
				k += (size_t)snprintf(kids + k, sizeof kids - k, "%d ", pid);
		}
		put(dir, "600/task/600/children", kids);
		rc = host_task_cpu(600, &cpu, &wait);
		ok(rc == 0 && cpu > 63.9 / hz && cpu < 64.1 / hz,
		    "a tree of 70 processes: the first 64 counted (%.0f ticks)", cpu * hz);
	}
	unsetenv("GPUPACK_PROC_DIR");
	ok(host_task_cpu(getpid(), &cpu, &wait) == 0 && cpu >= 0, "our own process, in the real /proc");
	setenv("GPUPACK_PROC_DIR", dir, 1);
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
	{
		/* a process allowed CPU 1 only (taskset, a Slurm cpuset): that CPU is its host */
		cpu_set_t m;
		struct host_cpu c;
		const char *st = "cpu  400 0 50 1550 0 0 0 0 0 0\ncpu0 300 0 0 100 0 0 0 0\n"
		    "cpu1 100 0 50 850 0 0 0 0\n";
		int rc;

		CPU_ZERO(&m);
		CPU_SET(1, &m);
		/* parsed before the message reads c: arguments are evaluated in no set order */
		rc = host_cpu_parse(st, &m, &c);
		ok(rc == 0 && c.ncpu == 1 && c.busy == 150 && c.total == 1000,
		    "affinity to CPU 1: its counters and one CPU (%d, %llu/%llu)", c.ncpu, c.busy, c.total);
		CPU_SET(0, &m);
		ok(host_cpu_parse(st, &m, &c) == 0 && c.ncpu == 2 && c.busy == 450 && c.total == 2000,
		    "both CPUs: the machine's line");
		CPU_ZERO(&m);
		CPU_SET(7, &m);
		ok(host_cpu_parse(st, &m, &c) == 0 && c.ncpu == 2 && c.busy == 450,
		    "a mask naming no listed CPU: the machine");
		ok(host_cpu_parse("intr 1\n", &m, &c) < 0, "no cpu line: an error");
		err_clear();
	}
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
	test_task_cpu(dir);
	unsetenv("GPUPACK_PROC_DIR");
	snprintf(text, sizeof text, "rm -rf '%s'", dir);
	if (system(text) != 0)
		ok(0, "cleanup");
}

/*
 * A process in a group of its own, already stopped (it stopped itself, and
 * we saw it stop): the door finds it stopped at its first look, whatever
 * the machine's load. -1 when it could not be made.
 */
static pid_t
stopped_child(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setpgid(0, 0);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	if (pid < 0)
		return -1;
	setpgid(pid, pid);
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	return pid;
}

/*
 * A task that ran out of device memory beside another steps its device's
 * controller at once (auto_ended), and that step answers its device's
 * tasks only: one there that the gate holds back is stopped at the door
 * (kept stopped: it stopped, and holds no lock); one of another device
 * that its gate holds back too, but that is not stopped (it held a lock at
 * its own device's last step, so it was let go), is left to that device's
 * next step.
 */
static void
test_oom_step(void)
{
	const char *said = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n";
	struct farm_opts o;
	struct gpu_info gpu;
	struct gpu_system sys;
	struct group g[2];
	struct task t[3];
	struct run r[3];
	struct farm f;
	pid_t door = stopped_child(), other = stopped_child();
	double now = clock_mono();
	int st;

	if (door < 0 || other < 0) {
		ok(0, "stopped children");
		goto out;
	}
	memset(&o, 0, sizeof o);
	o.jobs_auto = 1;
	o.share = SHARE_MPS;
	memset(&gpu, 0, sizeof gpu);
	snprintf(gpu.name, sizeof gpu.name, "NVIDIA H100 80GB HBM3");
	memset(&sys, 0, sizeof sys);
	sys.ngpus = 1;
	sys.gpus = &gpu;
	memset(g, 0, sizeof g);
	for (int i = 0; i < 2; i++) {
		g[i].t.gi = g[i].t.ci = -1;
		g[i].t.mem_total = g[i].t.mem_free = 80ull << 30;
		g[i].cap = 8;
	}
	memset(t, 0, sizeof t);
	memset(r, 0, sizeof r);
	memset(&f, 0, sizeof f);
	f.o = &o;
	f.g = g;
	f.ng = 2;
	f.r = r;
	f.nr = 3;
	/* nothing remembered: a state directory that is not there */
	setenv("GPUPACK_STATE_DIR", "/nonexistent/gpupack-test-auto", 1);
	if (auto_setup(&f, &sys) < 0 || !g[0].ctl || !g[1].ctl) {
		ok(0, "auto_setup");
		err_clear();
		goto out;
	}
	/* r[0] ended out of memory beside r[1] on device 0; r[2] runs on device 1 */
	for (int i = 0; i < 3; i++) {
		r[i].task = &t[i];
		r[i].g = &g[i < 2 ? 0 : 1];
		r[i].pid = i == 0 ? 0x3ffffff0 : i == 1 ? door : other;
		r[i].file[0] = r[i].file[1] = -1;
		obuf_init(&r[i].out[0]);
		obuf_init(&r[i].out[1]);
		auto_started(&f, &r[i], now);
		r[i].ct.m.pause = i > 0;
	}
	g[0].running = 2;
	g[1].running = 1;
	r[0].exited = 1;
	obuf_add(&r[0].out[1], said, strlen(said));
	is_int(auto_oom(&f, &r[0]), 1, "out of memory beside another task: the packing's, run again");
	auto_ended(&f, &r[0], 0, now);
	ok(r[1].paused && g[0].waited == 1, "its device's task the gate holds: stopped at the door (%d, %d)",
	    r[1].paused, g[0].waited);
	ok(!r[2].paused && g[1].waited == 0, "another device's task: left to its own device's step (%d, %d)",
	    r[2].paused, g[1].waited);
	auto_finish(&f, 0);
	for (int i = 0; i < 3; i++) {
		obuf_free(&r[i].out[0]);
		obuf_free(&r[i].out[1]);
	}
out:
	unsetenv("GPUPACK_STATE_DIR");
	if (door > 0) {
		kill(door, SIGKILL);
		waitpid(door, &st, 0);
	}
	if (other > 0) {
		kill(other, SIGKILL);
		waitpid(other, &st, 0);
	}
}

int
main(void)
{
	test_oom();
	test_jobs();
	test_parse_remembered();
	test_remember_files();
	test_host();
	test_oom_step();
	return done_testing();
}
