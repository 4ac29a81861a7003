#include "trace/gz_writer.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace magpie::trace {

struct gz_writer::impl {
  fs::path path, tmp;
  FILE* f = nullptr;
  z_stream z;
  bool z_ok = false, closed = false;
  std::vector<unsigned char> out = std::vector<unsigned char>(256u << 10);
};

status_or<std::unique_ptr<gz_writer>> gz_writer::open(const fs::path& path, int level) {
  std::unique_ptr<gz_writer> w(new gz_writer());
  w->m = std::make_unique<impl>();
  w->m->path = path;
  w->m->tmp = path.string() + ".tmp." + std::to_string(::getpid());
  w->m->f = std::fopen(w->m->tmp.c_str(), "wb");
  if (!w->m->f) return io_error("%s: cannot create: %s", w->m->tmp.c_str(), std::strerror(errno));
  std::memset(&w->m->z, 0, sizeof(w->m->z));
  if (deflateInit2(&w->m->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return io_error("zlib deflateInit2 failed");
  w->m->z_ok = true;
  return w;
}

gz_writer::~gz_writer() {
  if (!m) return;
  if (m->z_ok) deflateEnd(&m->z);
  if (m->f) std::fclose(m->f);
  if (!m->closed) {
    std::error_code ec;
    fs::remove(m->tmp, ec);
  }
}

status gz_writer::deflate_some(int flush) {
  for (;;) {
    m->z.next_out = m->out.data();
    m->z.avail_out = static_cast<uInt>(m->out.size());
    int rc = deflate(&m->z, flush);
    if (rc == Z_STREAM_ERROR) return io_error("zlib deflate failed");
    size_t have = m->out.size() - m->z.avail_out;
    if (have && std::fwrite(m->out.data(), 1, have, m->f) != have)
      return io_error("%s: write failed: %s", m->tmp.c_str(), std::strerror(errno));
    if (flush == Z_FINISH) {
      if (rc == Z_STREAM_END) return ok_status();
    } else if (m->z.avail_out != 0) {
      return ok_status();
    }
  }
}

status gz_writer::write(std::string_view data) {
  while (!data.empty()) {
    size_t n = std::min<size_t>(data.size(), 1u << 30);
    m->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    m->z.avail_in = static_cast<uInt>(n);
    MAGPIE_RETURN_IF_ERROR(deflate_some(Z_NO_FLUSH));
    data.remove_prefix(n);
  }
  return ok_status();
}

status gz_writer::close() {
  MAGPIE_RETURN_IF_ERROR(deflate_some(Z_FINISH));
  if (std::fflush(m->f) != 0 || ::fsync(::fileno(m->f)) != 0)
    return io_error("%s: flush failed: %s", m->tmp.c_str(), std::strerror(errno));
  std::fclose(m->f);
  m->f = nullptr;
  std::error_code ec;
  fs::rename(m->tmp, m->path, ec);
  if (ec) return io_error("%s: rename failed: %s", m->path.c_str(), ec.message().c_str());
  m->closed = true;
  return ok_status();
}

}  // namespace magpie::trace
