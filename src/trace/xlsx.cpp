// The adapter for libxlsxwriter (C library: no exceptions), loaded with dlopen.
#include "trace/xlsx.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/csv.h"
#include "core/strings.h"
#include "core/utf8.h"

#if __has_include(<xlsxwriter.h>)
#include <xlsxwriter.h>
#define MAGPIE_HAVE_XLSXWRITER 1
#endif

namespace magpie::trace {

status check_export_format(const std::string& format) {
  if (format == "csv" || format == "excel") return ok_status();
  return invalid_argument("export_format '%s' is not supported (csv or excel)", format.c_str());
}

#ifdef MAGPIE_HAVE_XLSXWRITER
namespace {

struct xlsx_api {
  decltype(&workbook_new_opt) new_opt = nullptr;
  decltype(&workbook_add_worksheet) add_sheet = nullptr;
  decltype(&workbook_add_format) add_format = nullptr;
  decltype(&format_set_bold) set_bold = nullptr;
  decltype(&worksheet_write_number) write_number = nullptr;
  decltype(&worksheet_write_string) write_string = nullptr;
  decltype(&worksheet_freeze_panes) freeze = nullptr;
  decltype(&worksheet_set_column) set_column = nullptr;
  decltype(&workbook_close) close = nullptr;
  std::string error;
};

template <typename F>
bool bind(void* h, const char* sym, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, sym));
  return *out != nullptr;
}

const xlsx_api& api() {
  static const xlsx_api a = [] {
    xlsx_api r;
    void* h = nullptr;
    for (const char* lib : {"libxlsxwriter.so.4", "libxlsxwriter.so"})
      if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) {
      r.error = "Excel export needs libxlsxwriter (Debian/Ubuntu: apt-get install libxlsxwriter4)";
      return r;
    }
    bool ok = bind(h, "workbook_new_opt", &r.new_opt) && bind(h, "workbook_add_worksheet", &r.add_sheet) &&
              bind(h, "workbook_add_format", &r.add_format) && bind(h, "format_set_bold", &r.set_bold) &&
              bind(h, "worksheet_write_number", &r.write_number) && bind(h, "worksheet_write_string", &r.write_string) &&
              bind(h, "worksheet_freeze_panes", &r.freeze) && bind(h, "worksheet_set_column", &r.set_column) &&
              bind(h, "workbook_close", &r.close);
    if (!ok) r.error = "libxlsxwriter lacks an expected function (version too old?)";
    return r;
  }();
  return a;
}

/// A cell that is a whole finite number ("12", "3.5e-06") is written as a number.
bool as_number(const std::string& s, double* v) {
  if (s.empty() || s.size() > 40) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(*v) && !std::isspace(static_cast<unsigned char>(s[0]));
}

std::string sheet_name(const std::string& in, std::vector<std::string>& used) {
  std::string n;
  for (char c : in)
    if (!std::strchr("[]:*?/\\", c)) n.push_back(c);
  if (n.empty()) n = "sheet";
  n = n.substr(0, 31);
  std::string base = n;
  for (int k = 2; std::find(used.begin(), used.end(), n) != used.end(); ++k) {
    std::string suffix = "_" + std::to_string(k);
    n = base.substr(0, 31 - suffix.size()) + suffix;
  }
  used.push_back(n);
  return n;
}

status fill_sheet(const xlsx_api& a, lxw_workbook* wb, lxw_format* bold, const std::string& name,
                  const std::vector<std::vector<std::string>>& rows) {
  lxw_worksheet* ws = a.add_sheet(wb, name.c_str());
  if (!ws) return io_error("cannot add sheet '%s'", name.c_str());
  std::vector<size_t> width;
  for (size_t r = 0; r < rows.size() && r < 1048575; ++r) {
    for (size_t c = 0; c < rows[r].size() && c < 16383; ++c) {
      const std::string& cell = rows[r][c];
      double v = 0;
      lxw_error e;
      if (r > 0 && as_number(cell, &v)) {
        e = a.write_number(ws, static_cast<lxw_row_t>(r), static_cast<lxw_col_t>(c), v, nullptr);
      } else {
        std::string text = utf8_sanitize(cell.size() > 32767 ? cell.substr(0, 32767) : cell);
        e = a.write_string(ws, static_cast<lxw_row_t>(r), static_cast<lxw_col_t>(c), text.c_str(), r == 0 ? bold : nullptr);
      }
      if (e != LXW_NO_ERROR) return io_error("sheet '%s' row %zu column %zu: libxlsxwriter error %d", name.c_str(), r, c, e);
      if (width.size() <= c) width.resize(c + 1, 8);
      width[c] = std::max(width[c], std::min<size_t>(cell.size() + 2, 60));
    }
  }
  a.freeze(ws, 1, 0);
  for (size_t c = 0; c < width.size(); ++c)
    a.set_column(ws, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c), static_cast<double>(width[c]), nullptr);
  return ok_status();
}

}  // namespace

status write_xlsx(const fs::path& path, const std::vector<xlsx_sheet>& sheets) {
  const xlsx_api& a = api();
  if (!a.error.empty()) return error(status_code::failed_precondition, "%s", a.error.c_str());
  std::vector<std::vector<std::vector<std::string>>> tables;
  for (const auto& s : sheets) {
    csv_limits ours{size_t{4} << 30, 16384, size_t{1} << 31};  // our own tables; Excel's limits apply below
    auto rows = parse_csv(s.csv, false, ours, "table " + s.name);
    if (!rows.ok()) return error(status_code::internal, "table %s: %s", s.name.c_str(), rows.get_status().message().c_str());
    tables.push_back(std::move(rows).value());
  }
  fs::path tmp = path;
  tmp += ".tmp";
  lxw_workbook_options opts{};
  lxw_workbook* wb = a.new_opt(tmp.c_str(), &opts);
  if (!wb) return io_error("%s: cannot create the workbook", tmp.c_str());
  lxw_format* bold = a.add_format(wb);
  a.set_bold(bold);
  std::vector<std::string> used;
  status st;
  for (size_t i = 0; i < sheets.size() && st.ok(); ++i) st = fill_sheet(a, wb, bold, sheet_name(sheets[i].name, used), tables[i]);
  lxw_error e = a.close(wb);  // frees the workbook in every case
  if (st.ok() && e != LXW_NO_ERROR) st = io_error("%s: libxlsxwriter error %d while writing", tmp.c_str(), e);
  std::error_code ec;
  if (st.ok()) fs::rename(tmp, path, ec);
  if (!st.ok() || ec) {
    fs::remove(tmp, ec);
    return st.ok() ? io_error("%s: cannot rename into place", path.c_str()) : st;
  }
  return ok_status();
}

#else

status write_xlsx(const fs::path& path, const std::vector<xlsx_sheet>&) {
  return error(status_code::failed_precondition,
               "%s: this magpie was built without libxlsxwriter headers (apt-get install libxlsxwriter-dev, rebuild)",
               path.c_str());
}

#endif

}  // namespace magpie::trace
