"""Traces one whole training step of a PyTorch model to aten ops.

The step is forward, loss, ``torch.autograd.grad`` and an in-place
optimizer update (SGD with momentum, or Adam), traced with ``make_fx`` in
fake-tensor mode: shapes and dtypes propagate, nothing is allocated, so a
2.7B-parameter model exports on a laptop.
"""
import contextlib
from dataclasses import dataclass

import torch
from torch._subclasses import FakeTensor, FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

from . import meta_kernels  # noqa: F401  (registers missing Meta kernels)
from . import kernel_coverage
from . import training_graph_pb2 as pb
from .graph_builder import ExportError, GraphBuilder

try:  # torch >= 2.0
    from torch.func import functional_call
except ImportError:  # torch 1.13: the same function before it moved
    from torch.nn.utils.stateless import functional_call


@dataclass
class SGD:
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 0.0
    nesterov: bool = False

    state_names = ("momentum_buffer",)
    counts_steps = False  # no step counter (see Adam)

    def begin_step(self, step):
        """Per-step values every parameter's update shares (none)."""
        return None

    def update(self, param, grad, state, shared):
        (momentum_buffer,) = state
        if self.weight_decay:
            grad = grad.add(param, alpha=self.weight_decay)
        momentum_buffer.mul_(self.momentum).add_(grad)
        if self.nesterov:
            grad = grad.add(momentum_buffer, alpha=self.momentum)
            param.add_(grad, alpha=-self.lr)
        else:
            param.add_(momentum_buffer, alpha=-self.lr)


@dataclass
class Adam:
    """torch.optim.Adam. Its step counter (torch's state['step'], one for
    every parameter) is a float32 scalar of optimizer state that each step
    increments in place; the bias corrections follow it, computed from it
    in float32 (as torch.optim's `capturable=True` form computes them)."""
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0

    state_names = ("exp_avg", "exp_avg_sq")
    counts_steps = True

    def begin_step(self, step):
        """Increments the counter t; returns the scale and the shift that
        turn sqrt(exp_avg_sq) into the denominator of every parameter's
        update: with c1 = 1 - beta1^t and c2 = 1 - beta2^t, torch's
        param -= lr / c1 * exp_avg / (sqrt(exp_avg_sq) / sqrt(c2) + eps)
        is param += exp_avg / (sqrt(exp_avg_sq) * scale + shift) with
        scale = -c1 / (lr * sqrt(c2)) and shift = -c1 * eps / lr. Written
        with beta^t - 1 = -c, so that it needs no kernel beyond pow, sub,
        neg, sqrt, mul and div, and costs each parameter no more than a
        constant correction would."""
        step.add_(1)
        bias_correction2_sqrt = torch.pow(self.beta2, step).sub(1.0).neg().sqrt()
        minus_c1_over_lr = torch.pow(self.beta1, step).sub(1.0).div(self.lr)
        return (minus_c1_over_lr.div(bias_correction2_sqrt),
                minus_c1_over_lr.mul(self.eps))

    def update(self, param, grad, state, shared):
        if self.weight_decay:
            grad = grad.add(param, alpha=self.weight_decay)
        self._move(param, grad, state, shared)

    def _move(self, param, grad, state, shared):
        """The moments' update and the step along them."""
        exp_avg, exp_avg_sq = state
        scale, shift = shared
        exp_avg.mul_(self.beta1).add_(grad, alpha=1 - self.beta1)
        exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
        denom = exp_avg_sq.sqrt().mul_(scale).add_(shift)
        param.addcdiv_(exp_avg, denom)


@dataclass
class AdamW(Adam):
    """torch.optim.AdamW: Adam with the weight decay applied to the
    parameter itself (decoupled) instead of added to the gradient."""
    weight_decay: float = 1e-2

    def update(self, param, grad, state, shared):
        if self.weight_decay:
            param.mul_(1 - self.lr * self.weight_decay)
        self._move(param, grad, state, shared)


# The name of the step counter argument of an optimizer that counts steps.
STEP_COUNTER = "optimizer.step"


def make_optimizer(optimizer):
    """An SGD/Adam update rule from a name or a torch.optim instance."""
    if isinstance(optimizer, (SGD, Adam)):
        return optimizer
    if optimizer == "sgd":
        return SGD()
    if optimizer == "adam":
        return Adam()
    if optimizer == "adamw":
        return AdamW()
    group = (optimizer.param_groups[0]
             if isinstance(optimizer, torch.optim.Optimizer) else {})
    # Options the exported step cannot express are refused, not dropped.
    for option, plain in (("dampening", 0), ("amsgrad", False),
                          ("maximize", False)):
        if group.get(option, plain) != plain:
            raise ExportError(f"unsupported optimizer option {option}="
                              f"{group[option]!r} of {type(optimizer).__name__}")
    if isinstance(optimizer, torch.optim.SGD):
        return SGD(group["lr"], group["momentum"], group["weight_decay"],
                   group["nesterov"])
    # torch 2.x's AdamW is a subclass of Adam.
    if isinstance(optimizer, torch.optim.AdamW):
        return AdamW(group["lr"], group["betas"][0], group["betas"][1],
                     group["eps"], group["weight_decay"])
    if isinstance(optimizer, torch.optim.Adam):
        return Adam(group["lr"], group["betas"][0], group["betas"][1],
                    group["eps"], group["weight_decay"])
    raise ExportError(f"unsupported optimizer {optimizer!r}: use 'sgd', "
                      "'adam', 'adamw', torch.optim.SGD, Adam or AdamW")


def _parameter_names(model):
    """Unique parameters with every name they are reachable under (tied
    weights, such as a language model's embedding and head, share one)."""
    names = {}
    for module_name, module in model.named_modules():
        for local_name, param in module._parameters.items():
            if param is not None:
                full = f"{module_name}.{local_name}" if module_name else local_name
                names.setdefault(param, []).append(full)
    return list(names.items())


@contextlib.contextmanager
def _rnn_weights_follow_bindings(model):
    """Makes nn.RNN/LSTM/GRU read the weights bound by functional_call.

    RNN modules pass a cached list, `_flat_weights`, to the fused kernel.
    torch 1.13's functional_call swaps attribute lookups but not that list,
    so the kernel would see the module's own (real, or another mode's fake)
    weights instead of the traced ones ("Mixing modes NYI"). A forward
    pre-hook rebuilds the list from the bound attributes right before each
    call; the module's own list is restored afterwards. torch 2.x updates
    the list itself when it swaps, and the hook rebuilds it identically.
    """
    def refresh(module, _inputs):
        module.__dict__["_flat_weights"] = [
            getattr(module, name) if hasattr(module, name) else None
            for name in module._flat_weights_names]

    saved, handles = [], []
    for module in model.modules():
        if isinstance(module, torch.nn.RNNBase):
            saved.append((module, module.__dict__.get("_flat_weights")))
            handles.append(module.register_forward_pre_hook(refresh))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        for module, weights in saved:
            module.__dict__["_flat_weights"] = weights


_SHAPE_ONLY = FakeTensorMode()


def _fake_like(tensor):
    """A shape-only stand-in that allocates nothing (make_fx takes fake
    tensors as inputs; torch 1.13 refuses meta tensors). It belongs to the
    fake mode of `tensor` when that is fake: torch 2.x refuses to trace
    fake tensors of several modes together."""
    with getattr(tensor, "fake_mode", None) or _SHAPE_ONLY:
        return torch.empty_strided(tensor.shape, tensor.stride(),
                                   dtype=tensor.dtype)


def _layouts_before_in_place_views(graph_module, traced_inputs):
    """Gives every FX node the sizes and strides its value had when it was
    computed. make_fx records each node's value as the live fake tensor, so
    an in-place view op (`transpose_`, which torch's batch-first GRU/LSTM
    applies to its output) also changes the recorded layout of the node
    that produced the tensor. When the graph has such an op, it is run
    again on fresh fake tensors, and each node's value is replaced by a
    meta tensor copied right after the node ran."""
    if not any(isinstance(n.target, torch._ops.OpOverload)
               and torch.Tag.inplace_view in n.target.tags
               for n in graph_module.graph.nodes):
        return

    def layout(value):
        if not isinstance(value, torch.Tensor):
            return value
        return (tuple(value.shape), tuple(value.stride()), value.storage_offset(),
                value.dtype)

    def meta(value):
        if not isinstance(value, tuple) or len(value) != 4 or not isinstance(
                value[3], torch.dtype):
            return value
        shape, stride, offset, dtype = value
        extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))
        return torch.empty(extent if all(shape) else offset, dtype=dtype,
                           device="meta").as_strided(shape, stride, offset)

    mode = FakeTensorMode()
    layouts = {}

    lifts = {torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default}

    class Replay(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            # A constant is fake unless only lifted (the fake mode lifts
            # real tensors itself and recurses on fake ones).
            if node.op == "get_attr" and not all(u.target in lifts for u in node.users):
                result = mode.from_tensor(result)
            layouts[node] = torch.utils._pytree.tree_map(layout, result)
            return result

    with mode, torch.no_grad():
        fakes = [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
                 for t in traced_inputs]
        Replay(graph_module).run(*fakes)
    for node, value in layouts.items():
        if isinstance(value, list):
            node.meta["val"] = [meta(v) for v in value]
        elif isinstance(value, tuple) and not isinstance(value[-1], torch.dtype):
            node.meta["val"] = tuple(meta(v) for v in value)
        else:
            node.meta["val"] = meta(value)


def export(model, example_inputs, loss_fn, optimizer="sgd", *, targets=(),
           name="train_step", seed=0, accumulate_grads=False,
           initial_values=False, metadata=None, kernels=None,
           check_kernels=True):
    """Exports one training step of `model` as a TrainingGraph message.

    `model(*example_inputs)` is the forward pass and
    `loss_fn(output, *targets)` the scalar loss. `optimizer` is 'sgd', 'adam',
    an SGD/Adam rule from this module, or a torch.optim.SGD/Adam whose first
    parameter group gives the hyper-parameters. With `accumulate_grads`, the
    gradients are added into persistent GRADIENT tensors (`.grad`
    accumulation) instead of being step-local activations. With
    `initial_values`, the real contents of parameters, buffers, optimizer
    state (zeros) and inputs are stored, for numeric checks of small models;
    this needs real (not fake) tensors.

    Composite kernels the runtime lacks are traced as the primitives it
    has (kernel_coverage.py), and a step with a kernel it still lacks is an
    ExportError naming them. `kernels` is the runtime's kernel registry
    (default: the copy shipped with the exporter, `coop-run --list-kernels`
    of this source tree); `check_kernels=False` skips the check and writes a
    step for planning only.
    """
    kernels = (kernel_coverage.runtime_kernels() if kernels is None
               else frozenset(kernels))
    rule = make_optimizer(optimizer)
    model.train()
    example_inputs = tuple(example_inputs)
    targets = tuple(targets)
    params = _parameter_names(model)
    buffers = list(model.named_buffers())

    # The flat argument list of the traced function, with roles and names.
    arguments = []
    for param, names in params:
        arguments.append((names[0], pb.PARAMETER, param))
    for buffer_name, buffer in buffers:
        arguments.append((buffer_name, pb.BUFFER, buffer))
    for param, names in params:
        for state_name in rule.state_names:
            arguments.append((f"{names[0]}.{state_name}", pb.OPTIMIZER_STATE,
                              torch.zeros_like(param) if initial_values
                              else _fake_like(param)))
    if rule.counts_steps:
        if any(arg_name == STEP_COUNTER for arg_name, _, _ in arguments):
            raise ExportError(f"the model has a tensor named '{STEP_COUNTER}', "
                              "the name of the optimizer's step counter")
        counter = torch.zeros((), dtype=torch.float32)
        arguments.append((STEP_COUNTER, pb.OPTIMIZER_STATE,
                          counter if initial_values else _fake_like(counter)))
    if accumulate_grads:
        for param, names in params:
            arguments.append((f"{names[0]}.grad", pb.GRADIENT,
                              torch.zeros_like(param) if initial_values
                              else _fake_like(param)))
    for index, tensor in enumerate(example_inputs):
        arguments.append((f"input{index}", pb.INPUT, tensor))
    for index, tensor in enumerate(targets):
        arguments.append((f"target{index}", pb.INPUT, tensor))

    num_params, num_buffers = len(params), len(buffers)
    num_state = len(rule.state_names)

    def step(flat):
        param_values = flat[:num_params]
        rest = flat[num_params:]
        buffer_values, rest = rest[:num_buffers], rest[num_buffers:]
        state_values = rest[:num_params * num_state]
        rest = rest[num_params * num_state:]
        if rule.counts_steps:
            step_counter, rest = rest[0], rest[1:]
        if accumulate_grads:
            grad_buffers, rest = rest[:num_params], rest[num_params:]
        inputs = rest[:len(example_inputs)]
        step_targets = rest[len(example_inputs):]

        bindings = {}
        for (_, names), value in zip(params, param_values):
            bindings.update({n: value for n in names})
        bindings.update({n: v for (n, _), v in zip(buffers, buffer_values)})
        with _rnn_weights_follow_bindings(model):
            output = functional_call(model, bindings, tuple(inputs))
        loss = loss_fn(output, *step_targets)
        grads = torch.autograd.grad(loss, param_values)
        with torch.no_grad():
            shared = rule.begin_step(step_counter if rule.counts_steps else None)
            for index, (param, grad) in enumerate(zip(param_values, grads)):
                if accumulate_grads:
                    grad = grad_buffers[index].add_(grad)
                state = state_values[index * num_state:(index + 1) * num_state]
                rule.update(param, grad, state, shared)
        return [loss]

    traced_inputs = []
    for _, role, tensor in arguments:
        tensor = tensor.detach()
        if role == pb.PARAMETER:
            tensor.requires_grad_(True)
        traced_inputs.append(tensor)
    # oneDNN off: torch 2.x would otherwise trace an LSTM on the CPU as one
    # opaque `mkldnn_rnn_layer` per layer and direction instead of the
    # per-time-step aten ops (the form torch 1.13 traces), which the cost
    # model and the runtime know.
    mkldnn_enabled = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(False)
    try:
        with kernel_coverage.attention_in_math_form(kernels):
            graph_module = make_fx(
                step, decomposition_table=kernel_coverage.decomposition_table(kernels),
                tracing_mode="fake")(traced_inputs)
    finally:
        torch._C._set_mkldnn_enabled(mkldnn_enabled)
    _layouts_before_in_place_views(graph_module, traced_inputs)

    builder = GraphBuilder(name, seed=seed)
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(arguments):
        raise ExportError(f"traced {len(placeholders)} inputs, expected "
                          f"{len(arguments)}")
    for node, (arg_name, role, tensor) in zip(placeholders, arguments):
        value = tensor if initial_values else None
        builder.bind(node, builder.add_argument(arg_name, node.meta["val"],
                                                role, value))
    for node in graph_module.graph.nodes:
        if node.op == "call_function":
            builder.add_call(node)
        elif node.op == "get_attr":
            constant = getattr(graph_module, node.target)
            # A traced constant is part of the step, not the caller's data:
            # its value is stored whenever it is real (a session binds it).
            real = not isinstance(constant, FakeTensor)
            builder.bind(node, builder.add_argument(
                f"constant.{node.target}", constant, pb.BUFFER,
                constant if initial_values or real else None))
        elif node.op == "output":
            builder.add_outputs(torch.fx.node.map_aggregate(
                node.args[0], lambda n: n) if isinstance(node.args[0], list)
                else [node.args[0]])
    graph = builder.graph
    if check_kernels:
        kernel_coverage.check_coverage(graph, kernels)
    graph.metadata["producer"] = "coop_export"
    graph.metadata["torch_version"] = torch.__version__
    graph.metadata["optimizer"] = type(rule).__name__.lower()
    for key, value in (metadata or {}).items():
        graph.metadata[key] = str(value)
    return graph
