"""Kubernetes resource quantities as exact numbers, parsed as apimachinery's resource.Quantity does."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "QuantityError",
    "display_bytes",
    "display_quantity",
    "format_quantity",
    "milli_value",
    "parse_quantity",
    "resource_value",
    "value",
]


class QuantityError(ValueError):
    """A string that resource.ParseQuantity would reject."""


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# Same grammar as apimachinery's parseQuantityString: sign, digits with optional fraction, then one suffix.
# ASCII digits only, as Go's byte checks; a number without digits ("", "-", ".", "k") is 0 upstream
# (parseQuantityString defaults num to "0"), only the empty string is rejected.
_RE = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_NANO = Fraction(1, 10**9)
# maxAllowed: BinarySI quantities are capped at 2^63-1 (ParseQuantity's "simple cap").
_MAX_ALLOWED = Fraction(2**63 - 1)


@lru_cache(maxsize=4096)
def _parse_str(text: str) -> Fraction:
    m = _RE.match(text)
    if not m:
        raise QuantityError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    if not text:
        raise QuantityError("quantities must match the regular expression: ''")
    sign, whole, frac, suffix = m.groups()
    number = Fraction(int(whole or "0"))
    if frac:
        number += Fraction(int(frac), 10 ** len(frac))
    suffix = suffix or ""
    if suffix in _BINARY:
        mult: Fraction = Fraction(_BINARY[suffix])
    elif suffix in _DECIMAL:
        mult = _DECIMAL[suffix]
    else:
        exp = int(suffix[1:])
        if abs(exp) > 10_000:
            raise QuantityError(f"quantity exponent out of range: {text!r}")
        mult = Fraction(10) ** exp
    result = number * mult
    if result.denominator != 1 and (result / _NANO).denominator != 1:
        # Rounded up (away from zero) to the nano grid: "if you want some resources, you should get some".
        result = -((-result) // _NANO) * _NANO
    if suffix in _BINARY and result > _MAX_ALLOWED:
        result = _MAX_ALLOWED
    return -result if sign == "-" else result


def parse_quantity(raw: object) -> Fraction:
    """Exact value of a quantity given as a string or a JSON/YAML number."""
    if isinstance(raw, bool):
        raise QuantityError(f"invalid quantity {raw!r}")
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        # A YAML/JSON number is unmarshalled from its literal text; repr round-trips that text.
        if raw != raw or raw in (float("inf"), float("-inf")):
            raise QuantityError(f"invalid quantity {raw!r}")
        return _parse_str(repr(raw).replace("e+", "e"))
    if isinstance(raw, str):
        return _parse_str(raw.strip())
    raise QuantityError(f"invalid quantity {raw!r}")


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def value(raw: object) -> int:
    """Quantity.Value(): rounded up to an integer."""
    return _ceil(parse_quantity(raw))


def milli_value(raw: object) -> int:
    """Quantity.MilliValue(): thousandths, rounded up."""
    return _ceil(parse_quantity(raw) * 1000)


def resource_value(name: str, raw: object) -> int:
    """The integer the scheduler compares for a resource: millicores for cpu, units for the rest."""
    return milli_value(raw) if name == "cpu" else value(raw)


def format_quantity(name: str, amount: int) -> str:
    """Human form of a scheduler integer: '500m'/'2' for cpu, binary suffixes for byte resources."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for suffix, mult in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % mult == 0:
                return f"{amount // mult}{suffix}"
        for suffix, dec in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
            if amount and amount % dec == 0:
                return f"{amount // dec}{suffix}"
    return str(amount)


def display_bytes(n: int) -> str:
    """Binary units for reading: exact when that reads well (6Gi, 512Mi), else two decimals of the largest
    unit (4.19Gi rather than 4394396Ki)."""
    exact = format_quantity("memory", n)
    digits = exact.rstrip("KMGTPEikmgtpe")
    if not digits.isdigit() or int(digits) < 1024:
        return exact
    for suffix, mult in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= mult:
            text = f"{n / mult:.2f}".rstrip("0").rstrip(".")
            return exact if float(text) >= 1024 else text + suffix  # 1023.999Mi must not read as 1024Mi
    return exact  # pragma: no cover - n >= 1024 always matches Ki


def display_quantity(name: str, amount: int) -> str:
    """A scheduler integer as every report shows it: cpu in cores (0.5, 2), bytes in binary units (3.95Gi),
    the rest as counts. format_quantity is the exact form, for patches."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount / 1000:g}"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return display_bytes(amount)
    return format_quantity(name, amount)
