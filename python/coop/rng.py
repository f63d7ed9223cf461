"""The runtime's counter-based random stream (runtime/src/Random.h) in
Python, the one copy the tests and `reference_step` use.

Element i of a random op with rng (seed, offset) in the step with 0-based
index s draws uniform(seed, offset + i + s * S), where S, the step's random
span, is the exporter's final rng counter (`random_span`)."""
import math

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from coop_export.graph_builder import RANDOM_KERNELS

_MASK64 = (1 << 64) - 1


def _mix(z):
    """splitmix64's finalizer on a uint64 numpy array (wrapping)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, offset, count):
    """The runtime's uniform floats in [0, 1) for elements offset..+count
    of stream `seed`: 24 high bits of a keyed splitmix64 hash."""
    with np.errstate(over="ignore"):
        key = _mix(np.uint64((seed * 0x9E3779B97F4A7C15) & _MASK64)
                   ^ np.uint64(0xD1B54A32D192ED03))
        counter = np.arange(offset, offset + count, dtype=np.uint64)
        bits = _mix(counter * np.uint64(0x9E3779B97F4A7C15) ^ key)
    return (bits >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)


def bernoulli(seed, offset, shape, p):
    """aten.bernoulli_.float(p) as the runtime draws it: 1 where u < p (the
    float u compared in double, as the kernel does)."""
    u = uniform(seed, offset, math.prod(shape)).astype(np.float64)
    return torch.from_numpy((u < p).astype(np.float32)).reshape(shape)


def random_span(graph):
    """S of an exported TrainingGraph: the exporter's final rng counter,
    each random op's offset plus the elements it draws (its largest
    result)."""
    span = 0
    for op in graph.ops:
        if op.HasField("rng"):
            drawn = max((math.prod(graph.tensors[r].shape) for r in op.results),
                        default=0)
            span = max(span, op.rng.offset + drawn)
    return span


class CounterStream(TorchDispatchMode):
    """Within it, PyTorch's random ops draw from the runtime's stream, in
    the order the exporter numbers them: each op at the current offset,
    which then advances by the elements it drew. Eager execution reaches
    the same aten ops as the exporter's trace (dropout on the CPU is
    `bernoulli_`, then `div_` and `mul`). Random ops the runtime has no
    kernel for are an error, not torch's own numbers. `drawn` holds the
    masks drawn, in order."""

    def __init__(self, seed, offset=0):
        super().__init__()
        self.seed = seed
        self.offset = offset
        self.drawn = []

    def _draw(self, shape, p):
        mask = bernoulli(self.seed, self.offset, tuple(shape), p)
        self.offset += math.prod(shape)
        self.drawn.append(mask)
        return mask

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        aten = torch.ops.aten
        if func is aten.bernoulli_.float:
            target = args[0]
            p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
            return target.copy_(self._draw(target.shape, p))
        if func is aten.native_dropout.default:
            source, p, train = (list(args) + [kwargs.get("p"), kwargs.get("train")])[:3]
            p = p if train or train is None else 0.0
            keep = self._draw(source.shape, 1.0 - p)
            scale = np.float32(1.0 / (1.0 - p)) if p < 1 else np.float32(0.0)
            return source * keep.to(source.dtype) * float(scale), keep.bool()
        if func.overloadpacket.__name__ in RANDOM_KERNELS or _fused_dropout(func, args,
                                                                          kwargs):
            raise NotImplementedError(
                f"'{func}' draws random numbers without a kernel on the runtime's "
                "stream (bernoulli_.float and native_dropout have one)")
        return func(*args, **kwargs)


def _fused_dropout(func, args, kwargs):
    """Whether `func` is a fused op that drops out with torch's own
    generator: a `dropout_p` argument above zero (the attention kernels)."""
    for position, argument in enumerate(func._schema.arguments):
        if argument.name == "dropout_p":
            value = args[position] if position < len(args) else kwargs.get(
                "dropout_p", argument.default_value)
            return bool(value)
    return False
