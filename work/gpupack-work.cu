/*
 * gpupack-work: the CUDA workloads that gpupack's GPU tests and benchmarks
 * run as clients.
 *
 *   gpupack-work [--device N] MODE [options]
 *
 * Modes: matmul (cuBLAS SGEMM, plain, in several streams, or strided-batched,
 * checked against a CPU reference), spin (busy-wait on every SM), alloc (take
 * and touch device memory), smcount (which SMs this process can reach), fault
 * (an illegal address on purpose), info (what CUDA says about the device),
 * serve (one context, then one command per line of stdin).
 *
 * Every run prints exactly one JSON line on stdout, also when it fails after
 * its arguments were accepted, and exits 0 on success, 1 on a CUDA error or a
 * failed check, 2 on a usage error. Usage errors found while reading the
 * arguments print one line on stderr and no JSON. work/README.md lists the
 * keys.
 *
 * Each mode has three phases: setup (context, handles, memory, data, a
 * warm-up launch of every kernel so that lazy module loading is paid for),
 * an optional wait until --start-at, and the timed part, bracketed by
 * t_start and t_end. The wait sits between setup and the timed part so that
 * several processes started with one --start-at really run their GPU work at
 * the same time.
 *
 * On a failure the program prints its JSON line and exits at once; the
 * driver releases the context and its memory. It is plain C-style CUDA: no
 * classes, no templates, no exceptions.
 */
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "gpupack-work"

/* ---------------------------------------------------------------- results */

/*
 * The one JSON line. The common keys live in fixed variables; keys that
 * belong to a mode are appended to `extra` as they become known, so a line
 * printed on failure carries whatever was learnt before it.
 */
static const char *g_mode = "";
static char g_device[256];
static char g_uuid[64];
static double g_t_start, g_t_end;
static int g_timing;		/* 0 not started, 1 running, 2 ended */
static char g_extra[4096];
static size_t g_extra_len;
static int g_emitted;

static double
now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Append s to buf (of size len, holding *used bytes) as a JSON string body. */
static void
json_escape(char *buf, size_t len, size_t *used, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[8];
		size_t n;

		if (c == '"' || c == '\\')
			n = (size_t)snprintf(tmp, sizeof tmp, "\\%c", c);
		else if (c < 0x20)
			n = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", c);
		else {
			tmp[0] = (char)c;
			n = 1;
		}
		if (*used + n >= len)
			return;	/* truncate rather than overflow */
		memcpy(buf + *used, tmp, n);
		*used += n;
		buf[*used] = '\0';
	}
}

/* Append ,"key":raw to the mode's keys; raw is already valid JSON. */
static void
put_raw(const char *key, const char *raw)
{
	int n = snprintf(g_extra + g_extra_len, sizeof g_extra - g_extra_len,
	    ",\"%s\":%s", key, raw);

	if (n > 0 && (size_t)n < sizeof g_extra - g_extra_len)
		g_extra_len += (size_t)n;
	else
		g_extra[g_extra_len] = '\0';	/* drop a key that does not fit */
}

static void
put_int(const char *key, long long v)
{
	char raw[32];

	snprintf(raw, sizeof raw, "%lld", v);
	put_raw(key, raw);
}

/* A double; JSON has no NaN or infinity, so those become null. */
static void
put_fmt_num(const char *key, const char *fmt, double v)
{
	char raw[64];

	if (!isfinite(v)) {
		put_raw(key, "null");
		return;
	}
	snprintf(raw, sizeof raw, fmt, v);
	put_raw(key, raw);
}

static void
put_num(const char *key, double v)
{
	put_fmt_num(key, "%.6g", v);
}

/* A large count that must keep all its digits (flops). */
static void
put_count(const char *key, double v)
{
	put_fmt_num(key, "%.17g", v);
}

static void
put_bool(const char *key, bool v)
{
	put_raw(key, v ? "true" : "false");
}

static void
put_str(const char *key, const char *v)
{
	char raw[512];
	size_t used = 1;

	raw[0] = '"';
	raw[1] = '\0';
	json_escape(raw, sizeof raw - 1, &used, v);
	raw[used++] = '"';
	raw[used] = '\0';
	put_raw(key, raw);
}

/* Append printf-style text to buf (size len, *used bytes so far), truncating. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*used = (size_t)n < len - *used ? *used + (size_t)n : len - 1;
}

/* Print the JSON line: ok when error is NULL. Only the first call prints. */
static void
emit(const char *error)
{
	char line[8192];
	size_t used = 0;

	if (g_emitted)
		return;
	g_emitted = 1;
	if (g_timing == 0)
		g_t_start = g_t_end = now_epoch();	/* failed before the timed part */
	else if (g_timing == 1)
		g_t_end = now_epoch();			/* failed inside it */

	line[0] = '\0';
	append(line, sizeof line, &used, "{\"mode\":\"");
	json_escape(line, sizeof line, &used, g_mode);
	append(line, sizeof line, &used, "\",\"ok\":%s,\"pid\":%ld,\"device\":\"",
	    error ? "false" : "true", (long)getpid());
	json_escape(line, sizeof line, &used, g_device);
	append(line, sizeof line, &used,
	    "\",\"uuid\":\"%s\",\"t_start\":%.6f,\"t_end\":%.6f,\"seconds\":%.6f%s",
	    g_uuid, g_t_start, g_t_end, g_t_end - g_t_start, g_extra);
	if (error) {
		append(line, sizeof line, &used, ",\"error\":\"");
		/* leave room for the closing quote, brace and newline */
		json_escape(line, sizeof line - 4, &used, error);
		append(line, sizeof line, &used, "\"");
	}
	append(line, sizeof line, &used, "}\n");
	fputs(line, stdout);
	fflush(stdout);
}

/*
 * Fail after the arguments were accepted: the JSON line with "ok":false, one
 * line on stderr for people, and the exit code (1, or 2 for a request this
 * device cannot hold).
 */
static void __attribute__((noreturn, format(printf, 2, 3)))
die(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	emit(msg);
	fprintf(stderr, PROG ": %s: %s\n", g_mode, msg);
	exit(code);
}

/* A failed CUDA call: the error's name first, so tests can match it. */
static void __attribute__((noreturn))
die_cuda(cudaError_t e, const char *what)
{
	put_int("cuda_error", (long long)e);
	die(1, "%s: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e), what);
}

static void __attribute__((noreturn))
die_cublas(cublasStatus_t s, const char *what)
{
	put_int("cublas_status", (long long)s);
	die(1, "%s: %s (%s)", cublasGetStatusName(s), cublasGetStatusString(s), what);
}

/* Every CUDA and cuBLAS call goes through one of these. */
#define CUDA_CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) \
		die_cuda(e_, #call); \
} while (0)

#define CUBLAS_CHECK(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) \
		die_cublas(s_, #call); \
} while (0)

/* After every kernel launch: a bad configuration shows up only here. */
#define LAUNCH_CHECK(kernel) do { \
	cudaError_t e_ = cudaGetLastError(); \
	if (e_ != cudaSuccess) \
		die_cuda(e_, "launch of " #kernel); \
} while (0)

/* ------------------------------------------------------------ usage, options */

static void
usage(FILE *f)
{
	fputs("usage: " PROG " [--device N] MODE [options]\n"
	    "modes:\n"
	    "  matmul --n N --iters K [--streams S | --batched P] [--warmup W]\n"
	    "                        cuBLAS SGEMM NxN, K timed iterations, checked on the CPU\n"
	    "  spin --ms M           one kernel busy on every SM for M ms\n"
	    "  alloc --mib M [--hold-ms H]\n"
	    "                        cudaMalloc M MiB, touch it, hold it H ms, free it\n"
	    "  smcount               the SMs this process sees (attribute) and reaches (%smid)\n"
	    "  fault                 a kernel writes to an illegal address (exits 1)\n"
	    "  info                  device name, UUID, SMs, memory, CUDA versions\n"
	    "  serve                 set up once, then run one command (MODE [options]) per line\n"
	    "                        of stdin, each printing its JSON line, until end of input\n"
	    "every mode:\n"
	    "  --start-at EPOCH      set up, then wait until this wall-clock time (seconds,\n"
	    "                        fractional) before the timed part\n"
	    "  --cpu-ms M            M ms of CPU work after each GPU iteration\n"
	    "Prints one JSON line. Exit 0 ok, 1 CUDA error or failed check, 2 usage.\n", f);
}

/* A usage error: one line on stderr, no JSON, exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": %s (see " PROG " --help)\n", msg);
	exit(2);
}

enum mode_bit {
	M_MATMUL = 1 << 0,
	M_SPIN = 1 << 1,
	M_ALLOC = 1 << 2,
	M_SMCOUNT = 1 << 3,
	M_FAULT = 1 << 4,
	M_INFO = 1 << 5,
	M_SERVE = 1 << 6,
	M_ALL = (1 << 7) - 1,
};

enum opt_id {
	O_DEVICE, O_N, O_ITERS, O_STREAMS, O_BATCHED, O_WARMUP,
	O_MS, O_MIB, O_HOLD_MS, O_CPU_MS, O_START_AT, O_COUNT
};

struct opt_spec {
	const char *name;
	bool is_int;
	double min, max;
	unsigned modes;		/* the modes it applies to */
};

#define DAY_MS 86400000.0

/* In enum opt_id order. */
static const struct opt_spec opt_specs[O_COUNT] = {
	{ "device", true, 0, 1023, M_ALL },
	{ "n", true, 1, 65536, M_MATMUL },
	{ "iters", true, 1, 1e9, M_MATMUL },
	{ "streams", true, 1, 64, M_MATMUL },
	{ "batched", true, 1, 65536, M_MATMUL },
	{ "warmup", true, 0, 1e6, M_MATMUL },
	{ "ms", false, 0, DAY_MS, M_SPIN },
	{ "mib", true, 1, 16777216, M_ALLOC },
	{ "hold-ms", false, 0, DAY_MS, M_ALLOC },
	{ "cpu-ms", false, 0, DAY_MS, M_ALL & ~M_SERVE },
	{ "start-at", false, 0, 1e11, M_ALL & ~M_SERVE },
};

struct optval {
	bool given;
	long long i;
	double d;
};

struct opts;
typedef void (*mode_fn)(const struct opts *);

struct mode {
	const char *name;
	unsigned bit;
	mode_fn run;
};

struct opts {
	const struct mode *mode;
	struct optval v[O_COUNT];
};

static void run_matmul(const struct opts *);
static void run_spin(const struct opts *);
static void run_alloc(const struct opts *);
static void run_smcount(const struct opts *);
static void run_fault(const struct opts *);
static void run_info(const struct opts *);
static void run_serve(const struct opts *);

static const struct mode modes[] = {
	{ "matmul", M_MATMUL, run_matmul },
	{ "spin", M_SPIN, run_spin },
	{ "alloc", M_ALLOC, run_alloc },
	{ "smcount", M_SMCOUNT, run_smcount },
	{ "fault", M_FAULT, run_fault },
	{ "info", M_INFO, run_info },
	{ "serve", M_SERVE, run_serve },
};
#define NMODES (sizeof modes / sizeof modes[0])

static const struct mode *
find_mode(const char *name)
{
	for (size_t k = 0; k < NMODES; k++)
		if (strcmp(modes[k].name, name) == 0)
			return &modes[k];
	return NULL;
}

static int
find_opt(const char *name, size_t len)
{
	for (int k = 0; k < O_COUNT; k++)
		if (strlen(opt_specs[k].name) == len && strncmp(opt_specs[k].name, name, len) == 0)
			return k;
	return -1;
}

/* Parse one option's value into v, strictly: all of it, a finite number in range. */
static void
parse_value(int id, const char *text, struct optval *v)
{
	const struct opt_spec *s = &opt_specs[id];
	char *end;
	double d;

	errno = 0;
	if (text[0] == '\0' || text[0] == ' ' || text[0] == '\t')
		usage_error("--%s: '%s': not a number", s->name, text);
	if (s->is_int) {
		long long i = strtoll(text, &end, 10);

		if (*end != '\0')
			usage_error("--%s: '%s': not an integer", s->name, text);
		if (errno == ERANGE || (double)i < s->min || (double)i > s->max)
			usage_error("--%s: %s: out of range (%.0f..%.0f)", s->name, text, s->min, s->max);
		v->i = i;
		v->d = (double)i;
		return;
	}
	d = strtod(text, &end);
	if (*end != '\0' || !isfinite(d))
		usage_error("--%s: '%s': not a number", s->name, text);
	if (errno == ERANGE || d < s->min || d > s->max)
		usage_error("--%s: %s: out of range (%.0f..%.0f)", s->name, text, s->min, s->max);
	v->d = d;
	v->i = (long long)d;
}

/* One "--name value" or "--name=value" at argv[*k]; advances *k past its value. */
static void
parse_option(int argc, char **argv, int *k, struct opts *o)
{
	const char *name = argv[*k] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const char *value;
	int id = find_opt(name, len);

	if (id < 0)
		usage_error("%s: unknown option", argv[*k]);
	if (o->v[id].given)
		usage_error("--%s given twice", opt_specs[id].name);
	if (eq)
		value = eq + 1;
	else if (*k + 1 < argc)
		value = argv[++*k];
	else
		usage_error("--%s needs a value", opt_specs[id].name);
	parse_value(id, value, &o->v[id]);
	o->v[id].given = true;
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	for (int k = 1; k < argc; k++) {
		const char *arg = argv[k];

		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strncmp(arg, "--", 2) == 0) {
			parse_option(argc, argv, &k, o);
			continue;
		}
		if (arg[0] == '-')
			usage_error("%s: unknown option", arg);
		if (o->mode != NULL)
			usage_error("%s: unexpected argument after mode %s", arg, o->mode->name);
		o->mode = find_mode(arg);
		if (o->mode == NULL)
			usage_error("%s: unknown mode (matmul, spin, alloc, smcount, fault, info, serve)",
			    arg);
	}
	if (o->mode == NULL)
		usage_error("no mode given");
	for (int id = 0; id < O_COUNT; id++)
		if (o->v[id].given && !(opt_specs[id].modes & o->mode->bit))
			usage_error("--%s does not apply to %s", opt_specs[id].name, o->mode->name);
	if (o->mode->bit == M_MATMUL) {
		if (!o->v[O_N].given)
			usage_error("matmul: --n N is required");
		if (!o->v[O_ITERS].given)
			usage_error("matmul: --iters K is required");
		if (o->v[O_STREAMS].given && o->v[O_BATCHED].given)
			usage_error("matmul: --streams and --batched exclude each other");
	}
	if (o->mode->bit == M_SPIN && !o->v[O_MS].given)
		usage_error("spin: --ms M is required");
	if (o->mode->bit == M_ALLOC && !o->v[O_MIB].given)
		usage_error("alloc: --mib M is required");
}

/* ------------------------------------------------------------ host timing */

static void
sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Real CPU work for ms milliseconds: arithmetic on a volatile accumulator, so
 * the compiler keeps it, checked against the monotonic clock now and then.
 */
static void
cpu_work(double ms)
{
	volatile double acc = 1.0;
	double end;

	if (ms <= 0)
		return;
	end = now_mono() + ms / 1e3;
	do {
		for (int k = 0; k < 4096; k++)
			acc = acc * 1.0000001 + 1e-9;
	} while (now_mono() < end);
}

/*
 * The start of the timed part: note t_ready (setup done), wait for
 * --start-at if given (absolute sleep on the wall clock, so that drift and
 * signals do not move it), then take t_start. An instant already past
 * starts at once and says how late.
 */
static void
begin_timed(const struct opts *o)
{
	/* setup is done: callers size their --start-at margin from this */
	put_fmt_num("t_ready", "%.6f", now_epoch());
	if (o->v[O_START_AT].given) {
		double when = o->v[O_START_AT].d;
		double now = now_epoch();
		struct timespec ts;
		int rc;

		put_fmt_num("start_at", "%.6f", when);
		if (now >= when) {
			put_num("late_ms", (now - when) * 1e3);
		} else {
			ts.tv_sec = (time_t)floor(when);
			ts.tv_nsec = (long)((when - floor(when)) * 1e9);
			if (ts.tv_nsec >= 1000000000L)
				ts.tv_nsec = 999999999L;
			while ((rc = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL)) == EINTR)
				;
			if (rc != 0)
				die(1, "clock_nanosleep: %s", strerror(rc));
		}
	}
	g_t_start = now_epoch();
	g_timing = 1;
}

/* The end of the timed part: call it after cudaDeviceSynchronize. */
static void
end_timed(void)
{
	g_t_end = now_epoch();
	g_timing = 2;
}

/* ------------------------------------------------------------ device */

struct device {
	int ordinal;
	int sms;		/* cudaDevAttrMultiProcessorCount, as this process sees it */
	cudaDeviceProp props;
};

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form nvidia-smi prints. */
static void
format_uuid(char *out, size_t len, const cudaUUID_t *u)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	/*
	 * On a MIG device CUDA reports the MIG instance's UUID bytes but not
	 * that it is one; the process can only see a MIG device when it was
	 * named by its MIG- UUID, so the environment tells.
	 */
	const char *prefix = (cvd && strncmp(cvd, "MIG-", 4) == 0) ? "MIG" : "GPU";

	snprintf(out, len, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", prefix,
	    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
	    b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * Pick the device and create the context now, so that neither lands in the
 * timed part. No driver, or no device visible, is the one failure that says
 * "no CUDA device".
 */
static void
open_device(const struct opts *o, struct device *dev)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);

	memset(dev, 0, sizeof *dev);
	if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary) {
		put_int("cuda_error", (long long)e);
		die(1, "no CUDA device: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
	}
	if (e != cudaSuccess)
		die_cuda(e, "cudaGetDeviceCount");
	if (count == 0)
		die(1, "no CUDA device: none visible");
	dev->ordinal = o->v[O_DEVICE].given ? (int)o->v[O_DEVICE].i : 0;
	if (dev->ordinal >= count)
		die(2, "--device %d: out of range: %d device%s visible", dev->ordinal, count,
		    count == 1 ? "" : "s");
	CUDA_CHECK(cudaSetDevice(dev->ordinal));
	CUDA_CHECK(cudaFree(0));
	CUDA_CHECK(cudaGetDeviceProperties(&dev->props, dev->ordinal));
	CUDA_CHECK(cudaDeviceGetAttribute(&dev->sms, cudaDevAttrMultiProcessorCount, dev->ordinal));
	snprintf(g_device, sizeof g_device, "%s", dev->props.name);
	format_uuid(g_uuid, sizeof g_uuid, &dev->props.uuid);
}

/* ------------------------------------------------------------ device code */

__device__ static inline unsigned long long
globaltimer_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ static inline unsigned int
smid(void)
{
	unsigned int id;

	asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
	return id;
}

/*
 * Random matrix entries, the same on host and device: a counter-based hash
 * (splitmix64) of (seed, index), so the CPU reference regenerates any entry
 * without copying the matrices back. The result is an odd multiple of 2^-23
 * in (-1, 1): never zero, and exact in float, so host and device agree bit
 * for bit.
 */
__host__ __device__ static inline float
uniform(unsigned long long seed, unsigned long long i)
{
	unsigned long long z = seed + i * 0x9E3779B97F4A7C15ull;
	unsigned int u;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	u = (unsigned int)(z >> 41);		/* 23 random bits */
	return (float)(2u * u + 1u) * (1.0f / 8388608.0f) - 1.0f;
}

__global__ static void
fill_uniform(float *x, size_t count, unsigned long long seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
		x[i] = uniform(seed, i);
}

/*
 * Busy until a deadline on the global nanosecond timer. The first thread to
 * run sets the deadline (now + ns) for the whole grid; blocks that only get
 * an SM after it has passed (a grid larger than what fits, e.g. under an
 * MPS SM cap) leave at once. So the kernel lasts ns of wall time however
 * many SMs it gets, and keeps every SM it gets busy. The global timer, not
 * clock64, because the SM clock varies with boost and load. Block 0 records
 * SM cycles and nanoseconds spent, which give the SM clock during the spin.
 */
__global__ static void
spin_kernel(unsigned long long *deadline, unsigned long long ns, unsigned long long *probe)
{
	__shared__ unsigned long long end;
	unsigned long long t0;
	long long c0;

	if (threadIdx.x == 0) {
		unsigned long long now = globaltimer_ns();
		unsigned long long old = atomicCAS(deadline, 0ull, now + ns);

		end = old != 0 ? old : now + ns;
	}
	__syncthreads();
	t0 = globaltimer_ns();
	c0 = clock64();
	while (globaltimer_ns() < end)
		;
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		probe[0] = (unsigned long long)(clock64() - c0);
		probe[1] = globaltimer_ns() - t0;
	}
}

/*
 * Mark the SM each block runs on. Each block stays ~spin_ns so that the
 * blocks spread over every SM the process may use rather than a few SMs
 * running many short blocks in turn.
 */
__global__ static void
smcount_kernel(int *seen, unsigned int cap, unsigned long long spin_ns)
{
	if (threadIdx.x == 0) {
		unsigned int id = smid();
		unsigned long long t0 = globaltimer_ns();

		while (globaltimer_ns() - t0 < spin_ns)
			;
		if (id < cap)
			seen[id] = 1;
		else
			atomicAdd(&seen[cap], 1);	/* counted as out of range */
	}
}

/* One store through p; p comes from the host so the compiler cannot judge it. */
__global__ static void
fault_kernel(int *p)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*(volatile int *)p = 42;
}

/* ------------------------------------------------------------ matmul */

/*
 * The relative error allowed for one entry of C, measured against the sum
 * of |a_ik * b_kj| over k. FP32 accumulation in cuBLAS stays near 1e-7 of
 * that sum; TF32 is never enabled here (default math mode).
 */
#define MATMUL_TOL 1e-4
#define MATMUL_SAMPLES 64
#define SEED_BASE 0x6770757061636bull	/* "gpupack" */

/* One independent problem: nmat matrices of n x n each in A, B and C. */
struct mm_set {
	float *a, *b, *c;
	unsigned long long seed_a, seed_b;
	cudaStream_t stream;
	cublasHandle_t handle;
};

struct mm {
	int n;
	int nsets;		/* --streams S, else 1 */
	int nmat;		/* matrices per set: --batched P, else 1 */
	bool batched;
	size_t elems;		/* floats per array of one set: n * n * nmat */
	struct mm_set *sets;
};

static void
fill_device(float *x, size_t count, unsigned long long seed, int sms)
{
	fill_uniform<<<sms * 8, 256>>>(x, count, seed);
	LAUNCH_CHECK(fill_uniform);
}

/* Refuse, as a usage error, a problem whose buffers exceed free memory. */
static void
mm_check_memory(const struct mm *m)
{
	size_t free_b = 0, total_b = 0;
	/*
	 * The arrays, plus room for cuBLAS's workspace per handle (32 MiB on
	 * Hopper) and the library's own allocations.
	 */
	double need = 3.0 * (double)m->elems * sizeof(float) * m->nsets
	    + (double)m->nsets * 32 * 1048576.0 + 64 * 1048576.0;

	CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
	put_int("mem_needed", (long long)need);
	if (need > (double)free_b)
		die(2, "too large: %d set%s of 3 x %d x %d x %d floats need %.2f GiB of "
		    "device memory, %.2f GiB free of %.2f GiB", m->nsets, m->nsets == 1 ? "" : "s",
		    m->nmat, m->n, m->n, need / 1073741824.0, (double)free_b / 1073741824.0,
		    (double)total_b / 1073741824.0);
}

static void
mm_setup(struct mm *m, const struct device *dev)
{
	m->sets = (struct mm_set *)calloc((size_t)m->nsets, sizeof *m->sets);
	if (m->sets == NULL)
		die(1, "out of host memory");
	for (int s = 0; s < m->nsets; s++) {
		struct mm_set *set = &m->sets[s];
		size_t bytes = m->elems * sizeof(float);

		set->seed_a = SEED_BASE + 2ull * (unsigned long long)s;
		set->seed_b = set->seed_a + 1;
		CUDA_CHECK(cudaMalloc((void **)&set->a, bytes));
		CUDA_CHECK(cudaMalloc((void **)&set->b, bytes));
		CUDA_CHECK(cudaMalloc((void **)&set->c, bytes));
		fill_device(set->a, m->elems, set->seed_a, dev->sms);
		fill_device(set->b, m->elems, set->seed_b, dev->sms);
		/* Own stream and handle per set: cuBLAS handles are not shared across streams. */
		CUDA_CHECK(cudaStreamCreateWithFlags(&set->stream, cudaStreamNonBlocking));
		CUBLAS_CHECK(cublasCreate(&set->handle));
		CUBLAS_CHECK(cublasSetStream(set->handle, set->stream));
		/* Plain FP32: never TF32, the check's bound depends on it. */
		CUBLAS_CHECK(cublasSetMathMode(set->handle, CUBLAS_DEFAULT_MATH));
	}
	CUDA_CHECK(cudaDeviceSynchronize());
}

/* One iteration: C = A * B in every set (column-major, as cuBLAS wants). */
static void
mm_enqueue(const struct mm *m)
{
	const float alpha = 1.0f, beta = 0.0f;
	long long stride = (long long)m->n * m->n;
	int n = m->n;

	for (int s = 0; s < m->nsets; s++) {
		const struct mm_set *set = &m->sets[s];

		if (m->batched)
			CUBLAS_CHECK(cublasSgemmStridedBatched(set->handle, CUBLAS_OP_N, CUBLAS_OP_N,
			    n, n, n, &alpha, set->a, n, stride, set->b, n, stride,
			    &beta, set->c, n, stride, m->nmat));
		else
			CUBLAS_CHECK(cublasSgemm(set->handle, CUBLAS_OP_N, CUBLAS_OP_N,
			    n, n, n, &alpha, set->a, n, set->b, n, &beta, set->c, n));
	}
	CUDA_CHECK(cudaGetLastError());
}

/*
 * |c - ref| / sum_k |a_ik b_kj| for entry (i, j) of matrix mat in set s, the
 * reference in double from regenerated inputs. NaN when c is NaN.
 */
static double
mm_entry_error(const struct mm *m, int s, int mat, long long i, long long j)
{
	const struct mm_set *set = &m->sets[s];
	unsigned long long n = (unsigned long long)m->n;
	unsigned long long base = (unsigned long long)mat * n * n;
	double ref = 0, mag = 0;
	float got;

	CUDA_CHECK(cudaMemcpy(&got, set->c + base + (unsigned long long)i + (unsigned long long)j * n,
	    sizeof got, cudaMemcpyDeviceToHost));
	for (unsigned long long k = 0; k < n; k++) {
		double p = (double)uniform(set->seed_a, base + (unsigned long long)i + k * n) *
		    (double)uniform(set->seed_b, base + k + (unsigned long long)j * n);

		ref += p;
		mag += fabs(p);
	}
	return fabs((double)got - ref) / mag;	/* mag > 0: entries are never zero */
}

/*
 * Compare MATMUL_SAMPLES entries with the CPU. Samples cycle through every
 * matrix (each stream's set, each batch member) when there are at most as
 * many matrices as samples, else spread evenly from the first to the last;
 * the first two are the corners. Returns the largest error, NaN if any entry
 * was NaN.
 */
static double
mm_check(const struct mm *m)
{
	long long total = (long long)m->nsets * m->nmat;
	unsigned long long lcg = 12345;
	double worst = 0;

	for (int k = 0; k < MATMUL_SAMPLES; k++) {
		long long t, i, j;
		double err;

		if (total <= MATMUL_SAMPLES)
			t = k % total;
		else
			t = (long long)k * (total - 1) / (MATMUL_SAMPLES - 1);
		if (k == 0) {
			i = j = 0;
		} else if (k == 1) {
			i = j = m->n - 1;
		} else {
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			i = (long long)((lcg >> 33) % (unsigned long long)m->n);
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			j = (long long)((lcg >> 33) % (unsigned long long)m->n);
		}
		err = mm_entry_error(m, (int)(t / m->nmat), (int)(t % m->nmat), i, j);
		if (isnan(err) || err > worst)
			worst = err;
		if (isnan(worst))
			break;
	}
	return worst;
}

static void
mm_teardown(struct mm *m)
{
	for (int s = 0; s < m->nsets; s++) {
		struct mm_set *set = &m->sets[s];

		CUBLAS_CHECK(cublasDestroy(set->handle));
		CUDA_CHECK(cudaStreamDestroy(set->stream));
		CUDA_CHECK(cudaFree(set->a));
		CUDA_CHECK(cudaFree(set->b));
		CUDA_CHECK(cudaFree(set->c));
	}
	free(m->sets);
	m->sets = NULL;
}

static void
run_matmul(const struct opts *o)
{
	struct device dev;
	struct mm m;
	long long iters = o->v[O_ITERS].i;
	long long warmup = o->v[O_WARMUP].given ? o->v[O_WARMUP].i : 2;
	double cpu_ms = o->v[O_CPU_MS].d;
	double flops, err;

	memset(&m, 0, sizeof m);
	m.n = (int)o->v[O_N].i;
	m.nsets = o->v[O_STREAMS].given ? (int)o->v[O_STREAMS].i : 1;
	m.batched = o->v[O_BATCHED].given;
	m.nmat = m.batched ? (int)o->v[O_BATCHED].i : 1;
	m.elems = (size_t)m.n * (size_t)m.n * (size_t)m.nmat;
	put_int("n", m.n);
	put_int("iters", iters);
	put_int("streams", m.nsets);
	put_int("batched", m.batched ? m.nmat : 0);
	put_int("warmup", warmup);
	put_num("cpu_ms", cpu_ms);

	open_device(o, &dev);
	mm_check_memory(&m);
	mm_setup(&m, &dev);
	for (long long w = 0; w < warmup; w++)
		mm_enqueue(&m);
	CUDA_CHECK(cudaDeviceSynchronize());
	/*
	 * Poison C (all bits set is a NaN) so that the check fails unless the
	 * timed iterations themselves wrote it; beta = 0 means cuBLAS never
	 * reads C.
	 */
	for (int s = 0; s < m.nsets; s++)
		CUDA_CHECK(cudaMemset(m.sets[s].c, 0xff, m.elems * sizeof(float)));
	CUDA_CHECK(cudaDeviceSynchronize());

	begin_timed(o);
	for (long long it = 0; it < iters; it++) {
		mm_enqueue(&m);
		if (cpu_ms > 0) {
			/* The mixed task: wait for this iteration, then compute on the CPU. */
			CUDA_CHECK(cudaDeviceSynchronize());
			cpu_work(cpu_ms);
		}
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	end_timed();

	/*
	 * Test hook for tests/gpu/work.sh: spoil entry (0, 0) of the first
	 * matrix, which the check always samples, to show that it notices.
	 */
	if (getenv("GPUPACK_WORK_SPOIL") != NULL) {
		const float spoiled = 12345.0f;

		CUDA_CHECK(cudaMemcpy(m.sets[0].c, &spoiled, sizeof spoiled, cudaMemcpyHostToDevice));
	}
	flops = 2.0 * (double)m.n * (double)m.n * (double)m.n * (double)iters *
	    (double)m.nsets * (double)m.nmat;
	put_count("flops", flops);
	put_num("tflops", flops / (g_t_end - g_t_start) / 1e12);
	err = mm_check(&m);
	put_bool("checksum_ok", err <= MATMUL_TOL);
	put_num("max_rel_err", err);
	if (!(err <= MATMUL_TOL))
		die(1, "checksum mismatch: max relative error %.3g > %.0e", err, MATMUL_TOL);
	mm_teardown(&m);
	emit(NULL);
}

/* ------------------------------------------------------------ spin */

static void
run_spin(const struct opts *o)
{
	struct device dev;
	double ms = o->v[O_MS].d;
	unsigned long long *d_buf, probe[2];	/* d_buf: deadline, then probe[2] */
	int per_sm = 0, threads = 256, blocks;

	put_num("ms", ms);
	put_num("cpu_ms", o->v[O_CPU_MS].d);
	open_device(o, &dev);
	/* As many resident blocks as fit, so that every SM is kept busy. */
	CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin_kernel, threads, 0));
	if (per_sm < 1)
		per_sm = 1;
	blocks = dev.sms * per_sm;
	put_int("blocks", blocks);
	CUDA_CHECK(cudaMalloc((void **)&d_buf, 3 * sizeof *d_buf));

	/* Warm-up: load the kernel, spin 0 ns. */
	CUDA_CHECK(cudaMemset(d_buf, 0, 3 * sizeof *d_buf));
	spin_kernel<<<blocks, threads>>>(d_buf, 0, d_buf + 1);
	LAUNCH_CHECK(spin_kernel);
	CUDA_CHECK(cudaMemset(d_buf, 0, 3 * sizeof *d_buf));
	CUDA_CHECK(cudaDeviceSynchronize());

	begin_timed(o);
	spin_kernel<<<blocks, threads>>>(d_buf, (unsigned long long)(ms * 1e6), d_buf + 1);
	LAUNCH_CHECK(spin_kernel);
	CUDA_CHECK(cudaDeviceSynchronize());
	cpu_work(o->v[O_CPU_MS].d);
	end_timed();

	CUDA_CHECK(cudaMemcpy(probe, d_buf + 1, sizeof probe, cudaMemcpyDeviceToHost));
	/* cycles per ns is GHz; the SM clock block 0 ran at, in MHz */
	put_num("sm_mhz", probe[1] > 0 ? (double)probe[0] / (double)probe[1] * 1e3 : 0.0);
	CUDA_CHECK(cudaFree(d_buf));
	emit(NULL);
}

/* ------------------------------------------------------------ alloc */

static void
run_alloc(const struct opts *o)
{
	struct device dev;
	size_t bytes = (size_t)o->v[O_MIB].i << 20;
	void *p = NULL;
	cudaError_t e;

	put_int("mib", o->v[O_MIB].i);
	put_num("hold_ms", o->v[O_HOLD_MS].d);
	put_num("cpu_ms", o->v[O_CPU_MS].d);
	open_device(o, &dev);

	begin_timed(o);
	e = cudaMalloc(&p, bytes);
	put_bool("alloc_ok", e == cudaSuccess);
	if (e != cudaSuccess)
		die_cuda(e, "cudaMalloc");
	/* Touch every byte: a reservation alone proves little under MPS limits. */
	CUDA_CHECK(cudaMemset(p, 0xa5, bytes));
	CUDA_CHECK(cudaDeviceSynchronize());
	cpu_work(o->v[O_CPU_MS].d);
	sleep_ms(o->v[O_HOLD_MS].d);
	CUDA_CHECK(cudaFree(p));
	CUDA_CHECK(cudaDeviceSynchronize());
	end_timed();
	emit(NULL);
}

/* ------------------------------------------------------------ smcount */

#define SMID_CAP 4096		/* %smid values are below this on every GPU so far */
#define SMCOUNT_SPIN_NS 50000ull

static void
run_smcount(const struct opts *o)
{
	struct device dev;
	static int seen[SMID_CAP + 1];
	int *d_seen, blocks, distinct = 0, max_id = -1;

	put_num("cpu_ms", o->v[O_CPU_MS].d);
	open_device(o, &dev);
	put_int("sms_attr", dev.sms);
	/* Far more blocks than SMs: every SM the process may use gets some. */
	blocks = 64 * dev.sms;
	put_int("blocks", blocks);
	CUDA_CHECK(cudaMalloc((void **)&d_seen, sizeof seen));

	smcount_kernel<<<1, 32>>>(d_seen, SMID_CAP, 0);	/* warm-up: load the kernel */
	LAUNCH_CHECK(smcount_kernel);
	CUDA_CHECK(cudaMemset(d_seen, 0, sizeof seen));
	CUDA_CHECK(cudaDeviceSynchronize());

	begin_timed(o);
	smcount_kernel<<<blocks, 32>>>(d_seen, SMID_CAP, SMCOUNT_SPIN_NS);
	LAUNCH_CHECK(smcount_kernel);
	CUDA_CHECK(cudaDeviceSynchronize());
	cpu_work(o->v[O_CPU_MS].d);
	end_timed();

	CUDA_CHECK(cudaMemcpy(seen, d_seen, sizeof seen, cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaFree(d_seen));
	for (int k = 0; k < SMID_CAP; k++) {
		if (seen[k]) {
			distinct++;
			max_id = k;
		}
	}
	put_int("sms_seen", distinct);
	put_int("smid_max", max_id);
	if (seen[SMID_CAP] != 0)
		die(1, "%d blocks ran on an SM id >= %d", seen[SMID_CAP], SMID_CAP);
	if (distinct == 0)
		die(1, "no block recorded its SM");
	emit(NULL);
}

/* ------------------------------------------------------------ fault */

static void
run_fault(const struct opts *o)
{
	struct device dev;
	int *valid;
	/* Low addresses are never mapped on the device. */
	int *bad = (int *)(uintptr_t)0x10;
	cudaError_t e;

	put_num("cpu_ms", o->v[O_CPU_MS].d);
	open_device(o, &dev);
	/* Warm-up through a valid pointer: proves the kernel itself is sound. */
	CUDA_CHECK(cudaMalloc((void **)&valid, sizeof *valid));
	fault_kernel<<<1, 32>>>(valid);
	LAUNCH_CHECK(fault_kernel);
	CUDA_CHECK(cudaDeviceSynchronize());

	begin_timed(o);
	fault_kernel<<<1, 32>>>(bad);
	e = cudaGetLastError();		/* the fault itself shows at the sync */
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	end_timed();
	put_bool("fault_seen", e != cudaSuccess);
	if (e != cudaSuccess)
		die_cuda(e, "the illegal write");
	die(1, "the kernel wrote to an illegal address but CUDA reported no error");
}

/* ------------------------------------------------------------ info */

static void
run_info(const struct opts *o)
{
	struct device dev;
	size_t free_b = 0, total_b = 0;
	int runtime = 0, driver = 0, clock_khz = 0;
	char cc[16];

	put_num("cpu_ms", o->v[O_CPU_MS].d);
	open_device(o, &dev);
	begin_timed(o);
	CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
	cpu_work(o->v[O_CPU_MS].d);
	end_timed();
	CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
	CUDA_CHECK(cudaDriverGetVersion(&driver));
	CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev.ordinal));
	snprintf(cc, sizeof cc, "%d.%d", dev.props.major, dev.props.minor);

	put_int("sms", dev.sms);
	put_str("cc", cc);
	put_int("mem_total", (long long)total_b);
	put_int("mem_free", (long long)free_b);
	/* Best effort: all memory in use on the device once this context exists. */
	put_int("context_mem_used", (long long)(total_b - free_b));
	put_int("runtime_version", runtime);
	put_int("driver_version", driver);
	put_int("clock_khz", clock_khz);
	put_bool("mig", strncmp(g_uuid, "MIG-", 4) == 0);
	emit(NULL);
}

/* ------------------------------------------------------------ serve */

/* Forget the last command's line: the next emit() prints a new one. */
static void
reset_line(void)
{
	g_mode = "";
	g_t_start = g_t_end = 0;
	g_timing = 0;
	g_extra_len = 0;
	g_extra[0] = '\0';
	g_emitted = 0;
}

#define SERVE_LINE 4096
#define SERVE_WORDS 64

/*
 * A worker that stays: the context (and cuBLAS) are set up once, then each
 * line of stdin is a command, "MODE [options]" as on the command line,
 * words separated by blanks, run as if this program had been started with
 * it. Callers such as `gpupack bench` keep a few of these per GPU instead of
 * paying a process and a CUDA context for every measurement. Each command
 * prints its own JSON line; a command that fails ends the server with its
 * exit code after its line, as a one-shot run would, and a bad command line
 * is a usage error (exit 2). End of input: exit 0.
 */
static void
run_serve(const struct opts *o)
{
	struct device dev;
	cublasHandle_t warm;
	char line[SERVE_LINE];

	open_device(o, &dev);
	/* load cuBLAS now, so that the first command's setup is like every other's */
	CUBLAS_CHECK(cublasCreate(&warm));
	CUBLAS_CHECK(cublasDestroy(warm));
	put_int("sms", dev.sms);
	put_fmt_num("t_ready", "%.6f", now_epoch());
	emit(NULL);
	while (fgets(line, sizeof line, stdin) != NULL) {
		char *argv[SERVE_WORDS + 2], *save = NULL, *w;
		struct opts c;
		int argc = 0;

		if (strchr(line, '\n') == NULL && !feof(stdin))
			usage_error("serve: a command line longer than %d bytes", SERVE_LINE - 2);
		argv[argc++] = (char *)PROG;
		for (w = strtok_r(line, " \t\r\n", &save); w != NULL; w = strtok_r(NULL, " \t\r\n", &save)) {
			if (argc > SERVE_WORDS)
				usage_error("serve: more than %d words in a command", SERVE_WORDS);
			argv[argc++] = w;
		}
		argv[argc] = NULL;
		if (argc == 1)
			continue;	/* a blank line */
		parse_args(argc, argv, &c);
		if (c.mode->bit == M_SERVE)
			usage_error("serve: a command cannot be serve");
		if (!c.v[O_DEVICE].given)
			c.v[O_DEVICE] = o->v[O_DEVICE];
		reset_line();
		g_mode = c.mode->name;
		c.mode->run(&c);
	}
	if (ferror(stdin)) {
		reset_line();
		g_mode = "serve";
		die(1, "reading commands: %s", strerror(errno));
	}
}

/* ------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	g_mode = o.mode->name;
	o.mode->run(&o);
	return 0;
}
