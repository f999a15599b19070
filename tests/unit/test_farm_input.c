/*
 * test_farm_input: input sources, their combination in GNU parallel's order
 * (cross product, :::+ pairs, --link, the empty-source rule), delimiters,
 * --colsep and --header, and records grouped into tasks (-n, -X spread,
 * the command-line limit).
 */
#include "tap.h"
#include "farm/task.h"
#include "util/err.h"

#include <stdlib.h>
#include <unistd.h>

/* Every record, "a1 a2 b1 ..." with columns joined by ':' */
static char *
all(struct inputs *in)
{
	struct sbuf b;
	struct record r;

	sbuf_init(&b);
	if (inputs_open(in) < 0) {
		inputs_free(in);
		return xstrdup("ERROR");
	}
	while (inputs_next(in, &r) == 1) {
		for (int i = 0; i < r.n; i++)
			sbuf_printf(&b, "%s%s", i ? ":" : "", r.v[i]);
		sbuf_addc(&b, ' ');
		record_free(&r);
	}
	inputs_free(in);
	return sbuf_detach(&b);
}

static struct source *
args(struct inputs *in, int linked, const char *const *v)
{
	struct source *s = inputs_add_args(in, linked);

	for (; *v; v++)
		source_add_value(s, *v);
	return s;
}

#define V(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static void
expect(struct inputs *in, const char *want, const char *name)
{
	char *got = all(in);

	is_str(got, want, "%s", name);
	free(got);
}

static void
test_combine(void)
{
	struct inputs in;

	inputs_init(&in);
	args(&in, 0, V("a", "b"));
	args(&in, 0, V("1", "2", "3"));
	expect(&in, "a:1 a:2 a:3 b:1 b:2 b:3 ", "cross product: the first source varies slowest");
	inputs_init(&in);
	args(&in, 0, V("a", "b", "c"));
	args(&in, 1, V("1", "2"));
	expect(&in, "a:1 b:2 ", ":::+ pairs, to the shorter source");
	inputs_init(&in);
	args(&in, 0, V("a", "b"));
	args(&in, 1, V("1", "2"));
	args(&in, 0, V("x", "y"));
	expect(&in, "a:1:x a:1:y b:2:x b:2:y ", "a pair crossed with a third source");
	inputs_init(&in);
	in.o.link = 1;
	args(&in, 0, V("a", "b", "c"));
	args(&in, 0, V("1", "2"));
	expect(&in, "a:1 b:2 c:1 ", "--link recycles the shorter source");
	inputs_init(&in);
	args(&in, 0, V("a", "b"));
	args(&in, 0, NONE);
	expect(&in, "a: b: ", "an empty source is one empty value");
	inputs_init(&in);
	args(&in, 0, NONE);
	args(&in, 0, V("a", "b"));
	expect(&in, ":a :b ", "an empty first source too");
	inputs_init(&in);
	args(&in, 0, NONE);
	args(&in, 0, NONE);
	expect(&in, "", "every source empty: nothing");
}

static void
test_values(void)
{
	struct inputs in;
	char path[] = "/tmp/test_farm_input.XXXXXX";
	int fd = mkstemp(path);
	char *d;
	size_t n;

	inputs_init(&in);
	args(&in, 0, V("a\nb", "c", ""));
	expect(&in, "a b c  ", "a ::: value holding the delimiter splits (as parallel's)");
	inputs_init(&in);
	in.o.delim = "";
	in.o.delim_len = 1;
	args(&in, 0, V("a\nb", "c"));
	expect(&in, "a\nb c ", "-0");
	ok(fd >= 0 && write(fd, "x\r\n\r\ny z\r\nlast", 14) == 14, "write an input file");
	close(fd);
	inputs_init(&in);
	in.o.delim = "\r\n";
	in.o.delim_len = 2;
	inputs_add_file(&in, path, 0);
	expect(&in, "x  y z last ", "-d '\\r\\n': a delimiter of two bytes, the last value unended");
	inputs_init(&in);
	in.o.skip_empty = 1;
	in.o.eof = "last";
	in.o.delim = "\r\n";
	in.o.delim_len = 2;
	inputs_add_file(&in, path, 0);
	expect(&in, "x y z ", "-r skips blank values, -E ends the source");
	inputs_init(&in);
	inputs_add_file(&in, "/nonexistent/x", 0);
	ok(inputs_open(&in) < 0 && err_code() == EXIT_USAGE, "a missing file is bad input");
	err_clear();
	inputs_free(&in);
	unlink(path);
	d = input_unescape_delim("a\\tb\\n\\0\\101", &n);
	ok(n == 6 && memcmp(d, "a\tb\n\0A", 6) == 0, "-d escapes: \\t \\n \\0 \\101");
	free(d);
}

static void
test_colsep(void)
{
	struct inputs in;
	regex_t re;

	inputs_init(&in);
	in.o.colsep = "\\t";
	args(&in, 0, V("a\tb", "c\td\te", ""));
	expect(&in, "a:b c:d:e  ", "--colsep '\\t'");
	inputs_init(&in);
	in.o.colsep = " +";
	args(&in, 0, V("  a  b "));
	expect(&in, ":a:b: ", "leading and trailing empty columns are kept");
	inputs_init(&in);
	in.o.colsep = "[0-9]+";
	args(&in, 0, V("a1b22c"));
	expect(&in, "a:b:c ", "a regex");
	inputs_init(&in);
	in.o.header = 1;
	in.o.colsep = ",";
	args(&in, 0, V("n,v", "x,1"));
	ok(inputs_open(&in) == 0 && in.nnames == 2 && !strcmp(in.names[1], "v"), "--header names");
	inputs_free(&in);
	ok(input_colsep_compile("|", &re) < 0, "a regex that matches nothing is refused");
	err_clear();
	ok(input_colsep_compile("(?i)a", &re) < 0, "perl's (?...) is refused");
	err_clear();
	ok(input_colsep_compile("\\s+", &re) == 0, "\\s");
	regfree(&re);
	ok(input_colsep_compile("a++", &re) < 0 && input_colsep_compile("~++++++++", &re) < 0,
	    "nested and possessive quantifiers are refused (perl refuses the first; regcomp would grow)");
	ok(input_colsep_compile("+a", &re) < 0 && input_colsep_compile("a{256}", &re) < 0,
	    "a quantifier after nothing, a count above 255");
	err_clear();
	ok(input_colsep_compile("a{2,3}", &re) == 0, "a small interval");
	regfree(&re);
}

/* Tasks as "seq:v,v;" */
static char *
tasks(struct task_src *ts, int slots)
{
	char *words[] = {"echo"};
	struct tmpl t;
	struct tmpl_opts o = {.append = 1};
	struct targs a;
	unsigned long long seq;
	struct sbuf b;
	int rc;

	sbuf_init(&b);
	tmpl_compile(&t, words, 1, &o);
	ts->cmd = &t;
	ts->slots = slots;
	if (tasks_open(ts) < 0)
		return xstrdup("ERROR");
	while ((rc = tasks_next(ts, &a, &seq)) == 1) {
		sbuf_printf(&b, "%llu:", seq);
		for (int i = 0; i < a.nflat; i++)
			sbuf_printf(&b, "%s%s", i ? "," : "", a.flat[i]);
		sbuf_addc(&b, ';');
		targs_free(&a);
	}
	if (rc < 0)
		sbuf_add(&b, "ERROR");
	tasks_free(ts);
	tmpl_free(&t);
	return sbuf_detach(&b);
}

static void
test_tasks(void)
{
	struct task_src ts;
	char *got, *big;

	tasks_init(&ts);
	ts.max_args = 2;
	args(&ts.in, 0, V("1", "2", "3", "4", "5"));
	got = tasks(&ts, 2);
	is_str(got, "1:1,2;2:3,4;3:5;", "-n 2");
	free(got);
	tasks_init(&ts);
	ts.max_args = 0;
	ts.fill = ts.spread = 1;
	args(&ts.in, 0, V("1", "2", "3", "4", "5"));
	got = tasks(&ts, 2);
	is_str(got, "1:1,2,3;2:4,5;", "-X spreads the end of the input over the slots");
	free(got);
	tasks_init(&ts);
	big = xmalloc(CMDLINE_MAX + 1);
	memset(big, 'x', CMDLINE_MAX);
	big[CMDLINE_MAX] = '\0';
	args(&ts.in, 0, V("a", big));
	got = tasks(&ts, 1);
	ok(strstr(got, "1:a;") == got && strstr(got, "ERROR") && err_code() == EXIT_USAGE,
	    "a line over GNU parallel's limit is refused");
	err_clear();
	free(got);
	free(big);
}

int
main(void)
{
	test_combine();
	test_values();
	test_colsep();
	test_tasks();
	return done_testing();
}
