/* test_farm_progress: the --bar / --eta line and the busy share the summaries report. */
#include "tap.h"
#include "farm/progress.h"

#include <string.h>

static void
test_busy_share(void)
{
	struct farm_stats s = {0};
	struct group g = {0};

	s.t0 = 100;
	s.t_end = 110;
	g.busy = 2;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 20, "2 s busy of 10: 20%%");
	/* tasks still running at the end: the time since busy_since counts too */
	g.running = 1;
	g.busy_since = 105;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 70, "busy till the end: 2 + 5 s of 10");
	g.busy = 8;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 100, "never more than the makespan");
	g.running = 0;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 80, "nothing running: busy alone");
	s.t_end = s.t0;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 0, "no makespan: 0");
}

static void
test_line(void)
{
	struct farm_stats s = {0};
	struct group g[2];
	char buf[512];

	memset(g, 0, sizeof g);

	g[0].cap = 2;
	g[0].jobs = 2;
	g[0].running = 1;
	g[0].gpu_index = 0;
	g[1].cap = 0;   /* a device with no slot is not shown */
	g[1].gpu_index = 1;
	s.t0 = 0;
	s.inputs = 10;
	s.inputs_done = 1;
	s.done = 4;
	s.failed = 1;
	s.running = 1;
	progress_line(&s, g, 2, 1, 10, buf, sizeof buf);
	is_str(buf, " 50% [##########..........] 5/10 done, 1 running, 1 failed eta 10s | 0:1/2",
	    "--bar: half done, 5 tasks in 10 s, 5 left");
	s.done = 1;
	s.failed = 0;
	progress_line(&s, g, 2, 1, 20, buf, sizeof buf);
	is_str(buf, " 10% [##..................] 1/10 done, 1 running, 0 failed eta 180s | 0:1/2",
	    "--bar: a tenth, 1 task in 20 s: 9 left take 180 s");
	s.inputs_done = 0;
	progress_line(&s, g, 2, 1, 20, buf, sizeof buf);
	is_str(buf, " 1/>=10 done, 1 running, 0 failed eta ? | 0:1/2",
	    "input not read to its end: no bar, no estimate");
	s.inputs_done = 1;
	s.done = 0;
	progress_line(&s, g, 2, 0, 20, buf, sizeof buf);
	is_str(buf, " 0/10 done, 1 running, 0 failed eta ? | 0:1/2", "nothing ended yet: no estimate");
	s.done = 10;
	s.skipped = 2;
	s.inputs = 12;
	progress_line(&s, g, 2, 1, 20, buf, sizeof buf);
	is_str(buf, "100% [####################] 10/10 done, 1 running, 0 failed eta 0s | 0:1/2",
	    "skipped inputs are not counted");
}

int
main(void)
{
	test_busy_share();
	test_line();
	return done_testing();
}
