"""`coop.reference_step`: the compiled step in PyTorch eager, for
comparisons with the runtime."""

from .rng import CounterStream
from .runtime import as_tuple


def reference_step(compiled, model, optimizer, inputs, targets=(), step=0):
    """One training step of `model` in PyTorch eager, as `compiled` runs it
    as its step with 0-based index `step`: the forward with the random ops
    drawing from the runtime's stream (offset advanced by step * S), the
    loss, the gradients, then `optimizer.step()` (torch.optim's own
    update, Adam's step counts included). `step` is the session's
    `step_index` for the same step. Returns the loss as a float."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    with CounterStream(compiled.seed, step * compiled.random_span):
        loss = compiled.loss_fn(model(*as_tuple(inputs)), *as_tuple(targets))
    loss.backward()
    optimizer.step()
    return loss.item()
