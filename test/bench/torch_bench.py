#!/usr/bin/env python3
"""torch.distributed on cclc against gloo, in one run.

For each rank count, starts that many local processes (loopback rendezvous);
each joins a gloo group and a cclc group over the same ranks and times
  * all_reduce (SUM, float32) from 4 B to 64 MiB, the two backends taking
    turns at each size, so that both see the same machine;
  * a DistributedDataParallel training step (forward, backward with the
    gradients all-reduced in DDP's buckets, optimizer step) of an MLP of
    about 25M parameters on a small batch, so that communication weighs,
    and the same step without DDP ("local"): the part of the step that no
    backend can speed up.
Times are the median over rounds of each round's mean, the slowest rank's.
Rank 0 prints the tables (and, with --csv, writes them).

    .venv/bin/python test/bench/torch_bench.py --ranks 2 4 --rounds 3
"""
import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES = [4 << (2 * i) for i in range(13)]  # 4 B .. 64 MiB


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, iterations):
    fn()  # warm up: connections, plans, caches
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    return (time.perf_counter() - start) / iterations


def slowest(seconds, dist):
    import torch
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def iterations_for(nbytes, budget_bytes=256 << 20, most=2000, least=3):
    return max(least, min(most, budget_bytes // max(nbytes, 1)))


def allreduce_table(groups, rounds, dist, torch):
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        tensors = {name: torch.ones(n) for name in groups}
        iters = iterations_for(nbytes)
        samples = {name: [] for name in groups}
        for _ in range(rounds):
            for name, group in groups.items():
                t = tensors[name]
                seconds = timed(lambda: dist.all_reduce(t, group=group), iters)
                samples[name].append(slowest(seconds, dist))
        rows.append((nbytes, {name: statistics.median(s) for name, s in samples.items()}))
    return rows


def ddp_step_times(groups, rounds, steps, dist, torch):
    from torch.nn.parallel import DistributedDataParallel
    width, depth = 2048, 6  # 6 x (2048 x 2048 + 2048) = 25.2M parameters
    results = {}
    for name, group in list(groups.items()) + [("local", None)]:
        torch.manual_seed(0)
        layers = []
        for _ in range(depth):
            layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        if group is not None:
            model = DistributedDataParallel(model, process_group=group)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        x = torch.randn(8, width)

        def step():
            optimizer.zero_grad()
            model(x).square().mean().backward()
            optimizer.step()
        samples = [slowest(timed(step, steps), dist) for _ in range(rounds)]
        results[name] = statistics.median(samples)
        params = sum(p.numel() for p in model.parameters())
    return results, params


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}"
        n //= 1024


def rank_main(args):
    import torch
    import torch.distributed as dist
    import cclc.torch  # noqa: F401
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    groups = {"gloo": dist.group.WORLD, "cclc": dist.new_group(backend="cclc")}
    rows = allreduce_table(groups, args.rounds, dist, torch)
    ddp, params = ddp_step_times(groups, args.rounds, args.ddp_steps, dist, torch)
    if dist.get_rank() == 0:
        print(f"\n# torch.distributed all_reduce (float32, SUM), {world} ranks; "
              f"time per call in us, median of {args.rounds} rounds")
        print(f"{'size':>10} {'gloo':>12} {'cclc':>12} {'cclc speedup':>13}")
        for nbytes, t in rows:
            print(f"{fmt_bytes(nbytes):>10} {t['gloo'] * 1e6:12.1f} {t['cclc'] * 1e6:12.1f} "
                  f"{t['gloo'] / t['cclc']:12.2f}x")
        print(f"\n# DDP training step, {params / 1e6:.1f}M parameters, batch 8, {world} ranks; "
              f"ms per step")
        print(f"{'gloo':>12} {'cclc':>12} {'local':>12} {'cclc speedup':>13} "
              f"{'beyond local':>13}")
        beyond = (ddp['gloo'] - ddp['local']) / max(ddp['cclc'] - ddp['local'], 1e-9)
        print(f"{ddp['gloo'] * 1e3:12.1f} {ddp['cclc'] * 1e3:12.1f} {ddp['local'] * 1e3:12.1f} "
              f"{ddp['gloo'] / ddp['cclc']:12.2f}x {beyond:12.2f}x", flush=True)
        if args.csv:
            with open(args.csv, "a", newline="") as f:
                w = csv.writer(f)
                for nbytes, t in rows:
                    w.writerow([world, "all_reduce", nbytes, t["gloo"], t["cclc"]])
                w.writerow([world, "ddp_step", params, ddp["gloo"], ddp["cclc"], ddp["local"]])
    dist.destroy_process_group()


def launch(world, argv):
    port = free_port()
    procs = []
    for rank in range(world):
        # Loopback only, for gloo as for cclc.
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                   WORLD_SIZE=str(world), OMP_NUM_THREADS="1", CCLC_BENCH_RANK="1",
                   GLOO_SOCKET_IFNAME="lo", CCLC_SOCKET_IFNAME="=lo")
        procs.append(subprocess.Popen([sys.executable, __file__] + argv, env=env))
    codes = [p.wait(timeout=1800) for p in procs]
    if any(codes):
        sys.exit(f"torch_bench: ranks exited with {codes}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ddp-steps", type=int, default=5)
    parser.add_argument("--csv", help="append the figures to this CSV file")
    args, _ = parser.parse_known_args()
    if os.environ.get("CCLC_BENCH_RANK"):
        rank_main(args)
        return
    for world in args.ranks:
        launch(world, sys.argv[1:])


if __name__ == "__main__":
    main()
