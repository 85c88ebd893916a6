"""The runner's plugin-major Filter pass (Framework._filter_feasible) against node-major run_filters.

Batch filters hand the runner one Status per node: the shared SUCCESS, shared or per-node rejections that
name the plugin or not, a Success object other than SUCCESS, an error. Whatever the mix and whichever plugin
rejects first, every node's verdict (value and order), the feasible list, the wrapping of each rejection
and the sharing of one Status between nodes must be what node-by-node filtering gives.
"""

from __future__ import annotations

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Handle, Plugin, Status
from kdiagnose.scheduler.profiles import default_profile
from kdiagnose.scheduler.runner import Framework
from tests.varied import varied_snapshot

SHARED_UNNAMED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) shared",))


def _script(kind: str, name: str, i: int) -> Status:
    """What scripted plugin `name` of behaviour `kind` answers for node number i."""
    if kind == "shared" and i % 3 == 0:
        return SHARED_UNNAMED
    if kind == "named" and i % 4 == 1:
        return Status(Code.UNSCHEDULABLE, (f"node {i} too small",), name, ({"node": i},))
    if kind == "unnamed" and i % 5 == 2:
        return Status(Code.UNSCHEDULABLE, (f"node {i} unnamed",))
    if kind == "odd-success" and i % 2 == 0:
        return Status(Code.SUCCESS) if i % 4 == 0 else Status.unschedulable("half")
    if kind == "error" and i == 7:
        return Status.error("boom")
    if kind == "all":
        return Status(Code.UNSCHEDULABLE, ("everything",), name)
    return SUCCESS


def _plugin(kind: str, name: str, index: dict[str, int], handle: Handle) -> Plugin:
    class Scripted(Plugin):
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
            return _script(kind, name, index[node_info.name])

        def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
            # One object per (node, answer) as a batch filter would, the shared one shared.
            return [self.filter(state, pod, ni) for ni in nodes]

    Scripted.name = name
    return Scripted(handle)


@pytest.mark.parametrize(
    "kinds",
    [
        ("shared", "named", "unnamed"),
        ("named", "shared"),
        ("unnamed", "named"),
        ("odd-success", "named", "shared"),
        ("named", "odd-success"),
        ("pass", "error", "named"),
        ("pass", "pass"),
        ("shared", "all", "named"),
    ],
)
def test_plugin_major_filtering_equals_node_major(kinds: tuple[str, ...]) -> None:
    snap = varied_snapshot(nodes=24, pods_per_node=2, pending=1, seed=1)
    fw = Framework(snap, default_profile(snap.dialect))
    index = {ni.name: i for i, ni in enumerate(snap.node_infos)}
    handle = Handle(snap, snap.dialect, {})
    fw.filter_plugins = [_plugin(k, f"P{j}-{k}", index, handle) for j, k in enumerate(kinds)]
    pod = snap.pending[0]
    state = CycleState()
    for nodes in (snap.node_infos, snap.node_infos[5:17]):
        verdicts, feasible = fw._filter_feasible(state, pod, nodes)
        want = {ni.name: fw.run_filters(state, pod, ni) for ni in nodes}
        assert list(verdicts) == list(want)
        assert verdicts == want
        assert [ni.name for ni in feasible] == [x for x, st in want.items() if st.code is Code.SUCCESS]
        assert all(verdicts[ni.name] is SUCCESS for ni in feasible)
        if kinds[0] == "shared":
            # The first plugin's shared rejection: one wrapped object for all its nodes, naming it.
            shared = [st for st in verdicts.values() if st.reasons == SHARED_UNNAMED.reasons]
            assert shared and len({id(st) for st in shared}) == 1
            assert shared[0].plugin == fw.filter_plugins[0].name
        if "named" in kinds and "all" not in kinds:
            assert any(st.plugin.endswith("-named") for st in verdicts.values())
