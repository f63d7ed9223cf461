"""`coop.Session`: a compiled step run by the runtime's C API
(runtime/include/coop/runtime.h, libcoop_runtime.so) through ctypes, bound
to a torch model and optimizer."""
import ctypes
import os

import numpy as np
import torch

from coop_export.exporter import STEP_COUNTER

from .errors import SessionError

_STATUS_CODES = ("OK", "INVALID_ARGUMENT", "INVALID_PLAN", "UNIMPLEMENTED",
                 "NOT_FOUND", "OUT_OF_MEMORY", "FAILED_PRECONDITION", "INTERNAL")

# coop_role_t
PARAMETER, GRADIENT, OPTIMIZER_STATE, BUFFER, INPUT = 1, 2, 3, 4, 5

# coop_dtype_t <-> numpy (bfloat16 has no numpy type)
_NUMPY_DTYPES = {1: np.float32, 2: np.float16, 4: np.float64, 5: np.int64, 6: np.int32,
                 7: np.int16, 8: np.int8, 9: np.uint8, 10: np.bool_, 11: np.complex64}
_COOP_DTYPES = {np.dtype(t): code for code, t in _NUMPY_DTYPES.items()}

_MAX_RANK = 8


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_int), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * _MAX_RANK),
                ("byte_size", ctypes.c_size_t)]


class _Stats(ctypes.Structure):
    _fields_ = [("arena_bytes", ctypes.c_int64), ("high_water_mark", ctypes.c_int64),
                ("device_allocations", ctypes.c_int64), ("steps", ctypes.c_int64),
                ("launches", ctypes.c_int64), ("last_step_ms", ctypes.c_double)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "coop_status_code": (ctypes.c_int, [_P]),
    "coop_status_message": (ctypes.c_char_p, [_P]),
    "coop_status_free": (None, [_P]),
    "coop_plan_load_file": (_P, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "coop_plan_release": (None, [_P]),
    "coop_plan_arena_bytes": (ctypes.c_int64, [_P]),
    "coop_plan_argument_count": (ctypes.c_size_t, [_P]),
    "coop_plan_argument_info": (_P, [_P, ctypes.c_size_t, ctypes.POINTER(_TensorInfo)]),
    "coop_plan_output_info": (_P, [_P, ctypes.c_size_t, ctypes.POINTER(_TensorInfo)]),
    "coop_session_create": (_P, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "coop_session_release": (None, [_P]),
    "coop_session_bind_argument": (_P, [_P, ctypes.c_size_t, ctypes.c_int, ctypes.c_int32,
                                        ctypes.POINTER(ctypes.c_int64), _P,
                                        ctypes.c_size_t]),
    "coop_session_run": (_P, [_P, ctypes.c_int64]),
    "coop_session_set_step_index": (_P, [_P, ctypes.c_int64]),
    "coop_session_step_index": (ctypes.c_int64, [_P]),
    "coop_session_read_argument": (_P, [_P, ctypes.c_size_t, _P, ctypes.c_size_t]),
    "coop_session_read_output": (_P, [_P, ctypes.c_size_t, _P, ctypes.c_size_t]),
    "coop_session_stats": (None, [_P, ctypes.POINTER(_Stats)]),
}

_libraries = {}


def load_library(build):
    """libcoop_runtime.so of the build directory `build`, its C API typed."""
    path = os.path.join(build, "lib", "libcoop_runtime.so")
    if path not in _libraries:
        if not os.path.exists(path):
            raise SessionError("NOT_FOUND", f"the runtime library {path} does not exist: "
                               "build the project (target CoopRuntimeShared)")
        lib = ctypes.CDLL(path)
        for name, (result, arguments) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = result, arguments
        _libraries[path] = lib
    return _libraries[path]


class Argument:
    """A step argument of the plan: name, role, dtype, shape, index."""

    def __init__(self, index, info):
        self.index = index
        self.name = info.name.decode()
        self.role = info.role
        self.dtype = _NUMPY_DTYPES.get(info.dtype)
        self.coop_dtype = info.dtype
        self.shape = tuple(info.shape[:info.rank])
        self.byte_size = info.byte_size


def as_tuple(values):
    """A batch's tensors as a tuple: a sequence as it is, one tensor or
    array alone."""
    return tuple(values) if isinstance(values, (tuple, list)) else (values,)


def _as_array(value):
    """Contiguous host numpy array of a torch tensor or array-like (0-d
    stays 0-d, unlike np.ascontiguousarray)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().contiguous().numpy()
    return np.asarray(value, order="C")


class Session:
    """The plan of `compiled` loaded on `backend` ("cpu", or "cuda" in a
    build with the CUDA backend), its one arena allocated, and every
    persistent argument bound from `model` (parameters, buffers) and
    `optimizer` (its state; zeros where it has none yet, as torch.optim
    starts). `step` feeds a batch and runs one training step;
    `write_back` copies the trained parameters, buffers and optimizer state
    into the model and optimizer.

    `step_index` (the runtime's, which the random kernels draw from) starts
    at `step_index`, else at the optimizer's step count where it keeps one
    (Adam, AdamW: a session over an optimizer that stepped k times goes on
    drawing step k's masks, as one uninterrupted session), else at 0."""

    def __init__(self, compiled, model, optimizer=None, backend="cpu", step_index=None):
        self.compiled = compiled
        self.model = model
        self.optimizer = optimizer
        self._plan = self._session = None
        self._lib = load_library(compiled.build_dir)
        plan = _P()
        self._check(self._lib.coop_plan_load_file(compiled.plan_path.encode(),
                                                  ctypes.byref(plan)))
        self._plan = plan
        self.arguments = []
        for index in range(self._lib.coop_plan_argument_count(plan)):
            info = _TensorInfo()
            self._check(self._lib.coop_plan_argument_info(plan, index, ctypes.byref(info)))
            self.arguments.append(Argument(index, info))
        self._by_name = {a.name: a for a in self.arguments}
        session = _P()
        self._check(self._lib.coop_session_create(plan, backend.encode(),
                                                  ctypes.byref(session)))
        self._session = session
        for argument in self.arguments:
            if argument.role != INPUT:
                self._bind(argument, self._torch_value(argument))
        if step_index is None:
            step_index = self._optimizer_steps() if STEP_COUNTER in self._by_name else 0
        self.step_index = step_index

    # The C API -------------------------------------------------------------

    def _check(self, status):
        if status:
            code = self._lib.coop_status_code(status)
            message = self._lib.coop_status_message(status).decode()
            self._lib.coop_status_free(status)
            raise SessionError(_STATUS_CODES[code] if code < len(_STATUS_CODES) else code,
                               message)

    def _bind(self, argument, value):
        array = _as_array(value)
        if array.dtype not in _COOP_DTYPES:
            raise SessionError("INVALID_ARGUMENT", f"argument '{argument.name}': "
                               f"dtype {array.dtype} has no coop dtype")
        shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        self._check(self._lib.coop_session_bind_argument(
            self._session, argument.index, _COOP_DTYPES[array.dtype], array.ndim, shape,
            array.ctypes.data, array.nbytes))

    def read(self, name):
        """Argument `name`'s current value, a numpy array."""
        argument = self._argument(name)
        if argument.dtype is None:
            raise SessionError("UNIMPLEMENTED", f"argument '{name}': its dtype "
                               f"({argument.coop_dtype}) has no numpy type")
        out = np.empty(argument.shape, dtype=argument.dtype)
        self._check(self._lib.coop_session_read_argument(
            self._session, argument.index, out.ctypes.data, out.nbytes))
        return out

    @property
    def step_index(self):
        """The next step's 0-based index: the steps the session counts as
        run. Step s's random ops draw at offset + i + s * S."""
        return self._lib.coop_session_step_index(self._session)

    @step_index.setter
    def step_index(self, step):
        self._check(self._lib.coop_session_set_step_index(self._session, int(step)))

    def stats(self):
        """The runtime's figures: arena bytes, high-water mark, device
        allocations, steps, launches, last step's milliseconds."""
        stats = _Stats()
        self._lib.coop_session_stats(self._session, ctypes.byref(stats))
        return {name: getattr(stats, name) for name, _ in _Stats._fields_}

    def close(self):
        if self._session:
            self._lib.coop_session_release(self._session)
            self._session = None
        if self._plan:
            self._lib.coop_plan_release(self._plan)
            self._plan = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # Torch <-> arguments -----------------------------------------------------

    def _argument(self, name):
        if name not in self._by_name:
            raise SessionError("NOT_FOUND", f"the plan has no argument '{name}'")
        return self._by_name[name]

    def _parameter(self, name, argument):
        try:
            return self.model.get_parameter(name)
        except AttributeError as error:
            raise SessionError("NOT_FOUND", f"argument '{argument.name}': the model has "
                               f"no parameter '{name}' ({error})") from None

    def _optimizer_state(self, argument):
        """(the parameter's torch.optim state dict or None, the state name)."""
        param_name, state_name = argument.name.rsplit(".", 1)
        param = self._parameter(param_name, argument)
        return (self.optimizer.state[param] if self.optimizer is not None else None,
                state_name)

    def _step_states(self):
        """torch.optim's state dict of every parameter of the plan (the
        step counter's homes)."""
        return [self.optimizer.state[self._parameter(a.name, a)] for a in self.arguments
                if a.role == PARAMETER]

    def _optimizer_steps(self):
        """The step count of torch.optim's state: every parameter's 'step'
        (a float tensor or a number, by torch version), which the plan's
        one counter stands for; 0 before the first step."""
        if self.optimizer is None:
            return 0
        steps = {float(state["step"]) if "step" in state else None
                 for state in self._step_states()}
        if len(steps) > 1:
            raise SessionError("FAILED_PRECONDITION", f"argument '{STEP_COUNTER}': the "
                               "optimizer's parameters have different step counts "
                               f"({', '.join(sorted(str(s) for s in steps))}); the plan "
                               "keeps one for all")
        return int(steps.pop() or 0)

    def _torch_value(self, argument):
        """What torch holds for a persistent argument."""
        if argument.role == PARAMETER:
            return self._parameter(argument.name, argument)
        if argument.role == BUFFER:
            if argument.name.startswith("constant."):
                return self._traced_constant(argument)
            return self.model.get_buffer(argument.name)
        if argument.name == STEP_COUNTER:
            return np.array(self._optimizer_steps(), dtype=argument.dtype)
        if argument.role == OPTIMIZER_STATE:
            state, state_name = self._optimizer_state(argument)
            value = state.get(state_name) if state is not None else None
            if value is None:
                return np.zeros(argument.shape, dtype=argument.dtype)
            # torch.optim keeps a step count as a float tensor or a number.
            return np.broadcast_to(_as_array(value), argument.shape).astype(argument.dtype)
        raise SessionError("UNIMPLEMENTED", f"argument '{argument.name}': role "
                           f"{argument.role} is not bound from torch")

    def _traced_constant(self, argument):
        """A tensor constant of the traced step, from the exported graph."""
        tensor = next(t for t in self.compiled.graph.tensors if t.name == argument.name)
        if not tensor.initial_value:
            raise SessionError("FAILED_PRECONDITION", f"argument '{argument.name}': the "
                               "traced constant's value was not exported")
        return np.frombuffer(tensor.initial_value, dtype=argument.dtype).reshape(
            argument.shape)

    # Steps -------------------------------------------------------------------

    def step(self, inputs, targets=()):
        """Binds a batch (numpy arrays or torch tensors: `inputs` as the
        model's example inputs, `targets` as the loss's) and runs one
        training step; returns the loss."""
        batch = {f"input{i}": v for i, v in enumerate(as_tuple(inputs))}
        batch.update({f"target{i}": v for i, v in enumerate(as_tuple(targets))})
        expected = sorted(a.name for a in self.arguments if a.role == INPUT)
        if sorted(batch) != expected:
            raise ValueError(f"the step takes {', '.join(expected)}; got "
                             f"{', '.join(sorted(batch)) or 'nothing'}")
        for name, value in batch.items():
            self._bind(self._by_name[name], value)
        self._check(self._lib.coop_session_run(self._session, 1))
        info = _TensorInfo()
        self._check(self._lib.coop_plan_output_info(self._plan, 0, ctypes.byref(info)))
        loss = np.empty(tuple(info.shape[:info.rank]), dtype=_NUMPY_DTYPES[info.dtype])
        self._check(self._lib.coop_session_read_output(self._session, 0, loss.ctypes.data,
                                                       loss.nbytes))
        return float(loss)

    def write_back(self):
        """Copies the session's parameters and buffers into the model and its
        optimizer state into the optimizer (creating the state torch.optim
        would have after these steps)."""
        with torch.no_grad():
            for argument in self.arguments:
                if argument.role in (INPUT, GRADIENT) or argument.name.startswith("constant."):
                    continue
                value = torch.from_numpy(self.read(argument.name))
                if argument.role == PARAMETER:
                    self._parameter(argument.name, argument).copy_(value)
                elif argument.role == BUFFER:
                    self.model.get_buffer(argument.name).copy_(value)
                elif self.optimizer is None:
                    continue
                elif argument.name == STEP_COUNTER:
                    for state in self._step_states():
                        _store(state, "step", value)
                else:
                    _store(*self._optimizer_state(argument), value)


def _store(state, name, value):
    """Writes `value` into torch.optim's `state[name]` as torch keeps it: in
    place into its tensor, as a number where it keeps a number, a new
    tensor where it has none yet (each parameter its own)."""
    old = state.get(name)
    if isinstance(old, torch.Tensor) and old.shape == value.shape:
        old.copy_(value)
    elif isinstance(old, (int, float)):
        state[name] = type(old)(value.item())
    else:
        state[name] = value.clone()
