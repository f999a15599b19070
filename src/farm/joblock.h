/*
 * joblock: one farm per joblog at a time. A second gpupack on the same
 * joblog (a --resume started while the first still runs, a requeued job
 * beside the old one, on this node or another) is refused with one line;
 * the gpupacks of one farm over nodes (farm/nodes.h) share it, and so do
 * the shards of one --shard split (each shard once).
 *
 * The lock is the joblog's own: byte-range locks on the file itself (open
 * file description locks, advisory, far past anything it holds), so that
 * every name of it (a symlink, a hard link, a relative path) meets the
 * same lock, and nothing a user removes beside it lets a second farm in.
 * A joblog not there yet is created empty first (and removed again when
 * the run is refused before it began). The ranges:
 *
 *   GATE        held for a moment by a gpupack joining or leaving
 *   MEMBERS     a shared lock per member of the farm running now
 *   PLACE + K   the place of a member no other may share (shard K)
 *   KEY + h     a shared lock per member, at the hash of its farm's key
 *   PID + p     a shared lock per member, at its pid (for the message)
 *
 * A farm over nodes writes its records into FILE.farm and FILE at its end
 * (farm/nodes.h): FILE stays empty till then.
 *
 * A gpupack that finds MEMBERS free is the farm's first member; one that
 * finds it held joins when its key's byte is held too, else is refused,
 * told which pid holds it (FILE.lock, written by the first member, adds
 * its host: a message only, never the lock). Such locks die with their
 * process, whatever kills it, so a dead farm's never blocks. On NFS they
 * go through the server's lock manager (NLM, or NFSv4's own): a crashed
 * node's are kept until its lease ends (NFSv4, about 90 s) or it reboots
 * (NLM); a mount with `nolock` or `local_lock=all` keeps them on one node.
 */
#ifndef GPUPACK_FARM_JOBLOCK_H
#define GPUPACK_FARM_JOBLOCK_H

#include "farm/joblog.h"

struct joblock {
	int fd;          /* the joblog, opened for its locks; -1 none held */
	int first;       /* no member held it when we came: we began this farm */
	int created;     /* the joblog was not there: we made it (empty) */
	char *path;      /* the joblog as named */
	char *text;      /* FILE.lock, the message file (farm/joblog.h names it) */
};

/* Seconds a gpupack waits for the gate before it gives up (another holds it that long: a hung NFS). */
#define JOBLOCK_GATE_WAIT 10.0

/*
 * Join the farm on the joblog d describes (a file; FILE.lock is d's) as a
 * member with key (the run of a farm over nodes, the split of --shard;
 * NULL: a farm of its own, which no other joins). place >= 0: a place in
 * the farm no other member may hold at once (a shard's K). 0, or -1 with
 * err set: another farm runs on it, or another member holds the place (or
 * the joblog cannot be opened or locked). A joblog that is not a regular
 * file, or cannot be opened, takes no lock (0): the journal refuses it
 * with its own message.
 */
int joblock_take(struct joblock *l, const struct joblog_desc *d, const char *key, long place);
/* Leave (the last member removes FILE.lock, the message file). */
void joblock_release(struct joblock *l);
/* Leave a run refused before it began: a joblog joblock_take created (still empty) goes too. */
void joblock_abandon(struct joblock *l);

#endif
