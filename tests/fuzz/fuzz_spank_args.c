/*
 * fuzz_spank_args: the Slurm plugin's parsers on arbitrary text. The first
 * line is a --gpupack-mps SPEC; every further line one plugstack.conf
 * argument. Checks, beyond the sanitizers: a refused SPEC or argument list
 * leaves one message line; accepted limits are within their ranges and a
 * formatted SPEC parses back to the same values.
 */
#include "slurm/jobconf.h"
#include "util/err.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
one_line(void)
{
	if (strchr(err_msg(), '\n'))
		abort();
	err_clear();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *nl, *argv[16];
	struct jobmps_conf c;
	struct jobmps_spec sp, back;
	struct mps_limits lim;
	char buf[512];
	int ac = 0;

	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	for (char *p = nl ? nl + 1 : NULL; p && ac < 16; ) {
		char *e = strchr(p, '\n');

		if (e)
			*e = '\0';
		argv[ac++] = p;
		p = e ? e + 1 : NULL;
	}
	if (jobmps_conf_parse(ac, argv, &c) < 0) {
		one_line();
		jobmps_conf_parse(0, NULL, &c);
	}
	if (jobmps_spec_parse(text, &sp) < 0) {
		one_line();
	} else {
		if (sp.sm_pct < 0 || sp.sm_pct > 100 || (sp.mem_bytes && sp.mem_bytes < (1u << 20)))
			abort();
		jobmps_spec_format(&sp, buf, sizeof buf);
		if (jobmps_spec_parse(buf, &back) < 0 || back.off != sp.off || back.priority != sp.priority ||
		    (back.mem_bytes >> 20) != (sp.mem_bytes >> 20))
			abort();
		if (jobmps_limits(&c, &sp, &lim) < 0)
			one_line();
		else if (lim.sm_pct < 0 || lim.sm_pct > 100 || (c.max.sm_pct > 0 && lim.sm_pct > c.max.sm_pct) ||
		    (c.max.mem_bytes > 0 && lim.mem_bytes > c.max.mem_bytes))
			abort();
	}
	free(text);
	return 0;
}
