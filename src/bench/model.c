/*
 * model: the simulated GPU of `gpupack --sim FILE bench`. With no GPU to
 * measure, every point's time comes from this model of cuBLAS SGEMM on the
 * simulated device, so that the tables, charts and recommendation show what
 * the benchmark would say, labelled as simulated everywhere.
 *
 * The device: FP32 peak = SMs x FP32 lanes per SM x 2 x boost clock, from
 * the compute capability (NVIDIA's published figures; an unknown one gets
 * 128 lanes at 1.5 GHz, and says so). Fitted once to gpupack bench's full
 * run on an H100 (bench/results/2026-11-22-bench-full-h100/run1):
 *   - SGEMM sustains RATE_OF_PEAK of the peak (53.1 of 66.9 TFLOP/s);
 *   - a call costs CALL_S besides its work: one process did 1.91 and 15.1
 *     TFLOP/s at N = 256 and 512, 17.5 us a call either way; of it,
 *     GPU_CALL_S holds the GPU (time-slicing saturated at 9 us a call at
 *     N = 256), the rest is the host's launch;
 *   - time-slicing runs one context at a time and loses SWITCH_LOSS to the
 *     switches (45.6 against 50.7 at N = 2048);
 *   - MPS runs the calls of MPS_OVERLAP clients at once (4.1x one process
 *     at N = 256, no more at P = 8 or 16).
 * Per matmul, with W = 2 N^3 / rate the work and L = CALL_S:
 *   one process             L + W
 *   streams (S = P)         max(P L, L + P W) / P   one host thread launches
 *   batched                 (L + P W) / P           one call for P matrices
 *   mps                     (L + k W) / k, k = min(P, MPS_OVERLAP)
 *   mps-capped              (L + P W) / P           each client on its own SMs
 *   time-slicing (P > 1)    max((Lg + W) / (1 - SWITCH_LOSS), (L + W) / P)
 * With M ms of CPU work between calls each process also waits for it:
 * P processes cannot beat (M + L + W) / P a matmul, one process with
 * streams or batched adds M / P. No mode beats batched at the same P (one
 * call holding all the work): the model's efficiency never passes 100%,
 * and no rate passes the sustained rate, below the peak.
 */
#include "bench/bench.h"

#include <math.h>
#include <string.h>

#define RATE_OF_PEAK 0.79
#define CALL_S 17e-6
#define GPU_CALL_S 7.5e-6
#define SWITCH_LOSS 0.10
#define MPS_OVERLAP 4

struct arch {
	int major, minor;   /* minor -1: any */
	int lanes;          /* FP32 lanes per SM */
	double ghz;         /* boost clock of the data-centre part */
};

static const struct arch arches[] = {
	{7, 0, 64, 1.53},   /* V100 */
	{8, 0, 64, 1.41},   /* A100, A30 */
	{8, -1, 128, 1.70}, /* A10, L4, L40 (8.6, 8.9) */
	{9, 0, 128, 1.98},  /* H100, H200 */
	{10, -1, 128, 1.96},
	{12, -1, 128, 1.90},
};

void
bench_model_init(struct bench_model *m, int sms, int cc_major, int cc_minor)
{
	memset(m, 0, sizeof *m);
	m->on = 1;
	m->sms = sms > 0 ? sms : 1;
	m->lanes = 128;
	m->ghz = 1.5;
	for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++) {
		const struct arch *a = &arches[i];

		if (a->major == cc_major && (a->minor < 0 || a->minor == cc_minor)) {
			m->lanes = a->lanes;
			m->ghz = a->ghz;
			m->known = 1;
			break;
		}
	}
	m->peak = m->sms * (double)m->lanes * 2 * m->ghz * 1e9;
	m->rate = m->peak * RATE_OF_PEAK;
	m->call_s = CALL_S;
}

static double
batched_s(double l, double w, int p)
{
	return (l + p * w) / p;
}

/* Seconds a matmul of the point, aggregate, without CPU work. */
static double
gpu_s(const struct bench_model *m, double w, int mode, int p)
{
	double l = m->call_s;
	int k;

	if (p <= 1)
		return l + w;
	switch (mode) {
	case BM_STREAMS:
		return fmax(p * l, l + p * w) / p;
	case BM_BATCHED:
	case BM_MPS_CAPPED:
		return batched_s(l, w, p);
	case BM_MPS:
		k = p < MPS_OVERLAP ? p : MPS_OVERLAP;
		return (l + k * w) / k;
	default:
		return fmax((GPU_CALL_S + w) / (1 - SWITCH_LOSS), (l + w) / p);
	}
}

double
bench_model_call_s(const struct bench_model *m, int size, int mode, int procs, int cpu_ms)
{
	double w = 2.0 * size * size * (double)size / m->rate;
	double cpu = cpu_ms / 1000.0, t = gpu_s(m, w, mode, procs), floor;
	int p = procs > 0 ? procs : 1;

	if (mode == BM_STREAMS || mode == BM_BATCHED || p == 1)
		t += cpu / p;
	else
		t = fmax(t, (cpu + m->call_s + w) / p);
	/* nothing beats one call holding all the work (and its CPU work) */
	floor = batched_s(m->call_s, w, p) + cpu / p;
	return fmax(t, floor);
}
