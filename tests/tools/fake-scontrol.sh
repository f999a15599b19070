#!/bin/sh
# fake-scontrol.sh: scontrol as tests/cli/run-nodes-lost.t wants it (copied to a PATH dir as
# scontrol). $FAKE_SCONTROL: down (every node asked about is DOWN; job 77 runs on
# S and Z), gone (nodes are up, job 77 runs on node S alone), fail (Slurm cannot be reached: exit 1). Each call's arguments are
# appended to $FAKE_SCONTROL_LOG when set. The lines are those of Slurm 22.05.8, cut short.
[ -n "$FAKE_SCONTROL_LOG" ] && echo "$*" >>"$FAKE_SCONTROL_LOG"
case "$FAKE_SCONTROL:$1 $2 $3" in
fail:*)
	echo "slurm_load_node error: Unable to contact slurm controller (connect failure)" >&2
	exit 1 ;;
down:"show node -o")
	echo "NodeName=$4 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 Gres=gpu:4 State=DOWN ThreadsPerCore=1 Partitions=debug  Reason=test [root@2026-12-03T06:02:25]" ;;
gone:"show node -o")
	echo "NodeName=$4 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=4 CPUTot=4 Gres=gpu:4 State=MIXED ThreadsPerCore=1 Partitions=debug" ;;
down:"show job -o")
	echo "JobId=$4 JobName=wrap JobState=RUNNING Reason=None Restarts=0 BatchFlag=1 Partition=debug ReqNodeList=(null) ExcNodeList=(null) NodeList=S,Z BatchHost=S NumNodes=2 NumCPUs=4" ;;
gone:"show job -o")
	echo "JobId=$4 JobName=wrap JobState=RUNNING Reason=None Restarts=0 BatchFlag=1 Partition=debug ReqNodeList=(null) ExcNodeList=(null) NodeList=S BatchHost=S NumNodes=1 NumCPUs=2" ;;
*)
	echo "scontrol: $*: not faked" >&2
	exit 1 ;;
esac
