#!/bin/sh
# Build tags for the scheduler API of release $1 (vX.Y.Z): the adapter files (fw_*.go, dra_*.go) select on them.
minor=$(echo "$1" | sed 's/^v1\.\([0-9]*\)\..*/\1/')
tags=""
[ "$minor" -lt 32 ] && tags="$tags k8s_pre132"
[ "$minor" -lt 34 ] && tags="$tags k8s_pre134"
[ "$minor" -lt 35 ] && tags="$tags k8s_pre135"
[ "$minor" -lt 36 ] && tags="$tags k8s_pre136"
[ "$minor" -lt 37 ] && tags="$tags k8s_pre137"
echo $tags
