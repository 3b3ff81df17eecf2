#!/usr/bin/env bash
# Compile cost of #[tool] versus the builder API.
#
# Generates (into a temporary directory, never committed) two crates with
# the same 200 tools — one written with `#[tool]`, one with
# `ToolDefinition::builder(..)` — in 10 modules of 20, and times:
#   * clean:       `cargo build` of the crate after `cargo clean -p` (its
#                  dependencies already built, so only the tools compile);
#   * incremental: `cargo build` after touching one module.
# Prints one line per measurement. Numbers are measurements, not asserts.
#
# Usage: scripts/compile-cost/run.sh [N_TOOLS]   (default 200)
# Env:   KEEP=1 keeps the temporary directory; CARGO_TARGET_DIR is honoured.
set -euo pipefail

N=${1:-200}
PER_MODULE=20
MODULES=$(( (N + PER_MODULE - 1) / PER_MODULE ))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gonk-compile-cost.XXXXXX")
if [[ "${KEEP:-}" != 1 ]]; then trap 'rm -rf "$WORK"' EXIT; fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$WORK/target}

cat > "$WORK/Cargo.toml" <<TOML
[workspace]
resolver = "2"
members = ["macro_tools", "builder_tools"]

[workspace.dependencies]
gonk-tools = { path = "$ROOT/gonk-tools" }
serde = { version = "1", features = ["derive"] }
schemars = "1"

[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
TOML
# Same dependency versions as the repository.
cp "$ROOT/Cargo.lock" "$WORK/Cargo.lock"

types() { # $1 = tool index
  cat <<RS
#[derive(Deserialize, JsonSchema)]
pub struct In$1 {
    /// The query.
    #[schemars(length(min = 1))]
    pub query: String,
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
pub struct Out$1 {
    pub hits: Vec<String>,
}
RS
}

for kind in macro_tools builder_tools; do
  mkdir -p "$WORK/$kind/src"
  cat > "$WORK/$kind/Cargo.toml" <<TOML
[package]
name = "$kind"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
gonk-tools.workspace = true
serde.workspace = true
schemars.workspace = true
TOML
  {
    echo "//! $N tools."
    echo "#![allow(dead_code)]"
    for ((m = 0; m < MODULES; m++)); do echo "pub mod m$m;"; done
    echo "pub fn definitions() -> Vec<gonk_tools::ToolDefinition> {"
    echo "    let mut all = Vec::new();"
    for ((m = 0; m < MODULES; m++)); do echo "    all.extend(m$m::definitions());"; done
    echo "    all"
    echo "}"
  } > "$WORK/$kind/src/lib.rs"
  for ((m = 0; m < MODULES; m++)); do
    file="$WORK/$kind/src/m$m.rs"
    echo "use gonk_tools::prelude::*;" > "$file"
    defs=()
    for ((j = 0; j < PER_MODULE; j++)); do
      i=$(( m * PER_MODULE + j ))
      (( i < N )) || break
      types "$i" >> "$file"
      if [[ $kind == macro_tools ]]; then
        cat >> "$file" <<RS

/// Search collection $i.
#[tool(name = "search.c$i", approval = "read", capabilities(reads_fs, idempotent))]
pub async fn search_$i(input: In$i, ctx: ToolContext) -> Result<Out$i, ToolError> {
    ctx.log().info("searching");
    let limit = input.limit.unwrap_or(10) as usize;
    Ok(Out$i { hits: vec![input.query; 1].into_iter().take(limit).collect() })
}

RS
        defs+=("Search$i::definition()")
      else
        cat >> "$file" <<RS

pub fn search_$i() -> ToolDefinition {
    ToolDefinition::builder("search.c$i")
        .description("Search collection $i.")
        .approval(ApprovalTier::Read)
        .capabilities(Capabilities { reads_fs: true, idempotent: true, ..Default::default() })
        .handler(|input: In$i, ctx: ToolContext| async move {
            ctx.log().info("searching");
            let limit = input.limit.unwrap_or(10) as usize;
            Ok::<_, ToolError>(Out$i { hits: vec![input.query; 1].into_iter().take(limit).collect() })
        })
        .output_schema_for::<Out$i>()
        .build()
}

RS
        defs+=("search_$i()")
      fi
    done
    {
      echo "pub fn definitions() -> Vec<ToolDefinition> {"
      echo "    vec![$(IFS=,; echo "${defs[*]}")]"
      echo "}"
    } >> "$file"
  done
done

cd "$WORK"
seconds() { # runs "$@" and prints the wall-clock seconds it took
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "build failed: $*" >&2; "$@"; exit 1; }
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }'
}

echo "building dependencies once (not measured)..." >&2
cargo build -q -p macro_tools -p builder_tools --offline 2>/dev/null || cargo build -q -p macro_tools -p builder_tools

printf "%-14s %-12s %s\n" crate build seconds
for kind in macro_tools builder_tools; do
  cargo clean -q -p "$kind"
  printf "%-14s %-12s %s\n" "$kind" clean "$(seconds cargo build -p "$kind")"
  touch "$kind/src/m0.rs"
  printf "%-14s %-12s %s\n" "$kind" incremental "$(seconds cargo build -p "$kind")"
done
