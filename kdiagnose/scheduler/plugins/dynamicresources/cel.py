"""A subset of CEL for DRA device selectors (k8s.io/dynamic-resource-allocation/cel/compile.go).

The environment has one variable, `device`, with `driver`, `attributes` and `capacity`, and from v1.34
`allowMultipleAllocations` (compile.go multiAllocVar: the scheduler compiles stored expressions, whose
environment declares the newest device type whatever DRAConsumableCapacity says). Selecting any other field
of `device` is the checker's `undefined field` compile error. Missing attribute
domains read as an empty map (compile.go's `mapper.Find`), so `device.attributes["x"].model` on a device
without `model` is the runtime error `no such key: model`, as in cel-go.

Supported: literals (int, uint, double, string, bytes-less, bool, null, lists), `.`/`[]` selection, `has()`,
`! - * / % + < <= > >= == != in && || ?:`, the comprehension macros `all`/`exists`/`exists_one`, string
functions (`startsWith`, `endsWith`, `contains`, `matches`, `size`, `lowerAscii`, `upperAscii`, `trim`), the
Kubernetes quantity library (`quantity`, `isQuantity`, `compareTo`, `isGreaterThan`, `isLessThan`, `add`,
`sub`, `asInteger`, `isInteger`, `asApproximateFloat`, `sign`) and semver library (`semver`, `isSemver`,
`major`, `minor`, `patch`, `compareTo`, `isGreaterThan`, `isLessThan`). Anything else raises CelUnsupported
at compile time, so the caller can say so instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kdiagnose.model.quantity import QuantityError, parse_quantity

__all__ = [
    "COST_BUDGET",
    "CelCompileError",
    "CelOverBudget",
    "CelRuntimeError",
    "CelUnsupported",
    "Program",
    "Quantity",
    "Semver",
    "compile_expression",
    "device_env",
    "parse_semver",
]


class CelUnsupported(ValueError):
    """The expression uses syntax or functions this subset does not implement (or does not parse)."""


class CelRuntimeError(ValueError):
    """An evaluation error cel-go would also report (missing key, no matching overload, ...)."""


class CelCompileError(ValueError):
    """A compile error cel-go's checker reports (compile.go: "compilation failed: " + issues.String())."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """apiserver/pkg/cel Quantity: an exact resource.Quantity."""

    value: Fraction


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@dataclass(frozen=True, slots=True)
class Semver:
    """blang/semver v4 Version (build metadata does not take part in comparisons)."""

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def compare(self, other: Semver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre or not other.pre:
            if self.pre == other.pre:
                return 0
            return 1 if not self.pre else -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1


def parse_semver(text: str) -> Semver:
    m = _SEMVER_RE.match(text)
    if not m:
        raise CelRuntimeError(f"could not parse {text!r} as semver")
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


# ---------------------------------------------------------------- lexer

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<float>(?:\d+\.\d+(?:[eE][+-]?\d+)?)|(?:\d+[eE][+-]?\d+)|(?:\.\d+(?:[eE][+-]?\d+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>\d+[uU]?)
  | (?P<string>[rR]?(?:\"\"\"(?:.|\n)*?\"\"\"|'''(?:.|\n)*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[<>!+\-*/%?:.,()\[\]{}])
    """,
    re.VERBOSE,
)

_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "`": "`",
    "?": "?",
}


def _unquote(tok: str) -> str:
    raw = tok[0] in "rR"
    if raw:
        tok = tok[1:]
    q = 3 if tok[:3] in ('"""', "'''") else 1
    body = tok[q:-q]
    if raw:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1] if i + 1 < len(body) else ""
        if n in _ESCAPES:
            out.append(_ESCAPES[n])
            i += 2
        elif n in "xX":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif n == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif n == "U":
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        elif n.isdigit():
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise CelUnsupported(f"invalid escape \\{n}")
    return "".join(out)


def _int_literal(text: str, base: int) -> int:
    """cel-go parses int literals as int64 (uint64 with `u`): anything larger is a compile error, checked on
    the digit count first (Python will not even convert 4,300 digits)."""
    unsigned = text[-1] in "uU"
    digits = text.rstrip("uU")
    value = int(digits, base) if len(digits) <= 24 else 1 << 64
    if (unsigned and value >= 1 << 64) or (not unsigned and value > (1 << 63)):
        raise CelCompileError(f"compilation failed: invalid int literal: {text[:40]}")
    return value


def _tokenize(expr: str) -> list[tuple[str, Any]]:
    toks: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN_RE.match(expr, pos)
        if not m:
            raise CelUnsupported(f"unexpected character {expr[pos]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        text = m.group()
        if kind == "ws":
            continue
        if kind == "float":
            value = float(text)
            if value in (float("inf"), float("-inf")):
                raise CelCompileError(f"compilation failed: invalid double literal: {text[:40]}")
            toks.append(("lit", value))
        elif kind in ("hex", "int"):
            toks.append(("lit", _int_literal(text, 16 if kind == "hex" else 10)))
        elif kind == "string":
            toks.append(("lit", _unquote(text)))
        elif kind == "ident":
            if text in ("true", "false"):
                toks.append(("lit", text == "true"))
            elif text == "null":
                toks.append(("lit", None))
            elif text == "in":
                toks.append(("op", "in"))
            else:
                toks.append(("ident", text))
        else:
            toks.append(("op", text))
    toks.append(("eof", None))
    return toks


# ---------------------------------------------------------------- parser (AST as tuples)

Node = tuple[Any, ...]

_FUNCTIONS = {"size", "quantity", "isQuantity", "semver", "isSemver", "int", "double", "string", "bool"}
_METHODS = {
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "size",
    "lowerAscii",
    "upperAscii",
    "trim",
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "add",
    "sub",
    "asInteger",
    "isInteger",
    "asApproximateFloat",
    "sign",
    "major",
    "minor",
    "patch",
}
_MACROS = {"all", "exists", "exists_one"}
_RELATIONS = {"<", "<=", ">", ">=", "==", "!=", "in"}


# Nesting the evaluator takes (parentheses, `!`/`-` chains, list/call arguments): each parser level costs
# about nine Python frames, so this stays well inside Python's recursion limit. cel-go's parser allows 250;
# deeper expressions are "not evaluated" (with this reason), never a crash.
MAX_NESTING = 48
# Levels of the finished syntax tree (`a + a + ... + a` is as deep as it is long): the evaluator recurses per
# level.
MAX_AST_DEPTH = 200
# k8s.io/api/resource: CELSelectorExpressionMaxLength (10 Ki) and CELSelectorExpressionMaxCost (1,000,000,
# the per-call limit of the API server's CEL environment). The cost counted here is an approximation of
# cel-go's: one per evaluated node, plus the size of strings and lists an operation walks or builds.
MAX_EXPRESSION_LENGTH = 10 * 1024
COST_BUDGET = 1_000_000


class CelOverBudget(CelUnsupported):
    """The expression is over a limit (length, nesting, cost): not evaluated, with the reason."""


class _Parser:
    def __init__(self, toks: list[tuple[str, Any]]) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise CelOverBudget(f"is nested more than {MAX_NESTING} levels deep")

    def peek(self) -> tuple[str, Any]:
        return self.toks[self.i]

    def next(self) -> tuple[str, Any]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, op: str) -> bool:
        if self.toks[self.i] == ("op", op):
            self.i += 1
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.accept(op):
            raise CelUnsupported(f"expected {op!r}, found {self.peek()[1]!r}")

    def parse(self) -> Node:
        e = self.expr()
        if self.peek()[0] != "eof":
            raise CelUnsupported(f"unexpected {self.peek()[1]!r}")
        return e

    def expr(self) -> Node:
        self._enter()
        c = self.or_()
        if self.accept("?"):
            t = self.or_()
            self.expect(":")
            f = self.expr()
            c = ("cond", c, t, f)
        self.depth -= 1
        return c

    def or_(self) -> Node:
        left = self.and_()
        while self.accept("||"):
            left = ("or", left, self.and_())
        return left

    def and_(self) -> Node:
        left = self.rel()
        while self.accept("&&"):
            left = ("and", left, self.rel())
        return left

    def rel(self) -> Node:
        left = self.add()
        while self.peek()[0] == "op" and self.peek()[1] in _RELATIONS:
            op = self.next()[1]
            left = ("binary", op, left, self.add())
        return left

    def add(self) -> Node:
        left = self.mul()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.next()[1]
            left = ("binary", op, left, self.mul())
        return left

    def mul(self) -> Node:
        left = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            op = self.next()[1]
            left = ("binary", op, left, self.unary())
        return left

    def unary(self) -> Node:
        ops: list[str] = []
        while self.peek() in (("op", "!"), ("op", "-")):
            ops.append("not" if self.next()[1] == "!" else "neg")
            if len(ops) > MAX_NESTING:
                raise CelOverBudget(f"is nested more than {MAX_NESTING} levels deep")
        e = self.member()
        for op in reversed(ops):
            e = (op, e)
        return e

    def args(self) -> list[Node]:
        out: list[Node] = []
        if self.accept(")"):
            return out
        while True:
            out.append(self.expr())
            if self.accept(")"):
                return out
            self.expect(",")

    def member(self) -> Node:
        e = self.primary()
        while True:
            if self.accept("."):
                kind, name = self.next()
                if kind != "ident":
                    raise CelUnsupported(f"expected a field name, found {name!r}")
                if self.accept("("):
                    if name in _MACROS:
                        var = self.next()
                        if var[0] != "ident":
                            raise CelUnsupported("macro variable must be an identifier")
                        self.expect(",")
                        body = self.expr()
                        self.expect(")")
                        e = ("macro", name, e, var[1], body)
                        continue
                    if name not in _METHODS:
                        raise CelUnsupported(f"function {name}() is not supported")
                    e = ("call", name, e, self.args())
                else:
                    e = ("select", e, name)
            elif self.accept("["):
                key = self.expr()
                self.expect("]")
                e = ("index", e, key)
            else:
                return e

    def primary(self) -> Node:
        kind, val = self.next()
        if kind == "lit":
            return ("lit", val)
        if kind == "ident":
            if self.accept("("):
                if val == "has":
                    arg = self.expr()
                    self.expect(")")
                    if arg[0] != "select":
                        raise CelUnsupported("has() needs a field selection")
                    return ("has", arg)
                if val not in _FUNCTIONS:
                    raise CelUnsupported(f"function {val}() is not supported")
                return ("call", val, None, self.args())
            return ("ident", val)
        if (kind, val) == ("op", "("):
            e = self.expr()
            self.expect(")")
            return e
        if (kind, val) == ("op", "["):
            items: list[Node] = []
            if not self.accept("]"):
                while True:
                    items.append(self.expr())
                    if self.accept("]"):
                        break
                    self.expect(",")
            return ("list", items)
        raise CelUnsupported(f"unexpected {val!r}")


# ---------------------------------------------------------------- evaluation


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    return type(v).__name__


def _go_type(v: Any) -> str:
    """The Go type of a cel-go value, as `%T` prints it (apiserver/pkg/cel's Quantity/Semver are cel.*)."""
    if isinstance(v, Quantity):
        return "cel.Quantity"
    if isinstance(v, Semver):
        return "cel.Semver"
    return {
        "bool": "types.Bool",
        "int": "types.Int",
        "double": "types.Double",
        "string": "types.String",
        "null_type": "types.Null",
    }.get(_type_name(v), type(v).__name__)


def _eq(a: Any, b: Any) -> bool:
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, Semver):
        return a.compare(b) == 0
    return bool(a == b)


def _cmp(op: str, a: Any, b: Any) -> bool:
    ok = (_is_num(a) and _is_num(b)) or (type(a) is type(b) and isinstance(a, str | bool))
    if not ok:
        raise CelRuntimeError(f"no such overload: {_type_name(a)} {op} {_type_name(b)}")
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _arith(op: str, a: Any, b: Any) -> Any:
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if op == "+" and isinstance(a, list) and isinstance(b, list):
        return a + b
    if not (_is_num(a) and _is_num(b)) or type(a) is not type(b):
        raise CelRuntimeError(f"no such overload: {_type_name(a)} {op} {_type_name(b)}")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if isinstance(a, int):
        if b == 0:
            raise CelRuntimeError("division by zero" if op == "/" else "modulus by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q  # Go truncates toward zero
        return q if op == "/" else a - b * q
    if op == "/":
        return a / b if b else (float("inf") if a > 0 else float("-inf") if a < 0 else float("nan"))
    raise CelRuntimeError(f"no such overload: double {op} double")


def _as_bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise CelRuntimeError(f"no such overload: expected bool, got {_type_name(v)}")
    return v


def _quantity(v: Any) -> Quantity:
    if not isinstance(v, str):
        raise CelRuntimeError(f"no such overload: quantity({_type_name(v)})")
    try:
        return Quantity(parse_quantity(v))
    except QuantityError as e:
        raise CelRuntimeError(f"quantities must match the regular expression: {e}") from None


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def _method(name: str, target: Any, args: list[Any]) -> Any:
    if isinstance(target, str):
        if (
            name in ("startsWith", "endsWith", "contains", "matches")
            and len(args) == 1
            and isinstance(args[0], str)
        ):
            a = args[0]
            if name == "startsWith":
                return target.startswith(a)
            if name == "endsWith":
                return target.endswith(a)
            if name == "contains":
                return a in target
            _spend(len(target) + len(a))
            return _regex(a).search(target) is not None
        if not args:
            if name == "size":
                return len(target)
            if name == "lowerAscii":
                return "".join(c.lower() if c.isascii() else c for c in target)
            if name == "upperAscii":
                return "".join(c.upper() if c.isascii() else c for c in target)
            if name == "trim":
                return target.strip()
    if isinstance(target, list | dict) and name == "size" and not args:
        return len(target)
    if isinstance(target, Quantity):
        if not args:
            if name == "isInteger":
                return target.value.denominator == 1 and -(2**63) <= target.value < 2**63
            if name == "asInteger":
                if target.value.denominator != 1 or not -(2**63) <= target.value < 2**63:
                    raise CelRuntimeError("cannot convert value to integer")
                return int(target.value)
            if name == "asApproximateFloat":
                try:
                    return float(target.value)
                except OverflowError:  # resource.Quantity.AsApproximateFloat64: ±Inf past float64
                    return float("inf") if target.value > 0 else float("-inf")
            if name == "sign":
                return _sign(target.value)
        if len(args) == 1:
            other = args[0]
            if name in ("add", "sub") and (isinstance(other, Quantity) or _is_num(other)):
                ov = other.value if isinstance(other, Quantity) else Fraction(other)
                return Quantity(target.value + ov if name == "add" else target.value - ov)
            if isinstance(other, Quantity):
                c = _sign(target.value - other.value)
                if name == "compareTo":
                    return c
                if name == "isGreaterThan":
                    return c > 0
                if name == "isLessThan":
                    return c < 0
    if isinstance(target, Semver):
        if not args and name in ("major", "minor", "patch"):
            return int(getattr(target, name))
        if len(args) == 1 and isinstance(args[0], Semver):
            c = target.compare(args[0])
            if name == "compareTo":
                return c
            if name == "isGreaterThan":
                return c > 0
            if name == "isLessThan":
                return c < 0
    arg_types = ", ".join(_type_name(a) for a in args)
    raise CelRuntimeError(f"no such overload: {_type_name(target)}.{name}({arg_types})")


def _function(name: str, args: list[Any]) -> Any:
    if len(args) == 1:
        a = args[0]
        if name == "size" and isinstance(a, str | list | dict):
            return len(a)
        if name == "quantity":
            return _quantity(a)
        if name == "isQuantity" and isinstance(a, str):
            try:
                parse_quantity(a)
            except QuantityError:
                return False
            return True
        if name == "semver" and isinstance(a, str):
            return parse_semver(a)
        if name == "isSemver" and isinstance(a, str):
            return _SEMVER_RE.match(a) is not None
        if name == "string" and isinstance(a, str | int | float | bool):
            return ("true" if a else "false") if isinstance(a, bool) else str(a)
        if name == "int" and (_is_num(a) or isinstance(a, str)):
            try:
                return int(a)
            except ValueError:
                raise CelRuntimeError(f"cannot convert {a!r} to int") from None
        if name == "double" and (_is_num(a) or isinstance(a, str)):
            try:
                return float(a)
            except ValueError:
                raise CelRuntimeError(f"cannot convert {a!r} to double") from None
        if name == "bool" and isinstance(a, bool):
            return a
    raise CelRuntimeError(f"no such overload: {name}({', '.join(_type_name(a) for a in args)})")


class _MissingDomain(dict[str, Any]):
    """The empty map compile.go's mapper returns for an attribute/capacity domain the device lacks."""


class _DomainMap(dict[str, Any]):
    """device.attributes / device.capacity: lookups of absent domains give an empty map, not an error."""


def _lookup(container: Any, key: Any) -> Any:
    if isinstance(container, dict) and isinstance(key, list | dict):
        raise CelRuntimeError(f"no such overload: map[{_type_name(key)}]")
    if isinstance(container, dict):
        if key in container:
            return container[key]
        if isinstance(container, _DomainMap):
            return _MissingDomain()
        raise CelRuntimeError(f"no such key: {key}")
    if isinstance(container, list):
        if not _is_num(key) or int(key) != key:
            raise CelRuntimeError(f"no such overload: list[{_type_name(key)}]")
        i = int(key)
        if not 0 <= i < len(container):
            raise CelRuntimeError(f"index out of bounds: {i}")
        return container[i]
    raise CelRuntimeError(f"no such overload: {_type_name(container)}[{_type_name(key)}]")


class _Cost:
    """What is left of COST_BUDGET for one evaluation (shared by the environments of nested macros)."""

    left = COST_BUDGET


_CURRENT: list[_Cost] = []  # the evaluation in progress (evaluate() pushes and pops it)


def _spend(n: int) -> None:
    if not _CURRENT:
        return
    cost = _CURRENT[-1]
    cost.left -= n
    if cost.left < 0:
        raise CelOverBudget(
            f"exceeds the cost budget of {COST_BUDGET:,} (the API server's limit for a selector)"
        )


def _eval(n: Node, env: dict[str, Any]) -> Any:
    kind = n[0]
    _spend(1)
    if kind == "lit":
        return n[1]
    if kind == "ident":
        if n[1] not in env:
            raise CelRuntimeError(f"undeclared reference to '{n[1]}'")
        return env[n[1]]
    if kind == "select":
        return _lookup(_eval(n[1], env), n[2])
    if kind == "index":
        return _lookup(_eval(n[1], env), _eval(n[2], env))
    if kind == "has":
        target = _eval(n[1][1], env)
        if not isinstance(target, dict):
            raise CelRuntimeError(f"invalid type for field selection: {_type_name(target)}")
        return n[1][2] in target
    if kind in ("and", "or"):
        # CEL's logical operators are commutative over errors: false && error == false, true || error == true.
        short = kind == "or"
        errors: list[CelRuntimeError] = []
        for side in (n[1], n[2]):
            try:
                v = _as_bool(_eval(side, env))
            except CelRuntimeError as e:
                errors.append(e)
                continue
            if v == short:
                return short
        if errors:
            raise errors[0]
        return not short
    if kind == "cond":
        return _eval(n[2], env) if _as_bool(_eval(n[1], env)) else _eval(n[3], env)
    if kind == "not":
        return not _as_bool(_eval(n[1], env))
    if kind == "neg":
        v = _eval(n[1], env)
        if not _is_num(v):
            raise CelRuntimeError(f"no such overload: -{_type_name(v)}")
        return -v
    if kind == "list":
        return [_eval(x, env) for x in n[1]]
    if kind == "binary" and n[1] == "+":
        a, b = _eval(n[2], env), _eval(n[3], env)
        if isinstance(a, str | list) and isinstance(b, str | list):
            _spend(len(a) + len(b))  # the concatenation copies both
        return _arith("+", a, b)
    if kind == "binary":
        op = n[1]
        a, b = _eval(n[2], env), _eval(n[3], env)
        if op == "==":
            return _eq(a, b)
        if op == "!=":
            return not _eq(a, b)
        if op == "in":
            if isinstance(b, list):
                _spend(len(b))
                return any(_eq(a, x) for x in b)
            if isinstance(b, dict):
                if isinstance(a, list | dict):
                    raise CelRuntimeError(f"no such overload: {_type_name(a)} in {_type_name(b)}")
                return a in b
            raise CelRuntimeError(f"no such overload: {_type_name(a)} in {_type_name(b)}")
        if op in ("<", "<=", ">", ">="):
            return _cmp(op, a, b)
        return _arith(op, a, b)
    if kind == "call":
        args = [_eval(a, env) for a in n[3]]
        if n[2] is None:
            return _function(n[1], args)
        return _method(n[1], _eval(n[2], env), args)
    if kind == "macro":
        _, name, target_n, var, body = n
        target = _eval(target_n, env)
        if not isinstance(target, list | dict):
            # cel-go evalFold: types.ValOrErr(foldRange, "got '%T', expected iterable type", foldRange).
            raise CelRuntimeError(f"got '{_go_type(target)}', expected iterable type")
        results: list[bool] = []
        for item in list(target):
            inner = dict(env)
            inner[var] = item
            results.append(_as_bool(_eval(body, inner)))
        if name == "all":
            return all(results)
        if name == "exists":
            return any(results)
        return sum(results) == 1
    raise CelUnsupported(f"unknown node {kind}")


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled selector; `matches(device_env)` returns the boolean result or raises CelRuntimeError."""

    expression: str
    ast: Node

    def evaluate(self, device: dict[str, Any]) -> bool:
        """Raises CelRuntimeError as cel-go would, CelOverBudget past the cost budget."""
        _CURRENT.append(_Cost())
        try:
            v = _eval(self.ast, {"device": device})
        finally:
            _CURRENT.pop()
        if not isinstance(v, bool):
            raise CelRuntimeError(f"CEL result of type {_type_name(v)} could not be converted to bool")
        return v


# Identifiers the DRA CEL environment declares besides `device`: the type names usable as values.
_DECLARED = {
    "device",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
}


def _undeclared(n: Node, scope: frozenset[str], out: list[str]) -> None:
    """Identifiers the checker cannot resolve, in source order (macro variables are in scope in the body)."""
    kind = n[0]
    if kind == "ident":
        if n[1] not in scope:
            out.append(n[1])
        return
    if kind == "macro":
        _undeclared(n[2], scope, out)
        _undeclared(n[4], scope | {n[3]}, out)
        return
    if kind == "call":
        if n[2] is not None:
            _undeclared(n[2], scope, out)
        for a in n[3]:
            _undeclared(a, scope, out)
        return
    if kind == "list":
        for x in n[1]:
            _undeclared(x, scope, out)
        return
    if kind == "binary":
        _undeclared(n[2], scope, out)
        _undeclared(n[3], scope, out)
        return
    for x in n[1:]:
        if isinstance(x, tuple) and x and isinstance(x[0], str):
            _undeclared(x, scope, out)


def _display_error(expression: str, pos: int, message: str) -> str:
    """cel-go common.Error.ToDisplayString: `ERROR: <input>:line:col: msg`, the source line, a dotted caret."""
    line_start = expression.rfind("\n", 0, pos) + 1
    line_end = expression.find("\n", pos)
    snippet = expression[line_start : line_end if line_end >= 0 else len(expression)].replace("\t", " ")
    col = pos - line_start
    line = expression.count("\n", 0, pos) + 1
    return f"ERROR: <input>:{line}:{col + 1}: {message}\n | {snippet}\n | {'.' * col}^"


# The fields of the DRA `device` object type (compile.go fieldsV131; fieldsV134ConsumableCapacity adds
# multiAllocVar).
DEVICE_FIELDS_V131 = frozenset({"driver", "attributes", "capacity"})
DEVICE_FIELDS_V134 = DEVICE_FIELDS_V131 | {"allowMultipleAllocations"}


def _undefined_fields(n: Node, scope: frozenset[str], fields: frozenset[str], out: list[str]) -> None:
    """`device.X` selections (and has(device.X)) of fields the device type does not declare, in source order;
    a macro variable named `device` shadows the variable in its body."""
    kind = n[0]
    if kind == "select":
        base = n[1]
        if base[0] == "ident" and base[1] == "device" and "device" not in scope and n[2] not in fields:
            out.append(n[2])
        _undefined_fields(base, scope, fields, out)
        return
    if kind == "macro":
        _undefined_fields(n[2], scope, fields, out)
        _undefined_fields(n[4], scope | {n[3]}, fields, out)
        return
    for x in n[1:]:
        if isinstance(x, tuple) and x and isinstance(x[0], str):
            _undefined_fields(x, scope, fields, out)
        elif isinstance(x, list):
            for y in x:
                if isinstance(y, tuple) and y and isinstance(y[0], str):
                    _undefined_fields(y, scope, fields, out)


def _check(expression: str, ast: Node, fields: frozenset[str] = DEVICE_FIELDS_V134) -> None:
    """The part of cel-go's checker that matters here: references to undeclared variables and selections
    of undefined fields of `device` (reported at the `.`, as cel-go locates a Select node)."""
    names: list[str] = []
    _undeclared(ast, frozenset(_DECLARED), names)
    missing: list[str] = []
    _undefined_fields(ast, frozenset(), fields, missing)
    if not names and not missing:
        return
    positions: dict[str, list[int]] = {}
    # `device . NAME` token runs: the position of the dot, per field name, in source order.
    dots: dict[str, list[int]] = {}
    toks: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(expression):
        m = _TOKEN_RE.match(expression, pos)
        if not m:
            break
        if m.lastgroup == "ident":
            positions.setdefault(m.group(), []).append(m.start())
        if m.lastgroup != "ws":
            toks.append((m.lastgroup or "", m.group(), m.start()))
        pos = m.end()
    for i in range(len(toks) - 2):
        if toks[i][1] == "device" and toks[i + 1][1] == "." and toks[i + 2][0] == "ident":
            dots.setdefault(toks[i + 2][1], []).append(toks[i + 1][2])
    seen: dict[str, int] = {}
    errors: list[tuple[int, str]] = []
    for name in missing:
        i = seen.get("." + name, 0)
        seen["." + name] = i + 1
        occ = dots.get(name, [0])
        at = occ[min(i, len(occ) - 1)]
        errors.append((at, _display_error(expression, at, f"undefined field '{name}'")))
    for name in names:
        i = seen.get(name, 0)
        seen[name] = i + 1
        occ = positions.get(name, [0])
        at = occ[min(i, len(occ) - 1)]
        errors.append(
            (at, _display_error(expression, at, f"undeclared reference to '{name}' (in container '')"))
        )
    errors.sort(key=lambda e: e[0])
    raise CelCompileError("compilation failed: " + "\n".join(e for _, e in errors))


def _ast_depth(ast: Node) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(ast, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        for x in n[1:]:
            if isinstance(x, tuple) and x and isinstance(x[0], str):
                stack.append((x, d + 1))
            elif isinstance(x, list):
                stack.extend((y, d + 1) for y in x if isinstance(y, tuple))
    return deepest


@lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    """CEL's matches() is RE2 (linear time, RE2 syntax): Python's backtracking `re` would run
    `^(a+)+$` against 31 characters for hours."""
    import re2

    try:
        return re2.compile(pattern)
    except re2.error as e:
        raise CelRuntimeError(f"invalid regular expression: {' '.join(str(e).split())}") from None


@lru_cache(maxsize=1024)
def compile_expression(expression: str, fields: frozenset[str] = DEVICE_FIELDS_V134) -> Program:
    """Parse once per distinct expression (and release's device type, `fields`); raises CelUnsupported for
    what this subset cannot evaluate (CelOverBudget past a limit) and CelCompileError for what cel-go's
    checker rejects."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CelOverBudget(f"is longer than {MAX_EXPRESSION_LENGTH} characters (the API server's limit)")
    ast = _Parser(_tokenize(expression)).parse()
    if _ast_depth(ast) > MAX_AST_DEPTH:
        raise CelOverBudget(f"is nested more than {MAX_AST_DEPTH} levels deep")
    _check(expression, ast, fields)
    return Program(expression, ast)


def device_env(
    driver: str, attributes: dict[str, Any], capacity: dict[str, Any], allow_multiple: bool = False
) -> dict[str, Any]:
    """The `device` variable: attributes/capacity keyed by domain (unqualified names belong to the driver);
    `allowMultipleAllocations` is the device's field, false when unset (ptr.Deref in compile.go)."""
    attrs: _DomainMap = _DomainMap()
    for name, value in attributes.items():
        domain, _, ident = name.partition("/") if "/" in name else (driver, "", name)
        attrs.setdefault(domain, {})[ident] = value
    caps: _DomainMap = _DomainMap()
    for name, value in capacity.items():
        domain, _, ident = name.partition("/") if "/" in name else (driver, "", name)
        caps.setdefault(domain, {})[ident] = value
    return {
        "driver": driver,
        "allowMultipleAllocations": allow_multiple,
        "attributes": attrs,
        "capacity": caps,
    }
