#pragma once
// The board a chip sits on. Kept for reports and for later policy (an N300's R chip is reached
// through its L chip); links are never inferred from it (REFERENCE 3.7 gotchas).

#include <cstdint>
#include <optional>
#include <string_view>

namespace cclmesh::topo {

enum class BoardType : std::uint8_t { Unknown, N150, N300, P100, P150, P300, Galaxy };

// "unknown", "n150", "n300", "p100", "p150", "p300", "galaxy".
std::string_view board_type_name(BoardType board);

// Accepts the names above plus tt-umd's "ubb", "ubb_wormhole" and "ubb_blackhole" (the Galaxy
// universal baseboard). Anything else is nullopt.
std::optional<BoardType> parse_board_type(std::string_view text);

inline constexpr std::string_view kBoardSpellings =
    "n150, n300, p100, p150, p300, galaxy, ubb, ubb_wormhole, ubb_blackhole or unknown";

}  // namespace cclmesh::topo
