#!/bin/sh
# The inventories in the docs name what the tree holds: docs/analysis.md's "Layers" every file
# under analyzer/, the README's Layout every top-level folder, its Documents every docs/*.md.
# usage: docs_name_the_tree.sh SOURCE_DIR   (exit 77, skipped, outside a git checkout)
cd "$1" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 77
missing=0
say_missing() {
  echo "not named in $1: $2"
  missing=1
}

# A file is named by its path from analyzer/, or as the ".cpp" of a row "`x.h`, `.cpp`".
for f in $(git ls-files analyzer); do
  rel=${f#analyzer/}
  grep -qF "\`$rel\`" docs/analysis.md && continue
  case $rel in
    *.cpp) grep -qF "\`${rel%.cpp}.h\`, \`.cpp\`" docs/analysis.md && continue ;;
  esac
  say_missing docs/analysis.md "$f"
done

# The README section under heading $1, up to the next heading of its level or above.
readme_section() {
  awk -v h="$1" '$0 == h { on = 1; next } on && /^##? / { exit } on' README.md
}

layout=$(readme_section "## Layout")
for d in $(git ls-files | grep / | cut -d/ -f1 | sort -u); do
  printf '%s\n' "$layout" | grep -qF "| \`$d/" || say_missing "README.md (Layout)" "$d/"
done

documents=$(readme_section "### Documents")
for doc in $(git ls-files 'docs/*.md'); do
  printf '%s\n' "$documents" | grep -qF "]($doc)" || say_missing "README.md (Documents)" "$doc"
done

[ "$missing" = 0 ] || echo "FAILED: add the rows above (what the file or folder is for)"
exit "$missing"
