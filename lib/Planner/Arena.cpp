//===- Arena.cpp - Best fit with coalescing over address-ordered pieces ---===//

#include "coop/Planner/Arena.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace coop::planner {

namespace {
/// A block splits in two above this many pieces, and joins a neighbour
/// below a quarter of it: small enough that an insert or erase moves
/// little, large enough that the blocks' starts stay in cache for lookups
/// and a walk reads long stretches of contiguous memory.
constexpr size_t kMaxBlockPieces = 128;

bool startsBefore(const Arena::Piece &piece, int64_t offset) {
  return piece.offset < offset;
}
} // namespace

Arena::Arena(int64_t begin, int64_t size) : begin_(begin), size_(size) {
  if (size > 0) {
    insertPiece(Piece{begin, size, kFree});
    addFree(begin, size);
  }
}

Arena::Pieces Arena::piecesFrom(int64_t offset) const {
  // The last block starting at or below `offset`, then the first piece in
  // it at or above `offset` (the next block's first when there is none).
  const Iterator end(&blocks_, blocks_.size(), 0);
  auto after =
      std::upper_bound(blockStarts_.begin(), blockStarts_.end(), offset);
  if (after == blockStarts_.begin())
    return {Iterator(&blocks_, 0, 0), end};
  const size_t block = size_t(after - blockStarts_.begin()) - 1;
  const std::vector<Piece> &pieces = blocks_[block];
  const size_t index = size_t(
      std::lower_bound(pieces.begin(), pieces.end(), offset, startsBefore) -
      pieces.begin());
  if (index == pieces.size())
    return {Iterator(&blocks_, block + 1, 0), end};
  return {Iterator(&blocks_, block, index), end};
}

Arena::Iterator Arena::iteratorAt(size_t block, size_t index) const {
  if (index == blocks_[block].size())
    return Iterator(&blocks_, block + 1, 0);
  return Iterator(&blocks_, block, index);
}

size_t Arena::blockOf(int64_t offset) const {
  const auto after =
      std::upper_bound(blockStarts_.begin(), blockStarts_.end(), offset);
  return after == blockStarts_.begin() ? 0
                                       : size_t(after - blockStarts_.begin()) - 1;
}

Arena::Position Arena::find(int64_t offset) const {
  const Iterator it = piecesFrom(offset).first;
  assert(it != piecesFrom(offset).last && it->offset == offset);
  return {it.block_, it.index_};
}

bool Arena::previous(Position p, Position *out) const {
  if (p.index > 0) {
    *out = {p.block, p.index - 1};
    return true;
  }
  if (p.block == 0)
    return false;
  *out = {p.block - 1, blocks_[p.block - 1].size() - 1};
  return true;
}

bool Arena::next(Position p, Position *out) const {
  if (p.index + 1 < blocks_[p.block].size()) {
    *out = {p.block, p.index + 1};
    return true;
  }
  if (p.block + 1 == blocks_.size())
    return false;
  *out = {p.block + 1, 0};
  return true;
}

void Arena::insertPiece(const Piece &piece) {
  ++pieceCount_;
  if (blocks_.empty()) {
    blocks_.push_back({piece});
    blockStarts_.push_back(piece.offset);
    blockStamps_.push_back(++lastStamp_);
    return;
  }
  auto after = std::upper_bound(blockStarts_.begin(), blockStarts_.end(),
                                piece.offset);
  const size_t block =
      after == blockStarts_.begin() ? 0 : size_t(after - blockStarts_.begin()) - 1;
  std::vector<Piece> &pieces = blocks_[block];
  pieces.insert(std::lower_bound(pieces.begin(), pieces.end(), piece.offset,
                                 startsBefore),
                piece);
  rebalance(block);
}

void Arena::erasePiece(Position p) {
  --pieceCount_;
  std::vector<Piece> &pieces = blocks_[p.block];
  pieces.erase(pieces.begin() + p.index);
  rebalance(p.block);
}

void Arena::rebalance(size_t block) {
  std::vector<Piece> &pieces = blocks_[block];
  if (pieces.size() < kMaxBlockPieces / 4 && blocks_.size() > 1) {
    // Into the next block's front, or the last block into the previous.
    const size_t low = block + 1 < blocks_.size() ? block : block - 1;
    std::vector<Piece> &merged = blocks_[low];
    merged.insert(merged.end(), blocks_[low + 1].begin(),
                  blocks_[low + 1].end());
    blocks_.erase(blocks_.begin() + low + 1);
    blockStarts_.erase(blockStarts_.begin() + low + 1);
    blockStamps_.erase(blockStamps_.begin() + low + 1);
    block = low;
  }
  std::vector<Piece> &current = blocks_[block];
  if (current.empty()) { // the arena's last piece went
    blocks_.clear();
    blockStarts_.clear();
    blockStamps_.clear();
    return;
  }
  blockStarts_[block] = current.front().offset;
  restamp(block);
  if (current.size() <= kMaxBlockPieces)
    return;
  std::vector<Piece> upper(current.begin() + current.size() / 2,
                           current.end());
  current.resize(current.size() / 2);
  blockStarts_.insert(blockStarts_.begin() + block + 1, upper.front().offset);
  blockStamps_.insert(blockStamps_.begin() + block + 1, ++lastStamp_);
  blocks_.insert(blocks_.begin() + block + 1, std::move(upper));
}

void Arena::addFree(int64_t offset, int64_t size) {
  freeBySize_.insert({size, offset});
  freeBytes_ += size;
}

void Arena::removeFree(int64_t offset, int64_t size) {
  freeBySize_.erase({size, offset});
  freeBytes_ -= size;
}

bool Arena::fits(int64_t size) const {
  return freeBySize_.lower_bound({size, std::numeric_limits<int64_t>::min()}) !=
         freeBySize_.end();
}

int64_t Arena::allocate(int64_t size, int32_t owner, bool atHighEdge) {
  auto best =
      freeBySize_.lower_bound({size, std::numeric_limits<int64_t>::min()});
  if (best == freeBySize_.end())
    return -1;
  return take(best->second, best->first, size, owner, atHighEdge);
}

int64_t Arena::allocateLowest(int64_t size, int32_t owner) {
  for (const Piece &piece : pieces())
    if (piece.owner == kFree && piece.size >= size)
      return take(piece.offset, piece.size, size, owner, /*atHighEdge=*/false);
  return -1;
}

int64_t Arena::take(int64_t pieceOffset, int64_t pieceSize, int64_t size,
                    int32_t owner, bool atHighEdge) {
  removeFree(pieceOffset, pieceSize);
  const int64_t rest = pieceSize - size;
  const int64_t offset = atHighEdge ? pieceOffset + rest : pieceOffset;
  const Position position = find(pieceOffset);
  Piece &piece = at(position);
  restamp(position.block);
  if (rest == 0) {
    piece.owner = owner;
    return offset;
  }
  const int64_t restOffset = atHighEdge ? pieceOffset : offset + size;
  // The piece keeps its low edge: the rest, or the allocation.
  piece.size = atHighEdge ? rest : size;
  piece.owner = atHighEdge ? kFree : owner;
  insertPiece(atHighEdge ? Piece{offset, size, owner}
                         : Piece{restOffset, rest, kFree});
  addFree(restOffset, rest);
  return offset;
}

void Arena::release(int64_t offset) {
  Position p = find(offset);
  assert(at(p).owner != kFree);
  int64_t size = at(p).size;
  Position right;
  if (next(p, &right) && at(right).owner == kFree) {
    removeFree(at(right).offset, at(right).size);
    size += at(right).size;
    erasePiece(right);
    p = find(offset); // blocks may have been joined or split
  }
  Position left;
  if (previous(p, &left) && at(left).owner == kFree) {
    Piece &merged = at(left);
    removeFree(merged.offset, merged.size);
    merged.size += size;
    addFree(merged.offset, merged.size);
    restamp(left.block);
    erasePiece(p);
    return;
  }
  at(p).size = size;
  at(p).owner = kFree;
  restamp(p.block);
  addFree(offset, size);
}

void Arena::reassign(int64_t offset, int32_t owner) {
  const Position position = find(offset);
  Piece &piece = at(position);
  assert(piece.owner != kFree);
  piece.owner = owner;
  restamp(position.block);
}

int64_t Arena::largestFreePiece() const {
  return freeBySize_.empty() ? 0 : freeBySize_.rbegin()->first;
}

int64_t Arena::freeBytesAround(int64_t offset) const {
  const Position p = find(offset);
  int64_t bytes = 0;
  Position side;
  if (previous(p, &side) && blocks_[side.block][side.index].owner == kFree)
    bytes += blocks_[side.block][side.index].size;
  if (next(p, &side) && blocks_[side.block][side.index].owner == kFree)
    bytes += blocks_[side.block][side.index].size;
  return bytes;
}

} // namespace coop::planner
