//===- MergeDuplicates.cpp - One op per identical computation -------------===//
//
// An exported step may compute the same value more than once: a decoder
// that builds its causal mask inside the attention builds it once per layer
// (ones, tril, bitwise_not). Each copy is one more tensor the planner keeps
// or recomputes; aot_autograd's CSE leaves torch's own partitioner one.
// This replaces a coop.compute or coop.view by an earlier identical one.
//
// Identical: same op, kernel, args, operands (SSA values, after their own
// producers were merged: one walk in program order collapses chains) and
// result types; costs may differ, the first op's are kept. Safe: merging
// makes the later op's readers read the earlier op's results, which is the
// same contents only if no op writes either one's storage (in place, or
// through a view) in between; so neither may ever be written. Random
// kernels draw a fresh mask each time, and a kernel that writes its
// operands is not a computation of its operands: neither is merged.
//
//===----------------------------------------------------------------------===//

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"
#include "coop/Transforms/Unplanned.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPMERGEDUPLICATES
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;

namespace {

StringAttr kernelOf(Operation *op) {
  if (auto compute = dyn_cast<ComputeOp>(op))
    return compute.getKernelAttr();
  return cast<ViewOp>(op).getKernelAttr();
}

DictionaryAttr argsOf(Operation *op) {
  if (auto compute = dyn_cast<ComputeOp>(op))
    return compute.getArgsAttr();
  return cast<ViewOp>(op).getArgsAttr();
}

/// Ops with the same kernel, args, operands and result types: what
/// "identical" means here, as a DenseSet key.
struct IdenticalOps : public llvm::DenseMapInfo<Operation *> {
  static unsigned getHashValue(const Operation *constOp) {
    auto *op = const_cast<Operation *>(constOp);
    return llvm::hash_combine(
        op->getName(), kernelOf(op), argsOf(op),
        llvm::hash_combine_range(op->operand_begin(), op->operand_end()),
        llvm::hash_combine_range(op->result_type_begin(),
                                 op->result_type_end()));
  }
  static bool isEqual(const Operation *constLhs, const Operation *constRhs) {
    if (constLhs == constRhs)
      return true;
    if (constLhs == getEmptyKey() || constLhs == getTombstoneKey() ||
        constRhs == getEmptyKey() || constRhs == getTombstoneKey())
      return false;
    auto *lhs = const_cast<Operation *>(constLhs);
    auto *rhs = const_cast<Operation *>(constRhs);
    return lhs->getName() == rhs->getName() && kernelOf(lhs) == kernelOf(rhs) &&
           argsOf(lhs) == argsOf(rhs) &&
           lhs->getOperands() == rhs->getOperands() &&
           lhs->getResultTypes() == rhs->getResultTypes();
  }
};

/// "aten.fill_.Scalar" -> "fill_": the kernel's name without namespace and
/// overload.
StringRef baseName(StringRef kernel) {
  auto [nameSpace, rest] = kernel.split('.');
  return rest.empty() ? nameSpace : rest.split('.').first;
}

/// Whether `op` computes its results from its operands alone, into fresh
/// storage that nothing ever writes: then every op identical to it computes
/// the same contents.
bool isMergeable(Operation *op) {
  if (!computesFreshResults(op))
    return false;
  // aten's name for a kernel that writes an operand, for steps that do not
  // say which one with `inplace`.
  if (auto compute = dyn_cast<ComputeOp>(op);
      compute && baseName(compute.getKernel()).ends_with("_"))
    return false;
  return llvm::none_of(op->getResults(), [](Value result) {
    return anyUseOfStorage(result, writesInPlace);
  });
}

bool returnsStorage(Value value) {
  return anyUseOfStorage(value, [](OpOperand &use) {
    return isa<func::ReturnOp>(use.getOwner());
  });
}

/// Whether merging `duplicate` into `first` would make one tensor two of
/// the step's outputs: they stay as distinct as the exporter wrote them.
bool wouldJoinOutputs(Operation *first, Operation *duplicate) {
  for (auto [kept, merged] :
       llvm::zip(first->getResults(), duplicate->getResults()))
    if (returnsStorage(kept) && returnsStorage(merged))
      return true;
  return false;
}

/// Replaces each mergeable op of `body` by the first op identical to it.
void mergeDuplicates(Block &body) {
  llvm::DenseSet<Operation *, IdenticalOps> firsts;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (!isMergeable(&op))
      continue;
    auto [first, inserted] = firsts.insert(&op);
    if (inserted || wouldJoinOutputs(*first, &op))
      continue;
    op.replaceAllUsesWith(*first);
    op.erase();
  }
}

struct CoopMergeDuplicatesPass
    : public mlir::coop::impl::CoopMergeDuplicatesBase<
          CoopMergeDuplicatesPass> {
  void runOnOperation() override {
    if (failed(transformUnplannedTrainingStep(getOperation(), getArgument(),
                                              mergeDuplicates)))
      signalPassFailure();
  }
};

} // namespace
