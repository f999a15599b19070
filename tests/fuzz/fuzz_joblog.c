/*
 * fuzz_joblog: what --resume reads back (joblog lines written by gpupack,
 * GNU parallel, or torn by a kill -9 or a full disk), --halt specs and
 * --shard specs. A parsed record must have a positive seq below
 * JOURNAL_MAX_SEQ; the whole text loaded as a joblog must give seqs sorted
 * and unique, a torn tail no longer than the text, and every loaded seq
 * skipped on --resume; a parsed shard K < N.
 */
#include "farm/farm.h"
#include "farm/journal.h"
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
	unsigned long long seq;
	int ev, sig;
	struct farm_opts o;
	struct journal j;
	size_t torn;

	if (journal_parse_line(text, &seq, &ev, &sig) == 0 && (seq == 0 || seq >= JOURNAL_MAX_SEQ))
		abort();
	memset(&j, 0, sizeof j);
	j.resume = 1;
	if (journal_load_mem(&j, (const char *)data, size, &torn) == 0) {
		if (torn > size)
			abort();
		for (size_t i = 0; i < j.nseen; i++)
			if ((i > 0 && j.seen[i - 1].seq >= j.seen[i].seq) || !journal_skip(&j, j.seen[i].seq))
				abort();
	}
	err_clear();
	journal_close(&j);
	memset(&o, 0, sizeof o);
	if (parse_halt(text, &o) == 0 && o.halt_when != HALT_NEVER && o.halt_count <= 0 &&
	    !(o.halt_pct > 0 && o.halt_pct <= 100))
		abort();
	err_clear();
	memset(&o, 0, sizeof o);
	if (parse_shard(text, &o) == 0 && !(o.shard_n >= 1 && o.shard_k < o.shard_n))
		abort();
	err_clear();
	free(text);
	return 0;
}
