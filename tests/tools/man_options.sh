#!/bin/sh
# man_options.sh COMMAND PAGE: every option COMMAND --help lists is in its
# man page (as roff writes it: "\-\-name" or "--name").
set -eu
help=$("$1" --help)
page=$(sed 's/\\-/-/g' "$2")
status=0
for opt in $(printf '%s\n' "$help" | sed -n 's/^  \(--[a-z-]*\).*/\1/p'); do
    case $page in
        *"$opt"*) ;;
        *) echo "$2 does not document $opt"; status=1 ;;
    esac
done
[ "$status" = 0 ] && echo "ok: every option of $1 --help is in $2"
exit "$status"
