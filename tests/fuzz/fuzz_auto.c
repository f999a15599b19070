/*
 * fuzz_auto: what -j auto reads from outside: -j's value (auto, auto:N, N),
 * a remembered count from the state directory (a file anyone may have
 * corrupted) and a task's stderr searched for out-of-memory messages. A
 * parsed -j asks for at least one task per device (auto: with a cap in
 * range); a parsed remembered count is in range.
 */
#include "farm/cost.h"
#include "farm/farm.h"
#include "farm/oom.h"
#include "farm/remember.h"
#include "util/err.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct farm_opts o;
	int n = 0;

	memset(&o, 0, sizeof o);
	if (parse_jobs(text, &o) == 0 && !(o.jobs_form == JOBS_AUTO ? o.auto_max >= 0 &&
	    o.auto_max <= FARM_AUTO_MAX_LIMIT : o.auto_max == 0) && jobs_per_device(&o, SHARE_MPS) >= 1)
		abort();
	if (parse_jobs(text, &o) == 0 && jobs_per_device(&o, SHARE_MPS) < 1)
		abort();
	err_clear();
	if (remember_parse((const char *)data, size, 0x0123456789abcdefULL, &n) == 0 &&
	    !(n >= 1 && n <= 100000))
		abort();
	err_clear();
	(void)oom_in_text((const char *)data, size);
	free(text);
	return 0;
}
