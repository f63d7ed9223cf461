//===- CoopOps.td - coop dialect operations ----------------*- tablegen -*-===//

#ifndef COOP_DIALECT_COOP_IR_COOPOPS_TD
#define COOP_DIALECT_COOP_IR_COOPOPS_TD

include "coop/Dialect/Coop/IR/CoopDialect.td"
include "coop/Dialect/Coop/IR/CoopAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"


def Coop_ComputeOp : Coop_Op<"compute"> {
  let summary = "Runs one kernel of the training step";
  let description = [{
    Runs the kernel named by `kernel` (an aten-level name such as
    `aten.convolution`) on the tensor operands. Non-tensor arguments of the
    kernel (strides, scalars, flags) live in the `args` dictionary.

    - `cost_us`: the kernel's run time in microseconds, when known.
    - `workspace_bytes`: scratch memory the kernel needs while it runs.
    - `inplace`: one entry per result; `-1` for a freshly allocated result,
      or the index of the operand whose storage the result overwrites. Such
      a result is a new version of that buffer; the operand remains the
      old version.
    - `rng`: the random stream of a random kernel (required for dropout,
      bernoulli, rand and the like).

    In a planned step (after `coop-plan-memory`):
    - `offsets`: the arena offset of each result's buffer; an in-place
      result has its operand's offset unless the plan copies on write.
    - `workspace_offset`: where the op's workspace lives while it runs.
    - `recompute_of`: set on a re-execution the plan inserted; the index,
      among the step's original ops, of the op it re-runs. Its results are
      the same tensors again, rematerialized at `offsets`.

    ```mlir
    %y = coop.compute "aten.relu_"(%x) {inplace = array<i64: 0>}
        : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %m:2 = coop.compute "aten.native_dropout"(%y)
        {args = {p = 1.000000e-01 : f64, train = true},
         rng = #coop.rng<seed = 7, offset = 0>}
        : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xi1>)
    ```
  }];
  let arguments = (ins
    StrAttr:$kernel,
    Variadic<AnyStaticShapeTensor>:$inputs,
    OptionalAttr<DictionaryAttr>:$args,
    OptionalAttr<F64Attr>:$cost_us,
    OptionalAttr<I64Attr>:$workspace_bytes,
    OptionalAttr<DenseI64ArrayAttr>:$inplace,
    OptionalAttr<Coop_RngAttr>:$rng,
    // Set by coop-plan-memory.
    OptionalAttr<DenseI64ArrayAttr>:$offsets,
    OptionalAttr<I64Attr>:$workspace_offset,
    OptionalAttr<I64Attr>:$recompute_of
  );
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The operand result `index` overwrites in place, if any.
    std::optional<unsigned> getInplaceOperand(unsigned index);
  }];
}

def Coop_ViewOp : Coop_Op<"view", [Pure]> {
  let summary = "Reinterprets a tensor's storage without copying";
  let description = [{
    Every result aliases the storage of `source`: a view owns no memory,
    costs nothing, and is valid only while its source's buffer is resident.
    `kernel` names the aten view (`aten.view`, `aten.t`, `aten.expand`, ...)
    and `args` holds its arguments.

    ```mlir
    %flat = coop.view "aten.view"(%x) {args = {size = [8, 64]}}
        : (tensor<8x4x4x4xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins
    StrAttr:$kernel,
    AnyStaticShapeTensor:$source,
    OptionalAttr<DictionaryAttr>:$args,
    // Set by coop-plan-memory on a view re-created over a recomputed source.
    OptionalAttr<I64Attr>:$recompute_of
  );
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $source `)` attr-dict `:` functional-type($source, $results)
  }];
  let hasVerifier = 1;
}

class Coop_ReleaseOp<string mnemonic, string what> : Coop_Op<mnemonic> {
  let arguments = (ins AnyStaticShapeTensor:$tensor);
  let assemblyFormat = "$tensor attr-dict `:` type($tensor)";
  let summary = "Releases a tensor's buffer " # what;
}

def Coop_EvictOp : Coop_ReleaseOp<"evict", "that is needed again later"> {
  let description = [{
    Inserted by `coop-plan-memory`: the buffer of `tensor` goes back to the
    arena. A later reader uses a recomputation (`recompute_of`) instead;
    reading `tensor` itself after this point is an error.

    ```mlir
    coop.evict %h : tensor<512x128xf32>
    ```
  }];
}

def Coop_FreeOp : Coop_ReleaseOp<"free", "after its last use"> {
  let description = [{
    Inserted by `coop-plan-memory`: `tensor` is dead and its buffer goes back
    to the arena.

    ```mlir
    coop.free %h : tensor<512x128xf32>
    ```
  }];
}

#endif // COOP_DIALECT_COOP_IR_COOPOPS_TD
