"""The chart's layout (``kvgen.layout`` in charts/kvgen/templates/context/_context.tpl and the defines it
includes), translated from Go's template language into Python: kvgen/context/layout.py.

The layout is written once, in the chart; kvgen runs this translation of it (pure Python, no Helm or
Go at run time), with the functions of kvgen.context.gotmpl giving each call Go's and Sprig's
meaning. ``scripts/regenerate`` runs ``python -m tools.gotemplate``; a test fails when layout.py is
stale, and the parity tests hold what it computes equal to what Helm computes from the same template.

What is translated (anything else is refused, naming the define and the action):
- ``define``; ``if``/``else if``/``else``; ``range`` over a list, a map (in key order) or an integer,
  with one or two variables or none, and its ``else``; ``with`` and its ``else``; ``end``;
- ``$x := P`` (a variable of the enclosing block: an inner one of the same name is another variable)
  and ``$x = P``; text, and ``{{ P }}`` writing P as Go prints it;
- pipelines: literals, ``$x.a.b``, ``.a.b``, ``(P).a``, functions of kvgen.context.gotmpl.FUNCTIONS,
  ``and``/``or`` (which stop at their first deciding value, as Go's do), ``not``, ``include`` (a
  constant or computed define name), a method value called with arguments (``$s.F.Get "x"``),
  and ``X | f a`` (X as f's last argument).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvgen.context import gotmpl

_REPO = Path(__file__).resolve().parent.parent
CHART_TEMPLATES = _REPO / "charts" / "kvgen" / "templates"
OUTPUT = _REPO / "kvgen" / "context" / "layout.py"
ROOT = "kvgen.layout"
# defines named at run time (include (printf "kvgen.context.%s" $piece)): every one of this prefix
DYNAMIC_PREFIXES = ("kvgen.context.",)

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<raw>`[^`]*`)
    | (?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
    | (?P<var>\$\w*)
    | (?P<field>(?:\.[A-Za-z_]\w*)+)
    | (?P<dot>\.)
    | (?P<punct>[()|])
    | (?P<word>[A-Za-z_]\w*)
    )""",
    re.X,
)


class TranslationError(ValueError):
    pass


# ----------------------------------------------------------------------------- reading


@dataclass
class Node:
    kind: str  # text | out | assign | declare | if | range | with
    text: str = ""  # text; the pipeline's source
    var: str = ""  # assign/declare: the variable; range: the element's
    key: str = ""  # range with two variables: the index's or key's
    branches: list[tuple[str | None, list[Node]]] = field(default_factory=list)  # if: (condition, body)
    body: list[Node] = field(default_factory=list)
    otherwise: list[Node] = field(default_factory=list)


def defines(text: str, source: str) -> dict[str, list[Node]]:
    """Every define of one template file, as a tree of nodes (whitespace trimmed as Go trims it)."""
    pieces: list[tuple[str, str]] = []  # ("text", t) | ("action", a)
    pos = 0
    for m in _ACTION.finditer(text):
        chunk = text[pos : m.start()]
        if m.group(1):
            chunk = chunk.rstrip()
        pieces.append(("text", chunk))
        pieces.append(("action", m.group(2).strip()))
        pos = m.end()
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
    pieces.append(("text", text[pos:]))
    out: dict[str, list[Node]] = {}
    stack: list[tuple[str, Any]] = []  # (kind, node or define name)
    current: list[Node] | None = None
    for kind, value in pieces:
        if kind == "text":
            if current is not None and value:
                current.append(Node("text", value))
            continue
        action = value
        if action.startswith("/*"):
            continue
        head = action.split(None, 1)[0] if action else ""
        if head == "define":
            name = re.fullmatch(r'define\s+"([^"]+)"', action)
            if not name or current is not None:
                raise TranslationError(f"{source}: {{{{ {action} }}}}: a define at the top level, named")
            current = out.setdefault(name[1], [])
            stack.append(("define", name[1]))
            continue
        if current is None:
            continue  # outside a define: what Helm renders of the file itself, not the layout's
        if head == "if":
            node = Node("if", branches=[(action[2:].strip(), [])])
            current.append(node)
            stack.append(("if", (node, current)))
            current = node.branches[-1][1]
        elif head == "range":
            node = _range(action, source)
            current.append(node)
            stack.append(("range", (node, current)))
            current = node.body
        elif head == "with":
            held = re.fullmatch(r"(\$\w+)\s*:=\s*(.*)", action[4:].strip(), re.S)
            node = Node("with", text=held[2], var=held[1]) if held else Node("with", text=action[4:].strip())
            current.append(node)
            stack.append(("with", (node, current)))
            current = node.body
        elif head == "else":
            if not stack or stack[-1][0] == "define":
                raise TranslationError(f"{source}: {{{{ {action} }}}}: else outside a block")
            block, (node, _parent) = stack[-1]
            cond = action[4:].strip()
            if block == "if":
                if cond.startswith("if "):
                    node.branches.append((cond[3:].strip(), []))
                elif not cond:
                    node.branches.append((None, []))
                else:
                    raise TranslationError(f"{source}: {{{{ {action} }}}}: unknown else")
                current = node.branches[-1][1]
            elif not cond:
                current = node.otherwise
            else:
                raise TranslationError(f"{source}: {{{{ {action} }}}}: else {cond} is not translated")
        elif head == "end":
            block, data = stack.pop()
            if block == "define":
                current = None
            else:
                current = data[1]
        elif head in ("template", "block", "break", "continue"):
            current.append(Node("unsupported", text=action))  # refused if the layout reaches it
        else:
            assigned = re.fullmatch(r"(\$\w*)\s*(:?=)\s*(.*)", action, re.S)
            if assigned:
                current.append(Node("declare" if assigned[2] == ":=" else "assign", text=assigned[3], var=assigned[1]))
            else:
                current.append(Node("out", text=action))
    if stack:
        raise TranslationError(f"{source}: {stack[-1][0]} without end")
    return out


def _range(action: str, source: str) -> Node:
    m = re.fullmatch(r"range\s+(?:(\$\w+)\s*(?:,\s*(\$\w+))?\s*:=\s*)?(.*)", action, re.S)
    if not m:
        raise TranslationError(f"{source}: {{{{ {action} }}}}: cannot read the range")
    first, second, pipeline = m.groups()
    if second:
        return Node("range", text=pipeline, key=first, var=second)
    return Node("range", text=pipeline, var=first or "")


# ----------------------------------------------------------------------------- writing Python


def mangle(name: str) -> str:
    return "t_" + re.sub(r"\W", "_", name)


@dataclass
class _Scope:
    names: dict[str, str] = field(default_factory=dict)  # $x -> its Python name


class _Writer:
    def __init__(self, name: str, known: set[str]) -> None:
        self.name = name
        self.known = known  # every define the module holds
        self.lines: list[str] = []
        self.scopes: list[_Scope] = [_Scope({"$": "dot0"})]
        self.counter = 0
        self.dot = "dot0"
        self.functions: set[str] = set()  # of gotmpl.FUNCTIONS, called

    def fail(self, action: str, why: str) -> TranslationError:
        return TranslationError(f"define {self.name!r}: {{{{ {action} }}}}: {why}")

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}{self.counter}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    # variables
    def lookup(self, var: str, action: str) -> str:
        for scope in reversed(self.scopes):
            if var in scope.names:
                return scope.names[var]
        raise self.fail(action, f"{var} is not declared")

    def declare(self, var: str) -> str:
        """A variable of the innermost block: another Python name when an outer block has one of that name."""
        if var == "$_":
            py = "_"
        elif any(var in s.names for s in self.scopes[:-1]):
            py = self.fresh(f"v_{var[1:]}_")
        else:
            py = f"v_{var[1:]}"
        self.scopes[-1].names[var] = py
        return py

    # expressions
    def expr(self, source: str) -> str:
        tokens = self.tokens(source)
        out, rest = self.pipeline(tokens, source)
        if rest:
            raise self.fail(source, f"unexpected {rest[0]!r}")
        return out

    def tokens(self, source: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        pos, end = 0, len(source.rstrip())
        while pos < end:
            m = _TOKEN.match(source, pos)
            if not m or m.end() == pos:
                raise self.fail(source, f"cannot read {source[pos:]!r}")
            kind = m.lastgroup
            assert kind is not None
            text = m[kind]
            if kind == "field" and m.start(kind) == pos and out and (out[-1][0] == "var" or out[-1] == ("punct", ")")):
                kind = "chain"  # $x.a, (P).a: fields of what comes just before
            out.append((kind, text))
            pos = m.end()
        return out

    def pipeline(self, tokens: list[tuple[str, str]], source: str) -> tuple[str, list[tuple[str, str]]]:
        value: str | None = None
        while True:
            cmd, tokens = self.command(tokens, source, value)
            value = cmd
            if tokens and tokens[0] == ("punct", "|"):
                tokens = tokens[1:]
                continue
            return value, tokens

    def command(
        self, tokens: list[tuple[str, str]], source: str, piped: str | None
    ) -> tuple[str, list[tuple[str, str]]]:
        operands: list[tuple[str, str, bool]] = []  # (python, kind, is a function name)
        while tokens and tokens[0] not in (("punct", "|"), ("punct", ")")):
            if tokens[0][0] == "word" and tokens[0][1] not in ("true", "false", "nil") and not operands:
                operands.append((tokens[0][1], "word", True))
                tokens = tokens[1:]
                continue
            op, tokens = self.operand(tokens, source)
            operands.append((op, "value", False))
        if not operands:
            raise self.fail(source, "an empty command")
        head, _, is_fn = operands[0]
        args = [o[0] for o in operands[1:]] + ([piped] if piped is not None else [])
        if is_fn:
            return self.function(head, args, source), tokens
        if args:  # a method value with arguments
            return f"gt.call({head}, {', '.join(args)})", tokens
        return head, tokens

    def operand(self, tokens: list[tuple[str, str]], source: str) -> tuple[str, list[tuple[str, str]]]:
        kind, text = tokens[0]
        tokens = tokens[1:]
        if kind == "punct" and text == "(":
            inner, tokens = self.pipeline(tokens, source)
            if not tokens or tokens[0] != ("punct", ")"):
                raise self.fail(source, "( without )")
            tokens = tokens[1:]
            value = f"({inner})"
        elif kind == "str":
            value = repr(_go_string(text))
        elif kind == "raw":
            value = repr(text[1:-1])
        elif kind == "num":
            value = text
        elif kind == "var":
            value = self.lookup(text, source)
        elif kind == "dot":
            value = self.dot
        elif kind == "field":
            value = self.fields(self.dot, text)
        elif kind == "word" and text in ("true", "false", "nil"):
            value = {"true": "True", "false": "False", "nil": "None"}[text]
        elif kind == "word":  # a function as an argument: called with none (list, dict)
            value = self.function(text, [], source)
        else:
            raise self.fail(source, f"unexpected {text!r}")
        if tokens and tokens[0][0] == "chain":  # $x.a.b, (P).a
            value = self.fields(value, tokens[0][1])
            tokens = tokens[1:]
        return value, tokens

    def fields(self, base: str, chain: str) -> str:
        for name in chain.split(".")[1:]:
            base = f"field({base}, {name!r})"
        return base

    def function(self, name: str, args: list[str], source: str) -> str:
        if name == "and":
            return "(" + " and ".join(args) + ")"
        if name == "or":
            return "(" + " or ".join(args) + ")"
        if name == "not":
            (arg,) = args
            return f"(not truth({arg}))"
        if name == "include":
            target, arg = args
            literal = re.fullmatch(r"'([^'\\]*)'", target)
            if literal:
                if literal[1] not in self.known:
                    raise self.fail(source, f"include of {literal[1]!r}, which the layout does not hold")
                return f"{mangle(literal[1])}({arg})"
            return f"include({target}, {arg})"
        if name in ("gt", "ge", "lt", "le"):
            a, b = args
            op = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}[name]
            return f"({a} {op} {b})"
        if name not in gotmpl.FUNCTIONS:
            raise self.fail(source, f"{name} is not a function kvgen.context.gotmpl has")
        self.functions.add(name)
        return f"f_{name}({', '.join(args)})"

    # statements
    def block(self, nodes: list[Node], depth: int) -> None:
        start = len(self.lines)
        for node in nodes:
            self.node(node, depth)
        if len(self.lines) == start:
            self.emit(depth, "pass")

    def node(self, node: Node, depth: int) -> None:
        if node.kind == "unsupported":
            raise self.fail(node.text, "not translated")
        if node.kind == "text":
            self.emit(depth, f"o.append({node.text!r})")
        elif node.kind == "out":
            value = self.expr(node.text)
            self.emit(depth, f"o.append(gt.output({value}))")
        elif node.kind == "declare":
            value = self.expr(node.text)
            self.emit(depth, f"{self.declare(node.var)} = {value}")
        elif node.kind == "assign":
            value = self.expr(node.text)
            self.emit(depth, f"{self.lookup(node.var, node.text)} = {value}")
        elif node.kind == "if":
            for i, (cond, body) in enumerate(node.branches):
                if cond is None:
                    self.emit(depth, "else:")
                else:
                    self.emit(depth, f"{'if' if i == 0 else 'elif'} truth({self.expr(cond)}):")
                self.scoped(body, depth + 1)
        elif node.kind == "with":
            held = self.fresh("w")
            self.emit(depth, f"{held} = {self.expr(node.text)}")
            self.emit(depth, f"if truth({held}):")
            saved, self.dot = self.dot, held
            self.scopes.append(_Scope())
            if node.var:
                self.emit(depth + 1, f"{self.declare(node.var)} = {held}")
            self.block(node.body, depth + 1)
            self.scopes.pop()
            self.dot = saved
            if node.otherwise:
                self.emit(depth, "else:")
                self.scoped(node.otherwise, depth + 1)
        elif node.kind == "range":
            items = self.fresh("items")
            self.emit(depth, f"{items} = list(gt.range_items({self.expr(node.text)}, {bool(node.key)}))")
            self.scopes.append(_Scope())
            element = self.declare(node.var) if node.var else self.fresh("e")
            target = f"{self.declare(node.key)}, {element}" if node.key else element
            self.emit(depth, f"for {target} in {items}:")
            saved, self.dot = self.dot, element
            self.block(node.body, depth + 1)
            self.dot = saved
            self.scopes.pop()
            if node.otherwise:
                self.emit(depth, f"if not {items}:")
                self.scoped(node.otherwise, depth + 1)

    def scoped(self, nodes: list[Node], depth: int) -> None:
        self.scopes.append(_Scope())
        self.block(nodes, depth)
        self.scopes.pop()


def _go_string(literal: str) -> str:
    """A Go interpreted string literal's value."""
    import ast

    return str(ast.literal_eval(literal))


def closure(all_defines: dict[str, list[Node]], root: str) -> list[str]:
    """The defines ``root`` reaches, in name order (computed include names: every define of
    DYNAMIC_PREFIXES)."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in all_defines:
            raise TranslationError(f"include of {name!r}: no such define in the chart")
        seen.add(name)
        text = _source_text(all_defines[name])
        todo += re.findall(r'include "([^"]+)"', text)
        if re.search(r"include \(", text):
            todo += [n for n in all_defines if n.startswith(DYNAMIC_PREFIXES)]
    return sorted(seen)


def _source_text(nodes: list[Node]) -> str:
    out = []
    for n in nodes:
        out.append(n.text)
        for cond, body in n.branches:
            out.append(cond or "")
            out.append(_source_text(body))
        out.append(_source_text(n.body))
        out.append(_source_text(n.otherwise))
    return "\n".join(out)


def chart_defines(replaced: dict[str, str] | None = None) -> dict[str, tuple[str, list[Node]]]:
    """Every define of the chart's *.tpl files (``replaced``: a file's text, by its path in the repository)."""
    out: dict[str, tuple[str, list[Node]]] = {}
    for path in sorted(CHART_TEMPLATES.rglob("*.tpl")):
        rel = str(path.relative_to(_REPO))
        text = (replaced or {}).get(rel) or path.read_text(encoding="utf-8")
        for name, nodes in defines(text, rel).items():
            out[name] = (rel, nodes)
    return out


def module(found: dict[str, tuple[str, list[Node]]], names: list[str]) -> str:
    """A Python module holding the defines ``names`` of ``found`` (name -> (source file, nodes))."""
    used: set[str] = set()
    bodies: list[str] = []
    for name in names:
        source, nodes = found[name]
        w = _Writer(name, set(names))
        w.emit(1, "o: list[str] = []")
        w.block(nodes, 1)
        used |= w.functions
        bodies += ["", f"def {mangle(name)}(dot0):", f'    """{source}: define {name!r}."""', *w.lines]
        bodies += ['    return "".join(o)', ""]
    head = [
        '"""Generated by tools/gotemplate.py from the chart\'s templates: do not edit (scripts/regenerate).',
        "",
        "The layout of kvgen's objects (``kvgen.layout`` and the defines it includes), translated from Go's template",
        'language; kvgen.context.gotmpl gives each function its Go and Sprig meaning."""',
        "",
        "# ruff: noqa",
        "# mypy: ignore-errors",
        "from __future__ import annotations",
        "",
        "from kvgen.context import gotmpl as gt",
        "",
        "field, truth = gt.field, gt.truth",
        *[f"f_{fn} = gt.FUNCTIONS[{fn!r}]" for fn in sorted(used)],
        "",
    ]
    tail = ["", "DEFINES = {", *[f"    {name!r}: {mangle(name)}," for name in names], "}", "", ""]
    tail += [
        "def include(name, dot):",
        '    """Helm\'s include of a define named at run time."""',
        "    if name not in DEFINES:",
        '        raise gt.TemplateError(f"no template {name!r} associated with the layout")',
        "    return DEFINES[name](dot)",
        "",
    ]
    return "\n".join(head + bodies + tail)


def translate(replaced: dict[str, str] | None = None) -> str:
    """kvgen/context/layout.py's text (``replaced``: chart files' texts, by path, in place of theirs)."""
    found = chart_defines(replaced)
    return module(found, closure({k: v[1] for k, v in found.items()}, ROOT))


def load(text: str) -> dict[str, Any]:
    """A translated module's namespace (the tests)."""
    namespace: dict[str, Any] = {}
    exec(compile(text, "layout", "exec"), namespace)
    return namespace


def translate_text(text: str, source: str = "x.tpl") -> dict[str, Any]:
    """Every define of ``text``, translated and loaded: define name -> function (the tests)."""
    found = {name: (source, nodes) for name, nodes in defines(text, source).items()}
    return dict(load(module(found, sorted(found)))["DEFINES"])


def main(argv: list[str]) -> int:
    text = translate()
    if argv[1:2] == ["--check"]:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is stale: run scripts/regenerate", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(_REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
