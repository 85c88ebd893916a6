"""Effective pod requests, as k8s.io/component-helpers/resource PodRequests computes them (semantics §6)."""

from __future__ import annotations

from kdiagnose.model.objects import Container, Pod
from kdiagnose.versions import Dialect

__all__ = ["DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST", "finish_pod", "pod_requests"]

# pkg/scheduler/util/pod_resources.go: used for scoring only, per container that sets no request.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def _add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = v if k not in into else max(into[k], v)


def _non_missing(reqs: dict[str, int]) -> dict[str, int]:
    out = dict(reqs)
    out.setdefault("cpu", DEFAULT_MILLI_CPU_REQUEST)
    out.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    return out


def _resize_infeasible(pod: Pod) -> bool:
    """IsPodResizeInfeasible (component-helpers/resource): the FIRST PodResizePending condition decides, by
    its reason alone; the deprecated status.resize field is not read (v1.33+, the only releases that use it)."""
    for c in pod.conditions:
        if c.get("type") == "PodResizePending":
            return c.get("reason") == "Infeasible"
    return False


def _container_reqs(pod: Pod, c: Container, use_status: bool) -> dict[str, int]:
    if use_status and c.name in pod.container_statuses:
        actual, allocated = pod.container_statuses[c.name]
        out: dict[str, int] = {}
        if not _resize_infeasible(pod):
            _max(out, c.requests)
        _max(out, actual)
        _max(out, allocated)
        return out
    return c.requests


def pod_requests(
    pod: Pod, dialect: Dialect, *, use_status: bool, non_missing: bool, pod_level: bool | None = None
) -> dict[str, int]:
    """Containers summed, init containers maxed (sidecars accumulated), pod-level requests, then overhead.

    `pod_level=False` skips pod-level requests even where the release supports them (NodeResourcesFit's
    scorer never sets enablePodLevelResources upstream); None follows the dialect."""
    reqs: dict[str, int] = {}
    for c in pod.containers:
        cr = _container_reqs(pod, c, use_status)
        _add(reqs, _non_missing(cr) if non_missing else cr)
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in pod.init_containers:
        is_sidecar = c.restart_policy == "Always"
        cr = _container_reqs(pod, c, use_status and is_sidecar)
        if non_missing:
            cr = _non_missing(cr)
        if is_sidecar:
            _add(reqs, cr)
            _add(sidecars, cr)
            step = dict(sidecars)
        else:
            step = dict(cr)
            _add(step, sidecars)
        _max(init_max, step)
    _max(reqs, init_max)
    if dialect.pod_level_resources if pod_level is None else pod_level:
        for name, v in pod.pod_resources["requests"].items():
            if name in ("cpu", "memory") or name.startswith("hugepages-"):
                reqs[name] = v
    _add(reqs, pod.overhead)
    return reqs


def _get_nonzero(reqs: dict[str, int]) -> tuple[int, int]:
    """schedutil.GetNonzeroRequests: the defaults only where the resource is absent (an explicit 0 stays)."""
    return reqs.get("cpu", DEFAULT_MILLI_CPU_REQUEST), reqs.get("memory", DEFAULT_MEMORY_REQUEST)


def _non_zero_v131(pod: Pod, use_status: bool) -> tuple[int, int]:
    """v1.31 framework/types.go calculateResource: Σ containers' non-zero requests, max'ed with each
    init step's (sidecars accumulated, defaults applied to the cumulative list once), plus overhead."""
    cpu = mem = 0
    for c in pod.containers:
        c_cpu, c_mem = _get_nonzero(_container_reqs(pod, c, use_status))
        cpu += c_cpu
        mem += c_mem
    init_cpu = init_mem = 0
    sidecars: dict[str, int] = {}
    for c in pod.init_containers:
        if c.restart_policy == "Always":
            _add(sidecars, c.requests)
            step = dict(sidecars)
        else:
            step = dict(c.requests)
            _add(step, sidecars)
        s_cpu, s_mem = _get_nonzero(step)
        init_cpu, init_mem = max(init_cpu, s_cpu), max(init_mem, s_mem)
    return max(cpu, init_cpu) + pod.overhead.get("cpu", 0), max(mem, init_mem) + pod.overhead.get("memory", 0)


def finish_pod(pod: Pod, dialect: Dialect) -> None:
    """Fill the dialect-dependent request fields once; bound pods may count in-place resize status."""
    use_status = dialect.inplace_resize and bool(pod.node_name)
    pod.requests = {
        k: v for k, v in pod_requests(pod, dialect, use_status=use_status, non_missing=False).items()
    }
    nz = pod_requests(pod, dialect, use_status=use_status, non_missing=True)
    if dialect.pod_level_resources and any(
        k in ("cpu", "memory") or k.startswith("hugepages-") for k in pod.pod_resources["requests"]
    ):
        # getNonMissingContainerRequests (framework/types.go): with pod-level requests set, the defaults
        # apply only to resources requested nowhere; the others count as actually requested.
        nz = {**nz, **{k: pod.requests[k] for k in ("cpu", "memory") if k in pod.requests}}
    pod.non_zero_cpu = nz.get("cpu", 0)
    pod.non_zero_mem = nz.get("memory", 0)
    if not dialect.non_zero_sums_sidecars:
        pod.non_zero_cpu, pod.non_zero_mem = _non_zero_v131(pod, use_status)
