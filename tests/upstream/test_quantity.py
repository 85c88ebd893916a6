"""Port of apimachinery pkg/api/resource/quantity_test.go TestQuantityParse (valid and invalid tables) and
TestParseQuantityString against kdiagnose.model.quantity.

Each valid case's upstream expectation (decQuantity(mantissa, exponent)) is written as the exact value it
denotes; the format (DecimalSI/BinarySI/DecimalExponent) is not modelled. Skipped: " 1" and "1 " (kdiagnose
parses like Quantity.UnmarshalJSON, which trims blanks), "1e4294967297" (kdiagnose rejects any exponent
above 10^4 outright), String()/formatting, arithmetic and fuzz tests.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kdiagnose.model.quantity import QuantityError, parse_quantity

KI = 1024


def dec(i: int, exponent: int) -> Fraction:
    return Fraction(i) * Fraction(10) ** exponent


MAX_ALLOWED = Fraction(2**63 - 1)

VALID = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    ("1", dec(1, 0)),
    ("1Ki", dec(1024, 0)),
    ("8Ki", dec(8 * KI, 0)),
    ("7Mi", dec(7 * KI**2, 0)),
    ("6Gi", dec(6 * KI**3, 0)),
    ("5Ti", dec(5 * KI**4, 0)),
    ("4Pi", dec(4 * KI**5, 0)),
    ("3Ei", dec(3 * KI**6, 0)),
    ("10Ti", dec(10 * KI**4, 0)),
    ("100Ti", dec(100 * KI**4, 0)),
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("100.035k", dec(100035, 0)),
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # Things that saturate/round (up to the nano grid, and BinarySI capped at 2^63-1)
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", MAX_ALLOWED),
    ("9223372036854775807Ki", MAX_ALLOWED),
    ("12E", dec(12, 18)),
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", dec(KI**2 // 2, 0)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    # Things written by trolls
    ("0.000000000001Ki", dec(2, -9)),
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
]


@pytest.mark.parametrize(("text", "want"), [pytest.param(t, w, id=t) for t, w in VALID])
def test_quantity_parse(text: str, want: Fraction) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize(("text", "want"), [pytest.param(t, w, id=t) for t, w in VALID])
def test_quantity_parse_negative_and_explicit_plus(text: str, want: Fraction) -> None:
    # "Try the negative version of everything" / "Try everything with an explicit +"
    assert parse_quantity("-" + text) == -want
    assert parse_quantity("+" + text) == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(t, id=t)
        for t in ["", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-"]
    ],
)
def test_quantity_parse_invalid(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # TestParseQuantityString: "." and "-." split into num "0", denom "" (a valid zero).
        pytest.param(".", dec(0, 0), id="."),
        pytest.param("-.", dec(0, 0), id="-."),
        pytest.param("0.025Ti", dec(274877906944, -1), id="0.025Ti"),
        pytest.param("1.025Ti", Fraction(1025, 1000) * KI**4, id="1.025Ti"),
        pytest.param("-1.025Ti", -Fraction(1025, 1000) * KI**4, id="-1.025Ti"),
        pytest.param("1E-3", dec(1, -3), id="1E-3"),
        # parseQuantityString defaults a missing number to "0", so a bare suffix or sign parses as zero.
        pytest.param("Gi", dec(0, 0), id="Gi"),
        pytest.param("-", dec(0, 0), id="-"),
    ],
)
def test_parse_quantity_string(text: str, want: Fraction) -> None:
    assert parse_quantity(text) == want
