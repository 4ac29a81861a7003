// Excel export of report tables (upstream Magpie's `tracelens.export_format: excel`, `trace report --xlsx`):
// one .xlsx workbook, one sheet per table, a bold frozen header row, numeric cells typed as
// numbers. Tables are given as the CSV text magpie writes anyway, so both formats hold the
// same values. Written atomically (temporary file, then rename).
//
// libxlsxwriter (Debian's libxlsxwriter4) is loaded at run time, not linked: the static magpie
// binary stays portable to machines without it, and only an Excel export needs the library.
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::trace {

struct xlsx_sheet {
  std::string name;  ///< sheet name (Excel's rules: at most 31 characters, no []:*?/\)
  std::string csv;   ///< the table as CSV text (first record = header)
};

/// failed_precondition when libxlsxwriter cannot be loaded (the message says what to install).
status write_xlsx(const fs::path& path, const std::vector<xlsx_sheet>& sheets);

/// Export formats of upstream Magpie's tracelens block: "csv" or "excel" (legacy booleans export_csv /
/// export_excel map onto them); anything else is refused.
status check_export_format(const std::string& format);

}  // namespace magpie::trace
