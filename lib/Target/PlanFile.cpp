//===- PlanFile.cpp - coop_rt programs <-> protobuf Plan files ------------===//

#include "coop/Target/PlanFile.h"
#include "coop/Dialect/CoopRT/IR/CoopRT.h"
#include "coop/Target/ProtoConversions.h"

#include "PlanFileFormat.h"
#include "plan.pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::coop;

/// Where the importer keeps a kernel's tensor arguments in `args`.
static constexpr llvm::StringLiteral kTensorArgsName = "tensor_args";

/// What is wrong with a kernel or argument name as a Plan carries it (a
/// protobuf string must be UTF-8, an attribute name non-empty), or "".
static StringRef nameProblem(StringRef name) {
  if (name.empty())
    return "is empty";
  if (!llvm::json::isUTF8(name))
    return "is not valid UTF-8";
  return "";
}

/// Whether every string in `value` is UTF-8, as a protobuf string must be.
static bool stringsAreUTF8(const coop_pb::Value &value) {
  if (value.kind_case() == coop_pb::Value::kStringValue)
    return llvm::json::isUTF8(value.string_value());
  for (const coop_pb::Value &item : value.list().items())
    if (!stringsAreUTF8(item))
      return false;
  return true;
}

/// Checks a launch's argument names (its `args` and `tensor_args` together,
/// which the runtime reads as one map): each valid and used once.
/// `report(message)` returns the failure.
template <typename Names, typename Report>
static LogicalResult checkArgumentNames(const Names &names, Report report) {
  llvm::StringSet<> seen;
  for (StringRef name : names) {
    if (StringRef problem = nameProblem(name); !problem.empty())
      return report(("argument name '" + name + "' " + problem).str());
    if (name == kTensorArgsName)
      return report(
          ("argument name '" + name + "' is reserved for the tensor arguments")
              .str());
    if (!seen.insert(name).second)
      return report(("argument '" + name + "' is given twice").str());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Export
//===----------------------------------------------------------------------===//

namespace {

class PlanWriter {
public:
  explicit PlanWriter(coop_rt::ProgramOp program) : program(program) {}
  LogicalResult write(coop_pb::Plan *plan);

private:
  LogicalResult writeBuffer(Operation *op, coop_rt::BufferAttr buffer,
                            coop_pb::Buffer *out);
  LogicalResult writeBuffers(Operation *op, ArrayAttr buffers,
                             google::protobuf::RepeatedPtrField<coop_pb::Buffer> *out);
  LogicalResult writeLaunch(coop_rt::LaunchOp launch, coop_pb::Launch *out);
  LogicalResult writeTensorArgument(coop_rt::LaunchOp launch,
                                    NamedAttribute arg, coop_pb::Argument *out);

  coop_rt::ProgramOp program;
};

LogicalResult PlanWriter::writeBuffer(Operation *op, coop_rt::BufferAttr buffer,
                                      coop_pb::Buffer *out) {
  coop_pb::DType dtype = protoFromElementType(buffer.getElementType());
  if (dtype == coop_pb::DTYPE_UNSPECIFIED)
    return op->emitError() << "element type " << buffer.getElementType()
                           << " has no Plan dtype";
  out->set_offset(buffer.getOffset());
  out->set_size(buffer.getSize());
  out->set_dtype(dtype);
  for (int64_t dim : buffer.getShape().asArrayRef())
    out->add_shape(dim);
  for (int64_t stride : buffer.getStrides().asArrayRef())
    out->add_strides(stride);
  out->set_element_offset(buffer.getElementOffset());
  return success();
}

LogicalResult PlanWriter::writeBuffers(
    Operation *op, ArrayAttr buffers,
    google::protobuf::RepeatedPtrField<coop_pb::Buffer> *out) {
  for (Attribute buffer : buffers)
    if (failed(writeBuffer(op, cast<coop_rt::BufferAttr>(buffer), out->Add())))
      return failure();
  return success();
}

/// An operand index, `unit` for None, or a list of them.
static LogicalResult writeOperandRef(Attribute attr, coop_pb::Value *value) {
  if (auto index = dyn_cast<IntegerAttr>(attr)) {
    value->set_operand(static_cast<uint32_t>(index.getInt()));
    return success();
  }
  if (isa<UnitAttr>(attr)) {
    value->set_none(true);
    return success();
  }
  auto list = dyn_cast<ArrayAttr>(attr);
  if (!list)
    return failure();
  coop_pb::ValueList *items = value->mutable_list();
  for (Attribute item : list)
    if (failed(writeOperandRef(item, items->add_items())))
      return failure();
  return success();
}

LogicalResult PlanWriter::writeTensorArgument(coop_rt::LaunchOp launch,
                                              NamedAttribute arg,
                                              coop_pb::Argument *out) {
  out->set_name(arg.getName().str());
  if (failed(writeOperandRef(arg.getValue(), out->mutable_value())))
    return launch.emitError() << "tensor argument '"
                              << arg.getName().getValue()
                              << "' is not an operand index, none or a list "
                                 "of them: "
                              << arg.getValue();
  return success();
}

LogicalResult PlanWriter::writeLaunch(coop_rt::LaunchOp launch,
                                      coop_pb::Launch *out) {
  if (StringRef problem = nameProblem(launch.getKernel()); !problem.empty())
    return launch.emitError() << "kernel name " << problem;
  out->set_kernel(launch.getKernel().str());
  if (failed(writeBuffers(launch, launch.getInputs(), out->mutable_inputs())) ||
      failed(writeBuffers(launch, launch.getOutputs(), out->mutable_outputs())))
    return failure();
  if (DictionaryAttr args = launch.getArgsAttr())
    for (NamedAttribute arg : args) {
      // The importer nests the tensor arguments' operand indices.
      auto tensorArgs = dyn_cast<DictionaryAttr>(arg.getValue());
      if (tensorArgs && arg.getName() == kTensorArgsName) {
        for (NamedAttribute tensorArg : tensorArgs)
          if (failed(writeTensorArgument(launch, tensorArg,
                                         out->add_tensor_args())))
            return failure();
        continue;
      }
      coop_pb::Argument *converted = out->add_args();
      converted->set_name(arg.getName().str());
      if (failed(protoFromAttribute(arg.getValue(),
                                    converted->mutable_value())))
        return launch.emitError() << "argument '" << arg.getName().getValue()
                                  << "' has no Plan form: " << arg.getValue();
      if (!stringsAreUTF8(converted->value()))
        return launch.emitError() << "argument '" << arg.getName().getValue()
                                  << "' holds a string that is not valid UTF-8";
    }
  SmallVector<StringRef> names;
  for (const coop_pb::Argument &arg : out->args())
    names.push_back(arg.name());
  for (const coop_pb::Argument &arg : out->tensor_args())
    names.push_back(arg.name());
  if (failed(checkArgumentNames(names, [&](const std::string &message) {
        return launch.emitError() << message;
      })))
    return failure();
  if (std::optional<ArrayRef<int64_t>> inplace = launch.getInplace())
    for (int64_t input : *inplace)
      out->add_inplace(static_cast<int32_t>(input));
  if (std::optional<RngAttr> rng = launch.getRng()) {
    out->mutable_rng()->set_seed(rng->getSeed());
    out->mutable_rng()->set_offset(rng->getOffset());
  }
  if (coop_rt::BufferAttr workspace = launch.getWorkspaceAttr())
    if (failed(writeBuffer(launch, workspace, out->mutable_workspace())))
      return failure();
  if (std::optional<int64_t> original = launch.getRecomputeOf())
    out->set_recompute_of(*original);
  if (FloatAttr cost = launch.getCostUsAttr())
    out->set_cost_us(cost.getValueAsDouble());
  return success();
}

LogicalResult PlanWriter::write(coop_pb::Plan *plan) {
  if (!llvm::json::isUTF8(program.getSymName()))
    return program.emitError("program name is not valid UTF-8");
  plan->set_format_version(::coop::planfile::kFormatVersion);
  plan->set_name(program.getSymName().str());
  plan->set_arena_bytes(program.getArenaBytes());
  if (DictionaryAttr summary = program.getPlanAttr())
    for (NamedAttribute field : summary) {
      coop_pb::Value value;
      if (failed(protoFromAttribute(field.getValue(), &value)) ||
          !stringsAreUTF8(value) || !llvm::json::isUTF8(field.getName()))
        return program.emitError()
               << "plan summary field '" << field.getName().getValue()
               << "' has no Plan form (or is not UTF-8)";
      (*plan->mutable_summary())[field.getName().str()] = value;
    }
  for (Operation &op : program.getBody().front()) {
    LogicalResult written = success();
    if (auto argument = dyn_cast<coop_rt::ArgumentOp>(op)) {
      if (!llvm::json::isUTF8(argument.getName()))
        return argument.emitError("argument name is not valid UTF-8");
      coop_pb::PlanArgument *out = plan->add_arguments();
      out->set_index(static_cast<uint32_t>(argument.getIndex()));
      out->set_name(argument.getName().str());
      out->set_role(protoFromRole(argument.getRole()));
      written = writeBuffer(argument, argument.getBuffer(),
                            out->mutable_buffer());
    } else if (auto launch = dyn_cast<coop_rt::LaunchOp>(op)) {
      written = writeLaunch(launch, plan->add_launches());
    } else if (auto output = dyn_cast<coop_rt::OutputOp>(op)) {
      written = writeBuffers(output, output.getBuffers(),
                             plan->mutable_outputs());
    }
    if (failed(written))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult mlir::coop::exportPlan(ModuleOp module, raw_ostream &output) {
  auto programs = module.getOps<coop_rt::ProgramOp>();
  if (programs.empty())
    return module.emitError("no coop_rt.program to write; lower a planned "
                            "step with --coop-lower-to-runtime first");
  if (std::next(programs.begin()) != programs.end())
    return module.emitError("a Plan file holds one program; the module has "
                            "several");
  coop_pb::Plan plan;
  if (failed(PlanWriter(*programs.begin()).write(&plan)))
    return failure();
  std::string bytes;
  if (!::coop::planfile::write(plan, bytes))
    return module.emitError("cannot serialize the plan (over 2 GiB)");
  // Read back what was written: a file the reader refuses (a string that
  // is not UTF-8, an inconsistent launch) is an error here, not later.
  std::string problem;
  {
    ScopedDiagnosticHandler keep(module.getContext(), [&](Diagnostic &d) {
      if (problem.empty())
        problem = d.str();
      return success();
    });
    if (importPlan(bytes, "<written plan>", module.getContext()))
      problem.clear();
    else if (problem.empty())
      problem = "unreadable";
  }
  if (!problem.empty())
    return module.emitError("the Plan written would not read back: ")
           << problem;
  output << bytes;
  return success();
}

//===----------------------------------------------------------------------===//
// Import
//===----------------------------------------------------------------------===//

namespace {

class PlanReader {
public:
  PlanReader(const coop_pb::Plan &plan, Location loc, MLIRContext *context)
      : plan(plan), loc(loc), builder(context) {}
  OwningOpRef<ModuleOp> read();

private:
  InFlightDiagnostic error() { return emitError(loc) << "invalid Plan: "; }
  FailureOr<coop_rt::BufferAttr> readBuffer(const coop_pb::Buffer &buffer,
                                            const Twine &what);
  FailureOr<ArrayAttr>
  readBuffers(const google::protobuf::RepeatedPtrField<coop_pb::Buffer> &buffers,
              const Twine &what);
  LogicalResult readLaunch(const coop_pb::Launch &launch, size_t index);

  const coop_pb::Plan &plan;
  Location loc;
  OpBuilder builder;
};

FailureOr<coop_rt::BufferAttr>
PlanReader::readBuffer(const coop_pb::Buffer &buffer, const Twine &what) {
  Type element = elementTypeFromProto(buffer.dtype(), builder);
  if (!element)
    return error() << what << " has unknown dtype "
                   << static_cast<int>(buffer.dtype());
  SmallVector<int64_t> shape(buffer.shape().begin(), buffer.shape().end());
  SmallVector<int64_t> strides(buffer.strides().begin(),
                               buffer.strides().end());
  // Checked here, not by the attribute's own verifier, so that the message
  // names the buffer's place in the file.
  auto emitBufferError = [&]() { return error() << what << ": "; };
  if (failed(coop_rt::BufferAttr::verify(
          emitBufferError, buffer.offset(), buffer.size(), element,
          builder.getDenseI64ArrayAttr(shape),
          builder.getDenseI64ArrayAttr(strides), buffer.element_offset())))
    return failure();
  return coop_rt::BufferAttr::get(builder.getContext(), buffer.offset(),
                                  buffer.size(), element,
                                  builder.getDenseI64ArrayAttr(shape),
                                  builder.getDenseI64ArrayAttr(strides),
                                  buffer.element_offset());
}

FailureOr<ArrayAttr> PlanReader::readBuffers(
    const google::protobuf::RepeatedPtrField<coop_pb::Buffer> &buffers,
    const Twine &what) {
  SmallVector<Attribute> attrs;
  for (int i = 0; i < buffers.size(); ++i) {
    FailureOr<coop_rt::BufferAttr> buffer =
        readBuffer(buffers[i], what + " #" + Twine(i));
    if (failed(buffer))
      return failure();
    attrs.push_back(*buffer);
  }
  return builder.getArrayAttr(attrs);
}

LogicalResult PlanReader::readLaunch(const coop_pb::Launch &launch,
                                     size_t index) {
  std::string where = "launch #" + std::to_string(index) + " '" +
                      launch.kernel() + "'";
  if (launch.kernel().empty())
    return error() << "launch #" << index << " has no kernel name";
  SmallVector<StringRef> names;
  for (const coop_pb::Argument &arg : launch.args())
    names.push_back(arg.name());
  for (const coop_pb::Argument &arg : launch.tensor_args())
    names.push_back(arg.name());
  if (failed(checkArgumentNames(names, [&](const std::string &message) {
        return error() << where << " " << message;
      })))
    return failure();
  FailureOr<ArrayAttr> inputs = readBuffers(launch.inputs(), where + " input");
  if (failed(inputs))
    return failure();
  FailureOr<ArrayAttr> outputs =
      readBuffers(launch.outputs(), where + " output");
  if (failed(outputs))
    return failure();
  auto readArguments =
      [&](const google::protobuf::RepeatedPtrField<coop_pb::Argument> &in,
          SmallVectorImpl<NamedAttribute> &fields) -> LogicalResult {
    for (const coop_pb::Argument &arg : in) {
      Attribute value = attributeFromProto(arg.value(), builder);
      if (!value)
        return error() << where << " argument '" << arg.name()
                       << "' has no value";
      fields.push_back(builder.getNamedAttr(arg.name(), value));
    }
    return success();
  };
  SmallVector<NamedAttribute> fields;
  if (failed(readArguments(launch.args(), fields)))
    return failure();
  if (!launch.tensor_args().empty()) {
    SmallVector<NamedAttribute> tensorFields;
    if (failed(readArguments(launch.tensor_args(), tensorFields)))
      return failure();
    fields.push_back(builder.getNamedAttr(
        kTensorArgsName, builder.getDictionaryAttr(tensorFields)));
  }
  DictionaryAttr args;
  if (!fields.empty())
    args = builder.getDictionaryAttr(fields);
  DenseI64ArrayAttr inplace;
  if (!launch.inplace().empty()) {
    if (launch.inplace_size() != launch.outputs_size())
      return error() << where << " has " << launch.inplace_size()
                     << " in-place entries for " << launch.outputs_size()
                     << " outputs";
    SmallVector<int64_t> entries;
    for (int32_t input : launch.inplace()) {
      if (input < -1 || input >= launch.inputs_size())
        return error() << where << " overwrites input #" << input
                       << ", which does not exist";
      entries.push_back(input);
    }
    inplace = builder.getDenseI64ArrayAttr(entries);
  }
  RngAttr rng;
  if (launch.has_rng())
    rng = RngAttr::get(builder.getContext(), launch.rng().seed(),
                       launch.rng().offset());
  coop_rt::BufferAttr workspace;
  if (launch.has_workspace()) {
    FailureOr<coop_rt::BufferAttr> read =
        readBuffer(launch.workspace(), where + " workspace");
    if (failed(read))
      return failure();
    workspace = *read;
  }
  IntegerAttr recomputeOf;
  if (launch.has_recompute_of())
    recomputeOf = builder.getI64IntegerAttr(launch.recompute_of());
  FloatAttr cost;
  if (launch.has_cost_us())
    cost = builder.getF64FloatAttr(launch.cost_us());
  builder.create<coop_rt::LaunchOp>(
      loc, builder.getStringAttr(launch.kernel()), *inputs, *outputs, args,
      inplace, rng, workspace, recomputeOf, cost);
  return success();
}

OwningOpRef<ModuleOp> PlanReader::read() {
  if (plan.name().empty() || plan.arena_bytes() <= 0) {
    error() << "needs a name and a positive arena size";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  DictionaryAttr summary;
  if (!plan.summary().empty()) {
    // Protobuf maps are unordered; a dictionary sorts its fields.
    SmallVector<NamedAttribute> fields;
    for (const auto &[name, value] : plan.summary()) {
      Attribute converted = attributeFromProto(value, builder);
      if (!converted) {
        error() << "summary field '" << name << "' has no value";
        return nullptr;
      }
      fields.push_back(builder.getNamedAttr(name, converted));
    }
    summary = builder.getDictionaryAttr(fields);
  }
  auto program = builder.create<coop_rt::ProgramOp>(
      loc, builder.getStringAttr(plan.name()),
      builder.getI64IntegerAttr(plan.arena_bytes()), summary);
  builder.setInsertionPointToStart(&program.getBody().emplaceBlock());

  for (int i = 0; i < plan.arguments_size(); ++i) {
    const coop_pb::PlanArgument &argument = plan.arguments(i);
    std::optional<Role> role = roleFromProto(argument.role());
    if (!role) {
      error() << "argument #" << i << " '" << argument.name()
              << "' has unknown role " << static_cast<int>(argument.role());
      return nullptr;
    }
    FailureOr<coop_rt::BufferAttr> buffer = readBuffer(
        argument.buffer(), "argument #" + Twine(i) + " '" + argument.name() +
                               "'");
    if (failed(buffer))
      return nullptr;
    builder.create<coop_rt::ArgumentOp>(
        loc, builder.getI64IntegerAttr(argument.index()),
        builder.getStringAttr(argument.name()),
        RoleAttr::get(builder.getContext(), *role), *buffer);
  }
  for (int i = 0; i < plan.launches_size(); ++i)
    if (failed(readLaunch(plan.launches(i), i)))
      return nullptr;
  FailureOr<ArrayAttr> outputs = readBuffers(plan.outputs(), "output");
  if (failed(outputs))
    return nullptr;
  builder.create<coop_rt::OutputOp>(loc, *outputs);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> mlir::coop::importPlan(StringRef bytes,
                                             StringRef sourceName,
                                             MLIRContext *context) {
  context->loadDialect<CoopDialect, coop_rt::CoopRTDialect>();
  Location loc = FileLineColLoc::get(context, sourceName, 0, 0);
  coop_pb::Plan plan;
  std::string problem = ::coop::planfile::read(bytes, plan);
  if (!problem.empty()) {
    emitError(loc) << "invalid Plan: " << problem;
    return nullptr;
  }
  return PlanReader(plan, loc, context).read();
}

void mlir::coop::registerPlanTranslations() {
  TranslateFromMLIRRegistration exportRegistration(
      "coop-rt-to-plan", "Write a coop_rt program as a protobuf Plan file",
      [](Operation *op, raw_ostream &output) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        return exportPlan(module, output);
      },
      [](DialectRegistry &registry) {
        registry.insert<CoopDialect, coop_rt::CoopRTDialect,
                        func::FuncDialect>();
      });
  TranslateToMLIRRegistration importRegistration(
      "plan-to-coop-rt", "Read a protobuf Plan file as a coop_rt program",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        OwningOpRef<ModuleOp> module = importPlan(
            buffer->getBuffer(), buffer->getBufferIdentifier(), context);
        if (!module)
          return module;
        // Read back what will be printed: IR that does not parse is an
        // error here, not in the next tool.
        std::string text;
        llvm::raw_string_ostream stream(text);
        module->print(stream);
        if (!parseSourceString<ModuleOp>(text, ParserConfig(context))) {
          emitError(module->getLoc())
              << "invalid Plan: the program read from it does not parse back";
          return OwningOpRef<ModuleOp>();
        }
        return module;
      });
}
