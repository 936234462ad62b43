#!/usr/bin/env bash
# The bench command: runs the measurements BENCHMARKS.md reports, records their results as JSON
# in benches/results/, and draws the plots (benches/plots/*.svg) from what was recorded.
#
#   benches/bench.sh              # 1k and 100k catalogs, the real corpus, the peers, the plots
#   benches/bench.sh --with-1m    # also the 1M catalog (generated once: ~20 min and 4.4 GB)
#   benches/bench.sh --plots      # only redraw the plots from benches/results/
#   benches/bench.sh --base=BIN   # also the previous build (BIN, a release skillreg) side by side:
#                                 # an after/before column, and the imports timed with both
#
# Catalogs are generated under $BENCH_WORK (default /tmp/skillreg-bench) and kept for the next
# run. Needs what benches/e2e/README.md lists (wrk, the peers; the TypeScript peer from
# scripts/install-test-tools.sh); matplotlib is installed into ~/.cache/skillreg/plot-venv from
# benches/requirements-plot.txt. The machine should be otherwise idle: the results are ratios of
# one run, but a busy machine flags cells (⚠) and widens every range.
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_1M=0
PLOTS_ONLY=0
BASE=""
for arg in "$@"; do
    case "$arg" in
        --with-1m) WITH_1M=1 ;;
        --plots) PLOTS_ONLY=1 ;;
        --base=*) BASE="${arg#--base=}" ;;
        *) echo "usage: benches/bench.sh [--with-1m] [--plots] [--base=BIN]" >&2; exit 2 ;;
    esac
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skillreg/target}"
WORK="${BENCH_WORK:-/tmp/skillreg-bench}"
RESULTS=benches/results
VENV="$HOME/.cache/skillreg/plot-venv"
B="$CARGO_TARGET_DIR/release/skillreg"
G="$CARGO_TARGET_DIR/release/skillreg-bench"
CORPUS=../shared/corpus/real

plots() {
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV"
    fi
    "$VENV/bin/pip" install -q -r benches/requirements-plot.txt
    "$VENV/bin/python" benches/plot.py --results "$RESULTS" --out benches/plots
}

if [ "$PLOTS_ONLY" = 1 ]; then
    plots
    exit 0
fi

mkdir -p "$WORK" "$RESULTS"
cargo build --release --locked
cargo build --release --manifest-path benches/peers/rmcp-catalog/Cargo.toml \
    --target-dir "$HOME/.cache/skillreg/peers-target"
bash benches/e2e/install.sh >/dev/null

# The catalogs: exported folders for the side-by-side runs, data directories for the scale runs.
[ -d "$WORK/skills-1k" ] || "$G" generate --skills 1000 --export "$WORK/skills-1k"
[ -d "$WORK/corpus-flat" ] || python3 benches/e2e/flatten_corpus.py --corpus "$CORPUS" --out "$WORK/corpus-flat"
scales=(1k:1000 100k:100000)
[ "$WITH_1M" = 1 ] && scales+=(1m:1000000)
for s in "${scales[@]}"; do
    name=${s%%:*} n=${s#*:}
    [ -f "$WORK/data-$name/skillreg.db" ] || "$G" generate --skills "$n" --data-dir "$WORK/data-$name"
done

SERVERS=skillreg,rmcp,ts
BASE_ARGS=()
if [ -n "$BASE" ]; then
    SERVERS+=,skillreg-base
    BASE_ARGS=(--base-bin "$BASE")
fi

# Side by side with the peers over HTTP (both eras), on the synthetic 1k catalog and the corpus:
# three rounds, the servers of each cell back to back, ratios as medians of the rounds' ratios.
python3 benches/e2e/run.py --dir "$WORK/skills-1k" --servers "$SERVERS" "${BASE_ARGS[@]}" --rounds 3 \
    --methods list,list_deep,get,read_md,read_bin,dir --skillreg-bin "$B" --work "$WORK/e2e" \
    --out "$RESULTS/peers-1k.json" --markdown "$WORK/peers-1k.md"
python3 benches/e2e/run.py --dir "$WORK/corpus-flat" --servers "$SERVERS" "${BASE_ARGS[@]}" --rounds 3 \
    --methods list,get,read_md,read_bin,read_ref,dir --no-ceiling --skillreg-bin "$B" --work "$WORK/e2e" \
    --out "$RESULTS/peers-corpus.json" --markdown "$WORK/peers-corpus.md"
# The same reads beside rmcp's catalog in instructions per request (callgrind): what a busy
# machine cannot move.
python3 benches/e2e/instructions.py --dir "$WORK/skills-1k" --methods get,read_md,read_bin,dir \
    --skillreg-bin "$B" --work "$WORK/instructions" \
    --out "$RESULTS/instructions-1k.json" --markdown "$WORK/instructions-1k.md"

# Latency by catalog size over HTTP (sequential requests spread across each catalog).
for s in "${scales[@]}"; do
    name=${s%%:*}
    python3 benches/e2e/whole_process.py --skillreg "$B" --data-dir "$WORK/data-$name" --json \
        > "$RESULTS/scale-$name.json"
done

# Import of the real corpus and of 100,000 exported synthetic skills (skills/s).
[ -d "$WORK/x100k" ] || "$G" generate --skills 100000 --export "$WORK/x100k"
for what in "$CORPUS" "$WORK/x100k"; do
    for bin in "$B" ${BASE:+"$BASE"}; do
        rm -rf "$WORK/import"
        # Exit status 1 = some folders were refused with their codes (the corpus has such skills).
        summary=$("$bin" import --json --namespace bench --data-dir "$WORK/import" "$what") || [ $? -eq 1 ]
        echo "$bin: $(echo "$summary" | tail -1)"
    done
done

plots
