#!/bin/sh
# man_page.sh PAGE NAME: faults a rendered man page must not have:
#  - an exit status listed twice under EXIT STATUS (a page's own entry and
#    the shared one: they are one entry);
#  - scdoc markup left as text ("\x_HH_": an underline that did not take);
#  - the page naming itself under SEE ALSO (the last line, the footer,
#    names it, as every page does).
# Rendered with man (man-db) or mandoc; skipped (77) without either.
set -eu
page=$1 name=$2
if command -v man >/dev/null 2>&1; then
    text=$(MANWIDTH=200 man -l "$page" 2>/dev/null)
elif command -v mandoc >/dev/null 2>&1; then
    text=$(mandoc -T utf8 -O width=200 "$page" | col -b)
else
    echo "SKIP: neither man nor mandoc to render $page"
    exit 77
fi
status=0
twice=$(printf '%s\n' "$text" | sed -n '/^EXIT STATUS/,/^[A-Z]/p' | grep -E '^ +[0-9]+ *$' | sort | uniq -d)
if [ -n "$twice" ]; then
    echo "$page: exit status listed twice under EXIT STATUS: $(echo $twice)"
    status=1
fi
left=$(printf '%s\n' "$text" | tr ' ' '\n' | sed 's/[.,;:)]*$//; s/^[(]*//' | grep -E '^_|[^_]_$' || true)
if [ -n "$left" ]; then
    echo "$page: scdoc markup left in the text: $(echo $left)"
    status=1
fi
if printf '%s\n' "$text" | sed '$d' | sed -n '/^SEE ALSO/,/^[A-Z]/p' | grep -q "$name(1)"; then
    echo "$page: SEE ALSO names the page itself, $name(1)"
    status=1
fi
[ "$status" = 0 ] && echo "ok: $page"
exit "$status"
