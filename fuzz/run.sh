#!/usr/bin/env bash
# Run one fuzz target with the settings used for RELIABILITY-fuzz.md.
#   fuzz/run.sh TARGET [SECONDS]      (default 600 s)
# New corpus entries go to fuzz/corpus/TARGET (git-ignored); the committed seeds in
# fuzz/seeds/TARGET are read as a second corpus and never written. Crashes land in
# fuzz/artifacts/TARGET (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/run.sh TARGET [SECONDS]}
secs=${2:-600}
mkdir -p "fuzz/corpus/$target" "fuzz/seeds/$target"
exec nice -n 10 cargo +nightly fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
  -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
