#include "topologies/board.hpp"

namespace cclmesh::topo {

std::string_view board_type_name(BoardType board) {
  switch (board) {
    case BoardType::Unknown:
      return "unknown";
    case BoardType::N150:
      return "n150";
    case BoardType::N300:
      return "n300";
    case BoardType::P100:
      return "p100";
    case BoardType::P150:
      return "p150";
    case BoardType::P300:
      return "p300";
    case BoardType::Galaxy:
      return "galaxy";
  }
  return "unknown";  // unreachable: every enumerator is handled above
}

std::optional<BoardType> parse_board_type(std::string_view text) {
  if (text == "unknown") return BoardType::Unknown;
  if (text == "n150") return BoardType::N150;
  if (text == "n300") return BoardType::N300;
  if (text == "p100") return BoardType::P100;
  if (text == "p150") return BoardType::P150;
  if (text == "p300") return BoardType::P300;
  if (text == "galaxy" || text == "ubb" || text == "ubb_wormhole" || text == "ubb_blackhole") {
    return BoardType::Galaxy;
  }
  return std::nullopt;
}

}  // namespace cclmesh::topo
