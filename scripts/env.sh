# Sourced by the entry-point scripts: PATH for CUDA and the project venv.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -f "$root/.cuda_home" ]]; then
  export CUDA_HOME="$(cat "$root/.cuda_home")"
  export PATH="$CUDA_HOME/bin:$PATH"
fi
export PATH="$root/.venv/bin:$PATH"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
export CCACHE_BASEDIR="$root"
# cuobjdump/nvdisasm from the nvidia-cuda-* wheels
for d in "$root"/.venv/lib/python3*/site-packages/nvidia/cu*/bin; do
  [[ -d "$d" ]] && export PATH="$PATH:$d"
done
