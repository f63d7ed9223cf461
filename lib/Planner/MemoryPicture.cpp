//===- MemoryPicture.cpp - An SVG of the arena over a plan ----------------===//

#include "coop/Planner/MemoryPicture.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace coop::planner {
namespace {

enum class BoxKind { Persistent, Expensive, Cheap, Workspace };

struct Box {
  int64_t offset = 0;
  int64_t size = 0;
  size_t begin = 0;
  size_t end = 0;
  BoxKind kind = BoxKind::Cheap;
  bool recomputed = false;
  TensorId tensor = kNone;
};

struct Eviction {
  size_t at = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

const char *fillOf(BoxKind kind) {
  switch (kind) {
  case BoxKind::Persistent:
    return "#9e9e9e";
  case BoxKind::Expensive:
    return "#e6550d";
  case BoxKind::Cheap:
    return "#3182bd";
  case BoxKind::Workspace:
    return "#fdd0a2";
  }
  return "#000000";
}

/// Replays the plan's allocations into boxes with lifetimes.
void collect(const Graph &graph, const Plan &plan, const PlanOptions &options,
             std::vector<Box> *boxes, std::vector<Eviction> *evictions) {
  const size_t steps = plan.instructions.size();
  std::map<TensorId, size_t> open; // tensor -> index of its live box
  auto close = [&](TensorId tensor, size_t at) {
    auto it = open.find(tensor);
    if (it == open.end())
      return;
    (*boxes)[it->second].end = at;
    open.erase(it);
  };
  for (const Allocation &a : plan.arguments) {
    open[a.tensor] = boxes->size();
    boxes->push_back({a.offset, a.size, 0, steps, BoxKind::Persistent, false,
                      a.tensor});
  }
  for (size_t i = 0; i < steps; ++i) {
    const Instruction &ins = plan.instructions[i];
    if (ins.kind == InstructionKind::Evict ||
        ins.kind == InstructionKind::Free) {
      auto it = open.find(ins.tensor);
      if (ins.kind == InstructionKind::Evict && it != open.end())
        evictions->push_back(
            {i, (*boxes)[it->second].offset, (*boxes)[it->second].size});
      close(ins.tensor, i);
      continue;
    }
    const Op &op = graph.ops[ins.op];
    for (const Allocation &a : ins.outputs) {
      if (a.inPlace)
        close(graph.contentOf(graph.tensors[a.tensor].previousVersion), i);
      BoxKind kind = graph.isPersistent(a.tensor) ? BoxKind::Persistent
                     : isExpensiveKernel(op, graph.tensors[a.tensor].bytes,
                                         options)
                         ? BoxKind::Expensive
                         : BoxKind::Cheap;
      open[a.tensor] = boxes->size();
      boxes->push_back({a.offset, a.size, i, steps, kind,
                        ins.kind == InstructionKind::Recompute, a.tensor});
    }
    if (ins.workspaceBytes > 0)
      boxes->push_back({ins.workspaceOffset, ins.workspaceBytes, i, i + 1,
                        BoxKind::Workspace, false, kNone});
    // Discarded in-place outputs of a recomputation: scratch, like workspace.
    for (const Allocation &d : ins.discarded)
      boxes->push_back(
          {d.offset, d.size, i, i + 1, BoxKind::Workspace, true, kNone});
  }
}

} // namespace

std::string renderMemoryPicture(const Graph &graph, const Plan &plan,
                                const PlanOptions &options) {
  std::vector<Box> boxes;
  std::vector<Eviction> evictions;
  collect(graph, plan, options, &boxes, &evictions);

  const double left = 70, top = 50, width = 1000, height = 560;
  const double steps = std::max<size_t>(plan.instructions.size(), 1);
  const double budget = std::max<int64_t>(plan.budgetBytes, 1);
  auto x = [&](size_t step) { return left + width * double(step) / steps; };
  auto y = [&](int64_t address) {
    return top + height * (1.0 - double(address) / budget);
  };

  std::ostringstream svg;
  char buffer[512];
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << left + width + 200 << "\" height=\"" << top + height + 60
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  std::snprintf(buffer, sizeof(buffer),
                "<text x=\"%g\" y=\"25\" font-size=\"15\">%s plan, budget "
                "%lld bytes: overhead %.2f%%, fragmentation %.2f%%, %lld "
                "evictions, %lld recomputations</text>\n",
                left, policyName(plan.policy),
                static_cast<long long>(plan.budgetBytes),
                plan.stats.computeOverhead * 100,
                plan.stats.fragmentationRate * 100,
                static_cast<long long>(plan.stats.evictionCount),
                static_cast<long long>(plan.stats.recomputeCount));
  svg << buffer;
  std::snprintf(buffer, sizeof(buffer),
                "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
                "fill=\"#ffffff\" stroke=\"#000000\"/>\n",
                left, top, width, height);
  svg << buffer;
  for (const Box &box : boxes) {
    double x0 = x(box.begin), x1 = x(std::max(box.end, box.begin + 1));
    std::snprintf(buffer, sizeof(buffer),
                  "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                  "height=\"%.2f\" fill=\"%s\"%s><title>%s [%lld, %lld) "
                  "steps %zu-%zu</title></rect>\n",
                  x0, y(box.offset + box.size), x1 - x0,
                  y(box.offset) - y(box.offset + box.size), fillOf(box.kind),
                  box.recomputed ? " stroke=\"#6a3d9a\" stroke-width=\"1.5\""
                                 : "",
                  box.tensor == kNone ? "workspace"
                                      : graph.tensors[box.tensor].name.c_str(),
                  static_cast<long long>(box.offset),
                  static_cast<long long>(box.offset + box.size), box.begin,
                  box.end);
    svg << buffer;
  }
  for (const Eviction &e : evictions) {
    std::snprintf(buffer, sizeof(buffer),
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                  "stroke=\"#d62728\" stroke-width=\"2\"/>\n",
                  x(e.at), y(e.offset + e.size), x(e.at), y(e.offset));
    svg << buffer;
  }
  // Axes and legend.
  std::snprintf(buffer, sizeof(buffer),
                "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%lld B</text>\n"
                "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">0</text>\n"
                "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">instruction "
                "(0 to %zu)</text>\n",
                left - 5, top + 10, static_cast<long long>(plan.budgetBytes),
                left - 5, top + height, left + width / 2, top + height + 30,
                plan.instructions.size());
  svg << buffer;
  const struct {
    const char *label;
    const char *fill;
    const char *stroke;
  } legend[] = {{"persistent", fillOf(BoxKind::Persistent), "none"},
                {"expensive", fillOf(BoxKind::Expensive), "none"},
                {"cheap", fillOf(BoxKind::Cheap), "none"},
                {"workspace", fillOf(BoxKind::Workspace), "none"},
                {"recomputed", "#ffffff", "#6a3d9a"},
                {"eviction", "#d62728", "none"}};
  double legendY = top;
  for (const auto &entry : legend) {
    std::snprintf(buffer, sizeof(buffer),
                  "<rect x=\"%g\" y=\"%g\" width=\"14\" height=\"14\" "
                  "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>"
                  "<text x=\"%g\" y=\"%g\">%s</text>\n",
                  left + width + 20, legendY, entry.fill, entry.stroke,
                  left + width + 40, legendY + 12, entry.label);
    svg << buffer;
    legendY += 22;
  }
  svg << "</svg>\n";
  return svg.str();
}

} // namespace coop::planner
