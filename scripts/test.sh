#!/usr/bin/env bash
# The test command of README.md and CI: formatting, lints, and every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
