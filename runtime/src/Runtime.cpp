//===- Runtime.cpp - The C API: plans, sessions, steps --------------------===//

#include "coop/runtime.h"

#include "Backend.h"
#include "Kernel.h"
#include "PlanFileFormat.h"
#include "PlanVerifier.h"
#include "Random.h"

#include "training_graph.pb.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <unordered_map>

using namespace coop::rt;

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

struct coop_status_s {
  coop_status_code_t code;
  std::string message;
};

namespace {

coop_status_t makeStatus(coop_status_code_t code, std::string message) {
  return new (std::nothrow) coop_status_s{code, std::move(message)};
}

/// Builds a message with operator<< and converts to a status.
class Error {
public:
  explicit Error(coop_status_code_t code) : code(code) {}
  template <typename T> Error &operator<<(const T &value) {
    stream << value;
    return *this;
  }
  operator coop_status_t() { return makeStatus(code, stream.str()); }

private:
  coop_status_code_t code;
  std::ostringstream stream;
};

/// Runs `body`, turning an escaping exception (bad_alloc from protobuf or a
/// container) into a status: nothing is thrown across the C API.
template <typename Body> coop_status_t guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return makeStatus(COOP_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception &e) {
    return makeStatus(COOP_STATUS_INTERNAL, e.what());
  }
}

} // namespace

extern "C" coop_status_code_t coop_status_code(coop_status_t status) {
  return status ? status->code : COOP_STATUS_OK;
}
extern "C" const char *coop_status_message(coop_status_t status) {
  return status ? status->message.c_str() : "OK";
}
extern "C" void coop_status_free(coop_status_t status) { delete status; }

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

namespace {

struct LaunchInfo {
  const KernelDef *kernel = nullptr;
  std::vector<BufferDesc> inputs, outputs;
  std::vector<int> inplace; // per output: -1 or the input it overwrites
  std::vector<int> params;  // schema tensor parameter -> input
  ArgMap args;
  uint64_t rngSeed = 0, rngOffset = 0;
  std::string signature; // operand signatures as the cost model keys them
};

struct ArgumentInfo {
  std::string name;
  BufferDesc buffer;
  coop_tensor_info_t info{};
};

} // namespace

struct coop_plan_s {
  coop_pb::Plan proto;
  std::vector<ArgumentInfo> arguments;
  std::vector<BufferDesc> outputs;
  std::vector<coop_tensor_info_t> outputInfo;
  std::vector<LaunchInfo> launches;
  std::unordered_map<std::string, size_t> argumentByName;
  int64_t highWaterMark = 0;
  /// The counters one step's random kernels span (see Random.h): step s
  /// draws from counter offset + s * rngSpan on.
  uint64_t rngSpan = 0;
};

namespace {

/// One buffer as kernels see it; verifyPlan has checked it against the
/// arena and its storage.
BufferDesc readBuffer(const coop_pb::Buffer &buffer, int64_t &highWaterMark) {
  BufferDesc out;
  Tensor &t = out.layout;
  t.dtype = buffer.dtype();
  t.rank = buffer.shape_size();
  for (int d = 0; d < t.rank; ++d) {
    t.shape[d] = buffer.shape(d);
    t.strides[d] = buffer.strides(d);
  }
  out.offset = buffer.offset();
  out.size = buffer.size();
  out.elementByteOffset = buffer.element_offset() * elementSize(t.dtype);
  highWaterMark = std::max(highWaterMark, buffer.offset() + buffer.size());
  return out;
}

bool isContiguous(const BufferDesc &buffer) {
  return buffer.elementByteOffset == 0 && buffer.layout.contiguous();
}

/// The same elements of the arena (offset, element offset and strides).
bool sameView(const BufferDesc &a, const BufferDesc &b) {
  return a.offset == b.offset && a.elementByteOffset == b.elementByteOffset &&
         std::equal(a.layout.strides, a.layout.strides + a.layout.rank, b.layout.strides);
}

coop_tensor_info_t infoOf(const BufferDesc &buffer) {
  coop_tensor_info_t info{};
  info.dtype = static_cast<coop_dtype_t>(buffer.layout.dtype);
  info.rank = buffer.layout.rank;
  for (int d = 0; d < info.rank; ++d)
    info.shape[d] = buffer.layout.shape[d];
  info.byte_size = static_cast<size_t>(buffer.layout.numel() *
                                       elementSize(buffer.layout.dtype));
  return info;
}

bool isOperandValue(const coop_pb::Value &value) {
  if (value.kind_case() == coop_pb::Value::kOperand)
    return true;
  if (value.kind_case() != coop_pb::Value::kList || value.list().items_size() == 0)
    return false;
  for (const coop_pb::Value &item : value.list().items())
    if (item.kind_case() != coop_pb::Value::kOperand &&
        item.kind_case() != coop_pb::Value::kNone)
      return false;
  return true;
}

bool isListParam(const std::string &name) {
  return name.size() > 2 && name.compare(name.size() - 2, 2, "[]") == 0;
}

/// Maps the kernel's schema tensor parameters to inputs: by name where the
/// plan gives tensor arguments as operand indices, else positionally in
/// schema order (a parameter whose argument is None or a scalar takes no
/// input; an optional one not mentioned takes one only if inputs remain
/// beyond the required ones).
std::string resolveParams(const KernelDef &kernel, LaunchInfo &launch) {
  int numInputs = static_cast<int>(launch.inputs.size());
  launch.params.assign(kernel.params.size(), -1);
  bool named = false;
  for (const auto &[name, value] : launch.args)
    named |= isOperandValue(value);
  std::vector<bool> used(numInputs, false);
  if (named) {
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      std::string name = kernel.params[p];
      if (isListParam(name)) {
        // A Tensor[] parameter (cat's `tensors`): a list of operand
        // indices that the kernel reads from its arguments.
        auto it = launch.args.find(name.substr(0, name.size() - 2));
        if (it == launch.args.end() || !isOperandValue(it->second))
          return "tensor list argument '" + name + "' is missing";
        for (const coop_pb::Value &item : it->second.list().items()) {
          if (item.kind_case() != coop_pb::Value::kOperand ||
              static_cast<int64_t>(item.operand()) >= numInputs)
            return "tensor list argument '" + name + "' names an operand outside the " +
                   std::to_string(numInputs) + " inputs";
          used[item.operand()] = true;
        }
        continue;
      }
      if (!name.empty() && name.back() == '?')
        name.pop_back();
      auto it = launch.args.find(name);
      if (it == launch.args.end() || it->second.kind_case() != coop_pb::Value::kOperand)
        continue;
      int64_t operand = it->second.operand();
      if (operand >= numInputs)
        return "tensor argument '" + name + "' is operand #" +
               std::to_string(operand) + " of " + std::to_string(numInputs);
      launch.params[p] = static_cast<int>(operand);
      used[operand] = true;
    }
  } else {
    int required = 0;
    std::vector<int> state(kernel.params.size()); // 0 none, 1 required, 2 maybe
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      std::string name = kernel.params[p];
      if (isListParam(name))
        continue; // state 0: takes what the others leave (below)
      bool optional = !name.empty() && name.back() == '?';
      if (optional)
        name.pop_back();
      auto it = launch.args.find(name);
      if (it != launch.args.end())
        state[p] = 0; // None, or a scalar in place of a tensor
      else
        state[p] = optional ? 2 : 1;
      required += state[p] == 1;
    }
    int spare = numInputs - required, next = 0;
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      if (isListParam(kernel.params[p])) {
        // Positional operands: a Tensor[] parameter takes every remaining
        // input (the kernel then reads all of them in order).
        for (; next < numInputs; ++next)
          used[next] = true;
        continue;
      }
      if (state[p] == 0 || (state[p] == 2 && spare-- <= 0))
        continue;
      if (next >= numInputs)
        return "has " + std::to_string(numInputs) +
               " inputs; tensor argument '" + kernel.params[p] + "' has none";
      used[next] = true;
      launch.params[p] = next++;
    }
  }
  for (int i = 0; i < numInputs; ++i)
    if (!used[i])
      return "input #" + std::to_string(i) +
             " matches no tensor argument of the kernel";
  return "";
}

/// The element type as MLIR prints it (the cost model's profile tables).
const char *mlirElementType(coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: return "f32";
  case coop_pb::FLOAT16: return "f16";
  case coop_pb::BFLOAT16: return "bf16";
  case coop_pb::FLOAT64: return "f64";
  case coop_pb::INT64: return "i64";
  case coop_pb::INT32: return "i32";
  case coop_pb::INT16: return "i16";
  case coop_pb::INT8: return "i8";
  case coop_pb::UINT8: return "ui8";
  case coop_pb::BOOL: return "i1";
  case coop_pb::COMPLEX64: return "complex<f32>";
  default: return "?";
  }
}

/// The counters a random launch draws: one per element of its largest
/// output (dropout's output and mask, bernoulli's output).
uint64_t drawCount(const LaunchInfo &launch) {
  int64_t count = 0;
  for (const BufferDesc &out : launch.outputs)
    count = std::max(count, out.layout.numel());
  return static_cast<uint64_t>(count);
}

/// "512x256xf32,256x128xf32" (`-` without inputs): the operand signatures
/// of docs/cost-model.md, keyed like coop::cost::ProfileTable::lookup.
std::string operandSignature(const std::vector<BufferDesc> &inputs) {
  if (inputs.empty())
    return "-";
  std::string text;
  for (const BufferDesc &input : inputs) {
    if (!text.empty())
      text += ',';
    for (int d = 0; d < input.layout.rank; ++d)
      text += std::to_string(input.layout.shape[d]) + "x";
    text += mlirElementType(input.layout.dtype);
  }
  return text;
}

coop_status_t loadPlan(const std::string &bytes, coop_plan_t **outPlan) {
  auto plan = std::make_unique<coop_plan_s>();
  coop_pb::Plan &proto = plan->proto;
  std::string problem = coop::planfile::read(bytes, proto);
  if (problem.empty())
    problem = verifyPlan(proto);
  if (!problem.empty())
    return Error(COOP_STATUS_INVALID_PLAN) << "invalid Plan: " << problem;
  int64_t &hwm = plan->highWaterMark;
  for (int i = 0; i < proto.arguments_size(); ++i) {
    const coop_pb::PlanArgument &arg = proto.arguments(i);
    ArgumentInfo info;
    info.name = arg.name().empty() ? "arg" + std::to_string(arg.index()) : arg.name();
    std::string where = "argument #" + std::to_string(i) + " '" + info.name + "'";
    if (arg.role() < coop_pb::PARAMETER || arg.role() > coop_pb::INPUT)
      return Error(COOP_STATUS_INVALID_PLAN) << "invalid Plan: " << where
                                             << " has unknown role " << arg.role();
    info.buffer = readBuffer(arg.buffer(), hwm);
    if (!isContiguous(info.buffer))
      return Error(COOP_STATUS_INVALID_PLAN) << "invalid Plan: " << where << " is not contiguous";
    if (!plan->argumentByName.emplace(info.name, plan->arguments.size()).second)
      return Error(COOP_STATUS_INVALID_PLAN)
             << "invalid Plan: " << where << ": the name is used twice";
    info.info = infoOf(info.buffer);
    info.info.role = static_cast<coop_role_t>(arg.role());
    plan->arguments.push_back(std::move(info));
  }
  for (size_t i = 0; i < plan->arguments.size(); ++i)
    plan->arguments[i].info.name = plan->arguments[i].name.c_str();

  for (int i = 0; i < proto.outputs_size(); ++i) {
    BufferDesc out = readBuffer(proto.outputs(i), hwm);
    if (!isContiguous(out))
      return Error(COOP_STATUS_INVALID_PLAN)
             << "invalid Plan: output #" << i << " is not contiguous";
    plan->outputs.push_back(out);
    coop_tensor_info_t info = infoOf(out);
    info.name = "";
    plan->outputInfo.push_back(info);
  }

  std::vector<std::string> missing;
  for (int l = 0; l < proto.launches_size(); ++l) {
    const coop_pb::Launch &src = proto.launches(l);
    std::string where = "invalid Plan: launch #" + std::to_string(l) + " '" + src.kernel() + "'";
    LaunchInfo launch;
    launch.kernel = findKernel(src.kernel());
    if (!launch.kernel) {
      if (std::find(missing.begin(), missing.end(), src.kernel()) == missing.end())
        missing.push_back(src.kernel());
      continue;
    }
    for (const coop_pb::Buffer &buffer : src.inputs())
      launch.inputs.push_back(readBuffer(buffer, hwm));
    for (int o = 0; o < src.outputs_size(); ++o) {
      launch.outputs.push_back(readBuffer(src.outputs(o), hwm));
      if (!isContiguous(launch.outputs.back()) && !launch.kernel->stridedOutputs)
        return Error(COOP_STATUS_INVALID_PLAN) << where << " output #" << o << " is not contiguous";
    }
    if (src.has_workspace())
      readBuffer(src.workspace(), hwm);
    launch.inplace.assign(src.outputs_size(), -1);
    if (!src.inplace().empty()) {
      for (int o = 0; o < src.inplace_size(); ++o) {
        int k = src.inplace(o);
        if (k >= 0) {
          const Tensor &a = launch.outputs[o].layout, &b = launch.inputs[k].layout;
          bool same = a.dtype == b.dtype && a.rank == b.rank;
          for (int d = 0; same && d < a.rank; ++d)
            same = a.shape[d] == b.shape[d];
          if (!same)
            return Error(COOP_STATUS_INVALID_PLAN)
                   << where << " output #" << o << " overwrites input #" << k
                   << " of another shape or dtype";
        }
        launch.inplace[o] = k;
      }
    }
    // A kernel that writes through strides writes a view only in place,
    // into the very buffer of the input it overwrites.
    for (size_t o = 0; o < launch.outputs.size(); ++o) {
      const BufferDesc &out = launch.outputs[o];
      int k = launch.inplace[o];
      if (!isContiguous(out) && (k < 0 || !sameView(out, launch.inputs[k])))
        return Error(COOP_STATUS_INVALID_PLAN)
               << where << " output #" << o << " is not contiguous and not in place";
    }
    for (const coop_pb::Argument &arg : src.args())
      launch.args[arg.name()] = arg.value();
    // Tensor arguments by name (operand indices), when the plan has them.
    for (const coop_pb::Argument &arg : src.tensor_args())
      launch.args[arg.name()] = arg.value();
    if (src.has_rng()) {
      launch.rngSeed = src.rng().seed();
      launch.rngOffset = src.rng().offset();
      plan->rngSpan = std::max(plan->rngSpan, launch.rngOffset + drawCount(launch));
    }
    std::string error = resolveParams(*launch.kernel, launch);
    if (error.empty()) {
      std::vector<Tensor> ins, outs;
      for (const BufferDesc &d : launch.inputs)
        ins.push_back(d.layout);
      for (const BufferDesc &d : launch.outputs)
        outs.push_back(d.layout);
      Signature sig;
      sig.kernel = &src.kernel();
      sig.call.args = &launch.args;
      sig.call.params = launch.params.data();
      sig.call.numParams = static_cast<int>(launch.params.size());
      sig.call.inputs = ins.data();
      sig.call.numInputs = static_cast<int>(ins.size());
      sig.call.outputs = outs.data();
      sig.call.numOutputs = static_cast<int>(outs.size());
      sig.inputs = ins.data();
      sig.outputs = outs.data();
      error = launch.kernel->prepare(sig);
    }
    if (!error.empty())
      return Error(COOP_STATUS_INVALID_PLAN) << where << ": " << error;
    launch.signature = operandSignature(launch.inputs);
    plan->launches.push_back(std::move(launch));
  }
  if (!missing.empty()) {
    Error error(COOP_STATUS_UNIMPLEMENTED);
    error << "invalid Plan: no kernel implements ";
    for (size_t i = 0; i < missing.size(); ++i)
      error << (i ? ", '" : "'") << missing[i] << "'";
    return error;
  }
  *outPlan = plan.release();
  return nullptr;
}

} // namespace

extern "C" coop_status_t coop_plan_load_bytes(const void *data, size_t size,
                                              coop_plan_t **outPlan) {
  if (!outPlan || (!data && size))
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_plan_load_bytes: null pointer";
  *outPlan = nullptr;
  return guarded([&] {
    return loadPlan(std::string(static_cast<const char *>(data), size), outPlan);
  });
}

static coop_status_t readFile(const char *path, std::string &out) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return Error(COOP_STATUS_NOT_FOUND) << "'" << path << "' is a directory, not a file";
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Error(COOP_STATUS_NOT_FOUND) << "cannot open '" << path << "'";
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad())
    return Error(COOP_STATUS_NOT_FOUND) << "cannot read '" << path << "'";
  out = bytes.str();
  return nullptr;
}

extern "C" coop_status_t coop_plan_load_file(const char *path, coop_plan_t **outPlan) {
  if (!path || !outPlan)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_plan_load_file: null pointer";
  *outPlan = nullptr;
  return guarded([&]() -> coop_status_t {
    std::string bytes;
    if (coop_status_t status = readFile(path, bytes))
      return status;
    coop_status_t status = loadPlan(bytes, outPlan);
    if (status)
      status->message = std::string(path) + ": " + status->message;
    return status;
  });
}

namespace {
const std::vector<std::string> &registeredKernels() {
  static const std::vector<std::string> names = kernelNames();
  return names;
}
} // namespace

extern "C" size_t coop_kernel_count(void) { return registeredKernels().size(); }
extern "C" const char *coop_kernel_name(size_t index) {
  return index < registeredKernels().size() ? registeredKernels()[index].c_str() : nullptr;
}

extern "C" void coop_plan_release(coop_plan_t *plan) { delete plan; }
extern "C" const char *coop_plan_name(const coop_plan_t *plan) {
  return plan->proto.name().c_str();
}
extern "C" int64_t coop_plan_arena_bytes(const coop_plan_t *plan) {
  return plan->proto.arena_bytes();
}
extern "C" size_t coop_plan_launch_count(const coop_plan_t *plan) {
  return plan->launches.size();
}
extern "C" int64_t coop_plan_high_water_mark(const coop_plan_t *plan) {
  return plan->highWaterMark;
}
extern "C" const char *coop_plan_launch_kernel(const coop_plan_t *plan, size_t index) {
  return index < plan->launches.size()
             ? plan->proto.launches(static_cast<int>(index)).kernel().c_str()
             : nullptr;
}
extern "C" const char *coop_plan_launch_signature(const coop_plan_t *plan, size_t index) {
  return index < plan->launches.size() ? plan->launches[index].signature.c_str() : nullptr;
}
extern "C" size_t coop_plan_argument_count(const coop_plan_t *plan) {
  return plan->arguments.size();
}
extern "C" coop_status_t coop_plan_argument_info(const coop_plan_t *plan, size_t index,
                                                 coop_tensor_info_t *out) {
  if (!plan || !out || index >= plan->arguments.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "argument #" << index << " does not exist";
  *out = plan->arguments[index].info;
  return nullptr;
}
extern "C" coop_status_t coop_plan_find_argument(const coop_plan_t *plan, const char *name,
                                                 size_t *out) {
  if (!plan || !name || !out)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_plan_find_argument: null pointer";
  auto it = plan->argumentByName.find(name);
  if (it == plan->argumentByName.end())
    return Error(COOP_STATUS_NOT_FOUND) << "the plan has no argument '" << name << "'";
  *out = it->second;
  return nullptr;
}
extern "C" size_t coop_plan_output_count(const coop_plan_t *plan) {
  return plan->outputs.size();
}
extern "C" coop_status_t coop_plan_output_info(const coop_plan_t *plan, size_t index,
                                               coop_tensor_info_t *out) {
  if (!plan || !out || index >= plan->outputs.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "output #" << index << " does not exist";
  *out = plan->outputInfo[index];
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

struct coop_session_s {
  const coop_plan_t *plan = nullptr;
  std::unique_ptr<Backend> backend;
  char *arena = nullptr;
  std::vector<bool> bound;
  /// A launch's operands in the arena, sized for the plan's widest launch
  /// at creation, so that running a step allocates nothing.
  std::vector<Tensor> launchInputs, launchOutputs;
  int64_t steps = 0; // the step index: the next step's s (Random.h)
  int64_t launches = 0;
  double lastStepMs = 0;
};

namespace {

/// Every kernel `backend` lacks, by name, or nullptr.
coop_status_t checkKernels(const coop_plan_t &plan, const Backend &backend, const char *name) {
  std::vector<std::string> missing;
  for (size_t l = 0; l < plan.launches.size(); ++l) {
    const std::string &kernel = plan.proto.launches(static_cast<int>(l)).kernel();
    if (!backend.implements(*plan.launches[l].kernel) &&
        std::find(missing.begin(), missing.end(), kernel) == missing.end())
      missing.push_back(kernel);
  }
  if (missing.empty())
    return nullptr;
  Error error(COOP_STATUS_UNIMPLEMENTED);
  error << "backend '" << name << "' has no kernel for ";
  for (size_t i = 0; i < missing.size(); ++i)
    error << (i ? ", '" : "'") << missing[i] << "'";
  return error;
}

} // namespace

extern "C" coop_status_t coop_plan_check_backend(const coop_plan_t *plan, const char *backend) {
  if (!plan || !backend)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_plan_check_backend: null pointer";
  return guarded([&]() -> coop_status_t {
    std::string error;
    std::unique_ptr<Backend> created = createBackend(backend, error);
    if (!created)
      return Error(COOP_STATUS_UNIMPLEMENTED) << error;
    return checkKernels(*plan, *created, backend);
  });
}

extern "C" coop_status_t coop_session_create(const coop_plan_t *plan, const char *backend,
                                             coop_session_t **out) {
  if (!plan || !backend || !out)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_session_create: null pointer";
  *out = nullptr;
  return guarded([&]() -> coop_status_t {
    auto session = std::make_unique<coop_session_s>();
    session->plan = plan;
    std::string error;
    session->backend = createBackend(backend, error);
    if (!session->backend)
      return Error(COOP_STATUS_UNIMPLEMENTED) << error;
    if (coop_status_t missing = checkKernels(*plan, *session->backend, backend))
      return missing;
    session->arena = session->backend->allocateArena(plan->proto.arena_bytes(), error);
    if (!session->arena)
      return Error(COOP_STATUS_OUT_OF_MEMORY) << error;
    session->bound.assign(plan->arguments.size(), false);
    for (const LaunchInfo &launch : plan->launches) {
      session->launchInputs.resize(std::max(session->launchInputs.size(), launch.inputs.size()));
      session->launchOutputs.resize(
          std::max(session->launchOutputs.size(), launch.outputs.size()));
    }
    *out = session.release();
    return nullptr;
  });
}

extern "C" void coop_session_release(coop_session_t *session) { delete session; }

static coop_status_t checkBinding(const ArgumentInfo &arg, coop_dtype_t dtype,
                                  int32_t rank, const int64_t *shape, size_t bytes) {
  const coop_tensor_info_t &info = arg.info;
  auto shapeText = [](int32_t r, const int64_t *s) {
    std::string text = "[";
    for (int32_t d = 0; d < r; ++d)
      text += (d ? "," : "") + std::to_string(s[d]);
    return text + "]";
  };
  if (dtype != info.dtype)
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "argument '" << arg.name << "' is "
           << dtypeName(static_cast<coop_pb::DType>(info.dtype)) << ", not "
           << dtypeName(static_cast<coop_pb::DType>(dtype));
  bool same = rank == info.rank && (rank == 0 || shape);
  for (int32_t d = 0; same && d < rank; ++d)
    same = shape[d] == info.shape[d];
  if (!same)
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "argument '" << arg.name << "' has shape " << shapeText(info.rank, info.shape)
           << ", not " << (rank >= 0 && rank <= COOP_MAX_RANK && (shape || !rank)
                               ? shapeText(rank, shape) : "rank " + std::to_string(rank));
  if (bytes != info.byte_size)
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "argument '" << arg.name << "' takes " << info.byte_size << " bytes, not "
           << bytes;
  return nullptr;
}

extern "C" coop_status_t coop_session_bind_argument(coop_session_t *session, size_t index,
                                                    coop_dtype_t dtype, int32_t rank,
                                                    const int64_t *shape, const void *data,
                                                    size_t bytes) {
  if (!session || index >= session->plan->arguments.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "argument #" << index << " does not exist";
  const ArgumentInfo &arg = session->plan->arguments[index];
  if (coop_status_t status = checkBinding(arg, dtype, rank, shape, bytes))
    return status;
  if (!data && bytes)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "argument '" << arg.name << "': null data";
  session->backend->upload(session->arena + arg.buffer.offset, data, bytes);
  std::string failure = session->backend->takeError();
  if (!failure.empty())
    return Error(COOP_STATUS_INTERNAL) << "argument '" << arg.name << "': " << failure;
  session->bound[index] = true;
  return nullptr;
}

extern "C" coop_status_t coop_session_bind_argument_by_name(
    coop_session_t *session, const char *name, coop_dtype_t dtype, int32_t rank,
    const int64_t *shape, const void *data, size_t bytes) {
  if (!session)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "null session";
  size_t index;
  if (coop_status_t status = coop_plan_find_argument(session->plan, name, &index))
    return status;
  return coop_session_bind_argument(session, index, dtype, rank, shape, data, bytes);
}

extern "C" coop_status_t coop_session_init_from_training_graph(coop_session_t *session,
                                                               const char *path) {
  if (!session || !path)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "null session or path";
  return guarded([&]() -> coop_status_t {
    std::string bytes;
    if (coop_status_t status = readFile(path, bytes))
      return status;
    coop_pb::TrainingGraph graph;
    if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
        !graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return Error(COOP_STATUS_INVALID_ARGUMENT)
             << path << ": not a serialized TrainingGraph (truncated or corrupted)";
    std::unordered_map<std::string, const coop_pb::Tensor *> byName;
    for (const coop_pb::Tensor &tensor : graph.tensors())
      if (tensor.role() != coop_pb::ACTIVATION)
        byName.emplace(tensor.name(), &tensor);
    const coop_plan_t *plan = session->plan;
    std::vector<const coop_pb::Tensor *> sources;
    for (const ArgumentInfo &arg : plan->arguments) {
      auto it = byName.find(arg.name);
      if (it == byName.end())
        return Error(COOP_STATUS_NOT_FOUND)
               << path << " has no argument '" << arg.name << "'";
      const coop_pb::Tensor &tensor = *it->second;
      if (tensor.initial_value().empty())
        return Error(COOP_STATUS_INVALID_ARGUMENT)
               << path << ": argument '" << arg.name
               << "' has no initial value (export with initial_values=True)";
      std::vector<int64_t> shape(tensor.shape().begin(), tensor.shape().end());
      if (coop_status_t status = checkBinding(
              arg, static_cast<coop_dtype_t>(tensor.dtype()),
              static_cast<int32_t>(shape.size()), shape.data(), tensor.initial_value().size())) {
        status->message = std::string(path) + ": " + status->message;
        return status;
      }
      sources.push_back(&tensor);
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      const std::string &value = sources[i]->initial_value();
      session->backend->upload(session->arena + plan->arguments[i].buffer.offset,
                               value.data(), value.size());
      session->bound[i] = true;
    }
    std::string failure = session->backend->takeError();
    if (!failure.empty())
      return Error(COOP_STATUS_INTERNAL) << "cannot upload the arguments: " << failure;
    return nullptr;
  });
}

extern "C" coop_status_t coop_session_init_random(coop_session_t *session, uint64_t seed) {
  if (!session)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "null session";
  return guarded([&]() -> coop_status_t {
    const coop_plan_t *plan = session->plan;
    for (size_t i = 0; i < plan->arguments.size(); ++i) {
      const ArgumentInfo &arg = plan->arguments[i];
      std::vector<char> host(arg.info.byte_size);
      fillRandomArgument(arg.name, arg.info.role, arg.buffer.layout, seed + i, host.data());
      session->backend->upload(session->arena + arg.buffer.offset, host.data(), host.size());
      session->bound[i] = true;
    }
    std::string failure = session->backend->takeError();
    if (!failure.empty())
      return Error(COOP_STATUS_INTERNAL) << "cannot upload the arguments: " << failure;
    return nullptr;
  });
}

namespace {

/// Runs one launch on the session's backend (no allocation).
void runLaunch(coop_session_t *session, const LaunchInfo &launch) {
  Tensor *ins = session->launchInputs.data(), *outs = session->launchOutputs.data();
  int numIn = static_cast<int>(launch.inputs.size());
  int numOut = static_cast<int>(launch.outputs.size());
  for (int i = 0; i < numIn; ++i)
    ins[i] = launch.inputs[i].in(session->arena);
  for (int o = 0; o < numOut; ++o)
    outs[o] = launch.outputs[o].in(session->arena);
  Call call;
  call.args = &launch.args;
  call.params = launch.params.data();
  call.numParams = static_cast<int>(launch.params.size());
  call.inputs = ins;
  call.numInputs = numIn;
  call.outputs = outs;
  call.numOutputs = numOut;
  call.rngSeed = launch.rngSeed;
  call.rngOffset = stepOffset(launch.rngOffset, session->steps, session->plan->rngSpan);
  session->backend->launch(*launch.kernel, call, launch.inplace.data());
  ++session->launches;
}

coop_status_t checkBound(const coop_session_t *session) {
  const coop_plan_t *plan = session->plan;
  for (size_t i = 0; i < plan->arguments.size(); ++i)
    if (!session->bound[i])
      return Error(COOP_STATUS_FAILED_PRECONDITION)
             << "argument '" << plan->arguments[i].name << "' is not bound";
  return nullptr;
}

} // namespace

extern "C" coop_status_t coop_session_run(coop_session_t *session, int64_t steps) {
  if (!session || steps < 0)
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "coop_session_run: bad session or step count";
  if (coop_status_t status = checkBound(session))
    return status;
  for (int64_t s = 0; s < steps; ++s) {
    session->backend->startTimer();
    for (const LaunchInfo &launch : session->plan->launches)
      runLaunch(session, launch);
    std::string failure = session->backend->stopTimer(session->lastStepMs);
    if (failure.empty())
      failure = session->backend->takeError();
    if (!failure.empty())
      return Error(COOP_STATUS_INTERNAL) << "step " << session->steps + 1 << " failed: "
                                         << failure;
    ++session->steps;
  }
  return nullptr;
}

extern "C" coop_status_t coop_session_set_step_index(coop_session_t *session, int64_t step) {
  if (!session || step < 0)
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "coop_session_set_step_index: bad session or negative step " << step;
  session->steps = step;
  return nullptr;
}

extern "C" int64_t coop_session_step_index(const coop_session_t *session) {
  return session->steps;
}

extern "C" coop_status_t coop_session_profile(coop_session_t *session, int32_t repeat,
                                              double *out_us, size_t count) {
  if (!session || repeat < 1 || (!out_us && count))
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "coop_session_profile: bad session, repeat count or output";
  const coop_plan_t *plan = session->plan;
  if (count != plan->launches.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << "coop_session_profile: the plan has " << plan->launches.size()
           << " launches, not " << count;
  if (coop_status_t status = checkBound(session))
    return status;
  return guarded([&]() -> coop_status_t {
    Backend &backend = *session->backend;
    std::vector<char> saved;
    std::vector<double> times;
    double stepMs = 0;
    for (size_t l = 0; l < plan->launches.size(); ++l) {
      const LaunchInfo &launch = plan->launches[l];
      // The storages the launch writes, restored before every run after
      // the first: each run sees the inputs of the step.
      size_t total = 0;
      for (const BufferDesc &out : launch.outputs)
        total += static_cast<size_t>(out.size);
      saved.resize(total);
      size_t at = 0;
      for (const BufferDesc &out : launch.outputs) {
        backend.download(saved.data() + at, session->arena + out.offset, out.size);
        at += static_cast<size_t>(out.size);
      }
      times.clear();
      for (int32_t r = 0; r <= repeat; ++r) { // run 0 warms up
        if (r > 0) {
          at = 0;
          for (const BufferDesc &out : launch.outputs) {
            backend.upload(session->arena + out.offset, saved.data() + at, out.size);
            at += static_cast<size_t>(out.size);
          }
        }
        double ms = 0;
        backend.startTimer();
        runLaunch(session, launch);
        std::string failure = backend.stopTimer(ms);
        if (failure.empty())
          failure = backend.takeError();
        if (!failure.empty())
          return Error(COOP_STATUS_INTERNAL)
                 << "launch #" << l << " '" << plan->proto.launches(static_cast<int>(l)).kernel()
                 << "' failed: " << failure;
        if (r > 0)
          times.push_back(ms);
      }
      std::sort(times.begin(), times.end());
      size_t n = times.size();
      double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
      out_us[l] = median * 1000;
      stepMs += median;
    }
    session->lastStepMs = stepMs;
    ++session->steps;
    return nullptr;
  });
}

static coop_status_t readBack(const coop_session_t *session, const BufferDesc &buffer,
                              size_t expected, void *out, size_t bytes, const char *what,
                              size_t index) {
  if (bytes != expected || (!out && bytes))
    return Error(COOP_STATUS_INVALID_ARGUMENT)
           << what << " #" << index << " takes " << expected << " bytes, not " << bytes;
  session->backend->download(out, session->arena + buffer.offset, bytes);
  std::string failure = session->backend->takeError();
  if (!failure.empty())
    return Error(COOP_STATUS_INTERNAL) << what << " #" << index << ": " << failure;
  return nullptr;
}

extern "C" coop_status_t coop_session_read_argument(const coop_session_t *session,
                                                    size_t index, void *out, size_t bytes) {
  if (!session || index >= session->plan->arguments.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "argument #" << index << " does not exist";
  const ArgumentInfo &arg = session->plan->arguments[index];
  return readBack(session, arg.buffer, arg.info.byte_size, out, bytes, "argument", index);
}

extern "C" coop_status_t coop_session_read_output(const coop_session_t *session,
                                                  size_t index, void *out, size_t bytes) {
  if (!session || index >= session->plan->outputs.size())
    return Error(COOP_STATUS_INVALID_ARGUMENT) << "output #" << index << " does not exist";
  return readBack(session, session->plan->outputs[index],
                  session->plan->outputInfo[index].byte_size, out, bytes, "output", index);
}

extern "C" void coop_session_stats(const coop_session_t *session, coop_session_stats_t *out) {
  out->arena_bytes = session->plan->proto.arena_bytes();
  out->high_water_mark = session->plan->highWaterMark;
  out->device_allocations = session->backend->allocations();
  out->steps = session->steps;
  out->launches = session->launches;
  out->last_step_ms = session->lastStepMs;
}
