/* test_farm_journal: joblog lines, resume sets, the command identity; output spill. */
#include "tap.h"
#include "farm/journal.h"
#include "farm/output.h"
#include "util/err.h"
#include "util/fs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/test_farm_journal.XXXXXX";

static void
test_parse(void)
{
	unsigned long long seq;
	int ev, sig;

	ok(journal_parse_line("3\t:\t1.000\t     0.5\t0\t2\t1\t0\techo x\n", &seq, &ev, &sig) == 0 &&
	    seq == 3 && ev == 1 && sig == 0, "a record");
	ok(journal_parse_line("4\t:\t1.0\t0.5\t0\t0\t-1\t9\tsleep 9\n", &seq, &ev, &sig) == 0 &&
	    ev == -1 && sig == 9, "killed by a signal");
	ok(journal_parse_line("Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n",
	    &seq, &ev, &sig) < 0, "the header is no record");
	ok(journal_parse_line("5\t:\t1.0\t0.5", &seq, &ev, &sig) < 0, "a torn line is no record");
	ok(journal_parse_line("0\t:\t1\t1\t0\t0\t0\t0\tx\n", &seq, &ev, &sig) < 0, "seq 0 is no record");
}

static void
write_rec(struct journal *j, unsigned long long seq, int ev)
{
	struct joblog_rec r = {seq, 1795312283.903, 0.25, 2, ev, 0, "echo a\nb", NULL};

	ok(journal_end(j, &r) == 0, "record %llu", seq);
}

static void
test_resume(void)
{
	char path[256], *data;
	size_t len;
	struct journal j;

	snprintf(path, sizeof path, "%s/jl", dir);
	ok(journal_open(&j, path, 0, 0, 0, 42) == 0, "open a new joblog");
	write_rec(&j, 1, 0);
	write_rec(&j, 2, 1);
	write_rec(&j, 5, 0);
	journal_close(&j);
	ok(read_file(path, &data, &len) == 0, "read it back");
	ok(len > 0 && data[0] == 'S', "header first");
	ok(strstr(data, "\n1\t:\t1795312283.903\t     0.250\t0\t2\t0\t0\techo a") != NULL,
	    "GNU parallel's columns and formats");
	ok(memchr(data, '\0', len) != NULL, "a newline in a command is written as NUL, as parallel does");
	free(data);

	ok(journal_open(&j, path, 0, 1, 0, 42) == 0, "--resume");
	ok(journal_skip(&j, 1) && journal_skip(&j, 2) && journal_skip(&j, 5), "ended tasks are skipped");
	ok(!journal_skip(&j, 3) && !journal_skip(&j, 4) && !journal_skip(&j, 100000), "others run");
	write_rec(&j, 2, 0);
	journal_close(&j);
	ok(journal_open(&j, path, 0, 0, 1, 42) == 0, "--resume-failed");
	ok(journal_skip(&j, 1) && journal_skip(&j, 2), "the last record of 2 succeeded: skipped");
	journal_close(&j);
	ok(journal_open(&j, path, 0, 1, 0, 43) < 0 && err_code() == EXIT_USAGE,
	    "--resume refuses another command's joblog");
	err_clear();
	ok(read_file(path, &data, &len) == 0 && memmem(data, len, "\n5\t", 3) != NULL,
	    "and leaves it as it was");
	free(data);
	ok(journal_open(&j, path, 0, 0, 0, 43) == 0, "without --resume a new run starts afresh");
	journal_close(&j);
	ok(read_file(path, &data, &len) == 0 && strchr(data, '\n') == data + len - 1, "header only");
	free(data);
}

static void
test_spill(void)
{
	struct obuf b;
	char chunk[4096], path[256];
	int fd;
	off_t size;

	memset(chunk, 'x', sizeof chunk);
	obuf_init(&b);
	for (int i = 0; i < (int)(OUTPUT_MEM_MAX / sizeof chunk) + 10; i++)
		obuf_add(&b, chunk, sizeof chunk);
	ok(b.spill >= 0, "past the memory limit output goes to a file");
	ok(b.len <= OUTPUT_MEM_MAX, "memory stays under the limit");
	snprintf(path, sizeof path, "%s/out", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(obuf_write(&b, fd) == 0, "write it all");
	size = lseek(fd, 0, SEEK_END);
	is_int(size, (long long)b.total, "every byte, in memory and spilled");
	close(fd);
	obuf_free(&b);
}

int
main(void)
{
	ok(mkdtemp(dir) != NULL, "scratch directory");
	test_parse();
	test_resume();
	test_spill();
	remove_tree(dir);
	return done_testing();
}
