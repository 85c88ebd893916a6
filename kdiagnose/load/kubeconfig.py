"""Kubeconfig resolution as kubectl does it: --kubeconfig, else $KUBECONFIG's files merged, else
~/.kube/config, else the in-cluster service account; --context, else current-context.

One of the modules that import `kubernetes` (lazily, inside the functions, so the CLI starts fast): the
official client handles TLS, tokens and exec credential plugins.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kdiagnose.errors import ClusterError

__all__ = ["ClusterTarget", "kubeconfig_paths", "resolve_target"]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(slots=True)
class ClusterTarget:
    """The cluster a live command reads: context name, default namespace, server and client configuration."""

    context: str
    namespace: str
    server: str
    configuration: Any  # kubernetes.client.Configuration
    source: str = ""  # the kubeconfig file(s), or "in-cluster"


def kubeconfig_paths(flag: str | None, env: dict[str, str] | None = None) -> list[str]:
    """The files kubectl would read: --kubeconfig alone, else $KUBECONFIG's existing files, else ~/.kube/config."""
    environ: Any = os.environ if env is None else env
    if flag:
        path = os.path.expanduser(flag)
        if not os.path.exists(path):
            raise ClusterError(f"--kubeconfig {flag}: no such file")
        return [path]
    listed = str(environ.get("KUBECONFIG", ""))
    if listed:
        return [
            os.path.expanduser(p)
            for p in listed.split(os.pathsep)
            if p and os.path.exists(os.path.expanduser(p))
        ]
    default = os.path.expanduser("~/.kube/config")
    return [default] if os.path.exists(default) else []


def _merged_config(paths: list[str]) -> Any:
    """Merge like kubectl: the first file that defines a cluster/user/context name wins, and the
    first file that sets current-context wins (the client's merger lets the last one win)."""
    import yaml
    from kubernetes.config import kube_config

    merger_cls: Any = kube_config.KubeConfigMerger
    merger = merger_cls(kube_config.ENV_KUBECONFIG_PATH_SEPARATOR.join(paths))
    if merger.config is None:
        raise ClusterError(f"kubeconfig {', '.join(paths)}: no configuration found")
    current = ""
    for p in paths:
        with open(p, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or {}
        if isinstance(doc, dict) and doc.get("current-context"):
            current = str(doc["current-context"])
            break
    merger.config.value["current-context"] = current
    return merger.config


def resolve_target(kubeconfig: str | None = None, context: str | None = None) -> ClusterTarget:
    """Build a client Configuration the way kubectl picks one, naming the context and default namespace."""
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException

    paths = kubeconfig_paths(kubeconfig)
    cfg = Configuration()
    if not paths:
        if os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"):
            from kubernetes.config import incluster_config

            load_incluster: Any = incluster_config.load_incluster_config
            try:
                load_incluster(client_configuration=cfg)
            except ConfigException as e:
                raise ClusterError(f"in-cluster config: {e}") from None
            ns_file = _SA_DIR / "namespace"
            ns = ns_file.read_text().strip() if ns_file.exists() else "default"
            return ClusterTarget("in-cluster", ns or "default", str(cfg.host), cfg, "in-cluster")
        where = "KUBECONFIG lists no existing file" if os.environ.get("KUBECONFIG") else "no ~/.kube/config"
        raise ClusterError(f"no kubeconfig: {where}, and not running inside a cluster (use --kubeconfig)")
    from kubernetes.config import kube_config

    loader_cls: Any = kube_config.KubeConfigLoader
    try:
        merged = _merged_config(paths)
        if not context and not merged.value.get("current-context"):
            raise ClusterError(f"kubeconfig {':'.join(paths)}: no current-context set (use --context)")
        loader = loader_cls(config_dict=merged, active_context=context, config_base_path=None)
        loader.load_and_set(cfg)
        ctx = loader.current_context
    except ConfigException as e:
        if context and f"name {context} in" in str(e):
            # The client says "Invalid kube-config file. Expected object with name X in ... contexts list".
            raise ClusterError(f'context "{context}" not found in kubeconfig {":".join(paths)}') from None
        raise ClusterError(f"kubeconfig {':'.join(paths)}: {e}") from None
    except (OSError, ValueError) as e:  # unreadable file, bad YAML, missing cert file
        raise ClusterError(f"kubeconfig {':'.join(paths)}: {e}") from None
    name = str(ctx.get("name") or context or "")
    ns = str((ctx.get("context") or {}).get("namespace") or "default")
    return ClusterTarget(name, ns, str(cfg.host), cfg, ":".join(paths))
