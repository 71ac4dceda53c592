#!/bin/sh
# man_fields.sh COMMAND PAGE: every field COMMAND --help-query-gpu lists
# ("name" or "name" or "alias") is in the man page's QUERY FIELDS, and
# nothing there is a field the command does not take.
set -eu
fields=$("$1" --help-query-gpu | sed -n 's/^"\([a-z_.]*\)"\( or "\([a-z_.]*\)"\)\{0,1\}$/\1 \3/p')
section=$(sed 's/\\-/-/g; s/\\&//g' "$2" | sed -n '/^\.SH QUERY FIELDS/,/^\.SH /p')
status=0
[ -n "$fields" ] || { echo "$1 --help-query-gpu lists no field"; exit 1; }
for f in $fields; do
    case $section in
        *"fB$f\\fR"*) ;;
        *) echo "$2 does not document the field $f"; status=1 ;;
    esac
done
for f in $(printf '%s\n' "$section" | sed -n 's/^\\fB\([a-z_.]*\)\\fR.*/\1/p; s/^.*, \\fB\([a-z_.]*\)\\fR.*/\1/p'); do
    case " $(printf '%s ' $fields)" in
        *" $f "*) ;;
        *) echo "$2 documents $f, which $1 does not take"; status=1 ;;
    esac
done
[ "$status" = 0 ] && echo "ok: every --query-gpu field of $1 is in $2, and no other"
exit "$status"
