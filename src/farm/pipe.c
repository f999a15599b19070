/*
 * pipe: --pipe and --pipe-part's blocks (see pipe.h). A perl process of
 * gpupack's cuts the data as GNU parallel cuts it and writes each block
 * framed ("<length>\n<bytes>") on a pipe; gpupack reads one block when a
 * task needs one (so the cutting goes no further ahead than the pipe
 * holds) and puts it in a temporary file, the task's stdin.
 *
 * How parallel cuts (its spreadstdin): it reads up to the next multiple of
 * the block size, then passes what ends at the last record boundary
 * (recend followed by recstart) and keeps the rest; with -N, every N
 * records; with -L (no -N), whole groups of L lines; when nothing could be
 * passed the block grows by 30%. --pipe-part cuts the file at each multiple
 * of the block size, moved on to the next record boundary.
 */
#include "farm/pipe.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/*
 * Spreading's perl, shared by the cutter (--round-robin) and the binner:
 * the fifos DIR/1..R opened (gpupack holds their read ends, so this does
 * not wait), and give(K, BYTES): write to slot K's fifo, count what went in
 * DIR/sent (a line of 21 bytes a slot: the joblog's Send); a slot whose task
 * has ended (EPIPE) is closed and gets nothing more.
 */
#define SPREAD_PERL \
    "my ($cf, @sent);\n" \
    "sub spread_open { $SIG{PIPE} = 'IGNORE'; $| = 1; for my $k (1 .. $R) { open($fh[$k], '>', \"$dir/$k\")\n" \
    "    or die \"$dir/$k: $!\\n\"; binmode $fh[$k]; } open($cf, '+<', \"$dir/sent\") or die \"$dir/sent: $!\\n\"; }\n" \
    "sub give { my ($k, $b) = @_; return 0 unless $fh[$k]; my $o = 0;\n" \
    "  while ($o < length $b) { my $w = syswrite($fh[$k], $b, length($b) - $o, $o);\n" \
    "    if (!defined $w) { close $fh[$k]; $fh[$k] = undef; last; } $o += $w; }\n" \
    "  $sent[$k] += $o; sysseek($cf, ($k - 1) * 21, 0); syswrite($cf, sprintf(\"%20d\\n\", $sent[$k])); return $o; }\n"

/*
 * parallel's column_perlexpr: "COL [PERL]", "NAME [PERL]" or "PERL": the
 * column (from 1; a name looked up in the header line, split at SEP) and
 * the expression as a sub. An unknown name is reported on stdout as
 * "!message" (pipe_next makes it gpupack's error) and ends the process.
 */
#define COLEXPR_PERL \
    "sub colexpr { my ($e, $h, $sep) = @_; my $col;\n" \
    "  if ($e =~ /^[-a-z0-9_]+(\\s|$)/i) { if ($e =~ s/^(-?\\d+)(\\s|$)//) { $col = $1; }\n" \
    "    elsif ($e =~ s/^([a-z0-9_]+)(\\s+|$)//i) { my $name = $1; chomp $h; my @h = split /$sep/, $h; my %h;\n" \
    "      @h{@h} = (1 .. @h); $col = $h{$name};\n" \
    "      if (!defined $col) { print \"!column '$name' is not in the header line (\", join(', ', @h), \")\\n\"; exit 2; } } }\n" \
    "  my $sub = eval(\"sub { no strict; no warnings; $e }\");\n" \
    "  if (!$sub) { my $m = $@; $m =~ s/\\n.*//s; print \"!the perl expression '$e': $m\\n\"; exit 2; }\n" \
    "  return ($col, $sub); }\n"

/*
 * --bin COL [PERL]: every slot is announced at once (its task started),
 * then each line goes to the slot its value names: value % slots, 0 the
 * last slot, as parallel's binner. A named column reads the first line as
 * the header (not given to any task, as in parallel). Lines are gathered a
 * slot at a time, 64 KiB at most, before they are written.
 */
static const char binner[] =
    "use strict; no warnings; binmode STDIN; binmode STDOUT;\n"
    "my ($sep, $expr, $dir, $R, $skip1) = @ARGV; my @fh;\n"
    SPREAD_PERL
    COLEXPR_PERL
    "if ($skip1) { my $c; while (sysread(STDIN, $c, 1)) { last if $c eq \"\\n\"; } }\n"
    "my $hdr = $expr =~ /^[a-z_][a-z_0-9]*(\\s|$)/i ? <STDIN> : '';\n"
    "my ($col, $sub) = colexpr($expr, $hdr, $sep); my $c0 = ($col || 0) - 1; my $lim = ($col || 0) + 1;\n"
    "spread_open(); print \"$_\\n\" for 1 .. $R; close STDOUT;\n"
    "my @out;\n"
    "while (defined(my $l = <STDIN>)) { my @F = split /$sep/, $l, $lim; my $k;\n"
    "  { local $_ = $F[$c0]; $sub->(); $k = $_ % $R; } $k ||= $R; $out[$k] .= $l;\n"
    "  if (length $out[$k] >= 65536) { give($k, $out[$k]); $out[$k] = ''; } }\n"
    "for my $k (1 .. $R) { give($k, $out[$k]) if length($out[$k] // ''); }\n";

static const char cutter[] =
    "use strict; no warnings; binmode STDIN; binmode STDOUT;\n"
    "my ($bs, $rs, $re, $rx, $rrs, $hdr, $N, $L, $skip1, $empty, $part, $file, $rs_set, $re_set, $spread, $dir,\n"
    "  $R, $gby, $gsep) = @ARGV;\n"
    /* --group-by, as parallel: a random record start before each run of one value, removed */
    "if ($gby ne '') { $rs = join('', map { (0 .. 9, 'a' .. 'z', 'A' .. 'Z')[rand 62] } 1 .. 20); $re = '';\n"
    "  $rs_set = 1; $re_set = 0; $rrs = 1; $rx = 0; $hdr = 1 if $gby =~ /^[a-z_][a-z_0-9]*(\\s|$)/i; }\n"
    "sub unesc { my %m = ('0' => \"\\0\", 'r' => \"\\r\", 'n' => \"\\n\", 't' => \"\\t\", \"'\" => \"'\",\n"
    "  '\"' => '\"', '\\\\' => '\\\\'); my $s = shift; $s =~ s/\\\\([0rnt'\"\\\\])/$m{$1}/g; return $s; }\n"
    "if ($rs_set && !$re_set) { $re = ''; } elsif ($re_set && !$rs_set) { $rs = '';\n"
    "  $re = '(?s:.)' if $rx && $re eq ''; } elsif (!$rs_set && !$re_set) { $rs = ''; $re = \"\\n\"; }\n"
    "if ($rx) { $rs = \"(?:(?-x:$rs))\"; $re = \"(?:(?-x:$re))\"; } else { $rs = unesc($rs); $re = unesc($re); }\n"
    "my $rers = $re . $rs;\n"
    "my ($buf, $header, $eof, $written, $garbage) = ('', '', 0, 0, 0);\n"
    "sub emit { my $len = shift; return if $len <= 0; my $b = substr($buf, 0, $len); substr($buf, 0, $len) = '';\n"
    "  if ($rrs) { if ($rx) { $b =~ s/$re$rs//gm; $b =~ s/^$rs//s; $b =~ s/$re$//s; }\n"
    "    else { $b =~ s/\\Q$re$rs\\E//gm; $b =~ s/^\\Q$rs\\E//s; $b =~ s/\\Q$re\\E$//s; } }\n"
    "  if ($spread) { robin($b); $written = 1; return; }\n"
    "  $b = $header . $b;\n"
    "  print length($b), \"\\n\", $b; $written = 1; }\n"
    /*
     * --round-robin: the first block of each slot is held until every slot
     * has one (or the data ends) and the slots are announced, the announcing
     * ended by closing stdout: gpupack, reading the announcements, never
     * waits on a task (see pipe.h). Then the blocks go to the slots in turn,
     * each slot's first with the header; a slot whose task has ended is
     * passed over (EPIPE).
     */
    "my (@held, @fh, $next);\n"
    "sub robin { my $b = shift; if (defined $R && @held < $R && !$fh[0]) { push @held, $b; print scalar(@held), \"\\n\";\n"
    "    flush_held() if @held == $R; return; }\n"
    "  for (1 .. $R) { $next = ($next || 0) % $R + 1; next unless $fh[$next]; return if give($next, $b) || !length $b; }\n"
    "  exit 0; }\n"
    "sub flush_held { close STDOUT; $fh[0] = 1; my $k = 0; for my $b (@held) { $k++; give($k, $header . $b); } $next = $k; @held = (); }\n"
    SPREAD_PERL
    COLEXPR_PERL
    "my ($gcol, $gsub, $gpend, $glast) = (undef, undef, '', $rs);\n"
    "sub gline { my $l = shift; { local $_ = defined $gcol ? (split /$gsep/, $l)[$gcol] : $l; $gsub->();\n"
    "    if ($glast ne $_) { $gpend .= $rs; $glast = $_; } } $gpend .= $l; }\n"
    "sub rd { my $want = shift; return sysread(STDIN, $buf, $want, length $buf) if $gby eq '';\n"
    "  while (length($gpend) < $want) { my $l = <STDIN>; last if !defined $l; gline($l); }\n"
    "  my $n = length($gpend) < $want ? length $gpend : $want; $buf .= substr($gpend, 0, $n); substr($gpend, 0, $n) = '';\n"
    "  return $n; }\n"
    "sub nth { my $n = shift; my $i = 0; for (1 .. $n) { $i = index($buf, $rers, $i + 1); last if $i == -1; } return $i; }\n"
    "if ($spread) { spread_open(); }\n"
    /*
     * --pipe-part --group-by: parallel's split positions, ported as they are
     * (split_positions_for_group_by): from each start a block on, the end
     * of the run of the value found there (or its start), by bisection.
     */
    "sub vat { my ($fh, $pos) = @_; if ($pos != 0) { seek($fh, $pos - 1, 0); my $half = <$fh>; } my $lp = tell($fh);\n"
    "  local $_ = <$fh>; if (defined $_) { if (defined $gcol) { my @F = split /$gsep/, $_; $_ = $F[$gcol]; } $gsub->(); }\n"
    "  return ($_, $lp); }\n"
    "sub bend { my ($fh, $s, $sp, $ep) = @_; my $d = $ep - $sp; my ($v, $vp);\n"
    "  while ($d) { ($v, $vp) = vat($fh, $sp + $d); if ($v eq $s) { $sp = $vp; $d = $ep - $sp; } else { $ep = $vp; }\n"
    "    $d = int($d / 2); } return ($v, $vp); }\n"
    "sub bstart { my ($fh, $s, $sp, $ep) = @_; my $d = $ep - $sp; my ($v, $vp);\n"
    "  while ($d) { ($v, $vp) = vat($fh, $sp + $d); if ($v eq $s) { $ep = $vp; } else { $sp = $vp; $d = $ep - $sp; }\n"
    "    $d = int($d / 2); } return ($v, $vp); }\n"
    "sub gpos { my ($size, $blk) = @_; open(my $fh, '<', $file) or die \"$file: $!\\n\"; binmode $fh; my @pos;\n"
    "  my ($va, $vb, $vc, $ap, $bp, $cp);\n"
    "  for (($va, $ap) = vat($fh, 0); $ap < $size;) { push @pos, $ap; $bp = $ap + $blk; ($vb, $bp) = vat($fh, $bp);\n"
    "    if (eof($fh)) { push @pos, $size; last; } $cp = $bp + $blk; ($vc, $cp) = vat($fh, $cp);\n"
    "    if ($va eq $vb) { while ($vb eq $vc) { $bp = $cp; $cp += $blk; ($vc, $cp) = vat($fh, $cp);\n"
    "        if ($cp >= $size) { $cp = $size; last; } } ($vb, $bp) = bend($fh, $vb, $bp, $cp); }\n"
    "    elsif ($vb eq $vc) { ($vb, $bp) = bstart($fh, $vb, $ap, $bp); } else { ($vb, $bp) = bend($fh, $vb, $bp, $cp); }\n"
    "    ($va, $ap) = ($vb, $bp); }\n"
    "  push @pos, $size if !@pos || $pos[-1] != $size; return @pos; }\n"
    "if ($part) {\n"
    "  open(my $fh, '<', $file) or die \"$file: $!\\n\"; binmode $fh; my $size = -s $file; my @pos = (0);\n"
    "  if ($gby ne '') { if ($gby =~ /^[a-z_][a-z_0-9]*(\\s|$)/i) {\n"
    "      print \"!--group-by NAME is not supported with --pipe-part (as in parallel): give the column's number\\n\";\n"
    "      exit 2; }\n"
    "    ($gcol, $gsub) = colexpr($gby, '', $gsep); $gcol-- if $gcol; @pos = gpos($size, $bs); $bs = $size + 1; }\n"
    "  for (my $p = $bs; $p < $size; $p += $bs) {\n"
    "    if ($rers eq '') { push @pos, $p; next; }\n"
    "    sysseek($fh, $p, 0); my $b = '';\n"
    "    while (sysread($fh, $b, 131072, length $b)) {\n"
    "      if ($rx) { if ($b =~ m:^(.*$re)$rs:os) { $p += length($1); push @pos, $p; last; } }\n"
    "      else { my $i = index($b, $rers); if ($i != -1) { $p += $i + length($re); push @pos, $p; last; } } } }\n"
    "  push @pos, $size if $pos[-1] != $size;\n"
    "  for my $k (0 .. $#pos - 1) { sysseek($fh, $pos[$k], 0); $buf = ''; my $want = $pos[$k + 1] - $pos[$k];\n"
    "    while (length($buf) < $want && sysread($fh, $buf, $want - length($buf), length $buf)) {}\n"
    "    emit(length $buf); }\n"
    "  exit 0; }\n"
    "if ($skip1) { my $c; while (sysread(STDIN, $c, 1)) { last if $c eq \"\\n\"; } }\n"
    "if ($hdr ne '') { $hdr = '(.*\\n)' if $hdr eq ':'; $hdr = '(.*\\n)' x $hdr if $hdr =~ /^\\d+$/;\n"
    "  if ($gby ne '') { my $h = ''; while (defined(my $l = <STDIN>)) { $h .= $l; if ($h =~ s/^($hdr)//) { $header = $1;\n"
    "    $gpend = $h; last; } } }\n"
    "  else { while (sysread(STDIN, $buf, $bs, length $buf)) { if ($buf =~ s/^($hdr)//) { $header = $1; last; } } } }\n"
    "if ($gby ne '') { ($gcol, $gsub) = colexpr($gby, $header, $gsep); $gcol-- if $gcol; my $p = $gpend; $gpend = '';\n"
    "  gline($_) for split /(?<=\\n)/, $p; }\n"
    "while (1) {\n"
    "  $written = 0; my $n; my $want = $bs - length($buf) % $bs;\n"
    "  do { $n = rd($want); $want -= $n; } while ($want && $n);\n"
    "  $eof = !$n;\n"
    "  if ($empty) { $buf =~ s/^\\s*\\n//gm; if (!length $buf) { last if $eof; next; } }\n"
    "  if ($L && !$N) {\n"
    "    my $lines = ($buf =~ tr/\\n/\\n/); my $at = rindex($buf, \"\\n\");\n"
    "    while ($lines % $L) { $lines--; $at = rindex($buf, \"\\n\", $at - 1); }\n"
    "    emit($at + 1);\n"
    "  } elsif ($rx && $N) {\n"
    "    if (!$garbage) { $garbage = 1;\n"
    "      if ($buf !~ /^$rs/o && $buf =~ /(?s:^)((?:(?:(?!$re$rs)(?s:.))*?$re))(?=$rs)/mox && length $1) { emit(length $1); } }\n"
    "    my $k = $N * ($L || 1);\n"
    "    while ($buf =~ /(?s:^)((?:$rs(?:(?!$re$rs)(?s:.))*?$re){$k})(?=$rs)/mox && length $1) { emit(length $1); }\n"
    "  } elsif ($rx) {\n"
    "    if (!$eof && $buf =~ /^((?s:.)*$re)$rs(?s:.)*?$/mox) { emit(length $1); }\n"
    "  } elsif ($N) {\n"
    "    my $i; while (($i = nth($N * ($L || 1))) != -1 && length $buf) { emit($i + length $re); }\n"
    "  } elsif (!$eof) {\n"
    "    my $i = rindex($buf, $rers); emit($i + length $re) if $i != -1;\n"
    "  }\n"
    "  last if $eof;\n"
    "  if (!$written && $bs < 2**31 - 1) { my $o = $bs; $bs = int($bs * 1.3 + 1); $bs = 2**31 - 1 if $bs > 2**31 - 1;\n"
    "    print STDERR \"gpupack: run: warning: a record was longer than $o: --block $bs\\n\"; }\n"
    "}\n"
    "emit(length $buf);\n"
    "flush_held() if $spread && !$fh[0];\n";

int
pipe_spread(const struct pipe_opts *o)
{
	if (!o->on || o->tee || o->part)
		return PIPE_BLOCKS;
	return o->bin ? PIPE_BIN : o->round_robin ? PIPE_ROUND_ROBIN : PIPE_BLOCKS;
}

/*
 * Spreading: a private directory of fifos 1..n and the counts file, each
 * fifo's read end held (non-blocking to open; the tasks' own are blocking).
 */
static int
spread_prepare(struct pipe_src *p, int n)
{
	const char *tmp = getenv("TMPDIR");
	char *path;
	int fd;

	p->dir = xasprintf("%s/gpupack-spread.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		err_sys(EXIT_ENV, "a directory for --round-robin's fifos in %s", tmp && *tmp ? tmp : "/tmp");
		free(p->dir);
		p->dir = NULL;
		return -1;
	}
	p->nslots = n;
	p->rd = xcalloc((size_t)n, sizeof *p->rd);
	for (int k = 0; k < n; k++)
		p->rd[k] = -1;
	path = xasprintf("%s/sent", p->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	free(path);
	if (fd < 0)
		return err_sys(EXIT_ENV, "--round-robin: %s/sent", p->dir);
	close(fd);
	for (int k = 0; k < n; k++) {
		path = xasprintf("%s/%d", p->dir, k + 1);
		if (mkfifo(path, 0600) == 0)
			p->rd[k] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		free(path);
		if (p->rd[k] < 0)
			return err_sys(EXIT_ENV, "--round-robin: a fifo in %s", p->dir);
	}
	return 0;
}

/* The block size in bytes, as parallel reads --block (--pipe-part: from the file and the slots). */
static int
block_size(const struct pipe_opts *o, int slots, double *bs)
{
	struct stat st;

	/* parallel's sizes: k m g t are powers of 1000, K M G T (and Ki Mi ...) of 1024; 1k+1k */
	if (parse_prefixed(o->block ? o->block : !o->part ? "1M" : o->round_robin ? "-1" : "-10", bs) < 0)
		return err_prefix("--block");
	if (o->part) {
		if (!o->file || stat(o->file, &st) < 0 || !S_ISREG(st.st_mode))
			return err_set(EXIT_USAGE, "--pipe-part needs -a FILE, a regular file");
		/* a negative block: parallel's -N blocks per slot of the file (--round-robin: one) */
		if (*bs < 0)
			*bs = 1 + (double)(long long)((double)st.st_size / (slots > 0 ? slots : 1) / -*bs);
	} else if (*bs <= 0) {
		return err_set(EXIT_USAGE, "--block '%s': want a size above 0", o->block);
	}
	if (*bs > 2147483647.0)
		*bs = 2147483647.0;
	return 0;
}

/* Start the perl process (argv) with stdin from o's file (or gpupack's stdin), stdout to p->from. */
static int
spawn_perl(struct pipe_src *p, const struct pipe_opts *o, char **argv)
{
	posix_spawn_file_actions_t fa;
	int fd[2], rc, in = 0;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return err_sys(EXIT_INTERNAL, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	/* --pipe-part reads its file itself; --pipe -a FILE reads FILE as stdin */
	if ((o->part || o->file) && (in = open(o->part ? "/dev/null" : o->file, O_RDONLY | O_CLOEXEC)) >= 0)
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	else if (!o->part && o->file) {
		posix_spawn_file_actions_destroy(&fa);
		close(fd[0]);
		close(fd[1]);
		return err_sys(EXIT_USAGE, "input file '%s'", o->file);
	}
	rc = posix_spawnp(&p->pid, "perl", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (in > 0)
		close(in);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		p->pid = 0;
		errno = rc;
		return err_sys(EXIT_USAGE, "--pipe cuts the data with perl, as GNU parallel does");
	}
	p->from = fdopen(fd[0], "r");
	if (!p->from) {
		close(fd[0]);
		return err_sys(EXIT_INTERNAL, "fdopen");
	}
	return 0;
}

int
pipe_open(struct pipe_src *p, const struct pipe_opts *o, int slots)
{
	char num[4][32], *argv[24];
	int n = 0;
	double bs;

	memset(p, 0, sizeof *p);
	p->spread = pipe_spread(o);
	if (block_size(o, slots, &bs) < 0)
		return -1;
	if (p->spread != PIPE_BLOCKS && spread_prepare(p, slots > 0 ? slots : 1) < 0)
		return -1;
	snprintf(num[0], sizeof num[0], "%.0f", bs);
	snprintf(num[1], sizeof num[1], "%ld", o->records);
	snprintf(num[2], sizeof num[2], "%ld", o->lines);
	snprintf(num[3], sizeof num[3], "%d", p->nslots);
	argv[n++] = "perl";
	argv[n++] = "-e";
	if (p->spread == PIPE_BIN) {
		argv[n++] = (char *)binner;
		/* parallel's binner splits at --colsep, else at commas */
		argv[n++] = (char *)(o->colsep ? o->colsep : ",");
		argv[n++] = (char *)o->bin;
		argv[n++] = p->dir;
		argv[n++] = num[3];
		argv[n++] = o->skip_first ? "1" : "0";
		argv[n] = NULL;
		return spawn_perl(p, o, argv);
	}
	argv[n++] = (char *)cutter;
	argv[n++] = num[0];
	argv[n++] = (char *)(o->recstart ? o->recstart : "");
	argv[n++] = (char *)(o->recend ? o->recend : "");
	argv[n++] = o->regexp ? "1" : "0";
	argv[n++] = o->rrs ? "1" : "0";
	argv[n++] = (char *)(o->header ? o->header : "");
	argv[n++] = num[1];
	argv[n++] = num[2];
	argv[n++] = o->skip_first ? "1" : "0";
	argv[n++] = o->skip_empty ? "1" : "0";
	argv[n++] = o->part ? "1" : "0";
	argv[n++] = (char *)(o->file ? o->file : "");
	argv[n++] = o->recstart ? "1" : "0";
	argv[n++] = o->recend ? "1" : "0";
	argv[n++] = p->spread == PIPE_ROUND_ROBIN ? "1" : "0";
	argv[n++] = p->dir ? p->dir : "";
	argv[n++] = num[3];
	argv[n++] = (char *)(o->group_by ? o->group_by : "");
	/* parallel's --group-by splits at --colsep, else at tabs */
	argv[n++] = (char *)(o->colsep ? o->colsep : "\t");
	argv[n] = NULL;
	return spawn_perl(p, o, argv);
}

/* A temporary file for a block, in $TMPDIR: its descriptor, its path in *path. */
static int
block_file(char **path)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	*path = xasprintf("%s/gpupack-block.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkostemp(*path, O_CLOEXEC);
	if (fd < 0) {
		err_sys(EXIT_ENV, "a temporary file for a --pipe block in %s", dir && *dir ? dir : "/tmp");
		free(*path);
		*path = NULL;
	}
	return fd;
}

/* Copy n bytes of f (or all of it: n < 0) to fd. */
static int
copy(FILE *f, int fd, long long n)
{
	char buf[65536];

	while (n != 0) {
		size_t want = n < 0 || n > (long long)sizeof buf ? sizeof buf : (size_t)n;
		size_t got = fread(buf, 1, want, f);

		if (got == 0)
			return n < 0 && !ferror(f) ? 0 : -1;
		if (write_all(fd, buf, got) < 0)
			return -1;
		if (n > 0)
			n -= (long long)got;
	}
	return 0;
}

/* A line from the perl process: "!message" is its error (a --group-by or --bin column). */
static int
perl_said(struct pipe_src *p, char *line, size_t size)
{
	if (!fgets(line, (int)size, p->from)) {
		p->eof = 1;
		return 0;
	}
	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '!') {
		p->eof = 1;
		return err_set(EXIT_USAGE, "%s", line + 1);
	}
	return 1;
}

/* Spreading: the next slot announced, its fifo the value (1, *path malloc'd), 0 the end. */
static int
next_slot(struct pipe_src *p, char **path)
{
	char line[1024];
	long k;
	int r;

	if (p->announced >= p->nslots)
		return 0;
	if ((r = perl_said(p, line, sizeof line)) <= 0)
		return r;
	k = strtol(line, NULL, 10);
	if (k != p->announced + 1) {
		p->eof = 1;
		return err_set(EXIT_INTERNAL, "--round-robin: slot '%s' announced, %d expected", line,
		    p->announced + 1);
	}
	p->announced++;
	*path = xasprintf("%s/%ld", p->dir, k);
	return 1;
}

int
pipe_next(struct pipe_src *p, char **path)
{
	char line[1024];
	long long len;
	int fd, r;

	if (p->eof || !p->from)
		return 0;
	if (p->spread != PIPE_BLOCKS)
		return next_slot(p, path);
	if ((r = perl_said(p, line, sizeof line)) <= 0)
		return r;
	if (sscanf(line, "%lld", &len) != 1 || len < 0) {
		p->eof = 1;
		return 0;
	}
	if ((fd = block_file(path)) < 0)
		return -1;
	if (copy(p->from, fd, len) < 0) {
		close(fd);
		unlink(*path);
		free(*path);
		*path = NULL;
		return err_sys(EXIT_ENV, "--pipe: a block");
	}
	close(fd);
	return 1;
}

static void
end_process(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*pid = 0;
}

void
pipe_close(struct pipe_src *p)
{
	if (p->from)
		fclose(p->from);
	p->from = NULL;
	/* spreading goes on after its last announcement: the tasks read their fifos to the end */
	if (p->spread == PIPE_BLOCKS)
		end_process(&p->pid);
}

void
pipe_free(struct pipe_src *p)
{
	pipe_close(p);
	end_process(&p->pid);
	for (int k = 0; k < p->nslots && p->rd; k++) {
		char *path = xasprintf("%s/%d", p->dir, k + 1);

		if (p->rd[k] >= 0)
			close(p->rd[k]);
		unlink(path);
		free(path);
	}
	if (p->dir) {
		char *path = xasprintf("%s/sent", p->dir);

		unlink(path);
		free(path);
		rmdir(p->dir);
	}
	free(p->rd);
	free(p->dir);
	p->rd = NULL;
	p->dir = NULL;
	p->nslots = 0;
}

/* Slot k of a spreading directory's fifo path ("DIR/k"), or 0 when path is not one of p's. */
static int
slot_of(const struct pipe_src *p, const char *path)
{
	size_t n;
	char *end;
	long k;

	if (!p || !p->dir || strncmp(path, p->dir, n = strlen(p->dir)) != 0 || path[n] != '/')
		return 0;
	k = strtol(path + n + 1, &end, 10);
	return *end == '\0' && k >= 1 && k <= p->nslots ? (int)k : 0;
}

void
pipe_release(struct pipe_src *p, const char *path)
{
	int k = slot_of(p, path);

	if (k == 0 || p->rd[k - 1] < 0)
		return;
	close(p->rd[k - 1]);
	p->rd[k - 1] = -1;
	unlink(path);
}

unsigned long long
pipe_sent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *sent, line[32];
	struct stat st;
	long k;
	int fd;
	ssize_t got;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return (unsigned long long)st.st_size;
	/* a spreading fifo (gone once its task had it): the perl process's count, DIR/sent */
	if (!slash || (k = strtol(slash + 1, NULL, 10)) < 1 || !strstr(path, "/gpupack-spread."))
		return 0;
	sent = xasprintf("%.*s/sent", (int)(slash - path), path);
	fd = open(sent, O_RDONLY | O_CLOEXEC);
	free(sent);
	if (fd < 0)
		return 0;
	got = pread(fd, line, 21, (off_t)(k - 1) * 21);
	close(fd);
	if (got != 21)
		return 0;
	line[20] = '\0';
	return strtoull(line, NULL, 10);
}

int
pipe_tee_file(char **path)
{
	int fd = block_file(path), rc;

	if (fd < 0)
		return -1;
	rc = copy(stdin, fd, -1);
	close(fd);
	if (rc < 0) {
		unlink(*path);
		free(*path);
		*path = NULL;
		return err_sys(EXIT_ENV, "--tee: stdin");
	}
	return 0;
}
