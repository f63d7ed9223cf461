//===- PlanVerifier.cpp - What the runtime proves before it runs a plan ---===//

#include "PlanVerifier.h"

#include "coop/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace coop::rt {

//===----------------------------------------------------------------------===//
// Argument schemas
//===----------------------------------------------------------------------===//

namespace {

bool typeFromName(const std::string &name, ArgSpec::Type &type) {
  static const std::pair<const char *, ArgSpec::Type> names[] = {
      {"float", ArgSpec::Float}, {"int", ArgSpec::Int},   {"bool", ArgSpec::Bool},
      {"str", ArgSpec::String},  {"ints", ArgSpec::Ints}, {"scalar", ArgSpec::Scalar},
      {"any", ArgSpec::Any}};
  for (const auto &[text, value] : names)
    if (name == text) {
      type = value;
      return true;
    }
  return false;
}

const char *typeName(ArgSpec::Type type) {
  switch (type) {
  case ArgSpec::Float:
    return "a float";
  case ArgSpec::Int:
    return "an int";
  case ArgSpec::Bool:
    return "a bool";
  case ArgSpec::String:
    return "a string";
  case ArgSpec::Ints:
    return "an int or a list of ints";
  case ArgSpec::Scalar:
    return "a number";
  case ArgSpec::Any:
    return "a value";
  }
  return "?";
}

const char *kindName(const coop_pb::Value &value) {
  switch (value.kind_case()) {
  case coop_pb::Value::kNone:
    return "None";
  case coop_pb::Value::kIntValue:
    return "an int";
  case coop_pb::Value::kFloatValue:
    return "a float";
  case coop_pb::Value::kBoolValue:
    return "a bool";
  case coop_pb::Value::kStringValue:
    return "a string";
  case coop_pb::Value::kOperand:
    return "a tensor operand";
  case coop_pb::Value::kList:
    return "a list";
  default:
    return "no value";
  }
}

std::string numberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string rangeText(const ArgSpec &spec) {
  std::string text = spec.lowOpen ? "(" : "[";
  text += std::isinf(spec.low) ? "" : numberText(spec.low);
  text += ", ";
  text += std::isinf(spec.high) ? "" : numberText(spec.high);
  return text + (spec.highOpen ? ")" : "]");
}

bool inRange(const ArgSpec &spec, double value) {
  if (std::isnan(value))
    return false;
  bool aboveLow = spec.lowOpen ? value > spec.low : value >= spec.low;
  bool belowHigh = spec.highOpen ? value < spec.high : value <= spec.high;
  return aboveLow && belowHigh;
}

/// "" when `value` is of the spec's type and within its range.
std::string checkValue(const ArgSpec &spec, const coop_pb::Value &value) {
  auto wrongType = [&] {
    return std::string("is ") + kindName(value) + ", expected " + typeName(spec.type);
  };
  auto checkNumber = [&](double number) -> std::string {
    if (spec.ranged && !inRange(spec, number))
      return "is " + numberText(number) + ", outside " + rangeText(spec);
    return "";
  };
  switch (value.kind_case()) {
  case coop_pb::Value::kOperand:
    return ""; // a tensor in place of a scalar: a tensor parameter
  case coop_pb::Value::kIntValue:
    if (spec.type == ArgSpec::Bool || spec.type == ArgSpec::String)
      return wrongType();
    return checkNumber(static_cast<double>(value.int_value()));
  case coop_pb::Value::kFloatValue:
    if (spec.type != ArgSpec::Float && spec.type != ArgSpec::Scalar && spec.type != ArgSpec::Any)
      return wrongType();
    return checkNumber(value.float_value());
  case coop_pb::Value::kBoolValue: // an ATen Scalar may be a bool
    return spec.type == ArgSpec::Bool || spec.type == ArgSpec::Scalar ||
                   spec.type == ArgSpec::Any
               ? ""
               : wrongType();
  case coop_pb::Value::kStringValue:
    return spec.type == ArgSpec::String || spec.type == ArgSpec::Any ? "" : wrongType();
  case coop_pb::Value::kList:
    if (spec.type == ArgSpec::Any)
      return "";
    if (spec.type != ArgSpec::Ints)
      return wrongType();
    for (const coop_pb::Value &item : value.list().items()) {
      if (item.kind_case() != coop_pb::Value::kIntValue)
        return "has an item that is " + std::string(kindName(item)) + ", expected ints";
      if (std::string error = checkNumber(static_cast<double>(item.int_value())); !error.empty())
        return "has an item that " + error;
    }
    return "";
  default:
    return wrongType();
  }
}

} // namespace

ArgSchema parseArgSchema(const char *spec, std::string &error) {
  ArgSchema schema;
  const char *at = spec ? spec : "";
  while (*at) {
    while (*at == ' ')
      ++at;
    if (!*at)
      break;
    const char *end = at;
    while (*end && *end != ' ')
      ++end;
    std::string entry(at, end);
    at = end;
    if (entry == "rng") {
      schema.random = true;
      continue;
    }
    ArgSpec arg;
    if (entry.back() == '?') { // after the range or the type
      arg.optional = true;
      entry.pop_back();
    }
    size_t colon = entry.find(':');
    size_t typeEnd = entry.find_first_of("?[(", colon);
    if (colon == 0 || colon == std::string::npos ||
        !typeFromName(entry.substr(colon + 1, typeEnd == std::string::npos ? std::string::npos
                                                                           : typeEnd - colon - 1),
                      arg.type)) {
      error = "malformed entry '" + entry + "'";
      return {};
    }
    arg.name = entry.substr(0, colon);
    std::string rest = typeEnd == std::string::npos ? "" : entry.substr(typeEnd);
    if (!rest.empty()) {
      size_t comma = rest.find(',');
      char open = rest[0], close = rest.back();
      if ((open != '[' && open != '(') || (close != ']' && close != ')') ||
          comma == std::string::npos) {
        error = "malformed range in '" + entry + "'";
        return {};
      }
      std::string low = rest.substr(1, comma - 1);
      std::string high = rest.substr(comma + 1, rest.size() - comma - 2);
      arg.ranged = true;
      arg.lowOpen = open == '(';
      arg.highOpen = close == ')';
      arg.low = low.empty() ? -INFINITY : std::strtod(low.c_str(), nullptr);
      arg.high = high.empty() ? INFINITY : std::strtod(high.c_str(), nullptr);
    }
    schema.args.push_back(arg);
  }
  return schema;
}

std::string checkArguments(const ArgSchema &schema, const std::vector<std::string> &params,
                           const ArgMap &args) {
  // The tensor options and the like that ATen passes to most factories and
  // copies: the plan's buffers already fix what they say (dtype, layout),
  // or they do not change a result (device, memory format, a generator,
  // which the plan's rng stream replaces).
  static const char *const kIgnored[] = {"device",        "dtype",     "layout",      "pin_memory",
                                         "memory_format", "generator", "non_blocking"};
  for (const auto &[name, value] : args) {
    bool known = std::any_of(schema.args.begin(), schema.args.end(),
                             [&](const ArgSpec &spec) { return spec.name == name; }) ||
                 std::any_of(std::begin(kIgnored), std::end(kIgnored),
                             [&](const char *ignored) { return name == ignored; });
    for (const std::string &param : params)
      known |= param.compare(0, name.size(), name) == 0 &&
               (param.size() == name.size() || param[name.size()] == '?' ||
                param[name.size()] == '[');
    if (!known) {
      std::string declared;
      for (const ArgSpec &spec : schema.args)
        declared += (declared.empty() ? "" : ", ") + spec.name;
      return "argument '" + name + "' is not one the kernel reads (" +
             (declared.empty() ? std::string("it reads none") : "it reads " + declared) + ")";
    }
  }
  for (const ArgSpec &spec : schema.args) {
    auto it = args.find(spec.name);
    bool none = it != args.end() && it->second.kind_case() == coop_pb::Value::kNone;
    if (it == args.end() || none) {
      if (spec.optional)
        continue;
      return "argument '" + spec.name + "' (" + typeName(spec.type) +
             (spec.ranged ? " in " + rangeText(spec) : "") + ") is " + (none ? "None" : "missing");
    }
    if (std::string error = checkValue(spec, it->second); !error.empty())
      return "argument '" + spec.name + "' " + error;
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

namespace {

/// A buffer's storage, checked: [begin, end) in the arena.
struct Storage {
  int64_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
  bool overlaps(const Storage &other) const {
    return !empty() && !other.empty() && begin < other.end && other.begin < end;
  }
  bool operator==(const Storage &other) const { return begin == other.begin && end == other.end; }
};

std::string bytesText(const Storage &s) {
  return "bytes [" + std::to_string(s.begin) + ", " + std::to_string(s.end) + ")";
}

/// Checks one buffer against the arena and its own dtype, shape and
/// strides; every sum and product overflow-checked.
std::string checkBuffer(const coop_pb::Buffer &buffer, int64_t arenaBytes, Storage &out) {
  int64_t width = elementSize(buffer.dtype());
  if (width == 0)
    return "has unknown dtype " + std::to_string(static_cast<int>(buffer.dtype()));
  if (buffer.shape_size() > kMaxRank)
    return "has rank " + std::to_string(buffer.shape_size()) + ", more than " +
           std::to_string(kMaxRank);
  if (buffer.strides_size() != buffer.shape_size())
    return "has " + std::to_string(buffer.strides_size()) + " strides for rank " +
           std::to_string(buffer.shape_size());
  const std::optional<int64_t> end = coop::checkedAdd(buffer.offset(), buffer.size());
  if (buffer.offset() < 0 || buffer.size() < 0 || !end || *end > arenaBytes)
    return (!end || buffer.offset() < 0 || buffer.size() < 0
                ? "offset " + std::to_string(buffer.offset()) + " and size " +
                      std::to_string(buffer.size())
                : bytesText({buffer.offset(), *end})) +
           " lie outside the arena of " + std::to_string(arenaBytes) + " bytes";
  if (buffer.element_offset() < 0)
    return "has negative element offset " + std::to_string(buffer.element_offset());
  std::optional<int64_t> numel = 1;
  for (int d = 0; d < buffer.shape_size(); ++d) {
    if (buffer.shape(d) < 0 || buffer.strides(d) < 0)
      return "has negative size or stride in dimension " + std::to_string(d);
    if (numel)
      numel = coop::checkedMul(*numel, buffer.shape(d));
  }
  const std::optional<int64_t> last =
      coop::lastElementAddressed(buffer.shape(), buffer.strides(), buffer.element_offset());
  if (!numel || !last)
    return "has a shape, strides or element offset whose element count or extent "
           "overflows 64 bits";
  if (!coop::checkedMul(*numel, width))
    return "holds " + std::to_string(*numel) + " elements, whose bytes overflow 64 bits";
  std::optional<int64_t> endByte = coop::checkedAdd(*last, 1);
  if (endByte)
    endByte = coop::checkedMul(*endByte, width);
  if (*numel > 0 && (!endByte || *endByte > buffer.size()))
    return "reads element " + std::to_string(*last) + " of a " + std::to_string(buffer.size()) +
           "-byte storage of " + dtypeName(buffer.dtype());
  out.begin = buffer.offset();
  out.end = *end;
  return "";
}

//===----------------------------------------------------------------------===//
// The step replayed over the arena's bytes
//===----------------------------------------------------------------------===//

/// A value written into the arena: an argument before the step, or a
/// launch's output or workspace.
struct Value {
  int launch = -1; // -1: argument `slot`
  int slot = 0;    // output index, argument index, or -1 for a workspace
  Storage where;
  int argument = -1; // the argument this value is, or updates in place
  coop_pb::DType dtype = coop_pb::DTYPE_UNSPECIFIED; // as written (none: scratch)
};

/// Which value each arena byte holds: disjoint segments begin -> (end,
/// value index).
class ArenaValues {
public:
  void write(const Storage &s, int value) {
    if (s.empty())
      return;
    auto it = segments.lower_bound(s.begin);
    if (it != segments.begin() && std::prev(it)->second.first > s.begin)
      --it;
    std::vector<std::pair<int64_t, std::pair<int64_t, int>>> kept;
    while (it != segments.end() && it->first < s.end) {
      auto [begin, rest] = *it;
      if (begin < s.begin)
        kept.push_back({begin, {s.begin, rest.second}});
      if (rest.first > s.end)
        kept.push_back({s.end, rest});
      it = segments.erase(it);
    }
    for (const auto &segment : kept)
      segments.insert(segment);
    segments[s.begin] = {s.end, value};
  }

  /// The one value that holds exactly `s`; else -1, with `unwritten` set
  /// when some byte holds none, and `last` the newest value that holds some.
  int valueAt(const Storage &s, const std::vector<Value> &values, bool &unwritten,
              int &last) const {
    unwritten = false;
    last = -1;
    int64_t at = s.begin;
    auto it = segments.upper_bound(s.begin);
    if (it != segments.begin())
      --it;
    std::set<int> seen;
    for (; it != segments.end() && it->first < s.end; ++it) {
      auto [begin, rest] = *it;
      if (rest.first <= at)
        continue;
      if (begin > at)
        unwritten = true;
      at = rest.first;
      seen.insert(rest.second);
      last = std::max(last, rest.second);
    }
    if (at < s.end)
      unwritten = true;
    if (unwritten || seen.size() != 1 || !(values[last].where == s))
      return -1;
    return last;
  }

private:
  std::map<int64_t, std::pair<int64_t, int>> segments;
};

class Verifier {
public:
  explicit Verifier(const coop_pb::Plan &plan) : plan(plan) {}
  std::string run();

private:
  std::string valueName(int value) const {
    const Value &v = values[value];
    if (v.launch < 0)
      return "argument #" + std::to_string(v.slot) + " '" + plan.arguments(v.slot).name() + "' (" +
             bytesText(v.where) + ")";
    return "launch #" + std::to_string(v.launch) + " '" + plan.launches(v.launch).kernel() + "' " +
           (v.slot < 0 ? "workspace" : "output #" + std::to_string(v.slot)) + " (" +
           bytesText(v.where) + ")";
  }
  /// The value `s` holds for a read as `dtype`, or the reason it holds none.
  std::string read(const Storage &s, coop_pb::DType dtype, int &value) const;
  std::string checkLaunch(int l);
  std::string checkEnd();

  const coop_pb::Plan &plan;
  std::vector<Value> values;
  ArenaValues arena;
};

std::string Verifier::read(const Storage &s, coop_pb::DType dtype, int &value) const {
  value = -1;
  if (s.empty())
    return "";
  bool unwritten;
  int last;
  value = arena.valueAt(s, values, unwritten, last);
  if (value >= 0 && values[value].dtype != dtype)
    return "reads " + valueName(value) + " as " + dtypeName(dtype) + "; it was written as " +
           dtypeName(values[value].dtype);
  if (value >= 0)
    return "";
  if (unwritten)
    return "reads " + bytesText(s) + ", which no argument and no earlier launch of the step wrote";
  return "reads " + bytesText(s) + ", which hold no single value there: " + valueName(last) +
         " wrote over them";
}

std::string Verifier::checkLaunch(int l) {
  const coop_pb::Launch &launch = plan.launches(l);
  int64_t arenaBytes = plan.arena_bytes();
  const KernelDef *kernel = findKernel(launch.kernel());
  if (launch.inputs_size() > kMaxOperands || launch.outputs_size() > kMaxOperands)
    return "has more than " + std::to_string(kMaxOperands) + " operands";
  std::vector<Storage> inputs(launch.inputs_size()), outputs(launch.outputs_size());
  for (int i = 0; i < launch.inputs_size(); ++i)
    if (std::string error = checkBuffer(launch.inputs(i), arenaBytes, inputs[i]); !error.empty())
      return "input #" + std::to_string(i) + " " + error;
  for (int o = 0; o < launch.outputs_size(); ++o)
    if (std::string error = checkBuffer(launch.outputs(o), arenaBytes, outputs[o]); !error.empty())
      return "output #" + std::to_string(o) + " " + error;
  Storage workspace;
  if (launch.has_workspace())
    if (std::string error = checkBuffer(launch.workspace(), arenaBytes, workspace); !error.empty())
      return "workspace " + error;

  std::vector<int> inplace(launch.outputs_size(), -1);
  if (!launch.inplace().empty()) {
    if (launch.inplace_size() != launch.outputs_size())
      return "has " + std::to_string(launch.inplace_size()) + " in-place entries for " +
             std::to_string(launch.outputs_size()) + " outputs";
    for (int o = 0; o < launch.inplace_size(); ++o) {
      int k = launch.inplace(o);
      if (k < -1 || k >= launch.inputs_size())
        return "output #" + std::to_string(o) + " overwrites input #" + std::to_string(k) +
               ", which does not exist";
      inplace[o] = k;
    }
  }

  // Arguments: names valid and used once, every one with a value, and
  // the kernel's schema.
  ArgMap args;
  for (const auto *list : {&launch.args(), &launch.tensor_args()})
    for (const coop_pb::Argument &arg : *list) {
      if (arg.name().empty())
        return "has an argument without a name";
      if (arg.value().kind_case() == coop_pb::Value::KIND_NOT_SET)
        return "argument '" + arg.name() + "' has no value";
      if (!args.emplace(arg.name(), arg.value()).second)
        return "argument '" + arg.name() + "' is given twice";
    }
  if (kernel) {
    std::string error;
    ArgSchema schema = parseArgSchema(kernel->args, error);
    if (!error.empty())
      return "kernel's argument schema is malformed: " + error;
    if (error = checkArguments(schema, kernel->params, args); !error.empty())
      return error;
    if (schema.random && !launch.has_rng())
      return "is a random kernel without an rng stream";
  }

  // Within the launch: an output overlaps no input but the one it is
  // declared to overwrite in place (and inputs of that same storage), no
  // other output and no workspace.
  for (int o = 0; o < launch.outputs_size(); ++o) {
    int k = inplace[o];
    for (int i = 0; i < launch.inputs_size(); ++i) {
      if (!outputs[o].overlaps(inputs[i]))
        continue;
      if (k >= 0 && outputs[o] == inputs[k] && inputs[i] == inputs[k])
        continue;
      return "output #" + std::to_string(o) + " (" + bytesText(outputs[o]) + ") overlaps input #" +
             std::to_string(i) + " (" + bytesText(inputs[i]) +
             (k == i ? "), which it overwrites in place but not at the same place"
                     : ") without overwriting it in place");
    }
    for (int p = 0; p < o; ++p)
      if (outputs[o].overlaps(outputs[p]))
        return "output #" + std::to_string(o) + " (" + bytesText(outputs[o]) +
               ") overlaps output #" + std::to_string(p) + " (" + bytesText(outputs[p]) + ")";
    if (outputs[o].overlaps(workspace))
      return "output #" + std::to_string(o) + " overlaps the workspace";
  }
  for (int i = 0; i < launch.inputs_size(); ++i)
    if (inputs[i].overlaps(workspace))
      return "input #" + std::to_string(i) + " overlaps the workspace";

  // Every input reads the value its buffer names, whole.
  std::vector<int> read(launch.inputs_size(), -1);
  for (int i = 0; i < launch.inputs_size(); ++i)
    if (std::string error = this->read(inputs[i], launch.inputs(i).dtype(), read[i]);
        !error.empty())
      return "input #" + std::to_string(i) + " " + error;

  // Then its outputs (and scratch) hold new values; an output written in
  // place continues the value of the input it overwrites.
  if (!workspace.empty()) {
    values.push_back({l, -1, workspace});
    arena.write(workspace, static_cast<int>(values.size()) - 1);
  }
  for (int o = 0; o < launch.outputs_size(); ++o) {
    Value value{l, o, outputs[o], -1, launch.outputs(o).dtype()};
    if (inplace[o] >= 0 && read[inplace[o]] >= 0)
      value.argument = values[read[inplace[o]]].argument;
    // A copy home: `coop.copy` moves an argument's final version into
    // the argument's own storage.
    if (launch.kernel() == "coop.copy")
      for (int a = 0; a < plan.arguments_size(); ++a)
        if (values[a].where == outputs[o])
          value.argument = a;
    values.push_back(value);
    arena.write(outputs[o], static_cast<int>(values.size()) - 1);
  }
  return "";
}

std::string Verifier::checkEnd() {
  for (int i = 0; i < plan.outputs_size(); ++i) {
    Storage s;
    if (std::string error = checkBuffer(plan.outputs(i), plan.arena_bytes(), s); !error.empty())
      return "output #" + std::to_string(i) + " " + error;
    int value;
    if (std::string error = read(s, plan.outputs(i).dtype(), value); !error.empty())
      return "the step's output #" + std::to_string(i) + " " + error;
  }
  // After the step every argument's storage holds one value, whole, for
  // the next step; an input (which the step reads, never updates) still
  // its own.
  for (int a = 0; a < plan.arguments_size(); ++a) {
    int value;
    std::string error = read(values[a].where, values[a].dtype, value);
    if (error.empty() && value >= 0 && plan.arguments(a).role() == coop_pb::INPUT &&
        values[value].argument != a)
      error = "holds " + valueName(value) + " instead of the input";
    if (!error.empty())
      return "argument #" + std::to_string(a) + " '" + plan.arguments(a).name() +
             "' at the end of the step: its storage " + error;
  }
  return "";
}

std::string Verifier::run() {
  if (plan.arena_bytes() <= 0)
    return "arena size " + std::to_string(plan.arena_bytes()) + " is not positive";
  // Before the step: every argument in its own storage, none overlapping.
  for (int a = 0; a < plan.arguments_size(); ++a) {
    const coop_pb::PlanArgument &arg = plan.arguments(a);
    std::string where = "argument #" + std::to_string(a) + " '" + arg.name() + "'";
    Storage s;
    if (std::string error = checkBuffer(arg.buffer(), plan.arena_bytes(), s); !error.empty())
      return where + " " + error;
    for (int b = 0; b < a; ++b)
      if (s.overlaps(values[b].where))
        return where + " (" + bytesText(s) + ") overlaps " + valueName(b);
    values.push_back({-1, a, s, a, arg.buffer().dtype()});
    arena.write(s, a);
  }
  for (int l = 0; l < plan.launches_size(); ++l)
    if (std::string error = checkLaunch(l); !error.empty())
      return "launch #" + std::to_string(l) + " '" + plan.launches(l).kernel() + "': " + error;
  return checkEnd();
}

} // namespace

std::string verifyPlan(const coop_pb::Plan &plan) { return Verifier(plan).run(); }

} // namespace coop::rt
