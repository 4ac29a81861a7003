// Reading a tool's `arguments` object (already validated against the tool's input schema by
// the server): the readers each tool's argument struct decodes itself with, once, at the top of
// the tool (`<tool>_args::decode`). Nothing below the decode reads the JSON arguments.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace magpie::mcp {

std::string arg_str(const json& args, const char* key, const std::string& dflt = {});
double arg_num(const json& args, const char* key, double dflt);
bool arg_bool(const json& args, const char* key, bool dflt);
std::vector<std::string> arg_strings(const json& args, const char* key);
/// True when the argument is set to something other than its "unset" value (null, "", 0, false,
/// empty list/object): Magpie clients often send every parameter with its default.
bool arg_set(const json& args, const char* key);

}  // namespace magpie::mcp
