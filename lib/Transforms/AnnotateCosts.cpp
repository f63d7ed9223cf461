//===- AnnotateCosts.cpp - Fill in kernel costs from the cost model -------===//

#include "coop/CostModel/CostModel.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::coop {
#define GEN_PASS_DEF_COOPANNOTATECOSTS
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;
namespace cost = ::coop::cost;

namespace {

cost::TensorShape shapeOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::string element;
  llvm::raw_string_ostream os(element);
  tensor.getElementType().print(os);
  // The step verifier guarantees a fixed byte width.
  int64_t elementBytes = *getElementByteSize(tensor.getElementType());
  return {std::vector<int64_t>(tensor.getShape().begin(),
                               tensor.getShape().end()),
          element, elementBytes};
}

cost::KernelCall callOf(ComputeOp op) {
  cost::KernelCall call;
  call.kernel = op.getKernel().str();
  for (Type type : op->getOperandTypes())
    call.operands.push_back(shapeOf(type));
  for (Type type : op->getResultTypes())
    call.results.push_back(shapeOf(type));
  if (DictionaryAttr args = op.getArgsAttr())
    if (auto transposed = args.getAs<BoolAttr>("transposed"))
      call.transposed = transposed.getValue();
  return call;
}

struct CoopAnnotateCostsPass
    : public mlir::coop::impl::CoopAnnotateCostsBase<CoopAnnotateCostsPass> {
  using CoopAnnotateCostsBase::CoopAnnotateCostsBase;

  LogicalResult initialize(MLIRContext *context) override {
    std::optional<cost::Device> found = cost::lookupDevice(device);
    if (!found)
      return emitError(UnknownLoc::get(context))
             << "coop-annotate-costs: unknown device '" << device
             << "'; expected one of " << cost::deviceNames();
    cost::ProfileTable table;
    if (!profile.empty()) {
      std::string error;
      std::unique_ptr<llvm::MemoryBuffer> file =
          openInputFile(profile, &error);
      if (!file)
        return emitError(UnknownLoc::get(context))
               << "coop-annotate-costs: cannot read profile: " << error;
      if (!table.parse(file->getBuffer(), error))
        return emitError(FileLineColLoc::get(context, profile, 0, 0))
               << "coop-annotate-costs: bad profile table, " << error;
    }
    model = std::make_shared<cost::CostModel>(*found, std::move(table));
    return success();
  }

  void runOnOperation() override {
    Builder builder(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isTrainingStep(func))
        continue;
      // Where every op's cost came from, added to what an earlier run
      // recorded (a run with a profile, then coop-compile's own).
      auto recorded = func->getAttrOfType<DictionaryAttr>(CoopDialect::kCostsAttrName);
      auto countOf = [&](StringRef source) -> int64_t {
        IntegerAttr count = recorded ? recorded.getAs<IntegerAttr>(source) : nullptr;
        return count ? count.getInt() : 0;
      };
      int64_t fromProfile = 0, fromRoofline = 0, given = 0;
      func.walk([&](ComputeOp op) {
        if (op.getCostUsAttr()) {
          ++given;
          return;
        }
        cost::Cost estimate = model->estimate(callOf(op));
        ++(estimate.fromProfile ? fromProfile : fromRoofline);
        op.setCostUsAttr(builder.getF64FloatAttr(estimate.microseconds));
      });
      if (recorded && fromProfile + fromRoofline == 0)
        continue; // an earlier run costed every op
      SmallVector<NamedAttribute> fields = {
          builder.getNamedAttr("profile", builder.getI64IntegerAttr(
                                              countOf("profile") + fromProfile)),
          builder.getNamedAttr("roofline", builder.getI64IntegerAttr(
                                               countOf("roofline") + fromRoofline)),
          // Ops an earlier run costed are not given in the input.
          builder.getNamedAttr(
              "given", builder.getI64IntegerAttr(
                           recorded ? countOf("given") : given)),
          builder.getNamedAttr("device", builder.getStringAttr(device))};
      if (!profile.empty())
        fields.push_back(builder.getNamedAttr("profile_table", builder.getStringAttr(profile)));
      func->setAttr(CoopDialect::kCostsAttrName, builder.getDictionaryAttr(fields));
    }
  }

  std::shared_ptr<cost::CostModel> model;
};

} // namespace
