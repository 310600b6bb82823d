"""Shared helpers of the construct tests: stacks, manifests, the template registry and cfn-lint, masking,
loading app.py and the benchmark scripts."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import aws_cdk as cdk
from aws_cdk import assertions

from cdk_triton.config import advisories
from cdk_triton.config.manifest import Manifest, manifest_from_dict
from tests.acknowledgments import CRITICAL

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "tests" / "fixtures" / "manifests"
EXAMPLE = MANIFESTS / "example.json"
TENSORRT = MANIFESTS / "tensorrt-uploaded.json"
ENV = cdk.Environment(account="123456789012", region="us-east-1")

#: Runs cfn-lint in a subprocess: ``[sys.executable, "-c", CFN_LINT, *files]``.
CFN_LINT = "import sys; from cfnlint.runner import main; sys.exit(main())"


class TemplateRegistry:
    """The templates a test session synthesized; the session fixture lints them all once at its end.

    Order-free: any test may add, and the check runs when the session's fixtures are torn down
    (``tests/unit/constructs/conftest.py``), whatever ran before.
    """

    def __init__(self) -> None:
        self.templates: dict[str, dict[str, Any]] = {}
        self.files: list[Path] = []

    def add(self, name: str, tpl: dict[str, Any]) -> None:
        self.templates[f"{name}-{len(self.templates):04d}"] = tpl

    def add_file(self, path: Path) -> None:
        """A template file written by an App's synth (e.g. the cdk-nag scenarios)."""
        self.files.append(path)

    def __len__(self) -> int:
        return len(self.templates) + len(self.files)


#: The session's registry (``template()`` adds to it; the session fixture lints it).
REGISTRY = TemplateRegistry()


def cfn_lint(templates: dict[str, dict[str, Any]], files: list[Path], workdir: Path) -> tuple[bool, str]:
    """Run cfn-lint once over ``templates`` (written to ``workdir``) and ``files``: (clean, its output)."""
    paths = [str(p) for p in files]
    for key, tpl in templates.items():
        path = workdir / (re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".template.json")
        path.write_text(json.dumps(tpl))
        paths.append(str(path))
    if not paths:
        return True, ""
    proc = subprocess.run([sys.executable, "-c", CFN_LINT, *paths], capture_output=True, text=True)
    clean = proc.returncode == 0 and not proc.stdout.strip()
    return clean, proc.stdout[-5000:] + proc.stderr[-2000:]


def new_stack(name: str = "TestStack", *, env: cdk.Environment | None = ENV) -> cdk.Stack:
    """A stack in a fresh App with the builtin CloudFormation validation off (cfn-lint runs later) and the
    suite's acknowledgment of the critical Triton advisories (``tests/acknowledgments.py``)."""
    app = cdk.App(
        builtin_cloud_formation_validation=False,
        context={advisories.CONTEXT_KEY: dict(CRITICAL)},  # the suite's one acknowledgment
    )
    return cdk.Stack(app, name, env=env)


def template(stack: cdk.Stack, *, collect: bool = True) -> assertions.Template:
    """Synthesize ``stack`` and remember its template for the cfn-lint run."""
    tpl = assertions.Template.from_stack(stack)
    if collect:
        REGISTRY.add(stack.node.path, tpl.to_json())
    return tpl


def resources(tpl: assertions.Template, rtype: str) -> dict[str, Any]:
    return tpl.find_resources(rtype)


def only(tpl: assertions.Template, rtype: str) -> dict[str, Any]:
    found = tpl.find_resources(rtype)
    assert len(found) == 1, f"expected one {rtype}, found {len(found)}"
    return next(iter(found.values()))


def load_example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return data


def manifest_with(mutate: Any = None, *, source: str | None = None) -> Manifest:
    """The example manifest, changed by ``mutate(dict)``."""
    data = load_example()
    if mutate is not None:
        mutate(data)
    return manifest_from_dict(data, source=source or str(EXAMPLE))


MIB = 1024**2


def with_components(data: dict[str, Any]) -> None:
    """Mutate the example manifest: an ``InferenceComponents`` entry ``components`` on the MME's archives
    (schema 3; resnet_ts scales 0..3 copies, classifier 0..2 with the data cache and the SME's recorded
    sample) and every model's
    memory recorded ((i + 1) x 100 MiB in name order)."""
    data["schema_version"] = 3
    mme = data["endpoints"]["multi"]
    ic = copy.deepcopy(mme)
    ic.update(name="components", mode="InferenceComponents")
    ic["s3_prefix"] = mme["s3_prefix"].replace("mme/multi/", "ic/components/")
    for t in ic["target_models"].values():
        t["s3_uri"] = ic["s3_prefix"] + t["target_model"]
    ic["target_models"]["classifier"]["sample"] = copy.deepcopy(data["endpoints"]["classifier"]["sample"])
    ic["components"] = {
        k: {"logical_name": k, "component_name": f"components-{k}".replace("_", "-"), "target_model": k}
        for k in ic["target_models"]
    }
    ic["components"]["resnet_ts"].update(min_copies=0, max_copies=3)
    ic["components"]["classifier"].update(min_copies=0, max_copies=2, data_cache=True)
    data["endpoints"]["components"] = ic
    for i, m in enumerate(sorted(data["models"])):
        data["models"][m].update(memory_bytes=(i + 1) * 100 * MIB, memory_source="estimated")


def big_mme_manifest(n: int) -> Manifest:
    """The example manifest whose ``multi`` endpoint holds ``n`` target models (each in ``models``)."""
    data = load_example()
    mme = data["endpoints"]["multi"]
    proto = mme["target_models"]["resnet_ts"]
    targets = {}
    for i in range(n):
        name = f"model_{i:04d}"
        digest = hashlib.sha256(name.encode()).hexdigest()
        t = copy.deepcopy(proto)
        t.update(
            logical_name=name,
            model=name,
            models=[name],
            sha256=digest,
            target_model=f"{name}-{digest[:12]}.tar.gz",
            local_path=f"mme/multi/{name}-{digest[:12]}.tar.gz",
            s3_uri=f"{mme['s3_prefix']}{name}-{digest[:12]}.tar.gz",
        )
        targets[name] = t
        data["models"][name] = {**copy.deepcopy(data["models"][proto["model"]]), "name": name}
    mme["target_models"] = targets
    return manifest_from_dict(data, source=str(EXAMPLE))


_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def masked(tpl: dict[str, Any]) -> dict[str, Any]:
    """A template with asset hashes masked, for snapshots."""
    text = json.dumps(tpl, sort_keys=True)
    text = _HASH.sub("<asset-hash>", text)
    out: dict[str, Any] = json.loads(text)
    out.pop("Parameters", None)  # BootstrapVersion
    rules = out.get("Rules", {})
    rules.pop("CheckBootstrapVersion", None)
    if not rules:
        out.pop("Rules", None)
    return out


def load_module(path: Path, name: str) -> ModuleType:
    """The file ``path`` (app.py, a bench script: not importable as a package module) executed as a fresh
    module called ``name``; it is not added to ``sys.modules``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
