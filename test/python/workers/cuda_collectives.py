"""The cclc backend on CUDA tensors: every collective the runtime runs on the
GPU, for every dtype and operator, on a stream of the caller's, against results
computed here from the inputs (which every rank can make for every rank).

Ranks take the GPUs in turn (rank % device_count), so one GPU serves a whole
job. Besides the values it records: a Work's wait() ordering the caller's
current stream after the call, a Work's future holding the results, host and
GPU calls interleaved on one group, the refusal of CUDA tensors by the
operations that run on the host only, and DistributedDataParallel training of
a CUDA model giving gloo's losses.
"""
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import cclc.torch  # noqa: F401  (registers the backend)
from collectives import DTYPES, OPS, Checker, make_input, reference
from ddp import train

SIZES = (1, 1031)


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

    def refused():
        t = torch.ones(4, device=device)
        try:
            dist.send(t, dst=(rank + 1) % world, group=group)
        except RuntimeError as e:
            ok = "CPU tensors only" in str(e)
            check.results["send-refused"] = "ok" if ok else f"raised another error: {e}"
        else:
            check.results["send-refused"] = "a CUDA tensor was sent"
    attempt("send-refused", refused)


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
