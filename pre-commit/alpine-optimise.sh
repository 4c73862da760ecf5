#!/usr/bin/env bash
# The `alpine-optimise` hook of .pre-commit-hooks.yaml: `alpine optimise
# --in-place FILE` for each given PVL file that has a `gpuopt` directive (the
# others are left alone: optimising them would only re-verify them). alpine
# writes a file only when every directive applied and the result verified, so a
# failure (exit 1, alpine's diagnostics on stderr) leaves the file as it was.
# The binary is $ALPINE when set, else `alpine` on PATH.
set -u
alpine="${ALPINE:-alpine}"
status=0
for f in "$@"; do
    grep -Eq '(^|[;{}[:space:]])gpuopt[[:space:]]' "$f" || continue
    "$alpine" optimise --in-place "$f" || status=1
done
exit "$status"
