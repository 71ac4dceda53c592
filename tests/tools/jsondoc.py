"""jsondoc.py - check a JSON document from a gpuprobe command against the
member tables of docs/json.md.

The tables are read from docs/json.md itself, so the documentation and the
test cannot drift apart:

  ## Common members          members of every document
  ## Error document          the error document (plus the common members)
  ## Shape `NAME`            an object shape other tables refer to by NAME
  ## Command `gpuprobe-X`    the document of gpuprobe-X (plus the common members)

Each row is | `path` | types | meaning |. A path is a member name, "a.b"
for a member of an object member, "a[]" for the elements of an array "a",
"a.*" for every member of an object with free keys. Types are a comma list
of integer, number, string, boolean, object, array, null, absent (the member
may be missing) and shape names.

Checked: every member is documented, every member not marked absent is
present, every value has one of the documented types.

Usage as a program: jsondoc.py DOCS_JSON_MD < document
"""
import json
import re
import sys

BUILTIN = {"integer", "number", "string", "boolean", "object", "array", "null", "absent"}


def load_tables(path):
    """{section: {member path: set of types}} from docs/json.md."""
    sections, current = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            head = re.match(r"^## (.*)$", line)
            if head:
                title = head.group(1).strip()
                m = re.match(r"^(Shape|Command) `([^`]+)`$", title)
                current = m.group(2) if m else title
                sections.setdefault(current, {})
                continue
            row = re.match(r"^\| `([^`]+)` \| ([^|]+) \|", line)
            if row and current is not None:
                types = {t.strip() for t in row.group(2).split(",")}
                sections[current][row.group(1)] = types
    return sections


class Checker:
    def __init__(self, sections):
        self.sections = sections
        self.errors = []

    def fail(self, where, msg):
        self.errors.append("%s: %s" % (where or "(document)", msg))

    def value(self, v, types, table, path, where):
        if v is None:
            ok = "null" in types
        elif isinstance(v, bool):
            ok = "boolean" in types
        elif isinstance(v, int):
            ok = "integer" in types or "number" in types
        elif isinstance(v, float):
            ok = "number" in types
        elif isinstance(v, str):
            ok = "string" in types
        elif isinstance(v, list):
            ok = "array" in types
            if ok:
                elem = table.get(path + "[]", {"object"})
                for i, e in enumerate(v):
                    self.value(e, elem, table, path + "[]", "%s[%d]" % (where, i))
        elif isinstance(v, dict):
            shapes = [t for t in types if t not in BUILTIN]
            ok = "object" in types or bool(shapes)
            if "object" in types:
                self.members(v, table, path, where)
            elif shapes:
                if len(shapes) != 1 or shapes[0] not in self.sections:
                    self.fail(where, "undefined shape %s in docs/json.md" % shapes)
                else:
                    self.members(v, self.sections[shapes[0]], "", where)
        else:
            ok = False
        if not ok:
            self.fail(where, "%s is not of the documented type (%s)"
                      % (json.dumps(v)[:60], ", ".join(sorted(types))))

    def members(self, obj, table, path, where):
        prefix = path + "." if path else ""
        for key, v in obj.items():
            sub = prefix + key
            types = table.get(sub, table.get(prefix + "*"))
            if types is None:
                self.fail(where, "member '%s' is not documented" % key)
                continue
            self.value(v, types, table, sub, (where + "." if where else "") + key)
        for doc_path, types in table.items():
            if not doc_path.startswith(prefix) or "absent" in types:
                continue
            name = doc_path[len(prefix):]
            if not name or "." in name or name == "*" or name.endswith("[]"):
                continue
            if name not in obj:
                self.fail(where, "documented member '%s' is missing" % name)


def check(doc, sections):
    """A list of problems (empty when doc matches docs/json.md)."""
    c = Checker(sections)
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    command = doc.get("command")
    if "error" in doc:
        table = dict(sections.get("Common members", {}))
        table.update(sections.get("Error document", {}))
    elif command in sections:
        table = dict(sections.get("Common members", {}))
        table.update(sections[command])
    else:
        return ["no section for command %r in docs/json.md" % (command,)]
    c.members(doc, table, "", "")
    return c.errors


def main():
    sections = load_tables(sys.argv[1])
    data = sys.stdin.buffer.read()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        print("not valid UTF-8 JSON: %s" % exc)
        return 1
    problems = check(doc, sections)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
