"""`-o json`: the versioned kdiagnose/v1 document (sorted keys and nodes; fields are added, never renamed)."""

from __future__ import annotations

import dataclasses
from itertools import compress, repeat
from operator import add, is_, mul, not_
from typing import TYPE_CHECKING, Any, BinaryIO, TypeAlias

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.results import PodReport, Recorded, Remedy, Report
    from kdiagnose.scheduler.framework import Status
    from kdiagnose.spool import FileText

# What `slim` keeps of a pod's report, without the Pod: profile, node count, handled, chosen node, owner.
Kept = tuple[str, int, bool, str | None, str]
# A pod's text from a worker (its parts, _pod_parts; the node map left in the worker's spool file when it
# came through one) and what `slim` keeps of its report.
Encoded: TypeAlias = "tuple[list[bytes | FileText], Kept]"

__all__ = ["API_VERSION", "pod_document", "render", "report_document", "status_document", "write"]

API_VERSION = "kdiagnose/v1"

FEASIBLE = "Feasible"
NOT_EVALUATED = "NotEvaluated"


def status_document(st: Status | None) -> dict[str, Any] | None:
    if st is None:
        return None
    return {
        "plugin": st.plugin or None,
        "code": st.code.label,
        "reasons": list(st.reasons),
        "details": [dict(d) for d in st.details],
    }


def _recorded(rec: Recorded | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {
        "message": rec.message,
        "count": rec.count,
        "ageSeconds": rec.age_seconds,
        "ageFrom": rec.age_reference,  # "now" (live) or "the dump" (its newest timestamp)
        "lastSeen": rec.last_seen or None,
        "conditionReason": rec.condition_reason or None,
        "conditionMessage": rec.condition_message or None,
        "agrees": rec.agrees,
        "explanation": rec.explanation or None,
        "events": [dict(e) for e in rec.events],
        "autoscaler": [dict(a) for a in rec.autoscaler],
    }


def pod_document(pr: PodReport, pools: dict[str, str], *, with_nodes: bool = True) -> dict[str, Any]:
    """One pod's entry (`with_nodes=False`: "nodes" left empty, for the streaming writer to fill)."""
    d = pr.diagnosis
    nodes: dict[str, Any] = {}
    for name, st in d.verdicts.items() if with_nodes else ():
        b = d.scores.get(name)
        nodes[name] = {
            "verdict": FEASIBLE if st.ok else st.code.label,
            "plugin": st.plugin or None,
            "reasons": list(st.reasons),
            "details": [dict(x) for x in st.details],
            "pool": pools.get(name),
            "scores": {p: s.score for p, s in b.plugins.items()} if b is not None else {},
            "weightedScores": {p: s.weighted for p, s in b.plugins.items()} if b is not None else {},
            "totalScore": b.total if b is not None else None,
        }
    # v1.32+: nodes outside a PreFilterResult are UnschedulableAndUnresolvable with no plugin (the absent
    # status of findNodesThatFitPod); v1.31, and nodes skipped because the nominated node fit: NotEvaluated.
    counted = d.absent if d.absent_counted else None
    for name in d.not_evaluated if with_nodes else ():
        nodes[name] = {
            "verdict": counted.code.label if counted is not None else NOT_EVALUATED,
            "plugin": None,
            "reasons": list(counted.reasons) if counted is not None else [],
            "details": [],
            "pool": pools.get(name),
            "scores": {},
            "weightedScores": {},
            "totalScore": None,
        }
    from kdiagnose.scheduler.diagnosis import ScoreTable

    if isinstance(d.scores, ScoreTable):
        # Every breakdown of a table carries the table's skipped list: no need to build them all.
        skipped = sorted(set(d.scores.skipped)) if d.scores.nodes else []
    else:
        skipped = sorted({p for b in d.scores.values() for p in b.skipped})
    pre = None
    if d.preemption is not None:
        pre = {
            "nominatedNode": d.preemption.nominated_node,
            "victims": sorted(v.key for v in d.preemption.victims),
            "pdbViolations": d.preemption.pdb_violations,
        }
    return {
        "pod": d.pod.key,
        "scheduled": d.scheduled,
        "handled": d.handled,
        "notHandledReason": d.not_handled_reason or None,
        "attempted": d.attempted,
        "message": d.message,
        "fullMessage": d.full_message,
        "profile": d.profile,
        "owner": pr.owner or None,
        "triage": pr.triage or None,
        "numNodes": d.num_all_nodes,
        "nodes": dict(sorted(nodes.items())),
        "feasibleNodes": sorted(d.feasible),
        "topNodes": list(d.top_nodes),
        "node": d.chosen,
        "scoredByScheduler": d.scored_by_scheduler,
        "feasibleNodesToFind": d.feasible_to_find or None,
        "nominatedNodeUsed": d.nominated_node_used,
        "preemption": pre,
        "gates": list(d.pod.scheduling_gates) if d.gated else [],
        "preenqueueWaitsFor": d.preenqueue_wait or None,
        "preenqueue": status_document(d.preenqueue),
        "prefilter": status_document(d.prefilter),
        "prefilterNodeNames": d.prefilter_node_names,
        "postfilter": status_document(d.postfilter),
        "notes": list(d.notes),
        "remedies": [_remedy(r) for r in pr.remedies],
        "remedyNotes": list(pr.remedy_notes),
        # The search stopped once the top remedies were known: later kinds (and their notes) not tried.
        "remediesTruncated": {
            "kindsNotTried": list(pr.remedies_not_tried),
            "shown": len(pr.remedies),
            "all": "rerun with --all-remedies to try every kind",
        }
        if pr.remedies_not_tried
        else None,
        "skippedScores": skipped,
        "recorded": _recorded(pr.recorded),
        "whyPending": pr.why_pending or None,
        "notReplayed": pr.not_replayed or None,
    }


def _remedy(r: Remedy) -> dict[str, Any]:
    """A remedy as data: `patch` is the patch document itself (`patchText` the YAML the report prints)."""
    doc = dataclasses.asdict(r)
    doc["patchText"] = doc.pop("patch")
    doc["patch"] = doc.pop("patch_document")
    return doc


def report_document(report: Report, *, with_pods: bool = True) -> dict[str, Any]:
    """The whole report as plain data (shared by the JSON and YAML formats; `with_pods=False`: "pods"
    left empty, for the streaming writer)."""
    pods = [
        pod_document(pr, report.node_pools)
        for pr in sorted(report.pods, key=lambda p: p.diagnosis.pod.key)
        if with_pods
    ]
    scheduled = sum(1 for p in report.pods if p.diagnosis.scheduled)
    return {
        "apiVersion": API_VERSION,
        "kind": "Diagnosis",
        "kubernetesVersion": report.k8s_version,
        "kubernetesVersionReason": report.k8s_version_reason,
        "source": report.source,
        "summary": {
            "nodes": report.num_nodes,
            "podsInInput": report.num_pods,
            "diagnosed": len(report.pods),
            "schedulable": scheduled,
            "unschedulable": len(report.pods) - scheduled,
        },
        "warnings": list(report.warnings),
        "profileNotes": list(report.profile_notes),
        "profiles": dict(sorted(report.profiles.items())),
        "skippedKinds": dict(sorted(report.skipped_kinds.items())),
        "missingKinds": list(report.missing_kinds),
        "replayDenied": list(report.replay_denied),
        "rbac": report.rbac or None,
        "scopeHint": report.scope_hint or None,
        "scopeCommand": report.scope_command or None,
        "nodePools": dict(sorted(report.node_pools.items())),
        "pods": pods,
        # Pending pods of one owner placed one after another (each pod's own entry above is unchanged).
        "owners": [
            {
                "owner": owner,
                "pods": sorted(p.diagnosis.pod.key for p in report.pods if p.owner == owner),
                "total": seq.total,
                "fitOneAfterAnother": seq.fit,
                "byNode": dict(seq.by_node),
                "capped": seq.capped,
                "firstNotFitting": seq.first_failing or None,
                "rest": seq.rest or None,
                "restFix": seq.rest_fix or None,
            }
            for owner, seq in sorted(report.sequential.items())
        ],
    }


def _default(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def to_plain(doc: Any) -> Any:
    """Details are chosen by plugin authors and may hold sets or objects: make them JSON values."""
    import orjson

    return orjson.loads(orjson.dumps(doc, default=_default))


def render(report: Report) -> str:
    import io

    buf = io.BytesIO()
    write(report, buf)
    return buf.getvalue().decode()


# ---------------------------------------------------------------------------------------------- streaming
#
# 1,000 pending pods at 5,000 nodes are 5 million node entries (GBs of JSON): `write` emits the document
# pod by pod, each pod's node map as text, without building the whole document (or its bytes) in memory.
# The bytes are those of orjson.dumps(report_document(report), OPT_SORT_KEYS | OPT_INDENT_2) plus "\n"
# exactly (tests/test_fast_paths.py compares them): every piece is orjson's own output, re-indented.

_PODS_HOLE = "kdiagnose:pods"
_NODES_HOLE = b'\n  "nodes": {},\n'


def _dumps(value: Any) -> bytes:
    import orjson

    data: bytes = orjson.dumps(value, default=_default, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    return data


def _indent(data: bytes, spaces: int) -> bytes:
    """orjson's indented text of a value, as it reads nested `spaces` deeper (strings hold no raw newline)."""
    pad = b" " * spaces
    return data.replace(b"\n", b"\n" + pad)


class _Names:
    """Per document: each node's `        "name": ` text (at its depth in -o json) and its pool's JSON, and
    its rank in name order (the same for every pod)."""

    __slots__ = ("every", "every_prefixes", "pool_text", "pools", "prefix", "rank", "recent")

    def __init__(self, pools: dict[str, str]) -> None:
        self.pools = pools
        # Two dicts, not one of pairs: a column of either is one C-level map over the names.
        self.prefix: dict[str, bytes] = {}
        self.pool_text: dict[str, bytes] = {}
        self.rank: dict[str, int] = {}
        self.every: list[str] = []  # the names of `rank`, in name order
        self.every_prefixes: list[bytes] | None = None  # prefixes(every), made once per `every`
        # The last few node maps written (_node_entries), with the objects they were made from: replicas of
        # one owner share one replay's verdicts and scores (the Scheduler's memo), and their maps are the
        # same megabytes of text. Only a few: distinct pods (the streamed case) must not keep theirs.
        self.recent: dict[tuple[int, ...], tuple[object, object, object, object, bytes | None]] = {}

    def _known(self, names: list[str]) -> None:
        if not all(map(self.prefix.__contains__, names)):
            for name in names:
                self.text(name)

    def pool_texts(self, names: list[str]) -> list[bytes]:
        """The pool's JSON of each name (text(name)[1]), as a column."""
        self._known(names)
        return list(map(self.pool_text.__getitem__, names))

    def prefixes(self, names: list[str]) -> list[bytes]:
        """The `"name": ` text of each name (text(name)[0]), as a column; for `every` (every pod's map has
        every node) the same list each time."""
        if names is self.every and self.every_prefixes is not None:
            return self.every_prefixes
        self._known(names)
        column = list(map(self.prefix.__getitem__, names))
        if names is self.every:
            self.every_prefixes = column
        return column

    def in_order(self, entries: dict[str, bytes]) -> list[str]:
        """The entries' names in name order (their rank's order, the order `order` sorts by)."""
        if entries.keys() == self.rank.keys():
            return self.every  # the same nodes as the pods before (every pod's map has every node)
        rank = self.order(list(entries))
        return sorted(entries, key=rank.__getitem__)

    def text(self, name: str) -> tuple[bytes, bytes]:
        t = self.prefix.get(name)
        if t is None:
            t = self.prefix[name] = b"        " + _dumps(name) + b": "
            self.pool_text[name] = _dumps(self.pools.get(name))
        return t, self.pool_text[name]

    def order(self, names: list[str]) -> dict[str, int]:
        if any(n not in self.rank for n in names):
            every = sorted({*self.rank, *names})
            self.rank = {n: i for i, n in enumerate(every)}
            self.every = every
            self.every_prefixes = None
        return self.rank


# _Names.recent: node maps kept for the replicas written next.
_RECENT_MAPS = 4


def _node_entries(pr: PodReport, pools: dict[str, str], names: _Names | None = None) -> bytes | None:
    """_node_map's text, the same for pods whose diagnoses share their verdicts, scores and not-evaluated
    nodes (the objects themselves: replicas diagnosed once), made once for them."""
    if names is None or names.pools is not pools:
        return _node_map(pr, pools, names)
    d = pr.diagnosis
    made = (d.verdicts, d.scores, d.not_evaluated, d.absent)
    key = (*map(id, made), d.absent_counted, bool(d.feasible))
    hit = names.recent.get(key)
    # The objects are kept with the text, so their ids cannot be another object's while it is here.
    if hit is not None and all(a is b for a, b in zip(hit[:4], made, strict=True)):
        return hit[4]
    text = _node_map(pr, pools, names)
    if len(names.recent) >= _RECENT_MAPS:
        del names.recent[next(iter(names.recent))]
    names.recent[key] = (*made, text)
    return text


def _node_map(pr: PodReport, pools: dict[str, str], names: _Names | None = None) -> bytes | None:
    """The text of pod_document's "nodes" entries as they read in the -o json document (a pod's entries in
    the "pods" list: every line 4 spaces deeper than in the pod's own document), or None for the plain path.

    A feasible node's entry is a template filled with its scores (one per pod: every feasible node has
    the same score columns); a rejected one is orjson's text of its entry, shared by the nodes that share
    a Status object (batch filters, PreFilter rejections) and a pool."""
    from kdiagnose.scheduler.diagnosis import ScoreTable
    from kdiagnose.scheduler.framework import SUCCESS

    d = pr.diagnosis
    table = d.scores
    if not isinstance(table, ScoreTable):
        if table:
            return None
        table = ScoreTable([])  # nothing scored (no feasible node): every entry is a rejection
    if d.feasible and not table.columns:
        return None
    if any(n in d.verdicts for n in d.not_evaluated):
        return None  # the plain path lets the later entry win; never the case for the runner's output
    # ScoreBreakdown.plugins: one per column; sorted by name as OPT_SORT_KEYS writes them.
    cols = sorted(((plugin, weight, norm) for plugin, weight, _, norm in table.columns), key=lambda c: c[0])
    if len({c[0] for c in cols}) != len(cols):
        return None
    totals = table.totals
    names = names if names is not None and names.pools is pools else _Names(pools)
    feasible_tpl = b""
    if cols:
        # Plugin names are plain identifiers: their JSON is their text in quotes (else the plain path).
        if any(_dumps(c[0]) != b'"' + c[0].encode() + b'"' for c in cols):
            return None
        scores = b",".join(b'\n            "%s": %%d' % c[0].encode() for c in cols)
        feasible_tpl = (
            b'{\n          "details": [],\n          "plugin": null,\n          "pool": %s,'
            b'\n          "reasons": [],\n          "scores": {' + scores + b"\n          },"
            b'\n          "totalScore": %d,\n          "verdict": "Feasible",'
            b'\n          "weightedScores": {' + scores + b"\n          }\n        }"
        )
    # Column at a time (C-level maps over the node lists), not a Python loop per node: the same values and
    # the same text per entry as formatting each node's entry on its own (test_fast_paths compares with the
    # plain document byte for byte).
    vnames = list(d.verdicts)
    vstats = list(d.verdicts.values())
    succ = list(map(is_, vstats, repeat(SUCCESS)))
    feas = list(compress(vnames, succ))
    rej_names: list[str] = []
    rej_entries: list[bytes] = []  # the entries after their `"name": `, rejected nodes in verdict order
    feas_entries: list[bytes] = []  # and feasible ones
    if len(feas) != len(vnames):
        fails = list(map(not_, succ))
        rej_names = list(compress(vnames, fails))
        rej_stats = list(compress(vstats, fails))
        # A Success other than SUCCESS, or a scored node rejected: the plain path.
        if any(
            st.ok for st in dict(zip(map(id, rej_stats), rej_stats, strict=True)).values()
        ) or not totals.keys().isdisjoint(rej_names):
            return None
        rej_pools = list(map(pools.get, rej_names))
        keys = list(zip(map(id, rej_stats), rej_pools, strict=True))
        bodies: dict[tuple[int, str | None], bytes] = {}
        for key, st in dict(zip(keys, rej_stats, strict=True)).items():
            bodies[key] = _indent(
                _dumps(
                    {
                        "verdict": st.code.label,
                        "plugin": st.plugin or None,
                        "reasons": list(st.reasons),
                        "details": [dict(x) for x in st.details],
                        "pool": key[1],
                        "scores": {},
                        "weightedScores": {},
                        "totalScore": None,
                    }
                ),
                8,
            )
        rej_entries = list(map(bodies.__getitem__, keys))
    if feas:
        if not all(map(totals.__contains__, feas)):
            return None
        vals = [list(map(norm.get, feas, repeat(0))) for _, _, norm in cols]
        weighted = [list(map(mul, col, repeat(w))) for col, (_, w, _) in zip(vals, cols, strict=True)]
        total: list[int] = [0] * len(feas)
        for col in weighted:  # sum(weighted) per node: 0 + the first column + the next ..., in column order
            total = list(map(add, total, col))
        rows = zip(names.pool_texts(feas), *vals, total, *weighted, strict=True)
        feas_entries = list(map(feasible_tpl.__mod__, rows))
    if not d.not_evaluated and names.every == vnames:
        # The verdicts are in name order already (the snapshot's node order, as every pod before): each
        # node's entry is the next of its kind, taken by the verdict column (False: rejected, True:
        # feasible) without a dict of the entries or a sort.
        sources = (iter(rej_entries), iter(feas_entries))
        entries = list(map(next, map(sources.__getitem__, succ)))
        return _joined(names.prefixes(names.every), entries)
    out: dict[str, bytes] = dict(zip(rej_names, rej_entries, strict=True))
    out.update(zip(feas, feas_entries, strict=True))
    counted = d.absent if d.absent_counted else None
    if d.not_evaluated:
        pad: dict[str | None, bytes] = {}
        for name in d.not_evaluated:
            pool = pools.get(name)
            body = pad.get(pool)
            if body is None:
                body = pad[pool] = _indent(
                    _dumps(
                        {
                            "verdict": counted.code.label if counted is not None else NOT_EVALUATED,
                            "plugin": None,
                            "reasons": list(counted.reasons) if counted is not None else [],
                            "details": [],
                            "pool": pool,
                            "scores": {},
                            "weightedScores": {},
                            "totalScore": None,
                        }
                    ),
                    8,
                )
            out[name] = body
        if len(out) != len(vnames) + len(d.not_evaluated):
            return None  # a node not evaluated twice: the plain path writes its entry once
    # In name order (the rank every pod's map shares).
    order = names.in_order(out)
    return _joined(names.prefixes(order), list(map(out.__getitem__, order)))


_ENTRY_SEP = b",\n"


def _joined(prefixes: list[bytes], entries: list[bytes]) -> bytes:
    """One join of (name, entry, separator) triples: no string per entry made only to be copied into the
    map's text."""
    parts: list[bytes] = [_ENTRY_SEP] * (3 * len(entries))
    parts[0::3] = prefixes
    parts[1::3] = entries
    if parts:
        parts[-1] = b""
    return b"".join(parts)


def _pod_parts(pr: PodReport, pools: dict[str, str], names: _Names) -> list[bytes]:
    """orjson's text of pod_document(pr) as it reads in the "pods" list (4 spaces deeper, `_indent`, and the
    4 spaces before it), in parts written one after another: the node map filled in as text when
    _node_entries can (already at that depth: the megabytes of a 5,000-node map are neither indented nor
    copied into one string with the rest: each copy of 1,000 pods' maps is 2.8 GB of memory traffic)."""
    d = pr.diagnosis
    nodes = _node_entries(pr, pools, names) if d.verdicts or d.not_evaluated else None
    if nodes is None:
        return [b"    ", _indent(_dumps(pod_document(pr, pools)), 4)]
    doc = pod_document(pr, pools, with_nodes=False)
    head, hole, tail = _dumps(doc).partition(_NODES_HOLE)
    if not hole:
        return [b"    ", _indent(_dumps(pod_document(pr, pools)), 4)]
    return [
        b"    " + _indent(head, 4) + b'\n      "nodes": {\n',
        nodes,
        b"\n      },\n    " + _indent(tail, 4),
    ]


def _pods_parts(report: Report) -> tuple[bytes, bytes] | None:
    """The document's text before and after its pods (the report's own pods left out), or None."""
    doc = report_document(report, with_pods=False)
    doc["pods"] = [_PODS_HOLE]
    head, hole, tail = _dumps(doc).partition(b'"pods": [\n    "' + _PODS_HOLE.encode() + b'"\n  ]')
    return (head, tail) if hole else None


class PodStream:
    """The -o json document written while the pods are diagnosed (pipeline.diagnose_snapshot's `sink`):
    each pod's text as soon as its report is complete, so its verdicts and score tables can be dropped;
    the pipeline keeps only what the rest of the document and the exit code read (`slim`). The bytes are
    those `write` gives for the whole report: the parts before "pods" (up to "owners", empty when the
    pipeline streams) are known before the first pod, the summary after them is written last."""

    # The node map of a pod a worker spooled stays in its file (pipeline._in_workers): sendfile writes it.
    takes_file_texts = True

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.started = False
        self.refused = False
        self._names: _Names | None = None

    def pod(self, report: Report, pr: PodReport) -> PodReport:
        if not self._start(report):
            return pr
        assert self._names is not None
        self.out.writelines(_pod_parts(pr, report.node_pools, self._names))
        return slim(pr)

    def _start(self, report: Report) -> bool:
        """Write what comes before the next pod; False when the whole document is written at the end."""
        if self.refused:
            return False
        if not self.started:
            parts = _pods_parts(report)
            if parts is None:  # as in `write`: cannot happen; the whole document is written at the end
                self.refused = True
                return False
            self.out.write(parts[0] + b'"pods": [\n')
            self._names = _Names(report.node_pools)
            self.started = True
        else:
            self.out.write(b",\n")
        return True

    # The two halves of `pod` for diagnose_snapshot's worker processes: `encode` in a worker (the pod's
    # text and what `slim` keeps, without the Pod object, which the parent has), `emit` in the parent, in
    # pod key order. Each worker has its own _Names: a cache of per-node texts, the same in every process.

    def encode(self, report: Report, pr: PodReport) -> Encoded:
        if self._names is None:
            self._names = _Names(report.node_pools)
        return list(_pod_parts(pr, report.node_pools, self._names)), kept_of(pr)

    def emit(self, report: Report, pod: Pod, encoded: Encoded) -> PodReport:
        """Write a pod `encode` gave (in a worker) and return what `slim` would keep of its report."""
        parts, kept = encoded
        started = self._start(report)
        # _pods_parts does not depend on the pods: a refusal would have come before the workers started.
        assert started, "the parallel path needs the streamed document"
        from kdiagnose.spool import write_texts

        write_texts(self.out, parts)
        return from_kept(pod, kept)

    def finish(self, report: Report) -> None:
        """The rest of the document (all of it when no pod was streamed)."""
        if not self.started:
            write(report, self.out)
            return
        parts = _pods_parts(report)
        assert parts is not None  # the same keys as at the first pod
        self.out.write(b"\n  ]" + parts[1] + b"\n")


def slim(pr: PodReport) -> PodReport:
    """What stays of a written pod: its key, whether it was placed, its owner (summary, exit code)."""
    return from_kept(pr.diagnosis.pod, kept_of(pr))


def kept_of(pr: PodReport) -> Kept:
    """What `slim` keeps, as a worker sends it to the parent (which has the Pod)."""
    d = pr.diagnosis
    return (d.profile, d.num_all_nodes, d.handled, d.chosen, pr.owner)


def from_kept(pod: Pod, kept: Kept) -> PodReport:
    """The slim report of `pod` from what `kept_of` kept."""
    from kdiagnose.results import PodReport
    from kdiagnose.scheduler.diagnosis import Diagnosis

    profile, num_all_nodes, handled, chosen, owner = kept
    d = Diagnosis(pod=pod, profile=profile, num_all_nodes=num_all_nodes, handled=handled)
    d.chosen = chosen
    return PodReport(diagnosis=d, owner=owner)


def write(report: Report, out: BinaryIO) -> None:
    """The -o json document, written piece by piece to a binary stream."""
    prs = sorted(report.pods, key=lambda p: p.diagnosis.pod.key)
    if not prs:
        out.write(_dumps(report_document(report)) + b"\n")
        return
    doc = report_document(report, with_pods=False)
    doc["pods"] = [_PODS_HOLE]
    head, hole, tail = _dumps(doc).partition(b'"pods": [\n    "' + _PODS_HOLE.encode() + b'"\n  ]')
    if not hole:  # cannot happen: keys are sorted and the hole is unique; the plain path then
        out.write(_dumps(report_document(report)) + b"\n")
        return
    out.write(head + b'"pods": [\n')
    names = _Names(report.node_pools)
    for i, pr in enumerate(prs):
        if i:
            out.write(b",\n")
        out.writelines(_pod_parts(pr, report.node_pools, names))
    out.write(b"\n  ]" + tail + b"\n")
