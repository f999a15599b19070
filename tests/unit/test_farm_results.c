/* test_farm_results: --results FILE.csv, .tsv, .json as GNU parallel writes them; --rpl's strings. */
#include "tap.h"
#include "farm/results.h"
#include "farm/perl.h"
#include "farm/rpl.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file's text after one record of each vals. */
static char *
written(const char *name, char **names, int nnames, char **vals, int nvals, const char *out,
    const char *err)
{
	char path[] = "/tmp/test-results-XXXXXX";
	struct results_file rf;
	struct joblog_rec rec = {3, 1700000000.1234, 0.25, 4, 1, 0, "echo 'a b'", NULL, 0};
	struct obuf ob[2];
	char *file, *data = NULL;
	size_t len;
	int fd = mkstemp(path);

	close(fd);
	file = xasprintf("%s%s", path, name);
	obuf_init(&ob[0]);
	obuf_init(&ob[1]);
	obuf_add(&ob[0], out, strlen(out));
	obuf_add(&ob[1], err, strlen(err));
	if (results_file_open(&rf, file, names, nnames) == 0 &&
	    results_file_add(&rf, &rec, vals, nvals, ob) == 0)
		read_file(file, &data, &len);
	results_file_close(&rf);
	obuf_free(&ob[0]);
	obuf_free(&ob[1]);
	unlink(file);
	unlink(path);
	free(file);
	return data;
}

static void
test_kinds(void)
{
	is_int(results_kind("out.csv"), RESULTS_CSV, ".csv");
	is_int(results_kind("OUT.TSV"), RESULTS_TSV, ".TSV, any case");
	is_int(results_kind("x.json"), RESULTS_JSON, ".json");
	is_int(results_kind("dir"), RESULTS_DIR, "a directory");
	is_int(results_kind("a.csv/"), RESULTS_DIR, "a directory ending in /");
}

static void
test_csv(void)
{
	char *vals[] = {"a", "b,\"c", " d"}, *names[] = {"x"}, *got;
	char *ten[10] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"};

	got = written(".csv", NULL, 0, vals, 3, "out\n", "");
	is_str(got, "Seq,Host,Starttime,JobRuntime,Send,Receive,Exitval,Signal,Command,V1,V2,V3,Stdout,Stderr\n"
	    "3,:,1700000000.123,0.250,0,4,1,0,\"echo 'a b'\",a,\"b,\"\"c\",\" d\",\"out\n\",\n",
	    "CSV: a field with the separator, a quote or a blank is quoted, quotes doubled");
	free(got);
	got = written(".tsv", names, 1, vals, 2, "x\ty", "e");
	is_str(got, "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\tx\tV2\tStdout\tStderr\n"
	    "3\t:\t1700000000.123\t0.250\t0\t4\t1\t0\t\"echo 'a b'\"\ta\t\"b,\"\"c\"\t\"x\ty\"\te\n",
	    "TSV: --header's names first, then V2; a tab quotes");
	free(got);
	got = written(".csv", NULL, 0, ten, 10, "", "");
	ok(got && strstr(got, ",V8,V9,W0,Stdout,") != NULL, "V9 is followed by W0 (perl's string increment)");
	free(got);
}

static void
test_json(void)
{
	char *vals[] = {"a\"b", "\\"}, *got;

	got = written(".json", NULL, 0, vals, 2, "x\n", "\001");
	is_str(got, "{ \"Seq\": 3, \"Host\": \":\", \"Starttime\": 1700000000.123, \"JobRuntime\": 0.250, "
	    "\"Send\": 0, \"Receive\": 4, \"Exitval\": 1, \"Signal\": 0, \"Command\": \"echo 'a b'\", "
	    "\"V\": [ \"a\\\"b\",\"\\\\\" ], \"Stdout\": \"x\\u000a\", \"Stderr\": \"\\u0001\" }\n",
	    "JSON: one object a line, \\ \" and control characters escaped");
	free(got);
}

/* The pieces of w as text: literal text, and [op pos code] for a replacement string. */
static struct perl perl_ = {0}, *perl = &perl_;

static char *
pieces(const struct rplset *s, const char *w)
{
	struct rplseg *g;
	struct sbuf b;
	int n;

	sbuf_init(&b);
	rpl_split(s, w, perl, &g, &n);
	for (int i = 0; i < n; i++) {
		if (!g[i].rpl)
			sbuf_printf(&b, "%.*s", (int)g[i].len, g[i].text);
		else
			sbuf_printf(&b, "[%d %d %s]", g[i].op, g[i].pos, g[i].code ? g[i].code : "");
	}
	rplsegs_free(g, n);
	return sbuf_detach(&b);
}

static void
test_rpl(void)
{
	struct rplset s;
	char *defs[] = {"{%(.+?)} s/$$1$//;", "{..} s:x::"}, *got;
	const char *ren[RPL_N] = {",,"};

	ok(rplset_init(&s, NULL, 0, defs, 2, NULL) == 0 && perl_open(perl, 1) == 0, "--rpl strings compile");
	got = pieces(&s, "a{}b{2//}c{%.gz}{-1..}{= s/a/b/ =}{=2 $_++ =}");
	is_str(got, "a[0 0 ]b[3 2 ]c[8 0 $_pAr_gRp1 = \".gz\";s/$_pAr_gRp1$//;][8 -1 s:x::][8 0 s/a/b/ ][8 2 $_++ ]",
	    "built-in, positional, a group's value and {= =} found as parallel finds them");
	free(got);
	rplset_free(&s);
	ok(rplset_init(&s, ren, 0, NULL, 0, "<<>>") == 0, "-I ,, and --parens <<>>");
	got = pieces(&s, "{} ,, << s/x/y/ >>");
	is_str(got, "{} [0 0 ] [8 0 s/x/y/ ]", "-I renames {}; --parens' halves hold perl");
	free(got);
	rplset_free(&s);
	defs[0] = "{x";
	ok(rplset_init(&s, NULL, 0, defs, 1, NULL) < 0, "--rpl without an expression is refused");
	err_clear();
	perl_close(perl);
}

/* --files: the task's stdout in a new $TMPDIR/parXXXXXX.par; a TMPDIR that is not there: an error. */
static void
test_par_file(void)
{
	char dir[] = "/tmp/test-par-XXXXXX", *path = NULL, *data = NULL, *want;
	struct obuf ob;
	size_t len = 0;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	setenv("TMPDIR", dir, 1);
	obuf_init(&ob);
	obuf_add(&ob, "out 1\n", 6);
	ok(results_par_file(&ob, &path) == 0 && path, "--files: the output's file is made");
	want = xasprintf("%s/par", dir);
	ok(path && strncmp(path, want, strlen(want)) == 0 && strlen(path) == strlen(want) + 10 &&
	    strcmp(path + strlen(path) - 4, ".par") == 0, "in $TMPDIR, named parXXXXXX.par");
	ok(path && read_file(path, &data, &len) == 0 && len == 6 && memcmp(data, "out 1\n", 6) == 0,
	    "holding the task's stdout");
	if (path)
		unlink(path);
	free(path);
	free(data);
	free(want);
	want = xasprintf("%s/none", dir);
	setenv("TMPDIR", want, 1);
	path = dir;
	ok(results_par_file(&ob, &path) < 0 && !path && err_code() == EXIT_ENV,
	    "a TMPDIR that is not there: an error, no path");
	err_clear();
	unsetenv("TMPDIR");
	free(want);
	obuf_free(&ob);
	rmdir(dir);
}

int
main(void)
{
	test_kinds();
	test_csv();
	test_json();
	test_rpl();
	test_par_file();
	return done_testing();
}
