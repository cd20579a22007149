#!/usr/bin/env bash
# The source of revision REV (default HEAD) in .baseline/, for `suite.sh compare` on the GPU
# machine: carry .baseline there (it is ignored here).
#   bash scripts/device/make-baseline.sh REV
set -eu
rev=${1:-HEAD}
rm -rf .baseline && mkdir .baseline
git archive "$rev" | tar -x -C .baseline
git rev-parse --short "$rev" > .baseline/REVISION
echo "baseline $(cat .baseline/REVISION) in .baseline/"
