"""What the runtime can run, and composite kernels traced as what it runs.

The runtime's kernel registry is copied in `runtime_kernels.txt` (the
output of `coop-run --list-kernels`, so the exporter works from a source
checkout without a build; `python/tests/test_kernel_list.py` fails when
the copy and the registry differ). A kernel is covered as the runtime looks
it up: by its exact name, or by its name without the overload.

Composite kernels the runtime lacks are traced as the primitives it has:

- torch's own decompositions (`torch._decomp.decomposition_table`) of every
  compute kernel the runtime lacks, applied as make_fx traces (`_safe_softmax`
  into `softmax` and a mask, ...), and, for the few primitives those reach
  that the runtime lacks too (`all`, `any`, the primitives `where`,
  `convert_element_type`, `sum`, `div`, `ne`, `log1p`, `expm1`, `atan` and
  the view `broadcast_in_dim`) and the reflection and replication padding
  torch 1.13 does not decompose, decompositions written here into kernels
  it has;
- scaled dot-product attention in its math form (torch's
  `_scaled_dot_product_attention_math`: matmuls, softmax, dropout) unless
  the runtime has the fused CPU kernel and its backward. The math form is
  chosen before autograd records the op, so the backward is the math
  form's too; a decomposition at trace time would leave the fused backward.

A kernel the runtime has is never decomposed.
"""
import contextlib
import functools
import os

import torch

from .graph_builder import ExportError, kernel_name, is_view_op

REGISTRY_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "runtime_kernels.txt")

# The fused attention kernel of torch's CPU backend and its backward.
FUSED_CPU_ATTENTION = ("aten._scaled_dot_product_flash_attention_for_cpu",
                       "aten._scaled_dot_product_flash_attention_for_cpu_backward")


@functools.lru_cache(maxsize=None)
def runtime_kernels():
    """The runtime's kernel names, from runtime_kernels.txt."""
    with open(REGISTRY_FILE) as f:
        return frozenset(line.strip() for line in f if line.strip())


def has_kernel(kernel, kernels):
    """Whether `kernels` covers `kernel` ('aten.add_.Tensor'): by the exact
    name or the name without its overload, as the runtime's findKernel."""
    return kernel in kernels or ".".join(kernel.split(".")[:2]) in kernels


def check_coverage(graph, kernels):
    """Raises ExportError naming every compute kernel of `graph` that
    `kernels` lacks, with its op count."""
    missing = {}
    for op in graph.ops:
        if op.kind == op.COMPUTE and not has_kernel(op.kernel, kernels):
            missing[op.kernel] = missing.get(op.kernel, 0) + 1
    if missing:
        listed = ", ".join(f"'{kernel}' ({count} op{'s' * (count > 1)})"
                           for kernel, count in sorted(missing.items()))
        raise ExportError(
            f"the runtime has no kernel for {listed}, and torch has no "
            "decomposition of them into kernels it has; coop-run would reject "
            "the step (export(..., check_kernels=False) writes it anyway, "
            "for planning only)")


def _all(self, dim=None, keepdim=False):
    """all(): no element is zero (False), as a count of the zeros."""
    zeros = torch.bitwise_not(self) if self.dtype == torch.bool else self.eq(0)
    return (zeros.sum() if dim is None else zeros.sum(dim, keepdim)).eq(0)


def _any(self, dim=None, keepdim=False):
    """any(): some element is non-zero (True), as a count of them."""
    nonzero = self if self.dtype == torch.bool else self.ne(0)
    return (nonzero.sum() if dim is None else nonzero.sum(dim, keepdim)).ne(0)


def _where(pred, a, b):
    """prims.where, which torch's decompositions reach (PReLU's and its
    backward's, log-sigmoid's): aten.where, a Python number operand as a 0-d
    tensor of the other operand's dtype (prims.where takes operands of one
    dtype), or of the numbers' own type where both are."""
    tensors = [x for x in (a, b) if isinstance(x, torch.Tensor)]
    dtype = (tensors[0].dtype if tensors else
             torch.get_default_dtype() if any(isinstance(x, float) for x in (a, b))
             else torch.int64)
    a, b = (x if isinstance(x, torch.Tensor) else
            torch.ops.aten.scalar_tensor(x, dtype=dtype, device=pred.device)
            for x in (a, b))
    return torch.ops.aten.where.self(pred, a, b)


def _convert_element_type(a, dtype):
    return torch.ops.aten._to_copy.default(a, dtype=dtype)


def _sum(a, dims, output_dtype=None):
    if output_dtype is not None and output_dtype != a.dtype:
        a = _convert_element_type(a, output_dtype)
    return torch.ops.aten.sum.dim_IntList(a, list(dims))


def _div(a, b):
    """prims.div: true division of floats (of integers it truncates, which
    the runtime's div does not)."""
    if not all(x.dtype.is_floating_point for x in (a, b)
               if isinstance(x, torch.Tensor)):
        raise ExportError("prims.div of integers (truncating) has no kernel "
                          "in the runtime")
    return torch.ops.aten.div.Tensor(a, b)


def _ne(a, b):
    return (torch.ops.aten.ne.Tensor if isinstance(b, torch.Tensor)
            else torch.ops.aten.ne.Scalar)(a, b)


def _broadcast_in_dim(a, shape, broadcast_dimensions):
    """prims.broadcast_in_dim (PReLU's slopes): a view the runtime's layout
    does not know, as the unsqueezes and the expand it is."""
    for dim in range(len(shape)):
        if dim not in broadcast_dimensions:
            a = torch.ops.aten.unsqueeze.default(a, dim)
    return torch.ops.aten.expand.default(a, list(shape))


def _pad_indices(x, padding, reflect):
    """Per padded dim of `x` (the last first, as `padding` lists them), the
    dim and the index of the input element each output element copies:
    from arange, |i| folded at the edges (reflection) or i clamped
    (replication)."""
    for k in range(len(padding) // 2):
        dim, before, after = x.dim() - 1 - k, padding[2 * k], padding[2 * k + 1]
        last = x.shape[dim] - 1
        i = torch.ops.aten.arange.start(-before, last + 1 + after, device=x.device)
        if reflect:
            i = torch.ops.aten.rsub.Scalar(
                torch.ops.aten.abs.default(
                    torch.ops.aten.rsub.Scalar(torch.ops.aten.abs.default(i), last)),
                last)
        else:
            i = torch.ops.aten.clamp.default(i, 0, last)
        yield dim, i


def _pad(reflect):
    """Reflection or replication padding (torch 1.13 decomposes neither) as
    an index_select per padded dim."""
    def pad(x, padding):
        for dim, i in list(_pad_indices(x, padding, reflect)):
            x = torch.ops.aten.index_select.default(x, dim, i)
        return x
    return pad


def _pad_backward(reflect):
    """Its backward: each padded dim's gradient summed back into the input's
    elements by index_add, the last padded dim first."""
    def backward(grad, x, padding):
        for dim, i in reversed(list(_pad_indices(x, padding, reflect))):
            shape = list(grad.shape)
            shape[dim] = x.shape[dim]
            grad = torch.ops.aten.index_add.default(
                torch.ops.aten.new_zeros.default(grad, shape), dim, i, grad)
        return grad
    return backward


def _own_decompositions():
    """Primitives torch does not decompose, as kernels the runtime has."""
    table = {}
    pads = [(getattr(torch.ops.aten, f"{kind}_pad{n}d{which}"), rule(reflect))
            for kind, reflect in (("reflection", True), ("replication", False))
            for n in (1, 2, 3)
            for which, rule in (("", _pad), ("_backward", _pad_backward))]
    for packet, rule in [(torch.ops.aten.all, _all), (torch.ops.aten.any, _any),
                         (torch.ops.prims.where, _where),
                         (torch.ops.prims.broadcast_in_dim, _broadcast_in_dim),
                         (torch.ops.prims.convert_element_type, _convert_element_type),
                         (torch.ops.prims.sum, _sum), (torch.ops.prims.div, _div),
                         (torch.ops.prims.ne, _ne)] + pads + [
            # Float primitives torch 1.13's refs reach, as the aten kernel
            # of the same name.
            (getattr(torch.ops.prims, name), getattr(torch.ops.aten, name).default)
            for name in ("log1p", "expm1", "atan")]:
        for overload in ("default", "dim", "dims"):
            if hasattr(packet, overload):   # `dims` is torch >= 2.2
                table[getattr(packet, overload)] = rule
    return table


def decomposition_table(kernels):
    """make_fx's table: a decomposition of every compute kernel that
    `kernels` lacks (this module's rules before torch's, which may reach
    kernels the runtime lacks). Views, in-place views and ops
    without tensor results are left to the graph builder, but for the
    views this module decomposes into views it knows."""
    from torch._decomp import decomposition_table as torch_table
    own = _own_decompositions()
    table = {}
    for op, rule in list(own.items()) + list(torch_table.items()):
        if not isinstance(op, torch._ops.OpOverload) or has_kernel(kernel_name(op), kernels):
            continue
        if op not in own and (
                is_view_op(op) or torch.Tag.inplace_view in op.tags
                or not any("Tensor" in str(r.type) for r in op._schema.returns)):
            continue
        table.setdefault(op, rule)
    return table


@contextlib.contextmanager
def attention_in_math_form(kernels):
    """Traces scaled dot-product attention in its math form unless the
    runtime has the fused CPU kernel and its backward."""
    if all(has_kernel(k, kernels) for k in FUSED_CPU_ATTENTION):
        yield
        return
    try:  # torch >= 2.3
        from torch.nn.attention import SDPBackend, sdpa_kernel
        choice = sdpa_kernel([SDPBackend.MATH])
    except ImportError:  # the flag the CPU's choice reads in torch 2.0-2.2
        choice = torch.backends.cuda.sdp_kernel(enable_flash=False)
    with choice:
        yield
