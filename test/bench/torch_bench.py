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
The DDP step is timed again with DDP_DISABLE_COMM_MEM=0, where DDP asks the
group's backend for its gradient buckets' memory ("buckets": cclc's backend
gives memory the ranks map, gloo gives none and DDP allocates as usual).
Both are timed again with the tensors in memory the ranks map
(cclc.torch.use_mapped_memory): the all_reduce on cclc ("cclc mapped"), and
the whole DDP comparison with that allocator serving every large tensor of
the process, gloo's and the local step's too, so that all three gain alike
from its reuse of freed buffers.
Times are the median over rounds of each round's mean, the slowest rank's.
Rank 0 prints the tables (and, with --csv, writes them).

With --cuda it times all_reduce on CUDA tensors instead, every fourth size,
on cclc, gloo and, where there is a GPU per rank, nccl; ranks take the GPUs in
turn, so several may share one.

    .venv/bin/python test/bench/torch_bench.py --ranks 2 4 --rounds 3
    python3 test/bench/torch_bench.py --ranks 2 --rounds 1 --cuda
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


def timed(fn, iterations, synchronize=lambda: None):
    fn()  # warm up: connections, plans, caches
    synchronize()
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    synchronize()
    return (time.perf_counter() - start) / iterations


def slowest(seconds, dist, group=None):
    import torch
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.item()


def iterations_for(nbytes, budget_bytes=256 << 20, most=2000, least=3):
    return max(least, min(most, budget_bytes // max(nbytes, 1)))


def ones(n, mapped, torch):
    """n float32 ones, in memory the ranks map where mapped."""
    import cclc.torch
    if not mapped:
        return torch.ones(n)
    cclc.torch.use_mapped_memory(min_bytes=1)
    try:
        return torch.ones(n)
    finally:
        cclc.torch.use_mapped_memory(None)


def allreduce_table(variants, rounds, dist, torch):
    """variants: name -> (group, whether the tensor is in mapped memory)."""
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        tensors = {name: ones(n, mapped, torch) for name, (_, mapped) in variants.items()}
        iters = iterations_for(nbytes)
        samples = {name: [] for name in variants}
        for _ in range(rounds):
            for name, (group, _) in variants.items():
                t = tensors[name]
                seconds = timed(lambda: dist.all_reduce(t, group=group), iters)
                samples[name].append(slowest(seconds, dist))
        rows.append((nbytes, {name: statistics.median(s) for name, s in samples.items()}))
    return rows


def ddp_step_times(groups, rounds, steps, dist, torch):
    """The step of each backend and the local one; the three take turns in
    every round, so that a burst of load on the machine weighs on all alike."""
    from torch.nn.parallel import DistributedDataParallel
    width, depth = 2048, 6  # 6 x (2048 x 2048 + 2048) = 25.2M parameters

    def make_step(group):
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
        return step, sum(p.numel() for p in model.parameters())

    variants = {name: make_step(group) for name, group in
                list(groups.items()) + [("local", None)]}
    samples = {name: [] for name in variants}
    for _ in range(rounds):
        for name, (step, _) in variants.items():
            samples[name].append(slowest(timed(step, steps), dist))
    return ({name: statistics.median(s) for name, s in samples.items()},
            variants["local"][1])


def cuda_main(args, world, dist, torch):
    """all_reduce of CUDA tensors on each backend that takes them here."""
    device = torch.device("cuda", dist.get_rank() % torch.cuda.device_count())
    torch.cuda.set_device(device)
    groups = {"gloo": dist.group.WORLD, "cclc": dist.new_group(backend="cclc")}
    if torch.cuda.device_count() >= world:  # NCCL refuses two ranks on one GPU
        groups["nccl"] = dist.new_group(backend="nccl")
    rows = []
    for nbytes in SIZES[::2]:
        tensor = torch.ones(nbytes // 4, device=device)
        samples = {name: [] for name in groups}
        for _ in range(args.rounds):
            for name, group in groups.items():
                seconds = timed(lambda: dist.all_reduce(tensor, group=group),
                                iterations_for(nbytes, most=50),
                                lambda: torch.cuda.synchronize(device))
                samples[name].append(slowest(seconds, dist, groups["gloo"]))
        rows.append((nbytes, {name: statistics.median(s) for name, s in samples.items()}))
    if dist.get_rank() == 0:
        print(f"\n# torch.distributed all_reduce of CUDA tensors (float32, SUM), {world} ranks "
              f"on {torch.cuda.device_count()} x {torch.cuda.get_device_name(device)}; time per "
              f"call in us, median of {args.rounds} rounds")
        print(f"{'size':>10}" + "".join(f"{name:>12}" for name in groups) +
              f"{'cclc speedup':>14}")
        for nbytes, t in rows:
            print(f"{fmt_bytes(nbytes):>10}" + "".join(f"{t[n] * 1e6:12.1f}" for n in groups) +
                  f"{t['gloo'] / t['cclc']:13.2f}x", flush=True)
    dist.destroy_process_group()


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}"
        n //= 1024


def rank_main(args):
    import torch
    import torch.distributed as dist
    import cclc.torch
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    if args.cuda:
        cuda_main(args, world, dist, torch)
        return
    groups = {"gloo": dist.group.WORLD, "cclc": dist.new_group(backend="cclc")}
    variants = {"gloo": (groups["gloo"], False), "cclc": (groups["cclc"], False),
                "cclc mapped": (groups["cclc"], True)}
    rows = allreduce_table(variants, args.rounds, dist, torch)
    ddp, params = ddp_step_times(groups, args.rounds, args.ddp_steps, dist, torch)
    # DDP asks each group's backend for its buckets' memory where this is 0:
    # cclc's are then mapped, gloo's come from PyTorch's allocator as before.
    os.environ["DDP_DISABLE_COMM_MEM"] = "0"
    ddp_buckets, _ = ddp_step_times(groups, args.rounds, args.ddp_steps, dist, torch)
    del os.environ["DDP_DISABLE_COMM_MEM"]
    cclc.torch.use_mapped_memory()
    ddp_mapped, _ = ddp_step_times(groups, args.rounds, args.ddp_steps, dist, torch)
    # Each DDP row: its label, its kind in the CSV, its times.
    ddp_rows = (("PyTorch's", "ddp_step", ddp), ("buckets", "ddp_step_buckets", ddp_buckets),
                ("mapped", "ddp_step_mapped", ddp_mapped))
    if dist.get_rank() == 0:
        print(f"\n# torch.distributed all_reduce (float32, SUM), {world} ranks; "
              f"time per call in us, median of {args.rounds} rounds")
        print(f"{'size':>10} {'gloo':>12} {'cclc':>12} {'cclc mapped':>12} {'cclc speedup':>13} "
              f"{'mapped speedup':>15}")
        for nbytes, t in rows:
            print(f"{fmt_bytes(nbytes):>10} {t['gloo'] * 1e6:12.1f} {t['cclc'] * 1e6:12.1f} "
                  f"{t['cclc mapped'] * 1e6:12.1f} {t['gloo'] / t['cclc']:12.2f}x "
                  f"{t['gloo'] / t['cclc mapped']:14.2f}x")
        print(f"\n# DDP training step, {params / 1e6:.1f}M parameters, batch 8, {world} ranks; "
              f"ms per step")
        print(f"{'allocator':>10} {'gloo':>12} {'cclc':>12} {'local':>12} {'cclc speedup':>13} "
              f"{'beyond local':>13}")
        for allocator, _, times in ddp_rows:
            beyond = (times['gloo'] - times['local']) / max(times['cclc'] - times['local'], 1e-9)
            print(f"{allocator:>10} {times['gloo'] * 1e3:12.1f} {times['cclc'] * 1e3:12.1f} "
                  f"{times['local'] * 1e3:12.1f} {times['gloo'] / times['cclc']:12.2f}x "
                  f"{beyond:12.2f}x", flush=True)
        if args.csv:
            with open(args.csv, "a", newline="") as f:
                w = csv.writer(f)
                for nbytes, t in rows:
                    w.writerow([world, "all_reduce", nbytes, t["gloo"], t["cclc"], t["cclc mapped"]])
                for _, kind, times in ddp_rows:
                    w.writerow([world, kind, params, times["gloo"], times["cclc"],
                                times["local"]])
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
    parser.add_argument("--cuda", action="store_true", help="time all_reduce of CUDA tensors")
    args, _ = parser.parse_known_args()
    if os.environ.get("CCLC_BENCH_RANK"):
        rank_main(args)
        return
    for world in args.ranks:
        launch(world, sys.argv[1:])


if __name__ == "__main__":
    main()
