/*
 * rpl: a run's replacement strings and where they are (see rpl.h).
 *
 * parallel turns every replacement string into a perl expression, then
 * evaluates those. The built-in ones are computed in C (cmdline.c copies
 * their perl exactly); the others keep their perl, which perl runs. A
 * string with (groups) is a perl regex, matched by perl (farm/perl.h), and
 * passes what its groups matched to its expression as $$1, $$2 ..., as
 * parallel does.
 */
#include "farm/rpl.h"
#include "farm/perl.h"
#include "util/err.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *key;
	int op;
} builtin[] = {
	/* parallel's seven, in enum rpl_name's order, then gpupack's own */
	{"{}", OP_ALL}, {"{.}", OP_NOEXT}, {"{/}", OP_BASE}, {"{//}", OP_DIR}, {"{/.}", OP_BASE_NOEXT},
	{"{#}", OP_SEQ}, {"{%}", OP_SLOT}, {"{slot}", OP_SLOT}, {"{gpu}", OP_GPU},
};

/* --plus: what parallel's strings mean, as perl ({slot} stays gpupack's: the slot number). */
static const struct {
	const char *key, *code;
} plus[] = {
	{"{+/}", "s:/[^/]*$:: || s:.*$::"},
	{"{+.}", "s:.*\\.:: || s:.*$::"},
	{"{+..}", "s:.*\\.([^/.]*\\.[^/.]*)$:$1: || s:.*$::"},
	{"{+...}", "s:.*\\.([^/.]*\\.[^/.]*\\.[^/.]*)$:$1: || s:.*$::"},
	{"{..}", "s:\\.[^/.]*\\.[^/.]*$::"},
	{"{...}", "s:\\.[^/.]*\\.[^/.]*\\.[^/.]*$::"},
	{"{/..}", "s:.*/::; s:\\.[^/.]*\\.[^/.]*$::"},
	{"{/...}", "s:.*/::; s:\\.[^/.]*\\.[^/.]*\\.[^/.]*$::"},
	{"{choose_k}", "for $t (2..$#arg) { if($arg[$t-1] ge $arg[$t]) { skip() } }"},
	{"{uniq}", "if(::uniq(@arg) != @arg) { skip(); }"},
	{"{##}", "1 $_=total_jobs()"},
	{"{0%}", "1 $f=1+int((log($Global::max_jobs_running||1)/log(10))); $_=sprintf(\"%0${f}d\",slot())"},
	{"{0#}", "1 $f=1+int((log(total_jobs())/log(10))); $_=sprintf(\"%0${f}d\",seq())"},
	{"{:-([^}]+?)}", "$_ ||= $$1"},
	{"{:(\\d+?)}", "substr($_,0,$$1) = \"\""},
	{"{:(\\d+?):(\\d+?)}", "$_ = substr($_,$$1,$$2);"},
	{"{#([^#}][^}]*?)}", "$nongreedy=::make_regexp_ungreedy($$1);s/^$nongreedy(.*)/$1/;"},
	{"{##([^#}][^}]*?)}", "s/^$$1//;"},
	{"{%([^}]+?)}", "$nongreedy=::make_regexp_ungreedy($$1);s/(.*)$nongreedy$/$1/;"},
	{"{%%([^}]+?)}", "s/$$1$//;"},
	{"{/([^#%}/]+?)/([^}]*?)}", "s/$$1/$$2/;"},
	{"{/#([^}]+?)/([^}]*?)}", "s/^$$1/$$2/g;"},
	{"{/%([^}]+?)/([^}]*?)}", "s/$$1$/$$2/g;"},
	{"{//([^}]+?)/([^}]*?)}", "s/$$1/$$2/g;"},
	{"{^([^}]+?)}", "s/^($$1)/uc($1)/e;"},
	{"{^^([^}]+?)}", "s/($$1)/uc($1)/eg;"},
	{"{,([^}]+?)}", "s/^($$1)/lc($1)/e;"},
	{"{,,([^}]+?)}", "s/($$1)/lc($1)/eg;"},
	{"{host}", "1 $_=\"\\${PARALLEL_SSHHOST}\";uq()"},
	{"{sshlogin}", "1 $_=\"\\${PARALLEL_SSHLOGIN}\";uq()"},
	{"{hgrp}", "1 $_=\"\\${PARALLEL_HOSTGROUPS}\";uq()"},
	{"{agrp}", "1 $_=\"\\${PARALLEL_ARGHOSTGROUPS}\";uq()"},
};

/* Literal text in a perl regex (perl's quotemeta). */
static void
quote_re(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    *s == '_' || (unsigned char)*s >= 128))
			sbuf_addc(b, '\\');
		sbuf_addc(b, *s);
	}
}

/*
 * A string's key: (groups) make it a regex (parallel's split of it:
 * ^([^(]*)(\(.*\))?([^)]*)$), matched by perl as parallel matches it: the
 * key, and its positional form \{(-?\d+)\s*KEY-WITHOUT-ITS-{.
 */
static int
key_init(struct rplkey *k, const char *key, int op, const char *code)
{
	const char *open = strchr(key, '('), *close = strrchr(key, ')');
	struct sbuf re, pos;

	memset(k, 0, sizeof *k);
	k->key = xstrdup(key);
	k->op = op;
	k->code = code ? xstrdup(code) : NULL;
	k->has_pos = key[0] == '{';
	if (!open || !close || close < open) {
		k->prefix = xstrdup(key);
		k->postfix = xstrdup("");
		return 0;
	}
	k->dyn = 1;
	k->prefix = xstrndup(key, (size_t)(open - key));
	k->postfix = xstrdup(close + 1);
	sbuf_init(&re);
	sbuf_init(&pos);
	quote_re(&re, k->prefix);
	sbuf_add(&pos, "\\{(-?\\d+)\\s*");
	if (k->has_pos)
		quote_re(&pos, k->prefix + 1);
	sbuf_addn(&re, open, (size_t)(close - open + 1));
	sbuf_addn(&pos, open, (size_t)(close - open + 1));
	quote_re(&re, k->postfix);
	quote_re(&pos, k->postfix);
	k->re = sbuf_detach(&re);
	k->pos_re = sbuf_detach(&pos);
	return 0;
}

static void
key_free(struct rplkey *k)
{
	free(k->re);
	free(k->pos_re);
	free(k->key);
	free(k->code);
	free(k->prefix);
	free(k->postfix);
}

static int
add_key(struct rplset *s, const char *key, int op, const char *code)
{
	/* a later definition of the same string replaces the earlier one (perl's hash) */
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->k[i].key, key) == 0) {
			key_free(&s->k[i]);
			s->k[i] = s->k[--s->n];
			break;
		}
	s->k = xrealloc(s->k, (size_t)(s->n + 1) * sizeof *s->k);
	key_init(&s->k[s->n], key, op, code);
	s->dyn |= s->k[s->n].dyn;
	s->n++;
	return 0;
}

int
rplset_init(struct rplset *s, const char *const *rename, int with_plus, char **defs, int ndefs,
    const char *parens)
{
	size_t half;

	memset(s, 0, sizeof *s);
	if (!parens || strlen(parens) < 2)
		parens = "{==}";
	half = strlen(parens) / 2;
	s->left = xstrndup(parens, half);
	s->right = xstrdup(parens + half);
	if (with_plus)
		for (size_t i = 0; i < sizeof plus / sizeof plus[0]; i++)
			if (add_key(s, plus[i].key, OP_PERL, plus[i].code) < 0)
				return -1;
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (add_key(s, i < RPL_N && rename && rename[i] ? rename[i] : builtin[i].key, builtin[i].op,
		    NULL) < 0)
			return -1;
	for (int i = 0; i < ndefs; i++) {
		size_t n = strcspn(defs[i], " \t\n");
		char *key = xstrndup(defs[i], n);
		int rc;

		if (n == 0 || !defs[i][n]) {
			free(key);
			rplset_free(s);
			return err_set(EXIT_USAGE, "--rpl '%s': want 'TAG perl-expression'", defs[i]);
		}
		rc = add_key(s, key, OP_PERL, defs[i] + n + 1);
		free(key);
		if (rc < 0) {
			rplset_free(s);
			return -1;
		}
	}
	/* longest first, as parallel replaces them (a short one may be part of a long one) */
	for (int i = 1; i < s->n; i++)
		for (int k = i; k > 0 && strlen(s->k[k].key) > strlen(s->k[k - 1].key); k--) {
			struct rplkey x = s->k[k];

			s->k[k] = s->k[k - 1];
			s->k[k - 1] = x;
		}
	return 0;
}

void
rplset_free(struct rplset *s)
{
	for (int i = 0; i < s->n; i++)
		key_free(&s->k[i]);
	free(s->k);
	free(s->left);
	free(s->right);
	memset(s, 0, sizeof *s);
}

/* ---- splitting a word ---------------------------------------------------- */

struct segs {
	struct rplseg *v;
	int n;
	size_t cap;
};

static void
push(struct segs *g, struct rplseg seg)
{
	if (!seg.rpl && seg.len == 0)
		return;
	xgrow(&g->v, &g->cap, (size_t)g->n + 1, sizeof *g->v);
	g->v[g->n++] = seg;
}

/*
 * A perl expression's position, as parallel reads it: leading digits
 * followed by a non-digit (or nothing) are the value it applies to; they
 * and the blanks after them are not part of the code.
 */
static struct rplseg
perl_seg(const char *e)
{
	struct rplseg seg = {1, NULL, 0, OP_PERL, 0, NULL};
	const char *p = e + (*e == '-');

	if (*p >= '0' && *p <= '9') {
		seg.pos = atoi(e);
		while (*p >= '0' && *p <= '9')
			p++;
		e = p;
	}
	while (*e == ' ')
		e++;
	seg.code = xstrdup(e);
	return seg;
}

/* The text's {= ... =}: the shortest, holding no other {= or =} (parallel's rule). */
static void
split_perl(const struct rplset *s, const char *w, struct segs *g)
{
	const char *text = w, *p = w;
	size_t ll = strlen(s->left), rl = strlen(s->right);

	while ((p = strstr(p, s->left)) != NULL) {
		const char *end = strstr(p + ll, s->right), *inner = strstr(p + ll, s->left);
		char *e;

		if (!end)
			break;
		if (inner && inner < end) {
			p = inner;
			continue;
		}
		push(g, (struct rplseg){0, text, (size_t)(p - text), 0, 0, NULL});
		e = xstrndup(p + ll, (size_t)(end - p - ll));
		push(g, perl_seg(e));
		free(e);
		p = text = end + rl;
	}
	push(g, (struct rplseg){0, text, strlen(text), 0, 0, NULL});
}

/* What one match of key k makes: an op, or perl code with its groups' values set first. */
static struct rplseg
key_seg(const struct rplkey *k, const char *text, const long (*m)[2], int first_group, int pos,
    int positional)
{
	struct sbuf e;
	struct rplseg seg;
	int ngroups = 0;

	if (k->op != OP_PERL) {
		seg = (struct rplseg){1, NULL, 0, k->op, pos, NULL};
		if (k->op == OP_SEQ || k->op == OP_SLOT || k->op == OP_GPU)
			seg.pos = 1;
		return seg;
	}
	sbuf_init(&e);
	if (positional)
		sbuf_printf(&e, "%d", pos);
	/* $_pAr_gRpN = "group N"; then the code with $$N as $_pAr_gRpN */
	for (int i = first_group; m && i < PERL_GROUPS && m[i][0] >= 0; i++) {
		sbuf_printf(&e, "$_pAr_gRp%d = \"", ++ngroups);
		for (long c = m[i][0]; c < m[i][1]; c++) {
			if (strchr("\\\"$@", text[c]))
				sbuf_addc(&e, '\\');
			sbuf_addc(&e, text[c]);
		}
		sbuf_add(&e, "\";");
	}
	for (const char *c = k->code; *c; c++) {
		if (c[0] == '$' && c[1] == '$' && c[2] >= '1' && c[2] <= '9') {
			sbuf_printf(&e, "$_pAr_gRp%c", c[2]);
			c += 2;
			continue;
		}
		sbuf_addc(&e, *c);
	}
	seg = perl_seg(e.buf ? e.buf : "");
	sbuf_free(&e);
	return seg;
}

/* Literal key k in text[0..n): where its next occurrence is (plain or {N...}). */
static int
find_literal(const struct rplkey *k, const char *t, size_t n, int positional, size_t *so, size_t *eo,
    int *pos)
{
	size_t kl = strlen(k->key);

	for (size_t i = 0; i < n; i++) {
		const char *p = t + i;
		long v = 0;

		if (!positional) {
			if (kl && i + kl <= n && memcmp(p, k->key, kl) == 0) {
				*so = i;
				*eo = i + kl;
				return 1;
			}
			continue;
		}
		/* \{(-?\d+)\s* then the rest of the key */
		if (*p != '{')
			continue;
		p++;
		if (p < t + n && *p == '-')
			p++;
		if (p >= t + n || *p < '0' || *p > '9')
			continue;
		while (p < t + n && *p >= '0' && *p <= '9') {
			if (v < 1000000)
				v = v * 10 + (*p - '0');
			p++;
		}
		while (p < t + n && strchr(" \t\n\r\f\v", *p))
			p++;
		if ((size_t)(t + n - p) >= kl - 1 && memcmp(p, k->key + 1, kl - 1) == 0) {
			*so = i;
			*eo = (size_t)(p - t) + kl - 1;
			*pos = t[i + 1] == '-' ? (int)-v : (int)v;
			return 1;
		}
	}
	return 0;
}

/* Replace key k in every text piece of g (its positional form when positional). */
static int
apply_key(const struct rplkey *k, struct segs *g, int positional, struct perl *perl)
{
	struct segs out = {NULL, 0, 0};
	int rc = 0;

	for (int i = 0; i < g->n; i++) {
		struct rplseg s = g->v[i];
		char *copy = NULL;
		size_t at = 0;

		if (s.rpl || rc < 0) {
			push(&out, s);
			continue;
		}
		if (k->dyn)
			copy = xstrndup(s.text, s.len);
		for (;;) {
			size_t so, eo;
			int pos = 0, found;
			long m[PERL_GROUPS][2];

			if (k->dyn) {
				found = perl_match(perl, positional ? k->pos_re : k->re, copy + at, m);
				if (found < 0)
					rc = -1;
				if (found <= 0 || m[0][1] == m[0][0])
					break;
				so = at + (size_t)m[0][0];
				eo = at + (size_t)m[0][1];
				if (positional)
					pos = atoi(copy + at + m[1][0]);
			} else if (!find_literal(k, s.text + at, s.len - at, positional, &so, &eo, &pos)) {
				break;
			} else {
				so += at;
				eo += at;
			}
			push(&out, (struct rplseg){0, s.text ? s.text + at : NULL, so - at, 0, 0, NULL});
			push(&out, key_seg(k, copy ? copy + at : NULL, k->dyn ? (const long (*)[2])m : NULL,
			    positional ? 2 : 1, pos, positional));
			at = eo;
		}
		/* an empty segment has no text (NULL): no offset into it */
		push(&out, (struct rplseg){0, s.text ? s.text + at : NULL, s.len - at, 0, 0, NULL});
		free(copy);
	}
	free(g->v);
	*g = out;
	return rc;
}

int
rpl_split(const struct rplset *s, const char *w, struct perl *perl, struct rplseg **segs, int *n)
{
	struct segs g = {NULL, 0, 0};
	int rc = 0;

	split_perl(s, w, &g);
	for (int i = 0; i < s->n && rc == 0; i++) {
		rc = apply_key(&s->k[i], &g, 0, perl);
		if (rc == 0 && s->k[i].has_pos)
			rc = apply_key(&s->k[i], &g, 1, perl);
	}
	*segs = g.v;
	*n = g.n;
	return rc;
}

void
rplsegs_free(struct rplseg *segs, int n)
{
	for (int i = 0; i < n; i++)
		free(segs[i].code);
	free(segs);
}
