"""kvgen's Jinja2 object templates (``templates/*.j2``), generated from the chart's.

The object templates exist once, in ``charts/kvgen/templates``: thin layouts of the context
(kvgen.context.types.Context). ``scripts/regenerate`` runs ``python -m tools.chart_templates`` to
translate them into the Jinja2 templates kvgen renders with, and a test fails when those are
stale. Only the small part of Go's template language that a layout needs is translated; anything
else is refused, naming the file and the action:

- ``{{ toJson X }}`` and ``{{ toYaml X }}`` (both ``{{ X | json }}``: kvgen reads the output and writes
  block YAML itself), ``dict K V ...``, comments, ``if``/``else``/``else if``/``end``,
  ``range $x := X``, ``eq``, ``ne``, ``and``, ``or``, ``not``;
- ``$c := include "kvgen.context" . | fromJson`` (kvgen passes the context as ``c``);
- ``define "kvgen.NAME"`` with ``$x := .`` (a macro), and ``include "kvgen.NAME" X | nindent N``.

A path used as a condition is true when its key is present and not empty, as in Go (the context
leaves absent values out): ``{% if x is defined and x %}``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kvgen.core.errors import KvgenError
from kvgen.render import templates as render

_REPO = Path(__file__).resolve().parent.parent  # a source checkout: the chart is not in the wheel
CHART_TEMPLATES = _REPO / "charts" / "kvgen" / "templates"
JINJA_TEMPLATES = _REPO / "templates"
# the chart's template -> kvgen's: every object template (render.TEMPLATES), and the helper they include
SOURCES = {name.removesuffix(".j2"): name for name in render.TEMPLATES} | {"_pod.tpl": "_pod.yaml.j2"}

_ACTION = re.compile(r"\{\{(- )?/\*(?P<comment>.*?)\*/( -)?\}\}|\{\{(- )?(?P<action>.*?)( -)?\}\}", re.S)
_TOKEN = re.compile(r'\s*(\(|\)|\||"(?:[^"\\]|\\.)*"|\$\w+(?:\.\w+)*|\.(?:\w+(?:\.\w+)*)?|-?\d+|\w+)')


class TranslationError(KvgenError, ValueError):
    pass


@dataclass
class _Expr:
    text: str
    path: bool = False  # a plain value path: as a condition, it must also be present


def _cond(e: _Expr) -> str:
    return f"({e.text} is defined and {e.text})" if e.path else e.text


@dataclass
class _Translator:
    source: str
    defines: dict[str, str]  # "kvgen.NAME" -> the generated file that holds its macro
    imports: dict[str, str] = field(default_factory=dict)  # macro -> generated file

    def fail(self, action: str, why: str) -> TranslationError:
        return TranslationError(f"{self.source}: {{{{ {action} }}}}: {why}")

    def tokens(self, text: str) -> list[str]:
        out, pos = [], 0
        while pos < len(text.rstrip()):
            m = _TOKEN.match(text, pos)
            if not m:
                raise self.fail(text, f"cannot read {text[pos:]!r}")
            out.append(m[1])
            pos = m.end()
        return out

    def operand(self, tok: str, rest: list[str]) -> _Expr:
        if tok == "(":
            inner = self.pipeline(rest, closing=True)
            return _Expr(f"({inner.text})" if not inner.path else inner.text, inner.path)
        if tok.startswith("$"):
            return _Expr(tok[1:], path=True)
        if tok == ".":
            return _Expr("dot", path=True)
        if tok.startswith("."):
            return _Expr(f"dot{tok}", path=True)
        if tok.startswith('"') or re.fullmatch(r"-?\d+", tok):
            return _Expr(tok)
        raise self.fail(tok, "not a value")

    def command(self, rest: list[str], piped: _Expr | None) -> _Expr:
        head = rest.pop(0)
        args: list[_Expr] = []
        while rest and rest[0] not in ("|", ")"):
            args.append(self.operand(rest.pop(0), rest))
        if piped is not None:
            args.append(piped)
        if not re.fullmatch(r"[a-zA-Z]\w*", head):
            if args:
                raise self.fail(head, "a value cannot take arguments")
            return self.operand(head, rest)
        return self.function(head, args)

    def function(self, name: str, args: list[_Expr]) -> _Expr:
        if name in ("eq", "ne") and len(args) == 2:
            return _Expr(f"{args[0].text} {'==' if name == 'eq' else '!='} {args[1].text}")
        if name in ("and", "or") and len(args) >= 2:
            return _Expr(f" {name} ".join(_cond(a) for a in args))
        if name == "hasKey" and len(args) == 2:  # a key that may hold 0 (a set number)
            return _Expr(f"{args[1].text} in {args[0].text}")
        if name == "not" and len(args) == 1:
            return _Expr(f"not {_cond(args[0])}")
        if name in ("toJson", "toYaml") and len(args) == 1:
            # kvgen parses the templates' output and writes it as block YAML itself: JSON is YAML
            return _Expr(f"{args[0].text} | json")
        if name == "dict" and args and len(args) % 2 == 0:
            pairs = zip(args[::2], args[1::2], strict=True)
            return _Expr("{" + ", ".join(f"{k.text}: {v.text}" for k, v in pairs) + "}")
        if name == "include" and len(args) == 2 and args[0].text in self.defines:
            macro = args[0].text.strip('"').removeprefix("kvgen.")
            self.imports[macro] = self.defines[args[0].text]
            return _Expr(f"{macro}({args[1].text})")
        if name == "nindent" and len(args) == 2:
            return _Expr(f'"\\n" ~ {args[1].text} | indent({args[0].text}, first=True)')
        raise self.fail(name, f"{name} with {len(args)} argument(s) is not translated")

    def pipeline(self, rest: list[str], closing: bool = False) -> _Expr:
        result = self.command(rest, None)
        while rest and rest[0] == "|":
            rest.pop(0)
            result = self.command(rest, result)
        if closing:
            if not rest or rest.pop(0) != ")":
                raise self.fail(" ".join(rest), "unbalanced parentheses")
        elif rest:
            raise self.fail(" ".join(rest), "unexpected")
        return result

    def expression(self, text: str) -> _Expr:
        return self.pipeline(self.tokens(text))

    def translate(self, text: str) -> str:
        out: list[str] = []
        blocks: list[str] = []
        pos = 0
        for m in _ACTION.finditer(text):
            out.append(text[pos : m.start()])
            pos = m.end()
            if m["comment"] is not None:
                left, right = ("-" if m[1] else ""), ("-" if m[3] else "")
                out.append(f"{{#{left}{m['comment']}{right}#}}")
                continue
            left, right = ("-" if m[4] else ""), ("-" if m[6] else "")
            out.append(self.action(m["action"].strip(), left, right, blocks))
        if blocks:
            raise TranslationError(f"{self.source}: {blocks[-1]} without end")
        out.append(text[pos:])
        return "".join(out)

    def action(self, action: str, left: str, right: str, blocks: list[str]) -> str:
        def tag(body: str) -> str:
            return f"{{%{left} {body} {right}%}}"

        word = action.split(None, 1)[0]
        rest = action[len(word) :].strip()
        if word == "if":
            blocks.append("if")
            return tag(f"if {_cond(self.expression(rest))}")
        if word == "else":
            if rest.startswith("if "):
                return tag(f"elif {_cond(self.expression(rest[3:]))}")
            return tag("else")
        if word == "range":
            m = re.fullmatch(r"\$(\w+) := (.+)", rest, re.S)
            if not m:
                raise self.fail(action, "range needs one variable: range $x := LIST")
            blocks.append("for")
            return tag(f"for {m[1]} in {self.expression(m[2]).text}")
        if word == "define":
            name = rest.strip('"')
            if f'"{name}"' not in self.defines:
                raise self.fail(action, "not a define kvgen's templates use")
            blocks.append("macro")
            return tag(f"macro {name.removeprefix('kvgen.')}(dot)")
        if word == "end":
            if not blocks:
                raise self.fail(action, "end without a block")
            return tag(f"end{blocks.pop()}")
        m = re.fullmatch(r"\$(\w+) := (.+)", action, re.S)
        if m and m[2] == 'include "kvgen.context" . | fromJson':
            if m[1] != "c":
                raise self.fail(action, "kvgen passes the context as $c")
            return f"{{#{left} c: the context (kvgen.context.types.Context) {right}#}}"
        if m and m[2] == ".":
            return tag(f"set {m[1]} = dot")
        if m:
            raise self.fail(action, "a layout assigns only the context ($c) and a define's argument")
        return f"{{{{{left} {self.expression(action).text} {right}}}}}"


def _defines(sources: dict[str, str]) -> dict[str, str]:
    out = {}
    for source, target in sources.items():
        for name in re.findall(
            r'\{\{-? define ("kvgen\.\w+") -?\}\}', (CHART_TEMPLATES / source).read_text(encoding="utf-8")
        ):
            out[name] = target
    return out


def generate() -> dict[str, str]:
    """Generated file name -> text, for every template in SOURCES."""
    defines = _defines(SOURCES)
    out = {}
    for source, target in SOURCES.items():
        t = _Translator(f"charts/kvgen/templates/{source}", defines)
        body = t.translate((CHART_TEMPLATES / source).read_text(encoding="utf-8"))
        header = (
            f"{{#- Generated from charts/kvgen/templates/{source} by scripts/regenerate "
            "(python -m tools.chart_templates): edit the chart's template, not this file. -#}\n"
        )
        imports = "".join(f'{{%- from "{file}" import {macro} -%}}\n' for macro, file in sorted(t.imports.items()))
        out[target] = header + imports + body
    return out


def main() -> int:
    for name, text in generate().items():
        (JINJA_TEMPLATES / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
