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

__all__ = ["ClusterTarget", "kubeconfig_paths", "redact_url", "resolve_target"]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def redact_url(url: str) -> str:
    """`https://user:password@host` -> `https://***@host`: the server as reports and errors show it."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url.rsplit("@", 1)[-1] if "@" in url else url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


@dataclass(slots=True)
class ClusterTarget:
    """The cluster a live command reads: context name, default namespace, server and client configuration."""

    context: str
    namespace: str
    server: str  # for display: userinfo (user:password@) redacted; the configuration keeps the real URL
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


def _run_exec_plugin(provider: Any, timeout: float) -> dict[str, Any]:
    """Run an exec credential plugin (client.authentication.k8s.io ExecCredential) within `timeout`: the
    client library would wait forever for a hung plugin, and on any failure only log it and send requests
    without credentials. Every failure here is one ClusterError line, before the first request."""
    import json
    import subprocess

    command = str(provider.args[0])
    info = {"apiVersion": provider.api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    if getattr(provider, "cluster", None) is not None:
        info["spec"]["cluster"] = provider.cluster.value
    env = {**provider.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
    what = f"exec credential plugin {command!r}"
    try:
        proc = subprocess.run(
            [str(a) for a in provider.args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            cwd=provider.cwd,
            env=env,
            timeout=timeout if timeout > 0 else None,
            check=False,
        )
    except FileNotFoundError:
        raise ClusterError(f"{what}: command not found") from None
    except PermissionError:
        raise ClusterError(f"{what}: not executable") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{what} did not finish within {timeout:g}s (--request-timeout)") from None
    if proc.returncode != 0:
        err = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:200]
        raise ClusterError(f"{what} exited with code {proc.returncode}" + (f": {err}" if err else ""))
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise ClusterError(f"{what} printed no ExecCredential (its output is not JSON)") from None
    status = doc.get("status") if isinstance(doc, dict) else None
    if not isinstance(status, dict):
        raise ClusterError(f"{what} printed an ExecCredential without a status")
    if not (isinstance(status.get("token"), str) and status["token"]) and not (
        status.get("clientCertificateData") and status.get("clientKeyData")
    ):
        raise ClusterError(f"{what} returned no credential (no token, no client certificate and key)")
    return status


def _exec_checked_loader(base: Any, timeout: float) -> Any:
    """KubeConfigLoader whose exec plugin runs under our timeout and fails loudly."""

    class Loader(base):  # type: ignore[misc,valid-type]
        def _load_from_exec_plugin(self) -> Any:
            if "exec" not in self._user:
                return None
            from kubernetes.config import exec_provider

            make: Any = exec_provider.ExecProvider
            provider = make(self._user["exec"], self._get_base_path(self._cluster.path), self._cluster)
            status = _run_exec_plugin(provider, timeout)
            if status.get("token"):
                self.token = f"Bearer {status['token']}"
                return True
            return super()._load_from_exec_plugin()  # a client certificate: the library writes the files

    return Loader


def resolve_target(
    kubeconfig: str | None = None, context: str | None = None, *, exec_timeout: float = 30.0
) -> ClusterTarget:
    """Build a client Configuration the way kubectl picks one, naming the context and default namespace.
    An exec credential plugin must produce a credential within `exec_timeout` seconds."""
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
            return ClusterTarget("in-cluster", ns or "default", redact_url(str(cfg.host)), cfg, "in-cluster")
        where = "KUBECONFIG lists no existing file" if os.environ.get("KUBECONFIG") else "no ~/.kube/config"
        raise ClusterError(f"no kubeconfig: {where}, and not running inside a cluster (use --kubeconfig)")
    from kubernetes.config import kube_config

    loader_cls: Any = _exec_checked_loader(kube_config.KubeConfigLoader, exec_timeout)
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
    return ClusterTarget(name, ns, redact_url(str(cfg.host)), cfg, ":".join(paths))
