#pragma once
// A whole-number option's value, checked as decimal digits in [min, max] (instead of CLI11's
// Range, whose conversion reads "0100" as octal 64 and "0x100" as 256, and whose message calls
// "abc" or "" "not in range"). Bug bash, session 28: `--erisc-unreserved-kib 0150` said "Value
// 0150 not in range 106 to 150", `--rounds 0100` ran 64 rounds, `--links abc` said "Value abc not
// in range 1 to 16".

#include <cstdint>
#include <string_view>

namespace CLI {
class Validator;
}  // namespace CLI

namespace cclmesh::cli {

// A transform for a whole-number option (`->transform(whole_number_in(1, 16))`, before CLI11
// converts the value): digits only, read in base 10 and handed on without leading zeros,
// between min and max; else "'abc' is not a whole number" or "300 is out of range", each with
// "expected MIN to MAX"; `why`, if given, follows an out-of-range value's message (": WHY"),
// for a range that is not obvious from the system at hand (--cluster-axis 2 on a 3D torus). An
// empty value passes to the commands' own empty-value check. The help shows "TYPE in [MIN - MAX]",
// as CLI::Range did for its arguments' type.
CLI::Validator whole_number_in(std::int64_t min, std::int64_t max, std::string_view type = "INT",
                               std::string_view why = "");

}  // namespace cclmesh::cli
