/*
 * test_farm_cmdline: command lines as GNU parallel builds them (the
 * expected strings are parallel 20221122's --dry-run output for the same
 * templates and inputs; tests/cli/parallel-diff.t compares live), quoting,
 * and when a line needs no shell.
 */
#include "tap.h"
#include "farm/cmdline.h"
#include "farm/perl.h"
#include "farm/shell.h"
#include "util/err.h"

#include <stdlib.h>

/* The line for template words (NULL-terminated) and one task's flat values. */
static char *
line(const struct tmpl_opts *o, char **words, char **vals, int nrec)
{
	struct tmpl t;
	int nw = 0, nv = 0;
	char *l;
	struct job_vals v;

	while (words[nw])
		nw++;
	while (vals && vals[nv])
		nv++;
	if (tmpl_compile(&t, words, nw, o) < 0)
		return NULL;
	v = (struct job_vals){vals, nv, nrec, 7, 3, "GPU-abc", 0, 0, NULL, 0};
	l = tmpl_build(&t, &v);
	tmpl_free(&t);
	return l;
}

#define W(...) ((char *[]){__VA_ARGS__, NULL})

static void
check(const char *name, char **words, char **vals, const char *want)
{
	struct tmpl_opts o = {.append = 1};
	char *got = line(&o, words, vals, 1);

	is_str(got, want, "%s", name);
	free(got);
}

static void
test_lines(void)
{
	check("{} quoted", W("echo", "{}"), W("a b"), "echo 'a b'");
	check("appended", W("echo"), W("a b"), "echo 'a b'");
	check("shell syntax kept", W("echo {} | wc -c"), W("a b"), "echo 'a b' | wc -c");
	check("a quote", W("echo"), W("it's"), "echo 'it'\"'\"'s'");
	check("leading quote: no '' left", W("echo"), W("'x'"), "echo \"'\"'x'\"'\"");
	check("empty value", W("echo", "{}"), W(""), "echo ''");
	check("plain values stay", W("echo"), W("a-b_c.d+e/f"), "echo a-b_c.d+e/f");
	check("unicode is quoted", W("echo"), W("\xc3\xbc"), "echo '\xc3\xbc'");
	check("several sources: a word each", W("echo", "{}"), W("a b", "c"), "echo 'a b' c");
	check("{} inside a word", W("echo", "x{}y"), W("a", "b"), "echo xa by");
	check("{.} {/} {//} {/.}", W("echo", "{.}", "{/}", "{//}", "{/.}"), W("d.e/f.g"),
	    "echo d.e/f f.g d.e f");
	check("{/} stops at a newline (perl's .)", W("echo", "{/}"), W("a\nb/c"), "echo 'a\nc'");
	check("{#} {%} {gpu} {slot}", W("echo", "{#}", "{%}", "{gpu}", "{slot}"), W("x"),
	    "echo 7 3 GPU-abc 3");
	check("{2} {-1} {1.}", W("echo", "{2}", "{-1}", "{1.}"), W("a.b", "c", "d"), "echo c d a");
	check("{0} is {}", W("echo", "{0}"), W("a", "b"), "echo a b");
	check("{3} out of range", W("echo", "[{3}]"), W("a"), "echo []");
	check("not replacement strings", W("echo", "{foo}", "{", "{ }"), W("a"), "echo {foo} { { } a");
	check("a replacement string in the command word: unquoted", W("{}"), W("echo a b"),
	    "echo a b");
	check("V={} is quoted", W("V={}", "cmd"), W("a b"), "V='a b' cmd");
	check("empty template word", W("echo", "", "{}"), W("a"), "echo  a");
	check("no command: the input is the command", (char *[]){NULL}, W("ls -l"), "ls -l");
}

static void
test_options(void)
{
	struct tmpl_opts o = {.quote_all = 1, .append = 1};
	char *got;
	char *names[] = {"a", "b"};
	const char *I[RPL_N] = {",,"};
	struct perl perl = {0};

	got = line(&o, W("echo", "a b", "{}", "|"), W("c d"), 1);
	is_str(got, "echo 'a b' 'c d' '|'", "-q quotes the words too");
	free(got);
	o = (struct tmpl_opts){.rpl = I, .append = 1};
	got = line(&o, W("echo", ",,", "{}"), W("a"), 1);
	is_str(got, "echo a {}", "-I ,, replaces {}");
	free(got);
	o = (struct tmpl_opts){.context = 1, .append = 1};
	got = line(&o, W("echo", "pre{}post", "{1}"), W("1", "2", "3"), 3);
	is_str(got, "echo pre1post pre2post pre3post 1", "-X: the context repeats per value");
	free(got);
	o = (struct tmpl_opts){.append = 1};
	got = line(&o, W("echo", "pre{}post"), W("1", "2", "3"), 3);
	is_str(got, "echo pre1 2 3post", "-m: values side by side");
	free(got);
	o = (struct tmpl_opts){.append = 1, .trim = TRIM_BOTH};
	got = line(&o, W("echo", "[{}]"), W("  a b \t"), 1);
	is_str(got, "echo ['a b']", "--trim lr");
	free(got);
	o = (struct tmpl_opts){.append = 1, .names = names, .nnames = 2};
	got = line(&o, W("echo", "{b}", "{a.}"), W("x.y", "z"), 1);
	is_str(got, "echo z x", "--header names");
	free(got);
	o = (struct tmpl_opts){.raw = 1};
	got = line(&o, W("{}"), W("a b", "c"), 1);
	is_str(got, "a b c", "a tag: values as they are");
	free(got);
	o = (struct tmpl_opts){.append = 1, .perl = &perl};
	got = line(&o, W("echo", "{= s/a/b/ =}", "{=1 $_ .= total_jobs() =}"), W("a"), 1);
	is_str(got, "echo b a0", "{= perl =} runs in perl (total_jobs(): 0, not counted)");
	free(got);
	/*
	 * parallel keeps a perl value per value it ran on: {=2 =} in a -X context repeats
	 * with each value but runs once, on the second (parallel -X -N3 --dry-run says so)
	 */
	o = (struct tmpl_opts){.append = 1, .context = 1, .perl = &perl};
	got = line(&o, W("echo", "pre{}{=2 $_ = ++$Global::n =}"), W("1", "2", "3"), 3);
	is_str(got, "echo pre11 pre21 pre31", "-X: a positional {= perl =} runs once per task");
	free(got);
	o = (struct tmpl_opts){.append = 1, .perl = &perl};
	ok(line(&o, W("echo", "{= s/( =}"), W("a"), 1) == NULL && err_code() == EXIT_USAGE,
	    "{= perl that does not compile =} is refused");
	err_clear();
	perl_close(&perl);
}

static void
test_quote(void)
{
	static const char *const in[] = {"", "a", "a b", "'", "''", "a'b", "$x", "-n", "~", "x=y"};
	static const char *const want[] = {"''", "a", "'a b'", "\"'\"", "\"'\"''\"'\"", "'a'\"'\"'b'",
		"'$x'", "-n", "'~'", "'x=y'"};

	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		struct sbuf b;

		sbuf_init(&b);
		shell_quote(&b, in[i]);
		is_str(b.buf, want[i], "quote '%s'", in[i]);
		sbuf_free(&b);
	}
}

static void
test_direct(void)
{
	char **argv;

	argv = shell_direct_argv("sleep 'a b' \"'\"'c' x=y ''");
	ok(argv && !strcmp(argv[0], "sleep") && !strcmp(argv[1], "a b") && !strcmp(argv[2], "'c") &&
	    !strcmp(argv[3], "x=y") && !strcmp(argv[4], "") && !argv[5], "quoted words split back");
	shell_argv_free(argv);
	ok(shell_direct_argv("echo a") == NULL, "echo is a builtin: the shell runs it");
	ok(shell_direct_argv("a=b cmd") == NULL, "an assignment needs the shell");
	ok(shell_direct_argv("cat x | wc") == NULL, "a pipe needs the shell");
	ok(shell_direct_argv("ls $HOME") == NULL, "an expansion needs the shell");
	ok(shell_direct_argv("ls \"$HOME\"") == NULL, "$ in double quotes too");
	ok(shell_direct_argv("ls *.c") == NULL, "a glob needs the shell");
	ok(shell_direct_argv("true --help") == NULL, "true --help is not /bin/true --help");
	argv = shell_direct_argv("true 1");
	ok(argv != NULL, "true runs as /bin/true does");
	shell_argv_free(argv);
	ok(shell_direct_argv("") == NULL && shell_direct_argv("'") == NULL, "empty, unterminated");
	ok(shell_builtin("cd") && shell_builtin("[[") && !shell_builtin("ls"), "builtins");
}

int
main(void)
{
	test_lines();
	test_options();
	test_quote();
	test_direct();
	return done_testing();
}
