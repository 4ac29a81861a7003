// Byte sources for the trace reader (internal to src/trace): a file, memory, zlib inflate of
// another source, and a prefetching wrapper that runs a source on its own thread.
//
// read() returns the number of bytes written to dst, 0 at the end of the data. An I/O error
// of the underlying file is a status; a problem with the *content* (corrupt or truncated gzip)
// ends the data early and is described by data_error() — the caller reports it, it is not an
// error of the call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::trace::detail {

class byte_source {
 public:
  virtual ~byte_source() = default;
  virtual status_or<size_t> read(char* dst, size_t n) = 0;
  /// Bytes consumed from the underlying file or buffer so far (for progress).
  virtual uint64_t consumed() const = 0;
  /// Non-empty when the data ended because of a content problem.
  virtual std::string data_error() const { return {}; }
};

status_or<std::unique_ptr<byte_source>> open_file_source(const fs::path& path);
std::unique_ptr<byte_source> memory_source(std::string_view bytes);
/// Inflates gzip (or zlib) data read from `compressed`; concatenated members are read.
std::unique_ptr<byte_source> inflate_source(std::unique_ptr<byte_source> compressed);
/// Runs `inner` on a producer thread filling `blocks` buffers of `block_bytes` each.
std::unique_ptr<byte_source> prefetch_source(std::unique_ptr<byte_source> inner, size_t block_bytes = 1u << 20,
                                             int blocks = 6);

}  // namespace magpie::trace::detail
