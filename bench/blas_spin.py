"""A query × matrix product (the index's dense search) under OpenBLAS's settings: wall and CPU time per
product, and the CPU a burst of products leaves behind while Python runs on.

Usage::

    PYTHONPATH=src python bench/blas_spin.py [--rows 5183] [--products 300]

Each setting runs in its own process (OpenBLAS reads its environment once, when numpy loads it):
numpy's defaults, ``OPENBLAS_THREAD_TIMEOUT=4`` (what the ``ditto`` command sets) and
``OPENBLAS_NUM_THREADS=1``. "then Python" is one product followed by 5 ms of pure-Python work, the shape
of a hybrid query: CPU above 5 ms there is the product plus what OpenBLAS's idle thread spun meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = """
import json, sys, time
import numpy as np
rows, products = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
matrix = rng.standard_normal((rows, 384), dtype=np.float32)
query = rng.standard_normal(384, dtype=np.float32)
def tight():
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(products):
        matrix @ query
    return (time.perf_counter() - wall) / products * 1e6, (time.process_time() - cpu) / products * 1e6
def then_python():
    cpu = time.process_time()
    for _ in range(20):
        matrix @ query
        until = time.perf_counter() + 0.005
        while time.perf_counter() < until:
            pass
    return (time.process_time() - cpu) / 20 * 1e3
tight()
walls, cpus = zip(*(tight() for _ in range(3)))
print(json.dumps({"wall_us": min(walls), "cpu_us": min(cpus), "then_python_ms": min(then_python() for _ in range(3))}))
"""

_SETTINGS = (("numpy's defaults", {}), ("OPENBLAS_THREAD_TIMEOUT=4", {"OPENBLAS_THREAD_TIMEOUT": "4"}),
             ("OPENBLAS_NUM_THREADS=1", {"OPENBLAS_NUM_THREADS": "1"}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5183)
    parser.add_argument("--products", type=int, default=300)
    args = parser.parse_args()
    print(f"| {args.rows} × 384 float32 · vector | wall µs per product | CPU µs per product | "
          "CPU ms, product then 5 ms of Python |\n| --- | ---: | ---: | ---: |")
    for label, extra in _SETTINGS:
        env = {key: value for key, value in os.environ.items() if not key.startswith("OPENBLAS_")}
        env.update(extra)
        done = subprocess.run([sys.executable, "-c", _CHILD, str(args.rows), str(args.products)], env=env,
                              capture_output=True, text=True, check=True)
        row = json.loads(done.stdout)
        print(f"| {label} | {row['wall_us']:.0f} | {row['cpu_us']:.0f} | {row['then_python_ms']:.2f} |")


if __name__ == "__main__":
    main()
