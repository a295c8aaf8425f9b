#!/bin/sh
# tests/format.sh SOURCE_DIR [CLANG_FORMAT] — every C file of the tree (git ls-files '*.c' '*.h',
# else find) is as .clang-format formats it. The layout clang-format produces differs between
# its major versions: the check runs with clang-format 14 (Debian 12's, what CI installs) and
# is skipped (exit 77) with any other version or none. To format: tests/format.sh SRC --fix.
set -u
src=${1:?usage: tests/format.sh SOURCE_DIR [--fix]}
fix=${2:-}
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    for c in clang-format-14 clang-format; do
        if command -v "$c" >/dev/null 2>&1; then cf=$c; break; fi
    done
fi
if [ -z "$cf" ]; then
    echo "skipped: no clang-format (Debian: apt-get install clang-format)"
    exit 77
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p')
if [ "$major" != 14 ]; then
    echo "skipped: $cf is version $major; the tree is formatted with clang-format 14"
    exit 77
fi
cd "$src" || exit 1
if [ -d .git ] || [ -f .git ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find engine include plugins rulesets sdk tests examples lua -name node_modules -prune \
        -o \( -name '*.c' -o -name '*.h' \) -print 2>/dev/null)
fi
if [ "$fix" = --fix ]; then
    echo "$files" | xargs "$cf" --style=file -i
    exit $?
fi
bad=0
for f in $files; do
    if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "$f: not formatted (tests/format.sh $src --fix, or $cf -i $f); the first difference:"
        "$cf" --style=file "$f" | diff "$f" - | head -n 8
        bad=$((bad + 1))
    fi
done
n=$(echo "$files" | wc -w)
if [ "$bad" -gt 0 ]; then
    echo "$bad of $n C files are not formatted"
    exit 1
fi
echo "all $n C files formatted ($cf, version $major)"
