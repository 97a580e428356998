#!/usr/bin/env bash
# GPU verification on a machine without network: test suite on cuda:0, graph capture of a full RL step,
# and the benchmark table (ours vs newton), all results written into OUTDIR.
#
# Usage (from anywhere; it changes to the repository root):
#   bash benchmarks/gpu_check.sh OUTDIR            # the full check (about 8 minutes on an H200)
#   bash benchmarks/gpu_check.sh OUTDIR quick      # tiny sizes, a few test files: checks the script itself
#   DEVICE=cpu bash benchmarks/gpu_check.sh OUTDIR quick   # the same on a CPU machine, before spending GPU time
#
# Warp: used as installed if `import warp` works; otherwise installed from the offline kit (see
# /work/shared/tools/gpu/README.md) found in $GPU_KIT, .gpu/, ../shared/tools/gpu/ or shared/tools/gpu/
# into $SITE (default /tmp/site). Pure-Python wheels (newton==1.8.0 for the side-by-side columns,
# hypothesis for the property tests) are unzipped from $GPU_WHEELS, <kit>/wheels or .gpu/wheels when present.
# Without hypothesis a stand-in module lets the suite import; the property-based tests are then skipped.
#
# Writes into OUTDIR: devices.txt, install.txt, tests.txt (+ tests_junit.xml), rl_capture.txt/.json,
# bench.txt with results.json/results.md, vs_mjwarp.txt (where mujoco and mujoco_warp import), bench_rl.txt
# and rl_train.txt + rl_train/ (where torch, gymnasium and rsl_rl import), timing.txt
# (each phase's exit code and seconds), summary.txt.
# Each phase has its own timeout (seconds): TESTS_TIMEOUT, RL_TIMEOUT, BENCH_TIMEOUT.
set -u
OUT=${1:?usage: bash benchmarks/gpu_check.sh OUTDIR [quick]}
MODE=${2:-full}
DEVICE=${DEVICE:-cuda:0}
PY=${PYTHON:-python3}
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
: > "$OUT/timing.txt"
exec 3>&1  # the console, for phase logs while a phase's own output goes to its file

phase() {  # phase NAME TIMEOUT CMD... : run with a timeout, log exit code and seconds
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@"
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start )) s" | tee -a "$OUT/timing.txt" >&3
  return $rc
}

# --- Warp (and optional wheels) ---------------------------------------------------------------
if ! "$PY" -c "import warp" > /dev/null 2>&1; then
  KIT=""
  for d in ${GPU_KIT:-} .gpu ../shared/tools/gpu shared/tools/gpu; do
    if [ -f "$d/part2/install_warp.py" ]; then KIT=$d; break; fi
  done
  if [ -z "$KIT" ]; then
    echo "warp is not importable and no offline kit was found (.gpu/, ../shared/tools/gpu/)" | tee "$OUT/summary.txt"
    exit 2
  fi
  SITE=${SITE:-/tmp/site}
  ARGS=(--site "$SITE")
  [ -f "$KIT/part1/warp.so.xz.part1" ] && ARGS+=(--part1 "$KIT/part1/warp.so.xz.part1")
  for w in ${GPU_WHEELS:-} "$KIT/wheels" .gpu/wheels; do
    if [ -d "$w" ]; then ARGS+=(--wheels "$w"); break; fi
  done
  phase install 300 "$PY" "$KIT/part2/install_warp.py" "${ARGS[@]}" > "$OUT/install.txt" 2>&1
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

# conftest.py imports hypothesis; where it is missing a stand-in skips the @given tests.
if ! "$PY" -c "import hypothesis" > /dev/null 2>&1; then
  SHIM="$OUT/.hypothesis_shim"
  mkdir -p "$SHIM/hypothesis"
  cat > "$SHIM/hypothesis/__init__.py" << 'EOF'
"""Stand-in for hypothesis on a machine without it: @given tests are skipped, everything else imports."""
import pytest


class _Any:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Any()

    def __getattr__(self, name):
        return _Any()

    def __iter__(self):
        return iter(())


def given(*args, **kwargs):
    return pytest.mark.skip(reason="hypothesis is not installed on this machine")


def example(*args, **kwargs):
    return lambda f: f


class settings:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, f):
        return f

    @staticmethod
    def register_profile(*args, **kwargs):
        pass

    @staticmethod
    def load_profile(*args, **kwargs):
        pass


HealthCheck = _Any()
Phase = _Any()
assume = note = event = lambda *a, **k: None
EOF
  cat > "$SHIM/hypothesis/strategies.py" << 'EOF'
"""Stand-in strategies: any call returns an inert object (the tests using them are skipped)."""
from . import _Any


def composite(f):
    return _Any()


def __getattr__(name):
    return _Any()
EOF
  export PYTHONPATH="$PYTHONPATH:$SHIM"
  echo "hypothesis missing: stand-in installed, property tests skipped" | tee -a "$OUT/timing.txt"
fi

"$PY" - > "$OUT/devices.txt" 2>&1 << 'EOF'
import platform, warp as wp
wp.init()
print("python", platform.python_version(), "warp", wp.__version__)
for d in wp.get_devices():
    print(d, getattr(d, "name", ""), "sm", getattr(d, "arch", ""), "mem", getattr(d, "total_memory", ""))
for mod in ("numpy", "pytest", "hypothesis", "mujoco", "pxr", "torch", "newton"):
    try:
        m = __import__(mod)
        print(mod, getattr(m, "__version__", "?"))
    except Exception as e:
        print(mod, "missing:", type(e).__name__)
EOF
cat "$OUT/devices.txt"

# --- 1. test suite on the device ---------------------------------------------------------------
if [ "$MODE" = "quick" ]; then
  TESTS="tests/transmission/test_transmission.py tests/cables/test_winch.py"
  WORLDS=1,8; STEPS=12; RL_WORLDS=8; RL_STEPS=30; PROFILE_WORLDS=8; COLD=(--no-cold)
else
  TESTS="tests"
  WORLDS=1,1024,16384,65536; STEPS=300; RL_WORLDS=4096; RL_STEPS=40; PROFILE_WORLDS=16384; COLD=()
fi
NEWTON_TENDON_TEST_DEVICES="$DEVICE" phase tests "${TESTS_TIMEOUT:-1500}" "$PY" -m pytest -q -p no:cacheprovider \
  -rs --junitxml="$OUT/tests_junit.xml" $TESTS > "$OUT/tests.txt" 2>&1
TESTS_RC=$?
tail -n 5 "$OUT/tests.txt"

# --- 2. graph capture of a full RL step ---------------------------------------------------------
phase rl_capture "${RL_TIMEOUT:-300}" "$PY" benchmarks/rl_capture_check.py --device "$DEVICE" --worlds "$RL_WORLDS" \
  --rl-steps "$RL_STEPS" --out "$OUT" > "$OUT/rl_capture.txt" 2>&1
RL_RC=$?
cat "$OUT/rl_capture.txt"

# --- 3. benchmarks (ours vs newton, graph-captured) ---------------------------------------------
phase bench "${BENCH_TIMEOUT:-1800}" "$PY" benchmarks/run_all.py --device "$DEVICE" --worlds "$WORLDS" \
  --steps "$STEPS" --profile-worlds "$PROFILE_WORLDS" "${COLD[@]}" --out "$OUT" > "$OUT/bench.txt" 2>&1
BENCH_RC=$?
tail -n 40 "$OUT/bench.txt"

# --- 4. against MuJoCo Warp on the tendon arm (issue 29), where mujoco and mujoco_warp import -------
# (pure-Python mujoco_warp can come in as a wheel like newton's; mujoco itself is a binary wheel).
MJW_RC=skipped
if "$PY" -c "import mujoco, mujoco_warp" > /dev/null 2>&1; then
  if [ "$MODE" = "quick" ]; then MJW_WORLDS=2; else MJW_WORLDS=1024,16384,65536; fi
  phase vs_mjwarp "${MJW_TIMEOUT:-600}" "$PY" benchmarks/vs_mjwarp.py --device "$DEVICE" --worlds "$MJW_WORLDS" \
    --steps "$STEPS" > "$OUT/vs_mjwarp.txt" 2>&1
  MJW_RC=$?
  tail -n 12 "$OUT/vs_mjwarp.txt"
else
  echo "vs_mjwarp skipped: mujoco or mujoco_warp is not importable" | tee "$OUT/vs_mjwarp.txt"
fi

# --- 5. RL layer cost and a training run (issue 28), where torch, gymnasium and rsl_rl import ---------
RLT_RC=skipped
if "$PY" -c "import torch, gymnasium, rsl_rl, tensordict" > /dev/null 2>&1; then
  if [ "$MODE" = "quick" ]; then
    RLB=(--worlds 8 --steps 4); RLT=(--worlds 16 --iterations 2)
  else
    RLB=(--worlds 1024,16384,65536 --steps 60); RLT=(--worlds 4096 --iterations 100)
  fi
  phase bench_rl "${RLB_TIMEOUT:-600}" "$PY" benchmarks/bench_rl.py --device "$DEVICE" "${RLB[@]}" \
    > "$OUT/bench_rl.txt" 2>&1
  tail -n 10 "$OUT/bench_rl.txt"
  phase rl_train "${RLT_TIMEOUT:-600}" "$PY" -m newton_tendon.examples.rl_train --task finger --device "$DEVICE" \
    "${RLT[@]}" --out "$OUT/rl_train" > "$OUT/rl_train.txt" 2>&1
  RLT_RC=$?
  grep -E "iterations|random policy" "$OUT/rl_train.txt"
else
  echo "bench_rl and rl_train skipped: torch, gymnasium or rsl_rl is not importable" | tee "$OUT/rl_train.txt"
fi

{
  echo "device $DEVICE mode $MODE"
  echo "tests rc=$TESTS_RC ($(tail -n 1 "$OUT/tests.txt"))"
  echo "rl_capture rc=$RL_RC"
  echo "bench rc=$BENCH_RC"
  echo "vs_mjwarp rc=$MJW_RC (not part of the exit status: an optional peer)"
  echo "rl_train rc=$RLT_RC (not part of the exit status: needs the rl extra)"
} | tee "$OUT/summary.txt"
[ $TESTS_RC -eq 0 ] && [ $RL_RC -eq 0 ] && [ $BENCH_RC -eq 0 ]
