/*
 * fuzz_placeholders: command-line building on arbitrary templates and
 * inputs. The first byte picks options (-q, -X, --trim, a tag-like raw
 * template), the rest of the first line is the template (words split at
 * spaces), every further line one value. Checks, beyond the sanitizers:
 * quoting round-trips (the line "cmd {}" for any value splits back, without
 * a shell, into exactly "cmd" and that value: no input can become shell
 * syntax), a template without a replacement string and without values
 * appends nothing but {}'s "''", and the length estimate never underflows.
 */
#include "farm/cmdline.h"
#include "farm/shell.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char **
split(char *s, char sep, int *n)
{
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	for (char *p = s;; p++) {
		char *end = strchr(p, sep);

		xgrow(&v, &cap, (size_t)*n + 1, sizeof *v);
		v[(*n)++] = p;
		if (!end)
			break;
		*end = '\0';
		p = end;
	}
	return v;
}

/* The quoted value must come back as itself, and the line need no shell. */
static void
check_roundtrip(const char *value)
{
	char *words[] = {"cmd", "{}"};
	char *vals[] = {(char *)value};
	struct tmpl_opts o = {.append = 1};
	struct job_vals v = {vals, 1, 1, 1, 1, "GPU-x", 0, 0, NULL, 0};
	struct tmpl t;
	char *line, **argv;

	if (tmpl_compile(&t, words, 2, &o) < 0)
		abort();
	line = tmpl_build(&t, &v);
	argv = shell_direct_argv(line);
	if (!argv || strcmp(argv[0], "cmd") != 0 || strcmp(argv[1], value) != 0 || argv[2])
		abort();
	shell_argv_free(argv);
	free(line);
	tmpl_free(&t);
}

/* -I {x} */
static const char *const rename_all[RPL_N] = {"{x}"};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *nl, **words, **vals = NULL;
	int nwords, nvals = 0;
	struct tmpl_opts o = {.append = 1};
	struct tmpl t;
	struct job_vals v;
	struct cmdline_len len;

	if (size < 1)
		return 0;
	o.quote_all = data[0] & 1;
	o.context = (data[0] >> 1) & 1;
	o.trim = (data[0] >> 2) & 3;
	o.raw = (data[0] >> 4) & 1;
	o.append = !((data[0] >> 5) & 1);
	if ((data[0] >> 6) & 1)
		o.rpl = rename_all;
	text = xstrndup((const char *)data + 1, size - 1);
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	words = split(text, ' ', &nwords);
	if (nl)
		vals = split(nl + 1, '\n', &nvals);
	if (tmpl_compile(&t, words, nwords, &o) == 0) {
		char *line;

		v = (struct job_vals){vals, nvals, 1, 12345, 3, "GPU-fuzz", (data[0] >> 7) & 1, 0, NULL, 0};
		line = tmpl_build(&t, &v);
		shell_argv_free(shell_direct_argv(line));
		free(line);
		cmdline_len_init(&len, &t);
		cmdline_len_add(&len, &t, vals, nvals, 1, 1);
		if (cmdline_len(&len, &t) > (size_t)1 << 40)
			abort();
		cmdline_len_add(&len, &t, vals, nvals, 1, -1);
		cmdline_len_free(&len);
		tmpl_free(&t);
	}
	for (int i = 0; i < nvals; i++)
		check_roundtrip(vals[i]);
	free(words);
	free(vals);
	free(text);
	return 0;
}
