"""`kdiagnose pod NAME` and `kdiagnose pods`: explain Pending pods of the live cluster, read-only.

Fetch (kdiagnose.load.cluster) -> triage -> replay the pods that are really waiting for the scheduler
(kdiagnose.pipeline) -> compare with what the cluster recorded (kdiagnose.recorded) -> render.
Top-level imports stay light (no kubernetes, no rich): the CLI imports this module at start-up.
"""

from __future__ import annotations

import inspect
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from kdiagnose.commands.completion import complete_namespace, complete_output, complete_pod
from kdiagnose.errors import InputError, KdiagnoseError, UsageError
from kdiagnose.exitcodes import ExitCode

if TYPE_CHECKING:
    from kdiagnose.load.cluster import Fetched
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.pipeline import PodSink
    from kdiagnose.results import PodReport, Report
    from kdiagnose.schedconfig import SchedulerConfig
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.profiles import Profile
    from kdiagnose.versions import Dialect

__all__ = [
    "LiveOptions",
    "build_live_report",
    "export_objects",
    "parse_timeout",
    "pod_command",
    "pods_command",
    "run_live",
    "save_snapshot",
]

Obj = dict[str, Any]

_OUTPUTS = ("human", "json", "yaml")


@dataclass(slots=True)
class LiveOptions:
    name: str | None = None  # None: every Pending pod in scope (`pods`)
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str = ""
    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: str = "30s"
    chunk_size: int = 500
    output: str = "human"
    no_color: bool = False
    k8s_version: str | None = None
    scheduler_config: str | None = None
    scheduler_config_from: str | None = None
    strict_config: bool = False
    save_snapshot: str | None = None
    full: bool = False
    top: int = 5
    pools: str | None = None
    all_nodes: bool = False
    all_remedies: bool = False
    summary: bool = False
    debug: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_timeout(text: str) -> float:
    """kubectl's --request-timeout: `30s`, `1m30s`, `500ms`, a bare number of seconds; 0 = no timeout."""
    s = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return float(s)
    pos, total = 0, 0.0
    for m in _DURATION_RE.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise UsageError(f"invalid --request-timeout {text!r} (expected e.g. 30s, 1m, 500ms)")
    return total


# ---------------------------------------------------------------------------------------------- report


def _scheduler_config(
    path: str | None, dialect: Dialect, *, strict: bool = False, text_source: tuple[str, str] | None = None
) -> SchedulerConfig | None:
    if text_source is not None:
        from kdiagnose.schedconfig import parse_scheduler_config

        return parse_scheduler_config(text_source[0], text_source[1], dialect, strict)
    if not path:
        return None
    from kdiagnose.schedconfig import load_scheduler_config

    return load_scheduler_config(path, dialect, strict=strict)


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _events_by_pod(events: list[Obj]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for ev in events:
        reg = ev.get("regarding") or ev.get("involvedObject") or {}
        ns = reg.get("namespace") or (ev.get("metadata") or {}).get("namespace") or "default"
        out.setdefault(f"{ns}/{reg.get('name')}", []).append(ev)
    return out


def _load_pools(path: str | None) -> list[Any] | None:
    if not path:
        return None
    from kdiagnose.model.pools import load_pools

    return list(load_pools(path))


class _WithOthers:
    """The streamed live report's sink: the targets that are not replayed (bound, finished, being deleted),
    whose reports are made before the replay, written in pod key order among the replayed ones, as the
    whole report lists them (pipeline.diagnose_snapshot streams its pods in key order)."""

    def __init__(self, inner: PodSink, others: list[PodReport]) -> None:
        self.inner = inner
        self.others = sorted(others, key=lambda p: p.diagnosis.pod.key)
        self.streamed = False
        self.takes_file_texts = inner.takes_file_texts

    def _before(self, report: Report, key: str) -> None:
        while self.others and self.others[0].diagnosis.pod.key < key:
            report.pods.append(self.inner.pod(report, self.others.pop(0)))

    def pod(self, report: Report, pr: PodReport) -> PodReport:
        self.streamed = True
        self._before(report, pr.diagnosis.pod.key)
        return self.inner.pod(report, pr)

    def encode(self, report: Report, pr: PodReport) -> Any:
        return self.inner.encode(report, pr)

    def emit(self, report: Report, pod: Pod, encoded: Any) -> PodReport:
        self.streamed = True
        self._before(report, pod.key)
        return self.inner.emit(report, pod, encoded)

    def drain(self, report: Report) -> None:
        """The targets after the last replayed one: written when the replayed pods were, else kept whole
        (nothing was streamed: the sink writes the whole report at its finish)."""
        if self.streamed:
            self._before(report, "\U0010ffff")
        else:
            report.pods.extend(self.others)
            self.others = []


def build_live_report(
    fetched: Fetched,
    dialect: Dialect,
    *,
    profiles: list[Profile] | None = None,
    profile_notes: list[str] | None = None,
    extenders: list[str] | None = None,
    out_of_tree: dict[str, dict[str, list[str]]] | None = None,
    pools: list[Any] | None = None,
    remedy_limit: int | None = None,
    sink: Any = None,
) -> Report:
    """Triage every target, replay those waiting for the scheduler, and attach what the cluster recorded.
    `remedy_limit`: search only the best N remedies per pod (pipeline.diagnose_snapshot). `sink`: a
    streaming writer (report.json.PodStream, report.console_stream.PodSections) the pods are written to
    as they are diagnosed, in the worker processes when there are several (pipeline.diagnose_snapshot's
    `sink` and `jobs`); the report then keeps what the rest of the output and the exit code read, and the
    caller calls `sink.finish(report)`."""
    from kdiagnose.commands.common import keep_until_exit
    from kdiagnose.load.cluster import no_gc
    from kdiagnose.load.parallel import jobs
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.model.objects import ModelError, Pod
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.recorded import triage_pod
    from kdiagnose.results import PodReport, Report
    from kdiagnose.scheduler.diagnosis import Diagnosis

    now = fetched.fetched_at or time.time()
    t = fetched.target
    source = f"context {t.context} ({t.server}" + (
        f", {fetched.server_version})" if fetched.server_version else ")"
    )
    events = _events_by_pod(fetched.events)
    triage = {_key(p): triage_pod(p, now, events.get(_key(p), ())) for p in fetched.targets}
    replay = [_key(p) for p in fetched.targets if triage[_key(p)].replay]
    # RBAC denied the lists the replay needs: nothing is replayed, each pod gets what the cluster recorded.
    denied = sorted(replay) if fetched.denied else []
    if denied:
        replay = []
    nodes = [o for o in fetched.objects if o.get("kind") == "Node"]
    targets = {_key(obj): obj for obj in fetched.targets}
    snap = None
    if replay:
        list_kinds = set(fetched.listed_kinds)
        if fetched.events_readable:
            list_kinds.add("Event")
        with no_gc():
            snap = build_snapshot(
                fetched.raw_objects(),
                dialect,
                list_kinds=list_kinds,
                admit=True,
                unreadable=fetched.unreadable,
            )
    keep_until_exit(fetched, snap)
    live = _LivePod(
        fetched, triage, events, nodes, snap, now, profiles is not None, extenders or [], out_of_tree or {}
    )

    def prepare(report: Report) -> None:
        # Live lists are cluster-wide: the dump heuristics about missing namespaces do not apply.
        report.warnings = list(fetched.warnings) + [w for w in report.warnings if "without -A" not in w]
        report.missing_kinds = sorted(fetched.missing)

    # Bound, finished or being deleted: no replay, the pod's own state is the answer.
    others: list[PodReport] = []
    for key, obj in targets.items():
        if key in replay:
            continue
        try:
            pod = Pod(obj)
        except ModelError as e:
            raise InputError(f"pod {key}: {e}") from None
        d = Diagnosis(pod=pod, profile=pod.scheduler_name, num_all_nodes=len(nodes))
        d.chosen = pod.node_name or None
        if d.chosen is None:
            d.handled = False
            d.not_handled_reason = triage[key].text
        pr = PodReport(diagnosis=d)
        if key in denied:
            pr.not_replayed = _not_replayed_text(fetched)
        others.append(pr)
    if snap is not None:
        # The others' reports are complete before the replay: the sink writes them among the replayed.
        for pr in others:
            live.finish(snap.num_nodes, pr, targets[pr.diagnosis.pod.key])
        with_others = _WithOthers(sink, others) if sink is not None else None
        report = diagnose_snapshot(
            snap,
            profiles,
            pods=replay,
            source=source,
            profile_notes=profile_notes or (),
            # A live cluster's pods nominated by earlier preemptions hold their nodes, as in kube-scheduler.
            nominated=True,
            pools=pools,
            offline=False,
            remedy_limit=remedy_limit,
            sink=with_others,
            jobs=jobs(),
            prepare=prepare,
            finish_pod=lambda rep, pr: live.finish(rep.num_nodes, pr, targets[pr.diagnosis.pod.key]),
        )
        if with_others is not None:
            with_others.drain(report)
        else:
            report.pods.extend(others)
    else:
        report = Report(
            k8s_version=dialect.name,
            k8s_version_reason=dialect.reason,
            source=source,
            num_nodes=len(nodes),
            num_pods=sum(1 for o in fetched.objects if o.get("kind") == "Pod") + len(fetched.records),
        )
        prepare(report)
        for pr in others:
            live.finish(report.num_nodes, pr, targets[pr.diagnosis.pod.key])
        report.pods.extend(others)
    if fetched.denied:
        from kdiagnose.load.rbac import rbac_snippet

        report.replay_denied = [f"cannot list {what}: {why}" for what, why in sorted(fetched.denied.items())]
        report.rbac = rbac_snippet(fetched.denied_subject)
    report.pods.sort(key=lambda p: p.diagnosis.pod.key)
    return report


@dataclass(slots=True)
class _LivePod:
    """What live mode adds to each target's report: its triage, the cluster's record of it (events,
    conditions, the autoscalers' words) and the Permit note, from the fetched objects. Called for the
    replayed pods where they are diagnosed (the worker processes too), and for the others before the
    replay (the sink writes them among the replayed ones)."""

    fetched: Fetched
    triage: dict[str, Any]
    events: dict[str, list[Obj]]
    nodes: list[Obj]
    snap: Snapshot | None
    now: float
    configured: bool
    extenders: list[str]
    out_of_tree: dict[str, dict[str, list[str]]]

    def finish(self, num_nodes: int, pr: PodReport, obj: Obj) -> None:
        from kdiagnose.autoscaler.compare import attach_recorded
        from kdiagnose.recorded import build_recorded

        key = _key(obj)
        tri = self.triage[key]
        events = self.events.get(key, [])
        if pr.not_replayed:
            if tri.notable:
                pr.diagnosis.notes.insert(0, tri.text)
        elif not tri.replay:
            pr.triage = tri.text
        elif tri.notable and pr.diagnosis.scheduled:
            pr.why_pending = tri.text  # the replay places it, yet it is Pending: this says why
        elif tri.notable and tri.text not in pr.diagnosis.notes:
            # Reports read `triage` as "not a scheduling problem"; for a replayed pod it is context.
            pr.diagnosis.notes.insert(0, _held_text(pr.diagnosis, tri.text))
        snap = self.snap
        rec = build_recorded(
            obj,
            events,
            pr.diagnosis if tri.replay else None,
            now=self.now,
            nodes=self.nodes,
            pods=snap.pods if snap is not None else (),
            num_nodes=num_nodes,
            configured_profiles=self.configured,
            extenders=self.extenders,
        )
        if snap is not None and tri.replay:
            # Every event about the pod (cluster-autoscaler's, Karpenter's), aged against the fetch time.
            rec = attach_recorded(rec, snap, pr.diagnosis.pod, pr.remedies, events=events, now=self.now)
        if rec is not None or self.fetched.events_readable:
            pr.recorded = rec
        if tri.replay and not pr.not_replayed:
            note = permit_wait_note(pr.diagnosis.profile, self.out_of_tree, events)
            if note and note not in pr.diagnosis.notes:
                pr.diagnosis.notes.insert(0, note)


def _not_replayed_text(fetched: Fetched) -> str:
    """Why a pending pod was not replayed: the denied lists, by resource."""
    what = " or ".join(sorted(fetched.denied))
    return f"not replayed: this context may not list {what} cluster-wide (RBAC), which the replay needs"


def permit_wait_note(profile: str, out_of_tree: dict[str, dict[str, list[str]]], events: list[Obj]) -> str:
    """A pending pod with no FailedScheduling event whose profile runs an out-of-tree plugin that may sit at
    Permit (coscheduling / gang scheduling): the scheduler picked a node and is waiting, not failing."""
    plugins = {
        name: points
        for name, points in (out_of_tree.get(profile) or {}).items()
        if "permit" in points or "multiPoint" in points
    }
    if not plugins or any(ev.get("reason") == "FailedScheduling" for ev in events):
        return ""
    names = ", ".join(sorted(plugins))
    return (
        f"profile {profile} runs out-of-tree plugin(s) {names} (not replayed) at Permit: a pod held there has a "
        "node reserved but no FailedScheduling event, and waits up to 15 minutes before it is rejected and "
        "retried; check its gang or PodGroup (e.g. kubectl get podgroups -n NAMESPACE: minMember, scheduled "
        "members) and the plugin's logs"
    )


# ---------------------------------------------------------------------------------------------- export

# Annotations some scheduler plugin or kdiagnose report reads; everything else may be anyone's data.
_KEEP_ANNOTATION_PREFIXES = (
    "volume.kubernetes.io/",
    "volume.beta.kubernetes.io/",
    "pv.kubernetes.io/",
    "storageclass.kubernetes.io/",
    "storageclass.beta.kubernetes.io/",
    "csi.volume.kubernetes.io/",
    "cluster-autoscaler.kubernetes.io/",
    "karpenter.sh/",
    "scheduler.alpha.kubernetes.io/",
    "node.alpha.kubernetes.io/",
)
_CONTAINER_SECRETS = (
    "env",
    "envFrom",
    "args",
    "command",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)


# Secret-bearing fields no scheduler plugin reads, under these keys wherever they appear: CSI volume
# attributes (pod and PV `csi`), FlexVolume options, DRA opaque driver parameters (DeviceClass and
# ResourceClaim `config[].opaque`). The driver name and volume handle stay: plugins read them.
_SECRET_SUBFIELDS = {
    "csi": frozenset({"volumeAttributes"}),
    "flexVolume": frozenset({"options"}),
    "opaque": frozenset({"parameters"}),
}


def _strip(value: Any) -> Any:
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: Obj = {}
    for k, v in value.items():
        if k == "managedFields":
            continue
        if k in _SECRET_SUBFIELDS and isinstance(v, dict):
            out[k] = {sk: _strip(sv) for sk, sv in v.items() if sk not in _SECRET_SUBFIELDS[k]}
            continue
        if k in ("containers", "initContainers", "ephemeralContainers") and isinstance(v, list):
            out[k] = [
                {ck: _strip(cv) for ck, cv in c.items() if ck not in _CONTAINER_SECRETS}
                if isinstance(c, dict)
                else c
                for c in v
            ]
            continue
        if k == "annotations" and isinstance(v, dict):
            kept = {ak: av for ak, av in v.items() if ak.startswith(_KEEP_ANNOTATION_PREFIXES)}
            if kept:
                out[k] = kept
            continue
        out[k] = _strip(v)
    return out


def export_objects(fetched: Fetched, full: bool) -> list[Obj]:
    """The fetched objects for a snapshot file; without --full, what may be secret and the scheduler never
    reads is dropped (container env/args/command/probes, most annotations, managedFields, ConfigMap/Secret data)."""
    from kdiagnose.load.cluster import KINDS

    if fetched.records:
        # The Pod list's compact records keep no bytes to write back (load/live_pods.py): a snapshot file is
        # made of a fetch with compact=False, as run_live fetches for --save-snapshot. Not left to chance:
        # writing the objects alone would save a cluster without its bound pods.
        raise ValueError(
            "export_objects: the pods were fetched as compact records (fetch with compact=False)"
        )
    out: list[Obj] = []
    for obj in fetched.objects:
        if full:
            out.append(obj)
            continue
        o = _strip(obj)
        if o.get("kind") in ("ConfigMap", "Secret"):
            for k in ("data", "binaryData", "stringData"):
                o.pop(k, None)
        if o.get("kind") == "StorageClass":
            o.pop("parameters", None)  # provisioner parameters (may hold secrets); no plugin reads them
        if o.get("kind") == "ResourceClaim" and isinstance(o.get("status"), dict):
            for dev in o["status"].get("devices") or []:
                if isinstance(dev, dict):
                    dev.pop("data", None)  # driver-written device data
        out.append(o)
    present = {o.get("kind") for o in fetched.objects}
    for kind in sorted(fetched.listed_kinds - present):
        # An empty typed List still says "the cluster has none" (not "not fetched") when read back.
        spec = KINDS.get(kind)
        if spec is not None:
            out.append({"apiVersion": spec.group_version, "kind": f"{kind}List", "items": []})
    return out


def save_snapshot(path: str, fetched: Fetched, dialect: Dialect, full: bool) -> None:
    import yaml

    objects = export_objects(fetched, full)
    t = fetched.target
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(fetched.fetched_at or time.time()))
    header = [
        f"# kdiagnose snapshot of context {t.context} ({t.server}), {fetched.server_version or 'unknown version'}, {stamp}",
        f"# {'full objects' if full else 'stripped of env, args, command, probes, most annotations, managedFields, CSI volume attributes, FlexVolume options, StorageClass and DRA opaque parameters (--full keeps them)'}",
        f"# replay offline: kdiagnose {Path(path).name} --k8s-version {dialect.name}",
    ]
    if fetched.missing:
        header.append(
            "# not readable: " + ", ".join(f"{k} ({v})" for k, v in sorted(fetched.missing.items()))
        )
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(header) + "\n")
            yaml.dump_all(
                objects,
                f,
                Dumper=dumper,
                sort_keys=False,
                explicit_start=True,
                default_flow_style=False,
                width=1 << 16,
            )
    except OSError as e:
        raise InputError(f"--save-snapshot {path}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------- render


# ---------------------------------------------------------------------------------------------- commands


def _fail(e: BaseException, debug: bool) -> NoReturn:
    if debug:
        import traceback

        traceback.print_exception(e, file=sys.stderr)
    if isinstance(e, KdiagnoseError):
        message, code = " ".join(str(e).split()), int(e.exit_code)
        hint = e.hint
    else:
        message, code, hint = (
            f"internal error: {type(e).__name__}: {' '.join(str(e).split())}",
            int(ExitCode.ERROR),
            "",
        )
    typer.echo(f"kdiagnose: error: {message}", err=True)
    if hint:
        typer.echo(f"hint: {hint}", err=True)
    raise typer.Exit(code)


def run_live(opts: LiveOptions, sink: Any = None) -> tuple[Report, int]:
    """The whole live command without the CLI layer; raises KdiagnoseError on failure. `sink`: the
    streaming writer the pods are written to as they are diagnosed (build_live_report); the caller then
    calls its `finish`."""
    from kdiagnose.load.cluster import fetch_for_pod, fetch_for_pods, resolve_target
    from kdiagnose.pipeline import unschedulable

    if opts.output not in _OUTPUTS:
        raise UsageError(f"invalid -o {opts.output!r}: expected one of {', '.join(_OUTPUTS)}")
    if opts.full and not opts.save_snapshot:
        raise UsageError("--full only applies with --save-snapshot")
    timeout = parse_timeout(opts.request_timeout)
    if opts.scheduler_config and opts.scheduler_config_from:
        raise UsageError("--scheduler-config and --scheduler-config-from are exclusive")
    target = resolve_target(opts.kubeconfig, opts.context, exec_timeout=timeout)
    config_text = None
    if opts.scheduler_config_from:
        from kdiagnose.load.cluster import read_scheduler_configmap

        config_text = read_scheduler_configmap(target, opts.scheduler_config_from, timeout=timeout)
    if opts.name is not None:
        ns = opts.namespace or target.namespace
        fetched, dialect = fetch_for_pod(
            target,
            opts.name,
            ns,
            timeout=timeout,
            k8s_version=opts.k8s_version,
            full=opts.full,
            chunk_size=opts.chunk_size,
            # A snapshot file is written from the objects themselves: no compact records then.
            compact=not opts.save_snapshot,
        )
    else:
        if opts.all_namespaces and opts.namespace:
            raise UsageError("-A/--all-namespaces and -n/--namespace are exclusive")
        if opts.selector:
            # Checked before any request, with the offline parser: a bad -l is a usage error (exit 2), not
            # an API server error or, with a lenient server, an empty selection that exits 0.
            from kdiagnose.pipeline import parse_selector

            parse_selector(opts.selector)
        scope = None if opts.all_namespaces else (opts.namespace or target.namespace)
        fetched, dialect = fetch_for_pods(
            target,
            scope,
            selector=opts.selector,
            timeout=timeout,
            k8s_version=opts.k8s_version,
            full=opts.full,
            chunk_size=opts.chunk_size,
            # A snapshot file is written from the objects themselves: no compact records then.
            compact=not opts.save_snapshot,
        )
    if opts.debug:
        typer.echo(
            f"debug: {fetched.requests} requests, {fetched.count()} objects in {fetched.elapsed:.2f}s",
            err=True,
        )
    cfg = _scheduler_config(
        opts.scheduler_config, dialect, strict=opts.strict_config, text_source=config_text
    )
    from kdiagnose.results import MAX_REMEDIES

    report = build_live_report(
        fetched,
        dialect,
        profiles=list(cfg.profiles) if cfg is not None else None,
        profile_notes=list(cfg.notes) if cfg is not None else None,
        extenders=list(cfg.extenders) if cfg is not None else None,
        out_of_tree=dict(cfg.out_of_tree) if cfg is not None else None,
        pools=_load_pools(opts.pools),
        remedy_limit=None if opts.all_remedies else MAX_REMEDIES,
        sink=sink,
    )
    if fetched.pending_elsewhere and not report.pods:
        _scope_hint(report, fetched.pending_elsewhere, opts, opts.namespace or target.namespace)
    if opts.save_snapshot:
        save_snapshot(opts.save_snapshot, fetched, dialect, opts.full)
    code = ExitCode.UNSCHEDULABLE if unschedulable(report) else ExitCode.OK
    return report, int(code)


def _scope_hint(report: Report, elsewhere: dict[str, int], opts: LiveOptions, namespace: str) -> None:
    """Nothing Pending in the namespace, but elsewhere: say how many, where, and the -A command."""
    import shlex

    from kdiagnose.commands.common import prog_name

    total = sum(elsewhere.values())
    shown = sorted(elsewhere.items(), key=lambda kv: (-kv[1], kv[0]))
    where = ", ".join(f"{ns} ({n})" for ns, n in shown[:5]) + (", …" if len(shown) > 5 else "")
    scope = f"namespace {namespace}"
    others = f"{len(elsewhere)} other namespace{'s' if len(elsewhere) != 1 else ''}"
    report.scope_hint = (
        f"Nothing Pending in {scope}, but {total} Pending pod{'s' if total != 1 else ''} in {others}: "
        f"{where}. All namespaces:"
    )
    args = [prog_name(), "pods", "-A"]
    if opts.selector:
        args += ["-l", opts.selector]
    for flag, value in (("--kubeconfig", opts.kubeconfig), ("--context", opts.context)):
        if value:
            args += [flag, value]
    report.scope_command = " ".join(shlex.quote(a) if i > 0 else a for i, a in enumerate(args))


def _sink(opts: LiveOptions) -> Any:
    """As the offline command (commands/diagnose.py): -o json and the human report are written pod by
    pod as the pods are diagnosed (in the worker processes when there are several), their verdicts
    dropped; the bytes are the whole report's. None: -o yaml, rendered whole."""
    if opts.output == "json" and getattr(sys.stdout, "buffer", None) is not None:
        from kdiagnose.report.json import PodStream

        sys.stdout.flush()
        return PodStream(sys.stdout.buffer)
    if opts.output == "human":
        from kdiagnose.report.console_stream import PodSections
        from kdiagnose.report.emit import human_options

        return PodSections(
            human_options(opts.no_color, opts.top, opts.all_nodes, opts.all_remedies, opts.summary, True)
        )
    return None


def _main(opts: LiveOptions) -> None:
    try:
        sink = _sink(opts)
        report, code = run_live(opts, sink)
        if sink is not None:
            from kdiagnose.report.console_layout import flush_stdout

            sink.finish(report)
            flush_stdout()
            raise typer.Exit(code)
        from kdiagnose.report.emit import emit

        emit(
            report,
            opts.output,
            no_color=opts.no_color,
            top=opts.top,
            all_nodes=opts.all_nodes,
            all_remedies=opts.all_remedies,
            summary=opts.summary,
        )
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as e:
        _fail(e, opts.debug)
    raise typer.Exit(code)


# Each command places -n itself: `pod` after NAME, `pods` before -A and -l.
NamespaceOpt = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        help="Namespace (default: the context's namespace).",
        autocompletion=complete_namespace,
    ),
]

# The options `pod` and `pods` both take after their own, in --help order. Their defaults are LiveOptions'.
_SHARED_OPTIONS: dict[str, Any] = {
    "kubeconfig": Annotated[
        str | None,
        typer.Option("--kubeconfig", help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."),
    ],
    "context": Annotated[
        str | None, typer.Option("--context", help="Kubeconfig context (default: current-context).")
    ],
    "request_timeout": Annotated[
        str, typer.Option("--request-timeout", help="Per-request timeout, e.g. 30s, 1m; 0 = none.")
    ],
    "chunk_size": Annotated[
        int,
        typer.Option(
            "--chunk-size",
            min=0,
            metavar="N",
            help="List in pages of this many objects, as kubectl; 0 = unpaginated.",
        ),
    ],
    "output": Annotated[
        str,
        typer.Option(
            "-o", "--output", metavar="human|json|yaml", help="Output format.", autocompletion=complete_output
        ),
    ],
    "no_color": Annotated[bool, typer.Option("--no-color", help="No color (also: NO_COLOR set).")],
    "k8s_version": Annotated[
        str | None,
        typer.Option("--k8s-version", help="Replay as this release (default: the server's /version)."),
    ],
    "scheduler_config": Annotated[
        str | None,
        typer.Option(
            "--scheduler-config",
            metavar="FILE",
            help="The cluster's KubeSchedulerConfiguration (default profile if absent).",
        ),
    ],
    "scheduler_config_from": Annotated[
        str | None,
        typer.Option(
            "--scheduler-config-from",
            help="Read the KubeSchedulerConfiguration from a ConfigMap: configmap/NAMESPACE/NAME.",
        ),
    ],
    "strict_config": Annotated[
        bool,
        typer.Option(
            "--strict-config", help="Reject configs naming out-of-tree plugins, as kube-scheduler does."
        ),
    ],
    "save_snapshot": Annotated[
        str | None,
        typer.Option(
            "--save-snapshot",
            metavar="FILE",
            help="Write what was fetched as YAML that `kdiagnose FILE` replays.",
        ),
    ],
    "full": Annotated[
        bool, typer.Option("--full", help="With --save-snapshot: keep env, args, annotations, everything.")
    ],
    "top": Annotated[
        int, typer.Option("--top", min=1, metavar="N", help="Show the scores of the top N feasible nodes.")
    ],
    "pools": Annotated[
        str | None,
        typer.Option(
            "--pools", metavar="FILE", help="Node pools for scale-up remedies (as for kdiagnose FILE)."
        ),
    ],
    "all_nodes": Annotated[
        bool, typer.Option("--all-nodes", help="Show every node, not groups and the top N.")
    ],
    "all_remedies": Annotated[
        bool,
        typer.Option(
            "--all-remedies",
            help="Search for and show every remedy (default: only the top 3 are searched for and shown).",
        ),
    ],
    "summary": Annotated[
        bool, typer.Option("--summary", help="One line per owner (or pod): verdict, cause, fix.")
    ],
    "debug": Annotated[bool, typer.Option("--debug", help="Tracebacks and request statistics on stderr.")],
}

_Command = TypeVar("_Command", bound=Callable[..., None])


def _with_shared_options(fn: _Command) -> _Command:
    """Typer reads a command's options from its signature: replace the command's `**shared` with the
    _SHARED_OPTIONS, so typer parses them and passes them back in as keyword arguments."""
    sig = inspect.signature(fn, eval_str=True)
    own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    defaults = {f.name: f.default for f in fields(LiveOptions)}
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=defaults[name], annotation=annotation)
        for name, annotation in _SHARED_OPTIONS.items()
    ]
    target: Any = fn
    target.__signature__ = sig.replace(parameters=[*own, *shared])
    return fn


@_with_shared_options
def pod_command(
    name: Annotated[
        str, typer.Argument(help="The pod: NAME, pod/NAME or NAMESPACE/NAME.", autocompletion=complete_pod)
    ],
    namespace: NamespaceOpt = None,
    **shared: Any,
) -> None:
    """Explain why a pod of the current cluster is Pending (read-only)."""
    # kubectl's forms: pod/NAME (pods/NAME, po/NAME), and NAMESPACE/NAME as kdiagnose's --pod takes it.
    kind, sep, rest = name.partition("/")
    if sep and kind in ("pod", "pods", "po") and rest:
        name = rest
    if "/" in name:
        ns, _, name = name.partition("/")
        if not ns or not name or "/" in name:
            raise UsageError(f"invalid pod {ns}/{name}: expected NAME, pod/NAME or NAMESPACE/NAME")
        if namespace is not None and namespace != ns:
            raise UsageError(f"pod {ns}/{name} is in namespace {ns}, not -n {namespace}")
        namespace = ns
    _main(LiveOptions(name=name, namespace=namespace, **shared))


@_with_shared_options
def pods_command(
    namespace: NamespaceOpt = None,
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="Every namespace.")] = False,
    selector: Annotated[str, typer.Option("-l", "--selector", help="Label selector, as kubectl -l.")] = "",
    **shared: Any,
) -> None:
    """Explain every Pending pod in scope of the current cluster (read-only)."""
    _main(LiveOptions(namespace=namespace, all_namespaces=all_namespaces, selector=selector, **shared))


def _held_text(d: Diagnosis, text: str) -> str:
    """A pod held at PreEnqueue has no PodScheduled condition because no attempt is made, not because no
    scheduler runs: say so instead of the triage's "is a scheduler running?"."""
    if d.preenqueue is None or d.gated or "no scheduler has" not in text:
        return text
    return (
        f"no PodScheduled condition yet: expected, kube-scheduler holds the pod at PreEnqueue "
        f"({d.preenqueue.plugin}) and makes no attempt until {d.preenqueue_wait}"
    )
