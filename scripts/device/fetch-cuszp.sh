#!/usr/bin/env bash
# cuSZp's public source into .cuszp/ (ignored by git), for bench/gpu/cuszp_side_by_side.sh on
# the GPU machine, which cannot reach the network: carry .cuszp with the device tool.
#   bash scripts/device/fetch-cuszp.sh [SOURCE]
# SOURCE: a git URL or a local clone (default https://github.com/szcompressor/cuSZp.git).
set -euo pipefail
src=${1:-https://github.com/szcompressor/cuSZp.git}
rm -rf .cuszp
git clone --quiet --depth 1 "$src" .cuszp 2>/dev/null || git clone --quiet "$src" .cuszp
rm -rf .cuszp/.git
echo "cuSZp source in .cuszp ($(du -sh .cuszp | cut -f1))"
