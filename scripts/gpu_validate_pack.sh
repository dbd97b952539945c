# shellcheck shell=bash disable=SC2154  # the variables are the caller's (listed below)
# scripts/gpu_validate --pack FILE: the build step from a scripts/gpu_pack file
# (sourced by gpu_validate_steps.sh; not a command).  Reads: root, build, arch,
# state.  The pack was built on another machine, so its ctest files name that
# machine's folders: they are rewritten to this checkout's, and the library
# path its binaries need is found and kept in state.env for the later steps.

# unpack_pack FILE LOG: the pack's build folder into $build; prints one line
# saying what it did (or, returning 1, why it could not).
unpack_pack() {
  local pack="$1" log="$2" tmp
  tmp="$(mktemp -d)"
  if ! tar -xJf "$pack" -C "$tmp" >>"$log" 2>&1; then
    rm -rf "$tmp"; echo "cannot unpack '$pack' (tar/xz; see logs/build.log)"; return 1
  fi
  local env="$tmp/gpu-pack/pack.env"
  if [[ ! -f "$env" || ! -d "$tmp/gpu-pack/build" ]]; then
    rm -rf "$tmp"; echo "'$pack' is not a scripts/gpu_pack file (no gpu-pack/pack.env)"; return 1
  fi
  local p_root p_build p_arch p_commit here
  p_root="$(sed -n 's/^source_root=//p' "$env")" p_build="$(sed -n 's/^build_dir=//p' "$env")"
  p_arch="$(sed -n 's/^arch=//p' "$env")" p_commit="$(sed -n 's/^commit=//p' "$env")"
  here="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [[ "$p_arch" != "$arch" ]]; then
    rm -rf "$tmp"; echo "the pack was built for $p_arch; this GPU needs $arch (scripts/gpu_pack --arch $arch)"
    return 1
  fi
  rm -rf "$build" && mkdir -p "$(dirname "$build")" && mv "$tmp/gpu-pack/build" "$build" &&
    mv "$tmp/gpu-pack/lib" "$build/pack-lib" && cp "$env" "$build/pack.env"
  rm -rf "$tmp"
  # The packing machine's folders -> this one's, in every ctest file (the build
  # folder first: it holds the source root).
  find "$build" -name '*.cmake' -print0 | xargs -0 -r python3 -c '
import sys
old_build, new_build, old_root, new_root, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
for name in files:
    text = open(name, encoding="utf-8", errors="surrogateescape").read()
    new = text.replace(old_build, new_build).replace(old_root, new_root)
    if new != text:
        open(name, "w", encoding="utf-8", errors="surrogateescape").write(new)
' "$p_build" "$build" "$p_root" "$root"
  # The discovered test lists stay newer than what they were discovered from.
  find "$build" -name '*_tests.cmake' -exec touch {} +

  # Libraries: the pack's own, then each one still missing from a CUDA toolkit,
  # the driver's folder or Python's NVIDIA wheels.
  local libpath="$build/pack-lib" missing lib found dir still=()
  local -a dirs=("${CUDA_HOME:-/usr/local/cuda}/lib64" "${CUDA_HOME:-/usr/local/cuda}/lib")
  for dir in /usr/local/cuda*/targets/*/lib /usr/local/nvidia/lib64; do dirs+=("$dir"); done
  missing="$(for f in "$build"/bench/bench_roofline "$build"/bench/roofline "$build"/tests/*/*_test*; do
      [[ -x "$f" && -f "$f" ]] && LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$f" 2>/dev/null
    done | awk '/not found/ {print $1}' | sort -u)"
  for lib in $missing; do
    found=""
    for dir in "${dirs[@]}"; do [[ -e "$dir/$lib" ]] && { found="$dir/$lib"; break; }; done
    [[ -n "$found" ]] ||
      found="$(find /usr/local /opt /usr/lib /usr/lib64 -name "$lib" 2>/dev/null | head -n1)"
    if [[ -n "$found" ]]; then
      dir="$(dirname "$found")"
      [[ ":$libpath:" == *":$dir:"* ]] || libpath+=":$dir"
      echo "library $lib: $found" >>"$log"
    else
      still+=("$lib")
    fi
  done
  echo "ld_library_path=$libpath" >>"$state"  # the caller exports it (this runs in a subshell)
  # And beside the build, for a later step in another --out folder (--build-dir DIR).
  echo "$libpath" >"$build/pack.ld_library_path"
  if ((${#still[@]})); then
    echo "unpacked, but no ${still[*]} on this machine (install the CUDA libraries or set LD_LIBRARY_PATH)"
    return 1
  fi
  local note=""
  # bench_roofline reports 12 hex digits (and -dirty); the checkout's short hash may be shorter.
  [[ "$p_commit" == "$here"* ]] || note="; built at commit $p_commit, this checkout is $here"
  echo "unpacked '$(basename "$pack")' (built for $p_arch on another machine)$note"
}
