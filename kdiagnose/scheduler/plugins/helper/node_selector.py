"""Node selector and label selector matching shared by plugins.

Mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go (node selector terms,
matchFields, lazy parse errors) and k8s.io/apimachinery/pkg/labels/selector.go (requirement validation and
matching), plus metav1.LabelSelectorAsSelector for `match_label_selector`.

Parse errors follow upstream: a node selector term that fails to parse (bad key, invalid label value,
unknown operator, wrong number of values, non-integer Gt/Lt value) matches no node; the other terms
still count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node

__all__ = [
    "LabelRequirement",
    "NodeSelectorTerm",
    "RequiredNodeSelector",
    "is_qualified_name",
    "match_label_selector",
    "match_node_selector_terms",
    "parse_label_selector",
    "parse_node_selector_term",
    "parse_preferred_terms",
]

_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# strconv.ParseInt(s, 10, 64): optional sign, ASCII digits only (no spaces, no underscores).
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

OBJECT_NAME_FIELD = "metadata.name"


def is_qualified_name(key: str) -> bool:
    """validation.IsQualifiedName: `[prefix/]name`, prefix a DNS-1123 subdomain."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_NAME_RE.match(name))


def _valid_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE_RE.match(value))


def _parse_int64(text: str) -> int | None:
    if not _INT_RE.match(text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _values(raw: Any) -> list[str]:
    if not isinstance(raw, list):
        return []
    return ["" if v is None else str(v) for v in raw]


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One parsed labels.Requirement; `op` is the NodeSelectorOperator spelling (In, NotIn, Exists, ...)."""

    key: str
    op: str
    values: frozenset[str]
    number: int = 0  # the Gt/Lt operand

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            v = labels.get(self.key)
            if v is None:
                return False
            n = _parse_int64(v)
            if n is None:
                return False
            return n > self.number if op == "Gt" else n < self.number
        return False

    def __str__(self) -> str:
        if self.op in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.op}"
        if self.op in ("Gt", "Lt"):
            return f"{self.key} {self.op} {self.number}"
        return f"{self.key} {self.op} [{','.join(sorted(self.values))}]"


def _new_requirement(key: str, op: str, values: list[str]) -> LabelRequirement | None:
    """labels.NewRequirement: None when the requirement does not validate."""
    if not is_qualified_name(key):
        return None
    number = 0
    if op in ("In", "NotIn"):
        if not values:
            return None
    elif op in ("Exists", "DoesNotExist"):
        if values:
            return None
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            return None
        n = _parse_int64(values[0])
        if n is None:
            return None
        number = n
    else:
        return None
    if not all(_valid_label_value(v) for v in values):
        return None
    return LabelRequirement(key, op, frozenset(values), number)


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """A parsed v1.NodeSelectorTerm. `labels`/`fields` are None when the term has none of them;
    `parse_error` makes the term match nothing (and, as upstream, is only reported when nothing matched)."""

    labels: tuple[LabelRequirement, ...] | None
    fields: tuple[tuple[str, str, str], ...] | None  # (key, "In"|"NotIn", value)
    parse_error: str = ""
    raw: Mapping[str, Any] | None = None

    def match(self, node: Node) -> bool:
        if self.parse_error:
            return False
        if self.labels is not None:
            # An empty matchExpressions list is labels.Nothing() upstream, but newNodeSelectorTerm only
            # builds it when the list is non-empty, so `labels` is never an empty tuple here.
            node_labels = node.labels
            for r in self.labels:
                if not r.matches(node_labels):
                    return False
        if self.fields is not None and node.name:
            # extractNodeFields: only metadata.name; a missing field reads as "".
            for key, op, value in self.fields:
                actual = node.name if key == OBJECT_NAME_FIELD else ""
                if (actual == value) != (op == "In"):
                    return False
        return True

    def failing(self, node: Node) -> str:
        """The first requirement of this term the node fails, for reports ("" if it matches)."""
        if self.parse_error:
            return f"unparsable term: {self.parse_error}"
        if self.labels is not None:
            for r in self.labels:
                if not r.matches(node.labels):
                    return str(r)
        if self.fields is not None and node.name:
            for key, op, value in self.fields:
                actual = node.name if key == OBJECT_NAME_FIELD else ""
                if (actual == value) != (op == "In"):
                    return f"{key} {op} [{value}]"
        return ""


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def parse_node_selector_term(term: Mapping[str, Any]) -> NodeSelectorTerm:
    """newNodeSelectorTerm; call only for non-empty terms (empty terms select nothing and are dropped)."""
    errors: list[str] = []
    labels: tuple[LabelRequirement, ...] | None = None
    fields: tuple[tuple[str, str, str], ...] | None = None
    exprs = term.get("matchExpressions")
    if isinstance(exprs, list) and exprs:
        reqs: list[LabelRequirement] = []
        for i, e in enumerate(exprs):
            e = e if isinstance(e, dict) else {}
            key, op, vals = str(e.get("key") or ""), str(e.get("operator") or ""), _values(e.get("values"))
            r = _new_requirement(key, op, vals)
            if r is None:
                errors.append(f"matchExpressions[{i}]: invalid requirement {key!r} {op} {vals}")
            else:
                reqs.append(r)
        labels = tuple(reqs)
    mfields = term.get("matchFields")
    if isinstance(mfields, list) and mfields:
        fl: list[tuple[str, str, str]] = []
        for i, e in enumerate(mfields):
            e = e if isinstance(e, dict) else {}
            key, op, vals = str(e.get("key") or ""), str(e.get("operator") or ""), _values(e.get("values"))
            if op in ("In", "NotIn") and len(vals) == 1:
                fl.append((key, op, vals[0]))
            else:
                errors.append(f"matchFields[{i}]: invalid field requirement {key!r} {op} {vals}")
        fields = tuple(fl)
    return NodeSelectorTerm(labels, fields, "; ".join(errors), term)


def parse_node_selector_terms(terms: Any) -> list[NodeSelectorTerm]:
    """NewLazyErrorNodeSelector: the parsed non-empty terms (ORed)."""
    out: list[NodeSelectorTerm] = []
    if not isinstance(terms, list):
        return out
    for t in terms:
        if isinstance(t, dict) and not _is_empty_term(t):
            out.append(parse_node_selector_term(t))
    return out


def match_node_selector_terms(terms: list[dict[str, Any]], node: Node) -> bool:
    """Required node selector semantics: terms are ORed, requirements in a term ANDed; an empty or nil
    term matches nothing, so an empty list matches no node; unparsable terms match nothing."""
    return any(t.match(node) for t in parse_node_selector_terms(terms))


@dataclass(frozen=True, slots=True)
class RequiredNodeSelector:
    """nodeaffinity.RequiredNodeAffinity: the pod's nodeSelector ANDed with its required node affinity."""

    node_selector: tuple[tuple[str, str], ...] | None  # None: the pod has no nodeSelector
    terms: tuple[NodeSelectorTerm, ...] | None  # None: no requiredDuringScheduling...

    @staticmethod
    def of(node_selector: Mapping[str, str], affinity: Mapping[str, Any]) -> RequiredNodeSelector:
        sel = tuple(node_selector.items()) if node_selector else None
        na = affinity.get("nodeAffinity") if affinity else None
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None
        terms = None
        if isinstance(req, dict):
            terms = tuple(parse_node_selector_terms(req.get("nodeSelectorTerms")))
        return RequiredNodeSelector(sel, terms)

    def match(self, node: Node) -> bool:
        if self.node_selector is not None:
            labels = node.labels
            for k, v in self.node_selector:
                if labels.get(k) != v:
                    return False
        if self.terms is not None:
            return any(t.match(node) for t in self.terms)
        return True

    def failing(self, node: Node) -> dict[str, Any]:
        """Why `node` does not match, for Status.details ({} when it matches)."""
        if self.node_selector is not None:
            for k, v in self.node_selector:
                actual = node.labels.get(k)
                if actual != v:
                    return {"nodeSelector": f"{k}={v}", "nodeValue": actual}
        if self.terms is not None and not any(t.match(node) for t in self.terms):
            if not self.terms:
                return {"nodeAffinity": "no non-empty nodeSelectorTerms"}
            return {"nodeAffinity": [t.failing(node) for t in self.terms]}
        return {}


def label_keys(
    sel: RequiredNodeSelector, added: list[NodeSelectorTerm] | None = None
) -> tuple[str, ...] | None:
    """The label keys the required selectors read, in a fixed order; None when a term reads a field (the
    node's name), which makes every node distinct. Without fields a node's match is a function of the
    values (or absence) of these keys: callers decide it once per distinct tuple of values."""
    keys: dict[str, None] = {}
    for k, _ in sel.node_selector or ():
        keys[k] = None
    for t in (*(sel.terms or ()), *(added or ())):
        if t.fields is not None:
            return None
        for r in t.labels or ():
            keys[r.key] = None
    return tuple(keys)


def parse_preferred_terms(terms: Any) -> list[tuple[NodeSelectorTerm, int]]:
    """NewPreferredSchedulingTerms: (term, weight) for weighted, non-empty, parsable terms.

    Upstream fails the whole PreScore when any term does not parse; the API server's validation makes that
    unreachable for stored pods, so unparsable terms are dropped here."""
    out: list[tuple[NodeSelectorTerm, int]] = []
    if not isinstance(terms, list):
        return out
    for t in terms:
        if not isinstance(t, dict):
            continue
        weight = t.get("weight")
        pref = t.get("preference")
        if not isinstance(weight, int) or weight == 0 or not isinstance(pref, dict) or _is_empty_term(pref):
            continue
        term = parse_node_selector_term(pref)
        if not term.parse_error:
            out.append((term, weight))
    return out


# ---- metav1.LabelSelector ----------------------------------------------------------------------------

_LABEL_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


def parse_label_selector(selector: Mapping[str, Any] | None) -> tuple[LabelRequirement, ...] | None:
    """metav1.LabelSelectorAsSelector as requirements: () selects everything, None selects nothing
    (a nil selector, or one that does not parse -- upstream returns an error there, which plugins turn
    into an Error status; matching nothing is the conservative reading for a diagnosis)."""
    if selector is None:
        return None
    reqs: list[LabelRequirement] = []
    ml = selector.get("matchLabels")
    if isinstance(ml, dict):
        for k, v in ml.items():
            r = _new_requirement(str(k), "In", ["" if v is None else str(v)])
            if r is None:
                return None
            reqs.append(r)
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        for e in exprs:
            e = e if isinstance(e, dict) else {}
            op = str(e.get("operator") or "")
            if op not in _LABEL_SELECTOR_OPS:
                return None
            r = _new_requirement(str(e.get("key") or ""), op, _values(e.get("values")))
            if r is None:
                return None
            reqs.append(r)
    return tuple(reqs)


def match_label_selector(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics: matchLabels and matchExpressions (In/NotIn/Exists/DoesNotExist) ANDed.

    An empty selector (`{}`) matches every label set; a nil selector (None) matches nothing; a selector
    that does not parse matches nothing. Callers matching many label sets should parse once with
    `parse_label_selector` and test `all(r.matches(labels) for r in reqs)`.
    """
    reqs = parse_label_selector(selector)
    if reqs is None:
        return False
    return all(r.matches(labels) for r in reqs)
