"""Quantity parsing as apimachinery's resource.Quantity does it (values written out by hand)."""

from __future__ import annotations

import pytest

from kdiagnose.model.quantity import QuantityError, milli_value, resource_value, value


@pytest.mark.parametrize(
    ("raw", "want_value", "want_milli"),
    [
        pytest.param("1e3", 1000, 1_000_000, id="an exponent without a dot is a plain number"),
        pytest.param("1E3", 1000, 1_000_000, id="a capital E followed by digits is an exponent, not exa"),
        pytest.param("0.5", 1, 500, id="half a unit rounds Value up and is 500 milli"),
        pytest.param("1.5Gi", 1_610_612_736, 1_610_612_736_000, id="a fractional binary suffix is exact"),
        pytest.param("100M", 100_000_000, 100_000_000_000, id="M is the decimal mega suffix"),
        pytest.param("5e8", 500_000_000, 500_000_000_000, id="5e8 is five hundred million"),
        pytest.param("12Ti", 13_194_139_533_312, 13_194_139_533_312_000, id="Ti is 2 to the 40th"),
        pytest.param("100m", 1, 100, id="milli suffix"),
        pytest.param("1Ki", 1024, 1_024_000, id="Ki is 1024"),
        pytest.param("1k", 1000, 1_000_000, id="lower-case k is kilo"),
        pytest.param("1n", 1, 1, id="nano rounds up to one milli"),
        pytest.param("1e-3", 1, 1, id="a negative exponent gives one milli"),
        pytest.param("+2", 2, 2000, id="an explicit plus sign"),
        pytest.param("-1", -1, -1000, id="a negative quantity"),
        pytest.param(" 2 ", 2, 2000, id="surrounding blanks are ignored"),
        pytest.param(2, 2, 2000, id="a YAML integer"),
        pytest.param(1000.0, 1000, 1_000_000, id="a YAML float such as 1e3 parsed by a YAML 1.2 loader"),
        pytest.param(0.5, 1, 500, id="a YAML float below one"),
        pytest.param(500000000.0, 500_000_000, 500_000_000_000, id="5e8 as a YAML float"),
    ],
)
def test_quantity_values(raw: object, want_value: int, want_milli: int) -> None:
    assert value(raw) == want_value
    assert milli_value(raw) == want_milli


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty string"),
        pytest.param("abc", id="letters only"),
        pytest.param("1.2.3", id="two decimal points"),
        pytest.param("1Gb", id="an unknown suffix"),
        pytest.param("1 Gi", id="a blank before the suffix"),
        pytest.param("1e", id="an exponent without digits"),
        pytest.param("0x10", id="hexadecimal"),
        pytest.param("1ki", id="lower-case binary prefix"),
        pytest.param(True, id="a boolean"),
        pytest.param(None, id="null"),
        pytest.param(float("nan"), id="not a number"),
    ],
)
def test_invalid_quantities_are_rejected(raw: object) -> None:
    with pytest.raises(QuantityError):
        value(raw)


@pytest.mark.parametrize(
    ("name", "raw", "want"),
    [
        pytest.param("cpu", "1.5", 1500, id="cpu is counted in millicores"),
        pytest.param("cpu", "250m", 250, id="cpu milli stays milli"),
        pytest.param("memory", "512Mi", 536_870_912, id="memory is counted in bytes"),
        pytest.param("nvidia.com/gpu", "2", 2, id="extended resources are counted in units"),
    ],
)
def test_resource_value_units(name: str, raw: str, want: int) -> None:
    assert resource_value(name, raw) == want
