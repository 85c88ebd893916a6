"""Consumable capacity (DRAConsumableCapacity, v1.36+): what a request consumes of a device's capacity and
whether it still fits, mirroring structured/internal/incubating/consumable_capacity.go of v1.36.5 and v1.37.2.

Each capacity the device defines is consumed: the requested amount rounded up by the capacity's
requestPolicy (validRange min/step, validValues), or, when the request does not name it, the policy's
default or else the whole capacity. A share fits when no consumption violates its policy and, added to what
allocated shares and the shares being allocated already consume, stays within the capacity's value.

Quantities are exact (Fraction); Value() is the ceiling, MilliValue() the ceiling in milli-units, as in
apimachinery. v1.37 rounds ranges in milli-units (DRAFractionalCapacityRange) and aborts on a request it
cannot represent or a negative capacity (`strict`); v1.36 rounds integer values and skips the device on any
capacity error.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from kdiagnose.model.quantity import QuantityError, parse_quantity

__all__ = ["CapacityError", "consumed_capacity", "request_fits_capacity"]

Obj = dict[str, Any]
_INT64_MAX = 2**63 - 1


class CapacityError(Exception):
    """A capacity check that cannot be answered: fatal in v1.37 (the allocation aborts), a skipped device in
    v1.36. The text is upstream's."""


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _q(raw: Any) -> Fraction | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def _value(q: Fraction) -> int:
    """resource.Quantity.Value(): rounded up to an integer."""
    return math.ceil(q)


def _safe_milli(q: Fraction) -> int | None:
    """safeMilliValue: q in milli-units when that is lossless, else None."""
    m = q * 1000
    return int(m) if m.denominator == 1 else None


def _use_milli(rng: Obj, fractional: bool) -> bool:
    """useMilli: fractional ranges on, every bound lossless in milli-units and a step of at least 1m."""
    if not fractional:
        return False
    for key in ("min", "max", "step"):
        q = _q(rng.get(key))
        if q is None:
            continue
        m = _safe_milli(q)
        if m is None:
            return False
        if key == "step" and m < 1:
            return False
    return True


def _go_trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_trunc_div(a, b)


def _round_up_range(req: Fraction, rng: Obj, fractional: bool, strict: bool) -> Fraction:
    lo = _q(rng.get("min")) or Fraction(0)
    if req < lo:
        return lo
    step_q = _q(rng.get("step"))
    if step_q is None:
        return req
    if _use_milli(rng, fractional):
        req_m = _safe_milli(req)
        if req_m is None:
            raise CapacityError(
                f"capacity request cannot be represented in the device's range arithmetic: request {req} is not "
                "a representable milli value"
            )
        step_m = math.ceil(step_q * 1000)
        lo_m = math.ceil(lo * 1000)
        added = req_m - lo_m
        n = _go_trunc_div(added, step_m)
        if _go_mod(added, step_m) != 0:
            n += 1
        if strict and n > (_INT64_MAX - lo_m) // step_m:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: rounding request "
                f"{req} up to the next step passes the milli-value range"
            )
        return Fraction(lo_m + step_m * n, 1000)
    if strict and req > _INT64_MAX:
        raise CapacityError(
            f"capacity request cannot be represented in the device's range arithmetic: request {req} exceeds MaxInt64"
        )
    r, step, m = _value(req), _value(step_q), _value(lo)
    added = r - m
    n = _go_trunc_div(added, step) if step else 0
    if step and _go_mod(added, step) != 0:
        n += 1
    if strict and m >= 0 and step and n > (_INT64_MAX - m) // step:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: rounding request "
            f"{req} up to the next step passes MaxInt64"
        )
    return Fraction(m + step * n)


def _round_up_values(req: Fraction, values: list[Any]) -> Fraction:
    for v in values:
        q = _q(v)
        if q is not None and req <= q:
            return q
    return req


def _consumed(req: Fraction | None, cap: Obj, fractional: bool, strict: bool) -> Fraction:
    """calculateConsumedCapacity."""
    policy = cap.get("requestPolicy")
    if req is None:
        default = _q(_d(policy).get("default")) if isinstance(policy, dict) else None
        return default if default is not None else (_q(cap.get("value")) or Fraction(0))
    if not isinstance(policy, dict):
        return req
    rng = policy.get("validRange")
    if isinstance(rng, dict) and rng.get("min") is not None:
        return _round_up_range(req, rng, fractional, strict)
    if policy.get("validValues") is not None:
        return _round_up_values(req, policy["validValues"] if isinstance(policy["validValues"], list) else [])
    return req


def _violates(c: Fraction, policy: Any, fractional: bool) -> bool:
    """violatesPolicy. Upstream compares the default by Go struct equality; a value equal to the default
    is taken as the default here (a default always satisfies its own policy)."""
    if not isinstance(policy, dict):
        return False
    default = _q(policy.get("default"))
    if default is not None and c == default:
        return False
    rng = policy.get("validRange")
    if isinstance(rng, dict):
        hi = _q(rng.get("max"))
        if hi is not None and c > hi:
            return True
        step_q = _q(rng.get("step"))
        if step_q is not None:
            lo = _q(rng.get("min")) or Fraction(0)
            if _use_milli(rng, fractional):
                m = _safe_milli(c)
                if m is None:
                    return True
                req, step, base = m, math.ceil(step_q * 1000), math.ceil(lo * 1000)
            else:
                req, step, base = _value(c), _value(step_q), _value(lo)
            if step and _go_mod(req - base, step) != 0:
                return True
        return False
    values = policy.get("validValues")
    if isinstance(values, list) and values:
        return not any(_q(v) == c for v in values)
    return False


def consumed_capacity(
    requested: dict[str, Fraction] | None, caps: Obj, *, fractional: bool
) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what a new share consumes of every capacity the device defines."""
    return {
        str(name): _consumed((requested or {}).get(str(name)), _d(cap), fractional, False)
        for name, cap in caps.items()
    }


def request_fits_capacity(
    current: dict[str, Fraction] | None,
    requested: dict[str, Fraction] | None,
    caps: Obj,
    allocating: dict[str, Fraction] | None,
    *,
    fractional: bool,
    strict: bool,
) -> bool:
    """CmpRequestOverCapacity: the request's consumption fits the device beside `current` (allocated
    shares) and `allocating` (shares of this allocation attempt). Raises CapacityError."""
    if requested and any(name not in caps for name in requested):
        if strict:
            return False  # v1.37: another device may define it
        raise CapacityError("some requested capacity has not been defined")
    consumed: dict[str, Fraction] = {}
    for name, cap in caps.items():
        c = _consumed((requested or {}).get(str(name)), _d(cap), fractional, strict)
        if strict and c < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        consumed[str(name)] = c
    for name, cap in caps.items():
        key = str(name)
        c = consumed[key]
        if _violates(c, _d(cap).get("requestPolicy"), fractional):
            return False
        total = (current or {}).get(key, Fraction(0)) + c + (allocating or {}).get(key, Fraction(0))
        if total > (_q(_d(cap).get("value")) or Fraction(0)):
            return False
    return True
