#!/usr/bin/env bash
# Run on the GPU machine, from the repository root (the device tool's `run`):
#   install warpmatch editable, run tests/gpu, bench/gpu.py and bench/stream.py; logs go to $OUT.
# Needs the real data copied to .devdata/ and wheels of hypothesis, sortedcontainers, tqdm and
# click in .whl/ (both git-ignored, passed with carry=[".devdata", ".whl"]).
# Environment knobs (each stage also has a wall-clock limit, so one slow stage cannot eat the
# others' time and the logs under $OUT always come back):
#   PYTEST_ARGS, TEST_LIMIT (s)    extra pytest arguments; SKIP_TESTS=1 skips the tests
#   TEST_PATHS                     what pytest collects (tests/gpu)
#   PYTEST_WORKERS=N               run tests/gpu in N processes (pytest-xdist and execnet
#                                  wheels in .whl/; ignored without them)
#   TEST_TIMEOUT (s)               one test's limit (240) when a pytest-timeout wheel is in
#                                  .whl/: a hung test fails with its traceback instead of
#                                  taking the stage's time
# Every finished test is named in $OUT/pytest.log as it ends (pytest -v), and the FAILED and
# ERROR lines are printed even when TEST_LIMIT cuts the run. The whole tests/gpu does not fit
# one 600 s call on one GPU with 16 cores (on an H200, 8 workers: 95 of 170 tests in 420 s);
# run it in two calls, e.g. TEST_PATHS="tests/gpu/test_gpu_distributed.py
# tests/gpu/test_gpu_engine.py tests/gpu/test_gpu_generic.py tests/gpu/test_gpu_interrupt.py
# tests/gpu/test_gpu_partition.py" (65 tests, 123 s), then the two test_stream_* files, whose
# tests take minutes each (test_continuous_replicas_on_gpu_equal_one_process alone ~300 s).
#   BENCH_ARGS, BENCH_LIMIT (s)    arguments of bench/gpu.py; SKIP_BENCH=1 skips it
#   STREAM_ARGS, STREAM_LIMIT (s)  arguments of bench/stream.py; SKIP_STREAM=1 skips it
#   DIST_ARGS, DIST_LIMIT (s)      arguments of bench/distributed.py, which runs only when
#                                  DIST_ARGS is set (dask, distributed, dask-cuda and their
#                                  missing dependencies as wheels in .whl/)
#   CSM_ARGS, CSM_LIMIT (s)        arguments of bench/csm_peers.py (against RapidFlow), which
#                                  runs only when CSM_ARGS is set (e.g. --rapidflow
#                                  .peers/rapidflow with the sources carried there)
#   PART_ARGS, PART_LIMIT (s)      arguments of bench/partition.py (partitioned vs zero-copy
#                                  vs unified memory), which runs only when PART_ARGS is set
#                                  (a pymetis wheel in .whl/ for METIS parts)
#   LAT_ARGS, LAT_LIMIT (s)        arguments of bench/latency.py (latency at Poisson arrival
#                                  rates, max-latency batches vs fixed ones), which runs only
#                                  when LAT_ARGS is set
# Everything written under $OUT ends up in $OUT/logs.tgz (the device tool returns at most 8
# files) next to summary.txt; KEEP_FILES=1 leaves the files as they are.
set -o pipefail
export PYTHONUNBUFFERED=1
export WARPMATCH_DATA="${WARPMATCH_DATA:-$PWD/.devdata}"
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
# packages the device image lacks (hypothesis for tests/gpu), carried as wheels in .whl/
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl >"$OUT/wheels.log" 2>&1 || { tail -5 "$OUT/wheels.log"; exit 1; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, numba, os; print('cupy', cupy.__version__, 'numba', numba.__version__, 'cores', os.cpu_count())"
rc=0
summary=()
if [ -z "$SKIP_TESTS" ]; then
  start=$(date +%s)
  workers=""
  if [ -n "$PYTEST_WORKERS" ] && python3 -c "import xdist" 2>/dev/null; then
    workers="-n $PYTEST_WORKERS"
  fi
  per_test=""
  if python3 -c "import pytest_timeout" 2>/dev/null; then
    per_test="--timeout ${TEST_TIMEOUT:-240}"
  fi
  timeout "${TEST_LIMIT:-400}" python3 -m pytest ${TEST_PATHS:-tests/gpu} -v -rfEs --durations=15 \
    $workers $per_test $PYTEST_ARGS >"$OUT/pytest.log" 2>&1
  r=$?; [ $r -ne 0 ] && rc=$r
  # the names of what failed, even when the time limit cut the run before pytest's summary
  bad='(FAILED|ERROR) tests/|^tests/\S+ (FAILED|ERROR)'     # with and without xdist
  grep -E "$bad" "$OUT/pytest.log" | sed 's/^\[gw[0-9]*\] \[ *[0-9]*%\] //' | sort -u | head -40
  sed -n '/= slowest [0-9]* durations =/,$p' "$OUT/pytest.log" | tail -30
  passed=$(grep -cE 'PASSED tests/|^tests/\S+ PASSED' "$OUT/pytest.log")
  failed=$(grep -E "$bad" "$OUT/pytest.log" | grep -v '^FAILED\|^ERROR' | wc -l)
  last=$(tail -1 "$OUT/pytest.log")
  summary+=("tests ${workers}: rc=$r in $(( $(date +%s) - start )) s: $passed passed, $failed failed or errors so far (${last:0:100})")
fi
if [ -z "$SKIP_BENCH" ]; then
  start=$(date +%s)
  timeout "${BENCH_LIMIT:-400}" python3 bench/gpu.py $BENCH_ARGS --out "$OUT" 2>&1 \
    | tee "$OUT/bench.log" | grep -v '^{' | tail -70
  r=$?; [ $r -ne 0 ] && rc=$r
  summary+=("bench/gpu.py $BENCH_ARGS: rc=$r in $(( $(date +%s) - start )) s")
fi
if [ -z "$SKIP_STREAM" ]; then
  start=$(date +%s)
  timeout "${STREAM_LIMIT:-400}" python3 bench/stream.py $STREAM_ARGS --out "$OUT" \
    >"$OUT/stream.log" 2>"$OUT/stream.err"
  r=$?; [ $r -ne 0 ] && rc=$r
  tail -15 "$OUT/stream.err"; cat "$OUT/stream.log"
  summary+=("bench/stream.py $STREAM_ARGS: rc=$r in $(( $(date +%s) - start )) s")
fi
# bench_stage NAME SCRIPT ARGS LIMIT SHOW...: run bench/SCRIPT ARGS --json $OUT/NAME.json within
# LIMIT seconds (stdout to NAME.log, stderr to NAME.err), then SHOW its lines here
bench_stage() {
  local name=$1 script=$2 args=$3 limit=$4 start r
  shift 4
  start=$(date +%s)
  timeout "$limit" python3 "bench/$script" $args --json "$OUT/$name.json" \
    >"$OUT/$name.log" 2>"$OUT/$name.err"
  r=$?; [ $r -ne 0 ] && rc=$r
  "$@"
  summary+=("bench/$script $args: rc=$r in $(( $(date +%s) - start )) s")
}
show_dist() {
  grep '^#' "$OUT/dist.err" | tail -60; tail -5 "$OUT/dist.err" | grep -v '^#'; cat "$OUT/dist.log"
}
show_csm() {
  sed -n '/^| workload/,$p' "$OUT/csm.log"; tail -3 "$OUT/csm.log"; tail -3 "$OUT/csm.err"
}
show_part() {
  grep '^#' "$OUT/part.err" | tail -40; tail -8 "$OUT/part.err" | grep -v '^#'; cat "$OUT/part.log"
}
show_lat() {
  sed -n '/^latency mean/,$p' "$OUT/lat.log"; tail -5 "$OUT/lat.err"
}
[ -n "$DIST_ARGS" ] && bench_stage dist distributed.py "$DIST_ARGS" "${DIST_LIMIT:-400}" show_dist
[ -n "$CSM_ARGS" ] && bench_stage csm csm_peers.py "$CSM_ARGS" "${CSM_LIMIT:-400}" show_csm
[ -n "$PART_ARGS" ] && bench_stage part partition.py "$PART_ARGS" "${PART_LIMIT:-400}" show_part
[ -n "$LAT_ARGS" ] && bench_stage lat latency.py "$LAT_ARGS" "${LAT_LIMIT:-400}" show_lat
echo; printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# the device tool brings back at most 8 files from $OUT: pack the logs, JSON and profiles
# into one archive (unpack with: tar xzf logs.tgz)
if [ -z "$KEEP_FILES" ]; then
  (cd "$OUT" && tar czf /tmp/wm_logs.tgz --exclude=summary.txt . \
     && find . -mindepth 1 ! -name summary.txt -delete && mv /tmp/wm_logs.tgz logs.tgz)
fi
exit $rc
