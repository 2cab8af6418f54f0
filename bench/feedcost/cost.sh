#!/usr/bin/env bash
# CPU per post and read of the cached /getmaps at a revision, the store in memory (no database, so a full
# read is charged nothing for its query): for each of RUNS fresh stores of ROWS chatts, ITERATIONS times a
# batch of BATCH chatts is posted and the feed read (identity, or identity and gzip). Prints the median and
# p90 thread CPU time of one post and read. Builds this folder's program into a scratch clone of REV, so
# revisions before and after the incremental feeds run the same program.
# Usage: bench/feedcost/cost.sh REV ROWS BATCH ITERATIONS identity|gzip RUNS
# Under valgrind: FEEDBENCH_WRAP="valgrind --tool=callgrind" (run with ITERATIONS 0 too, and subtract).
# FEEDBENCH_MAIN names another program of this folder to build and run instead (segments.sh does).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
main=${FEEDBENCH_MAIN:-Bench.swift}
[[ $main != Bench.swift ]] || (( $# == 6 )) || { sed -n '7p' "$0" | sed 's/^# //'; exit 64; }
rev=$1
shift
dir=${CHATTERD_BUILD_DIR:-$ROOT/.build}/feedcost/$(git -C "$ROOT" rev-parse --short "$rev")
if [[ ! -d $dir ]]; then
    git clone -q --shared "$ROOT" "$dir"
    git -C "$dir" checkout -q "$rev"
fi
rm -rf "$dir/Sources/FeedBench"
mkdir -p "$dir/Sources/FeedBench"
cp "$ROOT/bench/feedcost/$main" "$dir/Sources/FeedBench/Program.swift"
cp "$ROOT/bench/feedcost/Rows.swift" "$dir/Sources/FeedBench/"
repository=RepositoryRebuilding.swift
grep -q readChatts "$dir/Sources/ChattModel/ChattRepository.swift" && repository=RepositoryAppending.swift
grep -q ContinuousClock "$dir/Sources/ChattModel/ChattRepository.swift" && repository=RepositorySuspending.swift
dependencies='"ChattFeed", "ChattModel", "HTTPCore", "Locking"'
# From the change log on, the feeds follow a log, and the test repository in memory is the store.
if [[ -d $dir/Sources/ChangeLog ]]; then
    repository=RepositoryLogged.swift
    dependencies+=', "TestSupport"'
fi
cp "$ROOT/bench/feedcost/$repository" "$dir/Sources/FeedBench/Repository.swift"
grep -q FeedBench "$dir/Package.swift" \
    || sed -i "s|^\(        \.executableTarget(name: \"chatterd\".*\)\$|\1\n        .executableTarget(name: \"FeedBench\", dependencies: [$dependencies]),|" "$dir/Package.swift"
(cd "$dir" && swift build -c release --product FeedBench >/dev/null)
${FEEDBENCH_WRAP:-} "$dir/.build/release/FeedBench" "$@"
