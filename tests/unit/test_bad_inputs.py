"""The adversarial catalogue of bad inputs (issue 21): each is refused with a code before anything is written.

One table, five surfaces: ``models.yaml`` (a real ``run_build`` with an S3 client that fails on use), the
build manifest (read by synth and by ``serve``), construct props (one App and Stack shared by every
construct case: each fails in its constructor, nothing is synthesized), CLI flags (``cdk_triton.cli.main``)
and the deploy verification spec. Every case states its input, the expected code and the path the error
must name; the test checks the code, that the message holds prop, value, allowed, fix and that path, and
that nothing was written (no file under the output directory, no S3 call, no synthesized template).

The figures of the Reliability table (docs/concepts/proven-where.md) come from this table:
``.venv/bin/python -m tests.unit.test_bad_inputs`` prints them (it runs every case).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from tests.unit.builder.helpers import ensemble, tiny, write_decl

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "manifests" / "example.json"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SME = """
  - name: ep
    mode: SingleModel
    instance_types: [{it}]
    models: [{models}]
"""
MME = SME.replace("SingleModel", "MultiModel")


@dataclass(frozen=True)
class Case:
    """One bad input: ``run(workdir)`` must raise ``code`` naming ``where`` in its path."""

    id: str
    surface: str  # models.yaml | manifest | construct | cli | verification
    code: str
    where: str  # a fragment of the path the error names (YAML key path, construct path, flag)
    run: Callable[[Path], Any]


@dataclass(frozen=True)
class Outcome:
    code: str | None
    text: str
    error: TritonValidationError | None
    written: list[str]

    def clear(self, where: str) -> bool:
        """All five parts: prop, value, allowed, fix, and the path holding ``where``."""
        e = self.error
        if e is not None:
            return bool(
                e.prop
                and e.allowed
                and e.fix
                and e.path
                and where in e.path
                and e.prop in self.text
                and repr(e.value)[:40] in self.text
                and f"allowed: {e.allowed}" in self.text
                and f"fix: {e.fix}" in self.text
            )
        return all(
            part in self.text for part in ("allowed: ", "fix: ", " at ", where)
        )  # CLI: the printed line


# ---------------------------------------------------------------------------- models.yaml


class NoS3:
    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"a refused build used S3 ({name})")


def _build(body: str, endpoints: str | None = None, *, head: str = "") -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.builder import run_build

        decl = write_decl(tmp, body, endpoints=endpoints)
        if head:
            decl.write_text(head + decl.read_text())
        return run_build(decl, out_dir=tmp / "out", upload=True, progress=False, s3_client=NoS3())

    return run


def _kms(value: str) -> Callable[[Path], Any]:
    return _build(tiny(), head=f"kms_key_arn: '{value}'\n")


def _on(it: str, *, mme: bool = False, body: str | None = None) -> Callable[[Path], Any]:
    return _build(body or tiny(), (MME if mme else SME).format(it=it, models="tiny"))


ENS = tiny("pre") + ensemble("{model: pree, input_map: {x: x}, output_map: {y: y}}")
YAML_CASES = [
    Case("yaml-kms-alias-name", "models.yaml", "InvalidKmsKeyArn", "kms_key_arn", _kms("alias/artifacts")),
    Case(
        "yaml-kms-alias-arn",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms("arn:aws:kms:us-east-1:123456789012:alias/artifacts"),
    ),
    Case(
        "yaml-kms-bare-key-id",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms("1234abcd-12ab-34cd-56ef-1234567890ab"),
    ),
    Case("yaml-kms-s3-arn", "models.yaml", "InvalidKmsKeyArn", "kms_key_arn", _kms("arn:aws:s3:::my-bucket")),
    Case(
        "yaml-kms-region-shape",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms(KEY.replace("us-east-1", "useast1")),
    ),
    Case(
        "yaml-kms-account-11-digits",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms(KEY.replace("123456789012", "12345678901")),
    ),
    Case(
        "yaml-kms-partition-region",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms(KEY.replace("arn:aws:", "arn:aws-cn:")),
    ),
    Case(
        "yaml-kms-unknown-partition",
        "models.yaml",
        "InvalidKmsKeyArn",
        "kms_key_arn",
        _kms(KEY.replace("arn:aws:", "arn:amazon:")),
    ),
    Case("yaml-kms-key-id-shape", "models.yaml", "InvalidKmsKeyArn", "kms_key_arn", _kms(KEY[:-4])),
    Case(
        "yaml-instance-size-typo",
        "models.yaml",
        "UnknownInstanceType",
        "endpoints[0].instance_types[0]",
        _on("ml.g5.xlarg"),
    ),
    Case(
        "yaml-instance-family-typo",
        "models.yaml",
        "UnknownInstanceType",
        "endpoints[0].instance_types[0]",
        _on("ml.g5x.large"),
    ),
    Case(
        "yaml-instance-cpu-size-typo",
        "models.yaml",
        "UnknownInstanceType",
        "endpoints[0].instance_types[0]",
        _on("ml.c5.huge"),
    ),
    Case(
        "yaml-instance-left-out",
        "models.yaml",
        "UnknownInstanceType",
        "endpoints[0].instance_types[0]",
        _on("ml.g7.2xlarge"),
    ),
    Case(
        "yaml-instance-no-ml-prefix",
        "models.yaml",
        "InvalidInstanceType",
        "endpoints[0].instance_types[0]",
        _on("g5.xlarge"),
    ),
    Case(
        "yaml-mme-on-4-gpus",
        "models.yaml",
        "MmeNeedsSingleGpu",
        "endpoints[0].instance_types[0]",
        _on("ml.g5.12xlarge", mme=True),
    ),
    Case(
        "yaml-mme-on-8-gpus",
        "models.yaml",
        "MmeNeedsSingleGpu",
        "endpoints[0].instance_types[0]",
        _on("ml.p4d.24xlarge", mme=True),
    ),
    Case(
        "yaml-gpu-below-release",
        "models.yaml",
        "ComputeCapabilityTooLow",
        "endpoints[0].instance_types[0]",
        _on("ml.p2.xlarge"),
    ),
    Case(
        "yaml-graviton",
        "models.yaml",
        "NoTritonImageForInstance",
        "endpoints[0].instance_types[0]",
        _on("ml.c7g.xlarge"),
    ),
    Case(
        "yaml-inferentia",
        "models.yaml",
        "NoTritonImageForInstance",
        "endpoints[0].instance_types[0]",
        _on("ml.inf2.xlarge"),
    ),
    Case(
        "yaml-kind-gpu-on-mme-cpu",
        "models.yaml",
        "GpuInstanceGroupOnCpuInstance",
        "endpoints[0].instance_types",
        _on("ml.c5.xlarge", mme=True, body=tiny() + "    instance_groups: [{kind: KIND_GPU}]\n"),
    ),
    Case(
        "yaml-ensemble-step-undeclared",
        "models.yaml",
        "UnknownModelReference",
        "models[1].steps[0].model",
        _build(ENS),
    ),
    Case(
        "yaml-ensemble-step-undeclared-served",
        "models.yaml",
        "UnknownModelReference",
        "models[1].steps[0].model",
        _build(ENS, SME.format(it="ml.g5.xlarge", models="ens") + "    default_model: ens\n"),
    ),
    Case(
        "yaml-ensemble-step-undeclared-mme",
        "models.yaml",
        "UnknownModelReference",
        "models[1].steps[0].model",
        _build(ENS, MME.format(it="ml.g5.xlarge", models="ens")),
    ),
]


# ---------------------------------------------------------------------------- the manifest


def _example(mutate: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def write(tmp: Path) -> Path:
        data = json.loads(EXAMPLE.read_text())
        mutate(data)
        tmp.mkdir(parents=True, exist_ok=True)
        shutil.copytree(EXAMPLE.parent / "samples", tmp / "samples", dirs_exist_ok=True)
        path = tmp / "manifest.json"
        path.write_text(json.dumps(data))
        return path

    return write


def _read(mutate: Callable[[dict[str, Any]], None]) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.config.manifest import read_manifest

        return read_manifest(_example(mutate)(tmp))

    return run


def _set_kms(value: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["artifact_location"].update(kms_key_arn=value)


def _local_repository(tmp: Path, *, packaging: str = "directory") -> Path:
    """A manifest whose SME endpoint's repository is on disk, then changed after the 'build'."""
    from cdk_triton.config import layout
    from cdk_triton.config.digest import local_digest

    repo = tmp / "sme" / "classifier" / "repository"
    (repo / "classifier" / "1").mkdir(parents=True, exist_ok=True)
    (repo / "classifier" / "config.pbtxt").write_text('name: "classifier"\n')
    local = repo
    if packaging == "tar.gz":
        import tarfile

        local = tmp / "sme" / "classifier" / "classifier.tar.gz"
        with tarfile.open(local, "w:gz") as tar:
            tar.add(repo, arcname=".")
    sha = local_digest(local) or ""
    if packaging == "tar.gz":
        key = layout.sme_archive_key("classifier", layout.archive_name("classifier", sha))
    else:
        key = layout.sme_directory_key("classifier", sha)

    def mutate(d: dict[str, Any]) -> None:
        ep = d["endpoints"]["classifier"]
        ep.update(packaging=packaging, local_path=local.relative_to(tmp).as_posix(), sha256=sha)
        ep["s3_uri"] = "s3://example-artifacts-123456789012/cdk-triton/" + key

    path = _example(mutate)(tmp)
    if packaging == "tar.gz":
        local.write_bytes(local.read_bytes() + b"\0")  # a byte appended after the build
    else:
        (repo / "classifier" / "config.pbtxt").write_text('name: "classifier"\nmax_batch_size: 64\n')
    return path


def _serve_changed_repository(tmp: Path) -> Any:
    from cdk_triton.config.manifest import read_manifest
    from cdk_triton.local.overlay import CpuOverlay
    from cdk_triton.local.repository import prepare_sme_repository

    manifest = read_manifest(_local_repository(tmp))
    entry = manifest.endpoint("classifier")
    return prepare_sme_repository(manifest, entry, tmp / "serve" / "repository", CpuOverlay())


MANIFEST_CASES = [
    Case(
        "manifest-kms-alias",
        "manifest",
        "InvalidKmsKeyArn",
        "manifest.json",
        _read(_set_kms("alias/artifacts")),
    ),
    Case(
        "manifest-kms-alias-arn",
        "manifest",
        "InvalidKmsKeyArn",
        "manifest.json",
        _read(_set_kms("arn:aws:kms:us-east-1:123456789012:alias/a")),
    ),
    Case(
        "manifest-kms-account",
        "manifest",
        "InvalidKmsKeyArn",
        "manifest.json",
        _read(_set_kms(KEY.replace("123456789012", "ACCOUNT"))),
    ),
    Case(
        "manifest-kms-gov-partition",
        "manifest",
        "InvalidKmsKeyArn",
        "manifest.json",
        _read(_set_kms(KEY.replace("arn:aws:", "arn:aws-us-gov:"))),
    ),
    Case(
        "manifest-sme-changed-at-serve",
        "manifest",
        "ArtifactHashMismatch",
        "sme/classifier/repository",
        _serve_changed_repository,
    ),
]


# ---------------------------------------------------------------------------- construct props (one App)


class Shared:
    """One App and Stack for every construct case (each fails in its constructor; nothing is synthesized)."""

    stack: Any = None
    n = 0

    @classmethod
    def scope(cls) -> tuple[Any, str]:
        if cls.stack is None:
            from tests.unit.constructs.support import new_stack

            cls.stack = new_stack("BadInputs")
        cls.n += 1
        return cls.stack, f"Case{cls.n}"


def _endpoint(artifacts: Callable[[Any, str], Any] | None = None, **kw: Any) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.constructs import ModelArtifacts, TritonEndpoint

        stack, cid = Shared.scope()
        arts = artifacts(stack, cid) if artifacts else ModelArtifacts.from_manifest(EXAMPLE, "classifier")
        kw.setdefault("instance_type", "ml.g5.xlarge")
        return TritonEndpoint(stack, cid, artifacts=arts, **kw)

    return run


def _keyed(arn: str) -> Callable[[Any, str], Any]:
    def artifacts(stack: Any, cid: str) -> Any:
        from aws_cdk import aws_kms as kms
        from aws_cdk import aws_s3 as s3

        from cdk_triton.constructs import ModelArtifacts

        bucket = s3.Bucket.from_bucket_name(stack, f"{cid}B", "models-123456789012")
        key = kms.Key.from_key_arn(stack, f"{cid}K", arn)
        return ModelArtifacts.from_bucket(bucket, "repo/", default_model="m", encryption_key=key)

    return artifacts


def _from_local_manifest(packaging: str) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.constructs import ModelArtifacts

        path = _local_repository(tmp, packaging=packaging)
        return _endpoint(lambda s, c: ModelArtifacts.from_manifest(path, "classifier"))(tmp)

    return run


def _edited(mutate: Callable[[dict[str, Any]], None], key: str = "classifier") -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.constructs import ModelArtifacts

        path = _example(mutate)(tmp)
        return _endpoint(lambda s, c: ModelArtifacts.from_manifest(path, key))(tmp)

    return run


def _sha_edited(d: dict[str, Any]) -> None:
    d["endpoints"]["classifier"]["sha256"] = "0" * 64


def _data_capture_key(tmp: Path) -> Any:
    from cdk_triton.constructs import ModelArtifacts, TritonModel

    stack, cid = Shared.scope()
    model = TritonModel(stack, cid, artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    return model.grant_data_capture("arn:aws:s3:::capture-bucket", "capture/", "alias/capture")


CONSTRUCT_CASES = [
    Case(
        "construct-key-alias-arn",
        "construct",
        "InvalidKmsKeyArn",
        "BadInputs/Case",
        _endpoint(_keyed("arn:aws:kms:us-east-1:123456789012:alias/artifacts")),
    ),
    Case(
        "construct-key-short-account",
        "construct",
        "InvalidKmsKeyArn",
        "BadInputs/Case",
        _endpoint(_keyed(KEY.replace("123456789012", "12345"))),
    ),
    Case(
        "construct-data-capture-alias", "construct", "InvalidKmsKeyArn", "BadInputs/Case", _data_capture_key
    ),
    Case(
        "construct-graviton",
        "construct",
        "NoTritonImageForInstance",
        "BadInputs/Case",
        _endpoint(instance_type="ml.m7g.xlarge"),
    ),
    Case(
        "construct-mme-8-gpus",
        "construct",
        "MmeNeedsSingleGpu",
        "BadInputs/Case",
        _endpoint(
            lambda s, c: __import__("cdk_triton.constructs", fromlist=["x"]).ModelArtifacts.from_manifest(
                EXAMPLE, "multi"
            ),
            instance_type="ml.p4d.24xlarge",
        ),
    ),
    Case(
        "construct-instance-no-prefix",
        "construct",
        "InvalidInstanceType",
        "BadInputs/Case",
        _endpoint(instance_type="g5.xlarge"),
    ),
    Case(
        "construct-manifest-sha-edited",
        "construct",
        "ManifestHashMismatch",
        "BadInputs/Case",
        _edited(_sha_edited),
    ),
    Case(
        "construct-manifest-uri-edited",
        "construct",
        "ManifestHashMismatch",
        "BadInputs/Case",
        _edited(
            lambda d: d["endpoints"]["classifier"].update(
                s3_uri=d["endpoints"]["classifier"]["s3_uri"].replace("dc9c5edb", "00000000")
            )
        ),
    ),
    Case(
        "construct-manifest-repository-changed",
        "construct",
        "ManifestHashMismatch",
        "BadInputs/Case",
        _from_local_manifest("directory"),
    ),
    Case(
        "construct-manifest-archive-changed",
        "construct",
        "ManifestHashMismatch",
        "BadInputs/Case",
        _from_local_manifest("tar.gz"),
    ),
]


# ---------------------------------------------------------------------------- verification spec


def _verify(**check: Any) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.constructs import VerificationCheck

        ep = _endpoint()(tmp)
        fields = {
            "model": "classifier",
            "request_s3_uri": "s3://samples-1/req.json",
            "response_s3_uri": "s3://samples-1/resp.json",
            **check,
        }
        return ep.add_verification(checks=[VerificationCheck(**fields)])

    return run


VERIFICATION_CASES = [
    Case(
        "verify-relative-request",
        "verification",
        "InvalidVerificationCheck",
        "BadInputs/Case",
        _verify(request_s3_uri="samples/req.json"),
    ),
    Case(
        "verify-https-response",
        "verification",
        "InvalidVerificationCheck",
        "BadInputs/Case",
        _verify(response_s3_uri="https://samples-1.s3.amazonaws.com/resp.json"),
    ),
    Case(
        "verify-prefix-not-object",
        "verification",
        "InvalidVerificationCheck",
        "BadInputs/Case",
        _verify(request_s3_uri="s3://samples-1/req/"),
    ),
    Case(
        "verify-negative-atol",
        "verification",
        "InvalidVerificationCheck",
        "BadInputs/Case",
        _verify(atol=-0.1),
    ),
    Case(
        "verify-nan-rtol",
        "verification",
        "InvalidVerificationCheck",
        "BadInputs/Case",
        _verify(rtol=float("nan")),
    ),
    Case(
        "verify-empty-model", "verification", "InvalidVerificationCheck", "BadInputs/Case", _verify(model=" ")
    ),
]


# ---------------------------------------------------------------------------- CLI flags


def _cli(*argv: str, decl: bool = True) -> Callable[[Path], Any]:
    def run(tmp: Path) -> Any:
        from cdk_triton.cli import main

        args = [a.replace("{tmp}", str(tmp)) for a in argv]
        if decl:
            write_decl(tmp, tiny(), endpoints=SME.format(it="ml.c5.xlarge", models="tiny"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(args)
        return rc, err.getvalue()

    return run


CFG = ("--config", "{tmp}/models.yaml")
CLI_CASES = [
    Case(
        "cli-build-location",
        "cli",
        "InvalidS3Uri",
        "artifact_location",
        _cli("build", *CFG, "--out", "{tmp}/out", "--artifact-location", "bucket/prefix"),
    ),
    Case(
        "cli-build-only",
        "cli",
        "UnknownOnlyModel",
        "cdk-triton build",
        _cli("build", *CFG, "--out", "{tmp}/out", "--only", "tiniy"),
    ),
    Case(
        "cli-build-formats",
        "cli",
        "UnknownFormat",
        "cdk-triton build",
        _cli("build", *CFG, "--out", "{tmp}/out", "--formats", "onnxx"),
    ),
    Case(
        "cli-build-merge-missing",
        "cli",
        "ManifestNotFound",
        "cdk-triton build",
        _cli("build", *CFG, "--out", "{tmp}/out", "--merge-manifest", "{tmp}/none.json"),
    ),
    Case(
        "cli-serve-port",
        "cli",
        "InvalidServeFlag",
        "--port",
        _cli("serve", "--manifest", str(EXAMPLE), "--port", "70000", decl=False),
    ),
    Case(
        "cli-serve-instance-count",
        "cli",
        "InvalidServeFlag",
        "--instance-count",
        _cli("serve", "--manifest", str(EXAMPLE), "--instance-count", "0", decl=False),
    ),
    Case(
        "cli-serve-start-timeout",
        "cli",
        "InvalidServeFlag",
        "--start-timeout",
        _cli("serve", "--manifest", str(EXAMPLE), "--start-timeout", "-5", decl=False),
    ),
    Case(
        "cli-serve-endpoint",
        "cli",
        "UnknownManifestEndpoint",
        "cdk-triton serve",
        _cli("serve", "--manifest", str(EXAMPLE), "--endpoint", "clasifier", decl=False),
    ),
    Case(
        "cli-tune-margin",
        "cli",
        "TuneInvalid",
        "cdk-triton tune",
        _cli("tune", *CFG, "--model", "tiny", "--margin", "-1", "--out", "{tmp}/out"),
    ),
    Case(
        "cli-tune-instances",
        "cli",
        "TuneInvalid",
        "cdk-triton tune",
        _cli("tune", *CFG, "--model", "tiny", "--instances", "0", "--out", "{tmp}/out"),
    ),
    Case(
        "cli-tune-budget",
        "cli",
        "TuneInvalid",
        "cdk-triton tune",
        _cli("tune", *CFG, "--model", "tiny", "--budget", "0", "--out", "{tmp}/out"),
    ),
]

CASES = [*YAML_CASES, *MANIFEST_CASES, *CONSTRUCT_CASES, *VERIFICATION_CASES, *CLI_CASES]


def _files(tmp: Path) -> set[str]:
    return {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()}


def attempt(case: Case, tmp: Path) -> Outcome:
    """Run one case in ``tmp``; what it raised (or printed) and the files it wrote besides its inputs."""
    tmp.mkdir(parents=True, exist_ok=True)
    error: TritonValidationError | None = None
    text = ""
    inputs: set[str] = set()
    before = _files
    try:
        result = case.run(tmp)
    except TritonValidationError as exc:
        found = exc.errors if isinstance(exc, TritonValidationErrors) else [exc]
        error = next((e for e in found if e.code == case.code), found[0])
        text = str(exc)
        code: str | None = error.code
    else:
        code = None
        if case.surface == "cli":
            rc, text = result
            code = case.code if rc == 2 and f"[{case.code}]" in text else None
    inputs = {
        f
        for f in before(tmp)
        if f in ("models.yaml", "tiny_models.py", "manifest.json", "none.json")
        or f.startswith(("preprocess/", "samples/", "sme/"))
    }
    written = sorted(before(tmp) - inputs - {"out/.lock"})
    return Outcome(code, text, error, written)


def _synthesized() -> list[str]:
    """Templates written by the shared App (none: no case may synthesize)."""
    if Shared.stack is None:
        return []
    out = Path(Shared.stack.node.root.outdir)
    return [p.name for p in out.glob("*.template.json")] if out.exists() else []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_clearly_before_any_write(case: Case, tmp_path: Path) -> None:
    outcome = attempt(case, tmp_path)
    assert outcome.code == case.code, outcome.text
    assert outcome.written == [], outcome.written
    assert outcome.clear(case.where), (case.where, outcome.text)
    assert _synthesized() == []


def test_the_catalogue_spans_every_surface() -> None:
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)
    assert {c.surface for c in CASES} == {"models.yaml", "manifest", "construct", "cli", "verification"}


def figures(workdir: Path) -> tuple[int, int, int]:
    """(cases, rejected with the expected code before any write, of those fully clear)."""
    rejected = clear = 0
    for case in CASES:
        outcome = attempt(case, workdir / case.id)
        if outcome.code == case.code and not outcome.written:
            rejected += 1
            clear += outcome.clear(case.where)
    return len(CASES), rejected, clear


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        total, rejected, clear = figures(Path(d))
    print(
        f"{rejected} of {total} bad inputs rejected before any write; {clear} of them fully clear "
        "(prop, value, allowed, fix, path)"
    )
    sys.exit(0 if rejected == clear == total else 1)
