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

static const char cutter[] =
    "use strict; no warnings; binmode STDIN; binmode STDOUT;\n"
    "my ($bs, $rs, $re, $rx, $rrs, $hdr, $N, $L, $skip1, $empty, $part, $file, $rs_set, $re_set) = @ARGV;\n"
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
    "  else { $b = $header . $b; }\n"
    "  print length($b), \"\\n\", $b; $written = 1; }\n"
    "sub nth { my $n = shift; my $i = 0; for (1 .. $n) { $i = index($buf, $rers, $i + 1); last if $i == -1; } return $i; }\n"
    "if ($part) {\n"
    "  open(my $fh, '<', $file) or die \"$file: $!\\n\"; binmode $fh; my $size = -s $file; my @pos = (0);\n"
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
    "  while (sysread(STDIN, $buf, $bs, length $buf)) { if ($buf =~ s/^($hdr)//) { $header = $1; last; } } }\n"
    "while (1) {\n"
    "  $written = 0; my $n; my $want = $bs - length($buf) % $bs;\n"
    "  do { $n = sysread(STDIN, $buf, $want, length $buf); $want -= $n; } while ($want && $n);\n"
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
    "emit(length $buf);\n";

int
pipe_open(struct pipe_src *p, const struct pipe_opts *o, int slots)
{
	posix_spawn_file_actions_t fa;
	char num[8][32], *argv[20];
	int fd[2], rc, n = 0, in = 0;
	double bs;
	struct stat st;

	memset(p, 0, sizeof *p);
	/* parallel's sizes: k m g t are powers of 1000, K M G T (and Ki Mi ...) of 1024; 1k+1k */
	if (parse_prefixed(o->block ? o->block : o->part ? "-10" : "1M", &bs) < 0)
		return err_prefix("--block");
	if (o->part) {
		if (!o->file || stat(o->file, &st) < 0 || !S_ISREG(st.st_mode))
			return err_set(EXIT_USAGE, "--pipe-part needs -a FILE, a regular file");
		/* a negative block: parallel's -N blocks per slot of the file */
		if (bs < 0)
			bs = 1 + (double)(long long)((double)st.st_size / (slots > 0 ? slots : 1) / -bs);
	} else if (bs <= 0) {
		return err_set(EXIT_USAGE, "--block '%s': want a size above 0", o->block);
	}
	if (bs > 2147483647.0)
		bs = 2147483647.0;
	snprintf(num[0], sizeof num[0], "%.0f", bs);
	snprintf(num[1], sizeof num[1], "%ld", o->records);
	snprintf(num[2], sizeof num[2], "%ld", o->lines);
	argv[n++] = "perl";
	argv[n++] = "-e";
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
	argv[n] = NULL;
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

int
pipe_next(struct pipe_src *p, char **path)
{
	long long len;
	int fd;

	if (p->eof || !p->from)
		return 0;
	if (fscanf(p->from, "%lld", &len) != 1 || fgetc(p->from) != '\n' || len < 0) {
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

void
pipe_close(struct pipe_src *p)
{
	if (p->from)
		fclose(p->from);
	p->from = NULL;
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	p->pid = 0;
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
