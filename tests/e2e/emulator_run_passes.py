"""scripts/emulator-run's passes, checked on a stand-in binary (no emulation, so
it runs in a second): one pass per architecture (and one for an 8-device node)
whose records the user's flags select, each with its RL_EMU_CC (RL_EMU_DEVICES),
its folder and exactly its records; a pass with no record is left out; the
user's own filter, or RL_EMU_CC / RL_EMU_DEVICES, gives one pass;
the exit status is pass 1's, else the first failing later pass's."""
import os
import stat
import subprocess
import sys
import tempfile



def fail(message):
    print("FAILED: " + message)
    return 1

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "emulator-run")

# --list as bench_roofline_emu prints it: name first, source file last.
LISTING = """kernel family prec unit ceiling shape flops bytes_model source
hbm_read_vec16 ceilings fp32 fp32 hbm.read n=1 1 1 kernels/ceilings/hbm_stream.cu
fma_chains_fp32 ceilings fp32 fp32 fp32.fma x 1 1 kernels/ceilings/simt_fma.cu
ffma2_chains_fp32 ceilings fp32 fp32 fp32.fma x 1 1 kernels/ceilings/simt_fma.cu
wgmma_loop_bf16_m64n256k16 ceilings bf16 tc_bf16 tc.bf16 x 1 1 kernels/ceilings/tensor_wgmma_sm90a.cu
gemm_wgmma_tma_bf16 gemm bf16 tc_bf16 - x 1 1 kernels/gemm/gemm_wgmma_tma_sm90a.cu
tcgen05_loop_bf16 ceilings bf16 tc_bf16 tc.bf16 x 1 1 kernels/ceilings/tensor_tcgen05_sm100a.cu
mma_sync_loop_mxf4 ceilings mxfp4 tc_mxfp4 tc.mxfp4 x 1 1 kernels/ceilings/tensor_mma_sync_sm120a.cu
node_peer_sm_read node fp32 fp32 - src=0,dst=1 0 1 kernels/node/node_peer_sm.cu
"""

# The stand-in: --list prints LISTING (only the gemm lines with --family gemm);
# a run logs RL_EMU_CC (or "devices=N" for RL_EMU_DEVICES) and its arguments,
# writes OUT/ran, and exits with STANDIN_EXIT_<cc> (0 unless set).
STANDIN = r"""#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
listing = open(os.environ["STANDIN_LISTING"]).read().splitlines()
if "--list" in args:
    if "--family" in args:
        family = args[args.index("--family") + 1]
        listing = [listing[0]] + [l for l in listing[1:] if l.split()[1] == family]
    print("\n".join(listing))
    sys.exit(0)
cc = os.environ.get("RL_EMU_CC", "")
if "RL_EMU_DEVICES" in os.environ:
    cc = "devices=" + os.environ["RL_EMU_DEVICES"]
with open(os.environ["STANDIN_LOG"], "a") as log:
    log.write(cc + "\t" + " ".join(args) + "\n")
out = args[args.index("--out") + 1]
os.makedirs(out, exist_ok=True)
open(os.path.join(out, "ran"), "w").close()
sys.exit(int(os.environ.get("STANDIN_EXIT_" + (cc or "89"), "0")))
"""


def run(tmp, flags, extra_env=None):
    log = os.path.join(tmp, "log")
    if os.path.exists(log):
        os.remove(log)
    env = {k: v for k, v in os.environ.items() if k not in ("RL_EMU_CC", "RL_EMU_DEVICES")}
    env.update(STANDIN_LISTING=os.path.join(tmp, "listing"), STANDIN_LOG=log)
    env.update(extra_env or {})
    r = subprocess.run([SCRIPT, os.path.join(tmp, "standin"), *flags], capture_output=True,
                       text=True, timeout=60, env=env)
    runs = []
    if os.path.exists(log):
        for line in open(log).read().splitlines():
            cc, args = line.split("\t")
            args = args.split()
            filt = next((a for a in args if a.startswith("--benchmark_filter=")), None)
            runs.append((cc, args[args.index("--out") + 1], filt))
    return r, runs


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "listing"), "w") as f:
            f.write(LISTING)
        standin = os.path.join(tmp, "standin")
        with open(standin, "w") as f:
            f.write(STANDIN)
        os.chmod(standin, os.stat(standin).st_mode | stat.S_IEXEC)
        out = os.path.join(tmp, "run")

        r, runs = run(tmp, ["--out", out])
        expected = [
            ("", out, None),
            ("90", os.path.join(out, "hopper-sm90a"),
             "--benchmark_filter=^(wgmma_loop_bf16_m64n256k16|gemm_wgmma_tma_bf16)"),
            ("100", os.path.join(out, "blackwell-sm100a"),
             "--benchmark_filter=^(ffma2_chains_fp32|tcgen05_loop_bf16)"),
            ("120", os.path.join(out, "blackwell-sm120a"), "--benchmark_filter=^(mma_sync_loop_mxf4)"),
            ("devices=8", os.path.join(out, "node-8-devices"),
             "--benchmark_filter=^(node_peer_sm_read)"),
        ]
        if r.returncode != 0 or runs != expected:
            return fail(f"all passes: exit {r.returncode}, runs {runs}, stderr {r.stderr!r}")

        # The user's selection decides which passes have records.
        r, runs = run(tmp, ["--family", "gemm", "--out", out])
        if r.returncode != 0 or [cc for cc, _, _ in runs] != ["", "90"] or \
                runs[1][2] != "--benchmark_filter=^(gemm_wgmma_tma_bf16)":
            return fail(f"--family gemm: exit {r.returncode}, runs {runs}")

        # One pass when the user filters or sets the device.
        for flags, env in ((["--benchmark_filter=gemm", "--out", out], {}),
                           (["--out", out], {"RL_EMU_CC": "100"}),
                           (["--out", out], {"RL_EMU_DEVICES": "2"})):
            r, runs = run(tmp, flags, env)
            if r.returncode != 0 or len(runs) != 1:
                return fail(f"{flags} {env}: exit {r.returncode}, runs {runs}")

        # A failing later pass is the exit status, and the passes after it still run.
        r, runs = run(tmp, ["--out", out], {"STANDIN_EXIT_100": "1"})
        if r.returncode != 1 or len(runs) != 5:
            return fail(f"failing sm_100a pass: exit {r.returncode}, runs {runs}")
        # A refused pass 1 (bad input) stops there.
        r, runs = run(tmp, ["--out", out], {"STANDIN_EXIT_89": "2"})
        if r.returncode != 2 or len(runs) != 1:
            return fail(f"refused pass 1: exit {r.returncode}, runs {runs}")
    print("passes per architecture and the 8-device node pass, with their records, folders and "
          "RL_EMU_CC or RL_EMU_DEVICES; user filter and "
          "RL_EMU_CC or RL_EMU_DEVICES give one pass; exit status as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
