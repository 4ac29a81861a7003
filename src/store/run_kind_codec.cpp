#include "store/run_kind_codec.h"

#include "core/enum_names.h"

namespace magpie::store {

namespace {
constexpr std::pair<run_kind, const char*> k_run_kind_words[] = {{run_kind::analyze, "analyze"},
                                                                 {run_kind::compare, "compare"},
                                                                 {run_kind::benchmark, "benchmark"},
                                                                 {run_kind::optimize, "optimize"}};
}  // namespace

const char* run_kind_name(run_kind k) { return enum_name(k_run_kind_words, k, "analyze"); }

std::optional<run_kind> parse_run_kind(std::string_view word) { return enum_parse(k_run_kind_words, word); }

}  // namespace magpie::store
