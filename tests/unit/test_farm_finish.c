/*
 * test_farm_finish: --timeout N%, the median of the successful runtimes it
 * takes N% of: the lower median of the last 999 (GNU parallel's window).
 */
#include "tap.h"
#include "farm/state.h"

#include <stdlib.h>
#include <string.h>

static void
test_median_window(void)
{
	struct farm_opts o;
	struct farm f;

	memset(&o, 0, sizeof o);
	memset(&f, 0, sizeof f);
	o.timeout_pct = 300;
	f.o = &o;
	ok(launch_timeout(&f) >= 1e6, "no runtime yet: no limit to speak of");
	/* 499 runs of 1 s, then 500 of 2 s: the median of 999 is 2 s */
	for (int i = 0; i < 999; i++) {
		f.started++;
		finish_record_runtime(&f, i < 499 ? 1 : 2);
	}
	ok(f.rt.nruntimes == 999 && f.rt.median == 2, "999 runtimes: the median is 2 s (%zu, %g)", f.rt.nruntimes,
	    f.rt.median);
	is_int((int)launch_timeout(&f), 6, "--timeout 300%%: 6 s");
	/* the thousandth (1 s) takes the place of an earlier one (1 s too): 2 s still, not 1 of 1000 */
	f.started++;
	finish_record_runtime(&f, 1);
	ok(f.rt.nruntimes == 999 && f.rt.median == 2, "the window stays 999: the median is still 2 s (%zu, %g)",
	    f.rt.nruntimes, f.rt.median);
	/* 999 more of 3 s push every earlier one out */
	for (int i = 0; i < 999; i++) {
		f.started++;
		finish_record_runtime(&f, 3);
	}
	ok(f.rt.nruntimes == 999 && f.rt.median == 3, "999 more of 3 s: the median is 3 s (%zu, %g)", f.rt.nruntimes,
	    f.rt.median);
	free(f.rt.runtimes);
}

int
main(void)
{
	test_median_window();
	return done_testing();
}
