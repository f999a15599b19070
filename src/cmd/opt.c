/*
 * opt: reading options, and the one wording every command uses for a bad
 * one, naming the word the user typed:
 *   unknown option '-N' (see gpupack run --help)
 *   option '--joblog' needs a value (see gpupack run --help)
 *   option '--bar' takes no value (see gpupack run --help)
 *   ambiguous option '--re' (--resume, --results, ...) (see gpupack run --help)
 */
#include "cmd/cmd.h"
#include "util/err.h"
#include "util/str.h"

#include <stdio.h>
#include <string.h>

int
opt_next(int argc, char **argv, const char *shortopts, const struct option *longopts, int *word)
{
	int cur = optind > 0 ? optind : 1;

	/* a permuting getopt skips words that are not options: the next option is the word */
	if (shortopts[0] != '+')
		while (cur < argc && (argv[cur][0] != '-' || argv[cur][1] == '\0'))
			cur++;
	*word = cur;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

static const struct option *
find_long(const struct option *opts, const char *name, size_t n, int *matches, struct sbuf *list)
{
	const struct option *exact = NULL, *first = NULL;

	*matches = 0;
	for (const struct option *o = opts; o->name; o++) {
		if (strncmp(o->name, name, n) != 0)
			continue;
		if (strlen(o->name) == n)
			exact = o;
		if ((*matches)++ < 3) {
			sbuf_printf(list, "%s--%s", *matches > 1 ? ", " : "", o->name);
		}
		if (!first)
			first = o;
	}
	if (exact) {
		*matches = 1;
		return exact;
	}
	return *matches == 1 ? first : NULL;
}

/* gpupack's own options (main.c), which a command's arguments do not take */
static int
global_option(const char *w)
{
	size_t n = strcspn(w, "=");

	return (n == 5 && strncmp(w, "--sim", 5) == 0) || (n == 11 && strncmp(w, "--sim-write", 11) == 0);
}

/* "gpupack devices --sim h100-80gb": the fix is where the option goes, so say that. */
static int
global_misplaced(const char *cmd, int argc, char **argv, int word)
{
	const char *w = argv[word], *eq = strchr(w, '=');
	int n = (int)strcspn(w, "=");
	const char *val = eq ? eq + 1 : word + 1 < argc ? argv[word + 1] : "FILE";

	return err_set(EXIT_USAGE, "%.*s is a global option: put it before the command, "
	    "as in gpupack %.*s %s %s ...", n, w, n, w, val, cmd);
}

int
opt_error(const char *cmd, int argc, char **argv, int word, int ch, const struct option *opts)
{
	const char *w = word < argc ? argv[word] : "";
	char see[64];

	snprintf(see, sizeof see, "(see gpupack %s --help)", cmd);
	if (global_option(w))
		return global_misplaced(cmd, argc, argv, word);
	if (str_starts(w, "--")) {
		const char *name = w + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		struct sbuf list;
		const struct option *o;
		int matches, rc;

		sbuf_init(&list);
		o = find_long(opts, name, n, &matches, &list);
		if (matches > 1)
			rc = err_set(EXIT_USAGE, "ambiguous option '--%.*s' (%s%s) %s", (int)n, name,
			    list.buf, matches > 3 ? ", ..." : "", see);
		else if (!o)
			rc = err_set(EXIT_USAGE, "unknown option '--%.*s' %s", (int)n, name, see);
		else if (o->has_arg == no_argument && eq)
			rc = err_set(EXIT_USAGE, "option '--%s' takes no value %s", o->name, see);
		else
			rc = err_set(EXIT_USAGE, "option '--%s' needs a value %s", o->name, see);
		sbuf_free(&list);
		return rc;
	}
	if (ch == ':')
		return err_set(EXIT_USAGE, "option '-%c' needs a value %s", optopt, see);
	if (optopt > 32 && optopt < 127)
		return err_set(EXIT_USAGE, "unknown option '-%c' %s", optopt, see);
	return err_set(EXIT_USAGE, "unknown option '%s' %s", w, see);
}
