/*
 * fuzz_placeholders: replacement-string expansion on arbitrary templates and
 * inputs. The first line of the input is the command template (words split
 * at spaces), every further line one input source's value. Checks, beyond
 * the sanitizers: a template without a replacement string expands to
 * itself, and --shell quoting always yields one sh word per input.
 */
#include "farm/task.h"

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

static void
check_plain(char **words, int nwords, const struct task_vars *v)
{
	for (int i = 0; i < nwords; i++) {
		struct sbuf b;

		if (template_has_placeholder(words[i]))
			continue;
		sbuf_init(&b);
		template_expand(words[i], v, &b);
		if (strcmp(b.buf ? b.buf : "", words[i]) != 0)
			abort();
		sbuf_free(&b);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *nl = strchr(text, '\n');
	char **words, **args, **argv;
	int nwords, nargs = 0, has;
	struct task_vars v;

	if (nl)
		*nl = '\0';
	words = split(text, ' ', &nwords);
	args = nl ? split(nl + 1, '\n', &nargs) : NULL;
	v = (struct task_vars){args, nargs, 12345, 3, "GPU-fuzz", 0};
	check_plain(words, nwords, &v);
	has = 0;
	for (int i = 0; i < nwords; i++)
		has |= template_has_placeholder(words[i]);
	argv = template_argv(words, nwords, has, 0, &v);
	args_free(argv, -1);
	argv = template_argv(words, nwords, has, 1, &v);
	args_free(argv, -1);
	for (int i = 0; i < nargs; i++) {
		struct sbuf q;

		sbuf_init(&q);
		shell_quote(&q, args[i]);
		/* a quoted word starts a quote, or holds no character the shell would act on */
		if (q.len == 0 || (q.buf[0] != '\'' && strpbrk(q.buf, " \t;&|<>()$`\\\"'*?[#~!{}") != NULL))
			abort();
		sbuf_free(&q);
	}
	free(words);
	free(args);
	free(text);
	return 0;
}
