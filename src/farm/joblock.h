/*
 * joblock: one farm per joblog at a time. A second gpupack on the same
 * joblog (a --resume started while the first still runs, a requeued job
 * beside the old one, on this node or another) is refused with one line;
 * the gpupacks of one farm over nodes (farm/nodes.h) share it, and so do
 * the shards of one --shard split (each shard once).
 *
 * FILE.lock, beside the joblog, exists while a farm runs; two byte-range
 * locks on it (open file description locks, else POSIX ones) say who:
 *
 *   byte 0   the gate: held for a moment by a gpupack joining or leaving
 *   byte 1   a shared lock per member of the farm running now
 *   2 + K    the place of a member no other may share (shard K of a split)
 *
 * and its text names that farm (its key, pid and host) while byte 1 is
 * held. A gpupack that finds byte 1 free is the farm's first member: it
 * writes its key; one that finds it held joins when its key is the same,
 * else is refused. The last member to leave removes the file (and one that
 * opened a removed file opens it again). Such locks die with their process,
 * whatever kills it, so a dead farm's never blocks. On NFS they go through
 * the server's lock manager (NLM, or NFSv4's own): a crashed node's are
 * kept until its lease ends (NFSv4, about 90 s) or it reboots (NLM); a
 * mount with `nolock` or `local_lock=all` keeps them on one node only.
 */
#ifndef GPUPACK_FARM_JOBLOCK_H
#define GPUPACK_FARM_JOBLOCK_H

struct joblock {
	int fd;          /* FILE.lock; -1 none held */
	int first;       /* no member held it when we came: we began this farm */
	char *path;
};

/* Seconds a gpupack waits for the gate before it gives up (another holds it that long: a hung NFS). */
#define JOBLOCK_GATE_WAIT 10.0

/*
 * Join the farm on joblog as a member with key (the run of a farm over
 * nodes, the split of --shard; NULL: a farm of its own, which no other
 * joins). place >= 0: a place in the farm no other member may hold at once
 * (a shard's K; byte 2 + place, exclusive). 0, or -1 with err set: another
 * farm runs on it, or another member holds the place (or the lock cannot
 * be taken).
 */
int joblock_take(struct joblock *l, const char *joblog, const char *key, long place);
/* Leave (the last member removes FILE.lock). */
void joblock_release(struct joblock *l);

#endif
