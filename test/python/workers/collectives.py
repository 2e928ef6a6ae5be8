"""Every operation of the cclc backend, for every dtype, against gloo.

Each rank joins a gloo group (the default) and a cclc group over the same
ranks, runs every operation on the same inputs through both and records, per
case, "ok" or what differed. Where gloo lacks a case (AVG, unsigned 32/64-bit
types), the expected result is computed here from the inputs, which every rank
can make for every rank. Inputs are small integers, so every sum, product,
minimum and maximum is exact in every dtype whatever order it is reduced in.
"""
import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import cclc.torch  # noqa: F401  (registers the backend)

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32,
          "i64": torch.int64}
SIZES = (1, 1031)
OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "product": dist.ReduceOp.PRODUCT,
       "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def make_input(rank, n, dtype, op="sum", salt=0):
    """Rank's input: small integers; 1s and 2s for products, so they stay exact."""
    i = torch.arange(n, dtype=torch.int64)
    if op == "product":
        values = 1 + (i + rank + salt) % 2
    else:
        values = 1 + (i * 3 + rank * 5 + salt) % 11
    return values.to(dtype)


def reference(op, inputs):
    stacked = torch.stack([x.to(torch.float64) for x in inputs])
    if op in ("sum", "avg"):
        out = stacked.sum(0)
        if op == "avg":
            out = out / len(inputs)
            if not inputs[0].is_floating_point():
                out = out.trunc()
    elif op == "product":
        out = stacked.prod(0)
    elif op == "min":
        out = stacked.min(0).values
    else:
        out = stacked.max(0).values
    return out.to(inputs[0].dtype)


class Checker:
    def __init__(self):
        self.results = {}

    def case(self, name, got, want):
        if got.dtype != want.dtype or got.shape != want.shape:
            self.results[name] = f"shape/dtype {tuple(got.shape)} {got.dtype} != " \
                                 f"{tuple(want.shape)} {want.dtype}"
        elif got.is_floating_point():
            ok = torch.allclose(got.double(), want.double(), rtol=1e-2, atol=1e-2)
            self.results[name] = "ok" if ok else f"differs: {got[:8].tolist()} vs {want[:8].tolist()}"
        else:
            ok = torch.equal(got, want)
            self.results[name] = "ok" if ok else f"differs: {got[:8].tolist()} vs {want[:8].tolist()}"

    def error(self, name, error):
        self.results[name] = f"raised {type(error).__name__}: {error}"


def ring_shift(rank, mine, got, group):
    """Sends mine to the right-hand neighbour and receives got from the left,
    by blocking calls in an order that cannot deadlock."""
    world = dist.get_world_size(group)
    right, left = (rank + 1) % world, (rank - 1) % world
    if rank % 2 == 0:
        dist.send(mine, right, group=group)
        dist.recv(got, left, group=group)
    else:
        dist.recv(got, left, group=group)
        dist.send(mine, right, group=group)


def with_gloo(fn, fallback):
    """fn run on gloo, or fallback() where gloo does not do that case."""
    try:
        return fn()
    except (RuntimeError, ValueError):
        return fallback()


def run(check, rank, world, cclc_group, gloo_group):
    for dname, dtype in DTYPES.items():
        for n in SIZES:
            tag = f"{dname}-n{n}"
            # all_reduce, every operator.
            for oname, op in OPS.items():
                name = f"all_reduce-{oname}-{tag}"
                try:
                    mine = make_input(rank, n, dtype, oname)
                    expected = reference(oname, [make_input(r, n, dtype, oname)
                                                 for r in range(world)])

                    def on_gloo():
                        t = mine.clone()
                        dist.all_reduce(t, op=op, group=gloo_group)
                        return t
                    want = expected if oname == "avg" else with_gloo(on_gloo, lambda: expected)
                    got = mine.clone()
                    work = dist.all_reduce(got, op=op, group=cclc_group, async_op=True)
                    work.wait()
                    check.case(name, got, want)
                except Exception as e:  # noqa: BLE001
                    check.error(name, e)
            collectives(check, rank, world, cclc_group, gloo_group, dtype, n, tag)


def collectives(check, rank, world, cg, gg, dtype, n, tag):
    def attempt(name, body):
        try:
            body()
        except Exception as e:  # noqa: BLE001
            check.error(name, e)

    inputs = [make_input(r, n, dtype) for r in range(world)]
    mine = inputs[rank]

    def all_gather():
        got = [torch.empty_like(mine) for _ in range(world)]
        want = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(got, mine, group=cg)
        dist.all_gather(want, mine, group=gg)
        check.case(f"all_gather-{tag}", torch.stack(got), torch.stack(want))
    attempt(f"all_gather-{tag}", all_gather)

    def all_gather_into_tensor():
        got = torch.empty(world * n, dtype=dtype)
        dist.all_gather_into_tensor(got, mine, group=cg)
        check.case(f"all_gather_into_tensor-{tag}", got, torch.cat(inputs))
    attempt(f"all_gather_into_tensor-{tag}", all_gather_into_tensor)

    blocks = [[make_input(r, n, dtype, salt=b) for b in range(world)] for r in range(world)]
    reduced = reference("sum", [torch.cat(blocks[r]) for r in range(world)])

    def reduce_scatter():
        got = torch.empty(n, dtype=dtype)
        dist.reduce_scatter(got, blocks[rank], group=cg)
        check.case(f"reduce_scatter-{tag}", got, reduced[rank * n:(rank + 1) * n])
    attempt(f"reduce_scatter-{tag}", reduce_scatter)

    def reduce_scatter_tensor():
        got = torch.empty(n, dtype=dtype)
        dist.reduce_scatter_tensor(got, torch.cat(blocks[rank]), group=cg)
        check.case(f"reduce_scatter_tensor-{tag}", got, reduced[rank * n:(rank + 1) * n])
    attempt(f"reduce_scatter_tensor-{tag}", reduce_scatter_tensor)

    root = world - 1

    def broadcast():
        got, want = mine.clone(), mine.clone()
        dist.broadcast(got, src=root, group=cg)
        dist.broadcast(want, src=root, group=gg)
        check.case(f"broadcast-{tag}", got, want)
    attempt(f"broadcast-{tag}", broadcast)

    def reduce():
        reduce_root = 1 % world
        for oname in ("sum", "max"):
            got = mine.clone()
            dist.reduce(got, dst=reduce_root, op=OPS[oname], group=cg)
            if rank == reduce_root:
                check.case(f"reduce-{oname}-{tag}", got, reference(oname, inputs))
            else:
                check.case(f"reduce-{oname}-{tag}", mine, mine)
    attempt(f"reduce-{tag}", reduce)

    def all_to_all():
        sends = [make_input(rank, n, dtype, salt=p) for p in range(world)]
        got = [torch.empty_like(mine) for _ in range(world)]
        dist.all_to_all(got, sends, group=cg)
        want = [make_input(p, n, dtype, salt=rank) for p in range(world)]
        check.case(f"all_to_all-{tag}", torch.stack(got), torch.stack(want))
    attempt(f"all_to_all-{tag}", all_to_all)

    def all_to_all_single():
        sends = torch.cat([make_input(rank, n, dtype, salt=p) for p in range(world)])
        got = torch.empty_like(sends)
        dist.all_to_all_single(got, sends, group=cg)
        want = torch.cat([make_input(p, n, dtype, salt=rank) for p in range(world)])
        check.case(f"all_to_all_single-{tag}", got, want)
        # Uneven splits: rank r sends p + r + 1 rows to rank p.
        rows = lambda src, dst: dst + src + 1  # noqa: E731
        sends = torch.cat([make_input(rank, rows(rank, p) * n, dtype, salt=p).view(-1, n)
                           for p in range(world)])
        got = torch.empty(sum(rows(p, rank) for p in range(world)), n, dtype=dtype)
        dist.all_to_all_single(got, sends, output_split_sizes=[rows(p, rank) for p in range(world)],
                               input_split_sizes=[rows(rank, p) for p in range(world)], group=cg)
        want = torch.cat([make_input(p, rows(p, rank) * n, dtype, salt=rank).view(-1, n)
                          for p in range(world)])
        check.case(f"all_to_all_single-splits-{tag}", got, want)
    attempt(f"all_to_all_single-{tag}", all_to_all_single)

    def gather_scatter():
        got = [torch.empty_like(mine) for _ in range(world)] if rank == root else None
        dist.gather(mine, gather_list=got, dst=root, group=cg)
        if rank == root:
            check.case(f"gather-{tag}", torch.stack(got), torch.stack(inputs))
        else:
            check.case(f"gather-{tag}", mine, mine)
        out = torch.empty_like(mine)
        dist.scatter(out, scatter_list=list(blocks[root]) if rank == root else None, src=root,
                     group=cg)
        check.case(f"scatter-{tag}", out, blocks[root][rank])
    attempt(f"gather_scatter-{tag}", gather_scatter)

    def send_recv():
        # A ring both ways: blocking send/recv in an order that cannot deadlock,
        # then isend/irecv posted in the order that would with blocking calls.
        right, left = (rank + 1) % world, (rank - 1) % world
        got = torch.empty_like(mine)
        ring_shift(rank, mine, got, group=cg)
        check.case(f"send_recv-{tag}", got, inputs[left])
        got = torch.empty_like(mine)
        works = [dist.isend(mine, left, group=cg), dist.irecv(got, right, group=cg)]
        for w in works:
            w.wait()
        check.case(f"isend_irecv-{tag}", got, inputs[right])
    if world > 1:
        attempt(f"send_recv-{tag}", send_recv)


def main():
    out = Path(sys.argv[1])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cclc_group = dist.new_group(backend="cclc")
    check = Checker()
    run(check, rank, world, cclc_group, dist.group.WORLD)
    try:
        dist.barrier(group=cclc_group)
        check.results["barrier"] = "ok"
    except Exception as e:  # noqa: BLE001
        check.error("barrier", e)
    # A large message takes several FIFO slots and, at some sizes, other plans.
    big = make_input(rank, (1 << 20) + 3, torch.float32)
    want = reference("sum", [make_input(r, (1 << 20) + 3, torch.float32) for r in range(world)])
    got = big.clone()
    dist.all_reduce(got, group=cclc_group)
    check.case("all_reduce-sum-f32-large", got, want)
    # Sub-groups: the even ranks alone.
    evens = list(range(0, world, 2))
    sub = dist.new_group(ranks=evens, backend="cclc")
    if rank in evens:
        t = torch.full((5,), float(rank))
        dist.all_reduce(t, group=sub)
        check.case("new_group-all_reduce", t, torch.full((5,), float(sum(evens))))
    dist.destroy_process_group()
    (out / f"rank{rank}.json").write_text(json.dumps(check.results))


if __name__ == "__main__":
    main()
