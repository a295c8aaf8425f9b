#!/bin/sh
# $POLIS_BIN without the ASan runtime the sanitizer builds preload into python: the polis
# program that clang builds carries its own and refuses to start beside a preloaded one.
unset LD_PRELOAD
exec "$POLIS_BIN" "$@"
