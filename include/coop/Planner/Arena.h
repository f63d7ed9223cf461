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

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace coop::planner {

class Arena {
public:
  /// Owner of a free piece.
  static constexpr int32_t kFree = -1;

  struct Piece {
    int64_t offset = 0;
    int64_t size = 0;
    int32_t owner = kFree;
  };

  /// Walks the pieces in address order.
  class Iterator {
  public:
    const Piece &operator*() const { return (*blocks_)[block_][index_]; }
    const Piece *operator->() const { return &**this; }
    Iterator &operator++() {
      if (++index_ == (*blocks_)[block_].size()) {
        ++block_;
        index_ = 0;
      }
      return *this;
    }
    /// The piece `n` places on, in this block or the next, or null: for
    /// walks that prefetch what they will read of it.
    const Piece *ahead(size_t n) const {
      const std::vector<std::vector<Piece>> &blocks = *blocks_;
      size_t index = index_ + n;
      if (index < blocks[block_].size())
        return &blocks[block_][index];
      index -= blocks[block_].size();
      if (block_ + 1 < blocks.size() && index < blocks[block_ + 1].size())
        return &blocks[block_ + 1][index];
      return nullptr;
    }
    /// Where it is: its block (Arena::blockPieces()) and its index there.
    size_t block() const { return block_; }
    size_t index() const { return index_; }
    bool operator==(const Iterator &other) const {
      return block_ == other.block_ && index_ == other.index_;
    }
    bool operator!=(const Iterator &other) const { return !(*this == other); }

  private:
    friend class Arena;
    Iterator(const std::vector<std::vector<Piece>> *blocks, size_t block,
             size_t index)
        : blocks_(blocks), block_(block), index_(index) {}
    const std::vector<std::vector<Piece>> *blocks_;
    size_t block_;
    size_t index_;
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

  /// Pieces in address order, for range-for.
  struct Pieces {
    Iterator first, last;
    Iterator begin() const { return first; }
    Iterator end() const { return last; }
  };
  Pieces pieces() const { return piecesFrom(begin_); }
  /// The pieces at or above `offset`.
  Pieces piecesFrom(int64_t offset) const;
  size_t pieceCount() const { return pieceCount_; }

  /// The blocks of contiguous pieces (see blocks_), for searches that keep
  /// something per block: a block's pieces, and its stamp, which changes
  /// whenever a piece in it does or touch() names one, and is never reused
  /// for another block, so something kept with a stamp is current while
  /// the block's stamp is that stamp.
  size_t blockCount() const { return blocks_.size(); }
  const std::vector<Piece> &blockPieces(size_t block) const {
    return blocks_[block];
  }
  uint64_t blockStamp(size_t block) const { return blockStamps_[block]; }
  /// The piece at `index` of `block`, or the next block's first where
  /// `index` is the block's size.
  Iterator iteratorAt(size_t block, size_t index) const;
  /// Something kept about the piece at `offset` (which must exist) changed
  /// outside the arena: its block gets a new stamp.
  void touch(int64_t offset) { restamp(blockOf(offset)); }

private:
  /// A piece's place: its block and its index in the block.
  struct Position {
    size_t block;
    size_t index;
  };
  Piece &at(Position p) { return blocks_[p.block][p.index]; }
  /// The piece that starts at `offset` (which must exist).
  Position find(int64_t offset) const;
  /// The block that holds `offset`.
  size_t blockOf(int64_t offset) const;
  /// The neighbours of `p` in address order; false at either end.
  bool previous(Position p, Position *out) const;
  bool next(Position p, Position *out) const;
  void insertPiece(const Piece &piece);
  void erasePiece(Position p);
  /// Splits `block` when it is too long, joins it to a neighbour when too
  /// short, and keeps its start in blockStarts_.
  void rebalance(size_t block);
  void restamp(size_t block) { blockStamps_[block] = ++lastStamp_; }
  void addFree(int64_t offset, int64_t size);
  void removeFree(int64_t offset, int64_t size);
  int64_t take(int64_t pieceOffset, int64_t pieceSize, int64_t size,
               int32_t owner, bool atHighEdge);

  int64_t begin_ = 0;
  int64_t size_ = 0;
  int64_t freeBytes_ = 0;
  /// The pieces in address order, cut into blocks of at most
  /// kMaxBlockPieces (and, past one block, at least a quarter of that but
  /// for the last) so that a walk reads contiguous memory and an insert or
  /// erase moves one block; blockStarts_ holds each block's first offset
  /// for lookups, and blockStamps_ its stamp (blockStamp()).
  std::vector<std::vector<Piece>> blocks_;
  std::vector<int64_t> blockStarts_;
  std::vector<uint64_t> blockStamps_;
  uint64_t lastStamp_ = 0;
  size_t pieceCount_ = 0;
  std::set<std::pair<int64_t, int64_t>> freeBySize_; // (size, offset)
};

} // namespace coop::planner

#endif // COOP_PLANNER_ARENA_H
