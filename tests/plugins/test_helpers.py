"""Shared helpers: default_normalize_score, node selector terms, label selectors."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.plugins.helper.node_selector import (
    RequiredNodeSelector,
    match_label_selector,
    match_node_selector_terms,
)
from kdiagnose.scheduler.plugins.helper.normalize_score import default_normalize_score
from tests.plugins.basic_factories import node


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        pytest.param(
            False, {"a": 1, "b": 2, "c": 4}, {"a": 25, "b": 50, "c": 100}, id="scales to the maximum"
        ),
        pytest.param(False, {"a": 1, "b": 3}, {"a": 33, "b": 100}, id="integer division truncates"),
        pytest.param(True, {"a": 1, "b": 3}, {"a": 67, "b": 0}, id="reverse subtracts from the maximum"),
        pytest.param(False, {"a": 0, "b": 0}, {"a": 0, "b": 0}, id="all zero stays zero"),
        pytest.param(True, {"a": 0, "b": 0}, {"a": 100, "b": 100}, id="all zero reversed gives the maximum"),
    ],
)
def test_default_normalize_score(reverse: bool, scores: dict[str, int], want: dict[str, int]) -> None:
    default_normalize_score(100, reverse, scores)
    assert scores == want


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


LABELS = {"zone": "a", "cores": "8", "gpu": "", "bad-int": "08x"}


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        pytest.param(
            [{"matchExpressions": [expr("zone", "In", "a", "b")]}], True, id="In matches a listed value"
        ),
        pytest.param([{"matchExpressions": [expr("zone", "In", "b")]}], False, id="In rejects other values"),
        pytest.param(
            [{"matchExpressions": [expr("zone", "NotIn", "b")]}], True, id="NotIn passes other values"
        ),
        pytest.param(
            [{"matchExpressions": [expr("rack", "NotIn", "r1")]}], True, id="NotIn passes a missing label"
        ),
        pytest.param([{"matchExpressions": [expr("gpu", "Exists")]}], True, id="Exists with an empty value"),
        pytest.param(
            [{"matchExpressions": [expr("gpu", "DoesNotExist")]}], False, id="DoesNotExist on a present label"
        ),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "4")]}], True, id="Gt compares integers"),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "8")]}], False, id="Gt is strict"),
        pytest.param(
            [{"matchExpressions": [expr("cores", "Lt", "10")]}], True, id="Lt compares integers not strings"
        ),
        pytest.param(
            [{"matchExpressions": [expr("bad-int", "Lt", "100")]}],
            False,
            id="Gt Lt fail on non-integer labels",
        ),
        pytest.param(
            [{"matchExpressions": [expr("cores", "Gt", "four")]}],
            False,
            id="a non-integer Gt operand never matches",
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "In")]}], False, id="In without values is a parse error"
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "Exists", "a")]}],
            False,
            id="Exists with values is a parse error",
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "In", "a b")]}],
            False,
            id="an invalid label value is a parse error",
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "Near", "a")]}],
            False,
            id="an unknown operator is a parse error",
        ),
        pytest.param(
            [
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchExpressions": [expr("cores", "In", "8")]},
            ],
            True,
            id="terms are ORed",
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "In", "a"), expr("cores", "In", "4")]}],
            False,
            id="expressions in a term are ANDed",
        ),
        pytest.param(
            [
                {"matchExpressions": [expr("zone", "Near", "a")]},
                {"matchExpressions": [expr("zone", "In", "a")]},
            ],
            True,
            id="an unparsable term does not spoil the others",
        ),
        pytest.param([{}], False, id="an empty term matches nothing"),
        pytest.param([], False, id="no terms match nothing"),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "In", "n1")]}], True, id="matchFields on the node name"
        ),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "NotIn", "n1")]}], False, id="matchFields NotIn the name"
        ),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "In", "n1", "n2")]}],
            False,
            id="matchFields needs one value",
        ),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "Exists")]}], False, id="matchFields allows only In NotIn"
        ),
        pytest.param(
            [
                {
                    "matchFields": [expr("metadata.name", "In", "n1")],
                    "matchExpressions": [expr("zone", "In", "b")],
                }
            ],
            False,
            id="fields and expressions are ANDed",
        ),
    ],
)
def test_match_node_selector_terms(terms: list[dict[str, Any]], want: bool) -> None:
    assert match_node_selector_terms(terms, node("n1", labels=LABELS)) is want


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param({}, {"a": "1"}, True, id="empty selector matches everything"),
        pytest.param(None, {"a": "1"}, False, id="nil selector matches nothing"),
        pytest.param(
            {"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True, id="matchLabels subset"
        ),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "db"}, False, id="matchLabels value differs"),
        pytest.param(
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "NotIn", "db")]},
            {"app": "web"},
            True,
            id="labels and expressions ANDed",
        ),
        pytest.param(
            {"matchExpressions": [expr("tier", "Exists")]}, {"app": "web"}, False, id="Exists missing"
        ),
        pytest.param(
            {"matchExpressions": [expr("tier", "Gt", "1")]},
            {"tier": "2"},
            False,
            id="Gt is not a label selector operator",
        ),
    ],
)
def test_match_label_selector(selector: dict[str, Any] | None, labels: dict[str, str], want: bool) -> None:
    assert match_label_selector(selector, labels) is want


def test_required_node_selector_ands_node_selector_and_affinity() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "a")]}]
            }
        }
    }
    sel = RequiredNodeSelector.of({"disk": "ssd"}, affinity)
    assert sel.match(node(labels={"zone": "a", "disk": "ssd"}))
    assert not sel.match(node(labels={"zone": "a"}))
    assert sel.failing(node(labels={"zone": "a"})) == {"nodeSelector": "disk=ssd", "nodeValue": None}
    assert not sel.match(node(labels={"disk": "ssd"}))
    assert sel.failing(node(labels={"disk": "ssd"})) == {"nodeAffinity": ["zone In [a]"]}
