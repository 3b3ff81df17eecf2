#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), one after the
# other, and prints each run's executions and coverage. New inputs go to
# fuzz/work/<target> (not committed); the committed seeds in
# fuzz/corpus/<target> are only read. Crashes land in fuzz/artifacts/.
#
#   bash fuzz/run.sh            # 10 minutes per target
#   bash fuzz/run.sh 30         # a 30-second smoke of each
#   bash fuzz/run.sh 600 mcp_lines
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(invoke_json stream_events mcp_lines cli_argv)
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +nightly fuzz build
for target in "${targets[@]}"; do
    mkdir -p "work/$target" "logs"
    log="logs/$target.log"
    echo "== $target: ${seconds}s"
    # -close_fd_mask=3: the CLI target prints; keep the terminal quiet.
    cargo +nightly fuzz run "$target" "work/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
        -close_fd_mask=3 -print_final_stats=1 >"$log" 2>&1 || {
        echo "$target FAILED; see fuzz/$log and fuzz/artifacts/$target/"
        tail -40 "$log"
        exit 1
    }
    grep -E "^#[0-9]+.*(DONE|pulse)" "$log" | tail -1
    grep -E "stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log"
done
