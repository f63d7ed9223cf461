"""Shape-only (Meta) kernels that torch 1.13 lacks.

Without a Meta kernel, a fake tensor falls back to running the real CPU
kernel on zero-filled tensors: ResNet-50 at batch 115 then spends most of
its export time computing convolution gradients of zeros. Newer torch
versions ship these kernels; they are registered here only when missing.
"""
import torch

_LIBRARY = torch.library.Library("aten", "IMPL", "Meta")


def _convolution_backward(grad_output, input, weight, bias_sizes, stride,
                          padding, dilation, transposed, output_padding,
                          groups, output_mask):
    return (grad_output.new_empty(input.shape) if output_mask[0] else None,
            grad_output.new_empty(weight.shape) if output_mask[1] else None,
            grad_output.new_empty(bias_sizes) if output_mask[2] else None)


def _nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    reduced = reduction != 0  # 0 is Reduction::None
    output = self.new_empty(() if reduced else target.shape)
    return output, self.new_empty(())


_KERNELS = {
    "convolution_backward": _convolution_backward,
    "nll_loss2d_forward": _nll_loss2d_forward,
}

for _name, _kernel in _KERNELS.items():
    if not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{_name}",
                                                          "Meta"):
        _LIBRARY.impl(_name, _kernel)
