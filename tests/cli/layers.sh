# The layers of the polis program (engine/cli/README.md): what each folder may include. util/
# nothing of the program's; session/ and transport/ util/ and not each other; cmd/ any of them;
# main.c the commands. The public headers (polis/...) are for everything but transport/, and no
# file reaches outside engine/cli/ any other way. Every #include "..." of every file is read.
. "$(dirname "$0")/lib.sh"

# violations ROOT FILE: one line per include FILE (under ROOT, an engine/cli) may not have
violations() {
    case "$2" in
    "$1"/util/*) ok="util/ polis/" ;;
    "$1"/session/*) ok="session/ util/ polis/" ;;
    "$1"/transport/*) ok="transport/ util/" ;;
    "$1"/cmd/*) ok="cmd/ session/ transport/ util/ polis/" ;;
    "$1"/main.c) ok="cmd/ polis/" ;;
    *)
        echo "${2#$1/}: a file outside the layers"
        return
        ;;
    esac
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$2"); do
        good=no
        for prefix in $ok; do
            case "$inc" in "$prefix"*) good=yes ;; esac
        done
        [ "$good" = yes ] || echo "${2#$1/}: #include \"$inc\" (this folder may include: $ok)"
    done
}

CLI=$SRC/engine/cli
n=0
for f in $(find "$CLI" -name '*.[ch]' | sort); do
    n=$((n + 1))
    checks=$((checks + 1))
    v=$(violations "$CLI" "$f")
    [ -z "$v" ] || fail "$v"
done
# the check reads the files it means to (a moved tree would pass it empty)
checks=$((checks + 1))
[ "$n" -ge 30 ] || fail "only $n files under $CLI"

# and it can fail: a session file that includes a transport header, a stray folder
mkdir -p "$TMP/cli/session" "$TMP/cli/misc"
printf '#include "transport/lines.h"\n#include "util/util.h"\n' >"$TMP/cli/session/bad.c"
: >"$TMP/cli/misc/stray.c"
checks=$((checks + 1))
v=$(violations "$TMP/cli" "$TMP/cli/session/bad.c")
[ "$v" = 'session/bad.c: #include "transport/lines.h" (this folder may include: session/ util/ polis/)' ] ||
    fail "the layer check missed a session file including transport/lines.h: '$v'"
checks=$((checks + 1))
v=$(violations "$TMP/cli" "$TMP/cli/misc/stray.c")
[ "$v" = "misc/stray.c: a file outside the layers" ] || fail "the layer check missed a stray file: '$v'"

finish
