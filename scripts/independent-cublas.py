#!/usr/bin/env python3
"""cuBLAS bf16 through PyTorch, timed by tools independent of ablationd, in each power regime,
so that the daemon's figures can be held against them (each regime's cuBLAS figure should agree
with an independent tool's within 2%).

  burst:     the GPU idles until NVML reports no clock-event reason holding the clock and the
             temperature is within 5 C of the coolest reading, then triton.testing.do_bench with
             a 20 ms budget (it stops before the cap engages), repeated 10 times; the median.
  sustained: a 20 s back-to-back loop of the GEMM, timed with CUDA events per batch of 10; the
             median of the batches of the last 10 s (the first seconds swing while the power
             controller settles).
The sustained loop also samples NVML's SM clock and board power every 50 ms over its last 10 s
and prints TFLOPS per GHz of that clock, so that a gap to the daemon's solo figure can be split
into the clock (power) and the work per clock (the algorithm). --blas cublaslt makes torch call
cuBLASLt (the library the daemon's cublas_bf16 uses) rather than its default cuBLAS entry.
Observe mode: reads NVML, changes nothing. Prints one line per regime and writes JSON if asked.
  scripts/independent-cublas.py [SIZE] [--sustained-only] [--blas cublas|cublaslt] [--json FILE]
"""
import json
import statistics
import sys
import threading
import time

import pynvml
import torch
import triton

size = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 4096
out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
blas = sys.argv[sys.argv.index("--blas") + 1] if "--blas" in sys.argv else "cublas"
torch.backends.cuda.preferred_blas_library(blas)

pynvml.nvmlInit()
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
HELD = 0x4 | 0x8 | 0x20 | 0x40 | 0x80  # power cap, HW slowdown, SW/HW thermal, power brake


def reasons():
    try:
        return pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
    except Exception:  # older bindings
        return pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)


def temperature():
    return pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)


a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
flops = 2.0 * size**3
gemm = lambda: torch.mm(a, b, out=c)  # noqa: E731
for _ in range(10):
    gemm()
torch.cuda.synchronize()

# The coolest temperature: the GPU idle for 3 s.
time.sleep(3)
coolest = temperature()


def cool_down():
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 10:
        if time.perf_counter() - t0 >= 0.3 and not (reasons() & HELD) and temperature() <= coolest + 5:
            break
        time.sleep(0.02)
    return time.perf_counter() - t0


sustained_only = "--sustained-only" in sys.argv
burst = []
for _ in range(0 if sustained_only else 10):
    waited = cool_down()
    ms = triton.testing.do_bench(gemm, warmup=1, rep=20, return_mode="median")
    burst.append(flops / (ms * 1e-3) / 1e12)
burst_tflops = statistics.median(burst) if burst else None

# NVML's SM clock (MHz) and board power (W) every 50 ms while `sampling` is set.
clock_samples = []
sampling = threading.Event()
stop = threading.Event()


def sample_clock():
    while not stop.is_set():
        if sampling.is_set():
            clock_samples.append((pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                                  pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0))
        time.sleep(0.05)


sampler = threading.Thread(target=sample_clock, daemon=True)
sampler.start()

# Sustained: 20 s back to back, batches of 10 timed with events.
events = []
t0 = time.perf_counter()
pending = []
batches = 0
mark = None  # (time, NVML energy in mJ, batches enqueued) when the last 10 s began
while time.perf_counter() - t0 < 20:
    if mark is None and time.perf_counter() - t0 >= 10:
        torch.cuda.synchronize()
        mark = (time.perf_counter(), pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), batches)
        sampling.set()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(10):
        gemm()
    e1.record()
    batches += 1
    pending.append((time.perf_counter() - t0, e0, e1))
    while len(pending) > 4:
        t, x0, x1 = pending.pop(0)
        x1.synchronize()
        events.append((t, flops * 10 / (x0.elapsed_time(x1) * 1e-3) / 1e12))
for t, x0, x1 in pending:
    x1.synchronize()
    events.append((t, flops * 10 / (x0.elapsed_time(x1) * 1e-3) / 1e12))
torch.cuda.synchronize()
stop.set()
sampler.join()
clock_mhz = statistics.mean(c for c, _ in clock_samples)
nvml_watts = statistics.mean(w for _, w in clock_samples)
# Energy per operation over the last 10 s: NVML's total-energy counter across the batches run
# after the mark (the GPU drained at both ends), and the board's mean power.
seconds = time.perf_counter() - mark[0]
joules = (pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) - mark[1]) / 1000.0
tera_ops = (batches - mark[2]) * 10 * flops / 1e12
late = [v for t, v in events if t >= 10]
halves = [statistics.median([v for t, v in events if 10 + 5 * i <= t < 15 + 5 * i]) for i in (0, 1)]
sustained_tflops = statistics.median(late)

print(f"independent cuBLAS bf16 {size}^3 (torch {torch.__version__}, triton {triton.__version__}, "
      f"torch's BLAS {blas}):")
if burst:
    print(f"  burst     {burst_tflops:7.1f} TFLOPS  do_bench 20 ms after a cool-down, median of 10 "
          f"(range {min(burst):.1f}-{max(burst):.1f}; coolest {coolest} C)")
print(f"  sustained {sustained_tflops:7.1f} TFLOPS  20 s back to back, median of the last 10 s "
      f"(its halves {halves[0]:.1f} and {halves[1]:.1f}); {joules / tera_ops:.3f} J per TFLOP, "
      f"{joules / seconds:.0f} W")
print(f"            at NVML's SM clock {clock_mhz:.0f} MHz (mean of {len(clock_samples)} readings, power "
      f"{nvml_watts:.0f} W): {sustained_tflops / (clock_mhz / 1e3):.1f} TFLOPS per GHz")
if out_json:
    with open(out_json, "w") as f:
        json.dump({"size": size, "burst": burst, "burst_tflops": burst_tflops,
                   "sustained_tflops": sustained_tflops, "sustained_halves": halves,
                   "joules_per_tflop": joules / tera_ops, "mean_watts": joules / seconds,
                   "coolest_c": coolest, "blas": blas, "nvml_sm_mhz": clock_mhz,
                   "nvml_power_w": nvml_watts,
                   "tflops_per_ghz": sustained_tflops / (clock_mhz / 1e3)}, f, indent=1)
