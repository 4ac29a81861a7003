// magpie::bench::trial — the tensors of one trial (inputs, outputs, scratch buffers) on the
// backend's memory. Included by <magpie/bench.hpp>.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "bench_detail.hpp"

namespace magpie {
namespace bench {

class harness;

/// The problem a setup function builds: the size, the seed and the buffers. The pointers it
/// returns stay valid until the trial ends (after the launch closure's last call).
class trial {
 public:
  trial(const trial&) = delete;
  trial& operator=(const trial&) = delete;
  ~trial() {
    for (auto& b : m_buffers) m_backend.release(b.base);
    if (m_exchange) ::munmap(m_exchange, m_exchange_bytes);
  }

  /// Trial index (correctness mode), 0 otherwise.
  size_t index() const { return m_index; }
  /// Seed of this trial's inputs.
  uint64_t seed() const { return m_seed; }
  size_t size_index() const { return m_size_index; }
  const std::string& size_label() const { return m_size.label; }
  const std::vector<int64_t>& dims() const { return m_size.dims; }
  /// Dimension i of the current size; throws bench::error when the size has fewer dims.
  int64_t dim(size_t i) const {
    if (i >= m_size.dims.size())
      throw error("size '" + m_size.label + "' has " + std::to_string(m_size.dims.size()) +
                  " dims, dim(" + std::to_string(i) + ") requested");
    return m_size.dims[i];
  }

  /// An input tensor filled from the deterministic generator keyed by (trial seed, name);
  /// identical in every implementation that declares the same name, dtype and shape.
  template <class T>
  ptr<T> input(const std::string& name, const std::vector<int64_t>& shape, distribution d = distribution{}) {
    using info = type_info<T>;
    using S = typename info::storage;
    buffer& b = add(name, info::dt, sizeof(S), shape, role::input);
    d = detail::resolve(d, info::dt);
    b.init = detail::describe(d);
    b.fill_input = [d](const detail::generator& gen, size_t numel, unsigned char* host) {
      detail::fill_elements<S>(gen, d, numel, host, [](double v) { return info::convert(v); });
    };
    unsigned char* host = fill_staged(b, m_seed);
    if (m_save) {
      b.pre = prefix() + "in_" + detail::file_safe(name) + ".npy";
      detail::write_npy(m_dir + "/" + b.pre, b.dt, b.shape, host, b.bytes);
    }
    if (host != b.user) m_backend.upload(b.user, host, b.bytes);
    return static_cast<ptr<T>>(b.user);
  }

  /// An output tensor, filled with the poison pattern (all bytes 0xFF: NaN for floats) so
  /// elements the kernel does not write are visible.
  template <class T>
  ptr<T> output(const std::string& name, const std::vector<int64_t>& shape) {
    using S = typename type_info<T>::storage;
    buffer& b = add(name, type_info<T>::dt, sizeof(S), shape, role::output);
    m_backend.fill(b.user, 0xFF, b.bytes);
    return static_cast<ptr<T>>(b.user);
  }

  /// Zero-filled workspace (e.g. partial sums); neither saved nor compared.
  template <class T>
  ptr<T> scratch(const std::string& name, const std::vector<int64_t>& shape) {
    using S = typename type_info<T>::storage;
    buffer& b = add(name, type_info<T>::dt, sizeof(S), shape, role::scratch);
    m_backend.fill(b.user, 0, b.bytes);
    return static_cast<ptr<T>>(b.user);
  }

  /// Records a non-tensor parameter (e.g. n) under "scalars" in the manifest.
  void scalar(const std::string& name, double value) { m_scalars.emplace_back(name, value); }

 private:
  friend class harness;
  enum class role { input, output, scratch };
  /// Bytes of the guard zones before and after every buffer; a kernel writing into them
  /// fails the trial ("wrote outside ...").
  static constexpr size_t k_guard = 256;
  static constexpr unsigned char k_guard_byte = 0xA5;

  struct buffer {
    std::string name;
    dtype dt = dtype::float32;
    role kind = role::input;
    std::vector<int64_t> shape;
    size_t numel = 0, bytes = 0;
    unsigned char* base = nullptr;  ///< backend allocation: guard | data | guard
    void* user = nullptr;           ///< base + k_guard
    std::string init, pre, post, file;
    /// Regenerates an input's elements from a generator (refresh_inputs).
    std::function<void(const detail::generator&, size_t, unsigned char*)> fill_input;
    size_t xoff = 0;  ///< offset in the exchange memory (outputs, timing mode)
  };

  trial(detail::backend& be, size_t index, uint64_t seed, size_t size_index, const size_spec& size,
        bool save, std::string dir)
      : m_backend(be), m_index(index), m_seed(seed), m_size_index(size_index), m_size(size),
        m_save(save), m_dir(std::move(dir)) {}

  std::string prefix() const { return "t" + std::to_string(m_index) + "_"; }

  buffer& add(const std::string& name, dtype dt, size_t elem, const std::vector<int64_t>& shape, role kind) {
    if (name.empty()) throw error("tensor name must not be empty");
    for (const auto& b : m_buffers)
      if (b.name == name) throw error("tensor '" + name + "' declared twice");
    size_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0) throw error("tensor '" + name + "' has a negative dimension");
      numel *= static_cast<size_t>(d);
    }
    buffer b;
    b.name = name;
    b.dt = dt;
    b.kind = kind;
    b.shape = shape;
    b.numel = numel;
    b.bytes = numel * elem;
    b.base = static_cast<unsigned char*>(m_backend.alloc(b.bytes + 2 * k_guard));
    b.user = b.base + k_guard;
    m_buffers.push_back(b);
    buffer& ref = m_buffers.back();
    m_backend.fill(ref.base, k_guard_byte, k_guard);
    m_backend.fill(ref.base + k_guard + ref.bytes, k_guard_byte, k_guard);
    return ref;
  }

  /// Throws when a guard zone was overwritten (the kernel wrote out of bounds).
  void check_guards() {
    std::vector<unsigned char> g(k_guard);
    for (const auto& b : m_buffers) {
      for (int side = 0; side < 2; ++side) {
        m_backend.download(g.data(), side ? b.base + k_guard + b.bytes : b.base, k_guard);
        for (unsigned char c : g) {
          if (c != k_guard_byte)
            throw error("kernel wrote outside tensor '" + b.name + "' (" +
                        (side ? "past its end" : "before its start") + ")");
        }
      }
    }
  }

  /// Fills every output with the poison pattern again (0xFF bytes), right before a checked
  /// launch: whatever setup or an earlier launch left there must be overwritten by this one.
  void poison_outputs() {
    for (auto& b : m_buffers)
      if (b.kind == role::output) m_backend.fill(b.user, 0xFF, b.bytes);
  }

  /// Fills input `b` from the generator of (seed, its name): straight into its memory where the
  /// backend's is the host's, else into a staging buffer kept for the trial's life (no fresh
  /// allocation and page faults per call); returns where the values are.
  unsigned char* fill_staged(buffer& b, uint64_t seed) {
    unsigned char* host = static_cast<unsigned char*>(m_backend.host_pointer(b.user));
    if (!host) {
      if (m_staging.size() < b.bytes) m_staging.resize(b.bytes);
      host = m_staging.data();
    }
    b.fill_input(detail::generator(seed, b.name), b.numel, host);
    return host;
  }

  /// Regenerates every input in place (same buffers, so pointers stay valid) from `seed`.
  void refresh_inputs(uint64_t seed) {
    m_seed = seed;
    for (auto& b : m_buffers) {
      if (b.kind != role::input || !b.fill_input) continue;
      unsigned char* host = fill_staged(b, seed);
      if (host != b.user) m_backend.upload(b.user, host, b.bytes);
    }
  }

  /// Timing mode: lays every output out in the supervisor's exchange memory `fd` (64-byte
  /// aligned), sizes the file and maps it; returns the ready line's "exchange" object.
  std::string map_exchange(int fd) {
    std::string list;
    size_t off = 0;
    for (auto& b : m_buffers) {
      if (b.kind != role::output) continue;
      off = (off + 63) & ~static_cast<size_t>(63);
      b.xoff = off;
      off += b.bytes;
      list += (list.empty() ? "" : ", ") + std::string("{\"name\": ") + detail::json_quote(b.name) +
              ", \"dtype\": " + detail::json_quote(detail::dtype_name(b.dt)) + ", \"shape\": " +
              detail::json_shape(b.shape) + ", \"offset\": " + std::to_string(b.xoff) + "}";
    }
    const size_t bytes = off ? off : 64;
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw error(detail::errno_text("cannot size the exchange memory", "fd"));
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw error(detail::errno_text("cannot map the exchange memory", "fd"));
    m_exchange = static_cast<unsigned char*>(p);
    m_exchange_bytes = bytes;
    return "{\"bytes\": " + std::to_string(bytes) + ", \"outputs\": [" + list + "]}";
  }

  /// Copies every output into the exchange memory (after each sample, before the reply).
  void copy_to_exchange() {
    if (!m_exchange) return;
    for (const auto& b : m_buffers)
      if (b.kind == role::output) m_backend.download(m_exchange + b.xoff, b.user, b.bytes);
  }

  /// Downloads every output (and every input again, as the "post" copy) into .npy files.
  void save_results() {
    std::vector<unsigned char> host;
    for (auto& b : m_buffers) {
      if (b.kind == role::scratch) continue;
      host.resize(b.bytes);
      m_backend.download(host.data(), b.user, b.bytes);
      std::string& name = b.kind == role::output ? b.file : b.post;
      name = prefix() + (b.kind == role::output ? "out_" : "in_") + detail::file_safe(b.name) +
             (b.kind == role::output ? ".npy" : ".post.npy");
      detail::write_npy(m_dir + "/" + name, b.dt, b.shape, host.data(), b.bytes);
    }
  }

  /// Output elements whose bytes are all still 0xFF (standalone-mode hint).
  size_t poisoned_elements() {
    size_t count = 0;
    std::vector<unsigned char> host;
    for (const auto& b : m_buffers) {
      if (b.kind != role::output || b.numel == 0) continue;
      host.resize(b.bytes);
      m_backend.download(host.data(), b.user, b.bytes);
      const size_t elem = b.bytes / b.numel;
      for (size_t i = 0; i < b.numel; ++i) {
        bool all = true;
        for (size_t j = 0; j < elem && all; ++j) all = host[i * elem + j] == 0xFF;
        count += all;
      }
    }
    return count;
  }

  std::string manifest_entry(bool ok, const std::string& err) const {
    using detail::json_quote;
    auto file_or_null = [](const std::string& f) { return f.empty() ? std::string("null") : json_quote(f); };
    std::string s = "{\"index\": " + std::to_string(m_index) + ", \"seed\": " + std::to_string(m_seed) +
                    ", \"size_index\": " + std::to_string(m_size_index) + ", \"size\": " +
                    json_quote(m_size.label) + ", \"check\": " + (m_check ? "true" : "false") +
                    ", \"ok\": " + (ok ? "true" : "false") +
                    ", \"error\": " + (ok ? std::string("null") : json_quote(err));
    std::string ins, outs;
    for (const auto& b : m_buffers) {
      std::string head = "{\"name\": " + json_quote(b.name) + ", \"dtype\": " +
                         json_quote(detail::dtype_name(b.dt)) + ", \"shape\": " + detail::json_shape(b.shape);
      if (b.kind == role::input) {
        ins += (ins.empty() ? "" : ", ") + head + ", \"init\": " + json_quote(b.init) + ", \"pre\": " +
               file_or_null(b.pre) + ", \"post\": " + file_or_null(b.post) + "}";
      } else if (b.kind == role::output) {
        outs += (outs.empty() ? "" : ", ") + head + ", \"file\": " + file_or_null(b.file) + "}";
      }
    }
    s += ",\n     \"inputs\": [" + ins + "],\n     \"outputs\": [" + outs + "]";
    if (!m_scalars.empty()) {
      s += ", \"scalars\": {";
      for (size_t i = 0; i < m_scalars.size(); ++i) {
        char num[64] = "null";  // JSON has no NaN / inf
        if (std::isfinite(m_scalars[i].second)) std::snprintf(num, sizeof num, "%.17g", m_scalars[i].second);
        s += (i ? ", " : "") + json_quote(m_scalars[i].first) + ": " + num;
      }
      s += "}";
    }
    return s + "}";
  }

  detail::backend& m_backend;
  size_t m_index;
  bool m_check = false;  ///< a timed-size trial for a timing check seed
  uint64_t m_seed;
  size_t m_size_index;
  size_spec m_size;
  bool m_save;
  std::string m_dir;
  std::vector<buffer> m_buffers;
  std::vector<std::pair<std::string, double>> m_scalars;
  unsigned char* m_exchange = nullptr;  ///< mapped exchange memory (timing mode)
  std::vector<unsigned char> m_staging;  ///< host copy of an input before its upload (device backends)
  size_t m_exchange_bytes = 0;
};

}  // namespace bench
}  // namespace magpie
