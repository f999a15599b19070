/*
 * perl: one perl process that runs a farm's perl replacement strings.
 *
 * gpupack writes requests on perl's stdin and reads replies on its stdout,
 * one at a time (a request is written whole before its reply is read, and
 * perl writes only replies, so neither side blocks the other):
 *   C <len>\n<code>              compile: "O\n", or "F <len>\n<message>"
 *   J <seq> <slot> <total> <n>\n then n times <len>\n<value>: the task (no reply)
 *   E <id> <argno> <len>\n<value> run: "R <flags> <len>\n<value>", or "F ..."
 *   T <len>\n<code>              --filter: eval it (strict, as parallel's: an error is false),
 *                                "R 0 1\n1" when true, "R 0 0\n" false
 *   M <len> <len>\n<re><text>     a replacement string's regex: "R 0 <len>\n<so> <eo> ..." or empty
 * perl exits when its stdin closes. A value is kept for its task, as
 * parallel keeps it, unless it is false ("" or "0"): parallel's cache does
 * not keep those, and runs the expression again when asked again.
 */
#include "farm/perl.h"
#include "util/err.h"
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/*
 * What parallel gives a perl replacement string, written for gpupack: the
 * functions of its package Arg, $job, @arg, and the ::uniq and
 * ::make_regexp_ungreedy its --plus strings call.
 */
static const char helper[] =
    "use strict; no warnings; use POSIX ();\n"
    "binmode STDIN; binmode STDOUT; $| = 1;\n"
    "$Global::max_jobs_running = $ARGV[0];\n"
    "my (@code, %cache);\n"
    "sub rd { my $n = shift; my $b = '';\n"
    "  while (length($b) < $n) { my $r = read(STDIN, $b, $n - length($b), length($b)); exit 0 if !$r; }\n"
    "  return $b; }\n"
    "sub rl { my $l = <STDIN>; exit 0 if !defined $l; chomp $l; return $l; }\n"
    "sub out { my $s = shift; utf8::encode($s) if utf8::is_utf8($s); return length($s) . \"\\n\" . $s; }\n"
    "sub Q { my $s = shift; return \"''\" if !defined $s || $s eq '';\n"
    "  return $s if $s !~ /[^-_.+a-zA-Z0-9\\/]/;\n"
    "  $s =~ s/'/'\"'\"'/g; $s = \"'$s'\"; $s =~ s/^''//; $s =~ s/''$//; return $s; }\n"
    "sub pQ { my $s = shift; $s =~ s/[\\\\\\\"\\$\\@]/\\\\$&/g; return $s; }\n"
    "sub uniq { my %h = map { $_ => 1 } @_; return keys %h; }\n"
    "sub make_regexp_ungreedy { my $re = shift; my ($o, $cls, $esc, $q) = ('', 0, 0, 0);\n"
    "  for my $c (split //, $re) {\n"
    "    if ($q) { $o .= '?' if $c ne '?'; $q = 0; }\n"
    "    $o .= $c;\n"
    "    if ($esc) { $esc = 0; next; }\n"
    "    if ($c eq '\\\\') { $esc = 1; next; }\n"
    "    if ($c eq '[') { $cls = 1; next; }\n"
    "    if ($cls) { $cls = 0 if $c eq ']'; next; }\n"
    "    $q = 1 if $c =~ /[*}+]/; }\n"
    "  $o .= '?' if $q; return $o; }\n"
    "package Job;\n"
    "sub seq { $_[0]{seq} } sub slot { $_[0]{slot} } sub skip { $_[0]{skip} = 1 }\n"
    "package Arg;\n"
    "our ($job, $total, $uq, @arg);\n"
    "sub Q { ::Q(@_) } sub pQ { ::pQ(@_) } sub hash { require B; B::hash(@_) }\n"
    "sub total_jobs { $total } sub skip { $job->{skip} = 1 } sub slot { $job->{slot} }\n"
    "sub seq { $job->{seq} } sub uq { $uq = 1 }\n"
    "sub tm { POSIX::strftime($_[0], localtime(time())) }\n"
    "sub yyyy_mm_dd_hh_mm_ss { tm('%Y-%m-%dT%H:%M:%S') } sub yyyy_mm_dd_hh_mm { tm('%Y-%m-%dT%H:%M') }\n"
    "sub yyyy_mm_dd { tm('%Y-%m-%d') } sub hh_mm_ss { tm('%H:%M:%S') } sub hh_mm { tm('%H:%M') }\n"
    "sub yyyymmddhhmmss { tm('%Y%m%d%H%M%S') } sub yyyymmddhhmm { tm('%Y%m%d%H%M') }\n"
    "sub yyyymmdd { tm('%Y%m%d') } sub hhmmss { tm('%H%M%S') } sub hhmm { tm('%H%M') }\n"
    "package main;\n"
    "$Arg::job = bless {}, 'Job';\n"
    "while (1) {\n"
    "  my ($c, @f) = split / /, rl();\n"
    "  if ($c eq 'C') { my $code = rd($f[0]);\n"
    "    my $sub = eval \"package Arg; sub { no strict; no warnings; my \\$job = shift; $code\\n }\";\n"
    "    if ($sub) { push @code, $sub; print \"O\\n\"; } else { print 'F ', out(\"$@\"); }\n"
    "  } elsif ($c eq 'J') { my @a = (undef);\n"
    "    for (1 .. $f[3]) { push @a, rd(rl()); }\n"
    "    $Arg::job = bless { seq => $f[0], slot => $f[1] }, 'Job'; $Arg::total = $f[2];\n"
    "    @Arg::arg = @a; %cache = ();\n"
    "  } elsif ($c eq 'E') { my $v = rd($f[2]); my $key = \"$f[0] $f[1]\";\n"
    "    my ($r, $u);\n"
    "    if ($cache{$key}) { ($r, $u) = @{$cache{$key}}; } else { local $_ = $v; $Arg::uq = 0;\n"
    "      if (!eval { $code[$f[0]]->($Arg::job); 1 }) { print 'F ', out(\"$@\"); next; }\n"
    "      ($r, $u) = (defined $_ ? \"$_\" : '', $Arg::uq);\n"
    "      $cache{$key} = [$r, $u] if $r; }\n"
    "    print 'R ', ($u ? 1 : 0) | ($Arg::job->{skip} ? 2 : 0), ' ', out($r);\n"
    "  } elsif ($c eq 'T') { my $code = rd($f[0]); my $r = eval \"package Arg; use strict; no warnings; $code\";\n"
    "    print 'R 0 ', out(!$@ && $r ? '1' : '');\n"
    "  } elsif ($c eq 'M') { my $re = rd($f[0]); my $t = rd($f[1]); my $r = '';\n"
    "    eval { if ($t =~ /$re/s) { $r = join(' ', map { defined $-[$_] ? \"$-[$_] $+[$_]\" : '-1 -1' }\n"
    "      0 .. ($#- > 9 ? 9 : $#-)); } };\n"
    "    if ($@) { print 'F ', out(\"$@\"); } else { print 'R 0 ', out($r); }\n"
    "  } else { exit 2; }\n"
    "}\n";

int
perl_open(struct perl *p, int max_jobs_running)
{
	posix_spawn_file_actions_t fa;
	int in[2], out[2], rc;
	char jobs[16], *argv[] = {"perl", "-e", (char *)helper, jobs, NULL};

	memset(p, 0, sizeof *p);
	p->to = p->from = -1;
	snprintf(jobs, sizeof jobs, "%d", max_jobs_running);
	if (pipe2(in, O_CLOEXEC) < 0)
		return err_sys(EXIT_INTERNAL, "pipe");
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return err_sys(EXIT_INTERNAL, "pipe");
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	rc = posix_spawnp(&p->pid, "perl", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		p->pid = 0;
		errno = rc;
		return err_sys(EXIT_USAGE, "a perl replacement string ({= =}, --plus) needs perl, as GNU "
		    "parallel does (or write it as a shell command line)");
	}
	p->to = in[1];
	p->from = out[0];
	return 0;
}

static int
send_all(struct perl *p, const char *buf, size_t len)
{
	if (write_all(p->to, buf, len) < 0)
		return err_sys(EXIT_INTERNAL, "perl (for a perl replacement string)");
	return 0;
}

static int
send_str(struct perl *p, struct sbuf *b)
{
	int rc = send_all(p, b->buf ? b->buf : "", b->len);

	sbuf_reset(b);
	return rc;
}

/* n bytes of perl's output into out. */
static int
recv_n(struct perl *p, size_t n, struct sbuf *out)
{
	while (n > 0) {
		ssize_t got;

		if (p->roff < p->rlen) {
			size_t take = p->rlen - p->roff < n ? p->rlen - p->roff : n;

			sbuf_addn(out, p->rbuf + p->roff, take);
			p->roff += take;
			n -= take;
			continue;
		}
		do
			got = read(p->from, p->rbuf, sizeof p->rbuf);
		while (got < 0 && errno == EINTR);
		if (got <= 0)
			return err_set(EXIT_INTERNAL, "perl (for a perl replacement string) ended early");
		p->rlen = (size_t)got;
		p->roff = 0;
	}
	return 0;
}

/* One line of perl's output (without its newline) into out. */
static int
recv_line(struct perl *p, struct sbuf *out)
{
	for (;;) {
		size_t before = out->len;

		if (recv_n(p, 1, out) < 0)
			return -1;
		if (out->buf[before] == '\n') {
			out->len = before;
			out->buf[before] = '\0';
			return 0;
		}
	}
}

/* A reply: 'O', 'R' (flags, value into out) or 'F' (its message as the error). */
static int
recv_reply(struct perl *p, const char *what, struct sbuf *out, int *flags)
{
	struct sbuf line, msg;
	unsigned long len = 0;
	int fl = 0, rc = 0;
	char kind;

	sbuf_init(&line);
	if (recv_line(p, &line) < 0) {
		sbuf_free(&line);
		return -1;
	}
	kind = line.buf ? line.buf[0] : '?';
	if (kind == 'O') {
		sbuf_free(&line);
		return 0;
	}
	if ((kind == 'R' && sscanf(line.buf, "R %d %lu", &fl, &len) != 2) ||
	    (kind == 'F' && sscanf(line.buf, "F %lu", &len) != 1) || (kind != 'R' && kind != 'F')) {
		sbuf_free(&line);
		return err_set(EXIT_INTERNAL, "perl (for a perl replacement string): a reply not understood");
	}
	sbuf_free(&line);
	if (kind == 'R') {
		*flags = fl;
		return recv_n(p, len, out);
	}
	sbuf_init(&msg);
	rc = recv_n(p, len, &msg);
	if (rc == 0) {
		/* perl's message: its first line, without " at (eval 1) line 1" */
		char *nl = msg.buf ? strchr(msg.buf, '\n') : NULL, *at;

		if (nl)
			*nl = '\0';
		if (msg.buf && (at = strstr(msg.buf, " at (eval")) != NULL)
			*at = '\0';
		rc = err_set(EXIT_USAGE, "%s: %s", what, msg.buf ? msg.buf : "perl failed");
	}
	sbuf_free(&msg);
	return rc;
}

int
perl_compile(struct perl *p, const char *code)
{
	struct sbuf b;
	int flags, rc;

	sbuf_init(&b);
	sbuf_printf(&b, "C %zu\n", strlen(code));
	sbuf_add(&b, code);
	rc = send_str(p, &b);
	if (rc == 0) {
		char *what = xasprintf("perl expression {=%s=}", code);

		rc = recv_reply(p, what, &b, &flags);
		free(what);
	}
	sbuf_free(&b);
	return rc < 0 ? -1 : p->ncode++;
}

int
perl_job(struct perl *p, unsigned long long seq, int slot, unsigned long long total,
    char *const *args, int nargs, int noarg)
{
	struct sbuf b;
	int rc;

	if (seq == p->job_seq && slot == p->job_slot)
		return 0;
	sbuf_init(&b);
	sbuf_printf(&b, "J %llu %d %llu %d\n", seq, slot, total, nargs);
	for (int i = 0; i < nargs; i++) {
		if (noarg) {
			sbuf_printf(&b, "%d\n", PERL_NOARG_LEN);
			sbuf_addn(&b, PERL_NOARG, PERL_NOARG_LEN);
			continue;
		}
		sbuf_printf(&b, "%zu\n", strlen(args[i]));
		sbuf_add(&b, args[i]);
	}
	rc = send_str(p, &b);
	sbuf_free(&b);
	if (rc == 0) {
		p->job_seq = seq;
		p->job_slot = slot;
	}
	return rc;
}

int
perl_eval(struct perl *p, int id, int argno, const char *val, size_t len, struct sbuf *out,
    int *flags)
{
	struct sbuf b;
	int rc;

	*flags = 0;
	sbuf_init(&b);
	sbuf_printf(&b, "E %d %d %zu\n", id, argno, len);
	sbuf_addn(&b, val, len);
	rc = send_str(p, &b);
	sbuf_free(&b);
	return rc < 0 ? -1 : recv_reply(p, "a perl replacement string", out, flags);
}

int
perl_test(struct perl *p, const char *code, int *truth)
{
	struct sbuf b;
	int flags, rc;

	sbuf_init(&b);
	sbuf_printf(&b, "T %zu\n", strlen(code));
	sbuf_add(&b, code);
	rc = send_str(p, &b);
	if (rc == 0) {
		char *what = xasprintf("--filter '%s'", code);

		rc = recv_reply(p, what, &b, &flags);
		free(what);
	}
	*truth = rc == 0 && b.len > 0;
	sbuf_free(&b);
	return rc;
}

int
perl_match(struct perl *p, const char *re, const char *text, long m[PERL_GROUPS][2])
{
	struct sbuf b;
	int flags, rc, i = 0;
	char *at, *end;

	sbuf_init(&b);
	sbuf_printf(&b, "M %zu %zu\n", strlen(re), strlen(text));
	sbuf_add(&b, re);
	sbuf_add(&b, text);
	rc = send_str(p, &b);
	if (rc == 0) {
		char *what = xasprintf("replacement string regex '%s'", re);

		rc = recv_reply(p, what, &b, &flags);
		free(what);
	}
	for (int k = 0; k < PERL_GROUPS; k++)
		m[k][0] = m[k][1] = -1;
	for (at = b.buf; rc == 0 && at && *at && i < PERL_GROUPS; i++) {
		m[i][0] = strtol(at, &end, 10);
		m[i][1] = strtol(end, &at, 10);
	}
	sbuf_free(&b);
	return rc < 0 ? -1 : i > 0;
}

void
perl_close(struct perl *p)
{
	/* never started (a zeroed struct perl holds no descriptor) */
	if (p->pid == 0)
		return;
	if (p->to >= 0)
		close(p->to);
	if (p->from >= 0)
		close(p->from);
	/* the farm's loop may have reaped it already (waitpid -1): ECHILD then */
	if (p->pid > 0)
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	p->to = p->from = -1;
	p->pid = 0;
}
