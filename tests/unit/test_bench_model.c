/*
 * test_bench_model: the simulated GPU of `gpupack --sim FILE bench`
 * (src/bench/model.c). Over a grid of devices, sizes, P, CPU work and modes
 * no rate passes what SGEMM sustains (below the FP32 peak) and no mode
 * beats the single-process limit (efficiency at most 100%: issue 32 saw
 * 788%); and on an H100 the model lands near what gpupack bench measured
 * (bench/results/2026-11-22-bench-full-h100/run1), in the directions
 * measured.
 */
#include "bench/bench.h"
#include "tap.h"

#include <math.h>

static double
tflops(const struct bench_model *m, int n, int mode, int p, int cpu)
{
	return 2.0 * n * n * (double)n / bench_model_call_s(m, n, mode, p, cpu) / 1e12;
}

static int
near(double got, double want, double tol)
{
	return fabs(got / want - 1) <= tol;
}

static void
grid(void)
{
	static const int ccs[][2] = {{7, 0}, {8, 0}, {8, 6}, {9, 0}, {10, 0}, {12, 0}, {5, 2}};
	static const int sms[] = {14, 16, 26, 60, 108, 132};
	static const int sizes[] = {16, 64, 256, 512, 1024, 2048, 4096, 8192};
	static const int procs[] = {1, 2, 3, 4, 8, 16, 48};
	static const int cpus[] = {0, 2, 50};
	long points = 0, over_rate = 0, over_limit = 0, bad = 0;

	for (size_t a = 0; a < sizeof ccs / sizeof ccs[0]; a++)
	for (size_t s = 0; s < sizeof sms / sizeof sms[0]; s++) {
		struct bench_model m;

		bench_model_init(&m, sms[s], ccs[a][0], ccs[a][1]);
		for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
		for (size_t c = 0; c < sizeof cpus / sizeof cpus[0]; c++) {
			int n = sizes[z], p = procs[i], cpu = cpus[c];
			double limit = fmax(tflops(&m, n, BM_BATCHED, p, cpu),
			    tflops(&m, n, BM_STREAMS, p, cpu));

			for (int mode = 0; mode < BM_NMODES; mode++) {
				double v = tflops(&m, n, mode, p, cpu);

				points++;
				bad += !(v > 0) || !isfinite(v);
				over_rate += v * 1e12 > m.rate * (1 + 1e-12) || !(m.rate < m.peak);
				over_limit += v > limit * (1 + 1e-12);
			}
		}
	}
	ok(bad == 0, "every point of %ld has a positive, finite rate", points);
	is_int(over_rate, 0, "no rate passes what SGEMM sustains, below the peak");
	is_int(over_limit, 0, "no mode beats the single-process limit: efficiency at most 100%%");
}

static void
peaks(void)
{
	struct bench_model m;

	bench_model_init(&m, 132, 9, 0);
	ok(near(m.peak, 66.9e12, 0.002) && m.known, "H100: 132 SMs x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s");
	bench_model_init(&m, 108, 8, 0);
	ok(near(m.peak, 19.5e12, 0.002), "A100: 108 SMs x 64 x 2 x 1.41 GHz = 19.5 TFLOP/s");
	bench_model_init(&m, 60, 9, 0);
	ok(near(m.peak, 66.9e12 * 60 / 132, 0.002), "a MIG device: its own SMs");
	bench_model_init(&m, 100, 5, 2);
	ok(!m.known && m.lanes == 128 && m.ghz == 1.5, "an architecture not in the table: assumed, and said");
}

/* What gpupack bench measured on an H100 (full run 1), and how near the model comes. */
static void
h100(void)
{
	struct bench_model m;
	double ts, mps;

	bench_model_init(&m, 132, 9, 0);
	ok(near(tflops(&m, 4096, BM_TIMESLICE, 1, 0), 51.8, 0.05), "one process N=4096: 51.8 within 5%%");
	ok(near(tflops(&m, 2048, BM_TIMESLICE, 1, 0), 50.7, 0.05), "one process N=2048: 50.7 within 5%%");
	ok(near(tflops(&m, 1024, BM_TIMESLICE, 1, 0), 38.3, 0.10), "one process N=1024: 38.3 within 10%%");
	ok(near(tflops(&m, 512, BM_TIMESLICE, 1, 0), 15.1, 0.25), "one process N=512: 15.1 within 25%%");
	ok(near(tflops(&m, 256, BM_TIMESLICE, 1, 0), 1.91, 0.10), "one process N=256: 1.91 within 10%%");
	ok(near(tflops(&m, 2048, BM_TIMESLICE, 4, 0), 45.6, 0.05), "time-slicing P=4 N=2048: 45.6 within 5%%");
	ok(near(tflops(&m, 512, BM_MPS, 8, 0), 30.6, 0.10), "MPS P=8 N=512: 30.6 within 10%%");
	ok(near(tflops(&m, 512, BM_BATCHED, 16, 0), 47.0, 0.20), "batched P=16 N=512: 47.0 within 20%%");
	ok(near(tflops(&m, 256, BM_MPS, 8, 0), 7.81, 0.15), "MPS P=8 N=256: 7.81 within 15%%");
	ts = tflops(&m, 512, BM_TIMESLICE, 8, 0);
	mps = tflops(&m, 512, BM_MPS, 8, 0);
	ok(mps / ts > 1.3 && mps / ts < 2.2, "N=512 P=8: MPS over time-slicing %.2fx (measured 1.77x)",
	    mps / ts);
	ok(tflops(&m, 2048, BM_TIMESLICE, 2, 0) < tflops(&m, 2048, BM_TIMESLICE, 1, 0),
	    "N=2048: time-slicing two loses to one process (measured 0.90x)");
	ok(tflops(&m, 256, BM_MPS_CAPPED, 8, 0) > tflops(&m, 256, BM_MPS, 8, 0),
	    "N=256 P=8: capped clients beat uncapped ones (measured 14.9 against 7.8)");
	ok(tflops(&m, 1024, BM_MPS, 8, 2) > tflops(&m, 1024, BM_TIMESLICE, 1, 2) * 3,
	    "2 ms of CPU between calls: 8 MPS clients fill gaps one process leaves");
}

int
main(void)
{
	grid();
	peaks();
	h100();
	return done_testing();
}
