#!/usr/bin/env bash
# Builds one libFuzzer target outside SwiftPM and runs it for a fixed time (RELIABILITY.md §7).
#
# Usage: fuzz/run.sh TARGET SECONDS
#
# A target is a directory fuzz/TARGET/ holding:
#   *.swift   the harness, defining @_cdecl("LLVMFuzzerTestOneInput"); it is compiled into the same module
#             as the sources below, so it uses their internal API without importing anything
#   sources   module source directories, one per line, relative to the repository root (# comments allowed)
#   dict      optional libFuzzer dictionary
#   corpus/   seed inputs; the run works on a temporary copy, so the committed corpus never grows
#
# The binary goes to .build/fuzz/TARGET/fuzzer. On a crash, leak, timeout or OOM the script exits non-zero
# and leaves the reproducer (crash-*, leak-*, timeout-*, oom-*) in .build/fuzz/TARGET/.
# Reproduce with: SWIFT_BACKTRACE=enable=no .build/fuzz/TARGET/fuzzer .build/fuzz/TARGET/crash-...
set -euo pipefail

usage="usage: fuzz/run.sh TARGET SECONDS"
target=${1:?$usage}
seconds=${2:?$usage}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "$usage (SECONDS must be a whole number)" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir="$root/fuzz/$target"
out="$root/.build/fuzz/$target"
[[ -f "$dir/sources" ]] || { echo "no $dir/sources" >&2; exit 2; }

sources=()
while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [[ -z $line ]] && continue
    [[ -d "$root/$line" ]] || { echo "$dir/sources: no directory $line" >&2; exit 2; }
    sources+=("$root/$line"/*.swift)
done <"$dir/sources"
harness=("$dir"/*.swift)
# Everything compiles as one module named after the first source directory: then `import HTTPCore`
# in a later directory names this very module (a warning), instead of a module that does not exist.
first=$(grep -v '^[[:space:]]*\(#\|$\)' "$dir/sources" | head -n 1 | tr -d '[:space:]')
module=$(basename "$first")

mkdir -p "$out"
echo "building $out/fuzzer from ${#sources[@]} module files and ${#harness[@]} harness file(s)"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name "$module" \
    "${sources[@]}" "${harness[@]}" -o "$out/fuzzer"

corpus=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
trap 'rm -rf "$corpus"' EXIT
if [[ -d "$dir/corpus" ]]; then cp -R "$dir/corpus/." "$corpus/"; fi

args=(-max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/")
if [[ -f "$dir/dict" ]]; then args+=(-dict="$dir/dict"); fi

# The Swift runtime's backtracer deadlocks inside an ASan + libFuzzer process; libFuzzer reports crashes itself.
echo "running for ${seconds}s on a copy of fuzz/$target/corpus"
SWIFT_BACKTRACE=enable=no "$out/fuzzer" "${args[@]}" "$corpus"
