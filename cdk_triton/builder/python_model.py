"""Run a Triton python-backend model on CPU, outside Triton, for parity and sample outputs.

A minimal ``triton_python_backend_utils`` stand-in (Tensor, InferenceRequest/Response, TritonError,
get_input_tensor_by_name, get_output_config_by_name, triton_string_to_numpy) is installed while
the model's ``model.py`` is imported and run. Business logic scripting: the stand-in
``InferenceRequest(model_name=..., inputs=..., requested_output_names=...).exec()`` runs the callee's
runner from the runner's ``callees`` (its eager reference for the sample, its built artifact for parity);
a callee it does not have answers an error response, as Triton answers a model it has not loaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.config.declaration import DTYPES
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np


class _Tensor:
    def __init__(self, name: str, array: np.ndarray) -> None:
        self._name = name
        import numpy as np

        self._array = np.asarray(array)

    def name(self) -> str:
        return self._name

    def as_numpy(self) -> np.ndarray:
        return self._array


class _Request:
    def __init__(self, tensors: list[_Tensor]) -> None:
        self._tensors = tensors

    def inputs(self) -> list[_Tensor]:
        return self._tensors


class _Callees:
    """The runners the stand-in ``InferenceRequest.exec`` calls: name -> runner (set by the runner's owner)."""

    def __init__(self) -> None:
        self.runners: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class _BlsRequest:
    """``pb_utils.InferenceRequest`` as a python model builds one to call another model."""

    def __init__(
        self,
        model_name: str = "",
        inputs: list[_Tensor] | None = None,
        requested_output_names: list[str] | None = None,
        *,
        callees: _Callees,
        **_: Any,
    ) -> None:
        self.model_name = model_name
        self._inputs = list(inputs or [])
        self.requested_output_names = list(requested_output_names or [])
        self._callees = callees

    def inputs(self) -> list[_Tensor]:
        return self._inputs

    def exec(self, decoupled: bool = False) -> _Response:
        run = self._callees.runners.get(self.model_name)
        if run is None:
            return _Response(
                error=_TritonError(
                    f"Failed for execute the inference request. Model '{self.model_name}' is not ready."
                )
            )
        try:
            out = run({t.name(): t.as_numpy() for t in self._inputs})
        except Exception as exc:  # the callee's failure is the caller's error response, as in Triton
            return _Response(error=_TritonError(f"model '{self.model_name}': {exc!r}"))
        wanted = self.requested_output_names or list(out)
        return _Response([_Tensor(k, out[k]) for k in wanted if k in out])

    async def async_exec(self, decoupled: bool = False) -> _Response:
        return self.exec(decoupled)


class _Response:
    def __init__(self, output_tensors: list[_Tensor] | None = None, error: Any = None) -> None:
        self._outputs = output_tensors or []
        self._error = error

    def output_tensors(self) -> list[_Tensor]:
        return self._outputs

    def has_error(self) -> bool:
        return self._error is not None

    def error(self) -> Any:
        return self._error


class _TritonError(Exception):
    def __init__(self, msg: str, code: int = 0) -> None:
        super().__init__(msg)
        self._msg = msg

    def message(self) -> str:
        return self._msg


#: model_config TYPE_<x> -> numpy type, from the declarations' table (bfloat16 has no numpy type).
def _np_types() -> dict[str, Any]:
    import numpy as np

    return {f"TYPE_{name}": np.dtype(np_name).type for name, np_name in DTYPES.items() if name != "BF16"}


def _shim(callees: _Callees) -> types.ModuleType:
    m = types.ModuleType("triton_python_backend_utils")
    m.Tensor = _Tensor  # type: ignore[attr-defined]

    def inference_request(*args: Any, **kwargs: Any) -> _BlsRequest:
        return _BlsRequest(*args, callees=callees, **kwargs)

    m.InferenceRequest = inference_request  # type: ignore[attr-defined]
    m.InferenceResponse = _Response  # type: ignore[attr-defined]
    m.TritonError = _TritonError  # type: ignore[attr-defined]
    m.TritonModelException = _TritonError  # type: ignore[attr-defined]

    def get_input_tensor_by_name(request: _Request, name: str) -> _Tensor | None:
        return next((t for t in request.inputs() if t.name() == name), None)

    def get_output_tensor_by_name(response: _Response, name: str) -> _Tensor | None:
        return next((t for t in response.output_tensors() if t.name() == name), None)

    def get_output_config_by_name(config: dict[str, Any], name: str) -> dict[str, Any] | None:
        return next((o for o in config.get("output", []) if o["name"] == name), None)

    def get_input_config_by_name(config: dict[str, Any], name: str) -> dict[str, Any] | None:
        return next((o for o in config.get("input", []) if o["name"] == name), None)

    def triton_string_to_numpy(s: str) -> Any:
        return _np_types()[s]

    def is_model_ready(model_name: str, model_version: str = "") -> bool:
        return model_name in callees.runners

    def load_model(model_name: str, config: str = "", files: Any = None) -> None:
        if model_name not in callees.runners:
            raise _TritonError(f"failed to load '{model_name}': not a model the build packaged with this one")

    def unload_model(model_name: str, unload_dependents: bool = False) -> None:
        return None

    for fn in (
        is_model_ready,
        load_model,
        unload_model,
        get_input_tensor_by_name,
        get_output_tensor_by_name,
        get_output_config_by_name,
        get_input_config_by_name,
        triton_string_to_numpy,
    ):
        setattr(m, fn.__name__, fn)
    return m


class _OnPath:
    """``site_packages`` first on ``sys.path`` while the model loads or runs (its packed environment,
    as the environment's ``bin/activate`` puts it on ``PYTHONPATH`` in Triton)."""

    def __init__(self, site_packages: Path | None) -> None:
        self.entry = str(site_packages) if site_packages else None

    def __enter__(self) -> None:
        if self.entry:
            sys.path.insert(0, self.entry)

    def __exit__(self, *exc: object) -> None:
        if self.entry and self.entry in sys.path:
            sys.path.remove(self.entry)


class PythonModelRunner:
    """Loads ``model.py`` with the stand-in utils and runs ``execute`` on one request
    (``site_packages``: the model's packed environment, unpacked for this Python; ``callees``: the runners
    its ``InferenceRequest.exec`` calls, by model name, replaceable with :meth:`calling`)."""

    def __init__(
        self,
        model_py: Path,
        config: dict[str, Any],
        *,
        name: str,
        site_packages: Path | None = None,
        callees: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self._env = _OnPath(site_packages)
        self._callees = _Callees()
        self._callees.runners = dict(callees or {})
        saved = sys.modules.get("triton_python_backend_utils")
        sys.modules["triton_python_backend_utils"] = _shim(self._callees)
        sys.dont_write_bytecode, old_dwb = True, sys.dont_write_bytecode
        try:
            self._load(model_py, config, name)
        finally:
            sys.dont_write_bytecode = old_dwb
            if saved is None:
                sys.modules.pop("triton_python_backend_utils", None)
            else:
                sys.modules["triton_python_backend_utils"] = saved

    def _load(self, model_py: Path, config: dict[str, Any], name: str) -> None:
        try:
            with self._env:
                spec = importlib.util.spec_from_file_location(
                    f"_cdk_triton_pymodel_{os.urandom(16).hex()}", model_py
                )
                assert spec and spec.loader
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                cls = getattr(module, "TritonPythonModel", None)
                if cls is None or not hasattr(cls, "execute"):
                    raise BuildError(
                        f"python model '{name}': {model_py} defines no TritonPythonModel.execute",
                        code="PythonModelInvalid",
                    )
                self.model = cls()
                if hasattr(self.model, "initialize"):
                    self.model.initialize(
                        {
                            "model_config": json.dumps(config),
                            "model_name": name,
                            "model_version": "1",
                            "model_instance_kind": "CPU",
                            "model_instance_name": f"{name}_0",
                            "model_instance_device_id": "0",
                            "model_repository": str(model_py.parent.parent),
                        }
                    )
        except BuildError:
            raise
        except Exception as exc:
            raise BuildError(
                f"python model '{name}' fails to load: {exc!r}", code="PythonModelInvalid"
            ) from exc

    def calling(self, callees: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]) -> PythonModelRunner:
        """This runner, its ``InferenceRequest.exec`` now calling ``callees`` (name -> runner)."""
        self._callees.runners = dict(callees)
        return self

    def __call__(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        request = _Request([_Tensor(k, v) for k, v in inputs.items()])
        try:
            with self._env:
                responses = self.model.execute([request])
        except Exception as exc:
            raise BuildError(
                f"python model '{self.name}' fails on the sample input: {exc!r}", code="PythonModelInvalid"
            ) from exc
        if not responses or len(responses) != 1:
            raise BuildError(
                f"python model '{self.name}' returned {len(responses or [])} responses for 1 request",
                code="PythonModelInvalid",
            )
        resp = responses[0]
        if resp.has_error():
            raise BuildError(
                f"python model '{self.name}' answered an error: {resp.error()}", code="PythonModelInvalid"
            )
        return {t.name(): t.as_numpy() for t in resp.output_tensors()}
