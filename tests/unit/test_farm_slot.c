/* test_farm_slot: how many tasks a device takes; --total; the default device set. */
#include "tap.h"
#include "farm/cost.h"
#include "farm/farm.h"
#include "farm/slot.h"
#include "util/err.h"

#include <stdlib.h>

static void
test_capacity(void)
{
	const char *lim;
	uint64_t h100 = GIB(79) + MIB(600); /* 79.6 GiB free, as the simulated H100 */

	is_int(pack_capacity(SHARE_TIMESLICE, 8, GIB(20), h100, 0, &lim), 3,
	    "--mem 20G -j 8 on 79.6 GiB: 3 (20 GiB + context each)");
	is_str(lim, "--mem", "bounded by --mem");
	is_int(pack_capacity(SHARE_TIMESLICE, 8, GIB(1), h100, 0, &lim), 8, "small tasks: -j bounds");
	is_str(lim, "-j", "bounded by -j");
	is_int(pack_capacity(SHARE_TIMESLICE, 0, 0, h100, 0, &lim), FARM_JOBS_TIMESLICE, "timeslice default");
	is_int(pack_capacity(SHARE_MPS, 0, 0, h100, 0, &lim), FARM_JOBS_MPS, "mps default");
	is_int(pack_capacity(SHARE_EXCLUSIVE, 0, 0, h100, 0, &lim), 1, "exclusive: one");
	is_int(pack_capacity(SHARE_MPS, 100, 0, h100, 0, &lim), FARM_MPS_MAX_CLIENTS,
	    "mps: never more clients than the server accepts");
	is_str(lim, "mps-clients", "bounded by the client limit");
	is_int(pack_capacity(SHARE_MPS, 100, 0, GIB(100), 1, &lim), FARM_MPS_MAX_CLIENTS / 7,
	    "a 1-slice MIG device: 48 * 1/7");
	is_int(pack_capacity(SHARE_MPS, 100, 0, GIB(100), 3, &lim), FARM_MPS_MAX_CLIENTS * 3 / 7,
	    "a 3-slice MIG device: 48 * 3/7");
	/* the server's own memory counts under MPS: exactly 2 tasks fit without it, 1 with it */
	is_int(pack_capacity(SHARE_TIMESLICE, 8, GIB(1), 2 * (GIB(1) + FARM_CTX_OVERHEAD), 0, &lim), 2,
	    "two fit exactly without a server");
	is_int(pack_capacity(SHARE_MPS, 8, GIB(1), 2 * (GIB(1) + FARM_CTX_OVERHEAD), 0, &lim), 1,
	    "the MPS server's memory takes room");
	is_int(pack_capacity(SHARE_TIMESLICE, 8, GIB(90), h100, 0, &lim), 0, "too big: no slot");
}

static void
test_total(void)
{
	struct group g[3] = {{.cap = 4}, {.cap = 4}, {.cap = 1}};
	int sum;

	pack_total(g, 3, 5);
	sum = g[0].cap + g[1].cap + g[2].cap;
	is_int(sum, 5, "--total 5 caps the sum");
	ok(g[0].cap == 2 && g[1].cap == 2 && g[2].cap == 1, "dealt evenly (%d %d %d)", g[0].cap,
	    g[1].cap, g[2].cap);
	pack_total(g, 3, 100);
	is_int(g[0].cap + g[1].cap + g[2].cap, 5, "a larger --total changes nothing");
}

static void
test_selection(void)
{
	const char *from, *sel;

	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("SLURM_STEP_GPUS");
	unsetenv("SLURM_JOB_GPUS");
	sel = slot_default_selection(NULL, &from);
	/* from is read after the call: an argument list does not order them */
	ok(sel == NULL, "nothing set: every device (%s)", from);
	setenv("SLURM_JOB_GPUS", "1,2", 1);
	is_str(slot_default_selection(NULL, &from), "1,2", "Slurm's job GPUs");
	setenv("SLURM_STEP_GPUS", "3", 1);
	is_str(slot_default_selection(NULL, &from), "3", "the step's GPUs before the job's");
	setenv("CUDA_VISIBLE_DEVICES", "GPU-x", 1);
	is_str(slot_default_selection(NULL, &from), "GPU-x", "CUDA_VISIBLE_DEVICES first");
	is_str(from, "CUDA_VISIBLE_DEVICES", "and says so");
	is_str(slot_default_selection("0", &from), "0", "--gpus above all");
}

static void
test_halt(void)
{
	struct farm_opts o = {0};

	ok(parse_halt("now,fail=3", &o) == 0 && o.halt_when == HALT_NOW && o.halt_count == 3 &&
	    o.halt_on == HALT_ON_FAIL, "now,fail=3");
	ok(parse_halt("soon,fail=20%", &o) == 0 && o.halt_when == HALT_SOON && o.halt_pct == 20 &&
	    o.halt_count == 0, "soon,fail=20%%");
	ok(parse_halt("now,success=1", &o) == 0 && o.halt_on == HALT_ON_SUCCESS, "now,success=1");
	ok(parse_halt("soon,done=2", &o) == 0 && o.halt_on == HALT_ON_DONE && o.halt_count == 2,
	    "soon,done=2");
	ok(parse_halt("5%", &o) == 0 && o.halt_when == HALT_SOON && o.halt_pct == 5, "5%% = soon,fail=5%%");
	ok(parse_halt("2", &o) == 0 && o.halt_when == HALT_NOW && o.halt_count == 1, "2 = now,fail=1");
	ok(parse_halt("never", &o) == 0 && o.halt_when == HALT_NEVER, "never");
	ok(parse_halt("later,fail=1", &o) < 0, "bad when");
	ok(parse_halt("now,fail=0", &o) < 0, "fail=0 refused");
	ok(parse_halt("now,fail=101%", &o) < 0, "over 100%% refused");
	ok(parse_halt("now,fail=x", &o) < 0, "not a number");
}

static void
test_jobs(void)
{
	struct farm_opts o = {0};

	ok(parse_jobs("3", &o) == 0 && jobs_per_device(&o, SHARE_MPS) == 3, "-j 3");
	ok(parse_jobs("0", &o) == 0 && jobs_per_device(&o, SHARE_MPS) == FARM_JOBS_MAX,
	    "-j 0: as many as fit");
	ok(parse_jobs("50%", &o) == 0 && jobs_per_device(&o, SHARE_MPS) == 2, "-j 50%% of mps's 4");
	ok(parse_jobs("+2", &o) == 0 && jobs_per_device(&o, SHARE_TIMESLICE) == 4, "-j +2");
	ok(parse_jobs("-9", &o) == 0 && jobs_per_device(&o, SHARE_MPS) == 1, "-j -9: at least 1");
	ok(parse_jobs("x", &o) < 0 && parse_jobs("", &o) < 0 && parse_jobs("-x", &o) < 0 &&
	    parse_jobs("1.5", &o) < 0, "bad -j");
	err_clear();
}

int
main(void)
{
	test_capacity();
	test_total();
	test_selection();
	test_halt();
	test_jobs();
	return done_testing();
}
