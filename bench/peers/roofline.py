"""Coop's roofline cost model (lib/CostModel/CostModel.cpp) in Python, so
that an aten node of PyTorch's partitioned graphs is costed exactly as
`--coop-annotate-costs` costs the same kernel at the same shapes.

time = max(FLOPs / peak, bytes moved / bandwidth); bytes moved are all
operand plus all result bytes; FLOPs per family as in docs/cost-model.md.
`check_against_mlir` recomputes every `cost_us` of an annotated step from
its printed types and reports the largest disagreement.
"""
import math
import re

DEVICES = {  # FP32 peaks and bandwidths, as in CostModel.cpp
    "a100": (19.5e12, 1.555e12),
    "v100": (15.7e12, 0.9e12),
    "h100": (67e12, 3.35e12),
    "cpu": (1e12, 1e11),
}


def base_name(kernel):
    """'aten.add_.Tensor' -> 'add_'."""
    if kernel.startswith("aten."):
        kernel = kernel[5:]
    return kernel.split(".")[0]


def _numel(dims):
    return math.prod(dims)


def _matmul_flops(lhs, rhs):
    k = lhs[-1]
    return 2 * (_numel(lhs) / k * rhs[-1]) * k


def _conv_flops(inp, weight, out, transposed):
    per_filter = _numel(weight) / weight[0]
    return 2 * (_numel(inp) if transposed else _numel(out)) * per_filter


def cost(kernel, operands, results, transposed=False, device="a100"):
    """Microseconds of one kernel. operands/results: [(dims, element bytes)]."""
    peak, bandwidth = DEVICES[device]
    nbytes = sum(_numel(d) * e for d, e in operands) + sum(
        _numel(d) * e for d, e in results)
    name = base_name(kernel)
    ops = [d for d, _ in operands]
    res = [d for d, _ in results]

    def rank(shapes, i, r):
        return len(shapes) > i and len(shapes[i]) >= r

    if name in ("mm", "bmm") and rank(ops, 0, 2) and rank(ops, 1, 2):
        flops = _matmul_flops(ops[0], ops[1])
    elif name in ("addmm", "baddbmm") and rank(ops, 1, 2) and rank(ops, 2, 2):
        flops = _matmul_flops(ops[1], ops[2]) + 2 * sum(_numel(d) for d in res)
    elif name == "convolution" and rank(ops, 1, 3) and rank(res, 0, 3):
        flops = _conv_flops(ops[0], ops[1], res[0], transposed)
    elif name == "convolution_backward" and rank(ops, 2, 3):
        forward = _conv_flops(ops[1], ops[2], ops[0], transposed)
        flops = 0.0
        for d in res:
            flops += forward if (d == ops[1] or d == ops[2]) else _numel(ops[0])
    else:
        flops = max(sum(_numel(d) for d in ops), sum(_numel(d) for d in res))
    return max(flops / peak, nbytes / bandwidth) * 1e6


# --- annotated MLIR -------------------------------------------------------

_COMPUTE = re.compile(r'coop\.compute "([^"]+)"')
_COST = re.compile(r"cost_us = ([0-9.eE+-]+) : f64")
_TENSOR = re.compile(r"tensor<([0-9x]*?)x?([a-z]+[0-9]+)>")
_ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
                  "i16": 2, "i8": 1, "i1": 1, "ui8": 1}


def _types(text):
    out = []
    for dims, element in _TENSOR.findall(text):
        shape = tuple(int(x) for x in dims.split("x") if x) if dims else ()
        out.append((shape, _ELEMENT_BYTES[element]))
    return out


def read_annotated(path):
    """[(kernel, cost_us, operands, results, transposed)] of every
    coop.compute of an annotated step, in order."""
    ops = []
    for line in open(path):
        m = _COMPUTE.search(line)
        if not m:
            continue
        c = _COST.search(line)
        # The trailing function type: ' : (operands) -> results'.
        signature = line[line.rindex("} : ") + 4:]
        arrow = signature.find(" -> ")
        operands = _types(signature[:arrow])
        results = _types(signature[arrow + 4:])
        ops.append((m.group(1), float(c.group(1)) if c else 0.0, operands,
                    results, "transposed = true" in line))
    return ops


def check_against_mlir(path, device="a100"):
    """(ops checked, largest relative error) of this module's costs
    against the cost_us that coop-annotate-costs wrote."""
    worst = 0.0
    ops = read_annotated(path)
    for kernel, us, operands, results, transposed in ops:
        mine = cost(kernel, operands, results, transposed, device)
        if us > 0:
            worst = max(worst, abs(mine - us) / us)
        elif mine > 0:
            worst = math.inf
    return len(ops), worst
