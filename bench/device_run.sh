#!/usr/bin/env bash
# Run on the GPU machine, from the repository root (the device tool's `run`):
#   install warpmatch editable, run tests/gpu, run bench/gpu.py; logs go to $OUT.
# Needs the real data copied to .devdata/ (git-ignored, passed with carry=[".devdata"]).
# Environment knobs: PYTEST_ARGS (extra pytest arguments; SKIP_TESTS=1 skips them),
# BENCH_ARGS (arguments of bench/gpu.py; SKIP_BENCH=1 skips it).
set -o pipefail
export PYTHONUNBUFFERED=1
export WARPMATCH_DATA="${WARPMATCH_DATA:-$PWD/.devdata}"
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numba; print('cupy', cupy.__version__, 'numba', numba.__version__)"
rc=0
if [ -z "$SKIP_TESTS" ]; then
  start=$(date +%s)
  python3 -m pytest tests/gpu -q -rs -x $PYTEST_ARGS 2>&1 | tee "$OUT/pytest.log" | tail -40
  rc=$?
  echo "tests/gpu: rc=$rc in $(( $(date +%s) - start )) s"
fi
if [ -z "$SKIP_BENCH" ]; then
  python3 bench/gpu.py $BENCH_ARGS --out "$OUT" 2>&1 | tee "$OUT/bench.log" | tail -80
fi
exit $rc
