#!/usr/bin/env python3
"""Emits a row softmax written in Triton as PTX, for `kernel add` with `language = "ptx"`.

Run where Triton and a GPU are (the GPU node: Triton compiles for the GPU it finds):
    python3 examples/user-kernels/ptx/triton_row_softmax.py OUTDIR [COLS] [WARPS]
It writes OUTDIR/triton_softmax_w{WARPS}.ptx, its manifest (.toml) and a .json (Triton's
version, the entry's name, its parameters as the PTX declares them, the warps, the dynamic shared
memory the launch needs, the largest error against torch's softmax on the GPU and
triton.testing.do_bench's time at 8192 rows, for a figure beside the service's). The kernel is
one program per row, the whole row in registers (BLOCK = the next power of two of COLS), bf16 in
and out, fp32 inside: the job of examples/user-kernels/general/row_softmax.cu.
"""
import json
import re
import sys


def softmax_kernel():
    """The Triton kernel (imported here, so that manifest() works where Triton is absent)."""
    import triton
    import triton.language as tl

    @triton.jit
    def triton_softmax(x_ptr, y_ptr, rows, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        base = row.to(tl.int64) * cols
        x = tl.load(x_ptr + base + offs, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + base + offs, y.to(tl.bfloat16), mask=mask)

    return triton_softmax


MANIFEST = """# A row softmax written in Triton {triton}, emitted as PTX by triton_row_softmax.py on {device}
# ({warps} warps, BLOCK = {block}): the job of ../general/row_softmax.cu. Triton's PTX takes its
# sizes as int32 and, after the kernel's own parameters, {extra} pointer(s) of scratch memory this
# kernel does not use (passed as 0). Its source has no reference: the service's row softmax is.
name = "triton_softmax_w{warps}"
entry = "{entry}"
description = "row softmax in Triton {triton}, {warps} warps, as PTX"
language = "ptx"

[contract]
kind = "general"
dtype = "bf16"
sizes = ["rows", "cols"]
default_sizes = {{ rows = 8192, cols = {cols} }}
size_type = "int32"
params = [{param_list}]

[[tensor]]
name = "x"
dtype = "bf16"
shape = ["rows", "cols"]
role = "input"
fill = {{ kind = "normal", mean = 0, std = 2 }}

[[tensor]]
name = "y"
dtype = "bf16"
shape = ["rows", "cols"]
role = "output"
{scalars}
[reference]
builtin = "row_softmax"
input = "x"
output = "y"
abs = 1e-3
rel = 1e-2

[work]
ops = "5 * rows * cols"
bytes = "2 * 2 * rows * cols"
peak = "fp32"

[launch]
block = "32 * WARPS"
grid = "rows"
smem = "{shared_bytes}"

[[condition]]
when = "cols <= {block}"
says = "this build holds a row of at most {block} columns (BLOCK)"

[[condition]]
when = "cols % 16 == 0"
says = "Triton specialised cols as a multiple of 16"

[[knob]]
name = "WARPS"
short = "warps"
values = [{warps}]
"""


def entry_params(ptx):
    """The first .entry's name and its parameters' types and names, in order: each parameter is
    `.param .TYPE [.ptr .global .align N] NAME`, the list between the parentheses."""
    m = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx)
    if not m:
        return None, []
    params = []
    for p in m.group(2).split(","):
        words = p.split()
        params.append([words[1].lstrip("."), words[-1]])
    return m.group(1), params


def manifest(info):
    """The manifest of the emitted PTX: its parameters past x, y, rows and cols are scratch."""
    extra = len(info["params"]) - 4
    names = ["x", "y", "rows", "cols"] + [f"scratch{i}" for i in range(extra)]
    scalars = "".join(f'\n[[scalar]]\nname = "scratch{i}"\ndtype = "int64"\nvalue = 0\n'
                      for i in range(extra))
    return MANIFEST.format(param_list=", ".join(f'"{n}"' for n in names), scalars=scalars,
                           extra=extra, **info)


def main():
    import torch
    import triton

    triton_softmax = softmax_kernel()
    out = sys.argv[1]
    cols = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    warps = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rows = 8192
    torch.manual_seed(5)
    x = (torch.randn(rows, cols, device="cuda") * 2).to(torch.bfloat16)
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    compiled = triton_softmax[(rows,)](x, y, rows, cols, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    want = torch.softmax(x.float(), dim=1)
    err = (y.float() - want).abs().max().item()
    ms = triton.testing.do_bench(
        lambda: triton_softmax[(rows,)](x, y, rows, cols, BLOCK=block, num_warps=warps))
    ptx = compiled.asm["ptx"]
    entry, params = entry_params(ptx)
    meta = compiled.metadata
    shared = meta.shared if hasattr(meta, "shared") else meta["shared"]
    info = {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "entry": entry,
        "params": params,
        "warps": warps,
        "block": block,
        "cols": cols,
        "shared_bytes": shared,
        "max_abs_error_vs_torch": err,
        "do_bench_ms_8192_rows": ms,
        "do_bench_gbps": 2 * 2 * rows * cols / (ms * 1e-3) / 1e9,
    }
    name = f"{out}/triton_softmax_w{warps}"
    with open(name + ".ptx", "w") as f:
        f.write(ptx)
    with open(name + ".json", "w") as f:
        json.dump(info, f, indent=1)
    with open(name + ".toml", "w") as f:
        f.write(manifest(info))
    print(json.dumps(info))


if __name__ == "__main__":
    main()
