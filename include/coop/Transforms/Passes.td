//===- Passes.td - coop pass declarations ------------------*- tablegen -*-===//

#ifndef COOP_TRANSFORMS_PASSES_TD
#define COOP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CoopMemoryStats : Pass<"coop-memory-stats", "ModuleOp"> {
  let summary = "Print the memory figures of every training step";
  let description = [{
    For every `func.func` marked `coop.step`, prints to standard output the
    op count, tensor and storage counts, persistent bytes, the peak of live
    bytes when the step runs in program order with no rematerialization
    (exact liveness, no fragmentation or alignment), and the memory floor:
    persistent bytes plus the largest single-op working set (distinct
    transient buffers an op reads or writes, plus its workspace). No plan can
    run the step in fewer bytes than the floor. The IR is left unchanged.

    Input:

    ```mlir
    func.func @step(%w: tensor<4x4xf32> {coop.role = #coop.role<parameter>},
                    %x: tensor<2x4xf32> {coop.role = #coop.role<input>})
        -> tensor<2x4xf32> attributes {coop.step} {
      %y = coop.compute "aten.mm"(%x, %w)
          : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      return %y : tensor<2x4xf32>
    }
    ```

    Printed (the IR itself is unchanged):

    ```
    coop-memory-stats @step
      ops:               1
      tensors:           3
      storages:          3
      persistent bytes:  96 (96 B)
      peak live bytes:   128 (128 B) at op #0 'aten.mm'
      memory floor:      128 (128 B) at op #0 'aten.mm'
    ```
  }];
  let dependentDialects = ["::mlir::coop::CoopDialect"];
}

#endif // COOP_TRANSFORMS_PASSES_TD
