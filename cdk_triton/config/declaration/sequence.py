"""Sequence batching: Triton's scheduler for stateful models (dynamic batching is for stateless ones).

Every request of a sequence carries its correlation id (KServe v2 request parameters ``sequence_id``,
``sequence_start``, ``sequence_end``); Triton routes the sequence to one model instance and hands
the model the control tensors named here, and, with implicit state, the state tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdk_triton.config.declaration.vocabulary import DTYPES
from cdk_triton.config.parse import Errors, check_keys, is_mapping, one_of, positive_ints, typed

#: Sequence batcher strategies (model_config.proto ModelSequenceBatching.strategy_choice).
SEQUENCE_STRATEGIES = ("direct", "oldest")
#: Data types of the CONTROL_SEQUENCE_CORRID tensor.
CORRID_DTYPES = ("UINT64", "INT64", "UINT32", "INT32", "STRING")


@dataclass(frozen=True, kw_only=True, slots=True)
class ControlInputs:
    """The names of the control tensors Triton gives the model (none is required by Triton).

    ``start``/``end``/``ready``: INT32 [1] tensors, 1 on the first / last request of a sequence and
    on every request that carries data. ``corrid``: the correlation id, of ``corrid_dtype``.
    Default: no control tensor (``corrid_dtype`` UINT64).
    """

    start: str | None = None
    end: str | None = None
    ready: str | None = None
    corrid: str | None = None
    corrid_dtype: str = "UINT64"

    @property
    def names(self) -> dict[str, str]:
        """kind (start, end, ready, corrid) -> tensor name, for the declared ones."""
        kinds = {"start": self.start, "end": self.end, "ready": self.ready, "corrid": self.corrid}
        return {k: v for k, v in kinds.items() if v}

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> ControlInputs:
        if not is_mapping(d, path, "control_inputs", "start, end, ready, corrid, corrid_dtype", errs):
            return cls()
        check_keys(d, cls, path, errs)
        dtype = str(typed(d, "corrid_dtype", str, path, errs, default="UINT64")).upper().removeprefix("TYPE_")
        one_of(
            errs,
            path,
            "corrid_dtype",
            dtype,
            CORRID_DTYPES,
            "InvalidSequenceBatching",
            "a correlation id type",
            "use UINT64",
            d.get("corrid_dtype"),
        )
        out = cls(
            start=typed(d, "start", str, path, errs),
            end=typed(d, "end", str, path, errs),
            ready=typed(d, "ready", str, path, errs),
            corrid=typed(d, "corrid", str, path, errs),
            corrid_dtype=dtype,
        )
        names = list(out.names.values())
        if len(set(names)) != len(names):
            errs.add(
                "InvalidSequenceBatching",
                path,
                "control_inputs",
                out.names,
                "names one tensor for two controls",
                "a distinct tensor name per control",
                "rename them",
            )
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class SequenceState:
    """One implicit state tensor: the model reads ``input_name`` and writes ``output_name``; Triton
    keeps it between the requests of a sequence (zeros at its start)."""

    input_name: str
    output_name: str
    dtype: str
    shape: tuple[int, ...]

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> SequenceState | None:
        if not is_mapping(d, path, "state", "input_name, output_name, dtype, shape", errs):
            return None
        check_keys(d, cls, path, errs)
        names = [typed(d, k, str, path, errs, required=True) for k in ("input_name", "output_name")]
        dtype = typed(d, "dtype", str, path, errs, required=True)
        dtype = dtype.upper().removeprefix("TYPE_") if isinstance(dtype, str) else None
        one_of(errs, path, "dtype", dtype, tuple(DTYPES), "UnknownDtype", "a Triton data type", "use FP32")
        shape = typed(d, "shape", list, path, errs, required=True)
        if shape is not None and not all(isinstance(x, int) and (x > 0 or x == -1) for x in shape):
            errs.add(
                "InvalidShape",
                f"{path}.shape",
                "shape",
                shape,
                "is not a list of positive dims",
                "positive integers, -1 for a dynamic dim",
                "fix the shape",
            )
            shape = None
        if names[0] is None or names[1] is None or dtype is None or shape is None:
            return None
        return cls(input_name=names[0], output_name=names[1], dtype=dtype, shape=tuple(shape))


@dataclass(frozen=True, kw_only=True, slots=True)
class OldestStrategy:
    """The oldest strategy: batches the oldest requests of up to ``max_candidate_sequences``
    sequences (dynamic batching across sequences). Default: Triton's (candidates 1, delay 0)."""

    max_candidate_sequences: int = 1
    preferred_batch_sizes: tuple[int, ...] = ()
    max_queue_delay_microseconds: int = 0

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> OldestStrategy:
        if not is_mapping(d, path, "oldest", "max_candidate_sequences, preferred_batch_sizes, ...", errs):
            return cls()
        check_keys(d, cls, path, errs)
        pref = positive_ints(d, "preferred_batch_sizes", path, errs)
        return cls(
            max_candidate_sequences=typed(d, "max_candidate_sequences", int, path, errs, default=1),
            preferred_batch_sizes=tuple(pref),
            max_queue_delay_microseconds=typed(d, "max_queue_delay_microseconds", int, path, errs, default=0),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SequenceBatching:
    """Triton's sequence batcher (``sequence_batching`` in config.pbtxt).

    Attributes:
        strategy: direct (each sequence keeps one batch slot) or oldest. Default: direct.
        max_sequence_idle_microseconds: a sequence without requests for this long is ended.
            Default: Triton's (1 s).
        control_inputs: the control tensors the model reads. Default: none.
        state: implicit state tensors (onnx, torchscript and tensorrt only). Default: none.
        oldest: the oldest strategy's options (strategy oldest only). Default: Triton's.
    """

    strategy: str = "direct"
    max_sequence_idle_microseconds: int | None = None
    control_inputs: ControlInputs = field(default_factory=ControlInputs)
    state: tuple[SequenceState, ...] = ()
    oldest: OldestStrategy | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> SequenceBatching | None:
        if d is True or d == {}:
            return cls()
        if d is None or d is False:
            return None
        if not is_mapping(d, path, "sequence_batching", "strategy, control_inputs, state, ...", errs):
            return None
        check_keys(d, cls, path, errs)
        strategy = typed(d, "strategy", str, path, errs, default="direct")
        one_of(
            errs,
            path,
            "strategy",
            strategy,
            SEQUENCE_STRATEGIES,
            "InvalidSequenceBatching",
            "a sequence batching strategy",
            "use direct",
        )
        controls = d.get("control_inputs")
        states = typed(d, "state", list, path, errs, default=[])
        state = [SequenceState.from_dict(s, f"{path}.state[{i}]", errs) for i, s in enumerate(states)]
        oldest = OldestStrategy.from_dict(d["oldest"], f"{path}.oldest", errs) if d.get("oldest") else None
        if oldest is not None and strategy != "oldest":
            errs.add(
                "InvalidSequenceBatching",
                f"{path}.oldest",
                "oldest",
                d["oldest"],
                f"only applies to strategy oldest, not {strategy}",
                "strategy: oldest",
                "set strategy: oldest or remove oldest",
            )
        idle = typed(d, "max_sequence_idle_microseconds", int, path, errs)
        return cls(
            strategy=strategy,
            max_sequence_idle_microseconds=idle,
            control_inputs=ControlInputs.from_dict(controls, f"{path}.control_inputs", errs)
            if controls is not None
            else ControlInputs(),
            state=tuple(s for s in state if s),
            oldest=oldest,
        )
