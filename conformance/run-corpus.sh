#!/bin/sh
# run-corpus.sh CORPUS_DIR VERSION OUT_DIR: runs conformance/bin/harness-VERSION on the scenarios of a
# corpus and writes NAME.json files to OUT_DIR. The scenarios are the corpus' own NAME.yaml files if it
# has any (fixtures/golden, fixtures/golden-config), else the directories listed in its SCENARIOS file,
# else fixtures/golden (the version directories hold .json only, same relative names).
set -eu
dir="$1"; v="$2"; out="$3"
bin="conformance/bin/harness-$v"
if ls "$dir"/*.yaml >/dev/null 2>&1; then
  srcs="$dir"
elif [ -f "$dir/SCENARIOS" ]; then
  srcs="$(grep -v '^#' "$dir/SCENARIOS")"
else
  srcs="fixtures/golden"
fi
mkdir -p "$out"
for src in $srcs; do
  "$bin" -in "$src" -out "$out" ${ONLY:+-only "$ONLY"}
done
