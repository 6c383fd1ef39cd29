#!/bin/sh
# The project's files stand alone: none cites a design document the project does not hold.
# usage: docs_stand_alone.sh SOURCE_DIR   (exit 77, skipped, outside a git checkout)
cd "$1" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 77
pattern='DESIGN[.]md'
if git grep -I -n -E "$pattern" -- . ':!tests/docs_stand_alone.sh'; then
  echo "FAILED: the files above cite a document the project does not hold; cite docs/ instead"
  exit 1
fi
exit 0
