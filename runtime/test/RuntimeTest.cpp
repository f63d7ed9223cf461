//===- RuntimeTest.cpp - The runtime's C API on hand-built plans ----------===//

#include "coop/runtime.h"

#include "PlanFileFormat.h"
#include "PlanVerifier.h"
#include "plan.pb.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

// Every heap allocation of the test binary is counted, so a test can prove
// that running steps allocates nothing.
static std::atomic<long> heapAllocations{0};
void *operator new(size_t size) {
  ++heapAllocations;
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
// The runtime allocates its statuses with new (std::nothrow): replaced as
// well, or (under ASan) they would come from the sanitizer's operator new
// and go back through this std::free.
void *operator new(size_t size, const std::nothrow_t &) noexcept {
  ++heapAllocations;
  return std::malloc(size ? size : 1);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }

namespace {

using coop_pb::Buffer;

void setBuffer(Buffer *b, int64_t offset, std::vector<int64_t> shape,
               coop_pb::DType dtype = coop_pb::FLOAT32, std::vector<int64_t> strides = {},
               int64_t elementOffset = 0) {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
  }
  int width = dtype == coop_pb::INT64 ? 8 : dtype == coop_pb::BOOL ? 1 : 4;
  b->set_offset(offset);
  b->set_size(numel * width + elementOffset * width);
  b->set_dtype(dtype);
  for (int64_t d : shape)
    b->add_shape(d);
  for (int64_t s : strides)
    b->add_strides(s);
  b->set_element_offset(elementOffset);
}

void addArgument(coop_pb::Plan &plan, const char *name, coop_pb::Role role, int64_t offset,
                 std::vector<int64_t> shape) {
  coop_pb::PlanArgument *arg = plan.add_arguments();
  arg->set_index(plan.arguments_size() - 1);
  arg->set_name(name);
  arg->set_role(role);
  setBuffer(arg->mutable_buffer(), offset, shape);
}

void setFloat(coop_pb::Launch *launch, const char *name, double value) {
  coop_pb::Argument *arg = launch->add_args();
  arg->set_name(name);
  arg->mutable_value()->set_float_value(value);
}

/// A plan of `arenaBytes` with the arguments x [4] (input) at 0 and w [4]
/// (parameter) at 16, and no launch yet.
coop_pb::Plan planWithXAndW(const char *name, int64_t arenaBytes) {
  coop_pb::Plan plan;
  plan.set_format_version(coop::planfile::kFormatVersion);
  plan.set_name(name);
  plan.set_arena_bytes(arenaBytes);
  addArgument(plan, "x", coop_pb::INPUT, 0, {4});
  addArgument(plan, "w", coop_pb::PARAMETER, 16, {4});
  return plan;
}

/// x [4] (input), w [4] (parameter) at 0 and 16; tmp = x * w at 32,
/// loss = sum(tmp) at 48, w -= 0.5 * tmp in place.
coop_pb::Plan tinyPlan() {
  coop_pb::Plan plan = planWithXAndW("tiny", 64);
  coop_pb::Launch *mul = plan.add_launches();
  mul->set_kernel("aten.mul.Tensor");
  setBuffer(mul->add_inputs(), 0, {4});
  setBuffer(mul->add_inputs(), 16, {4});
  setBuffer(mul->add_outputs(), 32, {4});
  coop_pb::Launch *sum = plan.add_launches();
  sum->set_kernel("aten.sum.dim_IntList");
  setBuffer(sum->add_inputs(), 32, {4});
  setBuffer(sum->add_outputs(), 48, {});
  coop_pb::Launch *update = plan.add_launches();
  update->set_kernel("aten.add_.Tensor");
  setBuffer(update->add_inputs(), 16, {4});
  setBuffer(update->add_inputs(), 32, {4});
  setBuffer(update->add_outputs(), 16, {4});
  update->add_inplace(0);
  setFloat(update, "alpha", -0.5);
  setBuffer(plan.add_outputs(), 48, {});
  return plan;
}

struct Status {
  coop_status_t status;
  Status(coop_status_t s) : status(s) {}
  ~Status() { coop_status_free(status); }
  coop_status_code_t code() const { return coop_status_code(status); }
  std::string message() const { return coop_status_message(status); }
};

struct Loaded {
  coop_plan_t *plan = nullptr;
  coop_session_t *session = nullptr;
  ~Loaded() {
    coop_session_release(session);
    coop_plan_release(plan);
  }
};

/// The bytes of a Plan file holding `proto`.
std::string planFile(const coop_pb::Plan &proto) {
  std::string bytes;
  EXPECT_TRUE(coop::planfile::write(proto, bytes));
  return bytes;
}

Status load(const coop_pb::Plan &proto, Loaded &loaded) {
  std::string bytes = planFile(proto);
  return coop_plan_load_bytes(bytes.data(), bytes.size(), &loaded.plan);
}

void bindFloats(Loaded &l, const char *name, std::vector<float> values) {
  int64_t shape[1] = {static_cast<int64_t>(values.size())};
  Status s = coop_session_bind_argument_by_name(l.session, name, COOP_DTYPE_FLOAT32, 1, shape,
                                                values.data(), values.size() * 4);
  ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
}

std::vector<float> readArgument(Loaded &l, size_t index, size_t count) {
  std::vector<float> out(count);
  Status s = coop_session_read_argument(l.session, index, out.data(), count * 4);
  EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  return out;
}

TEST(Runtime, RunsATinyStep) {
  Loaded l;
  ASSERT_EQ(load(tinyPlan(), l).code(), COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  bindFloats(l, "x", {1, 2, 3, 4});
  bindFloats(l, "w", {1, 1, 2, 2});
  ASSERT_EQ(Status(coop_session_run(l.session, 2)).code(), COOP_STATUS_OK);
  // Step 1: tmp = [1,2,6,8], loss 17, w = [0.5, 0, -1, -2].
  // Step 2: tmp = [0.5, 0, -3, -8], loss -10.5, w = [0.25, 0, 0.5, 2].
  float loss = 0;
  ASSERT_EQ(Status(coop_session_read_output(l.session, 0, &loss, 4)).code(), COOP_STATUS_OK);
  EXPECT_EQ(loss, -10.5f);
  EXPECT_EQ(readArgument(l, 1, 4), (std::vector<float>{0.25f, 0, 0.5f, 2}));
}

TEST(Runtime, RunningAllocatesNothingButTheArena) {
  Loaded l;
  ASSERT_EQ(load(tinyPlan(), l).code(), COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_init_random(l.session, 3)).code(), COOP_STATUS_OK);
  long before = heapAllocations.load();
  coop_status_t status = coop_session_run(l.session, 5);
  long during = heapAllocations.load() - before;
  ASSERT_EQ(status, nullptr);
  EXPECT_EQ(during, 0) << "heap allocations while running steps";
  coop_session_stats_t stats;
  coop_session_stats(l.session, &stats);
  EXPECT_EQ(stats.device_allocations, 1);
  EXPECT_EQ(stats.steps, 5);
  EXPECT_EQ(stats.launches, 15);
  EXPECT_EQ(stats.arena_bytes, 64);
  EXPECT_EQ(stats.high_water_mark, 52);
}

TEST(Runtime, RejectsTruncatedAndCorruptedPlans) {
  std::string bytes = planFile(tinyPlan());
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t(3)}) {
    coop_plan_t *plan = nullptr;
    Status s = coop_plan_load_bytes(bytes.data(), keep, &plan);
    EXPECT_NE(s.code(), COOP_STATUS_OK) << "kept " << keep << " bytes";
    EXPECT_EQ(plan, nullptr);
  }
  // Flip every byte in turn: never a crash; either an error or a plan that
  // still passes every check.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string corrupt = bytes;
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    coop_plan_t *plan = nullptr;
    Status s = coop_plan_load_bytes(corrupt.data(), corrupt.size(), &plan);
    EXPECT_TRUE((s.code() == COOP_STATUS_OK) == (plan != nullptr));
    coop_plan_release(plan);
  }
  std::string garbage(100, '\xff');
  coop_plan_t *plan = nullptr;
  Status s = coop_plan_load_bytes(garbage.data(), garbage.size(), &plan);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s.message().find("truncated or corrupted"), std::string::npos) << s.message();
}

TEST(Runtime, RejectsAnUnknownVersion) {
  coop_pb::Plan plan = tinyPlan();
  plan.set_format_version(coop::planfile::kFormatVersion + 1);
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s.message().find("format version 3"), std::string::npos) << s.message();
}

TEST(Runtime, NamesKernelsWithoutAnImplementation) {
  coop_pb::Plan plan = tinyPlan();
  plan.mutable_launches(0)->set_kernel("aten.frobnicate.Tensor");
  plan.mutable_launches(1)->set_kernel("aten.topk");
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_UNIMPLEMENTED);
  EXPECT_NE(s.message().find("'aten.frobnicate.Tensor', 'aten.topk'"), std::string::npos)
      << s.message();
}

TEST(Runtime, RejectsBuffersOutsideTheArenaOrTheirStorage) {
  coop_pb::Plan plan = tinyPlan();
  plan.mutable_launches(0)->mutable_outputs(0)->set_offset(56);
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s.message().find("launch #0 'aten.mul.Tensor': output #0 bytes [56, 72) lie "
                             "outside the arena of 64 bytes"),
            std::string::npos)
      << s.message();

  plan = tinyPlan();
  plan.mutable_launches(1)->mutable_inputs(0)->set_strides(0, 2); // reads past its 16 bytes
  Loaded l2;
  Status s2 = load(plan, l2);
  EXPECT_EQ(s2.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s2.message().find("reads element 6 of a 16-byte storage"), std::string::npos)
      << s2.message();

  plan = tinyPlan();
  plan.mutable_launches(0)->mutable_outputs(0)->set_dtype(coop_pb::INT64);
  Loaded l3;
  Status s3 = load(plan, l3);
  EXPECT_EQ(s3.code(), COOP_STATUS_INVALID_PLAN) << s3.message();

  plan = tinyPlan();
  plan.mutable_launches(0)->mutable_outputs(0)->set_shape(0, 3);
  Loaded l4;
  Status s4 = load(plan, l4);
  EXPECT_EQ(s4.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s4.message().find("does not broadcast"), std::string::npos) << s4.message();
}

/// fill_.Tensor of the view x[:, 1:3] of x [2, 4] (at 0) with v [1] (at
/// 32), in place, or into the same view of another storage at 48.
coop_pb::Plan fillViewPlan(bool inPlace) {
  coop_pb::Plan plan;
  plan.set_format_version(coop::planfile::kFormatVersion);
  plan.set_name("fill_view");
  plan.set_arena_bytes(96);
  addArgument(plan, "x", coop_pb::INPUT, 0, {2, 4});
  addArgument(plan, "v", coop_pb::INPUT, 32, {1});
  coop_pb::Launch *fill = plan.add_launches();
  fill->set_kernel("aten.fill_.Tensor");
  setBuffer(fill->add_inputs(), 0, {2, 2}, coop_pb::FLOAT32, {4, 1}, 1);
  setBuffer(fill->add_inputs(), 32, {1});
  setBuffer(fill->add_outputs(), inPlace ? 0 : 48, {2, 2}, coop_pb::FLOAT32, {4, 1}, 1);
  fill->mutable_inputs(0)->set_size(32);
  fill->mutable_outputs(0)->set_size(32);
  fill->add_inplace(inPlace ? 0 : -1);
  setBuffer(plan.add_outputs(), 0, {2, 4});
  return plan;
}

TEST(Runtime, FillsAStridedViewOnlyInPlace) {
  Loaded l;
  Status s = load(fillViewPlan(true), l);
  ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7}, v = {9};
  int64_t xShape[2] = {2, 4}, vShape[1] = {1};
  ASSERT_EQ(Status(coop_session_bind_argument(l.session, 0, COOP_DTYPE_FLOAT32, 2, xShape,
                                              x.data(), 32)).code(),
            COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_bind_argument(l.session, 1, COOP_DTYPE_FLOAT32, 1, vShape,
                                              v.data(), 4)).code(),
            COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_run(l.session, 1)).code(), COOP_STATUS_OK);
  EXPECT_EQ(readArgument(l, 0, 8), (std::vector<float>{0, 9, 9, 3, 4, 9, 9, 7}));

  Loaded l2;
  Status s2 = load(fillViewPlan(false), l2);
  EXPECT_EQ(s2.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s2.message().find("launch #0 'aten.fill_.Tensor' output #0 is not contiguous and "
                              "not in place"),
            std::string::npos)
      << s2.message();

  // A kernel that writes contiguously gets no view.
  coop_pb::Plan plan = fillViewPlan(true);
  plan.mutable_launches(0)->set_kernel("aten.zero_");
  plan.mutable_launches(0)->mutable_inputs()->RemoveLast();
  Loaded l3;
  Status s3 = load(plan, l3);
  EXPECT_EQ(s3.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s3.message().find("'aten.zero_' output #0 is not contiguous"), std::string::npos)
      << s3.message();
}

TEST(Runtime, BindMismatchWritesNothing) {
  Loaded l;
  ASSERT_EQ(load(tinyPlan(), l).code(), COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  bindFloats(l, "w", {1, 2, 3, 4});
  std::vector<float> user = {9, 9, 9, 9, 9};
  std::vector<float> copy = user;
  int64_t wrongShape[1] = {5};
  Status s = coop_session_bind_argument(l.session, 1, COOP_DTYPE_FLOAT32, 1, wrongShape,
                                        user.data(), 20);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("argument 'w' has shape [4], not [5]"), std::string::npos)
      << s.message();
  int64_t shape[1] = {4};
  Status d = coop_session_bind_argument(l.session, 1, COOP_DTYPE_INT64, 1, shape, user.data(),
                                        16);
  EXPECT_EQ(d.code(), COOP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(d.message().find("argument 'w' is float32, not int64"), std::string::npos)
      << d.message();
  Status z = coop_session_bind_argument(l.session, 1, COOP_DTYPE_FLOAT32, 1, shape, user.data(),
                                        12);
  EXPECT_EQ(z.code(), COOP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(user, copy);
  EXPECT_EQ(readArgument(l, 1, 4), (std::vector<float>{1, 2, 3, 4}));
  // x is still unbound.
  Status r = coop_session_run(l.session, 1);
  EXPECT_EQ(r.code(), COOP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(r.message().find("'x' is not bound"), std::string::npos) << r.message();
  std::vector<float> out(4);
  Status wrongSize = coop_session_read_argument(l.session, 1, out.data(), 8);
  EXPECT_EQ(wrongSize.code(), COOP_STATUS_INVALID_ARGUMENT);
  size_t index;
  Status missing = coop_plan_find_argument(l.plan, "nope", &index);
  EXPECT_EQ(missing.code(), COOP_STATUS_NOT_FOUND);
  coop_session_t *cuda = nullptr;
  Status backend = coop_session_create(l.plan, "tpu", &cuda);
  EXPECT_EQ(backend.code(), COOP_STATUS_UNIMPLEMENTED);
}

TEST(Runtime, CopiesOnWriteAndReadsStridedInputs) {
  // w [2, 2] at 0; out = w^T (a strided view) @ w into 16; then
  // out2 = add_(w, out) into a different buffer at 32 (copy on write).
  coop_pb::Plan plan;
  plan.set_format_version(coop::planfile::kFormatVersion);
  plan.set_name("strided");
  plan.set_arena_bytes(48);
  addArgument(plan, "w", coop_pb::PARAMETER, 0, {2, 2});
  coop_pb::Launch *mm = plan.add_launches();
  mm->set_kernel("aten.mm");
  setBuffer(mm->add_inputs(), 0, {2, 2}, coop_pb::FLOAT32, {1, 2});
  setBuffer(mm->add_inputs(), 0, {2, 2});
  setBuffer(mm->add_outputs(), 16, {2, 2});
  coop_pb::Launch *add = plan.add_launches();
  add->set_kernel("aten.add_.Tensor");
  setBuffer(add->add_inputs(), 0, {2, 2});
  setBuffer(add->add_inputs(), 16, {2, 2});
  setBuffer(add->add_outputs(), 32, {2, 2});
  add->add_inplace(0);
  coop_pb::Launch *home = plan.add_launches();
  home->set_kernel("coop.copy");
  setBuffer(home->add_inputs(), 32, {2, 2});
  setBuffer(home->add_outputs(), 0, {2, 2});
  setBuffer(plan.add_outputs(), 16, {2, 2});
  Loaded l;
  Status s = load(plan, l);
  ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  int64_t shape[2] = {2, 2};
  std::vector<float> w = {1, 2, 3, 4};
  ASSERT_EQ(coop_session_bind_argument(l.session, 0, COOP_DTYPE_FLOAT32, 2, shape, w.data(), 16),
            nullptr);
  ASSERT_EQ(coop_session_run(l.session, 1), nullptr);
  // w^T w = [[10, 14], [14, 20]]; w + that = [[11, 16], [17, 24]].
  std::vector<float> product(4);
  ASSERT_EQ(coop_session_read_output(l.session, 0, product.data(), 16), nullptr);
  EXPECT_EQ(product, (std::vector<float>{10, 14, 14, 20}));
  EXPECT_EQ(readArgument(l, 0, 4), (std::vector<float>{11, 16, 17, 24}));
}

/// Gives `launch` a Tensor[] argument `name` naming `operands`.
void setOperandList(coop_pb::Launch *launch, const char *name, std::vector<int> operands) {
  coop_pb::Argument *arg = launch->add_tensor_args();
  arg->set_name(name);
  for (int operand : operands)
    arg->mutable_value()->mutable_list()->add_items()->set_operand(operand);
}

TEST(Runtime, CatAndStackReadTheirOperandListInOrder) {
  // a [2, 2] at 0, b [2, 2] at 16; cat([b, a], dim 1) -> [2, 4] at 32;
  // stack([a, b], dim 0) -> [2, 2, 2] at 64, with b read transposed.
  auto makePlan = [](std::vector<int> catOperands, std::vector<int64_t> catShape) {
    coop_pb::Plan plan;
    plan.set_format_version(coop::planfile::kFormatVersion);
    plan.set_name("join");
    plan.set_arena_bytes(96);
    addArgument(plan, "a", coop_pb::INPUT, 0, {2, 2});
    addArgument(plan, "b", coop_pb::INPUT, 16, {2, 2});
    coop_pb::Launch *cat = plan.add_launches();
    cat->set_kernel("aten.cat");
    setBuffer(cat->add_inputs(), 0, {2, 2});
    setBuffer(cat->add_inputs(), 16, {2, 2});
    setBuffer(cat->add_outputs(), 32, catShape);
    setOperandList(cat, "tensors", catOperands);
    coop_pb::Argument *dim = cat->add_args();
    dim->set_name("dim");
    dim->mutable_value()->set_int_value(1);
    coop_pb::Launch *stack = plan.add_launches();
    stack->set_kernel("aten.stack");
    setBuffer(stack->add_inputs(), 0, {2, 2});
    setBuffer(stack->add_inputs(), 16, {2, 2}, coop_pb::FLOAT32, {1, 2});
    setBuffer(stack->add_outputs(), 64, {2, 2, 2});
    setOperandList(stack, "tensors", {0, 1});
    setBuffer(plan.add_outputs(), 32, catShape);
    setBuffer(plan.add_outputs(), 64, {2, 2, 2});
    return plan;
  };
  {
    Loaded l;
    Status s = load(makePlan({1, 0}, {2, 4}), l);
    ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
    ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
    int64_t shape[2] = {2, 2};
    std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
    ASSERT_EQ(coop_session_bind_argument(l.session, 0, COOP_DTYPE_FLOAT32, 2, shape, a.data(), 16),
              nullptr);
    ASSERT_EQ(coop_session_bind_argument(l.session, 1, COOP_DTYPE_FLOAT32, 2, shape, b.data(), 16),
              nullptr);
    ASSERT_EQ(coop_session_run(l.session, 1), nullptr);
    std::vector<float> cat(8);
    ASSERT_EQ(coop_session_read_output(l.session, 0, cat.data(), 32), nullptr);
    EXPECT_EQ(cat, (std::vector<float>{5, 6, 1, 2, 7, 8, 3, 4}));
    std::vector<float> stack(8);
    ASSERT_EQ(coop_session_read_output(l.session, 1, stack.data(), 32), nullptr);
    EXPECT_EQ(stack, (std::vector<float>{1, 2, 3, 4, 5, 7, 6, 8})); // a, then b^T
  }
  {
    Loaded l;
    Status s = load(makePlan({0, 3}, {2, 4}), l);
    EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
    EXPECT_NE(s.message().find("names an operand outside the 2 inputs"), std::string::npos)
        << s.message();
  }
  {
    Loaded l;
    Status s = load(makePlan({0, 1}, {2, 3}), l);
    EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
    EXPECT_NE(s.message().find("aten.cat"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("inputs add up to 4 along dim 1, output [2,3]"),
              std::string::npos)
        << s.message();
  }
}

/// native_dropout (p = 0.25) of x [256] at rng (11, `offset`), launched
/// `copies` times into different buffers (the later ones recomputations).
/// Outputs: each copy's values, then each copy's mask.
coop_pb::Plan dropoutPlan(int64_t offset, int copies) {
  coop_pb::Plan plan;
  plan.set_format_version(coop::planfile::kFormatVersion);
  plan.set_name("dropout");
  plan.set_arena_bytes(4096);
  addArgument(plan, "x", coop_pb::INPUT, 0, {256});
  for (int copy = 0; copy < copies; ++copy) {
    coop_pb::Launch *drop = plan.add_launches();
    drop->set_kernel("aten.native_dropout");
    setBuffer(drop->add_inputs(), 0, {256});
    setBuffer(drop->add_outputs(), 1024 + copy * 1024, {256});
    setBuffer(drop->add_outputs(), 3072 + copy * 256, {256}, coop_pb::BOOL);
    setFloat(drop, "p", 0.25);
    drop->mutable_rng()->set_seed(11);
    drop->mutable_rng()->set_offset(offset);
    if (copy)
      drop->set_recompute_of(0);
  }
  for (int k = 0; k < 2; ++k)
    for (int copy = 0; copy < copies; ++copy)
      plan.add_outputs()->CopyFrom(plan.launches(copy).outputs(k));
  return plan;
}

/// Loads `plan` into a CPU session with seeded arguments.
void startSession(const coop_pb::Plan &plan, Loaded &l) {
  Status s = load(plan, l);
  ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  ASSERT_EQ(coop_session_init_random(l.session, 5), nullptr);
}

std::vector<uint8_t> readMask(Loaded &l, size_t output) {
  std::vector<uint8_t> mask(256);
  EXPECT_EQ(coop_session_read_output(l.session, output, mask.data(), 256), nullptr);
  return mask;
}

TEST(Runtime, RecomputedDropoutRedrawsItsMask) {
  // Two launches with one rng key: the second (a recomputation) must be
  // bit-identical.
  Loaded m;
  startSession(dropoutPlan(100, 2), m);
  ASSERT_EQ(coop_session_run(m.session, 1), nullptr);
  std::vector<float> first(256), second(256);
  ASSERT_EQ(coop_session_read_output(m.session, 0, first.data(), 1024), nullptr);
  ASSERT_EQ(coop_session_read_output(m.session, 1, second.data(), 1024), nullptr);
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), 1024));
  std::vector<uint8_t> mask = readMask(m, 2);
  EXPECT_EQ(mask, readMask(m, 3));
  int kept = 0;
  for (uint8_t bit : mask)
    kept += bit;
  EXPECT_GT(kept, 160); // about 192 of 256 kept at p = 0.25
  EXPECT_LT(kept, 224);
}

TEST(Runtime, EachStepDrawsAfterTheStepsBefore) {
  // The plan's random span is 100 + 256: step 1 draws counters 456 on,
  // which a plan whose only launch starts at 456 draws in its step 0.
  Loaded twoSteps, shifted;
  startSession(dropoutPlan(100, 2), twoSteps);
  startSession(dropoutPlan(456, 1), shifted);
  EXPECT_EQ(coop_session_step_index(twoSteps.session), 0);
  ASSERT_EQ(coop_session_run(twoSteps.session, 1), nullptr);
  std::vector<uint8_t> step0 = readMask(twoSteps, 2);
  ASSERT_EQ(coop_session_run(twoSteps.session, 1), nullptr);
  EXPECT_EQ(coop_session_step_index(twoSteps.session), 2);
  std::vector<uint8_t> step1 = readMask(twoSteps, 2);
  EXPECT_NE(step0, step1);
  EXPECT_EQ(step1, readMask(twoSteps, 3)); // the recomputation, in step 1
  ASSERT_EQ(coop_session_run(shifted.session, 1), nullptr);
  EXPECT_EQ(step1, readMask(shifted, 1));

  // A session resumed at step 1 draws step 1's masks.
  Loaded resumed;
  startSession(dropoutPlan(100, 2), resumed);
  ASSERT_EQ(coop_session_set_step_index(resumed.session, 1), nullptr);
  ASSERT_EQ(coop_session_run(resumed.session, 1), nullptr);
  EXPECT_EQ(step1, readMask(resumed, 2));
  coop_session_stats_t stats;
  coop_session_stats(resumed.session, &stats);
  EXPECT_EQ(stats.steps, 2);
  Status bad = coop_session_set_step_index(resumed.session, -1);
  EXPECT_EQ(bad.code(), COOP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(bad.message().find("negative step -1"), std::string::npos) << bad.message();
}

struct OperandSpec {
  std::vector<int64_t> shape;
  coop_pb::DType dtype = coop_pb::FLOAT32;
};

/// A plan of one launch of `kernel` over `inputs` (arguments in0, in1, ...)
/// and `outputs` (the plan's outputs), laid out one after another.
coop_pb::Plan oneLaunchPlan(const char *kernel, std::vector<OperandSpec> inputs,
                            std::vector<OperandSpec> outputs) {
  coop_pb::Plan plan;
  plan.set_format_version(coop::planfile::kFormatVersion);
  plan.set_name(kernel);
  coop_pb::Launch *launch = plan.add_launches();
  launch->set_kernel(kernel);
  int64_t offset = 0;
  for (size_t k = 0; k < inputs.size() + outputs.size(); ++k) {
    bool isInput = k < inputs.size();
    const OperandSpec &spec = isInput ? inputs[k] : outputs[k - inputs.size()];
    Buffer *buffer = isInput ? launch->add_inputs() : launch->add_outputs();
    setBuffer(buffer, offset, spec.shape, spec.dtype);
    if (isInput) {
      coop_pb::PlanArgument *arg = plan.add_arguments();
      arg->set_index(plan.arguments_size() - 1);
      arg->set_name("in" + std::to_string(k));
      arg->set_role(coop_pb::INPUT);
      arg->mutable_buffer()->CopyFrom(*buffer);
    } else {
      plan.add_outputs()->CopyFrom(*buffer);
    }
    offset += (buffer->size() + 63) / 64 * 64;
  }
  plan.set_arena_bytes(offset);
  return plan;
}

/// Adds the scalar or list argument `name` to the plan's one launch.
coop_pb::Value *addArg(coop_pb::Plan &plan, const char *name) {
  coop_pb::Argument *arg = plan.mutable_launches(0)->add_args();
  arg->set_name(name);
  return arg->mutable_value();
}

void addInts(coop_pb::Plan &plan, const char *name, std::vector<int64_t> values) {
  coop_pb::Value *list = addArg(plan, name);
  for (int64_t v : values)
    list->mutable_list()->add_items()->set_int_value(v);
}

TEST(Runtime, SiluAndMishBackwardMatchTorch) {
  // torch 2 emits these (torch 1.13 decomposes them, so the exported
  // models cannot); expected: torch.ops.aten.silu_backward / mish_backward.
  std::vector<float> grad = {1, -2, 0.5, 3, -1, 0.25}, x = {-3, -0.5, 0, 0.5, 2, 8};
  std::vector<std::pair<const char *, std::vector<float>>> cases = {
      {"aten.silu_backward",
       {-0.0881041065f, -0.520077646f, 0.25f, 2.21988344f, -1.09078431f, 0.250586599f}},
      {"aten.mish_backward",
       {-0.0933931246f, -0.579021275f, 0.300000012f, 2.65927315f, -1.06931794f,
        0.250000894f}}};
  for (const auto &[kernel, expected] : cases) {
    Loaded l;
    Status s = load(oneLaunchPlan(kernel, {{{6}}, {{6}}}, {{{6}}}), l);
    ASSERT_EQ(s.code(), COOP_STATUS_OK) << s.message();
    ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
    bindFloats(l, "in0", grad);
    bindFloats(l, "in1", x);
    ASSERT_EQ(coop_session_run(l.session, 1), nullptr);
    std::vector<float> got(6);
    ASSERT_EQ(coop_session_read_output(l.session, 0, got.data(), 24), nullptr);
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_NEAR(got[k], expected[k], 1e-6 * (1 + std::abs(expected[k]))) << kernel << " #" << k;
  }
}

/// Loading `plan` fails naming its launch and `problem`.
void expectRejected(const coop_pb::Plan &plan, const std::string &problem) {
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN) << s.message();
  EXPECT_NE(s.message().find("launch #0 '" + plan.launches(0).kernel() + "': " + problem),
            std::string::npos)
      << s.message();
}

TEST(Runtime, NetKernelsRejectMalformedLaunches) {
  auto groupNorm = [](int64_t groups) {
    coop_pb::Plan plan = oneLaunchPlan("aten.native_group_norm", {{{2, 6, 4}}},
                                       {{{2, 6, 4}}, {{2, groups}}, {{2, groups}}});
    addArg(plan, "N")->set_int_value(2);
    addArg(plan, "C")->set_int_value(6);
    addArg(plan, "HxW")->set_int_value(4);
    addArg(plan, "group")->set_int_value(groups);
    addArg(plan, "eps")->set_float_value(1e-5);
    return plan;
  };
  {
    Loaded l;
    Status s = load(groupNorm(3), l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  expectRejected(groupNorm(4), "group 4 does not divide C 6");

  coop_pb::Plan backward = oneLaunchPlan(
      "aten.native_group_norm_backward", {{{2, 6, 4}}, {{2, 6, 4}}, {{2, 3}}, {{2, 3}}},
      {{{2, 6, 4}}, {{6}}, {{6}}});
  addArg(backward, "N")->set_int_value(2);
  addArg(backward, "C")->set_int_value(6);
  addArg(backward, "HxW")->set_int_value(4);
  addArg(backward, "group")->set_int_value(3);
  addInts(backward, "output_mask", {0, 1, 1});
  expectRejected(backward, "has 3 outputs; output_mask asks for 2");

  // A 1-D convolution: [1, 2, 5] by [3, 2, 3], stride 1, no padding -> [1, 3, 3].
  auto conv1d = [](std::vector<int64_t> weight, std::vector<int64_t> out) {
    coop_pb::Plan plan = oneLaunchPlan("aten.convolution", {{{1, 2, 5}}, {weight}}, {{out}});
    addInts(plan, "stride", {1});
    addInts(plan, "padding", {0});
    addInts(plan, "dilation", {1});
    addArg(plan, "transposed")->set_bool_value(false);
    addInts(plan, "output_padding", {0});
    addArg(plan, "groups")->set_int_value(1);
    return plan;
  };
  {
    Loaded l;
    Status s = load(conv1d({3, 2, 3}, {1, 3, 3}), l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  expectRejected(conv1d({3, 2, 3}, {1, 3, 4}),
                 "the output is not the convolution's: input [1,2,5], weight [3,2,3], "
                 "output [1,3,4]");
  expectRejected(conv1d({3, 2, 1, 3}, {1, 3, 3}), "only 1-D and 2-D convolutions");

  coop_pb::Plan bilinear =
      oneLaunchPlan("aten.upsample_bilinear2d.vec", {{{1, 1, 2, 2}}}, {{{1, 1, 4, 4}}});
  addInts(bilinear, "output_size", {4, 4});
  expectRejected(bilinear, "argument 'align_corners' (a bool) is missing");

  coop_pb::Plan maxPool =
      oneLaunchPlan("aten.adaptive_max_pool2d", {{{1, 2, 5, 5}}}, {{{1, 2, 2, 2}}, {{1, 2, 2, 2}}});
  addInts(maxPool, "output_size", {2, 2});
  expectRejected(maxPool, "the indices output is float32, expected int64");

  coop_pb::Plan shuffle = oneLaunchPlan("aten.pixel_shuffle", {{{1, 8, 2, 2}}}, {{{1, 2, 4, 4}}});
  addArg(shuffle, "upscale_factor")->set_int_value(3);
  expectRejected(shuffle, "packed [1,8,2,2] and shuffled [1,2,4,4] do not match by the factor 3");

  coop_pb::Plan leaky = oneLaunchPlan("aten.leaky_relu_backward", {{{4}}, {{4}}}, {{{4}}});
  addArg(leaky, "negative_slope")->set_float_value(-0.5);
  addArg(leaky, "self_is_result")->set_bool_value(true);
  expectRejected(leaky, "the backward of an in-place leaky_relu with a negative slope");
}

TEST(Runtime, MathKernelsRejectMalformedLaunches) {
  {
    Loaded l;
    coop_pb::Plan maximum = oneLaunchPlan("aten.maximum", {{{2, 1}}, {{3}}}, {{{2, 3}}});
    Status s = load(maximum, l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  expectRejected(oneLaunchPlan("aten.maximum", {{{3}}, {{4}}}, {{{4}}}),
                 "operand #0 [3] does not broadcast to the output [4]");
  expectRejected(oneLaunchPlan("aten.exp", {{{4}}}, {{{4}, coop_pb::INT64}}),
                 "the output is int64, expected float32");
  expectRejected(oneLaunchPlan("aten.gt.Scalar", {{{4}}}, {{{4}, coop_pb::BOOL}}),
                 "argument 'other' (a number) is missing");
  expectRejected(oneLaunchPlan("aten.clamp", {{{4}}}, {{{4}}}), "has neither 'min' nor 'max'");
  expectRejected(oneLaunchPlan("aten.where.self", {{{4}}, {{4}}, {{4}}}, {{{4}}}),
                 "the condition is float32, expected bool");

  auto amax = [](std::vector<int64_t> dims, std::vector<int64_t> out) {
    coop_pb::Plan plan = oneLaunchPlan("aten.amax", {{{2, 3}}}, {{out}});
    addInts(plan, "dim", dims);
    return plan;
  };
  expectRejected(amax({1}, {2, 1}),
                 "output #0 [2,1] is not the shape [2] that reducing self [2,3] leaves");
  expectRejected(amax({1, -1}, {2}), "dimension 1 appears twice");
  expectRejected(oneLaunchPlan("aten.var_mean.correction", {{{2, 3}}}, {{{}}}),
                 "has 1 outputs, expected 2");
}

TEST(Runtime, IndexingKernelsRejectMalformedLaunches) {
  constexpr coop_pb::DType kInt64 = coop_pb::INT64, kBool = coop_pb::BOOL;
  auto gather = [](OperandSpec index) {
    coop_pb::Plan plan =
        oneLaunchPlan("aten.gather", {{{2, 3}}, index}, {{index.shape, coop_pb::FLOAT32}});
    addArg(plan, "dim")->set_int_value(1);
    return plan;
  };
  {
    Loaded l;
    Status s = load(gather({{2, 5}, kInt64}), l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  expectRejected(gather({{2, 1}}), "index is float32, expected int64");
  expectRejected(gather({{3, 1}, kInt64}), "index [3,1] int64 does not fit self [2,3] float32");

  expectRejected(oneLaunchPlan("aten.where.self", {{{2}, kBool}, {{2, 3}}, {{}}}, {{{2, 3}}}),
                 "operand #0 [2] does not broadcast to the output [2,3]");

  coop_pb::Plan toCopy = oneLaunchPlan("aten._to_copy", {{{4}}}, {{{4}, kInt64}});
  addArg(toCopy, "dtype")->set_string_value("bool");
  expectRejected(toCopy, "dtype bool is not the output's int64");

  coop_pb::Plan scatter =
      oneLaunchPlan("aten.scatter.src", {{{2, 3}}, {{2, 1}, kInt64}, {{2, 1}}}, {{{2, 3}}});
  addArg(scatter, "dim")->set_int_value(1);
  addArg(scatter, "reduce")->set_string_value("add");
  expectRejected(scatter, "scatter with a reduction is not implemented");

  coop_pb::Plan select =
      oneLaunchPlan("aten.index_select", {{{4, 3}}, {{2, 2}, kInt64}}, {{{4, 3}}});
  addArg(select, "dim")->set_int_value(0);
  expectRejected(select, "index [2,2] int64 is not a vector");

  coop_pb::Plan flip = oneLaunchPlan("aten.flip", {{{4, 3}}}, {{{4, 3}}});
  addInts(flip, "dims", {2});
  expectRejected(flip, "dimension 2 is out of range for [4,3] float32");

  coop_pb::Plan max = oneLaunchPlan("aten.max.dim", {{{4, 3}}}, {{{4}}, {{4}}});
  addArg(max, "dim")->set_int_value(1);
  expectRejected(max, "the indices output is float32, expected int64");
  coop_pb::Plan argmax = oneLaunchPlan("aten.argmax", {{{4, 3}}}, {{{3}, kInt64}});
  addArg(argmax, "dim")->set_int_value(1);
  expectRejected(argmax, "indices [3] int64 are not self [4,3] float32 reduced along dim 1");

  coop_pb::Plan bce =
      oneLaunchPlan("aten.binary_cross_entropy_with_logits", {{{4, 3}}, {{4, 3}}}, {{{}}});
  addArg(bce, "reduction")->set_int_value(3);
  expectRejected(bce, "argument 'reduction' is 3, outside [0, 2]");

  coop_pb::Plan smoothL1 = oneLaunchPlan("aten.smooth_l1_loss_backward",
                                         {{{}}, {{4, 3}}, {{4, 3}}}, {{{4, 3}}});
  addArg(smoothL1, "reduction")->set_int_value(1);
  addArg(smoothL1, "beta")->set_float_value(-1);
  expectRejected(smoothL1, "argument 'beta' is -1, outside [0, )");
}

TEST(Runtime, SumAndRemainderRejectMalformedLaunches) {
  constexpr coop_pb::DType kInt64 = coop_pb::INT64, kBool = coop_pb::BOOL;
  // An integer sum counts bool or int64 elements; a float32 input is not.
  {
    Loaded l;
    Status s = load(oneLaunchPlan("aten.sum", {{{2, 3}, kBool}}, {{{}, kInt64}}), l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  expectRejected(oneLaunchPlan("aten.sum", {{{2, 3}}}, {{{}, kInt64}}),
                 "output is int64 for a float32 input; expected float32, or int64 summing "
                 "bool or int64");
  expectRejected(oneLaunchPlan("aten.mean", {{{2, 3}, kBool}}, {{{}, kInt64}}),
                 "output is int64 for a bool input");
  coop_pb::Plan byZero = oneLaunchPlan("aten.remainder.Scalar", {{{4}, kInt64}}, {{{4}, kInt64}});
  addArg(byZero, "other")->set_int_value(0);
  expectRejected(byZero, "integer remainder by zero");
  expectRejected(oneLaunchPlan("aten.remainder.Scalar", {{{4}, kInt64}}, {{{4}, kInt64}}),
                 "argument 'other' (a number) is missing");
}

} // namespace

//===----------------------------------------------------------------------===//
// The plan verifier: plans that a mutation made wrong are refused on load
//===----------------------------------------------------------------------===//

namespace {

/// Loading `plan` fails as an invalid plan with `problem` in the message.
void expectInvalid(const coop_pb::Plan &plan, const std::string &problem) {
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN) << s.message();
  EXPECT_EQ(l.plan, nullptr);
  EXPECT_NE(s.message().find(problem), std::string::npos) << s.message();
}

coop_pb::Launch *addLaunch(coop_pb::Plan &plan, const char *kernel,
                           std::vector<int64_t> inputOffsets, int64_t outputOffset,
                           std::vector<int64_t> outputShape = {4}) {
  coop_pb::Launch *launch = plan.add_launches();
  launch->set_kernel(kernel);
  for (int64_t offset : inputOffsets)
    setBuffer(launch->add_inputs(), offset, {4});
  setBuffer(launch->add_outputs(), outputOffset, outputShape);
  return launch;
}

/// A step that reads its input batch again in the backward: x [4] (input)
/// at 0, w [4] at 16; a = x * w at 32, b = a * a at 64, loss = sum(b) at
/// 80, g = b * x at 96, w += g in place.
coop_pb::Plan batchPlan() {
  coop_pb::Plan plan = planWithXAndW("batch", 112);
  addLaunch(plan, "aten.mul.Tensor", {0, 16}, 32);
  addLaunch(plan, "aten.mul.Tensor", {32, 32}, 64);
  addLaunch(plan, "aten.sum", {64}, 80, {});
  addLaunch(plan, "aten.mul.Tensor", {64, 0}, 96);
  addLaunch(plan, "aten.add_.Tensor", {16, 96}, 16)->add_inplace(0);
  setBuffer(plan.add_outputs(), 80, {});
  return plan;
}

/// The first launch of kernel `kernel` in `plan`.
coop_pb::Launch *launchOf(coop_pb::Plan &plan, const char *kernel) {
  for (coop_pb::Launch &launch : *plan.mutable_launches())
    if (launch.kernel() == kernel)
      return &launch;
  return nullptr;
}

} // namespace

TEST(PlanVerifier, AcceptsAndRunsAValidStep) {
  Loaded l;
  ASSERT_EQ(load(batchPlan(), l).code(), COOP_STATUS_OK);
  ASSERT_EQ(Status(coop_session_create(l.plan, "cpu", &l.session)).code(), COOP_STATUS_OK);
  bindFloats(l, "x", {1, 2, 3, 4});
  bindFloats(l, "w", {1, 1, 1, 1});
  ASSERT_EQ(coop_session_run(l.session, 1), nullptr);
  float loss = 0;
  ASSERT_EQ(coop_session_read_output(l.session, 0, &loss, 4), nullptr);
  EXPECT_EQ(loss, 1 + 4 + 9 + 16); // sum((x * w)^2)
}

TEST(PlanVerifier, AcceptsAnEmptyInputAnywhere) {
  coop_pb::Plan plan = batchPlan();
  addArgument(plan, "empty", coop_pb::INPUT, 8, {0}); // zero bytes inside x
  Loaded l;
  Status s = load(plan, l);
  EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
}

TEST(PlanVerifier, RefusesAnArgumentMovedOntoAnother) {
  coop_pb::Plan plan = batchPlan();
  plan.mutable_arguments(1)->mutable_buffer()->set_offset(0);
  expectInvalid(plan, "invalid Plan: argument #1 'w' (bytes [0, 16)) overlaps argument #0 'x' "
                      "(bytes [0, 16))");
}

TEST(PlanVerifier, RefusesALaunchOverwritingTheBatchThatTheBackwardReads) {
  // The loss written over the batch: the backward would read a torn batch.
  coop_pb::Plan plan = batchPlan();
  plan.mutable_launches(2)->mutable_outputs(0)->set_offset(0);
  plan.mutable_outputs(0)->set_offset(0);
  expectInvalid(plan, "launch #3 'aten.mul.Tensor': input #1 reads bytes [0, 16), which hold no "
                      "single value there: launch #2 'aten.sum' output #0 (bytes [0, 4)) wrote "
                      "over them");
  // b moved onto the batch, exactly, and its readers with it: every read
  // finds whole values, but the batch is gone.
  plan = batchPlan();
  for (int l : {1, 2, 3})
    for (Buffer &buffer : *(l == 1 ? plan.mutable_launches(l)->mutable_outputs()
                                   : plan.mutable_launches(l)->mutable_inputs()))
      if (buffer.offset() == 64)
        buffer.set_offset(0);
  expectInvalid(plan, "argument #0 'x' at the end of the step: its storage holds launch #1 "
                      "'aten.mul.Tensor' output #0 (bytes [0, 16)) instead of the input");
  // b moved alone: its readers read bytes nobody wrote.
  plan = batchPlan();
  plan.mutable_launches(1)->mutable_outputs(0)->set_offset(0);
  expectInvalid(plan, "launch #2 'aten.sum': input #0 reads bytes [64, 80), which no argument "
                      "and no earlier launch of the step wrote");
}

TEST(PlanVerifier, RefusesAValueReadAsAnotherDtype) {
  coop_pb::Plan plan = batchPlan();
  plan.mutable_launches(2)->mutable_inputs(0)->set_dtype(coop_pb::INT32);
  expectInvalid(plan, "launch #2 'aten.sum': input #0 reads launch #1 'aten.mul.Tensor' output #0 "
                      "(bytes [64, 80)) as int32; it was written as float32");
}

TEST(PlanVerifier, RefusesAnOutputOverlappingAnInputNotDeclaredInPlace) {
  coop_pb::Plan plan = batchPlan();
  plan.mutable_launches(4)->clear_inplace();
  expectInvalid(plan, "launch #4 'aten.add_.Tensor': output #0 (bytes [16, 32)) overlaps input "
                      "#0 (bytes [16, 32)) without overwriting it in place");
  plan = batchPlan();
  plan.mutable_launches(1)->mutable_outputs(0)->set_offset(40); // half over a
  plan.mutable_launches(1)->mutable_outputs(0)->set_size(16);
  expectInvalid(plan, "launch #1 'aten.mul.Tensor': output #0 (bytes [40, 56)) overlaps input "
                      "#0 (bytes [32, 48))");
}

TEST(PlanVerifier, RefusesPlanFilesCutOrAltered) {
  std::string bytes = planFile(batchPlan());
  // Cut anywhere, at a record boundary of the Plan or not.
  for (size_t keep = 0; keep < bytes.size(); ++keep) {
    coop_plan_t *plan = nullptr;
    Status s = coop_plan_load_bytes(bytes.data(), keep, &plan);
    EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN) << "kept " << keep << " bytes";
    EXPECT_EQ(plan, nullptr);
  }
  // A Plan whose last launches and outputs are gone, as a bare Plan file
  // (what a cut at a record boundary left before files had a checksum).
  coop_pb::Plan cut = batchPlan();
  cut.mutable_launches()->DeleteSubrange(2, 3);
  cut.clear_outputs();
  std::string bare = cut.SerializeAsString();
  coop_plan_t *plan = nullptr;
  Status s = coop_plan_load_bytes(bare.data(), bare.size(), &plan);
  EXPECT_EQ(s.code(), COOP_STATUS_INVALID_PLAN);
  EXPECT_NE(s.message().find("holds no plan"), std::string::npos) << s.message();
  // Any single byte altered: refused.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string altered = bytes;
    altered[i] = static_cast<char>(altered[i] ^ 0x01);
    Status t = coop_plan_load_bytes(altered.data(), altered.size(), &plan);
    EXPECT_EQ(t.code(), COOP_STATUS_INVALID_PLAN) << "byte " << i;
    EXPECT_EQ(plan, nullptr);
  }
  std::string altered = bytes;
  altered[altered.size() - 3] ^= 0x01; // inside the Plan's bytes
  Status t = coop_plan_load_bytes(altered.data(), altered.size(), &plan);
  EXPECT_NE(t.message().find("corrupted: the plan's bytes were altered"), std::string::npos)
      << t.message();
}

TEST(PlanVerifier, RefusesMalformedDropoutArguments) {
  auto dropout = [] {
    coop_pb::Plan plan =
        oneLaunchPlan("aten.native_dropout", {{{4}}}, {{{4}}, {{4}, coop_pb::BOOL}});
    addArg(plan, "p")->set_float_value(0.5);
    addArg(plan, "train")->set_bool_value(true);
    plan.mutable_launches(0)->mutable_rng()->set_seed(1);
    return plan;
  };
  {
    Loaded l;
    Status s = load(dropout(), l);
    EXPECT_EQ(s.code(), COOP_STATUS_OK) << s.message();
  }
  coop_pb::Plan plan = dropout();
  plan.mutable_launches(0)->clear_rng();
  expectRejected(plan, "is a random kernel without an rng stream");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->mutable_value()->set_float_value(2.0);
  expectRejected(plan, "argument 'p' is 2, outside [0, 1]");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->mutable_value()->set_float_value(std::nan(""));
  expectRejected(plan, "argument 'p' is nan, outside [0, 1]");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->mutable_value()->set_string_value("abc");
  expectRejected(plan, "argument 'p' is a string, expected a float");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->set_name("q");
  expectRejected(plan, "argument 'q' is not one the kernel reads (it reads p, train)");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args()->DeleteSubrange(0, 1);
  expectRejected(plan, "argument 'p' (a float in [0, 1]) is missing");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->clear_value();
  expectRejected(plan, "argument 'p' has no value");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(0)->mutable_value()->set_none(true);
  expectRejected(plan, "argument 'p' (a float in [0, 1]) is None");
  plan = dropout();
  *plan.mutable_launches(0)->add_args() = plan.launches(0).args(0);
  expectRejected(plan, "argument 'p' is given twice");
  plan = dropout();
  plan.mutable_launches(0)->mutable_args(1)->set_name("");
  expectRejected(plan, "has an argument without a name");
}

TEST(PlanVerifier, RefusesPoolingWindowsAndViewsThatDoNotFitTheirShapes) {
  // A 5x5 window on a 4x4 input.
  coop_pb::Plan pool = oneLaunchPlan("aten.max_pool2d_with_indices", {{{1, 1, 4, 4}}},
                                     {{{1, 1, 1, 1}}, {{1, 1, 1, 1}, coop_pb::INT64}});
  addInts(pool, "kernel_size", {5, 5});
  expectRejected(pool, "the window 5x5 does not fit the padded input [1,1,4,4]");
  // A 2x2 window whose output is not the pooled size.
  pool = oneLaunchPlan("aten.max_pool2d_with_indices", {{{1, 1, 4, 4}}},
                       {{{1, 1, 3, 3}}, {{1, 1, 3, 3}, coop_pb::INT64}});
  addInts(pool, "kernel_size", {2, 2});
  expectRejected(pool, "output [1,1,3,3] is not the pooling of [1,1,4,4]");
  // A view of 128 elements as 7x9, its `size` agreeing or not.
  coop_pb::Plan view = oneLaunchPlan("aten.view", {{{128}}}, {{{7, 9}}});
  expectRejected(view, "copies [128] float32 into [7,9] float32");
  view = oneLaunchPlan("aten.view", {{{128}}}, {{{16, 8}}});
  addInts(view, "size", {8, 16});
  expectRejected(view, "size [8,16] is not the output's shape [16,8]");
  // An expand of [128] to [16, 16], as the strided buffer it folds into:
  // it reads past the 128 elements of its storage.
  view = oneLaunchPlan("aten.clone", {{{128}}}, {{{16, 16}}});
  Buffer *expanded = view.mutable_launches(0)->mutable_inputs(0);
  expanded->clear_shape();
  expanded->clear_strides();
  for (int64_t d : {16, 16})
    expanded->add_shape(d);
  for (int64_t s : {16, 1})
    expanded->add_strides(s);
  expectInvalid(view, "input #0 reads element 255 of a 512-byte storage of float32");
}

TEST(PlanVerifier, RefusesOffsetsSizesAndStridesNear2To63) {
  constexpr int64_t kMax = INT64_MAX;
  auto mutated = [](auto mutate) {
    coop_pb::Plan plan = batchPlan();
    mutate(plan.mutable_launches(0)->mutable_outputs(0));
    return plan;
  };
  expectInvalid(mutated([](Buffer *b) { b->set_offset(kMax - 8); }),
                "output #0 offset 9223372036854775799 and size 16 lie outside the arena");
  expectInvalid(mutated([](Buffer *b) { b->set_size(kMax); }),
                "output #0 offset 32 and size 9223372036854775807 lie outside the arena");
  expectInvalid(mutated([](Buffer *b) { b->set_strides(0, int64_t(1) << 62); }),
                "output #0 has a shape, strides or element offset whose element count or "
                "extent overflows 64 bits");
  expectInvalid(mutated([](Buffer *b) { b->set_element_offset(kMax - 1); }),
                "output #0 has a shape, strides or element offset whose element count or "
                "extent overflows 64 bits");
  // Its last element fits in 64 bits, that element's bytes do not.
  expectInvalid(mutated([](Buffer *b) { b->set_element_offset(kMax - 20); }),
                "output #0 reads element 9223372036854775790 of a 16-byte storage");
  expectInvalid(mutated([](Buffer *b) { b->set_shape(0, int64_t(1) << 62); }), "overflow");
}

TEST(PlanVerifier, EveryKernelDeclaresAnArgumentSchemaThatParses) {
  for (const std::string &name : coop::rt::kernelNames()) {
    const coop::rt::KernelDef *kernel = coop::rt::findKernel(name);
    ASSERT_NE(kernel, nullptr) << name;
    ASSERT_NE(kernel->args, nullptr) << name;
    std::string error;
    coop::rt::parseArgSchema(kernel->args, error);
    EXPECT_EQ(error, "") << name;
  }
  std::string error;
  coop::rt::parseArgSchema("p:real", error);
  EXPECT_EQ(error, "malformed entry 'p:real'");
  coop::rt::parseArgSchema("p:float[0,1", error);
  EXPECT_EQ(error, "malformed range in 'p:float[0,1'");
}
