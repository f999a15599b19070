/* test_farm_journal: joblog lines, resume sets, the command identity; output spill. */
#include "tap.h"
#include "farm/joblog.h"
#include "farm/journal.h"
#include "farm/output.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/test_farm_journal.XXXXXX";

/* The joblog path names, as gpupack run describes --joblog [+]path (farm/joblog.h). */
static struct joblog_desc jl_desc;

static const struct joblog_desc *
jl(const char *path, int append)
{
	char *arg = xasprintf("%s%s", append ? "+" : "", path);

	joblog_free(&jl_desc);
	if (joblog_describe(&jl_desc, arg, 0, 0) < 0)
		printf("# describing %s: %s\n", arg, err_msg());
	free(arg);
	return &jl_desc;
}

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
	struct joblog_rec r = {seq, 1795312283.903, 0.25, 2, ev, 0, "echo a\nb", NULL, 0};

	ok(journal_end(j, &r) == 0, "record %llu", seq);
}

static void
test_resume(void)
{
	char path[256], *data;
	size_t len;
	struct journal j;

	snprintf(path, sizeof path, "%s/jl", dir);
	ok(journal_open(&j, jl(path, 0), 0, 0, 42) == 0, "open a new joblog");
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

	ok(journal_open(&j, jl(path, 0), 1, 0, 42) == 0, "--resume");
	ok(journal_skip(&j, 1) && journal_skip(&j, 2) && journal_skip(&j, 5), "ended tasks are skipped");
	ok(!journal_skip(&j, 3) && !journal_skip(&j, 4) && !journal_skip(&j, 100000), "others run");
	write_rec(&j, 2, 0);
	journal_close(&j);
	ok(journal_open(&j, jl(path, 0), 0, 1, 42) == 0, "--resume-failed");
	ok(journal_skip(&j, 1) && journal_skip(&j, 2), "the last record of 2 succeeded: skipped");
	journal_close(&j);
	ok(journal_open(&j, jl(path, 0), 1, 0, 43) < 0 && err_code() == EXIT_USAGE,
	    "--resume refuses another command's joblog");
	err_clear();
	ok(read_file(path, &data, &len) == 0 && memmem(data, len, "\n5\t", 3) != NULL,
	    "and leaves it as it was");
	free(data);
	ok(journal_open(&j, jl(path, 0), 0, 0, 43) == 0, "without --resume a new run starts afresh");
	journal_close(&j);
	ok(read_file(path, &data, &len) == 0 && strchr(data, '\n') == data + len - 1, "header only");
	free(data);
}

/* What --resume reads back, from memory: bounds, torn tails, the last record wins. */
static void
test_load(void)
{
	struct journal j;
	char *big;
	const char *seq48 = "281474976710656\t:\t1\t1\t0\t0\t0\t0\tx\n";
	size_t torn;
	const char *text = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
	    "7\t:\t1\t1\t0\t0\t1\t0\tx\n"
	    "10000000000\t:\t1\t1\t0\t0\t0\t0\tx\n"
	    "7\t:\t1\t1\t0\t0\t0\t0\tx\n"
	    "3\t:\t1\t1\t0\t0\t0\t9\tx\n"
	    "1";

	memset(&j, 0, sizeof j);
	j.resume = 1;
	ok(journal_load_mem(&j, text, strlen(text), &torn) == 0, "load records from memory");
	is_int(torn, 1, "the bytes after the last newline are a torn tail");
	is_int(j.nseen, 3, "one entry per seq (7 twice)");
	ok(journal_skip(&j, 7) && journal_skip(&j, 3) && journal_skip(&j, 10000000000ULL),
	    "each ended seq is skipped, a Seq of 1e10 costs one entry, not a bitmap of 1e10 bits");
	ok(!journal_skip(&j, 1) && !journal_skip(&j, 11), "the torn '1' is no record");
	j.resume_failed = 1;
	ok(journal_skip(&j, 7), "--resume-failed: the last record of 7 succeeded");
	ok(!journal_skip(&j, 3), "--resume-failed: 3 was killed by signal 9");
	journal_close(&j);

	memset(&j, 0, sizeof j);
	j.resume = 1;
	ok(journal_load_mem(&j, seq48, strlen(seq48), &torn) == 0 &&
	    j.nseen == 0, "a Seq of 2^48 or more is no record of ours");
	journal_close(&j);

	big = xmalloc(JOURNAL_MAX_LINE + 2);
	memset(big, '7', JOURNAL_MAX_LINE + 1);
	big[JOURNAL_MAX_LINE + 1] = '\n';
	memset(&j, 0, sizeof j);
	j.resume = 1;
	ok(journal_load_mem(&j, big, JOURNAL_MAX_LINE + 2, &torn) < 0 && err_code() == EXIT_USAGE &&
	    strstr(err_msg(), "longer than"), "a line over the limit is refused, not read whole");
	err_clear();
	journal_close(&j);
	free(big);
}

/* Nothing is created or truncated by the check alone; a torn tail is cut when records follow. */
static void
test_begin(void)
{
	char path[256], side[300], *data;
	size_t len;
	struct journal j;
	struct joblog_rec r = {4, 1795312283.903, 0.25, 2, 0, 0, "echo", NULL, 0};
	const char *torn = "Seq\tHost\n3\t:\t1\t1\t0\t0\t0\t0\tx\n1";
	int fd;

	snprintf(path, sizeof path, "%s/jb", dir);
	snprintf(side, sizeof side, "%s/jb.gpupack", dir);
	ok(journal_check(&j, jl(path, 0), 0, 0, 7) == 0, "check a joblog that does not exist yet");
	ok(access(path, F_OK) < 0 && access(side, F_OK) < 0, "the check creates nothing");
	journal_close(&j);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ok(write(fd, torn, strlen(torn)) == (ssize_t)strlen(torn), "a joblog with a torn tail");
	close(fd);
	ok(journal_check(&j, jl(path, 0), 0, 0, 7) == 0 && read_file(path, &data, &len) == 0 &&
	    len == strlen(torn),
	    "checking it for a new run truncates nothing");
	free(data);
	journal_close(&j);
	ok(journal_check(&j, jl(path, 1), 0, 0, 7) == 0 && journal_begin(&j) == 0, "+FILE");
	ok(journal_end(&j, &r) == 0, "append a record");
	journal_close(&j);
	ok(read_file(path, &data, &len) == 0 && strstr(data, "\n1") == NULL &&
	    strstr(data, "x\n4\t:\t") != NULL, "the torn '1' was cut before the record was appended");
	free(data);

	ok(journal_check(&j, jl(dir, 0), 1, 0, 7) < 0 && strstr(err_msg(), "a directory"),
	    "a directory is no joblog");
	err_clear();
	journal_close(&j);
	snprintf(path, sizeof path, "%s/fifo", dir);
	ok(mkfifo(path, 0600) == 0, "a FIFO");
	ok(journal_check(&j, jl(path, 0), 1, 0, 7) < 0 && strstr(err_msg(), "a FIFO"),
	    "is refused at once, not waited on");
	err_clear();
	journal_close(&j);
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

/* Seqs kept by what they are: far apart or close, the cost is per entry. */
static void
test_seqmap(void)
{
	struct seqmap m = {0};
	unsigned long long seq = 1, bad = 0;

	ok(seqmap_get(&m, 1) == NULL, "an empty map has nothing");
	for (int i = 0; i < 20000; i++) {
		*seqmap_put(&m, seq) = seq ^ 0x5a5a;
		seq = seq * 6364136223846793005ULL % (1ULL << 47) + 1;
	}
	*seqmap_put(&m, 1ULL << 47) = 7;
	is_int(m.n, 20001, "20,001 entries");
	ok(m.cap <= 65536, "in a table sized by them (%zu slots), not by Seqs up to 2^47", m.cap);
	seq = 1;
	for (int i = 0; i < 20000; i++) {
		const unsigned long long *v = seqmap_get(&m, seq);

		bad += !v || *v != (seq ^ 0x5a5a);
		seq = seq * 6364136223846793005ULL % (1ULL << 47) + 1;
	}
	is_int(bad, 0, "each keeps its value through the growth");
	ok(seqmap_get(&m, 1ULL << 47) && *seqmap_get(&m, 1ULL << 47) == 7, "Seq 2^47 too");
	ok(seqmap_get(&m, 2) == NULL && seqmap_get(&m, (1ULL << 47) - 1) == NULL, "others are not there");
	*seqmap_put(&m, 1) = 9;
	ok(m.n == 20001 && *seqmap_get(&m, 1) == 9, "put again: the same entry");
	seqmap_free(&m);
}

static void
test_failed(void)
{
	char *path = xasprintf("%s/rf", dir);
	struct sbuf b;
	struct journal_cmd *v;
	size_t n;
	static const char cmd_nl[] = "echo a\0echo b";

	sbuf_init(&b);
	sbuf_add(&b, "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n");
	sbuf_add(&b, "2\t:\t1.0\t1.0\t0\t0\t1\t0\tfail 2\n");
	sbuf_add(&b, "5\t:\t1.0\t1.0\t0\t0\t3\t0\tfirst 5\n");
	sbuf_add(&b, "2\t:\t1.0\t1.0\t0\t0\t0\t0\tok 2\n");
	sbuf_add(&b, "1000000000000\t:\t1.0\t1.0\t0\t0\t0\t15\tfar\twith a tab\n");
	sbuf_add(&b, "5\t:\t1.0\t1.0\t0\t0\t-1\t9\tlast 5\n");
	sbuf_add(&b, "7\t:\t1.0\t1.0\t0\t0\t1\t0\t");
	sbuf_addn(&b, cmd_nl, sizeof cmd_nl - 1);
	sbuf_add(&b, "\njunk\n");
	ok(write_file_atomic(path, b.buf, b.len, 0644) == 0, "a joblog to retry");
	ok(journal_failed(path, &v, &n) == 0, "--retry-failed reads it");
	is_int(n, 3, "three tasks failed last: a later success settles Seq 2");
	if (n == 3) {
		ok(v[0].seq == 5 && strcmp(v[0].cmd, "last 5") == 0, "Seq 5: its last failed command");
		ok(v[1].seq == 7 && strcmp(v[1].cmd, "echo a\necho b") == 0, "Seq 7: parallel's NUL is a newline again");
		ok(v[2].seq == 1000000000000ULL && strcmp(v[2].cmd, "far\twith a tab") == 0,
		    "Seq 10^12, in order, its command whole: one entry, not 10^12");
	}
	journal_failed_free(v, n);
	sbuf_free(&b);
	free(path);
}

int
main(void)
{
	ok(mkdtemp(dir) != NULL, "scratch directory");
	test_parse();
	test_resume();
	test_load();
	test_begin();
	test_spill();
	test_seqmap();
	test_failed();
	joblog_free(&jl_desc);
	remove_tree(dir);
	return done_testing();
}
