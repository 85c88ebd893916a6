"""TaintToleration: Filter reasons per release, details, PreferNoSchedule scoring."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.tainttoleration.taint_toleration import TaintToleration
from kdiagnose.versions import dialect_for
from tests.plugins.basic_factories import handle, node, pod, snapshot

DEDICATED = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
CONTROL_PLANE = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
SOFT = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}


@pytest.mark.parametrize(
    ("version", "taints", "tolerations", "want"),
    [
        pytest.param(
            "v1.34.1",
            [DEDICATED],
            [],
            "node(s) had untolerated taint {dedicated: batch}",
            id="v1.34.1 names the taint",
        ),
        pytest.param(
            "v1.34.1",
            [CONTROL_PLANE],
            [],
            "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }",
            id="an empty value prints as {k: }",
        ),
        pytest.param(
            "v1.34.1",
            [SOFT, DEDICATED, CONTROL_PLANE],
            [],
            "node(s) had untolerated taint {dedicated: batch}",
            id="the first NoSchedule taint is named, PreferNoSchedule skipped",
        ),
        pytest.param(
            "v1.31.8",
            [DEDICATED],
            [],
            "node(s) had untolerated taint {dedicated: batch}",
            id="v1.31 names the taint",
        ),
        pytest.param(
            "v1.34.2", [DEDICATED], [], "node(s) had untolerated taint(s)", id="v1.34.2 hides the taint"
        ),
        pytest.param(
            "v1.35.4", [DEDICATED], [], "node(s) had untolerated taint(s)", id="v1.35 hides the taint"
        ),
        pytest.param("v1.34.1", [SOFT], [], None, id="PreferNoSchedule never filters"),
        pytest.param(
            "v1.34.1",
            [DEDICATED],
            [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
            None,
            id="Equal toleration with the value",
        ),
        pytest.param(
            "v1.34.1",
            [DEDICATED],
            [{"key": "dedicated", "operator": "Equal", "value": "web"}],
            "node(s) had untolerated taint {dedicated: batch}",
            id="Equal toleration with another value",
        ),
        pytest.param(
            "v1.34.1",
            [DEDICATED],
            [{"key": "dedicated", "operator": "Exists"}],
            None,
            id="Exists ignores the value",
        ),
        pytest.param(
            "v1.34.1",
            [DEDICATED, CONTROL_PLANE],
            [{"operator": "Exists"}],
            None,
            id="key-less Exists tolerates all",
        ),
        pytest.param(
            "v1.34.1",
            [{"key": "k", "value": "v", "effect": "NoExecute"}],
            [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "node(s) had untolerated taint {k: v}",
            id="effects must match",
        ),
        pytest.param(
            "v1.34.1",
            [{"key": "k", "value": "v", "effect": "NoExecute"}],
            [{"key": "k", "operator": "Exists", "tolerationSeconds": 30}],
            None,
            id="tolerationSeconds does not matter",
        ),
    ],
)
def test_filter(
    version: str, taints: list[dict[str, str]], tolerations: list[dict[str, Any]], want: str | None
) -> None:
    dialect = dialect_for(version)
    snap = snapshot([node(taints=taints)], dialect=dialect)
    st = TaintToleration(handle(snap)).filter(
        CycleState(), pod(tolerations=tolerations, dialect=dialect), snap.node_infos[0]
    )
    if want is None:
        assert st.ok
    else:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == (want,)


def test_filter_details_name_the_taint_even_when_the_message_hides_it() -> None:
    dialect = dialect_for("v1.35.4")
    snap = snapshot([node(taints=[DEDICATED])], dialect=dialect)
    st = TaintToleration(handle(snap)).filter(CycleState(), pod(dialect=dialect), snap.node_infos[0])
    assert st.details == ({"taint": "dedicated=batch:NoSchedule"},)


def test_score_counts_untolerated_prefer_no_schedule_and_reverses() -> None:
    nodes = [
        node("clean"),
        node("one", taints=[SOFT]),
        node("two", taints=[SOFT, {"key": "old", "value": "", "effect": "PreferNoSchedule"}]),
        node("hard", taints=[DEDICATED]),
    ]
    snap = snapshot(nodes)
    pl = TaintToleration(handle(snap))
    # A NoSchedule-effect toleration does not count for scoring; an empty-effect one does.
    p = pod(
        tolerations=[
            {"key": "old", "operator": "Exists"},
            {"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
        ]
    )
    state = CycleState()
    assert pl.pre_score(state, p, snap.node_infos).ok
    raw = {ni.name: pl.score(state, p, ni)[0] for ni in snap.node_infos}
    assert raw == {"clean": 0, "one": 1, "two": 1, "hard": 0}
    pl.normalize_score(state, p, raw)
    assert raw == {"clean": 100, "one": 0, "two": 0, "hard": 100}
