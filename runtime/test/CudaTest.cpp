//===- CudaTest.cpp - The CUDA backend against the CPU reference ----------===//
//
// Built only with the CUDA backend. Every test that needs a GPU skips,
// printing why, when `coop_session_create(plan, "cuda")` finds none; the
// no-device test checks that this is a clear error (not a crash) both in
// the C API and in coop-run.
//
// Plans: models/mlp.mlir compiled by coop-opt at ratio 1 with policy none
// (unconstrained) and at ratio 0.5 with policy coop (the bundled half-budget
// plan), seeded init, 3 steps.
//
//===----------------------------------------------------------------------===//

#include "coop/runtime.h"
#include "cuda/CudaBackend.h"

#include "PlanFileFormat.h"
#include "plan.pb.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr int kSteps = 3;
// CUDA vs CPU, elementwise over the losses and every float32 argument
// after kSteps steps: |cuda - cpu| <= kAtol + kRtol * |cpu|. cuBLAS sums
// the products in float32, the CPU reference in double.
constexpr double kRtol = 1e-3, kAtol = 1e-4;

struct Result {
  std::vector<float> losses;
  std::vector<coop_tensor_info_t> infos;
  std::vector<std::vector<char>> arguments;
  coop_session_stats_t stats{};
};

/// A directory for the plans, removed when the test binary exits.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/coop-cuda-test-XXXXXX";
    if (const char *made = mkdtemp(pattern))
      path = made;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
};

std::string tempDir() {
  static TempDir dir;
  return dir.path.empty() ? "/tmp" : dir.path;
}

/// models/mlp.mlir compiled with `options` into a Plan file; "" on failure.
std::string compilePlan(const std::string &options, const std::string &name) {
  std::string rt = tempDir() + "/" + name + ".rt.mlir", plan = tempDir() + "/" + name + ".plan";
  std::string command = std::string(COOP_OPT) + " " + COOP_MLP + " \"--coop-compile=" + options +
                        "\" -o " + rt + " && " + COOP_TRANSLATE + " --coop-rt-to-plan " + rt +
                        " -o " + plan;
  return std::system(command.c_str()) == 0 ? plan : "";
}

const std::string &fullPlan() {
  static std::string plan = compilePlan("ratio=1 policy=none", "full");
  return plan;
}
const std::string &halfPlan() {
  static std::string plan = compilePlan("ratio=0.5 policy=coop", "half");
  return plan;
}

/// Runs `steps` steps of `path` on `backend`; "" or the failure.
std::string runPlan(const std::string &path, const char *backend, Result &out, int repeat = 0) {
  coop_plan_t *plan = nullptr;
  std::string error;
  auto take = [&](coop_status_t status) {
    error = coop_status_message(status);
    coop_status_free(status);
    return error;
  };
  if (coop_status_t status = coop_plan_load_file(path.c_str(), &plan))
    return take(status);
  coop_session_t *session = nullptr;
  if (coop_status_t status = coop_session_create(plan, backend, &session)) {
    coop_plan_release(plan);
    return take(status);
  }
  std::vector<double> times(coop_plan_launch_count(plan));
  coop_status_t status = coop_session_init_random(session, 1);
  for (int s = 0; s < kSteps && !status; ++s) {
    status = repeat ? coop_session_profile(session, repeat, times.data(), times.size())
                    : coop_session_run(session, 1);
    float loss = 0;
    if (!status)
      status = coop_session_read_output(session, 0, &loss, sizeof loss);
    out.losses.push_back(loss);
  }
  for (size_t i = 0; i < coop_plan_argument_count(plan) && !status; ++i) {
    coop_tensor_info_t info;
    coop_plan_argument_info(plan, i, &info);
    out.infos.push_back(info);
    out.arguments.emplace_back(info.byte_size);
    status = coop_session_read_argument(session, i, out.arguments.back().data(), info.byte_size);
  }
  coop_session_stats(session, &out.stats);
  if (status)
    take(status);
  for (double t : times)
    if (repeat && !(t > 0) && error.empty())
      error = "a profiled launch took no time";
  coop_session_release(session);
  coop_plan_release(plan);
  return error;
}

/// "" when a session on "cuda" can be created, else why not.
const std::string &noDeviceReason() {
  static std::string reason = [] {
    if (fullPlan().empty())
      return std::string("cannot compile models/mlp.mlir");
    coop_plan_t *plan = nullptr;
    if (coop_status_t status = coop_plan_load_file(fullPlan().c_str(), &plan)) {
      std::string why = coop_status_message(status);
      coop_status_free(status);
      return why;
    }
    coop_session_t *session = nullptr;
    std::string why;
    if (coop_status_t status = coop_session_create(plan, "cuda", &session)) {
      why = coop_status_message(status);
      coop_status_free(status);
    }
    coop_session_release(session);
    coop_plan_release(plan);
    return why;
  }();
  return reason;
}

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    if (!noDeviceReason().empty())                                             \
      GTEST_SKIP() << "no GPU for the CUDA backend: " << noDeviceReason();     \
  } while (0)

TEST(CudaBackend, NoDeviceIsAClearErrorNotACrash) {
  ASSERT_FALSE(fullPlan().empty());
  const std::string &reason = noDeviceReason();
  if (reason.empty()) {
    SUCCEED() << "a CUDA device is present; the other tests run on it";
    return;
  }
  std::printf("no device: %s\n", reason.c_str());
  EXPECT_EQ(reason.rfind("no CUDA device: ", 0), 0u) << reason;
  // coop-run: one line on stderr, exit status 1.
  std::string command = std::string(COOP_RUN) + " " + fullPlan() +
                        " --backend cuda --steps 1 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_NE(output.find("coop-run: cannot create a session: no CUDA device: "),
            std::string::npos)
      << output;
}

// No device needed: every kernel of the bundled MLP's plans is one the CUDA
// backend runs (so a GPU session is not refused), and kernels it lacks are
// reported as such.
TEST(CudaBackend, CoversTheBundledMlp) {
  for (const std::string *path : {&fullPlan(), &halfPlan()}) {
    ASSERT_FALSE(path->empty());
    coop_plan_t *plan = nullptr;
    coop_status_t status = coop_plan_load_file(path->c_str(), &plan);
    ASSERT_EQ(status, nullptr) << coop_status_message(status);
    for (size_t l = 0; l < coop_plan_launch_count(plan); ++l)
      EXPECT_TRUE(coop::rt::cudaHasKernel(coop_plan_launch_kernel(plan, l)))
          << coop_plan_launch_kernel(plan, l);
    coop_plan_release(plan);
  }
  EXPECT_TRUE(coop::rt::cudaHasKernel("aten.mul_.Scalar"));
  EXPECT_FALSE(coop::rt::cudaHasKernel("aten.no_such_kernel"));
}

TEST(CudaBackend, MlpMatchesTheCpuBackend) {
  SKIP_WITHOUT_GPU();
  Result cpu, cuda;
  ASSERT_EQ(runPlan(fullPlan(), "cpu", cpu), "");
  ASSERT_EQ(runPlan(fullPlan(), "cuda", cuda), "");
  EXPECT_EQ(cuda.stats.device_allocations, 1);
  auto close = [](double got, double want) {
    return std::fabs(got - want) <= kAtol + kRtol * std::fabs(want);
  };
  for (int s = 0; s < kSteps; ++s)
    EXPECT_TRUE(close(cuda.losses[s], cpu.losses[s]))
        << "step " << s + 1 << ": cuda " << cuda.losses[s] << ", cpu " << cpu.losses[s];
  ASSERT_EQ(cpu.arguments.size(), cuda.arguments.size());
  for (size_t i = 0; i < cpu.arguments.size(); ++i) {
    const std::vector<char> &a = cuda.arguments[i], &b = cpu.arguments[i];
    if (cpu.infos[i].dtype != COOP_DTYPE_FLOAT32) {
      EXPECT_TRUE(a == b) << "argument '" << cpu.infos[i].name << "' differs";
      continue;
    }
    const float *x = reinterpret_cast<const float *>(a.data());
    const float *y = reinterpret_cast<const float *>(b.data());
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < a.size() / 4; ++k)
      if (!close(x[k], y[k]) && bad++ == 0)
        first = k;
    EXPECT_EQ(bad, 0u) << "argument '" << cpu.infos[i].name << "': " << bad
                       << " elements out of tolerance, first #" << first << ": cuda "
                       << x[first] << ", cpu " << y[first];
  }
}

TEST(CudaBackend, HalfBudgetPlanIsBitIdenticalOnTheGpu) {
  SKIP_WITHOUT_GPU();
  ASSERT_FALSE(halfPlan().empty());
  Result full, half;
  ASSERT_EQ(runPlan(fullPlan(), "cuda", full), "");
  ASSERT_EQ(runPlan(halfPlan(), "cuda", half), "");
  EXPECT_LT(half.stats.arena_bytes, full.stats.arena_bytes);
  EXPECT_EQ(half.stats.device_allocations, 1);
  for (int s = 0; s < kSteps; ++s) {
    uint32_t a, b;
    std::memcpy(&a, &full.losses[s], 4);
    std::memcpy(&b, &half.losses[s], 4);
    EXPECT_EQ(a, b) << "step " << s + 1 << " loss";
  }
  ASSERT_EQ(full.arguments.size(), half.arguments.size());
  for (size_t i = 0; i < full.arguments.size(); ++i)
    EXPECT_TRUE(full.arguments[i] == half.arguments[i])
        << "argument '" << full.infos[i].name << "' differs";
}

TEST(CudaBackend, ProfiledStepsComputeWhatPlainStepsDo) {
  SKIP_WITHOUT_GPU();
  Result plain, profiled;
  ASSERT_EQ(runPlan(halfPlan(), "cuda", plain), "");
  ASSERT_EQ(runPlan(halfPlan(), "cuda", profiled, /*repeat=*/2), "");
  EXPECT_TRUE(plain.losses == profiled.losses);
  EXPECT_TRUE(plain.arguments == profiled.arguments);
}

TEST(CudaBackend, RejectsUnsupportedKernelsByName) {
  SKIP_WITHOUT_GPU();
  // hardswish, a CPU kernel outside the zoo that the CUDA backend lacks:
  // x [2, 2] at 0 -> [2, 2] at 16.
  ASSERT_FALSE(coop::rt::cudaHasKernel("aten.hardswish"));
  coop_pb::Plan proto;
  proto.set_format_version(coop::planfile::kFormatVersion);
  proto.set_name("hardswish");
  proto.set_arena_bytes(32);
  auto buffer = [](coop_pb::Buffer *b, int64_t offset) {
    b->set_offset(offset);
    b->set_size(16);
    b->set_dtype(coop_pb::FLOAT32);
    for (int64_t stride : {2, 1}) {
      b->add_shape(2);
      b->add_strides(stride);
    }
  };
  auto *x = proto.add_arguments();
  x->set_name("x");
  x->set_role(coop_pb::INPUT);
  buffer(x->mutable_buffer(), 0);
  auto *launch = proto.add_launches();
  launch->set_kernel("aten.hardswish");
  buffer(launch->add_inputs(), 0);
  buffer(launch->add_outputs(), 16);
  std::string bytes;
  ASSERT_TRUE(coop::planfile::write(proto, bytes));
  coop_plan_t *plan = nullptr;
  coop_status_t status = coop_plan_load_bytes(bytes.data(), bytes.size(), &plan);
  ASSERT_EQ(status, nullptr) << coop_status_message(status); // the CPU has it
  coop_session_t *session = nullptr;
  status = coop_session_create(plan, "cuda", &session);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(coop_status_code(status), COOP_STATUS_UNIMPLEMENTED);
  EXPECT_STREQ(coop_status_message(status), "backend 'cuda' has no kernel for 'aten.hardswish'");
  EXPECT_EQ(session, nullptr);
  coop_status_free(status);
  coop_plan_release(plan);
}

} // namespace
