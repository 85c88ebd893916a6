"""load/limits.py check_value (level by level, a level's values sorted by type in comprehensions) against
the recursive definition it replaced, written out here: the same value back (scalar keys made strings, in
order, a later equal key winning), and for a value with one thing out of limits the same error, naming
where the value is (`spec.n`, `[1]`) when it is a value (not a key)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kdiagnose.load.limits import MAX_DEPTH, MAX_NUMBER_DIGITS, LimitError, check_value


def _reference(value: Any, at: str) -> Any:
    path: list[str] = []  # where the walk is: the error names the value's place in the document

    def number(v: Any, is_key: bool = False) -> None:
        place = at if is_key or not path else f"{at}: {''.join(path).lstrip('.')}"
        if isinstance(v, bool):
            return
        if isinstance(v, int):
            if v.bit_length() > MAX_NUMBER_DIGITS * 3.33:
                raise LimitError(f"{place}: integer with more than {MAX_NUMBER_DIGITS} digits")
        elif v != v or v in (float("inf"), float("-inf")):
            raise LimitError(f"{place}: number out of range ({v}); quote it if it is a string")

    def key(k: Any) -> str:
        if isinstance(k, str):
            return k
        if k is None:
            return "null"
        if isinstance(k, bool):
            return "true" if k else "false"
        number(k, is_key=True)
        return str(k)

    def inside(step: str, x: Any, depth: int) -> Any:
        path.append(step)
        try:
            return walk(x, depth)
        finally:
            path.pop()

    def walk(v: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise LimitError(f"{at}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            if not all(type(k) is str for k in v):
                v = {key(k): x for k, x in v.items()}
            return {k: inside(f".{k}", x, depth + 1) if _walked(x) else x for k, x in v.items()}
        if isinstance(v, list):
            return [inside(f"[{i}]", x, depth + 1) if _walked(x) else x for i, x in enumerate(v)]
        if isinstance(v, int | float):
            number(v)
        return v

    return walk(value, 0)


def _walked(x: Any) -> bool:
    return isinstance(x, dict | list | int | float) and not isinstance(x, bool)


def _random_value(rng: random.Random, depth: int) -> Any:
    pick = rng.random()
    if depth > 6 or pick < 0.45:
        return rng.choice(["a", "", "x" * 5, 0, 7, -3, 2**40, 1.5, -0.0, True, False, None, b"raw"])
    if pick < 0.75:
        out: dict[Any, Any] = {}
        for _ in range(rng.randint(0, 5)):
            k = rng.choice(["k", "name", "1", 1, 2.5, True, None, False, "true", "v"])
            out[k] = _random_value(rng, depth + 1)
        return out
    return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]


@pytest.mark.parametrize("seed", range(40))
def test_values_within_limits_come_back_as_the_recursive_walk_makes_them(seed: int) -> None:
    rng = random.Random(seed)
    value = _random_value(rng, 0)
    expected = _reference(copy.deepcopy(value), "doc")
    assert check_value(value, lambda: "doc") == expected
    # Keys in order (== on dicts ignores it).
    got = check_value(copy.deepcopy(value), lambda: "doc")
    assert repr(got) == repr(expected)


def _nested(depth: int, leaf: Any) -> Any:
    v = leaf
    for i in range(depth):
        v = {"k": v} if i % 2 else [v]
    return v


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(_nested(MAX_DEPTH + 1, [["s"]]), id="containers too deep"),
        pytest.param(_nested(MAX_DEPTH + 1, 5), id="a number one level too deep"),
        pytest.param(_nested(MAX_DEPTH + 1, {}), id="an empty mapping one level too deep"),
        pytest.param({"a": [1, {"b": float("nan")}]}, id="nan"),
        pytest.param([{"x": "y"}, float("-inf")], id="-inf"),
        pytest.param({"spec": {"n": 10 ** (MAX_NUMBER_DIGITS + 5)}}, id="a long integer"),
        pytest.param({"m": {10 ** (MAX_NUMBER_DIGITS + 5): "v"}}, id="a long integer as a key"),
        pytest.param({"m": {float("inf"): "v"}}, id="inf as a key"),
        pytest.param(float("nan"), id="a bare nan"),
    ],
)
def test_one_value_out_of_limits_is_the_recursive_walk_s_error(value: Any) -> None:
    with pytest.raises(LimitError) as want:
        _reference(copy.deepcopy(value), "doc")
    with pytest.raises(LimitError) as got:
        check_value(value, lambda: "doc")
    assert str(got.value) == str(want.value)


def test_within_the_depth_limit_passes() -> None:
    # A value at depth MAX_DEPTH (the top is 0) is within the limit, a string below it too.
    value = _nested(MAX_DEPTH, ["s"])
    assert check_value(value, lambda: "doc") is value
    assert check_value(_nested(MAX_DEPTH, 5), lambda: "doc") == _nested(MAX_DEPTH, 5)
