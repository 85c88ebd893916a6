"""How a decoding worker process sends what it decoded to its parent: the one protocol of the file loader's
range workers (load/parallel.py) and the live Pod list's page workers (load/live_pods.py).

A worker decodes its part (a byte range of a file, a page of a List) into RawObjects, bound pods as compact
records (load/compact.py), and `pack`s them; the parent `unpack`s them, in the order the parts come in the
input, into the RawObjects the one-process decoder makes of the same items. The values many records share
are sent once per worker and load (`Sent` on the worker's side, `Received` on the parent's, one per worker
pid), so each part carries only what is new since that worker's last one. A `pack` that fails (a value
msgpack cannot carry) raises, and its caller rolls `Sent` back (`Sent.restore`) or gives the whole input to
the one-process path.
"""

from __future__ import annotations

import os
import sys
from sys import intern
from typing import Any

import msgspec

from kdiagnose.load.compact import BatchSource, BoundPod, Template, TemplateTable, template_pod
from kdiagnose.load.raw import RawObject
from kdiagnose.model.objects import Node, Pod, pod_from_row

__all__ = ["BOUND", "PLAIN", "Received", "Sent", "fork_context", "pack", "pack_part", "sent_for", "unpack"]

Obj = dict[str, Any]


def fork_context() -> Any:
    # fork shares the loaded modules (no re-import per worker); spawn where fork does not exist.
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform != "darwin" else "spawn")


# Sent as msgpack (msgspec), not pickled: four times faster to write, and faster to read. The values are what
# the JSON decoder made (dicts with string keys, lists, strings, numbers, booleans, None), which msgpack
# carries unchanged; anything it cannot carry (an integer past 64 bits) sends the file down the
# one-process path. A compact record goes as its row (model.objects.Row) with the values many pods share
# (namespaces, node names, timestamps, label sets, owner references, conditions) sent once per range and
# referred to by index, so the parent only looks them up (and interns each distinct string once).
PLAIN, BOUND = 0, 1


class _Table:
    """Values by identity or key -> their index in the list sent."""

    __slots__ = ("index", "values")

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def add(self, key: Any, value: Any) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.values)
            self.values.append(value)
        return i


_KEY = msgspec.json.Encoder()


class Sent:
    """What a worker has sent the parent in its earlier ranges of one load (`session`): the shared values
    (spec keys, strings, label sets, owner references, conditions) go once per worker, not once per range.
    Each range sends only the values new since the last (the tail of each table) with the worker's pid,
    and the parent keeps one list per worker and table (Received). Every value stays referenced by its
    table, so an id used as a key is never reused by another object while the load runs."""

    __slots__ = ("conds", "labels", "owners", "session", "strs", "templates")

    def __init__(self, session: str) -> None:
        self.session = session
        self.templates: _Table = _Table()
        self.strs: _Table = _Table()
        self.labels: _Table = _Table()
        self.owners: _Table = _Table()
        self.conds: _Table = _Table()

    def sizes(self) -> tuple[int, int, int, int, int]:
        return (
            len(self.templates.values),
            len(self.strs.values),
            len(self.labels.values),
            len(self.owners.values),
            len(self.conds.values),
        )

    def restore(self, sizes: tuple[int, int, int, int, int]) -> None:
        """Forget what a `pack` that failed added (its values never reached the parent), so the indices of
        the next range sent still match the parent's lists (load/live_pods.py goes on after such a page)."""
        for table, n in zip(
            (self.templates, self.strs, self.labels, self.owners, self.conds), sizes, strict=True
        ):
            del table.values[n:]
            table.index = {k: i for k, i in table.index.items() if i < n}


_WORKER_SENT: Sent | None = None


def sent_for(session: str) -> Sent:
    """This worker's Sent for the load `session`: a new one for a new load (a forked worker may inherit
    another load's, which its parent never received)."""
    global _WORKER_SENT
    if _WORKER_SENT is None or _WORKER_SENT.session != session:
        _WORKER_SENT = Sent(session)
    return _WORKER_SENT


def pack_part(objects: list[RawObject], session: str) -> bytes | None:
    """A part's objects packed by a worker that goes on after a part it cannot send (a live page, a YAML
    batch): None when msgpack cannot carry one of its values (an integer past 64 bits), with this worker's
    Sent rolled back, so that the parent, which decodes that part itself, and the worker agree on what was
    sent."""
    sent = sent_for(session)
    before = sent.sizes()
    try:
        return pack(objects, None, sent)
    except (msgspec.EncodeError, OverflowError, TypeError, ValueError):
        sent.restore(before)
        return None


def pack(objects: list[RawObject], end: int | None, sent: Sent) -> bytes:
    before = sent.sizes()
    templates = sent.templates
    sources: _Table = _Table()
    strs, labels, owners, conds = sent.strs, sent.labels, sent.owners, sent.conds
    rows: list[Any] = []
    for raw in objects:
        rec = raw.compact
        if isinstance(rec, BoundPod):
            t = templates.add(rec.template, rec.template)
            src = rec.source
            ns, name, uid, lab, own, ctime, dtime, node, phase, start, nominated, cond, resize, extra = (
                rec.row
            )
            rows.append(
                (
                    BOUND,
                    t,
                    sources.add(id(src), (src.lo, src.hi)),
                    rec.index,
                    strs.add(ns, ns),
                    name,
                    uid,
                    labels.add(id(lab) if lab else 0, lab),
                    owners.add(id(own) if own else 0, own),
                    strs.add(ctime, ctime),
                    dtime,
                    strs.add(node, node),
                    strs.add(phase, phase),
                    strs.add(start, start),
                    nominated,
                    conds.add(_KEY.encode(cond), cond) if cond else -1,
                    resize,
                    extra,
                )
            )
        else:
            rows.append((PLAIN, raw.obj, _valid(raw.obj)))
    stamp = next((r.compact.source.stamp for r in objects if isinstance(r.compact, BoundPod)), None)
    return msgspec.msgpack.encode(
        (
            end,
            os.getpid(),
            [t.key for t in templates.values[before[0] :]],
            sources.values,
            stamp,
            strs.values[before[1] :],
            labels.values[before[2] :],
            owners.values[before[3] :],
            conds.values[before[4] :],
            rows,
        )
    )


def _valid(obj: Obj) -> bool:
    """validate(obj) passes: checked here, in the worker, so that the parent skips it (its error, if any, is
    the parent's to report, with where the object is)."""
    from kdiagnose.load.raw import KNOWN_KINDS
    from kdiagnose.model.objects import ModelError
    from kdiagnose.model.validation import validate

    if obj.get("kind") not in KNOWN_KINDS:
        return False
    try:
        validate(obj)
    except (ModelError, TypeError, ValueError, AttributeError, KeyError, RecursionError):
        return False
    return True


def _extra(extra: list[Any]) -> tuple[Any, ...]:
    """Row's last value after msgpack (which makes every tuple a list)."""
    rcs, statuses, waiting = extra
    return rcs, {k: (v[0], v[1]) for k, v in statuses.items()}, tuple(tuple(w) for w in waiting)


class Received:
    """One worker's shared values as received so far in this load (its Sent, on the parent's side)."""

    __slots__ = ("conds", "labels", "models", "owners", "strs", "templates")

    def __init__(self) -> None:
        self.templates: list[Template] = []
        self.models: list[Pod | None] = []
        self.strs: list[str] = []
        self.labels: list[dict[str, str]] = []
        self.owners: list[Any] = []
        self.conds: list[Any] = []


def unpack(
    data: bytes,
    source: str,
    table: TemplateTable,
    path: str | None,
    typed: tuple[str, str] | None,
    received: dict[int, Received],
    source_class: type[BatchSource] = BatchSource,
) -> tuple[list[RawObject], int | None]:
    """A part's objects from its worker's bytes (`path` None: a live page, whose records keep no file
    range; `source_class`: how a record's item is decoded again from its batch, a JSON range's or a YAML
    batch's, stream_yaml.YamlBatchSource). `received`: per worker pid, what it sent in its earlier parts
    of this load (each worker's parts come in the order it decoded them: the tasks are handed out, and
    their results read, in input order)."""
    end, pid, keys, spans, stamp, new_strs, new_labels, new_owners, new_conds, rows = msgspec.msgpack.decode(
        data
    )
    got = received.get(pid)
    if got is None:
        got = received[pid] = Received()
    new_templates = [table.get(k) for k in keys]
    got.templates += new_templates
    # Each new spec is validated, admitted and modelled here, while the workers decode the later ranges,
    # instead of in build_snapshot once they are done (_Compacts.valid finds it modelled): the same call
    # (template_pod, release-independent), earlier. Most specs come with the first range.
    got.models += [template_pod(t) for t in new_templates]
    got.strs += [intern(x) for x in new_strs]
    got.labels += [{intern(k): intern(v) for k, v in d.items()} for d in new_labels]
    got.owners += new_owners
    got.conds += new_conds
    templates, models, strs, labels, owners, conds = (
        got.templates,
        got.models,
        got.strs,
        got.labels,
        got.owners,
        got.conds,
    )
    if stamp is not None:
        stamp = (stamp[0], stamp[1])
    sources = [source_class(path, None, lo, hi, typed, stamp) for lo, hi in spans]
    out: list[RawObject] = []
    append = out.append
    for row in rows:
        if row[0] == BOUND:
            _, t, src, index, ns, name, uid, lab, own, ctime, dtime, node, phase, start, nom, cond, rz, ex = (
                row
            )
            rec = BoundPod(
                (
                    strs[ns],
                    name,
                    uid,
                    labels[lab],
                    owners[own],
                    strs[ctime],
                    dtime,
                    strs[node],
                    strs[phase],
                    strs[start],
                    nom,
                    conds[cond] if cond >= 0 else [],
                    rz,
                    None if ex is None else _extra(ex),
                ),
                templates[t],
                sources[src],
                index,
            )
            model = models[t]
            if model is not None:
                # The Pod build_snapshot would make (its release template permitting, _Compacts.pod), made
                # now, while the workers decode the later ranges.
                rec.pre = pod_from_row(model, rec.row)
            append(RawObject(None, source, compact=rec))
        else:
            raw = RawObject(row[1], source, valid=row[2])
            if row[2] and row[1].get("kind") == "Node":
                # The Node build_snapshot would model (without keep_raw), modelled now, while the workers
                # decode the later ranges; if it fails, build_snapshot models it and reports the error.
                try:
                    raw.node = Node(row[1])
                except Exception:  # build_snapshot raises what it always raised
                    raw.node = None
            append(raw)
    return out, end
