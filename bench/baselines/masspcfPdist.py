"""masspcf's pdist of the PCFs in an .npz (offsets, times, values; float64), timed call by call.

    python3 bench/baselines/masspcfPdist.py PCFS.npz P REPEATS OUT.npy

Prints one JSON line: masspcf's version and the wall seconds of each pdist call (building the
PCF tensor is not timed), and writes the last call's dense n x n result to OUT.npy so that the
caller compares it with pxl's. bench/lib/masspcf.mjs runs it.
"""
import json
import sys
import time

import numpy as np
import masspcf as mpcf


def main():
    path, p, repeats, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    z = np.load(path)
    offsets, times, values = z["offsets"], z["times"], z["values"]
    n = len(offsets) - 1
    # A build with CUDA would move large matrices to a GPU; the comparison is CPU against CPU.
    system = getattr(mpcf, "system", None)
    if system is not None and hasattr(system, "force_cpu"):
        system.force_cpu(True)
    dtype = getattr(mpcf, "pcf64", None) or mpcf.float64
    fs = mpcf.zeros((n,), dtype=dtype)
    for k in range(n):
        a, b = int(offsets[k]), int(offsets[k + 1])
        fs[k] = mpcf.Pcf(np.column_stack((times[a:b], values[a:b])).astype(np.float64))
    seconds = []
    d = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        d = mpcf.pdist(fs, p=p)
        seconds.append(time.perf_counter() - t0)
    dense = d.to_dense() if hasattr(d, "to_dense") else np.asarray(d)
    np.save(out, np.ascontiguousarray(dense, dtype=np.float64))
    print(json.dumps({"version": getattr(mpcf, "__version__", None), "seconds": seconds}))


main()
