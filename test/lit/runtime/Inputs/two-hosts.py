"""Runs a two-rank job as two hosts: one network namespace per rank.

    two-hosts.py [--timeout S] [--port P] -- COMMAND [ARG...]
    two-hosts.py --probe

The namespaces are joined by a veth pair named veth0 at both ends, with
10.77.0.1/24 (rank 0) and 10.77.0.2/24 (rank 1) and loopback up, so the ranks
can reach each other only over that link, through TCP. Each rank also gets a
host name of its own (cclc-host0, cclc-host1, in a UTS namespace), so that it
sees its peer on another host, as it would on two machines, and does not try
shared memory. COMMAND runs in each namespace with the launcher environment of
a multi-host job (MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE) and
CCLC_SOCKET_IFNAME=veth0. Each rank's output is printed after a "== rank R =="
line; the exit status is 0 only when both ranks exit 0 within the timeout.

The namespaces (and with them the veth pair) are deleted whatever happens:
on success, on failure, on a timeout and on SIGINT, SIGTERM or SIGHUP.
--probe runs `true` that way, and says why it cannot where it cannot: lit
uses it to decide whether the test can run here.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

ADDRESSES = ["10.77.0.1", "10.77.0.2"]
IFNAME = "veth0"


def ip(*args):
    """Runs `ip ARGS`; raises with ip's own message when it fails."""
    result = subprocess.run(["ip", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(args)}` failed: {result.stdout.strip()}")


class Namespaces:
    """Two namespaces joined by a veth pair."""

    def __init__(self):
        self.names = [f"cclc-{os.getpid()}-{rank}" for rank in range(2)]
        self.made = []

    def make(self):
        """Makes the namespaces and their link; raises RuntimeError or OSError
        (no `ip`) saying why not, having deleted what it made."""
        try:
            for name in self.names:
                ip("netns", "add", name)
                self.made.append(name)
            ip("-n", self.names[0], "link", "add", IFNAME, "type", "veth", "peer", "name", IFNAME,
               "netns", self.names[1])
            for name, address in zip(self.names, ADDRESSES):
                ip("-n", name, "addr", "add", f"{address}/24", "dev", IFNAME)
                ip("-n", name, "link", "set", IFNAME, "up")
                ip("-n", name, "link", "set", "lo", "up")
            self.wait_until_up()
        except BaseException:
            self.delete()
            raise

    def wait_until_up(self, seconds=10):
        """Waits for the carrier on both ends, which the kernel reports a moment
        after the links are set up; a rank started before would fail to connect."""
        deadline = time.monotonic() + seconds
        for name in self.names:
            while True:
                state = subprocess.run(["ip", "-n", name, "-br", "link", "show", IFNAME],
                                       stdout=subprocess.PIPE, text=True).stdout.split()
                if state[1:2] == ["UP"]:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{IFNAME} in {name} is not up after {seconds} s")
                time.sleep(0.05)

    def delete(self):
        """Deletes the namespaces made; the veth pair goes with them."""
        for name in reversed(self.made):
            subprocess.run(["ip", "netns", "delete", name], stderr=subprocess.DEVNULL)
        self.made = []


def run_ranks(namespaces, command, port, timeout):
    """Starts one rank per namespace; returns each rank's exit status ("timed
    out" when killed at the timeout) and output."""
    ranks = []
    for rank, name in enumerate(namespaces.names):
        env = dict(os.environ, MASTER_ADDR=ADDRESSES[0], MASTER_PORT=str(port), RANK=str(rank),
                   LOCAL_RANK="0", WORLD_SIZE="2", CCLC_SOCKET_IFNAME=IFNAME)
        # A file, not a pipe: a rank blocked on a full pipe would stall its peer.
        log = tempfile.TemporaryFile(mode="w+")
        named = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
                 f"cclc-host{rank}", *command]
        process = subprocess.Popen(["ip", "netns", "exec", name, *named], env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
        ranks.append((process, log))
    deadline = time.monotonic() + timeout
    results = []
    try:
        for rank, (process, log) in enumerate(ranks):
            try:
                status = process.wait(timeout=max(0.0, deadline - time.monotonic()))
                note = ""
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                status, note = "timed out", f"rank {rank}: killed after {timeout:g} s\n"
            log.seek(0)
            results.append((status, log.read() + note))
    finally:
        # On a signal, the ranks must not outlive their namespaces.
        for process, log in ranks:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
    return results


def raise_on_signal(signum, frame):
    raise SystemExit(f"two-hosts: stopped by signal {signum}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="store_true",
                        help="only check that two ranks can run as two hosts here")
    parser.add_argument("--timeout", type=float, default=120, help="seconds the job may take")
    parser.add_argument("--port", type=int, default=29500, help="MASTER_PORT")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if not args.probe and not args.command:
        parser.error("give the command each rank runs after --")
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, raise_on_signal)

    namespaces = Namespaces()
    try:
        namespaces.make()
    except (RuntimeError, OSError) as error:
        print(f"two-hosts: cannot make two network namespaces joined by veth: {error}",
              file=sys.stderr)
        return 2
    try:
        results = run_ranks(namespaces, ["true"] if args.probe else args.command, args.port,
                            args.timeout)
    finally:
        namespaces.delete()
    if args.probe:
        failed = [output.strip() for status, output in results if status != 0]
        if failed:
            print(f"two-hosts: cannot run a rank as a host of its own: {failed[0]}",
                  file=sys.stderr)
            return 2
        return 0
    for rank, (status, output) in enumerate(results):
        print(f"== rank {rank} ({ADDRESSES[rank]}): exit {status} ==")
        sys.stdout.write(output)
    return 0 if all(status == 0 for status, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
