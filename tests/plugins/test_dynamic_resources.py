"""DynamicResources (DRA): claims, structured allocation, PostFilter, Score, and the CEL subset."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.quantity import parse_quantity
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler import names
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import Code, CycleState, Handle, Status, notes_of
from kdiagnose.scheduler.plugins.dynamicresources.cel import (
    CelRuntimeError,
    CelUnsupported,
    Quantity,
    compile_expression,
    device_env,
    parse_semver,
)
from kdiagnose.scheduler.plugins.dynamicresources.dynamicresources import DynamicResources
from kdiagnose.scheduler.profiles import Profile
from kdiagnose.scheduler.runner import Framework
from kdiagnose.versions import Dialect, dialect_for

V134 = dialect_for("v1.34.1")
V135 = dialect_for("v1.35.4")
GPU_CLASS = {
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


# ---------------------------------------------------------------- factories


def mk_pod(
    name: str = "p", claims: list[dict[str, Any]] | None = None, statuses: list[dict[str, Any]] | None = None
) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if claims is not None:
        spec["resourceClaims"] = claims
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }
    if statuses is not None:
        obj["status"] = {"resourceClaimStatuses": statuses}
    p = Pod(obj)
    finish_pod(p, V134)
    return p


def mk_node(name: str, labels: dict[str, str] | None = None) -> Node:
    return Node(
        {
            "metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": {"cpu": "8", "pods": "110"}},
        }
    )


def gpu(name: str, model: str = "A100", mem: str = "80Gi", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"model": {"string": model}},
        "capacity": {"memory": {"value": mem}},
        **extra,
    }


def rslice(
    name: str,
    devices: list[dict[str, Any]],
    *,
    node: str = "",
    pool: str = "",
    gen: int = 1,
    count: int = 1,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "driver": "gpu.example.com",
        "pool": {"name": pool or node or name, "generation": gen, "resourceSliceCount": count},
        "devices": devices,
        **spec,
    }
    if node:
        body["nodeName"] = node
    return {"kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def exact(
    name: str = "gpu", count: int = 1, mode: str = "ExactCount", cls: str = "gpu.example.com", sel: str = ""
) -> dict[str, Any]:
    e: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        e["count"] = count
    if sel:
        e["selectors"] = [{"cel": {"expression": sel}}]
    return {"name": name, "exactly": e}


def claim(
    name: str,
    requests: list[dict[str, Any]],
    *,
    allocated_on: str = "",
    devices: list[str] | None = None,
    reserved: list[str] | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": requests}},
        "status": {},
    }
    if allocated_on:
        c["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"driver": "gpu.example.com", "pool": allocated_on, "device": d, "request": "gpu"}
                    for d in devices or []
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}
                ]
            },
        }
    if reserved is not None:
        c["status"]["reservedFor"] = [{"resource": "pods", "name": r, "uid": f"uid-{r}"} for r in reserved]
    return c


def mk_plugin(nodes: list[Node], objects: list[dict[str, Any]], dialect: Dialect = V134) -> DynamicResources:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    present = set(by_kind) | {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"}
    snap = Snapshot(dialect, nodes, [], by_kind, present)
    return DynamicResources(Handle(snap, dialect, {}))


def verdicts(pl: DynamicResources, pod: Pod) -> tuple[CycleState, Status, dict[str, Status]]:
    state = CycleState()
    _, pre = pl.pre_filter(state, pod)
    out: dict[str, Status] = {}
    if pre.ok:
        for ni in pl.snapshot.node_infos:
            out[ni.name] = pl.filter(state, pod, ni)
    return state, pre, out


def summary(out: dict[str, Status]) -> dict[str, str]:
    return {k: "ok" if v.ok else f"{v.code.label}: {v.message}" for k, v in out.items()}


def post(pl: DynamicResources, state: CycleState, pod: Pod) -> Status:
    return pl.post_filter(state, pod, Diagnosis(pod=pod), None)


UU = "UnschedulableAndUnresolvable"
NOT_ALLOC = f"{UU}: cannot allocate all claims"
NOT_AVAIL = f"{UU}: resourceclaim not available on the node"


# ---------------------------------------------------------------- pods without claims, missing state


def test_pod_without_claims_skips_but_writes_state_for_post_filter() -> None:
    pl = mk_plugin([mk_node("n1")], [])
    pod = mk_pod()
    state = CycleState()
    _, st = pl.pre_filter(state, pod)
    assert st.code == Code.SKIP
    pf = post(pl, state, pod)
    assert (pf.code, pf.reasons) == (Code.UNSCHEDULABLE, ("no new claims to deallocate",))
    assert pl.score(state, pod, pl.snapshot.node_infos[0]) == (0, Status())


def test_post_filter_without_prefilter_state_is_error_not_found() -> None:
    pl = mk_plugin([mk_node("n1")], [])
    pf = post(pl, CycleState(), mk_pod())
    assert (pf.code, pf.reasons) == (Code.ERROR, ("not found",))


# ---------------------------------------------------------------- allocated claims


@pytest.mark.parametrize(
    ("reserved", "want_post"),
    [
        pytest.param(
            ["other"], "still not schedulable", id="claim reserved by another pod cannot be deallocated"
        ),
        pytest.param(
            [], "deallocation of ResourceClaim completed", id="unreserved allocated claim gets deallocated"
        ),
        pytest.param(
            ["p"],
            "deallocation of ResourceClaim completed",
            id="claim reserved only for this pod gets deallocated",
        ),
    ],
)
def test_allocated_claim_pins_node(reserved: list[str], want_post: str) -> None:
    objs = [GPU_CLASS, claim("shared", [exact()], allocated_on="n2", devices=["gpu-0"], reserved=reserved)]
    pl = mk_plugin([mk_node("n1"), mk_node("n2"), mk_node("n3")], objs)
    pod = mk_pod(claims=[{"name": "gpu", "resourceClaimName": "shared"}])
    state, pre, out = verdicts(pl, pod)
    assert pre.ok
    assert summary(out) == {"n1": NOT_AVAIL, "n2": "ok", "n3": NOT_AVAIL}
    assert post(pl, state, pod).reasons == (want_post,)


# ---------------------------------------------------------------- PreFilter / PreEnqueue reasons


@pytest.mark.parametrize(
    ("request_", "want"),
    [
        pytest.param(
            exact(cls="missing.example.com"),
            "request gpu: device class missing.example.com does not exist",
            id="exact request with unknown class",
        ),
        pytest.param(
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu.example.com"},
                    {"name": "small", "deviceClassName": "nope"},
                ],
            },
            "request gpu/small: device class nope does not exist",
            id="subrequest with unknown class names the qualified request",
        ),
    ],
)
def test_missing_device_class_is_prefilter_uu(request_: dict[str, Any], want: str) -> None:
    pl = mk_plugin([mk_node("n1")], [GPU_CLASS, claim("c", [request_])])
    pod = mk_pod(claims=[{"name": "gpu", "resourceClaimName": "c"}])
    state, pre, _ = verdicts(pl, pod)
    assert (pre.code, pre.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))
    # The state was written before the rejection, with no claims: PostFilter has nothing to deallocate.
    assert post(pl, state, pod).reasons == ("no new claims to deallocate",)


@pytest.mark.parametrize(
    ("claims", "statuses", "objects", "want"),
    [
        pytest.param(
            [{"name": "gpu", "resourceClaimName": "absent"}],
            None,
            [],
            'could not find ResourceClaim "default/absent"',
            id="named claim missing",
        ),
        pytest.param(
            [{"name": "gpu", "resourceClaimTemplateName": "absent"}],
            None,
            [],
            'pod "default/p": ResourceClaim not created yet',
            id="template missing so the controller cannot create the claim",
        ),
        pytest.param(
            [{"name": "gpu", "resourceClaimName": "c"}],
            None,
            [
                {
                    **claim("c", [exact()]),
                    "metadata": {
                        "name": "c",
                        "namespace": "default",
                        "deletionTimestamp": "2025-01-01T00:00:00Z",
                    },
                }
            ],
            'resourceclaim "c" is being deleted',
            id="claim being deleted",
        ),
        pytest.param(
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            [{"name": "gpu", "resourceClaimName": "c"}],
            [claim("c", [exact()])],
            "ResourceClaim default/c was not created for pod default/p (pod is not owner)",
            id="generated claim not owned by the pod",
        ),
    ],
)
def test_pre_enqueue_rejects_until_claims_exist(
    claims: list[dict[str, Any]],
    statuses: list[dict[str, Any]] | None,
    objects: list[dict[str, Any]],
    want: str,
) -> None:
    pl = mk_plugin([mk_node("n1")], [GPU_CLASS, *objects])
    st = pl.pre_enqueue(mk_pod(claims=claims, statuses=statuses))
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_template_claim_not_created_yet_is_evaluated_from_the_template() -> None:
    template = {
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [exact()]}}},
    }
    objs = [GPU_CLASS, template, rslice("s1", [gpu("gpu-0")], node="n1")]
    pl = mk_plugin([mk_node("n1"), mk_node("n2")], objs)
    pod = mk_pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    assert pl.pre_enqueue(pod).ok
    state, pre, out = verdicts(pl, pod)
    assert pre.ok
    assert summary(out) == {"n1": "ok", "n2": NOT_ALLOC}
    assert any("not created yet" in n for n in notes_of(state))


# ---------------------------------------------------------------- structured allocation


@pytest.mark.parametrize(
    ("request_", "devices", "allocated", "want_ok"),
    [
        pytest.param(exact(count=2), ["gpu-0", "gpu-1"], [], True, id="two free devices satisfy count 2"),
        pytest.param(
            exact(count=2),
            ["gpu-0", "gpu-1"],
            ["gpu-1"],
            False,
            id="a device allocated to another claim is not free",
        ),
        pytest.param(
            exact(mode="All"), ["gpu-0", "gpu-1", "gpu-2"], [], True, id="All takes every matching device"
        ),
        pytest.param(
            exact(mode="All"),
            ["gpu-0", "gpu-1"],
            ["gpu-0"],
            False,
            id="All fails when one matching device is taken",
        ),
        pytest.param(
            exact(mode="All", sel='device.attributes["gpu.example.com"].model == "H100"'),
            ["gpu-0"],
            [],
            False,
            id="All needs at least one matching device",
        ),
        pytest.param(
            exact(sel='device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'),
            ["gpu-0"],
            [],
            True,
            id="capacity selector matches 80Gi",
        ),
        pytest.param(
            exact(sel='device.capacity["gpu.example.com"].memory.compareTo(quantity("100Gi")) >= 0'),
            ["gpu-0"],
            [],
            False,
            id="capacity selector rejects 80Gi",
        ),
    ],
)
def test_allocation_on_one_node(
    request_: dict[str, Any], devices: list[str], allocated: list[str], want_ok: bool
) -> None:
    objs: list[dict[str, Any]] = [
        GPU_CLASS,
        rslice("s1", [gpu(d) for d in devices], node="n1"),
        claim("mine", [request_]),
    ]
    if allocated:
        objs.append(claim("theirs", [exact()], allocated_on="n1", devices=allocated, reserved=["x"]))
    pl = mk_plugin([mk_node("n1")], objs)
    _, pre, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert pre.ok
    assert summary(out) == {"n1": "ok" if want_ok else NOT_ALLOC}


@pytest.mark.parametrize(
    ("slice_spec", "want"),
    [
        pytest.param({"allNodes": True}, {"a": "ok", "b": "ok"}, id="allNodes slice serves every node"),
        pytest.param(
            {
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
                    ]
                }
            },
            {"a": "ok", "b": NOT_ALLOC},
            id="nodeSelector slice serves matching nodes only",
        ),
    ],
)
def test_network_attached_slices(slice_spec: dict[str, Any], want: dict[str, str]) -> None:
    objs = [GPU_CLASS, rslice("s1", [gpu("gpu-0")], pool="fabric", **slice_spec), claim("mine", [exact()])]
    pl = mk_plugin([mk_node("a", {"rack": "r1"}), mk_node("b", {"rack": "r2"})], objs)
    _, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == want


def test_older_pool_generation_is_ignored() -> None:
    objs = [
        GPU_CLASS,
        rslice("old", [gpu("gpu-0", model="H100")], node="n1", pool="p", gen=1),
        rslice("new", [gpu("gpu-0", model="L4")], node="n1", pool="p", gen=2),
        claim("mine", [exact(sel='device.attributes["gpu.example.com"].model == "H100"')]),
    ]
    pl = mk_plugin([mk_node("n1")], objs)
    _, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == {"n1": NOT_ALLOC}


@pytest.mark.parametrize(
    ("dialect", "want"),
    [
        pytest.param(
            V134,
            "Error: pool n1 is invalid: duplicate device name gpu-0",
            id="v1.34 aborts on an invalid pool",
        ),
        pytest.param(V135, f"{UU}: invalid resource pools were encountered", id="v1.35 fails only that node"),
    ],
)
def test_invalid_pool(dialect: Dialect, want: str) -> None:
    objs = [
        GPU_CLASS,
        rslice("s1", [gpu("gpu-0")], node="n1", count=2),
        rslice("s2", [gpu("gpu-0")], node="n1", count=2),
        claim("mine", [exact()]),
    ]
    pl = mk_plugin([mk_node("n1")], objs, dialect)
    _, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == {"n1": want}


def test_all_mode_on_incomplete_pool_is_error_in_v134() -> None:
    objs = [GPU_CLASS, rslice("s1", [gpu("gpu-0")], node="n1", count=2), claim("mine", [exact(mode="All")])]
    pl = mk_plugin([mk_node("n1")], objs)
    _, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == {
        "n1": "Error: claim default/mine, request gpu: asks for all devices, but resource pool gpu.example.com/n1 is currently being updated"
    }


def test_cel_runtime_error_is_filter_error() -> None:
    objs = [
        GPU_CLASS,
        rslice("s1", [{"name": "gpu-0"}], node="n1"),
        claim("mine", [exact(sel='device.attributes["gpu.example.com"].model == "A100"')]),
    ]
    pl = mk_plugin([mk_node("n1")], objs)
    _, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == {
        "n1": "Error: claim default/mine: selector #0: CEL runtime error: no such key: model"
    }


def test_unsupported_cel_does_not_match_and_is_noted() -> None:
    objs = [
        GPU_CLASS,
        rslice("s1", [gpu("gpu-0")], node="n1"),
        claim("mine", [exact(sel="device.attributes.map(d, d)")]),
    ]
    pl = mk_plugin([mk_node("n1")], objs)
    state, _, out = verdicts(pl, mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}]))
    assert summary(out) == {"n1": NOT_ALLOC}
    assert any("CEL subset" in n for n in notes_of(state))


# ---------------------------------------------------------------- firstAvailable and Score (v1.35)


def first_available() -> dict[str, Any]:
    return {
        "name": "gpu",
        "firstAvailable": [
            {
                "name": "big",
                "deviceClassName": "gpu.example.com",
                "count": 1,
                "selectors": [
                    {
                        "cel": {
                            "expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'
                        }
                    }
                ],
            },
            {"name": "small", "deviceClassName": "gpu.example.com", "count": 2},
        ],
    }


def test_first_available_falls_back_and_scores_by_rank() -> None:
    objs = [
        GPU_CLASS,
        rslice("big", [gpu("gpu-0", mem="80Gi")], node="big"),
        rslice("small", [gpu("gpu-0", mem="24Gi"), gpu("gpu-1", mem="24Gi")], node="small"),
        rslice("tiny", [gpu("gpu-0", mem="16Gi")], node="tiny"),
        claim("mine", [first_available()]),
    ]
    pl = mk_plugin([mk_node("big"), mk_node("small"), mk_node("tiny")], objs, V135)
    pod = mk_pod(claims=[{"name": "gpu", "resourceClaimName": "mine"}])
    state, _, out = verdicts(pl, pod)
    assert summary(out) == {"big": "ok", "small": "ok", "tiny": NOT_ALLOC}
    raw = {ni.name: pl.score(state, pod, ni)[0] for ni in pl.snapshot.node_infos if out[ni.name].ok}
    assert raw == {"big": 8, "small": 7}
    pl.normalize_score(state, pod, raw)
    assert raw == {"big": 100, "small": 87}


# ---------------------------------------------------------------- CEL subset


def env(**attrs: Any) -> dict[str, Any]:
    return device_env("gpu.example.com", attrs, {"memory": Quantity(parse_quantity("80Gi"))})


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        pytest.param('device.driver == "gpu.example.com"', True, id="driver equality"),
        pytest.param(
            'device.driver == "x" || device.attributes["gpu.example.com"].model == "A100-80GB"', True, id="or"
        ),
        pytest.param(
            'device.driver == "x" && device.attributes["gpu.example.com"].missing == 1',
            False,
            id="false and error is false",
        ),
        pytest.param('device.attributes["gpu.example.com"].model.startsWith("A1")', True, id="startsWith"),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
            True,
            id="quantity compareTo",
        ),
        pytest.param(
            'device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))',
            False,
            id="quantity isLessThan",
        ),
        pytest.param('has(device.attributes["other.io"].model)', False, id="missing domain is an empty map"),
        pytest.param(
            'device.attributes["gpu.example.com"].index > 2 ? true : false',
            True,
            id="ternary and int comparison",
        ),
        pytest.param(
            'device.attributes["gpu.example.com"].ver.isGreaterThan(semver("1.2.0"))',
            True,
            id="semver comparison",
        ),
        pytest.param('"model" in device.attributes["gpu.example.com"]', True, id="in on a map"),
        pytest.param(
            '!(device.attributes["gpu.example.com"].model in ["L4", "T4"])', True, id="in on a list and not"
        ),
    ],
)
def test_cel_subset(expr: str, want: bool) -> None:
    e = env(model="A100-80GB", index=3, ver=parse_semver("1.10.0"))
    assert compile_expression(expr).evaluate(e) is want


def test_cel_missing_key_is_runtime_error() -> None:
    with pytest.raises(CelRuntimeError, match="no such key: model"):
        compile_expression('device.attributes["gpu.example.com"].model == "x"').evaluate(env())


@pytest.mark.parametrize(
    "expr",
    [
        pytest.param("device.attributes.map(k, k)", id="map macro"),
        pytest.param('device.driver.reverse() == "x"', id="unknown method"),
        pytest.param("device.driver ==", id="syntax error"),
    ],
)
def test_cel_unsupported(expr: str) -> None:
    with pytest.raises(CelUnsupported):
        compile_expression(expr)


def test_score_mirrors_upstream_error_for_allocated_then_new_claims() -> None:
    objs = [
        GPU_CLASS,
        rslice("s1", [gpu("gpu-0"), gpu("gpu-1")], node="n1"),
        claim("done", [exact()], allocated_on="n1", devices=["gpu-0"], reserved=[]),
        claim("new", [exact()]),
    ]
    pl = mk_plugin([mk_node("n1")], objs, V135)
    pod = mk_pod(
        claims=[{"name": "a", "resourceClaimName": "done"}, {"name": "b", "resourceClaimName": "new"}]
    )
    state, _, out = verdicts(pl, pod)
    assert summary(out) == {"n1": "ok"}
    score, st = pl.score(state, pod, pl.snapshot.node_infos[0])
    assert (score, st.code) == (0, Code.ERROR)
    assert any("Score fails upstream" in n for n in notes_of(state))


def test_runner_reports_dynamic_resources_pre_enqueue() -> None:
    pl = mk_plugin([mk_node("n1")], [GPU_CLASS])
    dra = names.DYNAMIC_RESOURCES
    profile = Profile(
        pre_enqueue=[names.SCHEDULING_GATES, dra], pre_filter=[dra], filter=[dra], post_filter=[dra]
    )
    fw = Framework(pl.snapshot, profile)
    d = fw.schedule(mk_pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "absent"}]))
    assert d.preenqueue is not None
    assert (d.preenqueue.plugin, d.preenqueue.reasons) == (
        dra,
        ('pod "default/p": ResourceClaim not created yet',),
    )
    assert not d.attempted
