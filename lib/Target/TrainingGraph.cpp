//===- TrainingGraph.cpp - Import exported training graphs ----------------===//
//
// Every field of the file is checked before it is used: ids in range, each
// activation produced once and before it is read, in-place indices naming
// real operands, known dtypes and roles. A bad file gets one error naming
// the op or tensor at fault, never a crash.
//
//===----------------------------------------------------------------------===//

#include "coop/Target/TrainingGraph.h"
#include "coop/Target/ProtoConversions.h"

#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/ViewLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

#include "training_graph.pb.h"

#include <limits>

using namespace mlir;
using namespace mlir::coop;

namespace {

constexpr uint32_t kFormatVersion = 1;

/// Key, inside a compute op's `args`, of the dictionary that maps each
/// tensor argument's schema name to its operand index (an array for
/// Tensor[] arguments, `unit` for None entries).
constexpr llvm::StringLiteral kTensorArgsKey = "tensor_args";

class Importer {
public:
  Importer(const coop_pb::TrainingGraph &graph, StringRef sourceName,
           MLIRContext *context)
      : graph(graph), context(context), builder(context),
        fileLoc(FileLineColLoc::get(context, sourceName, 0, 0)) {}

  OwningOpRef<ModuleOp> run();

private:
  InFlightDiagnostic error() { return emitError(fileLoc); }
  Location locFor(const std::string &name) {
    return NameLoc::get(builder.getStringAttr(name), fileLoc);
  }
  FailureOr<RankedTensorType> tensorType(int64_t id);
  FailureOr<Role> roleOf(coop_pb::Role role, int64_t id);
  FailureOr<Value> operand(const coop_pb::Op &op, int64_t opIndex,
                           int64_t position);
  FailureOr<Attribute> convertValue(const coop_pb::Value &value,
                                    const coop_pb::Op &op, int64_t opIndex,
                                    bool &isTensor);
  FailureOr<DictionaryAttr> convertArgs(const coop_pb::Op &op,
                                        int64_t opIndex);
  LogicalResult importOp(const coop_pb::Op &op, int64_t opIndex);
  std::string describe(const coop_pb::Op &op, int64_t opIndex) {
    return "op #" + std::to_string(opIndex) + " '" + op.kernel() + "'";
  }

  const coop_pb::TrainingGraph &graph;
  MLIRContext *context;
  OpBuilder builder;
  Location fileLoc;
  /// The SSA value of each tensor id once it is defined.
  std::vector<Value> values;
};

} // namespace

FailureOr<RankedTensorType> Importer::tensorType(int64_t id) {
  const coop_pb::Tensor &tensor = graph.tensors(id);
  Type element = elementTypeFromProto(tensor.dtype(), builder);
  if (!element)
    return error() << "tensor #" << id << " '" << tensor.name()
                   << "' has unknown dtype " << static_cast<int>(tensor.dtype());
  SmallVector<int64_t> shape(tensor.shape().begin(), tensor.shape().end());
  for (int64_t dim : shape)
    if (dim < 0)
      return error() << "tensor #" << id << " '" << tensor.name()
                     << "' has negative dimension " << dim;
  auto type = RankedTensorType::get(shape, element);
  std::string why;
  FailureOr<int64_t> bytes = getTensorByteSize(type, &why);
  if (failed(bytes))
    return error() << "tensor #" << id << " '" << tensor.name() << "' has type "
                   << type << ", " << why;
  if (!tensor.initial_value().empty() &&
      static_cast<int64_t>(tensor.initial_value().size()) != *bytes)
    return error() << "tensor #" << id << " '" << tensor.name()
                   << "' has an initial value of "
                   << tensor.initial_value().size() << " bytes, but its type "
                   << type << " needs " << *bytes;
  return type;
}

FailureOr<Role> Importer::roleOf(coop_pb::Role role, int64_t id) {
  if (std::optional<Role> converted = roleFromProto(role))
    return *converted;
  return error() << "tensor #" << id << " '" << graph.tensors(id).name()
                 << "' has unknown role " << static_cast<int>(role);
}

FailureOr<Value> Importer::operand(const coop_pb::Op &op, int64_t opIndex,
                                   int64_t position) {
  uint32_t id = op.operands(position);
  if (id >= values.size())
    return error() << describe(op, opIndex) << ": operand #" << position
                   << " refers to tensor #" << id << ", but the graph has "
                   << values.size() << " tensors";
  if (!values[id])
    return error() << describe(op, opIndex) << ": operand #" << position
                   << " reads tensor #" << id << " '"
                   << graph.tensors(id).name()
                   << "' before any earlier op produces it";
  return values[id];
}

FailureOr<Attribute> Importer::convertValue(const coop_pb::Value &value,
                                            const coop_pb::Op &op,
                                            int64_t opIndex, bool &isTensor) {
  switch (value.kind_case()) {
  case coop_pb::Value::kNone:
    return Attribute(builder.getUnitAttr());
  case coop_pb::Value::kIntValue:
    return Attribute(builder.getI64IntegerAttr(value.int_value()));
  case coop_pb::Value::kFloatValue:
    return Attribute(builder.getF64FloatAttr(value.float_value()));
  case coop_pb::Value::kBoolValue:
    return Attribute(builder.getBoolAttr(value.bool_value()));
  case coop_pb::Value::kStringValue:
    return Attribute(builder.getStringAttr(value.string_value()));
  case coop_pb::Value::kOperand:
    if (value.operand() >= static_cast<uint32_t>(op.operands_size()))
      return error() << describe(op, opIndex) << ": an argument refers to "
                     << "operand #" << value.operand() << ", but the op has "
                     << op.operands_size() << " operands";
    isTensor = true;
    return Attribute(builder.getI64IntegerAttr(value.operand()));
  case coop_pb::Value::kList: {
    SmallVector<Attribute> items;
    for (const coop_pb::Value &item : value.list().items()) {
      FailureOr<Attribute> converted = convertValue(item, op, opIndex, isTensor);
      if (failed(converted))
        return failure();
      items.push_back(*converted);
    }
    return Attribute(builder.getArrayAttr(items));
  }
  case coop_pb::Value::KIND_NOT_SET:
    break;
  }
  return error() << describe(op, opIndex) << ": an argument has no value";
}

FailureOr<DictionaryAttr> Importer::convertArgs(const coop_pb::Op &op,
                                                int64_t opIndex) {
  NamedAttrList scalars, tensors;
  for (const coop_pb::Argument &arg : op.args()) {
    if (arg.name().empty() || arg.name() == kTensorArgsKey)
      return error() << describe(op, opIndex) << ": argument name '"
                     << arg.name() << "' is empty or reserved";
    bool isTensor = false;
    FailureOr<Attribute> value = convertValue(arg.value(), op, opIndex, isTensor);
    if (failed(value))
      return failure();
    NamedAttrList &target = isTensor ? tensors : scalars;
    if (target.get(arg.name()) || (isTensor ? scalars : tensors).get(arg.name()))
      return error() << describe(op, opIndex) << ": argument '" << arg.name()
                     << "' is given twice";
    target.append(arg.name(), *value);
  }
  if (!tensors.empty())
    scalars.append(kTensorArgsKey, tensors.getDictionary(context));
  return scalars.getDictionary(context);
}

LogicalResult Importer::importOp(const coop_pb::Op &op, int64_t opIndex) {
  if (op.kernel().empty())
    return error() << "op #" << opIndex << " has no kernel name";
  SmallVector<Value> operands;
  for (int64_t position = 0; position < op.operands_size(); ++position) {
    FailureOr<Value> value = operand(op, opIndex, position);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  SmallVector<Type> resultTypes;
  for (uint32_t id : op.results()) {
    if (id >= values.size())
      return error() << describe(op, opIndex) << ": a result refers to tensor #"
                     << id << ", but the graph has " << values.size()
                     << " tensors";
    const coop_pb::Tensor &tensor = graph.tensors(id);
    if (tensor.role() != coop_pb::ACTIVATION)
      return error() << describe(op, opIndex) << ": result tensor #" << id
                     << " '" << tensor.name()
                     << "' is a step argument; ops produce activations only";
    if (values[id])
      return error() << describe(op, opIndex) << ": result tensor #" << id
                     << " '" << tensor.name()
                     << "' is already produced by an earlier op";
    FailureOr<RankedTensorType> type = tensorType(id);
    if (failed(type))
      return failure();
    resultTypes.push_back(*type);
  }
  if (op.inplace_size() != 0 && op.inplace_size() != op.results_size())
    return error() << describe(op, opIndex) << ": 'inplace' has "
                   << op.inplace_size() << " entries for "
                   << op.results_size() << " results";
  for (int32_t target : op.inplace())
    if (target < -1 || target >= op.operands_size())
      return error() << describe(op, opIndex) << ": 'inplace' names operand #"
                     << target << ", but the op has " << op.operands_size()
                     << " operands";
  FailureOr<DictionaryAttr> args = convertArgs(op, opIndex);
  if (failed(args))
    return failure();
  DictionaryAttr argsAttr = args->empty() ? DictionaryAttr() : *args;

  Location loc = locFor(op.results_size() ? graph.tensors(op.results(0)).name()
                                          : op.kernel());
  Operation *created;
  if (op.kind() == coop_pb::Op::VIEW) {
    if (operands.size() != 1 || op.inplace_size() || op.has_rng())
      return error() << describe(op, opIndex)
                     << ": a view has exactly one operand, its source, and "
                        "neither 'inplace' nor 'rng'";
    // The generic builder keeps working as the ops gain optional attributes.
    auto view = builder.create<ViewOp>(loc, resultTypes, operands,
                                       ArrayRef<NamedAttribute>{});
    view.setKernel(op.kernel());
    if (argsAttr)
      view.setArgsAttr(argsAttr);
    created = view;
  } else if (op.kind() == coop_pb::Op::COMPUTE) {
    if (op.has_cost_us() && !(op.cost_us() >= 0))
      return error() << describe(op, opIndex) << ": cost_us " << op.cost_us()
                     << " is not a non-negative time";
    if (op.workspace_bytes() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return error() << describe(op, opIndex) << ": workspace_bytes overflows";
    auto compute = builder.create<ComputeOp>(loc, resultTypes, operands,
                                             ArrayRef<NamedAttribute>{});
    compute.setKernel(op.kernel());
    if (argsAttr)
      compute.setArgsAttr(argsAttr);
    if (op.has_cost_us())
      compute.setCostUsAttr(builder.getF64FloatAttr(op.cost_us()));
    if (op.workspace_bytes())
      compute.setWorkspaceBytes(static_cast<int64_t>(op.workspace_bytes()));
    if (op.inplace_size())
      compute.setInplace(
          SmallVector<int64_t>(op.inplace().begin(), op.inplace().end()));
    if (op.has_rng())
      compute.setRngAttr(
          RngAttr::get(context, op.rng().seed(), op.rng().offset()));
    created = compute;
  } else {
    return error() << describe(op, opIndex) << ": unknown op kind "
                   << static_cast<int>(op.kind());
  }
  for (auto [id, result] : llvm::zip(op.results(), created->getResults()))
    values[id] = result;
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  if (graph.format_version() != kFormatVersion) {
    error() << "not a coop training graph of format version " << kFormatVersion
            << " (the file says version " << graph.format_version()
            << "; an empty file says 0)";
    return nullptr;
  }
  if (graph.outputs().empty()) {
    error() << "the training graph has no outputs (a truncated file?); a step "
               "returns at least its loss";
    return nullptr;
  }
  context->loadDialect<CoopDialect, func::FuncDialect>();
  values.assign(graph.tensors_size(), Value());

  SmallVector<Type> argTypes;
  SmallVector<int64_t> argIds;
  SmallVector<Location> argLocs;
  SmallVector<Role> argRoles;
  for (int64_t id = 0; id < graph.tensors_size(); ++id) {
    const coop_pb::Tensor &tensor = graph.tensors(id);
    if (tensor.role() == coop_pb::ACTIVATION) {
      if (!tensor.initial_value().empty()) {
        error() << "tensor #" << id << " '" << tensor.name()
                << "' is an activation and cannot have an initial value";
        return nullptr;
      }
      continue;
    }
    FailureOr<RankedTensorType> type = tensorType(id);
    if (failed(type))
      return nullptr;
    FailureOr<Role> role = roleOf(tensor.role(), id);
    if (failed(role))
      return nullptr;
    argTypes.push_back(*type);
    argIds.push_back(id);
    argLocs.push_back(locFor(tensor.name()));
    argRoles.push_back(*role);
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  std::string name = graph.name().empty() ? "train_step" : graph.name();
  auto func = builder.create<func::FuncOp>(
      fileLoc, name, builder.getFunctionType(argTypes, {}));
  func->setAttr(CoopDialect::kStepAttrName, builder.getUnitAttr());
  Block *body = func.addEntryBlock();
  for (auto [index, id] : llvm::enumerate(argIds)) {
    BlockArgument arg = body->getArgument(index);
    arg.setLoc(argLocs[index]);
    func.setArgAttr(index, CoopDialect::kRoleAttrName,
                    RoleAttr::get(context, argRoles[index]));
    if (!graph.tensors(id).name().empty())
      func.setArgAttr(index, CoopDialect::kNameAttrName,
                      builder.getStringAttr(graph.tensors(id).name()));
    values[id] = arg;
  }

  builder.setInsertionPointToEnd(body);
  for (int64_t opIndex = 0; opIndex < graph.ops_size(); ++opIndex)
    if (failed(importOp(graph.ops(opIndex), opIndex)))
      return nullptr;

  SmallVector<Value> outputs;
  for (uint32_t id : graph.outputs()) {
    if (id >= values.size() || !values[id]) {
      error() << "step output tensor #" << id
              << " is not a tensor of the graph or is never produced";
      return nullptr;
    }
    outputs.push_back(values[id]);
  }
  builder.create<func::ReturnOp>(fileLoc, outputs);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(outputs).getTypes()));

  if (failed(verify(*module)))
    return nullptr;
  // torch's layouts allowed reshapes as views that coop's may not; then
  // results take over the buffers of operands that die with them.
  materializeUnviewableReshapes(func);
  reuseDyingBuffers(func);
  return module;
}

OwningOpRef<ModuleOp> mlir::coop::importTrainingGraph(StringRef bytes,
                                                      StringRef sourceName,
                                                      MLIRContext *context) {
  Location fileLoc = FileLineColLoc::get(context, sourceName, 0, 0);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    emitError(fileLoc) << "file of " << bytes.size()
                       << " bytes is larger than protobuf's 2 GiB limit";
    return nullptr;
  }
  coop_pb::TrainingGraph graph;
  if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(fileLoc) << "cannot parse a coop TrainingGraph protobuf from "
                       << bytes.size()
                       << " bytes: the file is truncated or not a training "
                          "graph";
    return nullptr;
  }
  return Importer(graph, sourceName, context).run();
}

void mlir::coop::registerImportTrainingGraphTranslation() {
  TranslateToMLIRRegistration registration(
      "import-training-graph",
      "Import a protobuf TrainingGraph written by python/coop_export",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importTrainingGraph(buffer->getBuffer(),
                                   buffer->getBufferIdentifier(), context);
      },
      [](DialectRegistry &registry) {
        registry.insert<CoopDialect, func::FuncDialect>();
      });
}
