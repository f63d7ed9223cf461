//===- coop-run.cpp - Run a planned training step -------------------------===//
//
// coop-run plan.pb [--backend cpu|cuda] [--steps N] [--init graph.pb | --seed S]
//                  [--dump-arguments out.bin] [--quiet]
//                  [--profile table.txt [--repeat N]]
// coop-run plan.pb --check [--backend cpu|cuda]
// coop-run --list-kernels
//
// Prints one line per step (step, loss, wall time, arena high-water mark)
// and a summary. The loss is also printed as a hexadecimal float, exact to
// the bit. With --profile every step is a profiled step (each launch runs
// a warm-up and N timed runs) and the launches' times are written as a
// cost-model profile table (docs/cost-model.md), one line per kernel and
// operand signatures: the median of its launches' medians. With --check
// the plan is only loaded, which verifies it (the plan verifier: buffers,
// the values every launch reads, arguments against the kernels' schemas;
// the first violation is printed) and the backend has every kernel; no
// session is created and no arena allocated. --steps takes 0 to 1000000,
// --seed 0 to 2^63-1, --repeat 1 to 1000000.
// --list-kernels prints the runtime's kernel registry, one name a line
// (what the exporter checks a step against).
//
//===----------------------------------------------------------------------===//

#include "coop/runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

int usage(const char *message) {
  std::fprintf(stderr,
               "coop-run: %s\n"
               "usage: coop-run PLAN [--backend cpu|cuda] [--steps N] "
               "[--init GRAPH.pb | --seed S] [--dump-arguments OUT.bin] [--quiet]\n"
               "                [--profile TABLE.txt [--repeat N]]\n"
               "       coop-run PLAN --check [--backend cpu|cuda]\n"
               "       coop-run --list-kernels\n",
               message);
  return 2;
}

int fail(coop_status_t status, const char *what) {
  std::fprintf(stderr, "coop-run: %s: %s\n", what, coop_status_message(status));
  coop_status_free(status);
  return 1;
}

/// The numeric options and their accepted ranges (docs/runtime.md).
constexpr long long kMaxSteps = 1000000, kMaxRepeat = 1000000;
constexpr long long kMaxSeed = std::numeric_limits<long long>::max();

/// Reads option `name`'s value, an integer in [low, high]; else prints
/// why, naming the option and its range, and returns false.
bool parseOption(const char *name, const char *text, long long low, long long high,
                 long long &out) {
  char *end = nullptr;
  errno = 0;
  long long value = text ? std::strtoll(text, &end, 10) : 0;
  if (!text || end == text || *end != '\0' || errno == ERANGE || value < low || value > high) {
    std::string message = std::string(name) + " needs an integer in [" + std::to_string(low) +
                          ", " + std::to_string(high) + "]" +
                          (text ? std::string(", not '") + text + "'" : "");
    usage(message.c_str());
    return false;
  }
  out = value;
  return true;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Writes the profile table: per (kernel, operand signatures) the median of
/// its launches' times, in the format coop::cost::ProfileTable parses.
bool writeProfile(FILE *out, const coop_plan_t *plan, const std::string &backend,
                  long long steps, long long repeat,
                  const std::map<std::pair<std::string, std::string>, std::vector<double>> &times) {
  std::fprintf(out,
               "# coop-run profile of plan '%s' on backend %s: %lld step(s), each launch a "
               "warm-up and %lld timed run(s)\n"
               "# kernel  operand-signatures  microseconds (median over launches and steps)\n",
               coop_plan_name(plan), backend.c_str(), steps, repeat);
  for (const auto &[key, samples] : times)
    std::fprintf(out, "%s  %s  %.6g  # %zu sample(s)\n", key.first.c_str(), key.second.c_str(),
                 median(samples), samples.size());
  return std::fclose(out) == 0;
}

} // namespace

int main(int argc, char **argv) {
  const char *planPath = nullptr, *init = nullptr, *dump = nullptr, *profile = nullptr;
  long long repeat = 5;
  bool repeatGiven = false;
  std::string backend = "cpu";
  long long steps = 1, seed = 0;
  bool seeded = false, quiet = false, check = false, sessionOption = false;
  if (argc == 2 && std::string(argv[1]) == "--list-kernels") {
    for (size_t k = 0; k < coop_kernel_count(); ++k)
      std::printf("%s\n", coop_kernel_name(k));
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    sessionOption |= arg == "--steps" || arg == "--seed" ||
                     arg == "--init" || arg == "--dump-arguments" || arg == "--profile" ||
                     arg == "--repeat";
    if (arg == "--backend") {
      const char *v = value();
      if (!v)
        return usage("--backend needs a value");
      backend = v;
    } else if (arg == "--steps") {
      if (!parseOption("--steps", value(), 0, kMaxSteps, steps))
        return 2;
    } else if (arg == "--seed") {
      if (!parseOption("--seed", value(), 0, kMaxSeed, seed))
        return 2;
      seeded = true;
    } else if (arg == "--init") {
      if (!(init = value()))
        return usage("--init needs a TrainingGraph file");
    } else if (arg == "--dump-arguments") {
      if (!(dump = value()))
        return usage("--dump-arguments needs a file name");
    } else if (arg == "--profile") {
      if (!(profile = value()))
        return usage("--profile needs a table file name");
    } else if (arg == "--repeat") {
      if (!parseOption("--repeat", value(), 1, kMaxRepeat, repeat))
        return 2;
      repeatGiven = true;
    } else if (arg == "--check") {
      check = true;
    } else if (arg == "--quiet") {
      quiet = true;
    } else if (arg == "-h" || arg == "--help") {
      usage("run a planned training step");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else if (planPath) {
      return usage("more than one plan file");
    } else {
      planPath = argv[i];
    }
  }
  if (!planPath)
    return usage("no plan file");
  if (init && seeded)
    return usage("--init and --seed exclude each other");
  if (repeatGiven && !profile)
    return usage("--repeat needs --profile");
  if (check && sessionOption)
    return usage("--check loads the plan only (and checks that the backend runs every launch): "
                 "it takes no step, init, dump or profile options");

  coop_plan_t *plan = nullptr;
  if (coop_status_t status = coop_plan_load_file(planPath, &plan))
    return fail(status, "cannot load the plan");
  if (check) {
    // Loading checked every buffer and every launch against its CPU
    // reference kernel; another backend may implement fewer.
    if (coop_status_t status = coop_plan_check_backend(plan, backend.c_str())) {
      coop_plan_release(plan);
      return fail(status, "cannot run the plan");
    }
    std::printf("plan '%s': %zu launches, arena %lld bytes: verified (docs/runtime.md); every "
                "launch has a %s kernel that accepts it\n",
                coop_plan_name(plan), coop_plan_launch_count(plan),
                static_cast<long long>(coop_plan_arena_bytes(plan)), backend.c_str());
    coop_plan_release(plan);
    return 0;
  }
  coop_session_t *session = nullptr;
  if (coop_status_t status = coop_session_create(plan, backend.c_str(), &session)) {
    coop_plan_release(plan);
    return fail(status, "cannot create a session");
  }
  int rc = 0;
  auto finish = [&](int code) {
    coop_session_release(session);
    coop_plan_release(plan);
    return code;
  };
  coop_status_t status = init ? coop_session_init_from_training_graph(session, init)
                              : coop_session_init_random(session, static_cast<uint64_t>(seed));
  if (status)
    return finish(fail(status, "cannot initialize the arguments"));

  coop_tensor_info_t lossInfo{};
  bool hasLoss = coop_plan_output_count(plan) > 0 &&
                 !coop_plan_output_info(plan, 0, &lossInfo) &&
                 lossInfo.dtype == COOP_DTYPE_FLOAT32 && lossInfo.byte_size == 4;
  std::printf("plan '%s': %zu launches, arena %lld bytes, backend %s, %lld steps%s\n",
              coop_plan_name(plan), coop_plan_launch_count(plan),
              static_cast<long long>(coop_plan_arena_bytes(plan)), backend.c_str(), steps,
              profile ? (", profiled: a warm-up and " + std::to_string(repeat) +
                         " timed run(s) per launch").c_str()
                      : "");
  // Opened before the steps run: an unwritable table fails at once.
  FILE *profileFile = profile ? std::fopen(profile, "w") : nullptr;
  if (profile && !profileFile) {
    std::fprintf(stderr, "coop-run: cannot write '%s'\n", profile);
    return finish(1);
  }
  size_t launchCount = coop_plan_launch_count(plan);
  std::vector<double> launchUs(launchCount);
  std::map<std::pair<std::string, std::string>, std::vector<double>> profileTimes;
  double total = 0;
  float firstLoss = 0, loss = 0;
  for (long long s = 0; s < steps; ++s) {
    auto start = std::chrono::steady_clock::now();
    if (profile) {
      if (coop_status_t status = coop_session_profile(session, static_cast<int32_t>(repeat),
                                                      launchUs.data(), launchCount)) {
        std::fclose(profileFile);
        std::remove(profile);
        return finish(fail(status, "profiled step failed"));
      }
      for (size_t l = 0; l < launchCount; ++l)
        profileTimes[{coop_plan_launch_kernel(plan, l), coop_plan_launch_signature(plan, l)}]
            .push_back(launchUs[l]);
    } else if (coop_status_t status = coop_session_run(session, 1)) {
      return finish(fail(status, "step failed"));
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          start).count();
    total += ms;
    if (hasLoss && (status = coop_session_read_output(session, 0, &loss, sizeof loss)))
      return finish(fail(status, "cannot read the loss"));
    if (s == 0)
      firstLoss = loss;
    coop_session_stats_t stats;
    coop_session_stats(session, &stats);
    if (!quiet) {
      if (hasLoss)
        std::printf("step %lld  loss %.7g (%a)  %.3f ms  high-water %lld / %lld bytes\n",
                    s + 1, loss, loss, ms, static_cast<long long>(stats.high_water_mark),
                    static_cast<long long>(stats.arena_bytes));
      else
        std::printf("step %lld  %.3f ms  high-water %lld / %lld bytes\n", s + 1, ms,
                    static_cast<long long>(stats.high_water_mark),
                    static_cast<long long>(stats.arena_bytes));
    }
  }
  coop_session_stats_t stats;
  coop_session_stats(session, &stats);
  std::printf("summary: %lld steps, %.3f ms total, %.3f ms/step, loss %.7g -> %.7g, "
              "%lld launches, %lld device allocation(s), high-water %lld of %lld bytes\n",
              steps, total, steps ? total / steps : 0.0, firstLoss, loss,
              static_cast<long long>(stats.launches),
              static_cast<long long>(stats.device_allocations),
              static_cast<long long>(stats.high_water_mark),
              static_cast<long long>(stats.arena_bytes));

  if (profile) {
    if (!writeProfile(profileFile, plan, backend, steps, repeat, profileTimes)) {
      std::fprintf(stderr, "coop-run: cannot write '%s'\n", profile);
      return finish(1);
    }
    std::printf("profile: %zu kernel/shape entries from %zu launches written to %s\n",
                profileTimes.size(), launchCount, profile);
  }

  if (dump) {
    FILE *out = std::fopen(dump, "wb");
    if (!out) {
      std::fprintf(stderr, "coop-run: cannot write '%s'\n", dump);
      return finish(1);
    }
    for (size_t i = 0; i < coop_plan_argument_count(plan) && rc == 0; ++i) {
      coop_tensor_info_t info;
      coop_plan_argument_info(plan, i, &info);
      std::vector<char> bytes(info.byte_size);
      if (coop_status_t status =
              coop_session_read_argument(session, i, bytes.data(), bytes.size()))
        rc = fail(status, "cannot read an argument");
      else if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
        rc = 1;
    }
    if (std::fclose(out) != 0 || rc) {
      std::fprintf(stderr, "coop-run: cannot write '%s'\n", dump);
      return finish(1);
    }
  }
  return finish(rc);
}
