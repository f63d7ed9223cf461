//===- Arena.h - Address-ordered pieces of a simulated device arena -*- C++ -*-===//
//
// A contiguous range of bytes cut into pieces that are either free or hold
// one allocation. Pieces are kept in address order (for the sliding window
// and for coalescing) and free pieces are also indexed by (size, offset) so
// best fit is a single ordered-set lookup.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_ARENA_H
#define COOP_PLANNER_ARENA_H

#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace coop::planner {

class Arena {
public:
  /// Owner of a free piece.
  static constexpr int32_t kFree = -1;

  struct Piece {
    int64_t size = 0;
    int32_t owner = kFree;
  };

  Arena() = default;
  /// Covers [begin, begin + size).
  Arena(int64_t begin, int64_t size);

  /// Best fit: the smallest free piece that holds `size` bytes, lowest
  /// address on ties. The allocation takes the low edge of that piece, or
  /// its high edge when `atHighEdge`. Returns the offset, or -1.
  int64_t allocate(int64_t size, int32_t owner, bool atHighEdge);
  /// First fit: the low edge of the lowest-address free piece that holds
  /// `size` bytes. Returns the offset, or -1.
  int64_t allocateLowest(int64_t size, int32_t owner);
  /// Frees the allocation that starts at `offset`, coalescing neighbours.
  void release(int64_t offset);
  /// Hands the piece at `offset` to a new owner (in-place writes).
  void reassign(int64_t offset, int32_t owner);

  bool fits(int64_t size) const;
  int64_t begin() const { return begin_; }
  int64_t size() const { return size_; }
  int64_t freeBytes() const { return freeBytes_; }
  int64_t largestFreePiece() const;
  /// Free bytes immediately left and right of the piece at `offset`.
  int64_t freeBytesAround(int64_t offset) const;
  /// All pieces, keyed by offset, in address order.
  const std::map<int64_t, Piece> &pieces() const { return pieces_; }

private:
  void addFree(int64_t offset, int64_t size);
  void removeFree(int64_t offset, int64_t size);
  int64_t take(int64_t pieceOffset, int64_t pieceSize, int64_t size,
               int32_t owner, bool atHighEdge);

  int64_t begin_ = 0;
  int64_t size_ = 0;
  int64_t freeBytes_ = 0;
  std::map<int64_t, Piece> pieces_;
  std::set<std::pair<int64_t, int64_t>> freeBySize_; // (size, offset)
};

} // namespace coop::planner

#endif // COOP_PLANNER_ARENA_H
