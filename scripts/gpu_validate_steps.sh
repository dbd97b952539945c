# shellcheck shell=bash disable=SC2154  # the variables are the caller's (listed below)
# The four steps of scripts/gpu_validate (sourced by it; not a command).
# Reads: mode, out, build, arch, jobs, bench_target, size, test_label, budget,
# tests_regex, prebuilt, pack, bench_extra, root, state.  Each step prints its plan and its
# expected time before it starts, logs to $out/logs/<step>.log and records its
# outcome in $out/steps/<step>.tsv (step, outcome, seconds, note), which
# SUMMARY.md is written from.

say() { echo "gpu_validate: $*"; }

# shellcheck source=scripts/gpu_validate_pack.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu_validate_pack.sh"

# record STEP OUTCOME SECONDS NOTE   (outcome: passed, failed, partial, skipped, not run)
record() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\n'/ }" >"$out/steps/$1.tsv"
  say "$1: $2 after $3 s${4:+ ($4)}"
}

# expected STEP: what the step is expected to take.  On a GPU these are
# estimates (goals) until measured there; on the emulator, measured on the
# project's 2-core machine.
expected() {
  if [[ "$mode" == gpu ]]; then
    case "$1" in
      build) echo "estimate, not yet measured on a GPU: 5-8 min cold on 16 cores, under 1 min with a warm ccache" ;;
      test) echo "measured: 176 s for label gpu (320 tests) on an H100, 2026-11-27; goal under 5 min" ;;
      bench) echo "at most the ${budget} s budget plus up to 30 s to stop and write (budget chosen to stay under 10 min)" ;;
      report) echo "estimate: under 30 s" ;;
    esac
  else
    case "$1" in
      build) echo "measured on the 2-core development machine: 466 s for a first build (ccache off), 11 s when up to date" ;;
      test) echo "measured there: 2-4 s for label unit (209 tests)" ;;
      bench) echo "measured there: 146-169 s for --size small (113 instances), never past the ${budget} s budget" ;;
      report) echo "measured there: under 1 s" ;;
    esac
  fi
}

# logged LOG COMMAND...: runs it into LOG; on failure shows the log's tail.
logged() {
  local log="$1"; shift
  echo "+ $*" >>"$log"
  "$@" >>"$log" 2>&1 && return 0
  local rc=$?
  say "'$1' exited $rc; last lines of $log:"
  tail -n 15 "$log" | sed 's/^/    /'
  return "$rc"
}

step_build() {
  local start=$SECONDS log="$out/logs/build.log" preset what="emulator backend"
  : >"$log"
  if [[ "$mode" == gpu ]]; then
    preset=default what="CUDA architecture $arch"
    say "build: bench_roofline, roofline and the tests of label gpu, for $arch, into $build ($jobs jobs)"
  else
    preset=emu
    say "build: bench_roofline_emu, roofline and the tests of label unit (emulator backend), into $build ($jobs jobs)"
  fi
  if [[ -n "$pack" ]]; then
    say "build: unpacking $pack into $build"
    local unpacked
    if unpacked="$(unpack_pack "$pack" "$log")"; then
      # unpack_pack ran in a subshell: the library path it kept in state.env
      # is exported here for the steps after this one in the same run.
      export LD_LIBRARY_PATH="$(state_get ld_library_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      record build passed $((SECONDS - start)) "$unpacked"
      return 0
    fi
    record build failed $((SECONDS - start)) "$unpacked"
    return 1
  fi
  say "build: expected: $(expected build)"
  # Built here, not unpacked: a pack's library path left in this folder no longer applies.
  rm -f "$build/pack.ld_library_path"
  if ((!prebuilt)) && [[ "${RL_GPU_VALIDATE_SKIP_SETUP:-0}" != 1 ]]; then
    timeout 300 "$root/scripts/setup" >"$out/logs/setup.log" 2>&1 ||
      say "build: scripts/setup failed (see logs/setup.log); going on with what is installed"
  fi
  local -a configure=(cmake --preset "$preset" -B "$build")
  # Warnings stay warnings here: a newer toolkit's new warning must not cost the visit.
  [[ "$mode" == gpu ]] && configure+=(-DCMAKE_CUDA_ARCHITECTURES="$arch" -DRL_WARNINGS_AS_ERRORS=OFF)
  [[ "$mode" == emulator ]] && configure+=(-DRL_BUILD_TESTS=ON)  # preset emu has none
  if [[ ! -f "$build/CMakeCache.txt" ]] ||
     { [[ "$mode" == gpu ]] && ! grep -qx "CMAKE_CUDA_ARCHITECTURES:[A-Z]*=$arch" "$build/CMakeCache.txt"; }; then
    ((prebuilt)) && { record build failed $((SECONDS - start)) "--prebuilt: $build is not a configured build folder for $arch"; return 1; }
    logged "$log" "${configure[@]}" ||
      { record build failed $((SECONDS - start)) "configure failed (logs/build.log)"; return 1; }
  fi
  if ((prebuilt)); then
    local missing=() name
    for name in "$bench_target" roofline; do [[ -x "$build/bench/$name" ]] || missing+=("$name"); done
    if ((${#missing[@]})); then
      record build failed $((SECONDS - start)) "--prebuilt: not built in $build: ${missing[*]}"
      return 1
    fi
    record build passed $((SECONDS - start)) "--prebuilt: $bench_target and roofline found in $build, nothing rebuilt (test binaries not checked)"
    return 0
  fi
  local -a targets=("$bench_target" roofline)
  logged "$log" cmake --build "$build" -j "$jobs" --target "${targets[@]}" ||
    { record build failed $((SECONDS - start)) "build failed (logs/build.log)"; return 1; }
  # rl_tests_<label> (cmake/RlTesting.cmake): what the tests of one label run,
  # nothing else; asked for after that first build, which regenerated the build files.
  local listed  # not piped into grep -q: with pipefail its early exit would fail the pipe
  listed="$(cmake --build "$build" --target help 2>/dev/null)"
  if grep -qw "rl_tests_$test_label" <<<"$listed"; then
    targets+=("rl_tests_$test_label")
    logged "$log" cmake --build "$build" -j "$jobs" --target "rl_tests_$test_label" ||
      { record build failed $((SECONDS - start)) "build of the $test_label tests failed (logs/build.log)"; return 1; }
  else
    echo "no target rl_tests_$test_label in $build: no test of label $test_label to build" >>"$log"
  fi
  record build passed $((SECONDS - start)) "${targets[*]} ($what) in $build"
}

step_test() {
  local start=$SECONDS log="$out/logs/test.log" junit="$out/junit/ctest-$test_label.xml"
  : >"$log"
  rm -f "$junit"
  if [[ "$mode" == emulator ]]; then
    echo "ctest -L gpu: skipped: --emulator run, no GPU (label gpu holds the hardware-only tests)" \
      >"$out/junit/ctest-gpu.skipped.txt"
    say "test: ctest -L gpu skipped (no GPU); runs label unit instead (the host-side checks the" \
        "results, roofline model and report rest on; emu/e2e are CI's, minutes long)"
  else
    say "test: ctest -L gpu, one test at a time (several on one GPU would disturb the rate checks)"
  fi
  say "test: expected: $(expected test)"
  local -a run=(ctest --test-dir "$build" -L "^$test_label\$" --timeout 600 --output-on-failure
                --output-junit "$junit")
  [[ "$mode" == gpu ]] && run+=(-j 1) || run+=(-j "$jobs")
  [[ -n "$tests_regex" ]] && run+=(-R "$tests_regex")
  # A short visit: every test still running at the budget's end is stopped (a timeout).
  [[ -n "$test_budget" ]] && run+=(--stop-time "$(date -d "+$test_budget seconds" +%H:%M:%S)")
  local rc=0
  logged "$log" "${run[@]}" || rc=$?
  local counts
  counts="$(grep -E 'tests passed(, [0-9]+ tests? failed)? out of' "$log" | tail -n1)"
  if grep -q 'No tests were found' "$log"; then
    record test failed $((SECONDS - start)) "no test of label $test_label in $build (run --step build)"
    return 1
  fi
  if grep -q 'The stop time has been passed' "$log"; then
    record test failed $((SECONDS - start)) \
      "ctest -L $test_label stopped at --test-budget $test_budget s (the rest not run): ${counts:-exit $rc}"
    return 1
  fi
  if ((rc != 0)); then
    record test failed $((SECONDS - start)) "ctest -L $test_label: ${counts:-exit $rc}"
    return 1
  fi
  record test passed $((SECONDS - start)) "ctest -L $test_label: $counts"
}

# The harness's sampling flags sized to the budget: half of it for sampling
# (the rest validates, allocates and writes), shared by the instances --list
# counts, from 0.1 s to the default 2 s a kernel.
kernel_timeout() {
  local binary="$1" count
  # Kept for SUMMARY.md: what a run cut short left out is this list less results.json.
  "$binary" --list --size "$size" "${bench_extra[@]}" >"$out/logs/bench-list.txt" 2>&1
  count="$(tail -n +2 "$out/logs/bench-list.txt" | wc -l)"
  python3 -c 'import sys; b, n = float(sys.argv[1]), max(int(sys.argv[2]), 1)
print("%.2f %d" % (min(2.0, max(0.1, 0.5 * b / n)), n))' "$budget" "$count"
}

# 0 when results.json says the run completed (run.complete), 1 otherwise.
bench_complete() {
  python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("run", {}).get("complete") else 1)' "$1" 2>/dev/null
}

step_bench() {
  local start=$SECONDS log="$out/logs/bench.log" binary="$build/bench/$bench_target"
  : >"$log"
  if [[ ! -x "$binary" ]]; then
    record bench failed 0 "$binary not built (run --step build)"
    return 1
  fi
  local per_kernel count
  read -r per_kernel count <<<"$(kernel_timeout "$binary")"
  # --budget: the harness starts no kernel past it and leaves what it did not
  # reach in results.json (run.left_out); the timeout's SIGINT, a little later,
  # is only the safety net for a kernel that overruns.
  local harness_budget=$((budget > 60 ? budget - 40 : budget * 2 / 3))
  local -a run=("$binary" --size "$size" --out "$out/bench" --timeout "$per_kernel" --max-noise 1
                --min-samples 10 --budget "$harness_budget" "${bench_extra[@]}")
  say "bench: ${run[*]#"$build/bench/"}"
  say "bench: $count instances, at most $per_kernel s of sampling each, stopped (SIGINT, results" \
      "kept) at the ${budget} s budget"
  say "bench: expected: $(expected bench)"
  rm -rf "$out/bench"
  local rc=0
  # --foreground: a Ctrl-C at the terminal reaches the benchmark too (it keeps what finished).
  logged "$log" timeout --signal=INT --foreground --kill-after=30 "$budget" "${run[@]}" || rc=$?
  case "$rc" in
    0)
      if bench_complete "$out/bench/results.json"; then
        record bench passed $((SECONDS - start)) "every selected kernel validated and timed"
      else
        record bench partial $((SECONDS - start)) "the harness's ${harness_budget} s budget was spent; what finished is kept (SUMMARY lists what was left out)"
        return 1
      fi ;;
    124) record bench partial $((SECONDS - start)) "stopped by the ${budget} s budget; what finished is kept (SUMMARY lists what was left out)"; return 1 ;;
    137) record bench failed $((SECONDS - start)) "killed 30 s after the ${budget} s budget's SIGINT"; return 1 ;;
    1) record bench failed $((SECONDS - start)) "kernels failed validation or errored (SUMMARY lists them)"; return 1 ;;
    130 | 143) record bench failed $((SECONDS - start)) "interrupted (exit $rc); what finished is kept"; return 1 ;;
    *) record bench failed $((SECONDS - start)) "exit $rc (logs/bench.log)"; return 1 ;;
  esac
}

# Toolkit, driver and library versions: what is knowable here, and why not the rest.
write_versions() {
  local cuda_home="${CUDA_HOME:-/usr/local/cuda}" h
  echo "# toolkit, driver and library versions ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  if command -v nvcc >/dev/null 2>&1; then
    echo "nvcc: $(nvcc --version | grep -E 'release' | sed 's/^.*release/release/')"
  else
    echo "nvcc: not found"
  fi
  if [[ "$mode" == gpu ]]; then
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -n1)"
    echo "nvidia-smi: $(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -n1)"
  else
    echo "driver: unknown: --emulator run, no GPU driver to ask"
  fi
  h="$cuda_home/include/cublas_api.h"
  if [[ -f "$h" ]]; then
    echo "cuBLAS headers: $(awk '/#define CUBLAS_VER_(MAJOR|MINOR|PATCH) /{printf "%s%s", s, $3; s="."}' "$h") ($h)"
  else
    echo "cuBLAS headers: not found under $cuda_home/include"
  fi
  for h in "$cuda_home/include/cudnn_version.h" /usr/include/cudnn_version.h \
           /usr/local/include/cudnn_version.h ""; do
    [[ -n "$h" && -f "$h" ]] && break
  done
  if [[ -n "$h" ]]; then
    echo "cuDNN headers: $(awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{printf "%s%s", s, $3; s="."}' "$h") ($h)"
  else
    echo "cuDNN headers: not found"
  fi
  [[ "$mode" == emulator ]] &&
    echo "cuBLAS/cuDNN at run time: not loaded: the emulator backend links neither (on a GPU, results.json context.library_versions holds what the benchmark loaded)"
  echo "benchmark binary: $("$build/bench/$bench_target" --version 2>&1 | tr -s ' \n' ' ')"
}

step_report() {
  local start=$SECONDS log="$out/logs/report.log" cli="$build/bench/roofline"
  local results="$out/bench/results.json" ok=1 note=""
  : >"$log"
  say "report: roofline.svg and report.html from results.json (roofline CLI), versions, SUMMARY.md, bundle.tar.gz"
  say "report: expected: $(expected report)"
  if [[ ! -f "$results" ]]; then
    ok=0 note="no bench/results.json (run --step bench)"
  elif [[ ! -x "$cli" ]]; then
    ok=0 note="$cli not built (run --step build)"
  else
    logged "$log" "$cli" plot "$results" -o "$out/bench/roofline.svg" || { ok=0 note="roofline plot failed"; }
    logged "$log" "$cli" report "$results" -o "$out/bench/report.html" || { ok=0 note="roofline report failed"; }
  fi
  write_versions >"$out/system/versions.txt" 2>&1
  local outcome=passed
  ((ok)) || outcome=failed
  record report "$outcome" $((SECONDS - start)) "${note:-chart and report rendered, bundle written}"
  python3 "$root/scripts/gpu_validate_summary.py" "$out" >"$out/SUMMARY.md" ||
    { ok=0; record report failed $((SECONDS - start)) "SUMMARY.md could not be written"; }
  local bundle="$out/bundle.tar.gz" size tmp
  rm -f "$bundle"
  # Written outside the folder it packs (tar refuses a folder that changes as it reads it).
  tmp="$(mktemp "${TMPDIR:-/tmp}/gpu_validate-bundle.XXXXXX")"
  tar -czf "$tmp" -C "$(dirname "$out")" "$(basename "$out")" 2>>"$log" && chmod 644 "$tmp" &&
    mv "$tmp" "$bundle"
  rm -f "$tmp"
  size="$(stat -c %s "$bundle" 2>/dev/null || echo 0)"
  if ((size == 0 || size >= 20 * 1024 * 1024)); then
    ok=0
    record report failed $((SECONDS - start)) "bundle.tar.gz is $size bytes (must be 1 to 20 MB)"
    python3 "$root/scripts/gpu_validate_summary.py" "$out" >"$out/SUMMARY.md"
  fi
  echo
  cat "$out/SUMMARY.md"
  echo
  say "bring back: $bundle ($((size / 1024)) KiB)"
  ((ok)) || return 1
  # The verdict of the visit: every recorded step passed.
  ! grep -qvP '^[^\t]*\tpassed\t' "$out"/steps/*.tsv
}
