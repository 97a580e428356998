#!/usr/bin/env bash
# One-shot GPU check (device machine): CUDA tests of the solvers, graph capture, benchmarks.
# Usage (from the repo root, Warp importable): OUT=/some/dir bash tools/gpu_check.sh [quick]
# Writes tests.txt, bench_cables.txt, bench_rigid.txt, bench_transmission.txt under $OUT. "quick" uses tiny sizes so the
# script itself can be checked on a CPU machine (DEVICE=cpu).
set -u
OUT=${OUT:-gpu_out}
DEVICE=${DEVICE:-cuda:0}
mkdir -p "$OUT"
if [ "${1:-}" = "quick" ]; then
  CABLE_WORLDS=1,8; RIGID_WORLDS=1,8; STEPS=20; TESTS="tests/test_transmission.py"
else
  CABLE_WORLDS=1,1024,16384,65536; RIGID_WORLDS=1,1024,16384,65536; STEPS=200
  TESTS="tests/test_rigid.py tests/test_vbd.py tests/test_cables.py tests/test_transmission.py tests/test_transmission_examples.py"
fi
python3 -c "import warp as wp; wp.init(); print(wp.get_devices())" > "$OUT/devices.txt" 2>&1
start=$(date +%s)
timeout 150 python3 benchmarks/bench_cables.py --device "$DEVICE" --worlds "$CABLE_WORLDS" --solver both \
  --no-newton --steps "$STEPS" > "$OUT/bench_cables.txt" 2>&1
echo "bench_cables rc=$? $(( $(date +%s) - start )) s" >> "$OUT/timing.txt"
start=$(date +%s)
timeout 80 python3 benchmarks/bench_rigid.py --device "$DEVICE" --worlds "$RIGID_WORLDS" --solver both \
  --steps "$STEPS" > "$OUT/bench_rigid.txt" 2>&1
echo "bench_rigid rc=$? $(( $(date +%s) - start )) s" >> "$OUT/timing.txt"
start=$(date +%s)
timeout 80 python3 benchmarks/bench_transmission.py --device "$DEVICE" --worlds "$RIGID_WORLDS" --solver both \
  --steps "$STEPS" > "$OUT/bench_transmission.txt" 2>&1
echo "bench_transmission rc=$? $(( $(date +%s) - start )) s" >> "$OUT/timing.txt"
start=$(date +%s)
NEWTON_TENDON_TEST_DEVICES="$DEVICE" timeout 200 python3 -m pytest -q -p no:cacheprovider $TESTS \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$? $(( $(date +%s) - start )) s" >> "$OUT/timing.txt"
cat "$OUT/timing.txt"
