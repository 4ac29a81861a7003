// Itanium C++ ABI demangling through a maintained demangler (libiberty, the one GNU binutils'
// c++filt uses; adapter: source/demangle_iberty.cpp). Internal to src/source/.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace magpie::source {

/// Longest mangled name handed to the demangler, bytes (longer ones are left mangled). The
/// demangler's stack use grows with the nesting of the name, so names over 1 KiB are demangled
/// on a thread with a 64 MiB stack; real kernel names are a few KiB at most (composable_kernel:
/// ~2 KiB).
constexpr size_t k_max_demangled_input = 16384;

/// The demangled form of an Itanium-mangled name ("_Z…", without a leading extra '_' or
/// clone suffixes); nullopt when the demangler rejects it or it is longer than
/// k_max_demangled_input. Never throws.
std::optional<std::string> itanium_demangle(std::string_view mangled);

}  // namespace magpie::source
