/*
 * test_gpu_sim: the simulated GPU's energy counter (src/gpu/sim.c) on a clock
 * the test drives. Like NVML's, a counter with a resolution moves only when it
 * updates: neither the machine's uptime (a large sum of small powers, whose
 * rounding once moved it by 1 mJ between updates) nor a change of power moves
 * it between two updates. Linked with clock_mono wrapped (Makefile).
 */
#include "gpu/backend.h"
#include "gpu/energy.h"
#include "util/fs.h"
#include "util/str.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double __wrap_clock_mono(void);

static double fake_now;

double
__wrap_clock_mono(void)
{
	return fake_now;
}

static void
machine(const char *file, int util)
{
	char *text = xasprintf("gpupack-topology 1\ndriver 580.1\ncuda 13.0\n"
	    "gpu 0\nuuid GPU-aaaa\nname Test GPU\nmemory total=80GiB\nsms 132\ncompute-capability 9.0\n"
	    "  utilization gpu=%d memory=0\n", util);

	write_file_atomic(file, text, strlen(text), 0600);
	free(text);
}

/* Read the counter every read_s for n reads from t0, the power dropping halfway; count the
 * changes, and those seen where no update came between two reads. */
static void
run(const char *file, double t0, double step_s, double read_s, int n, const char *what)
{
	struct gpu_backend *b;
	struct gpu_energy_meter m;
	struct gpu_energy_res res;
	uint64_t mj, prev = 0;
	int changes = 0, between = 0, updates = 0, i;

	machine(file, 100);
	if (!ok(gpu_sim_open(file, 1, &b) == 0, "%s: the simulation opens", what))
		return;
	gpu_energy_meter_init(&m);
	for (i = 0; i < n; i++) {
		fake_now = t0 + i * read_s;
		if (i == n / 2)
			machine(file, 0);
		if (b->energy(b, 0, &mj) < 0)
			break;
		gpu_energy_meter_feed(&m, fake_now, mj);
		if (i > 0) {
			int updated = floor(fake_now / step_s) > floor((fake_now - read_s) / step_s);

			updates += updated;
			if (mj != prev) {
				changes++;
				between += !updated;
			}
		}
		prev = mj;
	}
	is_int(i, n, "%s: every read answered", what);
	is_int(between, 0, "%s: no change between two updates", what);
	ok(changes >= updates - 1 && changes <= updates, "%s: a change at each update (%d of %d)", what,
	    changes, updates);
	ok(gpu_energy_meter_res(&m, &res) == 0 && fabs(res.period_s - step_s) <= 2 * read_s,
	    "%s: the period measured is the update's (%g s)", what, res.period_s);
	gpu_close(b);
}

int
main(void)
{
	char dir[] = "/tmp/gpupack-test-sim.XXXXXX", file[PATH_MAX];

	if (!ok(mkdtemp(dir) != NULL, "scratch directory"))
		return done_testing();
	snprintf(file, sizeof file, "%s/m.topo", dir);
	setenv("GPUPACK_SIM_ENERGY_STEP_MS", "300", 1);
	run(file, 5.0004, 0.3, 0.001, 3000, "just started, a 300 ms counter");
	run(file, 1.0e7 + 0.0004, 0.3, 0.001, 3000, "up 116 days, a 300 ms counter");
	setenv("GPUPACK_SIM_ENERGY_STEP_MS", "100", 1);
	run(file, 3.2e7 + 0.0007, 0.1, 0.00133, 2000, "up a year, a 100 ms counter read every 1.33 ms");
	unlink(file);
	rmdir(dir);
	return done_testing();
}
