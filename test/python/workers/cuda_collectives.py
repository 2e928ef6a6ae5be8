"""The cclc backend on CUDA tensors: every collective the runtime runs on the
GPU, for every dtype and operator, on a stream of the caller's, and the
operations staged through host memory (sends, receives, gather, scatter,
all_to_all), against results computed here from the inputs (which every rank
can make for every rank).

Ranks take the GPUs in turn (rank % device_count), so one GPU serves a whole
job. Besides the values it records: a Work's wait() ordering the caller's
current stream after the call, a Work's future holding the results, host and
GPU calls interleaved on one group, and DistributedDataParallel training of a
CUDA model giving gloo's losses.
"""
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import cclc.torch  # noqa: F401  (registers the backend)
from collectives import DTYPES, OPS, Checker, make_input, reference, ring_shift
from ddp import train

SIZES = (1, 1031)
#: The dtypes the staged operations are checked with: they move bytes.
STAGED_DTYPES = ("f32", "i64")


def run(check, rank, world, group, device):
    stream = torch.cuda.Stream(device)

    def attempt(name, body):
        try:
            with torch.cuda.stream(stream):
                body()
        except Exception as e:  # noqa: BLE001
            check.error(name, e)

    def on_gpu(t):
        return t.to(device)

    for dname, dtype in DTYPES.items():
        for n in SIZES:
            tag = f"{dname}-n{n}"
            inputs = [make_input(r, n, dtype) for r in range(world)]
            mine = inputs[rank]
            for oname, op in OPS.items():
                def all_reduce(oname=oname, op=op):
                    t = on_gpu(make_input(rank, n, dtype, oname))
                    dist.all_reduce(t, op=op, group=group)
                    want = reference(oname, [make_input(r, n, dtype, oname)
                                             for r in range(world)])
                    check.case(f"all_reduce-{oname}-{tag}", t.cpu(), want)
                attempt(f"all_reduce-{oname}-{tag}", all_reduce)

            def broadcast():
                root = 1 % world
                t = on_gpu(mine)
                dist.broadcast(t, src=root, group=group)
                check.case(f"broadcast-{tag}", t.cpu(), inputs[root])
            attempt(f"broadcast-{tag}", broadcast)

            for oname in ("sum", "max"):
                def reduce(oname=oname):
                    t = on_gpu(mine)
                    dist.reduce(t, dst=0, op=OPS[oname], group=group)
                    if rank == 0:
                        check.case(f"reduce-{oname}-{tag}", t.cpu(), reference(oname, inputs))
                    else:
                        check.results[f"reduce-{oname}-{tag}"] = "ok"
                attempt(f"reduce-{oname}-{tag}", reduce)

            def all_gather():
                got = [torch.empty_like(on_gpu(mine)) for _ in range(world)]
                dist.all_gather(got, on_gpu(mine), group=group)
                check.case(f"all_gather-{tag}", torch.stack(got).cpu(), torch.stack(inputs))
            attempt(f"all_gather-{tag}", all_gather)

            def all_gather_into_tensor():
                got = torch.empty(world * n, dtype=dtype, device=device)
                dist.all_gather_into_tensor(got, on_gpu(mine), group=group)
                check.case(f"all_gather_into_tensor-{tag}", got.cpu(), torch.cat(inputs))
            attempt(f"all_gather_into_tensor-{tag}", all_gather_into_tensor)

            # Rank r's inputs for reduce_scatter: one block per rank.
            blocks = [[make_input(r, n, dtype, salt=b) for b in range(world)]
                      for r in range(world)]
            want = reference("sum", [blocks[r][rank] for r in range(world)])

            def reduce_scatter():
                got = torch.empty(n, dtype=dtype, device=device)
                dist.reduce_scatter(got, [on_gpu(b) for b in blocks[rank]], group=group)
                check.case(f"reduce_scatter-{tag}", got.cpu(), want)
            attempt(f"reduce_scatter-{tag}", reduce_scatter)

            def reduce_scatter_tensor():
                got = torch.empty(n, dtype=dtype, device=device)
                dist.reduce_scatter_tensor(got, on_gpu(torch.cat(blocks[rank])), group=group)
                check.case(f"reduce_scatter_tensor-{tag}", got.cpu(), want)
            attempt(f"reduce_scatter_tensor-{tag}", reduce_scatter_tensor)

    for dname in STAGED_DTYPES:
        for n in SIZES:
            staged(attempt, check, rank, world, group, device, DTYPES[dname], n, f"{dname}-n{n}")

    n = (1 << 22) + 3
    inputs = [make_input(r, n, torch.float32) for r in range(world)]
    want = reference("sum", inputs)

    def wait_orders_streams():
        # Enqueued on `stream`; read on the default stream after wait().
        t = on_gpu(inputs[rank])
        work = dist.all_reduce(t, group=group, async_op=True)
        with torch.cuda.stream(torch.cuda.default_stream(device)):
            work.wait()
            check.case("async-wait-large", t.cpu(), want)
        torch.cuda.synchronize(device)
        if not work.is_completed():
            check.results["async-wait-large"] = "not completed after the device synchronized"
    attempt("async-wait-large", wait_orders_streams)

    def future():
        t = on_gpu(inputs[rank])
        fut = dist.all_reduce(t, group=group, async_op=True).get_future()
        check.case("future-large", fut.wait()[0].cpu(), want)
    attempt("future-large", future)

    def host_and_gpu():
        # Host and GPU calls alternate on one group, each served in order.
        results = []
        for i in range(3):
            h = torch.full((1000,), float(rank + i))
            g = torch.full((3000,), float(rank * i), device=device)
            wh = dist.all_reduce(h, group=group, async_op=True)
            wg = dist.all_reduce(g, group=group, async_op=True)
            wh.wait()
            wg.wait()
            results.append((h.cpu(), g.cpu()))
        got = torch.cat([torch.cat([h, g]) for h, g in results])
        ranks = torch.arange(world, dtype=torch.float64)
        expected = torch.cat([torch.cat([torch.full((1000,), float((ranks + i).sum())),
                                         torch.full((3000,), float((ranks * i).sum()))])
                              for i in range(3)])
        check.case("host-and-gpu", got, expected.float())
    attempt("host-and-gpu", host_and_gpu)



def staged(attempt, check, rank, world, group, device, dtype, n, tag):
    """The operations made of sends and receives, on CUDA tensors."""
    def block(src, dst, rows=1):
        return make_input(src, rows * n, dtype, salt=dst).view(rows, n)

    def all_to_all():
        got = [torch.empty(1, n, dtype=dtype, device=device) for _ in range(world)]
        dist.all_to_all(got, [block(rank, p).to(device) for p in range(world)], group=group)
        check.case(f"all_to_all-{tag}", torch.cat(got).cpu(),
                   torch.cat([block(p, rank) for p in range(world)]))
    attempt(f"all_to_all-{tag}", all_to_all)

    def all_to_all_single():
        got = torch.empty(world, n, dtype=dtype, device=device)
        sends = torch.cat([block(rank, p) for p in range(world)]).to(device)
        dist.all_to_all_single(got, sends, group=group)
        check.case(f"all_to_all_single-{tag}", got.cpu(),
                   torch.cat([block(p, rank) for p in range(world)]))
    attempt(f"all_to_all_single-{tag}", all_to_all_single)

    def all_to_all_single_splits():
        # Rank r sends p + r + 1 rows to rank p.
        rows = lambda src, dst: dst + src + 1  # noqa: E731
        sends = torch.cat([block(rank, p, rows(rank, p)) for p in range(world)]).to(device)
        got = torch.empty(sum(rows(p, rank) for p in range(world)), n, dtype=dtype,
                          device=device)
        dist.all_to_all_single(got, sends, output_split_sizes=[rows(p, rank) for p in range(world)],
                               input_split_sizes=[rows(rank, p) for p in range(world)],
                               group=group)
        check.case(f"all_to_all_single-splits-{tag}", got.cpu(),
                   torch.cat([block(p, rank, rows(p, rank)) for p in range(world)]))
    attempt(f"all_to_all_single-splits-{tag}", all_to_all_single_splits)

    root = world - 1

    def gather():
        got = [torch.empty(1, n, dtype=dtype, device=device) for _ in range(world)] \
            if rank == root else None
        dist.gather(block(rank, 0).to(device), gather_list=got, dst=root, group=group)
        if rank == root:
            check.case(f"gather-{tag}", torch.cat(got).cpu(),
                       torch.cat([block(p, 0) for p in range(world)]))
        else:
            check.results[f"gather-{tag}"] = "ok"
    attempt(f"gather-{tag}", gather)

    def scatter():
        got = torch.empty(1, n, dtype=dtype, device=device)
        blocks = [block(root, p).to(device) for p in range(world)] if rank == root else None
        dist.scatter(got, scatter_list=blocks, src=root, group=group)
        check.case(f"scatter-{tag}", got.cpu(), block(root, rank))
    attempt(f"scatter-{tag}", scatter)

    right, left = (rank + 1) % world, (rank - 1) % world

    def send_recv():
        got = torch.empty(1, n, dtype=dtype, device=device)
        ring_shift(rank, block(rank, 0).to(device), got, group)
        check.case(f"send_recv-{tag}", got.cpu(), block(left, 0))
    attempt(f"send_recv-{tag}", send_recv)

    def isend_irecv():
        got = torch.empty(1, n, dtype=dtype, device=device)
        works = [dist.isend(block(rank, 1).to(device), left, group=group),
                 dist.irecv(got, right, group=group)]
        for w in works:
            w.wait()
        check.case(f"isend_irecv-{tag}", got.cpu(), block(right, 1))
    attempt(f"isend_irecv-{tag}", isend_irecv)


def main():
    out = Path(sys.argv[1])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    group = dist.new_group(backend="cclc")
    check = Checker()
    run(check, rank, world, group, device)
    losses = {name: train(g, rank, device)[0]
              for name, g in (("cclc", group), ("gloo", dist.group.WORLD))}
    dist.destroy_process_group()
    (out / f"rank{rank}.json").write_text(json.dumps({"cases": check.results, "losses": losses}))


if __name__ == "__main__":
    main()
