// Streaming gzip file writer (zlib deflate, level 6): writes "<path>.tmp.<pid>" and renames it
// over `path` in close(), so a failed run never leaves a partial file under the final name.
#pragma once

#include <cstdio>
#include <memory>
#include <string_view>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::trace {

class gz_writer {
 public:
  static status_or<std::unique_ptr<gz_writer>> open(const fs::path& path, int level = 6);
  ~gz_writer();
  gz_writer(const gz_writer&) = delete;
  gz_writer& operator=(const gz_writer&) = delete;

  status write(std::string_view data);
  /// Finishes the stream, flushes, fsyncs and renames into place.
  status close();

 private:
  gz_writer() = default;
  status deflate_some(int flush);

  struct impl;
  std::unique_ptr<impl> m;
};

}  // namespace magpie::trace
