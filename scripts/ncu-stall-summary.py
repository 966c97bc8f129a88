#!/usr/bin/env python3
"""Summarises an Nsight Compute source page (ncu -i R --page source --print-source sass --csv):
the warp-stall samples by reason over the whole kernel, then the N instructions with the most
samples and their reasons. Usage: ncu-stall-summary.py SASS.csv [N]"""
import collections
import csv
import sys


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    header, data = rows[1], rows[2:]  # rows[0] names the kernel
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    samples = "Warp Stall Sampling (All Samples)"

    def count(row, name):
        value = row[col[name]]
        return int(value) if value.isdigit() else 0

    totals = collections.Counter()
    for row in data:
        for r in reasons:
            totals[r] += count(row, r)
    all_samples = sum(count(row, samples) for row in data)
    print(f"kernel: {rows[0][1][:150]}")
    print(f"samples: {all_samples}")
    for reason, n in totals.most_common():
        if n:
            print(f"  {reason:26s}{n:8d} {100 * n / max(all_samples, 1):5.1f}%")
    print(f"top {top_n} instructions (address, samples, SASS | reasons):")
    for row in sorted(data, key=lambda r: -count(r, samples))[:top_n]:
        why = " ".join(f"{r[6:]}={row[col[r]]}" for r in reasons if count(row, r))
        print(f"  {row[col['Address']][-5:]} {count(row, samples):6d} "
              f"{row[col['Source']].strip()[:64]} | {why}")


if __name__ == "__main__":
    main()
