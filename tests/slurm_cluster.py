"""A one-node SLURM for the launcher's cluster tests: Debian's slurm-wlm and munge (installed with
apt-get when missing), slurmctld and slurmd started on free ports with a configuration of their
own, one node with this machine's CPUs and two fake GPUs (gres on two tty devices: a bare Count=2
leaves the node INVAL on 22.05), no accounting. What made it run in a container: proctrack/linuxproc
and task/none (no writable cgroups), cons_tres, JobRequeue=1."""
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

CONF = """ClusterName=defsenttest
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobRequeue=1
GresTypes=gpu
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} CPUs={cpus} RealMemory=2000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""
TOOLS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "slurmctld", "slurmd", "munged")


def install():
    """None once SLURM's and munge's programs are here (apt-get installs them as root), else why
    they are not."""
    if all(shutil.which(t) or Path("/usr/sbin", t).exists() for t in TOOLS):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "slurm-wlm and munge are not installed, and apt-get cannot install them here (not root)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends", "slurm-wlm", "munge"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode and command[1] == "install":
            return f"apt-get install slurm-wlm munge failed: {done.stderr.strip()[-300:]}"
    return None


def free_ports(n=2):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def start(folder):
    """Start munged (if not running), slurmctld and slurmd with a configuration in `folder`; wait
    for the node to be idle. Returns the SLURM_CONF path."""
    if os.geteuid() != 0:
        raise PermissionError("slurmd must run as root to start jobs")
    d = Path(folder)
    for sub in ("state", "spool"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = d / "slurm.conf"
    conf.write_text(CONF.format(host=host, d=d, ports=free_ports(), cpus=os.cpu_count()))
    (d / "gres.conf").write_text(f"NodeName={host} Name=gpu File=/dev/tty[0-1]\n")
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode:
        Path("/run/munge").mkdir(exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)
    env = dict(os.environ, SLURM_CONF=str(conf))
    subprocess.run(["slurmctld", "-f", str(conf)], env=env, check=True)
    subprocess.run(["slurmd", "-f", str(conf)], env=env, check=True)
    for _ in range(120):
        state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout
        if state.strip() == "idle":
            return conf
        time.sleep(0.5)
    stop(folder)
    raise RuntimeError(f"SLURM did not come up: {(d / 'slurmctld.log').read_text()[-1500:]}")


def stop(folder):
    """Cancel what is left and stop this configuration's slurmd and slurmctld."""
    d = Path(folder)
    env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))
    subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True)
    for _ in range(20):  # the jobs end before their daemons do (else their steps live on)
        queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True)
        if queue.returncode or not queue.stdout.strip():
            break
        time.sleep(0.5)
    for signal in ("TERM", "KILL"):  # the daemons started with this folder's configuration
        for name in ("slurmd", "slurmctld"):
            subprocess.run(["pkill", f"-{signal}", "-f", f"{name} -f {d}/slurm.conf"], capture_output=True)
        time.sleep(1)
