/*
 * fuzz_auto: what -j auto reads from outside: -j's value (auto, auto:N, N),
 * what a past run remembered in the state directory (a file anyone may have
 * corrupted) and a task's stderr searched for out-of-memory messages. A
 * parsed -j asks for at least one task per device (auto: with a cap in
 * range); a parsed remembered file has its count and cores in range, its
 * footprints ascending, and reads back the same once written again.
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
	struct remembered r, back;
	char again[512];
	size_t n;

	memset(&o, 0, sizeof o);
	if (parse_jobs(text, &o) == 0 && !(o.jobs_form == JOBS_AUTO ? o.auto_max >= 0 &&
	    o.auto_max <= FARM_AUTO_MAX_LIMIT : o.auto_max == 0) && jobs_per_device(&o, SHARE_MPS) >= 1)
		abort();
	if (parse_jobs(text, &o) == 0 && jobs_per_device(&o, SHARE_MPS) < 1)
		abort();
	err_clear();
	if (remember_parse((const char *)data, size, 0x0123456789abcdefULL, &r) == 0) {
		if (!(r.count >= 1 && r.count <= 100000) || r.cores_start < 0 || r.cores_start > 1000 ||
		    r.cores_run < 0 || r.cores_run > 1000 || r.nfp < 0 || r.nfp > REMEMBER_FP)
			abort();
		for (int i = 1; i < r.nfp; i++)
			if (r.fp[i] < r.fp[i - 1])
				abort();
		n = remember_format(0x0123456789abcdefULL, &r, again, sizeof again);
		if (n == 0 || remember_parse(again, n, 0x0123456789abcdefULL, &back) != 0 ||
		    back.count != r.count || back.nfp != r.nfp || memcmp(back.fp, r.fp, sizeof r.fp) != 0)
			abort();
	}
	err_clear();
	(void)oom_in_text((const char *)data, size);
	(void)oom_fault_in_text((const char *)data, size);
	free(text);
	return 0;
}
