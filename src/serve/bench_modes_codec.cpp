// The mode words of a serving benchmark (bench_config.h): the one place they are spelled.
#include "core/enum_names.h"
#include "serve/bench_config.h"

namespace magpie::serve {

namespace {

constexpr std::pair<serving_framework, const char*> k_framework_names[] = {
    {serving_framework::vllm, "vllm"}, {serving_framework::sglang, "sglang"}, {serving_framework::atom, "atom"}};
constexpr std::pair<server_run_mode, const char*> k_run_mode_names[] = {
    {server_run_mode::docker, "docker"}, {server_run_mode::local, "local"}, {server_run_mode::ray, "ray"}};
constexpr std::pair<run_kind, const char*> k_run_kind_names[] = {
    {run_kind::automatic, "auto"}, {run_kind::measurement, "measurement"}, {run_kind::diagnostic, "diagnostic"}};
constexpr std::pair<profiler_delivery, const char*> k_profiler_delivery_names[] = {
    {profiler_delivery::automatic, "auto"}, {profiler_delivery::flags, "flags"}, {profiler_delivery::env, "env"},
    {profiler_delivery::none, "none"}};

}  // namespace

const char* serving_framework_name(serving_framework f) { return enum_name(k_framework_names, f, "vllm"); }
std::optional<serving_framework> parse_serving_framework(std::string_view word) { return enum_parse(k_framework_names, word); }
const char* server_run_mode_name(server_run_mode m) { return enum_name(k_run_mode_names, m, "docker"); }
std::optional<server_run_mode> parse_server_run_mode(std::string_view word) { return enum_parse(k_run_mode_names, word); }
const char* run_kind_name(run_kind k) { return enum_name(k_run_kind_names, k, "auto"); }
std::optional<run_kind> parse_run_kind(std::string_view word) { return enum_parse(k_run_kind_names, word); }
const char* profiler_delivery_name(profiler_delivery d) { return enum_name(k_profiler_delivery_names, d, "auto"); }
std::optional<profiler_delivery> parse_profiler_delivery(std::string_view word) {
  return enum_parse(k_profiler_delivery_names, word);
}

status_or<serving_framework> framework_from_word(const std::string& word) {
  if (auto f = parse_serving_framework(word)) return *f;
  return invalid_argument("framework '%s' is not supported (vllm, sglang, atom; xdit is not)", word.c_str());
}

}  // namespace magpie::serve
