/*
 * fuzz_state: the state gpupack reads back from files and from /proc: an
 * MPS daemon record (key=value lines; a pid is kept only with a non-zero
 * start time, a uuid only when it names the record's own directory),
 * /proc/PID/stat (a start time is never 0), and the control daemon's
 * replies (pid lists, ps rows). The input is tried as each.
 */
#include "share/mps.h"
#include "util/err.h"
#include "util/proc.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct mps_daemon d;
	struct proc_stat st;
	struct mps_ps_row *rows = NULL;
	pid_t *pids = NULL;
	int n = 0;

	memset(&d, 0, sizeof d);
	str_copy(d.uuid, "GPU-0935e153-333f-178e-fcc2-6348e796093e", sizeof d.uuid);
	if (mps_record_parse(text, &d) == 0) {
		if ((d.pid != 0 && d.start_time == 0) || (d.owner_pid != 0 && d.owner_start == 0))
			abort();
		if (strcmp(d.uuid, "GPU-0935e153-333f-178e-fcc2-6348e796093e") != 0)
			abort();
		if (d.pid < 0 || d.pid > (1 << 22) || !(d.limits.sm_pct >= 0 && d.limits.sm_pct <= 100))
			abort();
	}
	err_clear();
	if (proc_parse_stat(text, &st) == 0 && (st.start == 0 || st.pid <= 0))
		abort();
	mps_parse_pids(text, &pids, &n);
	for (int i = 0; i < n; i++)
		if (pids[i] <= 0)
			abort();
	free(pids);
	mps_parse_ps(text, &rows, &n);
	for (int i = 0; i < n; i++)
		if (rows[i].pid <= 0)
			abort();
	free(rows);
	err_clear();
	free(text);
	return 0;
}
