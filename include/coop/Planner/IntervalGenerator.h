//===- IntervalGenerator.h - Seeded buffer-lifetime sets --------*- C++ -*-===//
//
// Builds random sets of buffers (a lifetime and a size each) for the
// offline packer's property tests and benchmark. Every size is a multiple of
// a unit (1 KiB by default). The kinds:
//
//   Perfect  A strip of fixed capacity is kept completely full at every
//            instruction: at each instruction some live buffers end, each
//            run of adjacent freed pieces is cut at new random points, and
//            the new pieces are buffers that start there. The cuts do not
//            follow the old boundaries, so the packing is not guillotine.
//            The max-live lower bound equals the capacity and the
//            construction is a packing of exactly that peak: the hard case
//            for greedy packers, with a known optimum.
//   Random   Random lifetimes (mostly short, some long) and sizes (mostly
//            small, some large), plus tiny long-lived buffers (constants).
//   Stack    Training steps one after another: in each, activation i lives
//            from forward op i to backward op i (nested lifetimes, with
//            noise), with short-lived temporaries and weight gradients that
//            live to the end of the step.
//   Mixed    Two to four parts of the kinds above, overlaid in time.
//
// Concurrency stays bounded however large the set: lifetimes are drawn
// relative to a window of instructions (IntervalShape::lifetimeWindow), not
// to the whole horizon, Perfect's strip holds a bounded number of pieces,
// and the horizon grows with the buffer count instead. A 100,000-buffer set
// thus has a few hundred buffers alive at once, as a real program has, not
// tens of thousands.
//
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_INTERVALGENERATOR_H
#define COOP_PLANNER_INTERVALGENERATOR_H

#include "coop/Planner/Packer.h"
#include "coop/Planner/Status.h"

#include <array>
#include <cstdint>
#include <vector>

namespace coop::planner {

enum class IntervalKind { Perfect, Random, Stack, Mixed };

inline constexpr std::array<IntervalKind, 4> kIntervalKinds = {
    IntervalKind::Perfect, IntervalKind::Random, IntervalKind::Stack,
    IntervalKind::Mixed};

/// "perfect", "random", "stack" or "mixed".
const char *intervalKindName(IntervalKind kind);

struct IntervalShape {
  IntervalKind kind = IntervalKind::Random;
  /// Buffers in the set: exact for Random and Stack, approximate for
  /// Perfect (the strip is cut until at least this many exist) and for
  /// Mixed sets with a Perfect part.
  int64_t buffers = 1000;
  /// Every size (and every Perfect offset) is a multiple of this, in bytes.
  int64_t unit = 1024;
  /// Lifetimes are drawn relative to this many instructions.
  int64_t lifetimeWindow = 64;
  /// Most buffers alive at once in a Perfect strip (fewer in small sets).
  int64_t maxPerfectPieces = 64;
};

struct IntervalSet {
  std::vector<PackBuffer> buffers;
  /// Perfect only (0 and empty otherwise): the strip's capacity in bytes,
  /// which is both the max-live lower bound and the optimal peak, and the
  /// construction's offsets, a packing of exactly that peak.
  int64_t capacity = 0;
  std::vector<int64_t> offsets;
};

/// Generates a set; the same seed and shape give the same set everywhere.
/// The buffers come in random order so that input order hints at nothing.
/// Fails only on a malformed shape.
Status generateIntervals(uint64_t seed, const IntervalShape &shape,
                         IntervalSet *out);

} // namespace coop::planner

#endif // COOP_PLANNER_INTERVALGENERATOR_H
