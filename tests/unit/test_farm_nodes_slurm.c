/*
 * test_farm_nodes_slurm: what Slurm says of a farm member's node
 * (farm/nodes_slurm.c), from real `scontrol show node -o` and `scontrol
 * show job -o` lines (Slurm 22.05.8, a 3-node minicluster: a job submitted
 * with --no-kill, one node set DOWN, another drained), hostlists, and the
 * node in a member's name. No answer is never a loss.
 */
#include "farm/nodes.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* n2 running the job (State=MIXED) */
static const char NODE_MIXED[] =
	    "NodeName=n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=4 CPUTot=4 CPULoad=0.92 AvailableF"
	    "eatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 NodeHostName=localhost Port=2"
	    "7002 Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocM"
	    "em=0 FreeMem=23099 Sockets=4 Boards=1 State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
	    "MCS_label=N/A Partitions=debug  BootTime=2026-12-02T15:02:09 SlurmdStartTime=2026-12-03T06:02:19"
	    " LastBusyTime=2026-12-03T06:02:20 CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES=cpu=1 CapWatts=n/a"
	    " CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s" "\n";

/* n2 after `scontrol update nodename=n2 state=down` */
static const char NODE_DOWN[] =
	    "NodeName=n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.92 AvailableF"
	    "eatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 NodeHostName=localhost Port=2"
	    "7002 Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocM"
	    "em=0 FreeMem=23099 Sockets=4 Boards=1 State=DOWN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A M"
	    "CS_label=N/A Partitions=debug  BootTime=2026-12-02T15:02:09 SlurmdStartTime=2026-12-03T06:02:19 "
	    "LastBusyTime=2026-12-03T06:02:20 CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES= CapWatts=n/a Curre"
	    "ntWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=test [root"
	    "@2026-12-03T06:02:25]" "\n";

/* n3 set to drain while the job still runs there */
static const char NODE_DRAINING[] =
	    "NodeName=n3 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=4 CPUTot=4 CPULoad=0.92 AvailableF"
	    "eatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 NodeHostName=localhost Port=2"
	    "7003 Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocM"
	    "em=0 FreeMem=23099 Sockets=4 Boards=1 State=MIXED+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owne"
	    "r=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-02T15:02:10 SlurmdStartTime=2026-12-03T06"
	    ":02:20 LastBusyTime=2026-12-03T06:02:20 CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES=cpu=1 CapWat"
	    "ts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reaso"
	    "n=test [root@2026-12-03T06:02:26]" "\n";

/* n3 drained, the job gone */
static const char NODE_DRAINED[] =
	    "NodeName=n3 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.92 AvailableF"
	    "eatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 NodeHostName=localhost Port=2"
	    "7003 Version=22.05.8 OS=Linux 6.18.44-fc-v1045 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocM"
	    "em=0 FreeMem=23099 Sockets=4 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner"
	    "=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-02T15:02:10 SlurmdStartTime=2026-12-03T06:"
	    "02:20 LastBusyTime=2026-12-03T06:02:26 CfgTRES=cpu=4,mem=1000M,billing=4 AllocTRES= CapWatts=n/a"
	    " CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=test"
	    " [root@2026-12-03T06:02:26]" "\n";

/* a 3-node job (sbatch --no-kill -N3) */
static const char JOB_ALL[] =
	    "JobId=3 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Acc"
	    "ount=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 Batch"
	    "Flag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:02 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12"
	    "-03T06:02:23 EligibleTime=2026-12-03T06:02:23 AccrueTime=2026-12-03T06:02:23 StartTime=2026-12-0"
	    "3T06:02:23 EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-"
	    "03T06:02:23 Scheduler=Main Partition=debug AllocNode:Sid=localhost:26407 ReqNodeList=(null) ExcN"
	    "odeList=(null) NodeList=n[1-3] BatchHost=n1 NumNodes=3 NumCPUs=3 NumTasks=3 CPUs/Task=1 ReqB:S:C"
	    ":T=0:0:*:* TRES=cpu=3,node=3,billing=3 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsN"
	    "ode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Conti"
	    "guous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/hloss StdErr=/tmp/hloss/slurm"
	    "-3.out StdIn=/dev/null StdOut=/tmp/hloss/slurm-3.out Power=" "\n";

/* the same job after n2 went DOWN: n2 is no longer its */
static const char JOB_N2_GONE[] =
	    "JobId=3 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Acc"
	    "ount=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 Batch"
	    "Flag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12"
	    "-03T06:02:23 EligibleTime=2026-12-03T06:02:23 AccrueTime=2026-12-03T06:02:23 ResizeTime=2026-12-"
	    "03T06:02:25 StartTime=2026-12-03T06:02:23 EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreS"
	    "uspend=0 LastSchedEval=2026-12-03T06:02:23 Scheduler=Main Partition=debug AllocNode:Sid=localhos"
	    "t:26407 ReqNodeList=(null) ExcNodeList=(null) NodeList=n[1,3] BatchHost=n1 NumNodes=2 NumCPUs=2 "
	    "NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=2,billing=2 Socks/Node=* NtasksPerN:B:"
	    "S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot="
	    "00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tm"
	    "p/hloss StdErr=/tmp/hloss/slurm-3.out StdIn=/dev/null StdOut=/tmp/hloss/slurm-3.out Power=" "\n";

/* the job cancelled */
static const char JOB_CANCELLED[] =
	    "JobId=3 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Acc"
	    "ount=(null) QOS=(null) JobState=CANCELLED Reason=None Dependency=(null) Requeue=1 Restarts=0 Bat"
	    "chFlag=1 Reboot=0 ExitCode=143:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=202"
	    "6-12-03T06:02:23 EligibleTime=2026-12-03T06:02:23 AccrueTime=2026-12-03T06:02:23 ResizeTime=2026"
	    "-12-03T06:02:25 StartTime=2026-12-03T06:02:23 EndTime=2026-12-03T06:02:26 Deadline=N/A SuspendTi"
	    "me=None SecsPreSuspend=0 LastSchedEval=2026-12-03T06:02:23 Scheduler=Main Partition=debug AllocN"
	    "ode:Sid=localhost:26407 ReqNodeList=(null) ExcNodeList=(null) NodeList=n[1,3] BatchHost=n1 NumNo"
	    "des=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=2,billing=2 Socks/Node"
	    "=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=("
	    "null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(n"
	    "ull) WorkDir=/tmp/hloss StdErr=/tmp/hloss/slurm-3.out StdIn=/dev/null StdOut=/tmp/hloss/slurm-3."
	    "out Power=" "\n";

int
main(void)
{
	char node[64];

	/* a member's node */
	is_int(nodes_slurm_owner_node("n2.1.4242", node, sizeof node), 0, "node.procid.pid");
	is_str(node, "n2", "its node");
	is_int(nodes_slurm_owner_node("gpu-a.b.3.99.r2", node, sizeof node), 0, "node.procid.pid.rK, dots in the node");
	is_str(node, "gpu-a.b", "its node");
	is_int(nodes_slurm_owner_node("n2.1", node, sizeof node), -1, "no pid: not a member's name");
	is_int(nodes_slurm_owner_node("n2", node, sizeof node), -1, "a bare name");

	/* hostlists */
	is_int(nodes_slurm_hostlist_has("n[1-3]", "n2"), 1, "n2 in n[1-3]");
	is_int(nodes_slurm_hostlist_has("n[1,3]", "n2"), 0, "n2 not in n[1,3]");
	is_int(nodes_slurm_hostlist_has("n[1,3]", "n3"), 1, "n3 in n[1,3]");
	is_int(nodes_slurm_hostlist_has("n[1-3,5]", "n5"), 1, "n5 in n[1-3,5]");
	is_int(nodes_slurm_hostlist_has("n[1-3,5]", "n4"), 0, "n4 not in n[1-3,5]");
	is_int(nodes_slurm_hostlist_has("n[1-3,5]", "n12"), 0, "n12 not in n[1-3,5]");
	is_int(nodes_slurm_hostlist_has("gpu[01-10]", "gpu07"), 1, "zero-padded: gpu07");
	is_int(nodes_slurm_hostlist_has("gpu[01-10]", "gpu7"), 0, "zero-padded: not gpu7");
	is_int(nodes_slurm_hostlist_has("gpu[1-10]", "gpu07"), 0, "unpadded: not gpu07");
	is_int(nodes_slurm_hostlist_has("login1,n[1-2]-ib,big", "n2-ib"), 1, "a suffix after the range");
	is_int(nodes_slurm_hostlist_has("login1,n[1-2]-ib,big", "n2"), 0, "n2 is not n2-ib");
	is_int(nodes_slurm_hostlist_has("login1,n[1-2]-ib,big", "big"), 1, "a plain name after a range");
	is_int(nodes_slurm_hostlist_has("n1", "n1"), 1, "one plain name");
	is_int(nodes_slurm_hostlist_has("n1", "n11"), 0, "a plain name is whole");
	is_int(nodes_slurm_hostlist_has("r[1-2]n[1-4]", "r1n9"), -1, "two dimensions: not understood");
	is_int(nodes_slurm_hostlist_has("r[1-2]n[1-4],x1", "x1"), 1, "yet a plain name beside them is");
	is_int(nodes_slurm_hostlist_has("", "n1"), -1, "an empty list: no answer");

	/* node states, real lines */
	is_int(nodes_slurm_node_lost(NODE_MIXED, "n2"), 0, "State=MIXED: up");
	is_int(nodes_slurm_node_lost(NODE_DOWN, "n2"), 1, "State=DOWN: lost");
	is_int(nodes_slurm_node_lost(NODE_DRAINING, "n3"), 0, "State=MIXED+DRAIN: draining, its jobs still run");
	is_int(nodes_slurm_node_lost(NODE_DRAINED, "n3"), 0, "State=IDLE+DRAIN: not lost by its state (the job's list says)");
	is_int(nodes_slurm_node_lost(NODE_DOWN, "n3"), -1, "another node's line: no answer");
	is_int(nodes_slurm_node_lost("Node n9 not found\n", "n9"), -1, "scontrol's error: no answer");
	is_int(nodes_slurm_node_lost("", "n2"), -1, "nothing: no answer");
	is_int(nodes_slurm_node_lost("NodeName=n4 Arch=x86_64 State=ALLOCATED* ThreadsPerCore=1\n", "n4"), 1,
	    "State=ALLOCATED*: not responding, lost");
	is_int(nodes_slurm_node_lost("NodeName=n4 State=MIXED+NOT_RESPONDING Reason=x\n", "n4"), 1,
	    "+NOT_RESPONDING: lost");
	is_int(nodes_slurm_node_lost("NodeName=n4 State=IDLE+FAIL Reason=x\n", "n4"), 1, "+FAIL: lost");
	is_int(nodes_slurm_node_lost("NodeName=n4 State=IDLE+POWERED_DOWN\n", "n4"), 1, "powered down: lost");
	is_int(nodes_slurm_node_lost("NodeName=n4 State=ALLOCATED+COMPLETING\n", "n4"), 0, "completing: up");
	is_int(nodes_slurm_node_lost("NodeName=n4 Reason=State=DOWN\n", "n4"), -1,
	    "State= inside another field is not the state");

	/* the job's node list, real lines */
	is_int(nodes_slurm_job_lost(JOB_ALL, "n2"), 0, "NodeList=n[1-3] holds n2");
	is_int(nodes_slurm_job_lost(JOB_N2_GONE, "n2"), 1, "NodeList=n[1,3]: n2 is lost");
	is_int(nodes_slurm_job_lost(JOB_N2_GONE, "n3"), 0, "and n3 is not");
	is_int(nodes_slurm_job_lost(JOB_CANCELLED, "n2"), -1, "a job not running: no answer");
	is_int(nodes_slurm_job_lost("slurm_load_jobs error: Invalid job id specified\n", "n2"), -1,
	    "scontrol's error: no answer");
	is_int(nodes_slurm_job_lost("JobId=7 JobState=RUNNING ReqNodeList=n2 ExcNodeList=(null) NodeList=n1 BatchHost=n2\n",
	    "n2"), 1, "ReqNodeList and BatchHost are not the node list");
	/* a heterogeneous job: a line per component */
	is_int(nodes_slurm_job_lost("JobId=8 HetJobId=8 HetJobOffset=0 JobState=RUNNING NodeList=n1\n"
	    "JobId=9 HetJobId=8 HetJobOffset=1 JobState=RUNNING NodeList=n[2-3]\n", "n3"), 0,
	    "a hetjob: the second component holds n3");
	is_int(nodes_slurm_job_lost("JobId=8 HetJobId=8 HetJobOffset=0 JobState=RUNNING NodeList=n1\n"
	    "JobId=9 HetJobId=8 HetJobOffset=1 JobState=RUNNING NodeList=n[2-3]\n", "n4"), 1,
	    "a hetjob: no component holds n4");
	is_int(nodes_slurm_job_lost("JobId=7 JobState=RUNNING NodeList=r[1-2]n[1-4]\n", "r1n2"), -1,
	    "a node list not understood: no answer");

	/* scontrol not on PATH: no answer */
	setenv("PATH", "/nonexistent", 1);
	is_int(nodes_slurm_ask("n2", "3", 1.0), -1, "scontrol missing: no answer");
	return done_testing();
}
