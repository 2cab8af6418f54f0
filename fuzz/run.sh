#!/usr/bin/env bash
# Builds one libFuzzer target with SwiftPM and runs it for a fixed time.
#
# Usage: fuzz/run.sh TARGET SECONDS
#
# A target is a directory fuzz/TARGET/ holding:
#   product    the name of its executable product in Package.swift (e.g. FuzzHTTPRequest)
#   *.swift    the harness, defining @_cdecl("LLVMFuzzerTestOneInput"), and main.swift, which hands it to
#              libFuzzer's driver (fuzz/driver)
#   dict       optional libFuzzer dictionary
#   corpus/    seed inputs; the run works on a temporary copy, so the committed corpus never grows
#
# The build is `swift build -c release --product P -Xswiftc -sanitize=fuzzer,address` in its own scratch
# directory ($CHATTERD_BUILD_DIR/fuzz-build, default .build/fuzz-build), with testing enabled and
# CHATTERD_FUZZ_TESTABLE defined, so a harness may `@testable import` a module for its internal types
# (fuzz/http2-session does); every target gets the same flags, so they share one build. On a crash, leak, timeout or OOM the
# script exits non-zero and leaves the reproducer (crash-*, leak-*, timeout-*, oom-*) in .build/fuzz/TARGET/.
# Reproduce with: SWIFT_BACKTRACE=enable=no .build/fuzz-build/release/P .build/fuzz/TARGET/crash-...
set -euo pipefail

usage="usage: fuzz/run.sh TARGET SECONDS"
target=${1:?$usage}
seconds=${2:?$usage}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "$usage (SECONDS must be a whole number)" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/fuzz/$target"
[[ -f "$dir/product" ]] || { echo "no $dir/product" >&2; exit 2; }
product=$(tr -d '[:space:]' <"$dir/product")
scratch="${CHATTERD_BUILD_DIR:-$root/.build}/fuzz-build"
out="$root/.build/fuzz/$target"
mkdir -p "$out"

echo "building $product with libFuzzer and AddressSanitizer"
(cd "$root" && swift build -c release --product "$product" -Xswiftc -sanitize=fuzzer,address \
    -Xswiftc -enable-testing -Xswiftc -DCHATTERD_FUZZ_TESTABLE \
    --scratch-path "$scratch" 2>&1 | grep -v "Cannot export local symbol '__asan")

corpus=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
trap 'rm -rf "$corpus"' EXIT
if [[ -d "$dir/corpus" ]]; then cp -R "$dir/corpus/." "$corpus/"; fi

args=(-max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/")
if [[ -f "$dir/dict" ]]; then args+=(-dict="$dir/dict"); fi

# The Swift runtime's backtracer deadlocks inside an ASan + libFuzzer process; libFuzzer reports crashes itself.
echo "running for ${seconds}s on a copy of fuzz/$target/corpus"
SWIFT_BACKTRACE=enable=no "$scratch/release/$product" "${args[@]}" "$corpus"
