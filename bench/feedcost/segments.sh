#!/usr/bin/env bash
# Segments of the cached /getmaps (body and gzip form) as POSTS batches of BATCH chatts are posted to a store of
# ROWS chatts held in memory, each followed by a read of both forms: how many segments a version has, how many
# bytes merges copied per byte settled, and the CPU of one post and read. Built as cost.sh builds its program.
# Usage: bench/feedcost/segments.sh REV ROWS BATCH POSTS
set -euo pipefail
(( $# == 4 )) || { sed -n '5p' "$0" | sed 's/^# //'; exit 64; }
FEEDBENCH_MAIN=Segments.swift exec "$(dirname "${BASH_SOURCE[0]}")/cost.sh" "$@"
