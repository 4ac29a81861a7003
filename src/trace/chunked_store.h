#pragma once
// Append-only storage in fixed chunks of 2^ChunkBits elements. Unlike std::vector, growing never
// copies (a vector's growth holds the old and the new buffer at once: the peak of a large trace's
// model); unlike libstdc++'s std::deque (512-byte nodes, ten 48-byte events each, one malloc per
// node plus a node map), chunks are large and indexing is a shift and a mask. References stay
// valid for the store's lifetime. Elements are value-initialised a chunk at a time.
#include <cstddef>
#include <memory>
#include <vector>

namespace magpie::trace {

template <typename T, unsigned ChunkBits = 14>
class chunked_store {
 public:
  static constexpr size_t k_chunk = size_t{1} << ChunkBits;

  /// A new element at the end (value-initialised: T's default constructor).
  T& emplace_back() {
    if (m_size == m_chunks.size() * k_chunk) m_chunks.push_back(std::make_unique<T[]>(k_chunk));
    T& t = (*this)[m_size];
    ++m_size;
    return t;
  }

  T& operator[](size_t i) { return m_chunks[i >> ChunkBits][i & (k_chunk - 1)]; }
  const T& operator[](size_t i) const { return m_chunks[i >> ChunkBits][i & (k_chunk - 1)]; }
  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }

  template <typename Store, typename Ref>
  class basic_iterator {
   public:
    basic_iterator(Store* s, size_t i) : m_s(s), m_i(i) {}
    Ref operator*() const { return (*m_s)[m_i]; }
    basic_iterator& operator++() {
      ++m_i;
      return *this;
    }
    bool operator==(const basic_iterator& o) const { return m_i == o.m_i; }
    bool operator!=(const basic_iterator& o) const { return m_i != o.m_i; }

   private:
    Store* m_s;
    size_t m_i;
  };
  using iterator = basic_iterator<chunked_store, T&>;
  using const_iterator = basic_iterator<const chunked_store, const T&>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, m_size}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, m_size}; }

 private:
  std::vector<std::unique_ptr<T[]>> m_chunks;
  size_t m_size = 0;
};

}  // namespace magpie::trace
