//===- CoopDialect.td - The coop training-graph dialect ----*- tablegen -*-===//

#ifndef COOP_DIALECT_COOP_IR_COOPDIALECT_TD
#define COOP_DIALECT_COOP_IR_COOPDIALECT_TD

include "mlir/IR/OpBase.td"

def Coop_Dialect : Dialect {
  let name = "coop";
  let cppNamespace = "::mlir::coop";
  let summary = "A whole training step as a memory planner sees it";
  let description = [{
    The `coop` dialect holds one exported training step (forward, loss,
    backward, optimizer update) as a `func.func` marked `coop.step`, in
    execution order. Tensors are ranked, statically shaped `tensor<>`
    values; their byte size follows from the type. Step arguments carry a
    `coop.role` (parameter, gradient, optimizer_state, buffer, input): they
    are persistent and never evicted. Everything an op produces is an
    activation, evictable and recomputable.

    `coop.compute` runs one kernel. A result listed in `inplace` is a new
    *version* of an operand's storage: old and new versions are distinct
    SSA values that share one buffer. `coop.view` results alias the storage
    of their source and cost nothing. Random kernels carry a `#coop.rng`
    seed and offset so that re-running them reproduces their values.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Unit attribute that marks a func.func as a training step.
    static constexpr ::llvm::StringLiteral kStepAttrName = "coop.step";
    /// Role of a step argument, a #coop.role attribute.
    static constexpr ::llvm::StringLiteral kRoleAttrName = "coop.role";
    /// The exported name of a step argument ("layer1.0.conv1.weight"), by
    /// which the runtime binds its value.
    static constexpr ::llvm::StringLiteral kNameAttrName = "coop.name";
    /// Arena offset of a step argument in a planned step.
    static constexpr ::llvm::StringLiteral kOffsetAttrName = "coop.offset";
    /// Dictionary with a planned step's budget, policy, options and stats.
    static constexpr ::llvm::StringLiteral kPlanAttrName = "coop.plan";
    /// Dictionary on a step saying where coop-annotate-costs took its ops'
    /// costs from: op counts `profile`, `roofline` and `given` (kept from
    /// the input), the `device` and the `profile_table` file.
    static constexpr ::llvm::StringLiteral kCostsAttrName = "coop.costs";
  }];
}

class Coop_Op<string mnemonic, list<Trait> traits = []>
    : Op<Coop_Dialect, mnemonic, traits>;

#endif // COOP_DIALECT_COOP_IR_COOPDIALECT_TD
