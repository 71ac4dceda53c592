#!/bin/sh
# man_options.sh COMMAND PAGE: every option COMMAND --help lists, and the
# letter of each that has one, is in its man page (as roff writes it:
# "\-\-name" or "--name", "\-i").
set -eu
help=$("$1" --help)
page=$(sed 's/\\-/-/g' "$2")
status=0
# "  --name ..." and "  -x, --name ...": the long name and the letter.
for opt in $(printf '%s\n' "$help" | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*\).*/\2/p') \
           $(printf '%s\n' "$help" | sed -n 's/^  \(-[a-zA-Z]\), --.*/\1/p'); do
    case $page in
        *"$opt"*) ;;
        *) echo "$2 does not document $opt"; status=1 ;;
    esac
done
[ "$status" = 0 ] && echo "ok: every option of $1 --help is in $2"
exit "$status"
