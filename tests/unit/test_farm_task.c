/* test_farm_task: input sources, cross product order, replacement strings. */
#include "tap.h"
#include "farm/task.h"
#include "util/err.h"

#include <stdlib.h>
#include <unistd.h>

static char *
expand(const char *word, char **args, int nargs, unsigned long long seq, int slot, int quote)
{
	struct task_vars v = {args, nargs, seq, slot, "GPU-abc", quote};
	struct sbuf b;

	sbuf_init(&b);
	template_expand(word, &v, &b);
	return sbuf_detach(&b);
}

static void
check(const char *word, const char *arg, const char *want)
{
	char *args[1] = {(char *)arg};
	char *got = expand(word, args, 1, 7, 3, 0);

	is_str(got, want, "%s on '%s'", word, arg);
	free(got);
}

static void
test_placeholders(void)
{
	/* GNU parallel's answers for the same inputs (tests/cli/run-placeholders.t compares live) */
	check("{}", "a/b.c", "a/b.c");
	check("{.}", "a/b.c", "a/b");
	check("{/}", "a/b.c", "b.c");
	check("{//}", "a/b.c", "a");
	check("{/.}", "a/b.c", "b");
	check("{.}", "d.e/f", "d.e/f");
	check("{//}", "g", ".");
	check("{//}", "/a", "/");
	check("{//}", "a/", ".");
	check("{.}", ".bashrc", "");
	check("{/}", "a/", "");
	check("{#}", "x", "7");
	check("{%}", "x", "3");
	check("{slot}", "x", "3");
	check("{gpu}", "x", "GPU-abc");
	check("x{}y{}", "a", "xaya");
	check("{foo}", "a", "{foo}");
	check("{", "a", "{");
	check("}{", "a", "}{");
	check("{1}", "a", "a");
	check("{2}", "a", "");
	check("{1/.}", "p/q.r", "q");
}

static void
test_multi(void)
{
	char *args[2] = {"a/b.c", "x/y.z"};
	char *got;

	got = expand("{}", args, 2, 1, 1, 0);
	is_str(got, "a/b.c x/y.z", "{} joins all sources");
	free(got);
	got = expand("{2.}-{1/}", args, 2, 1, 1, 0);
	is_str(got, "x/y-b.c", "{2.} and {1/}");
	free(got);
	got = expand("{-1}{-2/}{-3}", args, 2, 1, 1, 0);
	is_str(got, "x/y.zb.c", "{-N} counts from the last source");
	free(got);
	got = expand("{.}", args, 2, 1, 1, 0);
	is_str(got, "a/b x/y", "{.} on each source");
	free(got);
}

static void
test_argv(void)
{
	char *tmpl[] = {"echo", "{}"}, *plain[] = {"echo"};
	char *args[1] = {"; rm -rf x"};
	struct task_vars v = {args, 1, 1, 1, "GPU-abc", 0};
	char **argv;

	ok(template_has_placeholder("{}") && !template_has_placeholder("{x}") &&
	    template_has_placeholder("a{1.}b"), "placeholder detection");
	argv = template_argv(tmpl, 2, 1, 0, &v);
	is_str(argv[1], "; rm -rf x", "an input stays one argument");
	ok(argv[2] == NULL, "argv ends");
	args_free(argv, -1);
	argv = template_argv(plain, 1, 0, 0, &v);
	is_str(argv[1], "; rm -rf x", "without a placeholder the input is appended");
	args_free(argv, -1);
	argv = template_argv(tmpl, 2, 1, 1, &v);
	is_str(argv[0], "/bin/sh", "--shell runs sh");
	is_str(argv[2], "echo '; rm -rf x'", "--shell quotes the input");
	args_free(argv, -1);
	args[0] = "it's";
	argv = template_argv(plain, 1, 0, 1, &v);
	is_str(argv[2], "echo 'it'\\''s'", "a quote inside is escaped");
	args_free(argv, -1);
}

static void
test_cross(void)
{
	struct inputs in;
	struct source *s;
	char **args, got[256] = "";
	unsigned long long seq;
	size_t n = 0;

	inputs_init(&in);
	s = inputs_add_args(&in);
	source_add_value(s, "a");
	source_add_value(s, "b");
	s = inputs_add_args(&in);
	source_add_value(s, "1");
	source_add_value(s, "2");
	source_add_value(s, "3");
	ok(inputs_open(&in) == 0, "open");
	while (inputs_next(&in, &args, &seq) == 1) {
		n += (size_t)snprintf(got + n, sizeof got - n, "%llu:%s%s ", seq, args[0], args[1]);
		args_free(args, 2);
	}
	is_str(got, "1:a1 2:a2 3:a3 4:b1 5:b2 6:b3 ", "cross product: the first source varies slowest");
	inputs_free(&in);
}

static void
test_files(void)
{
	char path[] = "/tmp/test_farm_task.XXXXXX";
	int fd = mkstemp(path);
	struct inputs in;
	struct source *s;
	char **args;
	unsigned long long seq;
	int n = 0;

	ok(fd >= 0 && write(fd, "x\n\ny z\nlast", 11) == 11, "write an input file");
	close(fd);
	inputs_init(&in);
	inputs_add_file(&in, path);
	s = inputs_add_args(&in);
	source_add_value(s, "k");
	ok(inputs_open(&in) == 0, "open a file source");
	while (inputs_next(&in, &args, &seq) == 1) {
		static const char *const want[] = {"x", "", "y z", "last"};

		is_str(args[0], want[n], "line %d", n + 1);
		n++;
		args_free(args, 2);
	}
	is_int(n, 4, "every line, the empty one and the unterminated last one too");
	inputs_free(&in);
	inputs_init(&in);
	inputs_add_file(&in, "/nonexistent/x");
	ok(inputs_open(&in) < 0 && err_code() == EXIT_USAGE, "a missing file is bad input");
	err_clear();
	inputs_free(&in);
	inputs_init(&in);
	s = inputs_add_args(&in);
	source_add_value(s, "a");
	inputs_add_args(&in);
	ok(inputs_open(&in) == 0 && inputs_next(&in, &args, &seq) == 0, "an empty source: no tasks");
	inputs_free(&in);
	unlink(path);
}

int
main(void)
{
	test_placeholders();
	test_multi();
	test_argv();
	test_cross();
	test_files();
	return done_testing();
}
