"""Snapshot -> Report: pick the pods to diagnose, replay the scheduler for each, add remedies.

Shared by every command (offline dumps, live mode, check), so they select pods and build reports alike.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from kdiagnose.errors import UsageError
from kdiagnose.load.gcpause import PerItemGC
from kdiagnose.model.pools import PoolSpec, pool_of
from kdiagnose.remedies.safety import platform_warning
from kdiagnose.results import PodReport, Remedy, Report, Sequential
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler, scheduling_signature
from kdiagnose.scheduler.profiles import Profile, default_profile

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.results import Remedy


class PodSink(Protocol):
    """A writer of each pod's text as it is diagnosed (report.json.PodStream, report.console_stream.
    PodSections): `pod` in one process; `encode` in a worker process (what it returns is pickled to the
    parent) and `emit` in the parent, in pod key order, with workers."""

    # Whether `emit` takes spool.FileText in place of a large bytes object of what `encode` returned (the
    # text left in the worker's spool file, written out with spool.write_texts), or only bytes.
    takes_file_texts: bool

    def pod(self, report: Report, pr: PodReport) -> PodReport: ...

    def encode(self, report: Report, pr: PodReport) -> Any: ...

    def emit(self, report: Report, pod: Pod, encoded: Any) -> PodReport: ...


__all__ = ["diagnose_snapshot", "import_ahead", "parse_selector", "profiles_for", "select_pods"]

# Object classes whose absence changes what the replay can check (listed in the report when absent).
_REPORTED_KINDS = (
    "Namespace",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "PriorityClass",
    "PodDisruptionBudget",
)

# ---------------------------------------------------------------------------------------------- selectors

_SET_RE = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*([^\s!=(),]+)\s*(==|!=|=)\s*([^\s!=(),]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")


def _split_requirements(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def _matches(reqs: list[tuple[str, str, frozenset[str]]], labels: dict[str, str]) -> bool:
    for op, key, values in reqs:
        value = labels.get(key)
        if op == "in" and value not in values:
            return False
        if op == "notin" and value in values:
            return False
        if op == "exists" and value is None:
            return False
        if op == "!exists" and value is not None:
            return False
    return True


def parse_selector(text: str) -> Callable[[dict[str, str]], bool]:
    """A label selector as kubectl -l takes it: `a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`."""
    reqs: list[tuple[str, str, frozenset[str]]] = []
    for req in _split_requirements(text):
        if m := _SET_RE.match(req):
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append((m.group(2), m.group(1), values))
        elif m := _EQ_RE.match(req):
            reqs.append(("notin" if m.group(2) == "!=" else "in", m.group(1), frozenset([m.group(3)])))
        elif m := _EXISTS_RE.match(req):
            reqs.append(("!exists" if m.group(1) else "exists", m.group(2), frozenset()))
        else:
            raise UsageError(f"invalid label selector {text!r}: cannot parse {req.strip()!r}")
    if not reqs:
        raise UsageError(f"invalid label selector {text!r}: empty")
    return lambda labels: _matches(reqs, labels)


# ---------------------------------------------------------------------------------------------- selection


def profiles_for(
    snapshot: Snapshot, profiles: list[Profile] | None, scheduler_name: str | None
) -> list[Profile]:
    """The configured profiles (default: the release's default profile), plus one for --scheduler-name.

    A pod naming another scheduler is handled by that scheduler, whose configuration kdiagnose does not
    know; `--scheduler-name X` asks to replay such pods as if X ran the default profile.
    """
    out = list(profiles) if profiles else [default_profile(snapshot.dialect)]
    if scheduler_name and not any(p.scheduler_name == scheduler_name for p in out):
        out.append(dataclasses.replace(default_profile(snapshot.dialect), scheduler_name=scheduler_name))
    return out


def _pod_key(ref: str, namespace: str | None) -> str:
    """NAME, NAMESPACE/NAME, and kubectl's pod/NAME (pods/NAME, po/NAME) forms."""
    kind, sep, rest = ref.partition("/")
    if sep and kind in ("pod", "pods", "po") and rest and "/" not in rest:
        ref = rest
    if "/" in ref:
        ns, _, name = ref.partition("/")
        if not ns or not name or "/" in name:
            raise UsageError(f"invalid --pod {ref!r}: expected NAMESPACE/NAME or NAME")
        return ref
    return f"{namespace or 'default'}/{ref}"


def import_ahead() -> None:
    """Import what diagnose_snapshot imports on first use (remedies, recorded events, every in-tree
    plugin's module): the diagnose command has the load do it while its workers decode
    (load/parallel.py idle_work), when this process would otherwise wait (~60 ms of one pod's run at
    5,000 nodes)."""
    import importlib

    from kdiagnose.scheduler.registry import IN_TREE

    for module in (
        "kdiagnose.autoscaler.compare",
        "kdiagnose.recorded",
        "kdiagnose.remedies.engine",
        "kdiagnose.sequential",
        *(target.partition(":")[0] for target in IN_TREE.values() if target),
    ):
        importlib.import_module(module)


def select_pods(
    snapshot: Snapshot,
    profiles: list[Profile],
    *,
    pods: Iterable[str] = (),
    namespace: str | None = None,
    selector: str | None = None,
    scheduler_name: str | None = None,
) -> tuple[list[Pod], list[str]]:
    """Pods to diagnose and warnings about pods left out. Named pods are taken even if bound or unhandled."""
    match = parse_selector(selector) if selector else None
    warnings: list[str] = []
    refs = list(pods)
    if refs:
        # A named pod is nearly always a pending one: those first, every pod (150,000 at 5,000 nodes) only
        # for a name not among them. build_snapshot kept one pod per key, so both give the same pod.
        pending = {p.key: p for p in snapshot.pending}
        by_key: dict[str, Pod] | None = None
        out = []
        for ref in refs:
            key = _pod_key(ref, namespace)
            pod = pending.get(key)
            if pod is None:
                if by_key is None:
                    by_key = {p.key: p for p in snapshot.pods}
                pod = by_key.get(key)
            if pod is None:
                raise UsageError(_not_found(key, snapshot))
            if match is None or match(pod.labels):
                out.append(pod)
        return out, warnings
    handled = {p.scheduler_name for p in profiles}
    out = []
    others: Counter[str] = Counter()
    for pod in snapshot.pending:
        if namespace and pod.namespace != namespace:
            continue
        if match is not None and not match(pod.labels):
            continue
        if scheduler_name and pod.scheduler_name != scheduler_name:
            continue
        if pod.scheduler_name not in handled:
            others[pod.scheduler_name] += 1
            continue
        out.append(pod)
    for name, count in sorted(others.items()):
        warnings.append(
            f"{count} pending pod(s) with schedulerName {name!r} are handled by another scheduler: skipped "
            f"(--scheduler-name {name} replays them with the default profile)"
        )
    return out, warnings


def _not_found(key: str, snapshot: Snapshot) -> str:
    """`--pod NS/NAME` names no pod: where a pod of that name exists, and close names (a usage mistake)."""
    import difflib

    ns, _, name = key.partition("/")
    elsewhere = sorted({p.namespace for p in snapshot.pods if p.name == name and p.namespace != ns})
    text = f"pod {key} not found in the input (or it has finished: Succeeded/Failed)"
    if elsewhere:
        shown = ", ".join(elsewhere[:5]) + (", …" if len(elsewhere) > 5 else "")
        return f"{text}; a pod named {name} exists in namespace {shown} (--pod {elsewhere[0]}/{name})"
    # Close names in the namespace first, then anywhere (names only: a shared namespace is no likeness).
    for pool in ([p for p in snapshot.pods if p.namespace == ns], snapshot.pods):
        keys: dict[str, list[str]] = {}
        for p in sorted(pool, key=lambda p: p.key):
            keys.setdefault(p.name, []).append(p.key)
        close = difflib.get_close_matches(name, sorted(keys), n=3, cutoff=0.75)
        if close:
            return f"{text}; did you mean {', '.join(k for c in close for k in keys[c][:1])}?"
    return text


# ---------------------------------------------------------------------------------------------- report


def _owner(snapshot: Snapshot, pod: Pod) -> str:
    """The workload a change goes to: `Deployment ns/name` for a ReplicaSet's pod (its ownerReferences, else
    the pod-template-hash naming convention), the CronJob of a Job, else the direct controller ("" for none).
    The same resolution the remedies use for their patches."""
    from kdiagnose.remedies.whatif import owner_of

    if pod.controller_ref() is None:
        return ""
    o = owner_of(snapshot, pod)
    return f"{o.kind} {o.namespace}/{o.name}"


Found = tuple[list[Remedy], list[str], list[str]]


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name))


def _names(found: Found, name: str) -> bool:
    """Whether any text of the remedies, notes or kinds not tried contains `name`."""
    return any(name in s for s in _strings(found))


def _renamed(value: Any, pattern: re.Pattern[str], name: str) -> Any:
    if isinstance(value, str):
        return pattern.sub(name, value)
    if isinstance(value, dict):
        return {_renamed(k, pattern, name): _renamed(v, pattern, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, pattern, name) for v in value]
    if isinstance(value, tuple):
        return tuple(_renamed(v, pattern, name) for v in value)
    if isinstance(value, Remedy):
        changes = {f.name: _renamed(getattr(value, f.name), pattern, name) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value


def _for_replica(found: Found, source: str, name: str) -> Found | None:
    """A replica's remedies from those found for `source`, another replica with the same scheduling inputs:
    they differ only where a text names the pod itself (a preemption's nominee, `kubectl delete pod/NAME`,
    a verify command), so `source` is renamed `name` where it stands as a whole name (pod names are DNS
    subdomains: not inside a longer one). None when that is not certain (`name` is in the texts already,
    or `source` is left inside a longer word): then the replica gets its own search."""
    if _names(found, name):
        return None
    pattern = re.compile(rf"(?<![a-z0-9.-]){re.escape(source)}(?![a-z0-9-]|\.[a-z0-9])")
    remedies, notes, not_tried = found
    out: Found = (
        [_renamed(r, pattern, name) for r in remedies],
        [_renamed(x, pattern, name) for x in notes],
        [_renamed(x, pattern, name) for x in not_tried],
    )
    return None if _names(out, source) else out


def _bound(snapshot: Snapshot, pod: Pod) -> Diagnosis:
    d = Diagnosis(pod=pod, profile=pod.scheduler_name, num_all_nodes=snapshot.num_nodes)
    d.chosen = pod.node_name
    return d


# Worker processes for the pods (diagnose_snapshot's `jobs`): worth a fork only above this many node
# replays (pending pods x nodes); tests set it to 0 to take the parallel path on small clusters.
PARALLEL_MIN_WORK = 200_000


def _can_fork(jobs: int) -> bool:
    """Worker processes are used: more than one job and the fork start method (not macOS's default)."""
    import multiprocessing
    import sys

    return jobs >= 2 and sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods()


def _worker_groups(snapshot: Snapshot, ordered: list[Pod], jobs: int) -> list[list[int]] | None:
    """The pods (indexes into `ordered`) as the tasks of `jobs` workers, or None to stay in one process.

    Pods with the same scheduling signature share one task: one process then replays them once and
    shares their remedies (the memos of Scheduler.diagnose and `remedy_memo`) as the serial loop does.
    Tasks are in the order of their first pod, so the workers run ahead of the writer by little."""
    if not _can_fork(jobs):
        return None
    pending = sum(1 for p in ordered if not p.node_name)
    if pending < 2 or pending * max(1, snapshot.num_nodes) < PARALLEL_MIN_WORK:
        return None
    by_sig: dict[object, list[int]] = {}
    for i, pod in enumerate(ordered):
        sig = None if pod.node_name else scheduling_signature(pod)
        by_sig.setdefault(("pod", i) if sig is None else sig, []).append(i)
    return list(by_sig.values())  # dicts keep insertion order: the order of each group's first pod


# The work of the forked workers: set in the parent just before the fork, inherited by the children.
_FORKED: Callable[[list[int]], list[tuple[int, Any]]] | None = None
# Where the workers leave results of at least _SPOOL_ABOVE bytes (pickled) for the parent: a directory of
# this run's own, set before the fork like _FORKED (None: every result goes through the executor's pipe).
_SPOOL: str | None = None
_SPOOL_ABOVE = 1 << 18
# Whether the workers store their results' large texts apart in the spool file, read back as
# spool.FileText (written out by the sink with sendfile), or all in the pickle (_in_workers's `file_texts`).
_FILE_TEXTS = False
# Groups handed to the executor ahead of the one the writer waits for, per worker: enough that a worker
# always finds its next group queued, few enough that a slow reader of the output (a pager, a full pipe)
# does not let the workers pile up every pod's text (megabytes each at 5,000 nodes) in memory.
_AHEAD_PER_WORKER = 3


@dataclasses.dataclass(frozen=True)
class _Spooled:
    """A worker's result left in a file of the spool directory (spool.write), read and removed here."""

    path: str
    indices: list[int]  # the group's, to diagnose here if the file cannot be read

    def take(self) -> list[tuple[int, Any]] | None:
        """The results (their large texts as spool.FileText when the run takes them: _FILE_TEXTS), or None
        when the file cannot be read back whole; the file is removed either way."""
        import pickle

        from kdiagnose import spool

        try:
            result: list[tuple[int, Any]] = spool.read(self.path)
        except (OSError, EOFError, pickle.UnpicklingError):
            return None
        return result


def _run_group(indices: list[int]) -> list[tuple[int, Any]] | _Spooled:
    """A group's results, in a file when they are large (a pod's -o json text: 2.8 MB at 5,000 nodes).

    The executor sends every result through one pipe of 64 KB that its workers share under a lock: a
    worker blocked for each refill until this process's reading thread got a core the workers hold, and
    the other worker waited for the lock (~2 ms per pod at 5,000 nodes, benchmarks/README.md). A file in
    memory (/dev/shm) takes the text at once; the executor then carries only its name."""
    assert _FORKED is not None, "a worker forked from diagnose_snapshot"
    result = _FORKED(indices)
    if _SPOOL is None:
        return result
    import os

    from kdiagnose import spool

    path = os.path.join(_SPOOL, f"{os.getpid()}-{indices[0]}")
    try:
        if not spool.write(path, result, _SPOOL_ABOVE, texts_apart=_FILE_TEXTS):
            return result
    except OSError:  # the directory full (a container's small /dev/shm) or gone: the pipe, as before
        with contextlib.suppress(OSError):
            os.unlink(path)
        return result
    return _Spooled(path, indices)


def _spool_directory() -> str | None:
    """A new directory for the workers' results: in /dev/shm (memory) where there is one, else the
    system's temporary directory; None when neither can be written (every result then takes the pipe)."""
    import os
    import tempfile

    shm = "/dev/shm"
    where = shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None
    try:
        return tempfile.mkdtemp(prefix="kdiagnose-", dir=where)
    except OSError:
        return None


def _exit_on_sigterm() -> bool:
    """SIGTERM (a CI job's timeout, `kill`) raises SystemExit(143) here while the workers run, so that the
    spool directory is removed on the way out; False when the default action stays (another handler was
    set by whoever runs kdiagnose, or this is not the main thread, where none can be set)."""
    import signal

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return False
        signal.signal(signal.SIGTERM, terminated)
    except ValueError:
        return False
    return True


def _default_sigterm() -> None:
    """In each worker: SIGTERM ends it as before (the parent then diagnoses what it did not deliver),
    instead of the parent's SystemExit, which the executor would carry back as the group's result."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _in_workers(
    groups: list[list[int]],
    work: Callable[[list[int]], list[tuple[int, Any]]],
    jobs: int,
    *,
    file_texts: bool = False,
) -> Iterator[tuple[int, Any]]:
    """Run `work` over the groups in `jobs` forked processes; yield its results in index order. With
    `file_texts`, the large texts of a spooled result come as spool.FileText (see PodSink).

    The snapshot and the scheduler are built: the children share them copy-on-write (the snapshot is
    gc-frozen by the load; what was built since is frozen here too, so the children's collections do not
    touch its pages). A group is handed to whichever worker is free, a few ahead of the one the writer
    waits for (_AHEAD_PER_WORKER); results that arrive ahead of the next index wait here."""
    global _FORKED, _SPOOL, _FILE_TEXTS
    import gc
    import multiprocessing
    import queue
    import shutil
    import sys
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    for stream in (sys.stdout, sys.stderr):
        # A child flushes the standard streams when it exits: nothing buffered may be written twice.
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    _FORKED = work
    ready: dict[int, Any] = {}
    order = sorted(i for g in groups for i in g)
    at = 0
    # Each future hands itself over when it is done (the executor's thread runs the callback), so a
    # result costs the same whatever the number of groups: concurrent.futures.wait over the set of
    # pending futures locks every one of them at each call, a million lock operations for 1,000 pods in
    # this process, which shares the cores with the workers (benchmarks/README.md). No future is kept
    # here: once its result is read nothing may hold it, or every pod's text stays alive to the end.
    finished: queue.SimpleQueue[Future[list[tuple[int, Any]] | _Spooled]] = queue.SimpleQueue()
    workers = min(jobs, len(groups))
    ahead = workers * _AHEAD_PER_WORKER
    submitted = received = 0
    # gc.unfreeze thaws every frozen object, not only what this freeze added: when the load froze the
    # snapshot already (load/gcpause.py), thawing it would make every later collection in this process
    # walk 150,000 pods again. Only a freeze this function started alone is undone.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    # An executor, not multiprocessing.Pool: a worker that dies (killed, out of memory) breaks the pool
    # with an error instead of leaving this process waiting for its result forever (as load/parallel.py).
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_default_sigterm
    )

    def submit() -> None:
        # Running ahead: the groups handed out and not yet back, and the results back before their turn
        # (a slow pod in one worker must not let the other pile up texts behind it). Groups go in the
        # order of their first index, and the one holding the index the writer waits for is always
        # handed out (else the wait below would never end), whatever `ahead` is.
        nonlocal submitted
        while submitted < len(groups) and (
            submitted - received + len(ready) < ahead
            or (at < len(order) and groups[submitted][0] <= order[at])
        ):
            pool.submit(_run_group, groups[submitted]).add_done_callback(finished.put)
            submitted += 1

    # Set just before the `try` whose `finally` undoes them (nothing that can fail comes between): the
    # handler is put back and the directory removed however the run ends.
    terminate = _exit_on_sigterm()
    _SPOOL = _spool_directory()
    _FILE_TEXTS = file_texts
    try:
        # With the fork start method the executor forks all its workers at the first submit.
        submit()
        if not frozen_before:
            gc.unfreeze()
        try:
            while received < len(groups):
                got = finished.get().result()
                received += 1
                if isinstance(got, _Spooled):
                    # The file removed or cut short by someone else: the group is diagnosed here.
                    ready.update(got.take() or work(got.indices))
                else:
                    ready.update(got)
                del got
                while at < len(order) and order[at] in ready:
                    yield order[at], ready.pop(order[at])
                    at += 1
                submit()
        except BrokenProcessPool:
            # This process diagnoses what the workers did not deliver: the same bytes, only later.
            delivered = set(ready) | set(order[:at])
            for g in groups:
                if any(i not in delivered for i in g):
                    ready.update(work(g))
            while at < len(order):
                yield order[at], ready.pop(order[at])
                at += 1
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if not frozen_before:
            gc.unfreeze()
        if _SPOOL is not None:
            shutil.rmtree(_SPOOL, ignore_errors=True)
        _FORKED = _SPOOL = None
        _FILE_TEXTS = False
        if terminate:
            import signal

            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def diagnose_snapshot(
    snapshot: Snapshot,
    profiles: list[Profile] | None = None,
    *,
    pods: Iterable[str] = (),
    namespace: str | None = None,
    selector: str | None = None,
    scheduler_name: str | None = None,
    source: str = "",
    profile_notes: Iterable[str] = (),
    remedies: bool = True,
    pools: list[PoolSpec] | None = None,
    nominated: bool = False,
    offline: bool = True,
    remedy_limit: int | None = None,
    sink: PodSink | None = None,
    jobs: int = 1,
    prepare: Callable[[Report], None] | None = None,
    finish_pod: Callable[[Report, PodReport], None] | None = None,
) -> Report:
    """Diagnose the selected pods (default: every pending pod a profile handles) and build the Report.

    `remedy_limit`: find only the best N remedies per pod (what the report shows; None: every kind is
    tried, as `--all-remedies`); a pod whose search stopped early lists the kinds not tried.

    `sink`: a streaming writer (report.json.PodStream): `sink.pod(report, pod_report)` is called with each
    pod's finished report, in pod key order, when no two pending pods share an owner (so no owner is
    placed one after another and the report's `sequential` stays empty); the report keeps what it returns
    (a slim copy). With shared owners it is never called and every pod's report is kept. With `jobs` > 1
    and enough work, the pods are diagnosed and encoded in `jobs` forked worker processes (`_in_workers`)
    and the sink writes their texts here in pod key order: the same bytes as one process writes.

    `prepare(report)`: called once the Report is made, before any pod is written (a caller's report-level
    fields: live mode's warnings and missing kinds); `finish_pod(report, pod_report)`: called with each
    pod's report once the pipeline is done with it, before the sink writes it (live mode's triage and the
    cluster's own record of the pod), in the worker that diagnosed it."""
    stream = sink
    all_profiles = profiles_for(snapshot, profiles, scheduler_name)
    selected, warnings = select_pods(
        snapshot,
        all_profiles,
        pods=pods,
        namespace=namespace,
        selector=selector,
        scheduler_name=scheduler_name,
    )
    scheduler = Scheduler(snapshot, all_profiles, nominated=nominated)
    from kdiagnose.autoscaler.compare import attach_recorded
    from kdiagnose.recorded import recorded_for, triage_offline
    from kdiagnose.remedies.engine import compute_remedies, compute_top_remedies
    from kdiagnose.sequential import place_one_after_another

    notes = list(profile_notes)
    for p in all_profiles:
        for part in p.not_replayed:
            note = f"profile {p.scheduler_name}: not replayed: {part}"
            if note not in notes:
                notes.append(note)
    report = Report(
        k8s_version=snapshot.dialect.name,
        k8s_version_reason=snapshot.dialect.reason,
        source=source,
        num_nodes=snapshot.num_nodes,
        num_pods=len(snapshot.pods),
        warnings=list(snapshot.warnings) + warnings,
        skipped_kinds=dict(sorted(snapshot.skipped.items())),
        missing_kinds=[k for k in _REPORTED_KINDS if not snapshot.has(k)],
        profile_notes=notes,
        node_pools={ni.name: pool for ni in snapshot.node_infos if (pool := pool_of(ni.node)) is not None},
        profiles={p.scheduler_name: p.describe() for p in all_profiles if not p.is_default},
    )
    if prepare is not None:
        prepare(report)
    # Remedies by scheduling signature (and the pod found them for, when their texts name it).
    remedy_memo: dict[tuple[bytes, str], tuple[Found, str]] = {}
    by_owner: dict[str, list[Pod]] = {}
    if stream is not None:
        # A superset of the groups placed one after another below (those also need the pod handled and
        # not held at PreEnqueue): with none of two pods, the report's owners part is known to be empty.
        owners = Counter(o for p in selected if not p.node_name and (o := _owner(snapshot, p)))
        if any(c > 1 for c in owners.values()):
            stream = None

    # One collection per pod, after its diagnosis and its text (load/gcpause.py PerItemGC); none for one pod.
    per_pod_gc = PerItemGC(collect=len(selected) > 1)

    def one(pod: Pod) -> PodReport:
        # What the pod's own state says (live mode triages from the API objects itself, commands/live.py).
        tri = triage_offline(snapshot, pod) if offline else None
        if pod.node_name:
            pr = PodReport(
                diagnosis=_bound(snapshot, pod),
                triage=tri.text if tri is not None else f"already bound to node {pod.node_name}",
            )
        else:
            d = scheduler.diagnose(pod)
            pr = PodReport(diagnosis=d)
            if d.scheduled and (warning := platform_warning(snapshot, d)):
                d.notes.insert(0, warning)  # what will go wrong next comes before what was not checked
            if tri is not None and d.scheduled and tri.notable:
                pr.why_pending = tri.text
            if remedies and not d.scheduled and d.handled:
                # Replicas of one owner get the same remedies (they name the owner, not the pod).
                sig = scheduling_signature(pod)
                memo_key = None if sig is None else (sig, pod.key if pod.controller_ref() is None else "")
                memo = remedy_memo.get(memo_key) if memo_key is not None else None
                hit: Found | None = None
                if memo is not None:
                    # Texts naming the replica they were found for are renamed: a pod's report must not
                    # depend on which replica was diagnosed before it.
                    hit = _for_replica(memo[0], memo[1], pod.name) if memo[1] else memo[0]
                if hit is None:
                    hit = compute_top_remedies(snapshot, scheduler, d, pools=pools, limit=remedy_limit)
                    if memo_key is not None and memo is None:
                        remedy_memo[memo_key] = (hit, pod.name if _names(hit, pod.name) else "")
                pr.remedies, pr.remedy_notes, pr.remedies_not_tried = list(hit[0]), list(hit[1]), list(hit[2])
        pr.owner = _owner(snapshot, pod)
        pr.recorded = recorded_for(snapshot, pod, pr.diagnosis.message)
        # Every event about the pod (cluster-autoscaler's and Karpenter's too), aged against the dump's time.
        pr.recorded = attach_recorded(pr.recorded, snapshot, pod, pr.remedies)
        if pr.owner and not pod.node_name and pr.diagnosis.handled and pr.diagnosis.preenqueue is None:
            by_owner.setdefault(pr.owner, []).append(pod)
        if finish_pod is not None:
            finish_pod(report, pr)
        return pr

    ordered = sorted(selected, key=lambda p: p.key)
    groups = _worker_groups(snapshot, ordered, jobs) if stream is not None else None
    if stream is not None and groups is not None:
        emit, encode = stream.emit, stream.encode

        def encoded(indices: list[int]) -> list[tuple[int, Any]]:
            out: list[tuple[int, Any]] = []
            for i in indices:
                with per_pod_gc:
                    out.append((i, encode(report, one(ordered[i]))))
            return out

        for i, enc in _in_workers(groups, encoded, jobs, file_texts=stream.takes_file_texts):
            report.pods.append(emit(report, ordered[i], enc))
    else:
        for pod in ordered:
            with per_pod_gc:
                # The full report goes out of scope before the item's collection when it is streamed (a
                # local bound to it would keep its 5,000 verdicts alive to be traced, then promoted).
                report.pods.append(stream.pod(report, one(pod)) if stream is not None else one(pod))
    # Each pod above is judged alone; an owner's replicas also compete with each other.
    several = [(owner, owned) for owner, owned in by_owner.items() if len(owned) > 1]

    def place(indices: list[int]) -> list[tuple[int, Sequential]]:
        return [
            (
                i,
                place_one_after_another(
                    snapshot,
                    all_profiles,
                    several[i][1],
                    nominated=nominated,
                    remedy_fn=(lambda s, sc, d: compute_remedies(s, sc, d, pools=pools))
                    if remedies
                    else None,
                ),
            )
            for i in indices
        ]

    # Each owner's placements are on a fork of the snapshot of their own: in the workers, one task per
    # owner, when there are several owners and enough work (each placement replays a pod over every node).
    work = sum(len(owned) for _, owned in several) * max(1, snapshot.num_nodes)
    if len(several) > 1 and _can_fork(jobs) and work >= PARALLEL_MIN_WORK:
        placed = _in_workers([[i] for i in range(len(several))], place, jobs)
    else:
        placed = iter(place(list(range(len(several)))))
    for i, seq in placed:
        report.sequential[several[i][0]] = seq
    return report


def unschedulable(report: Report) -> list[PodReport]:
    """Pods the replay could not place (the exit-code gate of `kdiagnose FILE`)."""
    return [p for p in report.pods if not p.diagnosis.scheduled]
