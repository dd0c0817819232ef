"""What Go's text/template and Helm's Sprig functions do, in Python: the runtime of the layout that
tools/gotemplate.py translates from the chart (kvgen/context/layout.py).

Only what the translated templates use is here, each with the Go semantics the chart's output depends
on: a template's truth (an empty string, list or map, 0, false and nil are false), a map's missing key
reading as nil, Sprig's ``merge`` (mergo: a key the destination lacks or holds empty is taken from the
source, maps merged key by key), Go's integer division, ``printf``'s verbs, ``%v``'s floats and
encoding/json's bytes. Values are JSON's: dict, list, str, int, float, bool, None. An error Helm would
fail the render with raises TemplateError.
"""

from __future__ import annotations

import copy
import hashlib
import math
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from kvgen.core.errors import KvgenError
from kvgen.data.connector import dumps


class TemplateError(KvgenError, RuntimeError):
    """A function failed where Helm's render would fail."""


# ----------------------------------------------------------------------------- values


def truth(x: Any) -> bool:
    """text/template's truth: false, 0, nil and an empty string, list or map are false."""
    if x is None:
        return False
    if isinstance(x, (bool, int, float, str, list, dict, tuple)):
        return bool(x)
    return True


def kind(x: Any) -> str:
    """reflect's Kind name of a value as Helm holds it (Sprig's kindOf)."""
    if x is None:
        return "invalid"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int64"
    if isinstance(x, float):
        return "float64"
    if isinstance(x, str):
        return "string"
    if isinstance(x, (list, tuple)):
        return "slice"
    if isinstance(x, dict):
        return "map"
    return "func" if callable(x) else "struct"


def field(x: Any, name: str) -> Any:
    """``X.name``: a map's key (nil when missing), or an object's attribute (the chart's .Files)."""
    if isinstance(x, dict):
        return x.get(name)
    if x is None:
        raise TemplateError(f"nil pointer evaluating interface {{}}.{name}")
    if hasattr(x, name):
        return getattr(x, name)
    raise TemplateError(f"can't evaluate field {name} in type {kind(x)}")


def index(x: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(x, dict):
            x = x.get(k)
        elif isinstance(x, (list, tuple, str)):
            i = to_int64(k)
            if not 0 <= i < len(x):
                raise TemplateError(f"error calling index: index out of range: {i}")
            x = x[i]
        else:
            raise TemplateError(f"error calling index: cannot index {kind(x)}")
    return x


def range_items(x: Any, two: bool) -> Iterator[Any]:
    """What ``range`` visits: a list's (index, element), a map's (key, value) in key order, an integer's 0..n-1."""
    if x is None:
        return iter(())
    if isinstance(x, dict):
        keys = sorted(x)
        return iter([(k, x[k]) for k in keys] if two else [x[k] for k in keys])
    if isinstance(x, (list, tuple)):
        return iter(list(enumerate(x)) if two else list(x))
    if isinstance(x, int) and not isinstance(x, bool):
        return iter([(i, i) for i in range(x)] if two else list(range(x)))
    raise TemplateError(f"range can't iterate over {go_str(x)}")


# ----------------------------------------------------------------------------- printing


def go_float(f: float, threshold: int = 21) -> str:
    """%v of a float64: the shortest digits that round-trip, in exponent form when the exponent is
    below -4 or at least ``threshold`` (21 for %v)."""
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if math.isnan(f):
        return "NaN"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, exp = _shortest(f)
    sign = "-" if f < 0 else ""
    if exp < -4 or exp >= threshold:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return sign + _fixed(digits, exp)


def _shortest(f: float) -> tuple[str, int]:
    """(significant digits, decimal exponent of the first) of repr(f), the shortest round-trip form."""
    text = repr(abs(f))
    mantissa, _, e = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0") if frac != "0" else ""
    digits = (whole + frac).lstrip("0")
    exp = int(e or 0) + len(whole) - 1
    if whole == "0":  # 0.00123: the exponent of the first non-zero digit
        exp = int(e or 0) - (len(frac) - len(frac.lstrip("0"))) - 1
    return digits.rstrip("0") or "0", exp


def _fixed(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if len(digits) <= exp + 1:
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def go_str(x: Any) -> str:
    """fmt's %v."""
    if x is None:
        return "<nil>"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return go_float(x)
    if isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        return "[" + " ".join(go_str(v) for v in x) + "]"
    if isinstance(x, dict):
        return "map[" + " ".join(f"{k}:{go_str(x[k])}" for k in sorted(x)) + "]"
    return str(x)


def output(x: Any) -> str:
    """What ``{{ X }}`` writes: %v, and "<no value>" for nil."""
    return "<no value>" if x is None else go_str(x)


def to_string(x: Any) -> str:
    """Sprig's toString (strval)."""
    return x if isinstance(x, str) else go_str(x)


def go_quote(s: str) -> str:
    """strconv.Quote: a Go string literal (printable runes as they are)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out) + '"'


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_VERB = re.compile(r"%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


@cache
def _parsed(fmt: str) -> tuple[tuple[str, tuple[str, str | None, str | None, str] | None], ...]:
    """A format as (text, verb) pieces: verb is (flags, width, precision, letter), None after the last."""
    out: list[tuple[str, tuple[str, str | None, str | None, str] | None]] = []
    pos = 0
    for m in _VERB.finditer(fmt):
        flags, width, precision, verb = m.groups()
        out.append((fmt[pos : m.start()], (flags, width, precision, verb)))
        pos = m.end()
    out.append((fmt[pos:], None))
    return tuple(out)


def printf(fmt: str, *args: Any) -> str:
    """fmt.Sprintf for the verbs the templates use: %s %d %v %q %c %x %f (with width, zero padding, precision)."""
    out: list[str] = []
    n = 0
    for text, spec in _parsed(fmt):
        out.append(text)
        if spec is None:
            continue
        flags, width, precision, verb = spec
        if verb == "%":
            out.append("%")
            continue
        if n >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[n]
        n += 1
        text = _verb(verb, arg, precision)
        if width and len(text) < int(width):
            pad = int(width) - len(text)
            if "-" in flags:
                text += " " * pad
            elif "0" in flags and verb in "dxf":
                sign = text[0] if text[:1] in "+-" else ""
                text = sign + "0" * pad + text[len(sign) :]
            else:
                text = " " * pad + text
        out.append(text)
    if n < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{_type(a)}={go_str(a)}" for a in args[n:]) + ")")
    return "".join(out)


def _type(x: Any) -> str:
    k = kind(x)
    return {"slice": "[]interface {}", "map": "map[string]interface {}", "invalid": "<nil>"}.get(k, k)


def _verb(verb: str, arg: Any, precision: str | None) -> str:
    is_int = isinstance(arg, int) and not isinstance(arg, bool)
    if verb == "v":
        return go_str(arg)
    if verb == "s" and isinstance(arg, str):
        return arg
    if verb == "s" and isinstance(arg, (list, dict)):
        return go_str(arg)
    if verb == "q" and isinstance(arg, str):
        return go_quote(arg)
    if verb == "d" and is_int:
        return str(arg)
    if verb == "c" and is_int:
        return chr(arg)
    if verb == "x" and is_int:
        return format(arg, "x")
    if verb == "x" and isinstance(arg, str):
        return arg.encode().hex()
    if verb == "f" and isinstance(arg, float):
        return f"{arg:.{int(precision) if precision is not None else 6}f}"
    return f"%!{verb}({_type(arg)}={go_str(arg)})"


# ----------------------------------------------------------------------------- JSON


def _json_float(f: float) -> str:
    """encoding/json's float64: fixed notation from 1e-6 to 1e21, else exponent (e-07 written e-7)."""
    if math.isinf(f) or math.isnan(f):
        raise TemplateError(f"json: unsupported value: {go_float(f)}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        digits, exp = _shortest(f)
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{'-' if f < 0 else ''}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}".replace("e-0", "e-")
    digits, exp = _shortest(f)
    return ("-" if f < 0 else "") + _fixed(digits, exp)


def _json_string(s: str) -> str:
    return dumps(s)  # encoding/json's string: kvgen.data.connector writes it for every JSON kvgen emits


# The values toJson wrote lately, by their text: fromJson of that text gives the value again, copied,
# with its maps' keys in the order they were set (Go's maps have none; kvgen writes a map's keys in order).
_WRITTEN: dict[str, Any] = {}
_WRITTEN_MAX = 256


def to_json(x: Any) -> str:
    """Sprig's toJson: encoding/json's Marshal (keys sorted, HTML characters escaped)."""
    text = marshal(x)
    if isinstance(x, (dict, list)):
        if len(_WRITTEN) >= _WRITTEN_MAX:
            _WRITTEN.clear()
        _WRITTEN[text] = copy.deepcopy(x)  # as written: a later change to the map is not in the text
    return text


def marshal(x: Any, indent: str | None = None, level: int = 0) -> str:
    """encoding/json's Marshal (keys sorted, HTML characters escaped), or MarshalIndent with ``indent``."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return _json_float(x)
    if isinstance(x, str):
        return _json_string(x)
    if isinstance(x, (list, tuple)):
        if not x:
            return "[]"
        items = [marshal(v, indent, level + 1) for v in x]
        return _wrap("[", "]", items, indent, level)
    if isinstance(x, dict):
        if not x:
            return "{}"
        sep = ":" if indent is None else ": "
        items = [_json_string(str(k)) + sep + marshal(x[k], indent, level + 1) for k in sorted(x)]
        return _wrap("{", "}", items, indent, level)
    raise TemplateError(f"json: unsupported type: {kind(x)}")


def _wrap(open_: str, close: str, items: list[str], indent: str | None, level: int) -> str:
    if indent is None:
        return open_ + ",".join(items) + close
    inner = "\n" + indent * (level + 1)
    return open_ + inner + ("," + inner).join(items) + "\n" + indent * level + close


def _written(text: Any, want: type) -> Any:
    found = _WRITTEN.get(text) if isinstance(text, str) else None
    return copy.deepcopy(found) if isinstance(found, want) else None


def from_json(text: Any) -> Any:
    import json

    again = _written(text, dict)
    if again is not None:
        return again
    try:
        found = json.loads(to_string(text))
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def from_json_array(text: Any) -> Any:
    import json

    again = _written(text, list)
    if again is not None:
        return again
    try:
        found = json.loads(to_string(text))
    except ValueError:
        return []
    return found if isinstance(found, list) else []


# ----------------------------------------------------------------------------- conversions and numbers


def to_int64(x: Any) -> int:
    """Sprig's int64 (spf13/cast ToInt64): a float truncated, a string parsed, nil 0."""
    if x is None:
        return 0
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return int(x) if math.isfinite(x) else 0
    if isinstance(x, str):
        try:
            return int(x.removesuffix(".0") if re.fullmatch(r"-?\d+\.0+", x) else x, 0)
        except ValueError:
            return 0
    return 0


def to_float64(x: Any) -> float:
    if x is None:
        return 0.0
    if isinstance(x, (bool, int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return 0.0
    return 0.0


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise TemplateError("error calling div: runtime error: integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def add(*xs: Any) -> int:
    return sum(to_int64(x) for x in xs)


def sub(a: Any, b: Any) -> int:
    return to_int64(a) - to_int64(b)


def mul(*xs: Any) -> int:
    out = 1
    for x in xs:
        out *= to_int64(x)
    return out


def div(a: Any, b: Any) -> int:
    return _trunc_div(to_int64(a), to_int64(b))


def mod(a: Any, b: Any) -> int:
    x, y = to_int64(a), to_int64(b)
    return x - y * _trunc_div(x, y)


def go_max(a: Any, *rest: Any) -> int:
    return max([to_int64(a), *(to_int64(x) for x in rest)])


def go_min(a: Any, *rest: Any) -> int:
    return min([to_int64(a), *(to_int64(x) for x in rest)])


# ----------------------------------------------------------------------------- comparisons


def eq(a: Any, *others: Any) -> bool:
    """text/template's eq: a equals any of the others."""
    return any(_same(a, b) for b in others)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def ne(a: Any, b: Any) -> bool:
    return not _same(a, b)


# ----------------------------------------------------------------------------- lists and maps


def go_list(*xs: Any) -> list[Any]:
    return list(xs)


def go_dict(*kv: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i in range(0, len(kv), 2):
        out[to_string(kv[i])] = kv[i + 1] if i + 1 < len(kv) else ""
    return out


def _listed(x: Any, what: str) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return list(x)
    raise TemplateError(f"error calling {what}: Cannot {what} on type {kind(x)}")


def append(lst: Any, v: Any) -> list[Any]:
    return [*_listed(lst, "append"), v]


def concat(*lists: Any) -> list[Any]:
    out: list[Any] = []
    for lst in lists:
        if lst is None:
            raise TemplateError(
                "error calling concat: runtime error: invalid memory address or nil pointer dereference"
            )
        out += _listed(lst, "concat")
    return out


def first(lst: Any) -> Any:
    items = _listed(lst, "first")
    return items[0] if items else None


def rest(lst: Any) -> list[Any]:
    return _listed(lst, "rest")[1:]


def has(needle: Any, lst: Any) -> bool:
    return lst is not None and any(_same(needle, x) for x in _listed(lst, "has"))


def until(n: Any) -> list[int]:
    return list(range(to_int64(n)))


def until_step(start: Any, stop: Any, step: Any) -> list[int]:
    return list(range(to_int64(start), to_int64(stop), to_int64(step)))


def sort_alpha(lst: Any) -> list[str]:
    return sorted(to_string(x) for x in _listed(lst, "sortAlpha") if x is not None)


def join(sep: Any, lst: Any) -> str:
    items = lst if isinstance(lst, (list, tuple)) else [lst]
    return to_string(sep).join(to_string(x) for x in items if x is not None)


def keys(*maps: Any) -> list[str]:
    return sorted(k for m in maps for k in m)


def set_(d: Any, k: Any, v: Any) -> Any:
    d[to_string(k)] = v
    return d


def unset(d: Any, k: Any) -> Any:
    d.pop(to_string(k), None)
    return d


def has_key(d: Any, k: Any) -> bool:
    return isinstance(d, dict) and to_string(k) in d


def pick(d: Any, *ks: Any) -> dict[str, Any]:
    return {k: d[k] for k in map(to_string, ks) if k in d}


def omit(d: Any, *ks: Any) -> dict[str, Any]:
    drop = set(map(to_string, ks))
    return {k: v for k, v in d.items() if k not in drop}


def deep_copy(x: Any) -> Any:
    return copy.deepcopy(x)


def _empty_value(x: Any) -> bool:
    """mergo's isEmptyValue of a map's element."""
    return not truth(x)


def _mergo(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """mergo.Merge (Sprig's merge) of two maps: a key dst lacks, or holds empty (nil, "", 0, false, an
    empty list or map), takes src's value; two maps are merged key by key; anything else in dst stays."""
    for k, sv in src.items():
        dv = dst.get(k)
        if isinstance(sv, dict) and isinstance(dv, dict):
            _mergo(dv, sv)
        if k in dst and not _empty_value(dst[k]) and isinstance(sv, (dict, list)):
            continue
        if sv is not None and (k not in dst or _empty_value(dst[k])):
            dst[k] = sv


def _mergo_overwrite(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """mergo.MergeWithOverwrite (Sprig's mergeOverwrite): the source's values win, maps merged key by key;
    a key the destination holds keeps its place."""
    for k, sv in src.items():
        dv = dst.get(k)
        if isinstance(sv, dict) and isinstance(dv, dict):
            _mergo_overwrite(dv, sv)
        else:
            dst[k] = sv


def merge_overwrite(dst: Any, *srcs: Any) -> Any:
    for src in srcs:
        if src:
            _mergo_overwrite(dst, src)
    return dst


def merge(dst: Any, *srcs: Any) -> Any:
    for src in srcs:
        if src:
            _mergo(dst, src)
    return dst


def default(d: Any, *given: Any) -> Any:
    if not given:
        return d
    return given[0] if truth(given[0]) else d


def ternary(a: Any, b: Any, cond: Any) -> Any:
    return a if cond is True else b


def empty(x: Any) -> bool:
    return not truth(x)


def kind_is(k: Any, x: Any) -> bool:
    return kind(x) == k


# ----------------------------------------------------------------------------- strings


def replace(old: Any, new: Any, s: Any) -> str:
    return to_string(s).replace(to_string(old), to_string(new))


def contains(sub_: Any, s: Any) -> bool:
    return to_string(sub_) in to_string(s)


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def regex_match(pattern: Any, s: Any) -> bool:
    return _regex(to_string(pattern)).search(to_string(s)) is not None


def upper(s: Any) -> str:
    return to_string(s).upper()


def sha256sum(s: Any) -> str:
    return hashlib.sha256(to_string(s).encode("utf-8")).hexdigest()


def trunc(c: Any, s: Any) -> str:
    """Sprig's trunc: the first c bytes of s, or with a negative c the last -c (the whole string when shorter)."""
    text = to_string(s).encode("utf-8")
    n = int(c)
    if n < 0 and len(text) + n > 0:
        text = text[len(text) + n :]
    elif n >= 0 and len(text) > n:
        text = text[:n]
    return text.decode("utf-8", errors="surrogateescape")


def fail(message: Any) -> str:
    raise TemplateError(to_string(message))


def length(x: Any) -> int:
    if x is None:
        raise TemplateError("error calling len: len of nil pointer")
    return len(x)


def call(fn: Any, *args: Any) -> Any:
    """A method value called with arguments (the chart's ``$s.F.Get "files/..."``)."""
    if not callable(fn):
        raise TemplateError(f"can't call {go_str(fn)}")
    return fn(*args)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "add": add,
    "append": append,
    "concat": concat,
    "contains": contains,
    "deepCopy": deep_copy,
    "default": default,
    "dict": go_dict,
    "div": div,
    "empty": empty,
    "eq": eq,
    "fail": fail,
    "first": first,
    "float64": to_float64,
    "fromJson": from_json,
    "fromJsonArray": from_json_array,
    "has": has,
    "hasKey": has_key,
    "index": index,
    "int": to_int64,
    "int64": to_int64,
    "join": join,
    "keys": keys,
    "kindIs": kind_is,
    "len": length,
    "list": go_list,
    "max": go_max,
    "merge": merge,
    "mergeOverwrite": merge_overwrite,
    "min": go_min,
    "mod": mod,
    "mul": mul,
    "ne": ne,
    "omit": omit,
    "pick": pick,
    "printf": printf,
    "regexMatch": regex_match,
    "replace": replace,
    "rest": rest,
    "set": set_,
    "sha256sum": sha256sum,
    "trunc": trunc,
    "sortAlpha": sort_alpha,
    "sub": sub,
    "ternary": ternary,
    "toJson": to_json,
    "toPrettyJson": lambda x: marshal(x, "  "),
    "toString": to_string,
    "unset": unset,
    "until": until,
    "untilStep": until_step,
    "upper": upper,
}
