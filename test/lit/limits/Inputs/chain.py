"""Writes an MSCCL-IR allreduce on N gpus that is one long chain: gpu g
receives a chunk from gpu g+1, then sends it to gpu g-1, all on channel 0 of
the C channels the <algo> element declares (1 by default).
Usage: chain.py N [C]"""
import sys

n = int(sys.argv[1])
channels = int(sys.argv[2]) if len(sys.argv) > 2 else 1
out = ['<algo name="chain" proto="Simple" nchannels="%d" nchunksperloop="1" ngpus="%d" '
       'coll="allreduce" inplace="0" outofplace="1">' % (channels, n)]
step = ('<step s="%d" type="%s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" '
        'depid="-1" deps="-1" hasdep="0"/>')
for g in range(n):
    send = g - 1 if g > 0 else -1
    recv = g + 1 if g < n - 1 else -1
    out.append('<gpu id="%d" i_chunks="1" o_chunks="1" s_chunks="0">' % g)
    out.append('<tb id="0" send="%d" recv="%d" chan="0">' % (send, recv))
    steps = (["r"] if recv >= 0 else []) + (["s"] if send >= 0 else [])
    out.extend(step % (i, kind) for i, kind in enumerate(steps))
    out.append("</tb></gpu>")
out.append("</algo>")
print("\n".join(out))
