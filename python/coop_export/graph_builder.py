"""Turns a make_fx graph of one training step into a TrainingGraph message.

The FX graph reads and writes PyTorch storages in place (``relu_``,
``add_``, batch norm's running statistics, the optimizer update). The coop
IR is in SSA form instead: an in-place op produces a new *version* of the
operand's storage, and every later read must name the newest version. The
builder therefore tracks, for each storage, its current version, and
re-derives any stale value (a view taken before the storage was written, or
the pre-mutation FX node itself) from the newest version.
"""
import operator
from dataclasses import dataclass

import re

import torch

from . import training_graph_pb2 as pb

FORMAT_VERSION = 1

DTYPES = {
    torch.float32: pb.FLOAT32,
    torch.float16: pb.FLOAT16,
    torch.bfloat16: pb.BFLOAT16,
    torch.float64: pb.FLOAT64,
    torch.int64: pb.INT64,
    torch.int32: pb.INT32,
    torch.int16: pb.INT16,
    torch.int8: pb.INT8,
    torch.uint8: pb.UINT8,
    torch.bool: pb.BOOL,
    torch.complex64: pb.COMPLEX64,
}

# Kernels that draw random numbers (overload stripped); the coop verifier
# requires an rng key on each of them.
RANDOM_KERNELS = {
    "native_dropout", "dropout", "bernoulli", "bernoulli_", "rand",
    "rand_like", "randn", "randn_like", "randint", "randint_like",
    "randperm", "normal", "normal_", "uniform_", "exponential_",
    "multinomial", "rrelu_with_noise",
}

# Mutations the aten schema does not annotate: torch 1.13's
# native_batch_norm updates running_mean and running_var in place when
# training, yet declares them as plain inputs.
UNANNOTATED_MUTATIONS = {
    "native_batch_norm": ("running_mean", "running_var"),
}


class ExportError(Exception):
    """The traced step uses something the exporter cannot express."""


@dataclass
class _TensorInfo:
    storage: int
    version: int
    size: tuple
    stride: tuple
    storage_offset: int
    dtype: torch.dtype


@dataclass
class _Constant:
    """A non-tensor FX value (a folded shape or scalar)."""
    value: object


def kernel_name(op):
    """'aten.add_.Tensor' for torch.ops.aten.add_.Tensor."""
    schema = op._schema
    name = schema.name.replace("::", ".")
    return f"{name}.{schema.overload_name}" if schema.overload_name else name


def _base_name(op):
    return op._schema.name.split("::")[-1]


def _is_tensor_type(arg_type):
    text = str(arg_type)
    return "Tensor" in text


def _alias_set(alias_info):
    return set(alias_info.before_set) if alias_info is not None else set()


_LIST_RETURN_ALIAS = re.compile(r"Tensor\((\w+)\)\[\]")


def _return_alias_set(schema, ret):
    """The alias set of a return. torch 1.13 leaves it empty on a list of
    aliases (`split(Tensor(a -> *) self) -> Tensor(a)[]`), so it is read off
    the schema's text there."""
    aliases = _alias_set(ret.alias_info)
    if not aliases and str(ret.type).startswith("List["):
        returns = str(schema).rsplit(") -> ", 1)[-1]
        aliases = set(_LIST_RETURN_ALIAS.findall(returns))
    return aliases


def tensor_bytes(shape, dtype):
    numel = 1
    for dim in shape:
        numel *= dim
    return numel * torch.empty((), dtype=dtype).element_size()


class GraphBuilder:
    def __init__(self, name, seed=0):
        self.graph = pb.TrainingGraph(format_version=FORMAT_VERSION, name=name)
        self._info = []            # tensor id -> _TensorInfo
        self._head = {}            # storage -> (version, tensor id)
        self._values = {}          # fx node -> tensor id, list, or _Constant
        self._rederived = {}       # (stale id, head id) -> re-derived id
        self._next_storage = 0
        self._seed = seed
        self._rng_offset = 0

    # Tensors -------------------------------------------------------------

    def _new_storage(self):
        self._next_storage += 1
        return self._next_storage

    def _add_tensor(self, name, fake, role, storage=None, version=0):
        """A new tensor id; without `storage`, also a new storage whose
        first version it is. Views and re-reads pass their source's."""
        if fake.dtype not in DTYPES:
            raise ExportError(f"tensor '{name}' has unsupported dtype {fake.dtype}")
        tensor_id = len(self.graph.tensors)
        self.graph.tensors.add(name=name, shape=list(fake.shape),
                               dtype=DTYPES[fake.dtype], role=role)
        if storage is None:
            storage = self._new_storage()
            self._head[storage] = (version, tensor_id)
        self._info.append(_TensorInfo(storage, version, tuple(fake.shape),
                                      tuple(fake.stride()),
                                      fake.storage_offset(), fake.dtype))
        return tensor_id

    def add_argument(self, name, fake, role, initial_value=None):
        """A placeholder: a persistent step argument with a role."""
        tensor_id = self._add_tensor(name, fake, role)
        if initial_value is not None:
            data = initial_value.detach().contiguous().reshape(-1)
            self.graph.tensors[tensor_id].initial_value = (
                data.view(torch.uint8).numpy().tobytes())
        return tensor_id

    def bind(self, node, value):
        self._values[node] = value

    def _read(self, tensor_id):
        """The id to read for `tensor_id`: itself, or a view of its storage's
        newest version when the storage was written since it was made."""
        info = self._info[tensor_id]
        head_version, head_id = self._head[info.storage]
        if head_version == info.version:
            return tensor_id
        head = self._info[head_id]
        if (head.size, head.stride, head.storage_offset, head.dtype) == (
                info.size, info.stride, info.storage_offset, info.dtype):
            return head_id
        key = (tensor_id, head_id)
        if key not in self._rederived:
            self._rederived[key] = self._emit_as_strided(head_id, info)
        return self._rederived[key]

    def _emit_as_strided(self, head_id, info, name=None):
        op = self.graph.ops.add(kind=pb.Op.VIEW, kernel="aten.as_strided.default",
                                operands=[head_id])
        self._set_arg(op, "self", pb.Value(operand=0))
        self._set_arg(op, "size", _list_value(info.size))
        self._set_arg(op, "stride", _list_value(info.stride))
        self._set_arg(op, "storage_offset", pb.Value(int_value=info.storage_offset))
        fake = torch.empty_strided(info.size, info.stride, dtype=info.dtype,
                                   device="meta")
        head = self._info[head_id]
        result = self._add_tensor(
            name or f"{self.graph.tensors[head_id].name}.reread",
            fake, pb.ACTIVATION, head.storage, head.version)
        self._info[result].storage_offset = info.storage_offset
        op.results.append(result)
        return result

    # Values --------------------------------------------------------------

    def tensor_of(self, fx_value):
        value = self._values.get(fx_value)
        if not isinstance(value, int):
            raise ExportError(f"'{fx_value}' is not a tensor")
        return self._read(value)

    def _constant_of(self, fx_value):
        """Python value of a non-tensor FX argument, folding FX nodes."""
        if isinstance(fx_value, torch.fx.Node):
            value = self._values.get(fx_value)
            if isinstance(value, _Constant):
                return value.value
            raise ExportError(f"'{fx_value}' is used as a scalar but is a tensor")
        if isinstance(fx_value, (list, tuple)):
            return type(fx_value)(self._constant_of(v) for v in fx_value)
        return fx_value

    @staticmethod
    def _set_arg(op, name, value):
        op.args.add(name=name).value.CopyFrom(value)

    def _encode(self, operands, fx_value, is_tensor):
        """Encodes one schema argument, appending tensor operands."""
        if fx_value is None:
            return pb.Value(none=True)
        if is_tensor and isinstance(fx_value, torch.fx.Node):
            operands.append(self.tensor_of(fx_value))
            return pb.Value(operand=len(operands) - 1)
        if is_tensor and isinstance(fx_value, (list, tuple)):
            return pb.Value(list=pb.ValueList(items=[
                self._encode(operands, v, True) for v in fx_value]))
        return _scalar_value(self._constant_of(fx_value))

    # Ops -----------------------------------------------------------------

    def add_call(self, node):
        target = node.target
        if target is operator.getitem:
            container, index = node.args
            self._values[node] = self._values[container][index]
            return
        if not isinstance(target, torch._ops.OpOverload):
            self._fold_python_call(node)
            return
        if not _has_tensor_result(_node_value(node)) and not _mutates(target):
            self._fold_python_call(node)
            return
        if torch.Tag.inplace_view in target.tags:
            self._add_inplace_view(node)
            return
        self._add_aten_call(node, target)

    def _add_inplace_view(self, node):
        """`transpose_`, `squeeze_`, `t_`, ... change only their operand's
        sizes and strides, not its elements: no new version, but a view of
        the operand with the layout the op gave it (an `as_strided`), which
        later uses of the FX value read."""
        fake = _node_value(node)
        source = self.tensor_of(node.args[0])
        layout = _TensorInfo(None, None, tuple(fake.shape), tuple(fake.stride()),
                             fake.storage_offset(), fake.dtype)
        self._values[node] = self._emit_as_strided(source, layout, node.name)

    def _fold_python_call(self, node):
        value = node.meta.get("val")
        if isinstance(value, (int, float, bool)):
            self._values[node] = _Constant(value)
            return
        raise ExportError(f"cannot export '{node.format_node()}': neither an "
                          "aten op with tensor results nor a foldable scalar")

    def _add_aten_call(self, node, target):
        schema = target._schema
        bound = _bind(node, schema)
        # Encoding reads operands, which may first emit re-derived views of
        # stale values; the op itself comes after them.
        operands, encoded = [], []
        arg_operand = {}   # schema argument name -> operand index
        for argument in schema.arguments:
            value = self._encode(operands, bound[argument.name],
                                 _is_tensor_type(argument.type))
            if value.WhichOneof("kind") == "operand":
                arg_operand[argument.name] = value.operand
            encoded.append((argument.name, value))
        op = self.graph.ops.add(kernel=kernel_name(target), operands=operands)
        for name, value in encoded:
            self._set_arg(op, name, value)

        written = {a.name for a in schema.arguments
                   if a.alias_info is not None and a.alias_info.is_write}
        if _base_name(target) in UNANNOTATED_MUTATIONS and bound.get("training"):
            written.update(UNANNOTATED_MUTATIONS[_base_name(target)])
        written = [name for name in written if name in arg_operand]
        written.sort(key=lambda name: arg_operand[name])

        returns = _flatten_returns(_node_value(node), schema)
        mask = bound.get("output_mask")
        if isinstance(mask, (list, tuple)) and len(mask) == len(returns):
            # A backward's gradients it was not asked for: fake mode may
            # still make tensors for them, which eager mode leaves undefined.
            returns = [(ret, fake if wanted else None)
                       for (ret, fake), wanted in zip(returns, mask)]
        view_source = self._view_source(schema, arg_operand, written)
        if view_source is not None:
            self._add_view(node, op, schema, returns)
            return

        result_ids, inplace = [], []
        versioned = set()
        for ret, fake in returns:
            mutated = [name for name in written
                       if _return_alias_set(schema, ret) & _alias_set(
                           _schema_arg(schema, name).alias_info)]
            if fake is None:
                result_ids.append(None)
                continue
            if mutated:
                result_ids.append(self._new_version(node, op, arg_operand[mutated[0]]))
                inplace.append(arg_operand[mutated[0]])
                versioned.add(mutated[0])
            else:
                result_ids.append(self._add_tensor(node.name, fake, pb.ACTIVATION))
                op.results.append(result_ids[-1])
                inplace.append(-1)
        # Mutated arguments the op does not return (running statistics) are
        # extra results: new versions of their storage.
        for name in written:
            if name not in versioned:
                self._new_version(node, op, arg_operand[name])
                inplace.append(arg_operand[name])
        if any(i != -1 for i in inplace):
            op.inplace.extend(inplace)
        if _base_name(target) in RANDOM_KERNELS:
            self._set_rng(op)
        self._values[node] = (result_ids[0] if _single_return(schema)
                              else result_ids)

    def _view_source(self, schema, arg_operand, written):
        """The argument a pure view aliases, or None for a compute op."""
        if written:
            return None
        sources = _aliased_arguments(schema)
        if len(sources) != 1 or len(arg_operand) != 1:
            return None
        return sources.pop()

    def _add_view(self, node, op, op_schema, returns):
        op.kind = pb.Op.VIEW
        source = self._info[op.operands[0]]
        result_ids = []
        for _, fake in returns:
            result = self._add_tensor(node.name, fake, pb.ACTIVATION,
                                      source.storage, source.version)
            op.results.append(result)
            result_ids.append(result)
        self._values[node] = (result_ids[0] if _single_return(op_schema)
                              else result_ids)

    def _new_version(self, node, op, operand_index):
        operand_id = op.operands[operand_index]
        info = self._info[operand_id]
        head_version, _ = self._head[info.storage]
        fake = torch.empty_strided(info.size, info.stride, dtype=info.dtype,
                                   device="meta")
        result = self._add_tensor(node.name, fake, pb.ACTIVATION,
                                  info.storage, head_version + 1)
        self._info[result].storage_offset = info.storage_offset
        self._head[info.storage] = (head_version + 1, result)
        op.results.append(result)
        return result

    def _set_rng(self, op):
        op.rng.seed = self._seed
        op.rng.offset = self._rng_offset
        self._rng_offset += max(
            (_numel(self.graph.tensors[r].shape) for r in op.results), default=0)

    def add_outputs(self, fx_values):
        for fx_value in fx_values:
            self.graph.outputs.append(self.tensor_of(fx_value))


def _numel(shape):
    numel = 1
    for dim in shape:
        numel *= dim
    return numel


def _schema_arg(schema, name):
    return next(a for a in schema.arguments if a.name == name)


def _bind(node, schema):
    """Schema argument name -> FX value, defaults filled in."""
    bound = {}
    for argument, value in zip(schema.arguments, node.args):
        bound[argument.name] = value
    for argument in schema.arguments:
        if argument.name in bound:
            continue
        if argument.name in node.kwargs:
            bound[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
        else:
            raise ExportError(f"'{node.format_node()}' lacks argument "
                              f"'{argument.name}'")
    return bound


def _node_value(node):
    """The fake value(s) an FX node produced. torch 1.13 records none for
    tuple-returning ops, so those are re-run on their inputs' fake values."""
    if "val" in node.meta:
        return node.meta["val"]
    fake = torch.fx.node.map_arg((node.args, node.kwargs),
                                 lambda n: n.meta.get("val"))
    args, kwargs = fake
    node.meta["val"] = node.target(*args, **kwargs)
    return node.meta["val"]


def _aliased_arguments(schema):
    """The arguments the returns alias when every return aliases one; an
    empty set otherwise."""
    sources = set()
    for ret in schema.returns:
        aliased = [a.name for a in schema.arguments
                   if _alias_set(a.alias_info) & _return_alias_set(schema, ret)]
        if not aliased:
            return set()
        sources.update(aliased)
    return sources


def is_view_op(op):
    """Whether every result of `op` aliases an argument it does not write
    (`view`, `expand`, `split`, ...): a view, which needs no kernel."""
    return not _mutates(op) and bool(_aliased_arguments(op._schema))


def _mutates(op):
    return any(a.alias_info is not None and a.alias_info.is_write
               for a in op._schema.arguments)


def _has_tensor_result(value):
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_tensor_result(v) for v in value)
    return False


def _single_return(schema):
    return len(schema.returns) == 1 and str(schema.returns[0].type) == "Tensor"


def _flatten_returns(value, schema):
    """[(schema return, fake tensor or None)] with Tensor[] returns expanded."""
    if len(schema.returns) == 1:
        values = [value]
    else:
        values = list(value) if value is not None else [None] * len(schema.returns)
    flat = []
    for ret, item in zip(schema.returns, values):
        if isinstance(item, (list, tuple)):
            flat.extend((ret, element) for element in item)
        else:
            flat.append((ret, item if isinstance(item, torch.Tensor) else None))
    return flat


def _list_value(items):
    return pb.Value(list=pb.ValueList(items=[_scalar_value(i) for i in items]))


def _scalar_value(value):
    if value is None:
        return pb.Value(none=True)
    if isinstance(value, bool):
        return pb.Value(bool_value=value)
    if isinstance(value, int):
        return pb.Value(int_value=value)
    if isinstance(value, float):
        return pb.Value(float_value=value)
    if isinstance(value, str):
        return pb.Value(string_value=value)
    if isinstance(value, torch.dtype):
        return pb.Value(string_value=str(value).replace("torch.", ""))
    if isinstance(value, (torch.layout, torch.memory_format)):
        return pb.Value(string_value=str(value).replace("torch.", ""))
    if isinstance(value, torch.device):
        # The runtime places every tensor on its own device.
        return pb.Value(none=True)
    if isinstance(value, (list, tuple)):
        return _list_value(value)
    raise ExportError(f"cannot encode argument value {value!r} "
                      f"of type {type(value).__name__}")
