"""`.kdiagnose.yaml`: the CI gate's per-repository defaults, found from the working directory upward.

```yaml
snapshot: clusters/prod.yaml        # relative paths are relative to this file
failOn: unschedulable               # unschedulable | preemption | scale-up
k8sVersion: v1.34.1
schedulerConfig: sched.yaml
ignore:                             # workloads the gate skips (reported as skipped)
  - kind: Job                       # every Job
  - name: debug-shell               # any kind, any namespace
  - Deployment/legacy-batch         # KIND/NAME or KIND/NAMESPACE/NAME
```
Command-line flags win over the file. Unknown keys are a usage error, so a typo never silently does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdiagnose.errors import ConfigError
from kdiagnose.gate.policy import FAIL_ON

__all__ = ["CONFIG_NAME", "FAIL_ON", "GateConfig", "IgnoreRule", "discover_config", "load_gate_config"]

CONFIG_NAME = ".kdiagnose.yaml"

# Both spellings: camelCase as in Kubernetes objects, kebab-case as the flags are written.
_KEYS = {
    "snapshot": "snapshot",
    "failOn": "fail_on",
    "fail-on": "fail_on",
    "k8sVersion": "k8s_version",
    "k8s-version": "k8s_version",
    "schedulerConfig": "scheduler_config",
    "scheduler-config": "scheduler_config",
    "ignore": "ignore",
}


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """Matches a workload when every field that is set matches (case-sensitive, as Kubernetes names are)."""

    kind: str = ""
    name: str = ""
    namespace: str = ""

    def matches(self, kind: str, namespace: str, name: str) -> bool:
        return (
            (not self.kind or self.kind == kind)
            and (not self.name or self.name == name)
            and (not self.namespace or self.namespace == namespace)
        )

    def __str__(self) -> str:
        parts = [
            f"{k}={v}"
            for k, v in (("kind", self.kind), ("namespace", self.namespace), ("name", self.name))
            if v
        ]
        return ", ".join(parts)


@dataclass(slots=True)
class GateConfig:
    path: str = ""  # "" when no file was found
    snapshot: str | None = None
    fail_on: str | None = None
    k8s_version: str | None = None
    scheduler_config: str | None = None
    ignore: list[IgnoreRule] = field(default_factory=list)

    def ignored(self, kind: str, namespace: str, name: str) -> IgnoreRule | None:
        return next((r for r in self.ignore if r.matches(kind, namespace, name)), None)


def discover_config(start: Path | None = None) -> Path | None:
    """The nearest `.kdiagnose.yaml` in `start` (default: the working directory) or one of its parents."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def _rule(item: Any, where: str) -> IgnoreRule:
    if isinstance(item, str):
        parts = item.split("/")
        if len(parts) == 1 and parts[0]:
            return IgnoreRule(name=parts[0])
        if len(parts) == 2 and all(parts):
            return IgnoreRule(kind=parts[0], name=parts[1])
        if len(parts) == 3 and all(parts):
            return IgnoreRule(kind=parts[0], namespace=parts[1], name=parts[2])
        raise ConfigError(f"{where}: {item!r}: expected NAME, KIND/NAME or KIND/NAMESPACE/NAME")
    if isinstance(item, dict):
        unknown = sorted(set(map(str, item)) - {"kind", "name", "namespace"})
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {', '.join(unknown)} (expected kind, name, namespace)"
            )
        values = {k: item.get(k) for k in ("kind", "name", "namespace")}
        if not any(values.values()) or not all(v is None or isinstance(v, str) for v in values.values()):
            raise ConfigError(f"{where}: set at least one of kind, name, namespace (strings)")
        return IgnoreRule(**{k: str(v or "") for k, v in values.items()})
    raise ConfigError(f"{where}: expected a string or a mapping, got {type(item).__name__}")


def load_gate_config(path: Path) -> GateConfig:
    """Parse one config file; paths in it are made relative to its folder."""
    from kdiagnose.load.files import parse_text

    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        docs = parse_text(data, str(path))
    except Exception as e:  # InputError for bad YAML: a config file is a usage matter (exit 2)
        raise ConfigError(str(e)) from None
    if not docs:
        return GateConfig(path=str(path))
    if len(docs) > 1 or not isinstance(docs[0], dict):
        raise ConfigError(f"{path}: expected one mapping")
    doc: dict[str, Any] = docs[0]
    unknown = sorted(str(k) for k in doc if k not in _KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(set(_KEYS)))})"
        )
    cfg = GateConfig(path=str(path))
    base = path.parent
    for key, value in doc.items():
        attr = _KEYS[str(key)]
        if attr == "ignore":
            if value is None:
                continue
            if not isinstance(value, list):
                raise ConfigError(f"{path}: ignore: expected a list")
            cfg.ignore = [_rule(item, f"{path}: ignore[{i}]") for i, item in enumerate(value)]
            continue
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: {key}: expected a non-empty string")
        if attr in ("snapshot", "scheduler_config") and not Path(value).is_absolute():
            value = str(base / value)
        if attr == "fail_on" and value not in FAIL_ON:
            raise ConfigError(f"{path}: {key}: {value!r}: expected one of {', '.join(FAIL_ON)}")
        setattr(cfg, attr, value)
    return cfg
