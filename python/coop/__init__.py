"""Coop from Python: compile a PyTorch training step into a memory budget,
run it on the runtime with real batches, and compare it with PyTorch
(docs/python.md).

    import coop
    step = coop.compile(model, (x,), F.cross_entropy, optimizer,
                        targets=(y,), ratio=0.5)
    with step.session(model, optimizer) as session:
        loss = session.step(x, y)
        session.write_back()
"""
from .compiler import CompiledStep, compile
from .errors import CompileError, CoopError, SessionError
from .reference import reference_step
from .runtime import Session

__all__ = ["CompileError", "CompiledStep", "CoopError", "Session", "SessionError",
           "compile", "reference_step"]
